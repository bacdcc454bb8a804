"""Literal problem sizes a program writes into a CUTLASS GEMM's ``Arguments`` — what
``can_implement`` will judge at run time.

Recognised (text level, comments blanked first)::

    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, L}, ...};   // 3.x
    Gemm::Arguments args{problem_size, {A, lda}, ...};   // 2.x, problem_size a GemmCoord
    cutlass::gemm::GemmCoord problem_size(M, N, K);

Each extent is an integer literal or a name bound once in the file to one (``constexpr int M =
768;``, ``const int``, ``#define``). Anything else leaves that extent unknown.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fusionlint.model.values import Loc

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_ARGUMENTS = re.compile(r"\b(?P<gemm>\w+)::Arguments\s+(?P<var>\w+)\s*(?P<open>[{(])")
_INT = re.compile(r"^\s*\(?\s*(\d+)\s*\)?\s*[uUlL]*\s*$")
_DEF = r"(?:\b(?:constexpr|const)\s+(?:static\s+)?(?:int|int32_t|int64_t|uint32_t|size_t|long|auto)\s+{name}\s*(?:=\s*|\{{\s*)(\d+)\b|#\s*define\s+{name}\s+\(?(\d+)\)?\s*$)"
_COORD = r"\b(?:cutlass::gemm::)?(?:GemmCoord|BatchedGemmCoord)\s+{name}\s*[({{]([^(){{}}]*)[)}}]"


@dataclass
class Problem:
    gemm: str  # the GEMM type whose Arguments these are (e.g. "Gemm")
    m: int | None
    n: int | None
    k: int | None
    at: Loc  # the Arguments declaration

    def to_dict(self) -> dict:
        return {"gemm": self.gemm, "m": self.m, "n": self.n, "k": self.k, "at": self.at.to_dict()}


def _blank_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _balanced(text: str, start: int) -> str | None:
    """The text inside the bracket that opens at ``start``."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = []
    for i in range(start, min(len(text), start + 20000)):
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return text[start + 1:i]
    return None


def split_top_level(inner: str, opening: str = "{([", closing: str = "})]") -> list[str]:
    """Top-level comma-separated items of a bracket's content (``opening``/``closing`` nest;
    pass ``<`` and ``>`` too for template arguments)."""
    items, depth, cur = [], 0, []
    for c in inner:
        if c in opening:
            depth += 1
        elif c in closing:
            depth -= 1
        if c == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        items.append("".join(cur).strip())
    return items


def _value(expr: str, text: str) -> int | None:
    if m := _INT.match(expr):
        return int(m.group(1))
    name = expr.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    found = {int(a or b) for a, b in re.findall(_DEF.format(name=re.escape(name)), text, re.M)}
    return found.pop() if len(found) == 1 else None


def _extents(item: str, text: str) -> list[str] | None:
    item = item.strip()
    if item.startswith("{") and item.endswith("}"):
        return split_top_level(item[1:-1])
    m = re.match(r"^(?:cutlass::gemm::)?(?:GemmCoord|BatchedGemmCoord)\s*[({](.*)[)}]$", item, re.S)
    if m:
        return split_top_level(m.group(1))
    if re.fullmatch(r"[A-Za-z_]\w*", item):
        coords = re.findall(_COORD.format(name=re.escape(item)), text)
        if len(coords) == 1:
            return split_top_level(coords[0])
    return None


def literal_problems(text: str, path: str) -> list[Problem]:
    """Every ``X::Arguments var{...}`` in ``text`` with its M, N, K (None where not literal)."""
    clean = _blank_comments(text)
    out = []
    for m in _ARGUMENTS.finditer(clean):
        inner = _balanced(clean, m.start("open"))
        if inner is None:
            continue
        items = split_top_level(inner)
        if items and "GemmUniversalMode" in items[0]:
            items = items[1:]
        extents = _extents(items[0], clean) if items else None
        if not extents or len(extents) not in (3, 4):
            continue
        m_, n_, k_ = (_value(e, clean) for e in extents[:3])
        line = clean.count("\n", 0, m.start()) + 1
        col = m.start() - (clean.rfind("\n", 0, m.start()) + 1) + 1
        out.append(Problem(m.group("gemm"), m_, n_, k_, Loc(path, line, col)))
    return out
