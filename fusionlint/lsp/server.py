"""``fusionlint server``: the language server (LSP over stdio, on pygls).

- ``textDocument/didOpen``, ``didSave``: the buffer is checked at once; ``didChange``: after
  ``--debounce`` seconds without another change. A newer edit cancels the buffer's older check
  (its child process is killed); a save of text whose check is already running lets it finish.
  Diagnostics are for the text that was checked (``version`` says which); notes about headers
  found nowhere are Information diagnostics at the ``#include``.
- Each diagnostic has the code, severity, the finding's range (the call written there), the fix in
  its message, related locations (``relatedInformation``) and, for a YAML rule, ``codeDescription``
  with the rule's documentation link (the ``helpUri`` of the SARIF report).
- ``textDocument/hover`` on a diagnostic: the finding, then ``fusionlint rule FLnnn``'s text.
- ``textDocument/codeAction``: the quick fixes of ``edits.py`` (FL100's size argument, removing an
  unused suppression) and, for every finding, the two suppression comments.
- ``workspace/executeCommand`` ``fusionlint.stats``: what the checks did (checks, parses, cache
  hits, cancellations, running children), for tests and benchmarks.
- Saving a file re-checks the other open buffers that are saved too (one of them may include it):
  a cache look-up for those that do not.
"""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace.position_codec import PositionCodec

from fusionlint import __version__
from fusionlint.errors import InputError
from fusionlint.findings import BUILTIN_CODES, Finding
from fusionlint.lsp import edits
from fusionlint.lsp.checks import BackgroundChecks, BufferResult, content_hash, not_checked

STATS_COMMAND = "fusionlint.stats"
SOURCE = "fusionlint"
FIXED_FROM_FACTS = ("FL100",)  # codes whose quick fixes need the parse's facts (edits.size_fixes)
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}


@dataclass
class Shown:
    """One published diagnostic: the finding (None for a note), where it is, what was sent."""

    finding: Finding | None
    span: edits.Span
    diagnostic: types.Diagnostic


@dataclass
class Doc:
    uri: str
    path: Path
    task: asyncio.Task | None = None
    task_hash: str | None = None  # the text the task checks
    fix_task: asyncio.Task | None = None  # the facts of a cached result, for its quick fixes (edits.size_fixes)
    checking: bool = False  # past the debounce
    checked_hash: str | None = None  # the text the published diagnostics are for
    checked_lines: list[str] = field(default_factory=list)
    shown: list[Shown] = field(default_factory=list)
    rules: dict = field(default_factory=dict)
    fixes: dict[str, list] = field(default_factory=dict)  # text hash -> edits.Fix


