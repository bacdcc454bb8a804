"""``fusionlint server``: a real LSP client (pytest-lsp) drives the server over stdio: diagnostics for the
buffer's text, the fix that clears them, suppression and quick-fix code actions, hover with the rule's
documentation, a crashing parse as one FL000 with the server alive, the result cache answering a save of
an unchanged buffer, a newer edit killing an older check; plus the edits and the buffer's cache key
without a client."""
from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is in the test extra (pip install -e '.[test]')")

from cli_helpers import BAD, GOOD, project, run_cli  # noqa: E402
from conftest import ROOT  # noqa: E402
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from fusionlint.lsp import edits  # noqa: E402

WAIT = 300.0  # seconds for one check on a slow, busy machine
HOOKS = "segv:crashes.cpp,hang:hangs.cpp"  # workers._test_hook: the child crashes / hangs on these names


@pytest.fixture(autouse=True)
def _worker_hooks(monkeypatch):
    """The server inherits this environment (and conftest's fresh FUSIONLINT_CACHE_DIR)."""
    monkeypatch.setenv("FUSIONLINT_TEST_WORKER_HOOK", HOOKS)
    monkeypatch.delenv("FUSIONLINT_IN_PROCESS", raising=False)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "fusionlint.cli", "server",
                                                              "--debounce", "0.05", "-j", "2"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code"),
                                                               root_uri=ROOT.as_uri()))
    yield
    await lsp_client.shutdown_session()


# -- client-side helpers ----------------------------------------------------------------------------
class Buffer:
    """An open document on the client's side."""

    def __init__(self, client: LanguageClient, path: Path, text: str | None = None) -> None:
        self.client, self.path, self.uri = client, path, path.resolve().as_uri()
        self.text = path.read_text(encoding="utf-8") if text is None else text
        self.version = 1

    async def _published(self, send) -> list[types.Diagnostic]:
        """Send a notification, then the next diagnostics published for this buffer."""
        send()
        while True:
            params = await asyncio.wait_for(
                self.client.protocol.wait_for_notification_async(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), WAIT)
            if params.uri == self.uri:
                return list(params.diagnostics)

    async def open(self) -> list[types.Diagnostic]:
        return await self._published(lambda: self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=self.uri, language_id="cpp", version=1, text=self.text))))

    async def close(self) -> list[types.Diagnostic]:
        return await self._published(lambda: self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri))))

    def change(self, text: str) -> None:
        self.text, self.version = text, self.version + 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    async def edit(self, text: str) -> list[types.Diagnostic]:
        return await self._published(lambda: self.change(text))

    async def save(self) -> list[types.Diagnostic]:
        return await self._published(lambda: self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri))))

    async def actions(self, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        return list(await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri), range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]))) or [])

    def applied(self, action: types.CodeAction) -> str:
        """The buffer with the action's edits (ASCII text: characters are UTF-16 units)."""
        (uri, changes), = action.edit.changes.items()
        assert uri == self.uri
        starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", self.text)]
        text = self.text
        for e in sorted(changes, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            a = starts[e.range.start.line] + e.range.start.character
            b = starts[e.range.end.line] + e.range.end.character
            text = text[:a] + e.new_text + text[b:]
        return text


async def stats(client: LanguageClient) -> dict:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command="fusionlint.stats"))


