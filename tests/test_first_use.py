"""What a new user trips over: a wrong ``--arch`` that turned every sm_90 rule off
without a word, missing headers that were never reported, no progress on long runs and a
``test-rules`` without workers or cache, ``rule --all`` without the built-in codes, ``probe`` and
``graph`` with nothing to say on CUTLASS files, and a ``--help`` without the check options. Every
test runs the real command line on C++ sources."""
from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from cli_helpers import BAD, FL117, GOOD, codes, project, run_cli
from conftest import FIXTURES, ROOT

SCHEMA = ROOT.parent / "shared" / "data" / "sarif-schema-2.1.0.json"
CUTLASS = FIXTURES / "cutlass" / "rules" / "FL301_fp16_align4.cu"  # one FL301, a 3.x GEMM
CUTLASS_2X = FIXTURES / "cutlass" / "rules" / "FL320_2x_warp_not_dividing.cu"
FL117_AT = ("FL117_transc_t.cpp", 24, "FL117")


def console(*argv: str | Path, cwd: Path = ROOT, env: dict | None = None, timeout: int = 600,
            **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fusionlint.cli", *map(str, argv)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout, **kw)


# -- 2. --arch ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["sm_90", "sm_90a", "90", "90a", "compute_90", "compute_90a", "SM_90"])
def test_every_accepted_arch_spelling_runs_the_sm90_rules(spelling: str) -> None:
    """``90`` and ``compute_90`` used to be taken as they were and match no rule: FL117 (sm_90) vanished."""
    rc, out, err = run_cli("--arch", spelling, FL117)
    assert rc == 1 and codes(out) == [FL117_AT], err


@pytest.mark.parametrize("spelling, hint", [("foo", ""), ("sm90", "did you mean 'sm_90'?"), ("9.0", "did you mean 'sm_90'?"),
                                            ("sm_91", ""), ("sm_80a", "")])
def test_unknown_arch_is_a_usage_error_listing_the_spellings(spelling: str, hint: str) -> None:
    rc, out, err = run_cli("--arch", spelling, FL117)
    assert rc == 2 and out == ""
    assert f"unknown architecture '{spelling}'" in err and hint in err
    for accepted in ("sm_90 (Hopper", "sm_90a", "90 and 90a", "compute_90"):
        assert accepted in err
    rc, _, err = run_cli("test-rules", "--arch", spelling, FIXTURES / "cublaslt" / "rules")
    assert rc == 2 and f"unknown architecture '{spelling}'" in err
    rc, _, err = run_cli("verify", "--arch", spelling, FL117)  # refused before looking for a GPU
    assert rc == 2 and f"unknown architecture '{spelling}'" in err


def test_known_arch_without_rules_is_a_note() -> None:
    rc, out, err = run_cli("--arch", "sm_80", FL117)
    assert rc == 0 and out == ""
    assert "note: no rules for sm_80 (from --arch): the rules are written for sm_90" in err
    assert "only the architecture-independent checks run (FL000, FL001, FL100, FL300)" in err
    rc, out, err = run_cli("--arch", "sm_90", FL117)
    assert rc == 1 and "no rules for" not in err


def _db_project(root: Path, flags: list[str]) -> Path:
    (src,) = project(root, FL117)
    (root / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(root), "file": str(src), "arguments": ["nvcc", *flags, "-c", str(src)]}]))
    return src


def test_compile_db_arch_without_rules_is_a_note_and_v_says_where_the_arch_came_from(tmp_path: Path) -> None:
    src = _db_project(tmp_path, ["-gencode", "arch=compute_80,code=sm_80"])
    rc, out, err = run_cli(src)
    assert rc == 0 and out == ""  # the build targets sm_80: no sm_90 rule applies...
    db = tmp_path / "compile_commands.json"
    assert f"no rules for sm_80 (from {db}: entry 1: -gencode arch=compute_80,code=sm_80)" in err  # ...and it says so
    rc, out, err = run_cli("-v", src)
    assert f"fusionlint: note: {src}: arch sm_80 (from {db}: entry 1: -gencode arch=compute_80,code=sm_80)" in err
    _db_project(tmp_path, ["-arch=sm_90a"])
    rc, out, err = run_cli("-v", src)
    assert rc == 1 and codes(out) == [FL117_AT]
    assert f"{src}: arch sm_90a (from {db}: entry 1: -arch=sm_90a)" in err and "no rules for" not in err
    rc, out, err = run_cli("-v", "--arch", "90", src)
    assert f"{src}: arch sm_90 (from --arch)" in err
    db.unlink()
    rc, out, err = run_cli("-v", src)
    assert f"{src}: arch sm_90 (from the default)" in err


