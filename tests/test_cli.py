"""The command line as users run it: formats, exit codes, directories, facts and graph."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import FIXTURES, ROOT
from fusionlint.cli import main

GCC_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+):\s+(?P<sev>warning|error):\s+(?P<msg>.*) \[(?P<code>FL\d{3})\]$")
BAD = FIXTURES / "cublaslt" / "rules" / "FL100_transa_int64_size.cpp"
GOOD = FIXTURES / "cublaslt" / "rules" / "FL100_transa_int32_ok.cpp"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_text_output_matches_gcc_problem_matcher(capsys) -> None:
    rc, out, _ = run(capsys, str(BAD))
    assert rc == 1
    findings = [m for m in map(GCC_LINE.match, out.splitlines()) if m]
    assert len(findings) == 1
    m = findings[0]
    assert (m["file"], m["line"], m["sev"], m["code"]) == (str(BAD), "19", "error", "FL100")
    assert "CUBLASLT_MATMUL_DESC_TRANSA" in m["msg"] and "sizeInBytes=8" in m["msg"]


def test_clean_file_exits_zero(capsys) -> None:
    rc, out, _ = run(capsys, "check", str(GOOD))
    assert (rc, out) == (0, "")


def test_json_output(capsys) -> None:
    rc, out, _ = run(capsys, "--output-format", "json", str(BAD), str(GOOD))
    assert rc == 1
    data = json.loads(out)
    assert [(d["path"], d["line"], d["column"], d["severity"], d["code"]) for d in data] == \
        [(str(BAD), 19, 75, "error", "FL100")]  # the caret on the buffer, whose type is wrong
    assert data[0]["message"] and data[0]["fix"]


def test_exit_zero_and_missing_path(capsys) -> None:
    assert run(capsys, "--exit-zero", str(BAD))[0] == 0
    rc, _, err = run(capsys, str(FIXTURES / "does-not-exist.cu"))
    assert rc == 2 and "no such file" in err


def test_usage_error_exit_two(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["check", "--output-format", "xml", str(GOOD)])
    assert exc.value.code == 2


def test_facts_on_mixed_directory(capsys) -> None:
    """Mixed files: no cuBLASLt, syntax error, empty file, binary file, non-source file."""
    rc, out, err = run(capsys, "facts", str(FIXTURES / "mixed"), str(FIXTURES / "cublaslt" / "extract"))
    assert rc == 0
    data = json.loads(out)
    by_file = {}
    for cfg in data:
        by_file.setdefault(Path(cfg["path"]).name, []).append(cfg)
    assert set(by_file) == {"syntax_error.cpp", "fp8_locals.cu", "bias_aux_epilogue.cpp", "batched_globals.cpp",
                            "helper_template.cpp", "raii_class.cpp", "struct_fields.cu", "runtime_unknowns.cpp",
                            "descriptor_only.cpp", "struct_by_value.cpp", "returns_in_branches.cpp",
                            "structured_bindings.cpp"}
    assert "blob.h: skipped" in err
    fp8 = next(c for c in by_file["fp8_locals.cu"] if c["kind"] == "matmul")
    assert fp8["parameters"]["layout_A"]["TYPE"]["name"] == "CUDA_R_8F_E4M3"
    assert fp8["parameters"]["matmul_desc"]["TRANSA"]["at"]["line"] == 32
    assert fp8["line"] == 51 and fp8["unknowns"] == []
    unknown = next(c for c in by_file["runtime_unknowns.cpp"] if c["kind"] == "matmul")
    assert "unknown" in unknown["parameters"]["matmul_desc"]["TRANSA"]
    assert unknown["unknowns"]


def test_graph_dot_and_json(capsys) -> None:
    rc, out, _ = run(capsys, "graph", str(FIXTURES / "cublaslt" / "extract" / "fp8_locals.cu"))
    assert rc == 0 and out.startswith("digraph")
    assert "flows_into (Adesc)" in out and "configures" in out and "used_by (A)" in out
    rc, out, _ = run(capsys, "graph", "--output-format", "json", str(FIXTURES / "cublaslt" / "extract" / "fp8_locals.cu"))
    g = json.loads(out)
    kinds = {n["kind"] for n in g["nodes"]}
    assert {"matmul", "heuristic", "matmul_desc", "layout", "preference", "attribute_set", "buffer"} <= kinds
    relations = {e["relation"] for e in g["edges"]}
    assert relations == {"configures", "flows_into", "used_by"}


def test_rule_docs(capsys) -> None:
    rc, out, _ = run(capsys, "rule", "FL100")
    assert rc == 0 and "set-attribute-size-mismatch" in out and "Evidence:" in out
    rc, _, err = run(capsys, "rule", "FL999")
    assert rc == 2 and "unknown rule" in err


def test_console_script_runs_as_a_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "fusionlint.cli", str(BAD)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1 and "[FL100]" in proc.stdout and "Traceback" not in proc.stderr


@pytest.mark.parametrize("argv", [["facts", "--no-system-headers", str(BAD)], ["rule", "--all", "--output-format", "json"],
                                  ["--no-cache", "--no-system-headers", "--output-format", "json", str(BAD)]])
def test_closed_stdout_pipe_ends_quietly(argv: list[str]) -> None:
    """``fusionlint facts FILE | head``: a reader that went away ends the command like a command
    killed by SIGPIPE (status 128 + 13), without a message or a traceback."""
    import os

    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([sys.executable, "-m", "fusionlint.cli", *argv], stdout=w, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT, timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 141
    assert proc.stderr == ""


def test_the_language_server_comes_with_the_base_install() -> None:
    """`pip install fusionlint` alone gives a working `fusionlint server`: pygls is a base dependency
    (the old `lsp` extra stays, empty, so that `fusionlint[lsp]` still installs)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(d.replace(" ", "").startswith("pygls") for d in project["dependencies"])
    assert project["optional-dependencies"]["lsp"] == []
    rc, out, err = run_cli("server", "--help")
    assert rc == 0 and "--debounce" in out
