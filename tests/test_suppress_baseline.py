"""Inline `// fusionlint: ignore...` suppressions (FL001 when unused) and the baseline file."""
from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import BAD, FL117, codes, project, run_cli
from fusionlint.findings import Finding
from fusionlint.decide.suppress import parse

CALL = "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_parse_directives() -> None:
    lines = ("a;  // fusionlint: ignore[FL100, fl117] reason", "// fusionlint: ignore-next-line[FL1]", "b;",
             "/* fusionlint: ignore */ c;", "// fusionlint: ignore-begin[FL117]", "d;", "// fusionlint: ignore-end",
             "// fusionlint: ignore-end", "// fusionlint: ignore-begin", "e;", "// fusionlint: ignored[FL1] not a directive")
    found, problems = parse("x.cu", lines)
    assert [(s.line, s.codes, s.first, s.last) for s in found] == [
        (1, ("FL100", "FL117"), 1, 1), (2, ("FL1",), 3, 3), (4, (), 4, 4), (5, ("FL117",), 5, 7), (9, (), 9, 11)]
    assert found[0].column == 5 and found[0].text == "ignore[FL100, fl117]"
    assert [(p.code, p.line, p.severity) for p in problems] == [("FL001", 8, "warning"), ("FL001", 9, "warning")]
    f = Finding("FL117", "n", "error", "x.cu", 6, 3, "m")
    assert found[3].covers(f) == "FL117" and found[1].covers(f) is None


def test_inline_ignore_on_the_line_makes_the_file_clean(tmp_path: Path) -> None:
    (bad,) = project(tmp_path, BAD)
    _edit(bad, CALL, CALL + "  // fusionlint: ignore[FL100]")
    assert run_cli(bad)[:2] == (0, "")
    _edit(bad, "ignore[FL100]", "ignore[FL1]")  # a prefix
    assert run_cli(bad)[:2] == (0, "")
    _edit(bad, "ignore[FL1]", "ignore")  # every code
    assert run_cli(bad)[:2] == (0, "")


def test_next_line_and_blocks(tmp_path: Path) -> None:
    bad, fl117 = project(tmp_path, BAD, FL117)
    _edit(bad, CALL, "  // fusionlint: ignore-next-line[FL100]\n" + CALL)
    _edit(fl117, "  const int32_t transc", "  // fusionlint: ignore-begin[FL117]\n  const int32_t transc")
    _edit(fl117, "  cublasLtMatrixLayout_t la", "  // fusionlint: ignore-end\n  cublasLtMatrixLayout_t la")
    rc, out, err = run_cli(bad, fl117)
    assert rc == 0 and out == "", err


def test_unused_and_unknown_suppressions_are_fl001(tmp_path: Path) -> None:
    (bad,) = project(tmp_path, BAD)
    _edit(bad, CALL, CALL + "  // fusionlint: ignore[FL117]")  # wrong code: FL100 stays, FL001 for the comment
    _edit(bad, "  cublasLtHandle_t lt;", "  cublasLtHandle_t lt;  // fusionlint: ignore[FL999]")
    _edit(bad, "int main() {", "// fusionlint: ignore-end\nint main() {")
    rc, out, _ = run_cli("--output-format", "json", bad)
    found = [(d["line"], d["code"], d["severity"], d["message"]) for d in json.loads(out)]
    assert rc == 1
    assert found == [
        (7, "FL001", "warning", "'ignore-end' without a matching 'ignore-begin'"),
        (14, "FL001", "warning", "'ignore[FL999]' names unknown code(s) FL999"),
        (20, "FL100", "error", found[2][3]),  # column 3; the comment's FL001 is further right
        (20, "FL001", "warning", "unused suppression: 'ignore[FL117]' matches no finding"),
    ]
    rc, out, _ = run_cli("--ignore", "FL001", bad)  # FL001 is selectable like any code
    assert rc == 1 and codes(out) == [(bad.name, 20, "FL100")]


def test_baseline_survives_moved_lines_and_reports_new_findings(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # the project root: baseline paths are relative to it
    (bad,) = project(tmp_path, BAD)
    base = tmp_path / "fusionlint-baseline.json"
    rc, out, err = run_cli("--baseline", base, "--update-baseline", bad)
    assert (rc, out) == (0, "") and "recorded 1 finding" in err
    data = json.loads(base.read_text())
    assert [(e["code"], e["path"], e["count"]) for e in data["findings"]] == [("FL100", "src/" + bad.name, 1)]
    assert "line" not in data["findings"][0]
    assert run_cli("--baseline", base, bad)[:2] == (0, "")
    _edit(bad, "int main() {", "// a comment\n\n// moved down three lines\nint main() {")
    _edit(bad, CALL, "   " + CALL)  # and re-indented
    rc, out, err = run_cli("--baseline", base, bad, cwd=tmp_path / "src")  # from another directory too
    assert (rc, out) == (0, ""), err
    _edit(bad, "  cublasLtMatrixLayout_t la, lb, ld;",  # a new finding of the same rule on another line
          "  int64_t transb = CUBLAS_OP_N;\n  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, "
          "&transb, sizeof(transb)));\n  cublasLtMatrixLayout_t la, lb, ld;")
    rc, out, _ = run_cli("--baseline", base, bad)
    assert rc == 1 and codes(out) == [(bad.name, 24, "FL100")] and "TRANSB" in out


def test_baseline_errors(tmp_path: Path) -> None:
    (bad,) = project(tmp_path, BAD)
    rc, _, err = run_cli("--update-baseline", bad)
    assert rc == 2 and "--update-baseline needs --baseline" in err
    rc, _, err = run_cli("--baseline", tmp_path / "missing.json", bad)
    assert rc == 2 and "no such baseline file" in err
    (tmp_path / "broken.json").write_text("{")
    rc, _, err = run_cli("--baseline", tmp_path / "broken.json", bad)
    assert rc == 2 and err.count("\n") == 1 and "broken.json: malformed baseline" in err