def test_config_arch_is_validated_and_normalized(tmp_path: Path) -> None:
    (src,) = project(tmp_path, FL117)
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.fusionlint]\narch = "sm90"\n')
    rc, out, err = run_cli(src)
    assert rc == 2 and out == ""
    assert f"{config}: arch: unknown architecture 'sm90' (did you mean 'sm_90'?); accepted: sm_90" in err
    config.write_text('[tool.fusionlint]\narch = "compute_90a"\n')
    rc, out, err = run_cli("-v", src)
    assert rc == 1 and codes(out) == [FL117_AT] and f"{src}: arch sm_90a (from {config}: arch)" in err
    config.write_text('[tool.fusionlint]\narch = "sm_75"\n')
    rc, out, err = run_cli(src)
    assert rc == 0 and f"no rules for sm_75 (from {config}: arch)" in err


def test_test_rules_takes_the_same_spellings(tmp_path: Path) -> None:
    shutil.copy(ROOT / "fusionlint" / "evidence" / "include" / "fusionlint_probe.h", tmp_path / "probe.h")
    (tmp_path / "rules").mkdir()
    shutil.copy(FL117, tmp_path / "rules" / FL117.name)
    rc, out, _ = run_cli("test-rules", "--arch", "compute_90", tmp_path)
    assert rc == 0 and "1 passed, 0 failed" in out  # compute_90 used to turn FL117 off: "missed"
    rc, out, err = run_cli("test-rules", "--arch", "sm_80", tmp_path)
    assert rc == 1 and "missed: expected FL117 here" in out and "no rules for sm_80" in err


# -- 3. missing headers ---------------------------------------------------------------------------
def _with_missing_header(root: Path) -> Path:
    """The FL100 fixture with ``#include "helpers.h"`` (found nowhere) on lines 6 and 7."""
    (src,) = project(root, BAD)
    text = src.read_text().replace('#include "../probe.h"', '#include "../probe.h"\n#include "helpers.h"\n'
                                                             '#include "helpers.h"', 1)
    src.write_text(text)
    assert text.splitlines()[5] == '#include "helpers.h"'
    past = time.time() - 60  # the cache keeps no result of a file written during its parse
    for f in (src, root / "probe.h"):
        os.utime(f, (past, past))
    return src


NOTE = "header 'helpers.h' not found: checked with an empty stand-in in its place"


def test_missing_project_header_is_a_note_once_and_again_from_the_cache(tmp_path: Path, monkeypatch) -> None:
    src = _with_missing_header(tmp_path)
    stats = tmp_path / "stats.json"
    monkeypatch.setenv("FUSIONLINT_STATS", str(stats))
    for cached in (0, 1):
        rc, out, err = run_cli(src)
        assert rc == 1 and codes(out) == [(src.name, 21, "FL100")]  # two lines down: the includes
        assert err.count(NOTE) == 1, err
        assert f"fusionlint: note: {src}:6: {NOTE}" in err
        assert json.loads(stats.read_text())["cache_hits"] == cached  # the second run is the cache's


def test_missing_header_in_every_format(tmp_path: Path) -> None:
    src = _with_missing_header(tmp_path)
    (tmp_path / ".git").mkdir()  # the repository root: paths in SARIF/github are relative to it
    rel = src.relative_to(tmp_path).as_posix()
    rc, out, err = run_cli("--output-format", "json", src, cwd=tmp_path)
    assert [d["code"] for d in json.loads(out)] == ["FL100"] and NOTE in err  # the array stays findings

    rc, out, err = run_cli("--output-format", "sarif", src, cwd=tmp_path)
    sarif = json.loads(out)
    if SCHEMA.is_file():
        schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
        cls = jsonschema.validators.validator_for(schema)
        cls(schema, format_checker=cls.FORMAT_CHECKER).validate(sarif)
    (run,) = sarif["runs"]
    (invocation,) = run["invocations"]
    (note,) = invocation["toolExecutionNotifications"]
    assert invocation["executionSuccessful"] is True and note["level"] == "note"
    assert note["message"]["text"].startswith(NOTE)
    assert note["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": rel, "uriBaseId": "%SRCROOT%"},
                                                        "region": {"startLine": 6, "startColumn": 1}}
    assert [r["ruleId"] for r in run["results"]] == ["FL100"]

    rc, out, err = run_cli("--output-format", "github", src, cwd=tmp_path)
    notices = [line for line in out.splitlines() if line.startswith("::notice ")]
    assert len(notices) == 1 and notices[0].startswith(f"::notice file={rel},line=6,col=1,title=fusionlint::{NOTE}")
    assert sum(line.startswith("::error ") for line in out.splitlines()) == 1

    rc, out, err = run_cli("--output-format", "junit", src, GOOD, cwd=tmp_path)
    suites = {s.get("name"): s for s in ET.fromstring(out)}
    assert NOTE in suites[str(src)].find("system-err").text
    assert suites[str(GOOD)].find("system-err") is None