async def until(client: LanguageClient, test, seconds: float = WAIT) -> dict:
    """Poll the server's stats until ``test(stats)`` holds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while True:
        s = await stats(client)
        if test(s):
            return s
        assert loop.time() < end, f"stats never got there: {s}"
        await asyncio.sleep(0.05)


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics if d.code is not None]


# -- the language server ----------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_a_finding_is_published_and_the_fix_clears_it(client: LanguageClient) -> None:
    buf = Buffer(client, BAD)
    diags = await buf.open()
    assert codes(diags) == ["FL100"]
    (d,) = diags
    assert d.severity == types.DiagnosticSeverity.Error and d.source == "fusionlint"
    assert d.range.start.line == 18 and d.range.end.line == 18 and d.range.end.character > d.range.start.character
    assert "sizeInBytes=8" in d.message and "int32_t" in d.message
    assert d.code_description is not None and d.code_description.href.startswith("https://docs.nvidia.com/cuda/cublas/")
    # the buffer, not the file on disk: the passing neighbour's text in the failing fixture's buffer
    assert await buf.edit(GOOD.read_text(encoding="utf-8")) == []
    assert await buf.edit(BAD.read_text(encoding="utf-8")) != []


@pytest.mark.asyncio
async def test_suppression_code_actions_remove_the_finding(client: LanguageClient) -> None:
    buf = Buffer(client, BAD)
    (d,) = await buf.open()
    actions = await buf.actions(d)
    titles = [a.title for a in actions]
    trailing = next(a for a in actions if "fusionlint: ignore[FL100]" in a.title)
    above = next(a for a in actions if "ignore-next-line[FL100]" in a.title)
    assert all(a.kind == types.CodeActionKind.QuickFix for a in actions), titles
    text = buf.applied(trailing)
    assert text.splitlines()[18].endswith("sizeof(transa)));  // fusionlint: ignore[FL100]")
    assert await buf.edit(text) == []  # suppressed, and the suppression is used (no FL001)
    buf.text = BAD.read_text(encoding="utf-8")
    text = buf.applied(above)
    assert text.splitlines()[18] == "  // fusionlint: ignore-next-line[FL100]"
    assert await buf.edit(text) == []


@pytest.mark.asyncio
async def test_the_fl100_quick_fix_passes_the_attribute_size(client: LanguageClient) -> None:
    buf = Buffer(client, BAD)
    (d,) = await buf.open()
    (fix,) = [a for a in await buf.actions(d) if a.is_preferred]
    assert fix.title.startswith("Pass sizeof(int32_t) as sizeInBytes")
    text = buf.applied(fix)
    assert "&transa, sizeof(int32_t)));" in text.splitlines()[18]
    assert await buf.edit(text) == []


@pytest.mark.asyncio
async def test_a_cached_result_gets_its_quick_fix_from_a_background_parse(client: LanguageClient) -> None:
    buf = Buffer(client, BAD)
    await buf.open()
    assert await buf.close() == []
    (d,) = await buf.open()  # answered from the cache: no facts, so no size fix yet
    s = await until(client, lambda s: s["fact_runs"] == 1 and s["running"] == [])
    assert (s["parsed"], s["cache_hits"]) == (1, 1), s
    (fix,) = [a for a in await buf.actions(d) if a.is_preferred]
    assert "sizeof(int32_t)" in fix.title


@pytest.mark.asyncio
async def test_an_unused_suppression_is_removed_by_its_quick_fix(client: LanguageClient) -> None:
    text = GOOD.read_text(encoding="utf-8").replace("  cublasLtMatrixLayout_t la, lb, ld;",
                                                    "  cublasLtMatrixLayout_t la, lb, ld;  // fusionlint: ignore[FL117]")
    buf = Buffer(client, GOOD, text)
    (d,) = await buf.open()
    assert d.code == "FL001" and d.severity == types.DiagnosticSeverity.Warning
    (fix,) = [a for a in await buf.actions(d) if a.is_preferred]
    assert buf.applied(fix) == GOOD.read_text(encoding="utf-8")
    assert await buf.edit(buf.applied(fix)) == []


@pytest.mark.asyncio
async def test_hover_shows_the_rules_documentation(client: LanguageClient) -> None:
    buf = Buffer(client, BAD)
    (d,) = await buf.open()
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=buf.uri), position=d.range.start))
    assert hover is not None and hover.contents.kind == types.MarkupKind.Markdown
    rc, doc, _ = run_cli("rule", "FL100")
    assert rc == 0 and doc.strip() in hover.contents.value
    assert "sizeInBytes=8" in hover.contents.value  # the finding's own message first
    outside = types.Position(line=0, character=0)
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=buf.uri), position=outside)) is None


@pytest.mark.asyncio
async def test_a_crashing_parse_is_one_fl000_and_the_server_goes_on(client: LanguageClient, tmp_path: Path) -> None:
    src, = project(tmp_path, BAD)
    crashes = src.with_name("crashes.cpp")
    src.rename(crashes)
    buf = Buffer(client, crashes)
    diags = await buf.open()
    assert codes(diags) == ["FL000"] and "crashed" in diags[0].message
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=buf.uri), position=diags[0].range.start))
    assert hover is not None and "file-not-checked" in hover.contents.value
    assert codes(await Buffer(client, BAD).open()) == ["FL100"]  # still alive, still checking
    assert (await stats(client))["failed"] == 1


@pytest.mark.asyncio
async def test_saving_an_unchanged_buffer_is_answered_from_the_cache(client: LanguageClient) -> None:
    buf = Buffer(client, BAD)
    first = await buf.open()
    s = await stats(client)
    assert (s["parsed"], s["cache_hits"]) == (1, 0)
    assert await buf.save() == first
    s = await stats(client)
    assert (s["parsed"], s["cache_hits"]) == (1, 1), s  # the open's parse stored the result: the file is the buffer
    assert await buf.save() == first
    s = await stats(client)
    assert (s["parsed"], s["cache_hits"]) == (1, 2), s


@pytest.mark.asyncio
async def test_a_newer_edit_kills_the_older_check_and_the_editor_never_waits(client: LanguageClient,
                                                                               tmp_path: Path) -> None:
    src, = project(tmp_path, BAD)
    hangs = src.with_name("hangs.cpp")
    src.rename(hangs)
    buf = Buffer(client, hangs)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=buf.uri, language_id="cpp", version=1, text=buf.text)))
    first = (await until(client, lambda s: len(s["running"]) == 1))["running"][0]
    # the server answers while that check runs: another buffer is checked meanwhile, hover works
    other = Buffer(client, BAD)
    (d,) = await other.open()
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=other.uri), position=d.range.start)) is not None
    buf.change(buf.text + "\n// edited\n")
    s = await until(client, lambda s: s["cancelled"] == 1 and len(s["running"]) == 1 and first not in s["running"])
    with pytest.raises(ProcessLookupError):
        os.kill(first, 0)  # killed and reaped
    second = s["running"][0]
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(
        uri=buf.uri)))
    await until(client, lambda s: s["cancelled"] == 2 and s["running"] == [])
    with pytest.raises(ProcessLookupError):
        os.kill(second, 0)


@pytest.mark.asyncio
async def test_the_projects_configuration_applies(client: LanguageClient, tmp_path: Path) -> None:
    src, = project(tmp_path, BAD)
    (tmp_path / "fusionlint.toml").write_text('ignore = ["FL100"]\n', encoding="utf-8")
    assert await Buffer(client, src).open() == []
    (tmp_path / "fusionlint.toml").write_text('select = ["FL1"]\n', encoding="utf-8")
    assert codes(await Buffer(client, src).save()) == ["FL100"]  # read afresh for each check
    (tmp_path / "fusionlint.toml").write_text('selekt = ["FL1"]\n', encoding="utf-8")
    (d,) = await Buffer(client, src).save()  # a configuration that cannot be used: the file is not checked
    assert d.code == "FL000" and "fusionlint.toml" in d.message and "selekt" in d.message


# -- without a client ---------------------------------------------------------------------------------
def test_the_buffers_cache_key_is_checks() -> None:
    """A saved buffer and ``fusionlint FILE`` share cache entries: the same key for the same text."""
    from fusionlint.lsp.checks import check_args, new_checker, prepare_buffer

    args = check_args(__import__("argparse").Namespace())
    text = BAD.read_text(encoding="utf-8")
    ours = prepare_buffer(new_checker(args, BAD, text.encode()), BAD, text)
    theirs = new_checker(args, BAD, text.encode()).prepare(0, BAD)
    assert ours.task.cache_key == theirs.task.cache_key and ours.task.content_hash == theirs.task.content_hash
    other = prepare_buffer(new_checker(args, BAD, (text + "\n").encode()), BAD, text + "\n")
    assert other.task.cache_key != theirs.task.cache_key


def test_a_buffer_without_gemm_tokens_is_prefiltered(tmp_path: Path) -> None:
    from fusionlint.lsp.checks import check_args, new_checker, prepare_buffer

    args = check_args(__import__("argparse").Namespace())
    path = tmp_path / "plain.cpp"
    path.write_text("#include <cublasLt.h>\nint main() {}\n", encoding="utf-8")  # on disk: relevant
    text = "int main() { return 0; }\n"
    p = prepare_buffer(new_checker(args, path, text.encode()), path, text)
    assert p.how == "prefiltered" and p.result.findings == []


def test_suppression_edits() -> None:
    text = "a();\n  f(x, 8);  // note\nM(y) \\\n  g(y);\n"
    (t1, e1), (t2, e2) = edits.suppression_fixes(text, "FL100", 2)
    assert edits.apply_edits(text, [e1]).splitlines()[1] == "  f(x, 8);  // note  // fusionlint: ignore[FL100]"
    assert edits.apply_edits(text, [e2]).splitlines()[1:3] == ["  // fusionlint: ignore-next-line[FL100]",
                                                              "  f(x, 8);  // note"]
    # a macro continuation: no trailing comment on line 3, no comment line above line 4
    (t3, _), = edits.suppression_fixes(text, "FL1", 3)
    (t4, _), = edits.suppression_fixes(text, "FL1", 4)
    assert "above" in t3 and "on this line" in t4
    listed = "f();  // fusionlint: ignore[FL117]\r\n"
    (_, e), _ = edits.suppression_fixes(listed, "FL100", 1)
    assert edits.apply_edits(listed, [e]) == "f();  // fusionlint: ignore[FL117, FL100]\r\n"
    (_, e), (_, above) = edits.suppression_fixes("x;\r\ny;\r\n", "FL1", 2)
    assert edits.apply_edits("x;\r\ny;\r\n", [above]) == "x;\r\n// fusionlint: ignore-next-line[FL1]\r\ny;\r\n"


def test_unused_suppression_removal() -> None:
    text = "a();\n// fusionlint: ignore-next-line[FL1]\nb();  /* fusionlint: ignore */ c();\n"
    _, e = edits.unused_suppression_fix(text, 2, 1, "unused suppression: 'ignore-next-line[FL1]' matches no finding")
    assert edits.apply_edits(text, [e]) == "a();\nb();  /* fusionlint: ignore */ c();\n"
    _, e = edits.unused_suppression_fix(text, 3, 7, "unused suppression: 'ignore' matches no finding")
    assert edits.apply_edits(text, [e]) == "a();\n// fusionlint: ignore-next-line[FL1]\nb(); c();\n"
    assert edits.unused_suppression_fix(text, 2, 1, "unused suppression: FL1 in 'ignore[FL1,FL2]' matches no "
                                                    "finding") is None


def test_spans_follow_byte_columns() -> None:
    lines = edits.split_lines('  s = "é"; f(a, (b), c);\n  s(&t, 8);')
    assert edits.finding_span(lines, 1, 13) == edits.Span((0, 11), (0, 23))  # the call f(...); 'é' is 2 bytes
    assert edits.finding_span(lines, 2, 5) == edits.Span((1, 4), (1, 6))  # the argument &t
    assert edits.split_arguments("f(a, g(b, c), \"x,)\", d)", 1) == ([(2, 3), (5, 12), (14, 19), (21, 22)], 22)


def test_fl100_fix_only_where_certain() -> None:
    """The size fix needs a buffer at least as wide as the attribute holding a value that fits."""
    from fusionlint.model.cublaslt_facts import AttrSet, FileFacts
    from fusionlint.model.values import Known, Loc

    text = "void f() {\n  SET(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));\n}\n"
    loc = Loc("x.cpp", 2, 3)

    def facts(buffer_type: str, size: int, value: int, **kw) -> FileFacts:
        s = AttrSet("cublasLtMatmulDescSetAttribute", "matmul_desc", 1, "CUBLASLT_MATMUL_DESC_TRANSA", Known(3),
                    Known(value), Known(size, loc, "sizeof ( t )"), "&t", buffer_type, loc, loc, **kw)
        return FileFacts("x.cpp", attribute_sets=[s])

    (fix,) = edits.size_fixes(facts("int64_t", 8, 1), text)
    assert edits.apply_edits(text, list(fix.edits)).splitlines()[1].endswith("&t, sizeof(int32_t)));")
    assert (2, 3) in fix.anchors
    assert edits.size_fixes(facts("int16_t", 2, 1), text) == []  # narrower buffer: cuBLASLt would read past it
    assert edits.size_fixes(facts("int64_t", 8, 1 << 40), text) == []  # the value does not fit int32_t
    assert edits.size_fixes(facts("double", 8, 1), text) == []  # not an integer buffer
    wrong_size = text.replace("sizeof(t)", "8")
    (fix,) = edits.size_fixes(FileFacts("x.cpp", attribute_sets=[AttrSet(
        "cublasLtMatmulDescSetAttribute", "matmul_desc", 1, "CUBLASLT_MATMUL_DESC_TRANSA", Known(3), Known(1),
        Known(8, loc, "8"), "&t", "int32_t", loc, loc)]), wrong_size)
    assert edits.apply_edits(wrong_size, list(fix.edits)).splitlines()[1].endswith("&t, sizeof(t)));")
    wrapped = FileFacts("x.cpp", attribute_sets=[AttrSet(
        "cublasLtMatmulDescSetAttribute", "matmul_desc", 1, "CUBLASLT_MATMUL_DESC_TRANSA", Known(3), Known(1),
        Known(8, loc, "8"), "&t", "int32_t", Loc("x.cpp", 9, 1), loc)])
    assert edits.size_fixes(wrapped, wrong_size) == []  # through a wrapper: its size is a parameter


def test_server_command_is_listed() -> None:
    rc, out, _ = run_cli("server", "--help")
    assert rc == 0 and "--debounce" in out
