"""semgrep-style fixture tests: a `// ruleid: FLnnn` comment means the next code line must get
that finding; `// ok: FLnnn` means it must not. Reference kernels must lint clean."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from fusionlint.frontend.parse import ParseOptions
from fusionlint.pipeline import check_file
from fusionlint.rules.loader import load_rules

ANNOTATION = re.compile(r"//\s*(ruleid|ok):\s*(FL\d{3}(?:\s*,\s*FL\d{3})*)")
RULE_FIXTURES = sorted((FIXTURES / "cublaslt" / "rules").glob("*.c*"))
REFERENCE_KERNELS = sorted((ROOT / "kernels_ref").rglob("*.cpp")) + sorted((ROOT / "kernels_ref").rglob("*.cu"))


def expectations(path: Path) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    lines = path.read_text().splitlines()
    want, forbid = set(), set()
    for i, line in enumerate(lines):
        m = ANNOTATION.search(line)
        if not m:
            continue
        target = next(j for j in range(i + 1, len(lines)) if lines[j].strip() and not ANNOTATION.search(lines[j]))
        for code in re.split(r"\s*,\s*", m.group(2)):
            (want if m.group(1) == "ruleid" else forbid).add((code, target + 1))
    return want, forbid


@pytest.mark.parametrize("path", RULE_FIXTURES, ids=lambda p: p.name)
def test_rule_fixture(path: Path) -> None:
    want, forbid = expectations(path)
    assert want or forbid, f"{path.name} has no ruleid/ok annotation"
    result = check_file(path, load_rules(), ParseOptions())
    assert result.error is None
    got = {(f.code, f.line) for f in result.findings}
    assert want <= got, f"missing findings: {sorted(want - got)}"
    assert not (forbid & got), f"findings on ok lines: {sorted(forbid & got)}"


def test_every_rule_has_fail_and_pass_fixtures() -> None:
    for rule in load_rules():
        ev = rule.evidence
        assert ev.get("fail") and ev.get("pass"), f"{rule.id} lacks evidence fixtures"
        for f in ev["fail"] + ev["pass"]:
            assert (ROOT / f).is_file(), f"{rule.id}: {f} missing"
        assert (ROOT / ev["device_record"]).is_file(), f"{rule.id}: device record missing"
        fail_text = "\n".join((ROOT / f).read_text() for f in ev["fail"])
        assert f"ruleid: {rule.id}" in fail_text


@pytest.mark.parametrize("path", REFERENCE_KERNELS, ids=lambda p: p.name)
def test_reference_kernels_lint_clean(path: Path) -> None:
    result = check_file(path, load_rules(), ParseOptions())
    assert result.error is None
    assert result.findings == []
    assert result.facts is not None and any(c.kind == "matmul" for c in result.facts.configurations)


def _record_sections(record: Path) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in record.read_text().splitlines():
        if line.startswith("=== "):
            current = line[4:].strip()
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return sections


def _outcome(lines: list[str]) -> tuple[bool, bool]:
    """(every cuBLAS call returned SUCCESS, numerics matched the host reference)."""
    statuses = [l.rsplit(" ", 1)[-1] for l in lines if l.startswith("EVIDENCE cublas")]
    numerics = [l for l in lines if l.startswith("EVIDENCE numerics")]
    return (bool(statuses) and all(s == "CUBLAS_STATUS_SUCCESS" for s in statuses),
            bool(numerics) and all(" ok " in l + " " for l in numerics))


def test_device_record_backs_every_rule() -> None:
    """The recorded H200 run shows each rule's failing fixture failing and its neighbour passing."""
    for rule in load_rules():
        sections = _record_sections(ROOT / rule.evidence["device_record"])
        for f in rule.evidence["fail"]:
            assert f in sections, f"{rule.id}: {f} not in the device record"
            assert _outcome(sections[f]) != (True, True), f"{rule.id}: {f} passed on the device"
        for f in rule.evidence["pass"]:
            assert f in sections, f"{rule.id}: {f} not in the device record"
            assert _outcome(sections[f]) == (True, True), f"{rule.id}: {f} failed on the device"
