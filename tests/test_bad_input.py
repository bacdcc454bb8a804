"""Bad input, as users' repositories hold it: every file gets a verdict or a clear one-line
per-file message, the run goes on, and nothing ends in a traceback. Each case runs the real
command line (in-process through ``run_cli``, or as a process where it could hang) with the
stand-in headers, on small sources that take a fraction of a second each."""
from __future__ import annotations

import json
import os
import random
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import codes, run_cli
from conftest import ROOT

# One FL100 at 6:69, the buffer argument (TRANSA written from an int64_t).
BAD = """\
#include <cstdint>
#include <cublasLt.h>

void configure(cublasLtMatmulDesc_t desc) {
  int64_t transa = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));
}
"""
SET_CALL = "  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));"


def lint(*argv: str | Path, cwd: Path | None = None) -> tuple[int, str, str]:
    """``fusionlint --no-system-headers ARGV``; never a traceback."""
    rc, out, err = run_cli("--no-system-headers", *argv, cwd=cwd)
    assert "Traceback" not in out + err, err
    return rc, out, err


def lint_process(*argv: str | Path, timeout: float = 240, **kw) -> subprocess.CompletedProcess:
    """The same as a process, for cases that would hang or exhaust memory were they to regress."""
    proc = subprocess.run([sys.executable, "-m", "fusionlint.cli", "--no-system-headers", *map(str, argv)],
                          capture_output=True, text=True, timeout=timeout, cwd=kw.pop("cwd", ROOT), **kw)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_empty_and_blank_files_are_clean(tmp_path: Path) -> None:
    write(tmp_path / "empty.cpp", "")
    write(tmp_path / "blank.cu", "\n\n   \t\n")
    write(tmp_path / "bom.h", b"\xef\xbb\xbf")
    assert lint(tmp_path) == (0, "", "")
    write(tmp_path / "bad.cpp", BAD)
    rc, out, _ = lint(tmp_path)
    assert rc == 1 and codes(out) == [("bad.cpp", 6, "FL100")]


def test_binary_files_with_source_extensions(tmp_path: Path) -> None:
    rnd = random.Random(7)
    write(tmp_path / "blob.cu", bytes(rnd.randrange(256) for _ in range(50_000)) + b"\0")
    write(tmp_path / "image.h", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(rnd.randrange(256) for _ in range(4096)))
    # high bytes only, no NUL: not recognisably binary, so parsed (as garbage) and judged clean
    write(tmp_path / "latin.hpp", bytes(rnd.randrange(128, 256) for _ in range(20_000)))
    write(tmp_path / "bad.cpp", BAD)
    rc, out, err = lint(tmp_path)
    assert rc == 1 and codes(out) == [("bad.cpp", 6, "FL100")], err
    assert f"fusionlint: {tmp_path / 'blob.cu'}: skipped: binary content" in err
    assert f"fusionlint: {tmp_path / 'image.h'}: skipped: binary content" in err
    assert all(line.startswith("fusionlint: ") for line in err.splitlines())


def _latin1_source() -> bytes:
    return (BAD.encode()
            .replace(b"void configure", b"// caf\xe9 \xff\xfe r\xe9sum\xe9\nvoid configure")
            .replace(b"  int64_t transa", b'  const char *s = "\xe9\xe9\xe9"; (void)s;\n  int64_t transa'))


def test_non_utf8_bytes_do_not_stop_the_check(tmp_path: Path) -> None:
    src = write(tmp_path / "latin1.cpp", _latin1_source())
    rc, out, err = lint("--output-format", "json", src)
    assert rc == 1, err
    (finding,) = json.loads(out)
    assert (finding["code"], finding["line"]) == ("FL100", 8)