def test_cutlass_headers_not_found_are_one_note_for_the_run(tmp_path: Path) -> None:
    """Without the CUTLASS headers the GEMMs are read from the text (the findings say so): one note
    for the run, the files with ``-v``; not a line per CUTLASS header per file."""
    other = tmp_path / "other.cu"
    other.write_text(CUTLASS.read_text().replace('"../cutlass_probe.h"', f'"{CUTLASS.parent.parent / "cutlass_probe.h"}"'))
    rc, out, err = run_cli("--no-system-headers", CUTLASS, other)
    assert rc == 1 and [c for _, _, c in codes(out)] == ["FL301", "FL301"]
    summary = [line for line in err.splitlines() if "checked without the CUTLASS headers" in line]
    assert len(summary) == 1 and summary[0].startswith("fusionlint: note: 2 files checked without the CUTLASS headers (")
    assert "cutlass/cutlass.h" in summary[0] and "fusionlint[cutlass]" in summary[0]
    assert "library headers not found" not in err
    rc, out, err = run_cli("-v", "--no-system-headers", CUTLASS, other)
    assert f"fusionlint: note: {CUTLASS}: library headers not found: cute/tensor.hpp, cutlass/cutlass.h" in err
    assert f"fusionlint: note: {other}: library headers not found:" in err


