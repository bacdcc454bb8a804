"""Inline suppressions in C++ comments, like clang-tidy's NOLINT family:

    call(...);  // fusionlint: ignore[FL100]            this line (codes or prefixes, comma-separated)
    call(...);  // fusionlint: ignore                   this line, every code
    // fusionlint: ignore-next-line[FL1]                the next line
    // fusionlint: ignore-begin[FL117] ... // fusionlint: ignore-end    the lines in between

A line of a statement that spans several lines stands for all of them: ``ignore`` after the
last line of a call broken over lines (where clang-format leaves a trailing comment), or after
its first, covers the whole statement, and ``ignore-next-line`` the whole statement that starts
on the next line (``statements.py`` finds them from the text).

A suppression that suppresses nothing, names an unknown code, or an ignore-begin/ignore-end
without its partner is reported as ``FL001`` (a warning), at the comment.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.findings import UNUSED_SUPPRESSION, Finding
from fusionlint.sourcetext import lines_of

_DIRECTIVE = re.compile(r"(?://|/\*)\s*fusionlint:\s*(?P<kind>ignore-next-line|ignore-begin|ignore-end|ignore)"
                        r"(?![\w-])(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_NAME = "unused-suppression"


@dataclass
class Suppression:
    line: int
    column: int
    text: str  # the directive as written, e.g. "ignore[FL100]"
    codes: tuple[str, ...]  # empty: every code
    first: int
    last: int
    used: set[str] = field(default_factory=set)  # codes (or "*") that suppressed something

    def covers(self, f: Finding) -> str | None:
        """The code of this suppression that matches ``f``, if it covers ``f``."""
        if not self.first <= f.line <= self.last:
            return None
        if not self.codes:
            return "*"
        return max((c for c in self.codes if f.code.startswith(c)), key=len, default=None)


def _warning(path: str, line: int, column: int, message: str, fix: str) -> Finding:
    return Finding(UNUSED_SUPPRESSION, _NAME, "warning", path, line, column, message, fix)


def parse(path: str, lines: tuple[str, ...]) -> tuple[list[Suppression], list[Finding]]:
    """The suppressions in a file, and FL001 findings for unpaired begin/end."""
    found: list[Suppression] = []
    problems: list[Finding] = []
    open_blocks: list[Suppression] = []
    stmts: list | None = None

    def span(first: int, last: int, starting: int | None, ending: int | None) -> tuple[int, int]:
        """``first..last`` widened to the statements that start on line ``starting`` or end on ``ending``."""
        nonlocal stmts
        if stmts is None:
            from fusionlint.statements import statements

            stmts = statements(lines)
        for st in stmts:
            if st.first[0] == starting or st.last[0] == ending:
                first, last = min(first, st.first[0]), max(last, st.last[0])
        return first, last

    for n, text in enumerate(lines, 1):
        for m in _DIRECTIVE.finditer(text):
            kind = m["kind"].lower()
            column = len(text[:m.start()].encode("utf-8")) + 1
            codes = tuple(c.strip().upper() for c in (m["codes"] or "").split(",") if c.strip())
            directive = m.group(0).lstrip("/*").strip()
            directive = directive[directive.lower().index("ignore"):]
            if kind == "ignore-end":
                if open_blocks:
                    open_blocks.pop().last = n
                else:
                    problems.append(_warning(path, n, column, "'ignore-end' without a matching 'ignore-begin'",
                                             "remove the comment or add the ignore-begin"))
                continue
            if kind == "ignore":
                first, last = span(n, n, n, n)
            elif kind == "ignore-next-line":
                first, last = span(n + 1, n + 1, n + 1, None)
            else:
                first, last = n, len(lines)
            s = Suppression(n, column, directive, codes, first, last)
            found.append(s)
            if kind == "ignore-begin":
                open_blocks.append(s)
    for s in open_blocks:
        problems.append(_warning(path, s.line, s.column, f"'{s.text}' without a matching 'ignore-end' "
                                 "(it suppresses up to the end of the file)", "add '// fusionlint: ignore-end'"))
    return found, problems


def _key(path: str) -> str:
    return str(Path(path).resolve())


def apply(findings: Iterable[Finding], checked: Iterable[str], known: Iterable[str]) -> list[Finding]:
    """Drop the findings an inline suppression covers; add FL001 findings for the suppressions
    in ``checked`` files that suppressed nothing or name unknown codes."""
    known = tuple(known)
    by_file: dict[str, tuple[list[Suppression], list[Finding]]] = {}

    def of(path: str) -> tuple[list[Suppression], list[Finding]]:
        k = _key(path)
        if k not in by_file:
            by_file[k] = parse(path, lines_of(path))
        return by_file[k]

    kept = []
    for f in findings:
        match = next(((s, c) for s in of(f.path)[0] if (c := s.covers(f)) is not None), None)
        if match is None:
            kept.append(f)
        else:
            match[0].used.add(match[1])
    for path in checked:
        suppressions, problems = of(path)
        kept += problems
        for s in suppressions:
            unknown = [c for c in s.codes if not any(k.startswith(c) for k in known)]
            if unknown:
                kept.append(_warning(path, s.line, s.column, f"'{s.text}' names unknown code(s) {', '.join(unknown)}",
                                     "use codes listed by 'fusionlint rule --all'"))
            unused = [c for c in (s.codes or ("*",)) if c not in s.used and c not in unknown]
            if unused:
                what = f"'{s.text}'" if unused == list(s.codes or ("*",)) else f"{', '.join(unused)} in '{s.text}'"
                kept.append(_warning(path, s.line, s.column, f"unused suppression: {what} matches no finding",
                                     "remove the suppression (or the codes that match nothing)"))
    return kept
