"""The problem matchers in editors/ (GitHub Actions ::add-matcher:: and VS Code tasks.json),
applied to real fusionlint text output."""
from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import BAD, FL117, run_cli
from conftest import ROOT

GITHUB_MATCHER = ROOT / "editors" / "fusionlint-problem-matcher.json"
TASKS = ROOT / "editors" / "vscode" / "tasks.json"


def _patterns() -> list[dict]:
    github = json.loads(GITHUB_MATCHER.read_text())["problemMatcher"]
    assert [m["owner"] for m in github] == ["fusionlint"]
    tasks = json.loads(TASKS.read_text())["tasks"]
    assert tasks and all(t["problemMatcher"]["owner"] == "fusionlint" for t in tasks)
    assert all("--output-format" in t["args"] and t["options"]["env"]["NO_COLOR"] for t in tasks)
    return [github[0]["pattern"][0], *(t["problemMatcher"]["pattern"] for t in tasks)]


def _problems(pattern: dict, output: str) -> list[dict]:
    rx = re.compile(pattern["regexp"])
    out = []
    for line in output.splitlines():
        m = rx.match(line)
        if m:
            out.append({k: m.group(pattern[k]) for k in ("file", "line", "column", "severity", "message", "code")})
    return out


def test_matchers_capture_real_findings(tmp_path: Path) -> None:
    warn = tmp_path / "warn.cpp"
    warn.write_text("int x;  // fusionlint: ignore[FL117]\n")
    rc, out, _ = run_cli("--show-source", BAD, FL117, warn)
    assert rc == 1 and "note: fix:" in out and "matmul descriptor created here" in out
    for pattern in _patterns():
        problems = _problems(pattern, out)  # note: lines and --show-source lines are not problems
        problems.sort(key=lambda p: p["code"])
        assert [(p["file"], p["line"], p["column"], p["severity"], p["code"]) for p in problems] == [
            (str(warn), "1", "9", "warning", "FL001"),
            (str(BAD), "19", "75", "error", "FL100"),  # the carets on the offending arguments
            (str(FL117), "24", "75", "error", "FL117"),
        ]
        assert problems[0]["message"] == "unused suppression: 'ignore[FL117]' matches no finding"
        assert problems[1]["message"].startswith("cublasLtMatmulDescSetAttribute(CUBLASLT_MATMUL_DESC_TRANSA) is given")
        assert problems[1]["message"].endswith("keeps the previous value")  # the [FLnnn] suffix is the code