class FusionlintServer(LanguageServer):
    def __init__(self, checks: BackgroundChecks, debounce: float) -> None:
        super().__init__("fusionlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.checks = checks
        self.debounce = debounce
        self.docs: dict[str, Doc] = {}
        self._logged: set[str] = set()

    # -- positions ---------------------------------------------------------------------------
    def _codec(self) -> PositionCodec:
        return PositionCodec(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)

    def _position(self, lines: list[str], at: tuple[int, int]) -> types.Position:
        n, i = at
        text = lines[n] if 0 <= n < len(lines) else ""
        return types.Position(line=n, character=self._codec().client_num_units(text[:i]))

    def _range(self, lines: list[str], span: edits.Span) -> types.Range:
        return types.Range(start=self._position(lines, span.start), end=self._position(lines, span.end))

    def _index(self, lines: list[str], pos: types.Position) -> tuple[int, int]:
        """A client position as ``(line, index)``."""
        n = min(max(pos.line, 0), max(len(lines) - 1, 0))
        text = lines[n] if lines else ""
        codec, units, i = self._codec(), 0, 0
        while i < len(text) and units < pos.character:
            units += codec.client_num_units(text[i])
            i += 1
        return n, i

    # -- checks -------------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        """Check the buffer's current text after ``delay`` seconds, cancelling an older check."""
        if not uri.startswith("file:"):
            return  # an untitled buffer has no directory, so no configuration: not checked
        doc = self.docs.get(uri)
        if doc is None:
            path = to_fs_path(uri)
            if path is None:
                return
            doc = self.docs[uri] = Doc(uri, Path(path))
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        h = content_hash(text)
        if doc.fix_task is not None and not doc.fix_task.done() and doc.checked_hash != h:
            doc.fix_task.cancel()
        if doc.task is not None and not doc.task.done():
            if doc.task_hash == h and (doc.checking or delay > 0):
                return  # this text is being checked (its diagnostics will come), or waits for its debounce
            doc.task.cancel()
        doc.task_hash, doc.checking = h, False
        doc.task = asyncio.get_running_loop().create_task(self._run(doc, text, h, version, delay))

    async def _run(self, doc: Doc, text: str, h: str, version: int | None, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        doc.checking = True
        try:
            result = await self.checks.check(doc.path, text)
        except asyncio.CancelledError:
            raise
        except InputError as exc:  # a configuration, compilation database or ruleset that cannot be used
            result = BufferResult(doc.path, h, [not_checked(doc.path, str(exc))], how="failed")
        except Exception as exc:  # noqa: BLE001 - a fusionlint bug: this buffer's FL000, the server goes on
            result = BufferResult(doc.path, h, [not_checked(doc.path, f"{type(exc).__name__}: {exc}".splitlines()[0])],
                                  how="failed")
        if result.fixes is not None:
            doc.fixes = {h: result.fixes}
        self._log(result.logs)
        self.publish(doc, result, text, version)
        if h not in doc.fixes and any(f.code in FIXED_FROM_FACTS for f in result.findings) and (
                doc.fix_task is None or doc.fix_task.done()):
            doc.fix_task = asyncio.get_running_loop().create_task(self._fixes(doc, text, h))

    async def _fixes(self, doc: Doc, text: str, h: str) -> None:
        """The quick fixes of a result that came from the cache: a parse for the facts, in the
        background (the diagnostics are out already); cancelled when the buffer changes."""
        found = await self.checks.fixes(doc.path, text)
        if doc.checked_hash == h:
            doc.fixes = {h: found}

    def _log(self, lines: list[str]) -> None:
        for line in lines:
            if line and line not in self._logged:
                self._logged.add(line)
                self.window_log_message(types.LogMessageParams(type=types.MessageType.Info, message=line))

    def recheck_others(self, saved: str) -> None:
        """After a save: the other open buffers whose text is what is on disk (one may include the
        saved file; the cache answers for those that do not)."""
        from fusionlint.run import cache

        for uri, doc in list(self.docs.items()):
            if uri == saved or (doc.task is not None and not doc.task.done()):
                continue
            try:
                text = self.workspace.get_text_document(uri).source
            except Exception:  # noqa: BLE001 - closed meanwhile
                continue
            if cache.file_hash(str(doc.path)) == content_hash(text):
                self.schedule(uri, self.debounce)

    def close(self, uri: str) -> None:
        doc = self.docs.pop(uri, None)
        for task in (doc.task, doc.fix_task) if doc is not None else ():
            if task is not None:
                task.cancel()
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def cancel_all(self) -> None:
        for doc in self.docs.values():
            for task in (doc.task, doc.fix_task):
                if task is not None:
                    task.cancel()

    # -- diagnostics --------------------------------------------------------------------------
    def publish(self, doc: Doc, result: BufferResult, text: str, version: int | None) -> None:
        lines = edits.split_lines(text)
        shown = [self._shown(f, lines, doc.path, result.rules)
                 for f in sorted(result.findings, key=lambda f: f.sort_key())]
        for note in result.notes:
            if note.line > 0:
                span = edits.Span(*(edits.position(lines, note.line, 1),) * 2)
                span = edits.Span(span.start, (span.start[0], len(lines[span.start[0]])))
                shown.append(Shown(None, span, types.Diagnostic(
                    range=self._range(lines, span), message=note.message, severity=types.DiagnosticSeverity.Information,
                    source=SOURCE)))
        doc.checked_hash, doc.checked_lines, doc.shown, doc.rules = result.text_hash, lines, shown, result.rules
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=doc.uri, diagnostics=[s.diagnostic for s in shown], version=version))

    def _shown(self, f: Finding, lines: list[str], path: Path, rules: dict) -> Shown:
        here = os.path.abspath(f.path) == os.path.abspath(path)
        message = f.message + (f"\nfix: {f.fix}" if f.fix else "")
        related = [self._related(r.path, r.line, r.column, r.message, lines, path) for r in f.related]
        if here:
            span = edits.finding_span(lines, f.line, f.column)
        else:  # reported in another file (a header): shown at the top, with the place as related location
            span = edits.Span((0, 0), (0, min(1, len(lines[0]) if lines else 0)))
            message = f"{f.path}:{f.line}:{f.column}: {message}"
            related.insert(0, self._related(f.path, f.line, f.column, "reported here", lines, path))
        d = types.Diagnostic(range=self._range(lines, span), message=message,
                             severity=_SEVERITY.get(f.severity, types.DiagnosticSeverity.Hint), code=f.code,
                             source=SOURCE, related_information=related or None, data={"name": f.name})
        href = _docs_link(rules.get(f.code))
        if href:
            d.code_description = types.CodeDescription(href=href)
        return Shown(f if here else None, span, d)

    def _related(self, rpath: str, line: int, column: int, message: str, lines: list[str],
                 path: Path) -> types.DiagnosticRelatedInformation:
        if os.path.abspath(rpath) == os.path.abspath(path):
            other = lines
        else:
            from fusionlint.sourcetext import lines_of

            other = list(lines_of(rpath)) or [""]
        at = edits.position(other, line, column)
        return types.DiagnosticRelatedInformation(
            location=types.Location(uri=from_fs_path(os.path.abspath(rpath)) or rpath,
                                    range=types.Range(start=self._position(other, at), end=self._position(other, at))),
            message=message)

    # -- hover and code actions ---------------------------------------------------------------
    def hover(self, params: types.HoverParams) -> types.Hover | None:
        doc = self.docs.get(params.text_document.uri)
        if doc is None or not doc.shown:
            return None
        at = self._index(doc.checked_lines, params.position)
        hits = [s for s in doc.shown if s.finding is not None and s.span.start <= at <= s.span.end]
        if not hits:
            return None
        parts = [_hover_text(s.finding, doc.rules) for s in hits]
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
                           range=hits[0].diagnostic.range)

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        doc = self.docs.get(uri)
        if doc is None or not doc.shown:
            return []
        only = params.context.only
        if only and not any(types.CodeActionKind.QuickFix.startswith(k) for k in only):
            return []
        text = self.workspace.get_text_document(uri).source
        if content_hash(text) != doc.checked_hash:
            return []  # the buffer changed since: its diagnostics (and their fixes) are on their way
        lines = doc.checked_lines
        first, last = params.range.start.line, params.range.end.line
        out: list[types.CodeAction] = []
        fixes = doc.fixes.get(doc.checked_hash, [])
        for s in doc.shown:
            f = s.finding
            if f is None or s.span.start[0] > last or s.span.end[0] < first:
                continue
            for fix in fixes:
                if fix.code == f.code and (f.line, f.column) in fix.anchors:
                    out.append(self._action(fix.title, uri, lines, list(fix.edits), s, preferred=True))
            if f.code == "FL001":
                removal = edits.unused_suppression_fix(text, f.line, f.column, f.message)
                if removal is not None:
                    out.append(self._action(removal[0], uri, lines, [removal[1]], s, preferred=True))
                continue
            for title, edit in edits.suppression_fixes(text, f.code, f.line):
                out.append(self._action(title, uri, lines, [edit], s))
        return out

    def _action(self, title: str, uri: str, lines: list[str], changes: list[edits.Edit], s: Shown,
                preferred: bool = False) -> types.CodeAction:
        text_edits = [types.TextEdit(range=self._range(lines, e.span), new_text=e.new_text) for e in changes]
        return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[s.diagnostic],
                                is_preferred=preferred or None,
                                edit=types.WorkspaceEdit(changes={uri: text_edits}))


