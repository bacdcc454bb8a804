"""``fusionlint test-rules``: check annotated fixtures, semgrep style.

``// ruleid: FLnnn`` means the next code line must get an FLnnn finding; ``// ok: FLnnn``
means it must not. Several codes may be listed, comma-separated. When that line starts a
statement broken over lines, a finding on any of its lines counts (a finding's caret sits on the
offending argument, which may be on a later line of the call).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.frontend.parse import ParseOptions
from fusionlint.pipeline import check_file
from fusionlint.rules.loader import Rule

ANNOTATION = re.compile(r"//\s*(ruleid|ok):\s*(FL\d{3}(?:\s*,\s*FL\d{3})*)")


@dataclass
class FixtureResult:
    path: Path
    expected: set[tuple[str, int]] = field(default_factory=set)
    forbidden: set[tuple[str, int]] = field(default_factory=set)
    missed: set[tuple[str, int]] = field(default_factory=set)
    unexpected: set[tuple[str, int]] = field(default_factory=set)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.missed or self.unexpected or self.error)


def annotations(text: str) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(expected, forbidden) ``(code, line)`` pairs of a fixture's annotations."""
    lines = text.splitlines()
    want: set[tuple[str, int]] = set()
    forbid: set[tuple[str, int]] = set()
    for i, line in enumerate(lines):
        m = ANNOTATION.search(line)
        if not m:
            continue
        target = next((j for j in range(i + 1, len(lines))
                       if lines[j].strip() and not ANNOTATION.search(lines[j])), None)
        if target is None:
            continue
        for code in re.split(r"\s*,\s*", m.group(2)):
            (want if m.group(1) == "ruleid" else forbid).add((code, target + 1))
    return want, forbid


def check_fixture(path: Path, rules: list[Rule], options: ParseOptions, arch: str = "sm_90") -> FixtureResult:
    want, forbid = annotations(path.read_text(encoding="utf-8", errors="replace"))
    result = FixtureResult(path, want, forbid)
    checked = check_file(path, rules, options, arch)
    if checked.error:
        result.error = checked.error
        return result
    result.missed, result.unexpected = match(path.read_text(encoding="utf-8", errors="replace"), checked.findings,
                                             want, forbid)
    return result


def match(text: str, findings: list, want: set[tuple[str, int]],
          forbid: set[tuple[str, int]]) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(missed, unexpected) ``(code, line)`` pairs of findings (``code``, ``line``, ``column``)
    against a fixture's annotations: a finding answers for its own line and for the first line of
    the statement it lies in; findings of annotated codes that answer no ``ruleid`` are unexpected."""
    from fusionlint.statements import containing, statements

    stmts = statements(text.splitlines())
    annotated_codes = {code for code, _ in want | forbid}
    got: set[tuple[str, int]] = set()
    unexpected: set[tuple[str, int]] = set()
    for f in findings:
        st = containing(stmts, f.line, f.column)
        marks = {(f.code, f.line)} | ({(f.code, st.first[0])} if st is not None else set())
        got |= marks
        if (marks & forbid) or (f.code in annotated_codes and not marks & want):
            unexpected.add((f.code, f.line))
    return want - got, unexpected


def annotated_files(paths: list[Path]) -> list[Path]:
    from fusionlint.sources import collect

    files, _ = collect([str(p) for p in paths])
    return [f for f in files if ANNOTATION.search(f.read_text(encoding="utf-8", errors="replace"))]
