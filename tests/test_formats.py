"""Output formats on real runs: SARIF (validated against the SARIF 2.1.0 schema), GitHub
workflow commands, JUnit XML, --show-source, --statistics, --output-file, colour, --version."""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from cli_helpers import BAD, FL117, GOOD, run_cli
from conftest import ROOT
from fusionlint.report.github import escape_data, escape_property
from fusionlint.report.text import source_snippet

SCHEMA = ROOT.parent / "shared" / "data" / "sarif-schema-2.1.0.json"
REL_BAD, REL_FL117 = (p.relative_to(ROOT).as_posix() for p in (BAD, FL117))


@pytest.fixture(scope="module")
def odd_file(tmp_path_factory) -> Path:
    """A file outside the repository whose name needs escaping, holding two FL001 warnings."""
    f = tmp_path_factory.mktemp("odd") / "weird,na:me.cpp"
    f.write_text("int x;  // fusionlint: ignore[FL%1]\nint y;  // fusionlint: ignore[FL117]\n")
    return f


@pytest.fixture(scope="module")
def sarif(odd_file: Path) -> dict:
    rc, out, err = run_cli("--output-format", "sarif", BAD, FL117, GOOD, odd_file, cwd=ROOT)
    assert rc == 1, err
    return json.loads(out)


def test_sarif_validates_against_the_schema(sarif: dict) -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"the SARIF 2.1.0 schema is not at {SCHEMA} (shared data of the project, not in the repo)")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls(schema, format_checker=cls.FORMAT_CHECKER).validate(sarif)


def test_sarif_content_for_code_scanning(sarif: dict, odd_file: Path) -> None:
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    rules = driver["rules"]
    assert driver["name"] == "fusionlint" and {"FL000", "FL001", "FL100", "FL117"} <= {r["id"] for r in rules}
    for r in rules:
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"] and r["help"]["text"]
    fl100 = next(r for r in rules if r["id"] == "FL100")
    assert fl100["name"] == "set-attribute-size-mismatch" and "Fix: pass a" in fl100["help"]["text"]
    assert fl100["helpUri"].startswith("https://docs.nvidia.com/cuda/cublas/")
    assert fl100["defaultConfiguration"]["level"] == "error"
    results = run["results"]
    by_rule = {}
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert set(res["partialFingerprints"]) == {"primaryLocationLineHash", "fusionlintFindingHash/v1"}
        by_rule.setdefault(res["ruleId"], []).append(res)
    assert sorted((k, len(v)) for k, v in by_rule.items()) == [("FL001", 2), ("FL100", 1), ("FL117", 1)]
    loc = by_rule["FL100"][0]["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": REL_BAD, "uriBaseId": "%SRCROOT%"},
                   "region": {"startLine": 19, "startColumn": 75}}
    assert by_rule["FL100"][0]["level"] == "error" and "sizeInBytes=8" in by_rule["FL100"][0]["message"]["text"]
    fl117 = by_rule["FL117"][0]
    assert fl117["locations"][0]["physicalLocation"]["region"] == {"startLine": 24, "startColumn": 75}
    assert fl117["relatedLocations"] == [
        {"id": 0, "message": {"text": "cublasLtMatmulAlgoGetHeuristic is called with this configuration here"},
         "physicalLocation": {"artifactLocation": {"uri": REL_FL117, "uriBaseId": "%SRCROOT%"},
                              "region": {"startLine": 41, "startColumn": 3}}},
        {"id": 1, "message": {"text": "matmul descriptor created here"},
         "physicalLocation": {"artifactLocation": {"uri": REL_FL117, "uriBaseId": "%SRCROOT%"},
                              "region": {"startLine": 18, "startColumn": 3}}}]
    odd = by_rule["FL001"][0]
    assert odd["level"] == "warning"
    assert odd["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": odd_file.resolve().as_uri()}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.resolve().as_uri() + "/"


