"""The statements of a C++ source file, found from its text alone: what a trailing suppression
comment applies to (``suppress.py``), and which statement a rule fixture's annotation marks
(``selftest.py``).

A statement runs from its first token to a ``;`` outside parentheses and brackets, or up to a
``{`` or ``}`` outside them (so ``if (x) {`` is the statement ``if (x)``, and a call whose
arguments hold a lambda or a braced list is one statement). Comments, string and character
literals are skipped; a preprocessor line ends the statement before it and is none itself.
Lines and columns are 1-based; columns count characters.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    first: tuple[int, int]  # (line, column) of its first token
    last: tuple[int, int]  # (line, column) of its last token (its ``;``)

    @property
    def lines(self) -> range:
        return range(self.first[0], self.last[0] + 1)

    def contains(self, line: int, column: int) -> bool:
        return self.first <= (line, column) <= self.last


def statements(lines: tuple[str, ...] | list[str]) -> list[Statement]:
    out: list[Statement] = []
    first: tuple[int, int] | None = None
    last: tuple[int, int] | None = None
    depth = 0
    in_comment = False
    continued = False  # a preprocessor line that ends with a backslash

    def end() -> None:
        nonlocal first, last
        if first is not None and last is not None:
            out.append(Statement(first, last))
        first = last = None

    for n, text in enumerate(lines, 1):
        if continued:
            continued = text.rstrip().endswith("\\")
            continue
        if not in_comment and text.lstrip().startswith("#"):
            end()
            depth = 0
            continued = text.rstrip().endswith("\\")
            continue
        i, size = 0, len(text)
        while i < size:
            if in_comment:
                close = text.find("*/", i)
                if close < 0:
                    break
                in_comment, i = False, close + 2
                continue
            c = text[i]
            if c.isspace():
                i += 1
                continue
            if text.startswith("//", i):
                break
            if text.startswith("/*", i):
                in_comment, i = True, i + 2
                continue
            at = (n, i + 1)
            if c in "\"'":
                j = i + 1
                while j < size and text[j] != c:
                    j += 2 if text[j] == "\\" else 1
                i = j + 1
            elif c in "([":
                depth += 1
                i += 1
            elif c in ")]":
                depth = max(depth - 1, 0)
                i += 1
            elif c in "{}" and depth == 0:
                end()
                i += 1
                continue
            else:
                i += 1
            if first is None:
                first = at
            last = at
            if c == ";" and depth == 0:
                end()
    end()
    return out


def containing(stmts: list[Statement], line: int, column: int = 0) -> Statement | None:
    """The statement that holds the position (``column`` 0: the first statement with a token on ``line``)."""
    if column:
        found = next((s for s in stmts if s.contains(line, column)), None)
        if found is not None:
            return found
    return next((s for s in stmts if s.first[0] <= line <= s.last[0]), None)