def _docs_link(rule) -> str | None:
    """The rule's documentation link, as the SARIF report gives it (``helpUri``)."""
    if rule is None:
        return None
    from fusionlint.report.sarif import rule_descriptor

    return rule_descriptor(rule).get("helpUri")


def rule_text(code: str, rules: dict) -> str:
    """``fusionlint rule CODE``'s text."""
    from fusionlint.rules import docs

    if code in rules:
        return docs.describe(rules[code])
    if code in BUILTIN_CODES:
        if hasattr(docs, "describe_builtin"):
            return docs.describe_builtin(code)
        name, description = BUILTIN_CODES[code]
        return f"{code} {name} (built in)\n\n  {description}"
    return ""


def _hover_text(f: Finding, rules: dict) -> str:
    head = f"**{f.code}** `{f.name}` ({f.severity})\n\n{f.message}"
    if f.fix:
        head += f"\n\n*Fix:* {f.fix}"
    doc = rule_text(f.code, rules)
    return head + (f"\n\n```text\n{doc}\n```" if doc else "")


def build(checks: BackgroundChecks, debounce: float) -> FusionlintServer:
    server = FusionlintServer(checks, debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: FusionlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: FusionlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: FusionlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)
        ls.recheck_others(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: FusionlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: FusionlintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: FusionlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    @server.command(STATS_COMMAND)
    def stats(ls: FusionlintServer, *args) -> dict:
        return {**ls.checks.snapshot(), "open": sorted(ls.docs)}

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: FusionlintServer, *args) -> None:
        ls.cancel_all()

    return server