def test_non_utf8_bytes_keep_columns_right(tmp_path: Path) -> None:
    src = write(tmp_path / "latin1_col.cpp", BAD.encode().replace(SET_CALL.encode(),
                                                                   b"  /* \xe9\xe9 */ " + SET_CALL.encode().lstrip()))
    rc, out, _ = lint("--output-format", "json", src)
    (finding,) = json.loads(out)
    # bytes on disk: "  /* " + 2 + " */ " before the call (column 12), the caret on its buffer argument
    assert (finding["line"], finding["column"]) == (6, 12 + SET_CALL.lstrip().index("&transa"))


def _ten_megabytes() -> str:
    """A generated file of 10 MiB: a configuration at the top, then the kernels' PTX embedded as
    string literals (as CUDA projects do), a few thousand small generated functions, and a second
    configuration at the very end, past line 190 000."""
    rnd = random.Random(3)
    ops = ["mov.u32", "add.s32", "ld.global.nc.v4.u32", "st.shared.v4.u32", "bar.sync",
           "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "cp.async.bulk.tensor.2d.shared::cluster.global"]
    parts = [BAD, "// PTX of the fused kernels (generated; do not edit)\nstatic const char embedded_ptx[] =\n"]
    size = sum(map(len, parts))
    i = 0
    while size < 10 * 2 ** 20 - 300_000:
        row = f'    "\\t{rnd.choice(ops)} \\t%r{i % 97}, %r{(i * 7) % 101}, {i};\\n"\n'
        parts.append(row)
        size += len(row)
        i += 1
    parts.append("    ;\n")
    while size < 10 * 2 ** 20:
        fn = f"int generated_{i}(int x) {{\n  int y = x * {i};\n  return y > {i} ? y - {i} : y;\n}}\n"
        parts.append(fn)
        size += len(fn)
        i += 1
    parts.append(BAD.split("\n", 3)[3].replace("configure", "configure_again"))
    return "".join(parts)


def test_ten_megabyte_file(tmp_path: Path) -> None:
    text = _ten_megabytes()
    src = write(tmp_path / "generated.cpp", text)
    assert src.stat().st_size >= 10 * 2 ** 20
    last = text.count("\n") - 1  # the second call's line
    proc = lint_process("--output-format", "json", src)
    assert proc.returncode == 1, proc.stderr
    assert [(f["code"], f["line"]) for f in json.loads(proc.stdout)] == [("FL100", 6), ("FL100", last)]


CONFLICT_OUTSIDE = BAD.replace("void configure", """\
<<<<<<< HEAD
static const int version = 1;
=======
static const int version = 2;
>>>>>>> feature/new-api
void configure""")
CONFLICT_INSIDE = BAD.replace("  int64_t transa = CUBLAS_OP_T;\n", """\
<<<<<<< HEAD
  int64_t transa = CUBLAS_OP_T;
||||||| base
  int transa = CUBLAS_OP_N;
=======
  int32_t transa = CUBLAS_OP_T;
>>>>>>> theirs
""")


def test_merge_conflict_markers(tmp_path: Path) -> None:
    a = write(tmp_path / "outside.cpp", CONFLICT_OUTSIDE)
    b = write(tmp_path / "inside.cpp", CONFLICT_INSIDE)
    rc, out, err = lint(a, b)
    # clang reads the first side of a conflict (as a compiler would report the markers, then go on)
    assert rc == 1 and codes(out) == [("inside.cpp", 12, "FL100"), ("outside.cpp", 11, "FL100")], err


def test_syntax_errors_around_a_valid_configuration(tmp_path: Path) -> None:
    src = write(tmp_path / "half_edited.cpp", BAD.replace("void configure", """\
struct Broken { int x int y; };
int before(int a) {
  int b = a +;
  return undeclared_thing(b)
}
template <class T> T twice(T t) { return t t; }
void configure""") + """\
void after() {
  for (int i = 0; i < ; ++i) {
    call_that_does_not_exist(i;
  }
}
int trailing = ;
""")
    rc, out, err = lint(src)
    assert rc == 1 and codes(out) == [("half_edited.cpp", 12, "FL100")], err


def test_missing_paths_on_the_command_line(tmp_path: Path) -> None:
    good = write(tmp_path / "bad.cpp", BAD)
    (tmp_path / "dangling.cpp").symlink_to(tmp_path / "nowhere.cpp")
    os.mkfifo(tmp_path / "pipe.cpp")
    rc, out, err = lint(good, tmp_path / "missing.cu", tmp_path / "dangling.cpp", tmp_path / "pipe.cpp",
                        tmp_path / "no" / "such" / "dir")
    assert (rc, out) == (2, "")
    assert err.splitlines() == [
        f"fusionlint: error: {tmp_path / 'missing.cu'}: no such file or directory",
        f"fusionlint: error: {tmp_path / 'dangling.cpp'}: no such file or directory",
        f"fusionlint: error: {tmp_path / 'pipe.cpp'}: not a regular file or directory",
        f"fusionlint: error: {tmp_path / 'no' / 'such' / 'dir'}: no such file or directory",
    ]


def test_directory_symlink_loops(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write(tree / "a" / "bad.cpp", BAD)
    (tree / "a" / "up").symlink_to(tree, target_is_directory=True)  # a -> up -> tree -> a ...
    (tree / "b").symlink_to(tree / "a", target_is_directory=True)
    (tree / "a" / "self").symlink_to(".", target_is_directory=True)
    (tree / "c").symlink_to(tree / "c", target_is_directory=True)  # a link to itself
    rc, out, err = lint(tree)
    assert rc == 1 and len(codes(out)) == 1 and codes(out)[0][1:] == (6, "FL100"), err


def test_fifos_devices_and_dangling_links_in_a_tree_are_passed_over(tmp_path: Path) -> None:
    """Reading any of these as a source would block forever or never end (and did)."""
    write(tmp_path / "src" / "bad.cpp", BAD)
    os.mkfifo(tmp_path / "src" / "fifo.cpp")
    (tmp_path / "src" / "zero.cu").symlink_to("/dev/zero")
    (tmp_path / "src" / "urandom.h").symlink_to("/dev/urandom")
    (tmp_path / "src" / "dangling.hpp").symlink_to(tmp_path / "gone.hpp")
    proc = lint_process(tmp_path / "src", timeout=120)
    assert proc.returncode == 1 and codes(proc.stdout) == [("bad.cpp", 6, "FL100")], proc.stderr


def _nobody() -> tuple[int, int] | None:
    """(uid, gid) of 'nobody' when this Python and fusionlint can run as that user."""
    try:
        import pwd

        pw = pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        return None

    def demote() -> None:
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)

    try:
        ok = subprocess.run([sys.executable, "-c", "import fusionlint.cli"], preexec_fn=demote, cwd="/",
                            capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return (pw.pw_uid, pw.pw_gid) if ok else None


def test_unreadable_file(tmp_path: Path) -> None:
    """An unreadable file is that file's FL000 (one line naming it and why); the others are checked.
    Root reads anything, so as root the command runs as 'nobody' in a directory it can enter."""
    as_root = os.geteuid() == 0
    if as_root and _nobody() is None:
        pytest.skip("running as root (which reads anything) and 'nobody' cannot run this Python")
    base = tmp_path
    if as_root:
        import tempfile

        base = Path(tempfile.mkdtemp(prefix="fusionlint-unreadable-"))
        base.chmod(0o777)
    try:
        write(base / "src" / "bad.cpp", BAD)
        secret = write(base / "src" / "secret.cpp", BAD)
        secret.chmod(0)
        for d in (base / "src",):
            d.chmod(0o755)
        (base / "src" / "bad.cpp").chmod(0o644)
        kw: dict = {}
        if as_root:
            uid, gid = _nobody()
            env = dict(os.environ, HOME=str(base), FUSIONLINT_CACHE_DIR=str(base / "cache"))

            def demote() -> None:
                os.setgid(gid)
                os.setuid(uid)

            kw = {"preexec_fn": demote, "env": env}
        proc = lint_process(base / "src", timeout=180, **kw)
        assert proc.returncode == 1, proc.stderr
        got = codes(proc.stdout)
        assert ("bad.cpp", 6, "FL100") in got and ("secret.cpp", 1, "FL000") in got, proc.stdout
        line = next(x for x in proc.stdout.splitlines() if "[FL000]" in x)
        assert "Permission denied" in line or "PermissionError" in line
    finally:
        if as_root:
            shutil.rmtree(base, ignore_errors=True)


UNICODE_DIR = "my project/src dir (copy)"
UNICODE_NAME = "ünïcødé ファイル #1 & 50%.cpp"


def test_paths_with_spaces_and_unicode(tmp_path: Path) -> None:
    import jsonschema

    src = write(tmp_path / UNICODE_DIR / UNICODE_NAME, BAD)
    rc, out, err = lint(tmp_path / "my project", cwd=tmp_path)
    assert rc == 1 and out.startswith(f"{tmp_path / UNICODE_DIR / UNICODE_NAME}:6:69: error: "), err
    rc, out, _ = lint("--output-format", "json", src)
    assert json.loads(out)[0]["path"] == str(src)
    rc, out, _ = lint("--output-format", "sarif", Path(UNICODE_DIR) / UNICODE_NAME, cwd=tmp_path)
    sarif = json.loads(out)
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert " " not in uri and "%" in uri and uri.endswith(".cpp")
    schema_path = ROOT.parent / "shared" / "data" / "sarif-schema-2.1.0.json"
    if schema_path.is_file():
        schema = json.loads(schema_path.read_text(encoding="utf-8"))
        cls = jsonschema.validators.validator_for(schema)
        cls(schema, format_checker=cls.FORMAT_CHECKER).validate(sarif)
    rc, out, _ = lint("--output-format", "github", src)
    assert out.startswith("::error file=") and "ファイル" in out


def test_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.cpp")
    write(tmp_path / name, BAD)
    rc, out, err = lint(tmp_path)
    assert rc == 1 and codes(out) == [(name, 6, "FL100")], err


def test_sarif_for_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    write(tmp_path / os.fsdecode(b"caf\xe9.cpp"), BAD)
    rc, out, err = lint("--output-format", "sarif", tmp_path)
    (result,) = json.loads(out)["runs"][0]["results"]
    assert rc == 1 and result["ruleId"] == "FL100", err
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("/caf%E9.cpp")


def test_directory_name_that_is_not_utf8(tmp_path: Path) -> None:
    """The alias then lives in a virtual directory: the file is still checked under its own name."""
    name = os.fsdecode(b"d\xe9r") + "/x.cpp"
    write(tmp_path / name, BAD)
    rc, out, err = lint(tmp_path)
    assert rc == 1 and codes(out) == [("x.cpp", 6, "FL100")], err
    assert os.fsencode(name) in os.fsencode(out)


# ---- compile_commands.json -------------------------------------------------------------------


def _db(root: Path, entries: list[dict] | str) -> Path:
    db = root / "compile_commands.json"
    db.write_text(entries if isinstance(entries, str) else json.dumps(entries), encoding="utf-8")
    return db


@pytest.mark.parametrize("content, problem", [
    ("[" * 100_000 + "]" * 100_000, "malformed compilation database: nested too deeply"),
    (json.dumps([{"directory": "/tmp\u0000x", "file": "src/bad.cpp", "arguments": ["c++"]}]),
     "entry 1: malformed compilation database: 'directory' holds a NUL character"),
    (json.dumps([{"directory": ".", "file": "src/bad.cpp", "arguments": "c++ -c"}]), "entry 1: needs 'arguments'"),
    (json.dumps([{"directory": ".", "file": "src/bad.cpp", "command": "c++ -DX='unterminated"}]),
     "entry 1: command: No closing quotation"),
    (json.dumps([["not", "an", "object"]]), "entry 1: malformed compilation database"),
    ('[{"directory": ".", "file": "src/bad.cpp", "arguments": ["c++"]},]', "malformed compilation database"),
])
def test_malformed_compile_database(tmp_path: Path, content: str, problem: str) -> None:
    write(tmp_path / "src" / "bad.cpp", BAD)
    db = _db(tmp_path, content)
    rc, out, err = lint(tmp_path / "src")
    assert (rc, out) == (2, "") and err.count("\n") == 1, err
    assert err.startswith(f"fusionlint: error: {db}: ") and problem in err, err


def test_non_utf8_compile_database(tmp_path: Path) -> None:
    write(tmp_path / "src" / "bad.cpp", BAD)
    db = tmp_path / "compile_commands.json"
    db.write_bytes(b'[{"directory": "\xff\xfe", "file": "src/bad.cpp", "arguments": ["c++"]}]')
    rc, out, err = lint(tmp_path / "src")
    assert (rc, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"fusionlint: error: {db}: malformed compilation database: 'utf-8' codec")


def test_compile_database_pointing_to_missing_files(tmp_path: Path) -> None:
    write(tmp_path / "src" / "bad.cpp", BAD)
    db = _db(tmp_path, [{"directory": str(tmp_path), "file": "src/deleted.cu", "arguments": ["nvcc", "-c", "x"]},
                        {"directory": str(tmp_path / "gone"), "file": "bad.cpp", "command": "c++ -c bad.cpp"},
                        {"directory": str(tmp_path), "file": "src", "arguments": ["c++"]},
                        {"directory": str(tmp_path), "file": "src/bad.cpp", "arguments": ["c++", "-c"]}])
    rc, out, err = lint(tmp_path / "src")
    assert rc == 1 and codes(out) == [("bad.cpp", 6, "FL100")]
    assert err.splitlines() == [f"fusionlint: note: {db}: entry 1: src/deleted.cu: no such file; entry skipped",
                                f"fusionlint: note: {db}: entry 2: bad.cpp: no such file; entry skipped",
                                f"fusionlint: note: {db}: entry 3: src: no such file; entry skipped"]


@pytest.mark.parametrize("std", ["c++17 -fplugin=/tmp/evil.so", "c++99", "c11", "", "gnu++2q"])
def test_a_bad_std_in_the_database_is_dropped(tmp_path: Path, std: str) -> None:
    write(tmp_path / "src" / "bad.cpp", BAD)
    _db(tmp_path, [{"directory": str(tmp_path), "file": "src/bad.cpp", "arguments": ["c++", f"-std={std}", "-c"]}])
    rc, out, err = lint(tmp_path / "src")
    assert rc == 1 and codes(out) == [("bad.cpp", 6, "FL100")], err


def test_missing_include_dirs(tmp_path: Path) -> None:
    """Include directories that do not exist — on the command line, in the configuration and in
    the compilation database, and a missing forced include — change nothing."""
    write(tmp_path / "src" / "bad.cpp", BAD)
    write(tmp_path / "fusionlint.toml", 'include-dirs = ["does/not/exist", "/nowhere/include"]\n')
    _db(tmp_path, [{"directory": str(tmp_path), "file": "src/bad.cpp",
                    "arguments": ["c++", "-I/nonexistent", "-isystem", "/nope", "-iquote", "gone", "-idirafter",
                                  "/x/y", "-include", "/nope/forced.h", "-c", "src/bad.cpp"]}])
    rc, out, err = lint("-I", tmp_path / "missing", "-I", "", tmp_path / "src")
    assert rc == 1 and codes(out) == [("bad.cpp", 6, "FL100")], err


# ---- rulesets ----------------------------------------------------------------------------------

RULE = """\
rules:
  - id: FL900
    name: my-rule
    severity: warning
    scope: configuration
    when: {fact: matmul_desc.TRANSA, eq: CUBLAS_OP_T}
    message: "TRANSA is T"
    fix: "do not"
    references: [{source: "my notes"}]
"""


def _alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\nrules: *a9\n"


@pytest.mark.parametrize("text, line, problem", [
    pytest.param("rules:\n  - id: FL900\n    name: [unclosed\n", 4, "YAML syntax error", id="syntax-error"),
    pytest.param(RULE.replace("    fix:", "    colour: red\n    fix:"), 2, "colour", id="unknown-key"),
    pytest.param(RULE.replace("severity: warning", "severity: [warning]"), 4, "is not one of", id="wrong-type"),
    pytest.param(RULE.replace("id: FL900", "id: 900"), 2, "is not of type 'string'", id="wrong-type-id"),
    pytest.param(RULE + RULE[len("rules:\n"):], 10, "duplicate rule id FL900", id="duplicate-id"),
    pytest.param(RULE.replace("matmul_desc.TRANSA", "nonsense.TRANSA"), 6, "unknown fact 'nonsense.TRANSA'",
                 id="unknown-fact"),
    pytest.param(RULE.replace("matmul_desc.TRANSA", "matmul_desc.TRANSZ"), 6,
                 "unknown fact 'matmul_desc.TRANSZ': matmul_desc has no field 'TRANSZ'", id="unknown-fact-field"),
    pytest.param(RULE.replace("matmul_desc.TRANSA", "layout_A.ORDER.x"), 6, "unknown fact 'layout_A.ORDER.x'",
                 id="fact-too-deep"),
    pytest.param(RULE.replace("matmul_desc.TRANSA", "mainloop.tile_shape"), 6,
                 "fact 'mainloop.tile_shape' does not exist in scope configuration", id="fact-of-another-scope"),
    pytest.param(RULE.replace("    message:", "    at: layout_D.ORDR\n    message:"), 7,
                 "unknown field 'layout_D.ORDR'", id="unknown-at-field"),
    pytest.param(RULE.replace("{fact: matmul_desc.TRANSA, eq: CUBLAS_OP_T}", "{derived: no_such, eq: 1}"), 6,
                 "unknown derived quantity 'no_such'", id="unknown-derived"),
    pytest.param(_alias_bomb(), 1, "once aliases are expanded", id="alias-bomb"),
    pytest.param("rules: " + "[" * 20_000 + "]" * 20_000 + "\n", 1, "nested too deeply", id="deep-nesting"),
    pytest.param("", 1, "(top level)", id="empty-file"),
    pytest.param("!!python/object/apply:os.system ['touch pwned']\n", 1, "YAML syntax error", id="python-tag"),
])
def test_bad_ruleset_is_one_line_exit_two(tmp_path: Path, text: str, line: int, problem: str) -> None:
    rules = write(tmp_path / "my rules.yaml", text)
    src = write(tmp_path / "src" / "bad.cpp", BAD)
    rc, out, err = lint("--ruleset", rules, src, cwd=tmp_path)
    assert (rc, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith(f"fusionlint: error: {rules}:{line}: "), err
    assert problem in err, err
    assert not (tmp_path / "pwned").exists()


def test_unreadable_ruleset_is_one_line_exit_two(tmp_path: Path) -> None:
    src = write(tmp_path / "bad.cpp", BAD)
    binary = write(tmp_path / "binary.yaml", b"rules: \xff\xfe\n")
    for path, problem in ((tmp_path / "missing.yaml", "cannot read ruleset"),
                          (binary, "cannot read ruleset"), (tmp_path, "cannot read ruleset")):
        rc, out, err = lint("--ruleset", path, src)
        assert (rc, out) == (2, "") and err.count("\n") == 1, err
        assert err.startswith(f"fusionlint: error: {path}: {problem}"), err