def test_sarif_fingerprints_do_not_depend_on_line_numbers(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    src = tmp_path / "a.cpp"
    src.write_text(BAD.read_text().replace('"../probe.h"', f'"{BAD.parent.parent / "probe.h"}"'))
    first = json.loads(run_cli("--output-format", "sarif", "a.cpp", cwd=tmp_path)[1])["runs"][0]["results"]
    src.write_text("// moved\n\n" + src.read_text())
    second = json.loads(run_cli("--output-format", "sarif", "a.cpp", cwd=tmp_path)[1])["runs"][0]["results"]
    assert first[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "a.cpp", "uriBaseId": "%SRCROOT%"}
    assert first[0]["locations"][0]["physicalLocation"]["region"]["startLine"] + 2 == \
        second[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert first[0]["partialFingerprints"] == second[0]["partialFingerprints"]


def test_github_escaping() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_annotations_are_the_default_under_github_actions(monkeypatch, odd_file: Path) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    rc, out, _ = run_cli(BAD, FL117, odd_file, cwd=ROOT)
    lines = out.splitlines()
    assert rc == 1 and len(lines) == 4 and all(line.startswith("::") for line in lines)
    bad = next(line for line in lines if "title=FL100" in line)
    head, message = bad.split("::", 2)[1:]
    assert head == f"error file={REL_BAD},line=19,col=75,title=FL100"
    assert message.startswith("cublasLtMatmulDescSetAttribute(CUBLASLT_MATMUL_DESC_TRANSA) is given sizeInBytes=8")
    assert "%0Afix: the buffer &transa is int64_t (8 bytes) but the attribute holds int32_t (4 bytes): declare it " \
           "as int32_t" in message and "\n" not in message
    fl117 = next(line for line in lines if "title=FL117" in line)
    assert fl117.endswith(f"%0Anote: {REL_FL117}:18:3: matmul descriptor created here")
    odd = [line for line in lines if "title=FL001" in line]
    escaped = escape_property(odd_file.resolve().as_posix())
    assert odd[0] == f"::warning file={escaped},line=1,col=9,title=FL001::'ignore[FL%251]' names unknown code(s) " \
                     "FL%251%0Afix: use codes listed by 'fusionlint rule --all'"
    assert "weird%2Cna%3Ame.cpp" in escaped
    assert run_cli("--output-format", "text", BAD)[1].startswith(str(BAD))  # an explicit format wins


def test_junit() -> None:
    rc, out, _ = run_cli("--output-format", "junit", BAD, GOOD, cwd=ROOT)
    root = ET.fromstring(out)
    assert rc == 1 and (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "2", "1")
    suites = {s.get("name"): s for s in root}
    assert set(suites) == {str(BAD), str(GOOD)}  # paths as given, like the text format
    (case,) = suites[str(BAD)]
    assert (case.get("name"), case.get("line"), case.get("column")) == ("fusionlint.FL100", "19", "75")
    assert "sizeInBytes=8" in case.find("failure").get("message")
    (clean,) = suites[str(GOOD)]
    assert clean.find("failure") is None


def test_show_source_statistics_and_output_file(tmp_path: Path) -> None:
    rc, out, _ = run_cli("--show-source", "--statistics", BAD, FL117)
    lines = out.splitlines()
    i = lines.index(next(line for line in lines if line.endswith("[FL100]")))
    assert lines[i + 1] == "   19 |   PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));"
    assert lines[i + 2] == "      | " + " " * 74 + "^"  # under &transa, the buffer whose type is wrong
    assert lines[-2:] == ["    1  FL100  set-attribute-size-mismatch", "    1  FL117  transc-not-n"]
    report = tmp_path / "report.json"
    rc, out, err = run_cli("--output-format", "json", "--statistics", "-o", report, BAD)
    assert (rc, out) == (1, "") and [d["code"] for d in json.loads(report.read_text())] == ["FL100"]
    assert err == "    1  FL100  set-attribute-size-mismatch\n"  # statistics keep JSON parseable


def test_caret_with_tabs_and_utf8(tmp_path: Path) -> None:
    f = tmp_path / "a.cpp"
    f.write_text("\tint x;\n/* é */ f();\n", encoding="utf-8")
    assert source_snippet(str(f), 1, 2) == ["    1 |         int x;", "      |         ^"]
    assert source_snippet(str(f), 2, 10) == ["    2 | /* é */ f();", "      |         ^"]  # byte column 10


def _in_a_terminal(env: dict) -> bytes:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "fusionlint.cli", str(BAD)], stdout=slave, stderr=subprocess.DEVNULL,
                            cwd=ROOT, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(master)
    return b"".join(chunks)


def test_colour_only_on_a_terminal_and_never_with_no_color() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_ACTIONS")}
    coloured = _in_a_terminal(env)
    assert b"\x1b[1;31merror:\x1b[0m" in coloured and b"[FL100]" in coloured
    plain = _in_a_terminal({**env, "NO_COLOR": "1"})
    assert b"\x1b[" not in plain and b": error: " in plain
    assert "\x1b[" not in run_cli(BAD)[1]  # not a terminal


def test_version() -> None:
    from fusionlint import __version__

    assert run_cli("--version")[:2] == (0, f"fusionlint {__version__}\n")