# -- 4. progress, test-rules with workers and cache -------------------------------------------------
def _stderr_on_a_terminal(argv: list[str], cwd: Path = ROOT, env: dict | None = None) -> tuple[int, bytes, str]:
    """(exit status, what the terminal got, stdout) of the console script with stderr on a pseudo-terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "fusionlint.cli", *argv], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + 600
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the other end is closed: the process is gone
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    out = proc.stdout.read().decode()
    proc.wait(60)
    os.close(master)
    return proc.returncode, b"".join(chunks), out


def test_progress_on_a_terminal_and_none_when_piped_or_quiet(tmp_path: Path) -> None:
    env = {**os.environ, "FUSIONLINT_CACHE_DIR": str(tmp_path / "cache"), "TERM": "xterm", "COLUMNS": "400"}
    argv = ["--no-system-headers", "-j", "1", str(BAD), str(FL117)]
    rc, terminal, out = _stderr_on_a_terminal(argv, env=env)
    assert rc == 1 and sorted(codes(out)) == [("FL100_transa_int64_size.cpp", 19, "FL100"), FL117_AT]
    text = terminal.decode()
    assert "fusionlint: 0/2 files  0:0" in text  # files done / total, elapsed
    assert f"  {BAD}" in text or f"  {FL117}" in text  # the file being checked
    last = max(m.end() for m in re.finditer(r"fusionlint: \d/2 files  \d+:\d\d[^\r\n]*", text))
    assert text[last:].startswith("\r\x1b[K")  # the line is gone at the end
    assert "\x1b[" not in out  # the report on stdout is untouched
    # the same run, stderr a pipe: nothing of it
    proc = console(*argv, env={**env, "FUSIONLINT_CACHE_DIR": str(tmp_path / "cache2")})
    assert proc.returncode == 1 and "\r" not in proc.stderr and "files" not in proc.stderr
    rc, terminal, out = _stderr_on_a_terminal(["--quiet", *argv[:-2], "--no-cache", *argv[-2:]], env=env)
    assert rc == 1 and b"files" not in terminal and b"\r" not in terminal


def test_test_rules_progress_on_a_terminal(tmp_path: Path) -> None:
    env = {**os.environ, "FUSIONLINT_CACHE_DIR": str(tmp_path / "cache"), "TERM": "xterm"}
    rc, terminal, out = _stderr_on_a_terminal(["test-rules", "--no-system-headers", str(_annotated(tmp_path))], env=env)
    assert rc == 0 and "2 passed, 0 failed" in out
    assert b"fusionlint: 0/2 fixtures" in terminal
    last = max(m.end() for m in re.finditer(rb"fusionlint: \d/2 fixtures  \d+:\d\d[^\r\n]*", terminal))
    assert terminal[last:].startswith(b"\r\x1b[K")
    proc = console("test-rules", "--no-system-headers", _annotated(tmp_path), env=env)
    assert proc.returncode == 0 and "\r" not in proc.stderr


def _annotated(root: Path) -> Path:
    shutil.copy(ROOT / "fusionlint" / "evidence" / "include" / "fusionlint_probe.h", root / "probe.h")
    (root / "rules").mkdir(exist_ok=True)
    past = time.time() - 60  # the cache keeps no result of a file written during its parse
    for f in (BAD, GOOD):
        shutil.copy(f, root / "rules" / f.name)
        os.utime(root / "rules" / f.name, (past, past))
    os.utime(root / "probe.h", (past, past))
    return root / "rules"


def test_test_rules_has_workers_and_shares_the_cache_with_check(tmp_path: Path) -> None:
    """A fixture whose result is in the cache is not parsed again: with a worker that crashes on it
    (the test hook) test-rules still passes once ``check`` has cached it, and fails without the cache."""
    rules = _annotated(tmp_path)
    env = {**os.environ, "FUSIONLINT_CACHE_DIR": str(tmp_path / "cache")}
    crash = {**env, "FUSIONLINT_TEST_WORKER_HOOK": f"crash:{BAD.name}"}
    proc = console("test-rules", "--no-system-headers", "--no-cache", rules, env=crash)
    assert proc.returncode == 1 and f"{BAD.name}:1: error: not checked: the parser crashed" in proc.stdout
    assert "1 passed, 1 failed" in proc.stdout
    proc = console("--no-system-headers", rules, env=env)  # check fills the cache
    assert proc.returncode == 1 and "[FL100]" in proc.stdout
    proc = console("test-rules", "--no-system-headers", "-j", "2", rules, env=crash)
    assert proc.returncode == 0 and "2 passed, 0 failed" in proc.stdout  # both from the cache
    (rules / BAD.name).write_text((rules / BAD.name).read_text() + "\n")  # changed: parsed again, in a worker
    proc = console("test-rules", "--no-system-headers", "-j", "2", rules, env=crash)
    assert proc.returncode == 1 and "the parser crashed" in proc.stdout


def test_test_rules_reports_the_same_with_one_or_several_workers(tmp_path: Path) -> None:
    rules = _annotated(tmp_path)
    (rules / GOOD.name).write_text((rules / GOOD.name).read_text().replace("// ok: FL100", "// ruleid: FL100"))
    results = [run_cli("test-rules", "--no-system-headers", "--no-cache", "-j", j, rules) for j in ("1", "2")]
    assert results[0][:2] == results[1][:2]
    rc, out, _ = results[0]
    assert rc == 1 and "missed: expected FL100 here" in out and out.endswith("1 passed, 1 failed\n")


# -- 9. rule ----------------------------------------------------------------------------------------
def test_rule_all_lists_the_built_in_codes_messages_send_users_to(tmp_path: Path) -> None:
    src = tmp_path / "a.cpp"
    src.write_text("int x;  // fusionlint: ignore[FL999]\n")
    rc, out, _ = run_cli(src)
    assert rc == 1 and "use codes listed by 'fusionlint rule --all'" in out and "[FL001]" in out
    rc, out, _ = run_cli("rule", "--all")
    listed = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert listed["FL000"] == ["error", "file-not-checked"] and listed["FL001"] == ["warning", "unused-suppression"]
    assert listed["FL300"] == ["error", "cutlass-static-assert"]
    assert listed["FL127"] == ["error", "cublaslt-unsupported-configuration"]
    assert listed["FL100"] == ["error", "set-attribute-size-mismatch"]
    rc, out, _ = run_cli("rule", "--all", "--output-format", "json")
    by_id = {d["id"]: d for d in json.loads(out)}
    assert {"FL000", "FL001", "FL127", "FL300", "FL100"} <= set(by_id)
    assert by_id["FL001"]["builtin"] is True and by_id["FL001"]["severity"] == "warning"
    assert set(by_id["FL000"]) >= set(by_id["FL100"])  # the keys of a YAML rule's entry, and more


@pytest.mark.parametrize("name, code", [("set-attribute-size-mismatch", "FL100"), ("file-not-checked", "FL000"),
                                        ("unused-suppression", "FL001"), ("fl117", "FL117")])
def test_rule_by_name_is_the_rule_by_code(name: str, code: str) -> None:
    by_name, by_code = run_cli("rule", name), run_cli("rule", code)
    assert by_name == by_code and by_name[0] == 0 and by_name[1].startswith(code)
    rc, _, err = run_cli("rule", "no-such-rule")
    assert rc == 2 and "neither a code nor a rule name" in err


# -- 10. probe, graph -------------------------------------------------------------------------------
def test_probe_takes_o_and_writes_cutlass_probes(tmp_path: Path) -> None:
    rc, out, err = run_cli("probe", "--no-system-headers", "-o", tmp_path / "a", CUTLASS, BAD)
    assert rc == 0
    written = sorted(Path(p).name for p in out.split())
    assert written == ["FL100_transa_int64_size_L25.cu", "FL301_fp16_align4_L59.cu"]
    probe = (tmp_path / "a" / "FL301_fp16_align4_L59.cu").read_text()
    assert "cutlass::half_t,\n    cutlass::layout::RowMajor,\n    4,\n" in probe  # the fixture's A: AlignmentA = 4
    assert "probe_gemm3x<Gemm>(768, 512, 256)" in probe
    assert (tmp_path / "a" / "fusionlint_cutlass_probe.h").is_file() and "2 probe programs in" in err
    rc, out, err = run_cli("probe", "--no-system-headers", "--out", tmp_path / "b", CUTLASS)  # the old spelling
    assert rc == 0 and [Path(p).name for p in out.split()] == ["FL301_fp16_align4_L59.cu"]


def test_probe_says_why_nothing_was_written(tmp_path: Path) -> None:
    evt = tmp_path / "evt.cu"
    evt.write_text(CUTLASS.read_text()
                   .replace('"../cutlass_probe.h"', f'"{CUTLASS.parent.parent / "cutlass_probe.h"}"')
                   .replace("    EpilogueSchedule>::CollectiveOp;",
                            "    EpilogueSchedule, cutlass::epilogue::fusion::Sm90EVT<cutlass::epilogue::fusion::Sm90Compute<"
                            "cutlass::multiplies, float, float>, cutlass::epilogue::fusion::Sm90AccFetch>>::CollectiveOp;"))
    plain = FIXTURES / "mixed" / "plain_kernel.cu"
    rc, out, err = run_cli("probe", "--no-system-headers", "-o", tmp_path / "out", evt, plain)
    assert rc == 0 and out == ""
    assert f"{evt}:59: CUTLASS 3.x GemmUniversalAdapter `Gemm`: no probe: epilogue fusion Sm90TreeVisitor is a " \
           "visitor tree (EVT)" in err
    assert f"{plain}: no cuBLASLt or CUTLASS GEMM found: nothing to probe" in err
    assert "0 probe programs in" in err


def test_graph_of_a_cutlass_gemm_draws_its_parts() -> None:
    rc, out, err = run_cli("graph", "--no-system-headers", "--output-format", "json", CUTLASS)
    g = json.loads(out)
    kinds = {n["id"]: n["kind"] for n in g["nodes"]}
    assert rc == 0 and sorted(kinds.values()) == ["cutlass_gemm", "epilogue", "kernel", "mainloop"]
    edges = {(kinds[e["source"]], kinds[e["target"]], e["relation"]) for e in g["edges"]}
    assert edges == {("kernel", "cutlass_gemm", "part_of"), ("mainloop", "kernel", "part_of"),
                     ("epilogue", "kernel", "part_of")}
    mainloop = next(n for n in g["nodes"] if n["kind"] == "mainloop")["label"]
    assert "alignment_a = 4" in mainloop and "tile_shape = 128x128x64" in mainloop
    assert "kernel_schedule = KernelTmaWarpSpecializedCooperative" in mainloop
    rc, out, _ = run_cli("graph", "--no-system-headers", CUTLASS_2X)
    assert rc == 0 and out.startswith("digraph") and "shape=box" in out
    assert "CUTLASS 2.x device::Gemm Gemm\\nat 27:7" in out and "warp_shape = 96x64x32" in out
    rc, out, err = run_cli("graph", FIXTURES / "mixed" / "plain_kernel.cu")
    assert rc == 0 and "no cuBLASLt or CUTLASS GEMM found: the graph is empty" in err


# -- 12. --help -------------------------------------------------------------------------------------
def test_help_shows_the_check_options() -> None:
    proc = console("--help")
    assert proc.returncode == 0
    for text in ("usage: fusionlint [check] [OPTIONS] PATH...", "test-rules", "probe", "verify",
                 "check (the default command", "--output-format", "--select", "--arch ARCH", "-j N, --jobs N",
                 "--baseline FILE", "-q, --quiet", "`fusionlint COMMAND --help`"):
        assert text in proc.stdout, text
    bare = console()
    assert bare.returncode == 2 and bare.stdout == "" and "--output-format" in bare.stderr and "usage:" in bare.stderr
    sub = console("check", "--help")
    assert sub.returncode == 0 and sub.stdout.startswith("usage: fusionlint check [-h]")
