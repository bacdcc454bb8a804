"""Literal problem sizes a program writes into a CUTLASS GEMM's ``Arguments`` — what
``can_implement`` will judge at run time.

Recognised (text level, comments blanked first)::

    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, L}, ...};   // 3.x
    Gemm::Arguments args{problem_size, {A, lda}, ...};   // 2.x, problem_size a GemmCoord
    cutlass::gemm::GemmCoord problem_size(M, N, K);

Each extent is an integer literal, or resolves to one through

- a name bound once in the file (``constexpr int M = 768;``, ``const int``, ``#define``);
- a field of a struct variable (``ProblemSize problem;`` with ``struct ProblemSize { int m = 512; ... }``
  or ``ProblemSize problem{512, 512, 256};``): ``problem.m``;
- a ``GemmCoord`` accessor: ``problem_size.m()`` / ``.n()`` / ``.k()`` of ``GemmCoord problem_size(M, N, K)``;
- a parameter of the enclosing function whose call sites in the file all pass the same literal
  (``run_gemm(512, 512, 100)`` calling ``void run_gemm(int M, int N, int K)``).

Anything else (runtime data, several different callers) leaves that extent unknown.
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
    # 2.x Arguments ({problem}, {ptr_A, ld_A}, {ptr_B, ld_B}, {ptr_C, ld_C}, {ptr_D, ld_D}, ...):
    # each operand's leading dimension, from ``Layout::packed({rows, cols})`` or an integer (None: unknown)
    lds: dict[str, int | None] | None = None

    def to_dict(self) -> dict:
        d = {"gemm": self.gemm, "m": self.m, "n": self.n, "k": self.k, "at": self.at.to_dict()}
        if self.lds is not None:
            d["lds"] = dict(self.lds)
        return d


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


_MAX_DEPTH = 4
_ACCESSOR = {"m": 0, "n": 1, "k": 2}
_IDENT = r"[A-Za-z_]\w*"


def _value(expr: str, text: str, at: int = -1, depth: int = 0) -> int | None:
    """``expr``'s integer value, from what ``text`` says about it (``at``: where it is used, for
    the enclosing function's parameters)."""
    if depth > _MAX_DEPTH:
        return None
    expr = expr.strip()
    if m := _INT.match(expr):
        return int(m.group(1))
    if m := re.fullmatch(rf"(?:static_cast<\s*\w+\s*>)?\(\s*(.+?)\s*\)", expr, re.S):
        return _value(m.group(1), text, at, depth + 1)
    if m := re.fullmatch(rf"({_IDENT})\s*(?:\.|->)\s*([mnk])\s*\(\s*\)", expr):
        return _coord_accessor(m.group(1), _ACCESSOR[m.group(2)], text, at, depth)
    if m := re.fullmatch(rf"({_IDENT})\s*(?:\.|->)\s*({_IDENT})", expr):
        return _struct_field(m.group(1), m.group(2), text, at, depth)
    if not re.fullmatch(_IDENT, expr):
        return None
    found = {int(a or b) for a, b in re.findall(_DEF.format(name=re.escape(expr)), text, re.M)}
    found |= _list_declared(expr, text)
    if len(found) == 1:
        return found.pop()
    if found:
        return None
    return _parameter(expr, text, at, depth)


_CONST_LIST = re.compile(r"\b(?:constexpr|const)\s+(?:static\s+)?(?:int|int32_t|int64_t|uint32_t|size_t|long|auto)\s+"
                         r"([^;()]*,[^;()]*);")


def _list_declared(name: str, text: str) -> set[int]:
    """Values of ``name`` in declarator lists: ``const int M = 512, N = 512, K = 100;``."""
    out = set()
    for m in _CONST_LIST.finditer(text):
        for item in split_top_level(m.group(1)):
            if d := re.fullmatch(rf"{re.escape(name)}\s*(?:=\s*|\{{\s*)(\d+)\s*\}}?", item.strip()):
                out.add(int(d.group(1)))
    return out


def _coord_accessor(var: str, index: int, text: str, at: int, depth: int) -> int | None:
    coords = re.findall(_COORD.format(name=re.escape(var)), text)
    if len(coords) != 1:
        return None
    items = split_top_level(coords[0])
    return _value(items[index], text, at, depth + 1) if len(items) > index else None


def _struct_field(var: str, member: str, text: str, at: int, depth: int) -> int | None:
    """``var.member`` for ``Type var;`` / ``Type var{...}`` / ``Type var = {...}`` of a struct in
    the file: the aggregate initializer's item, else the member's default initializer."""
    decls = re.findall(rf"\b({_IDENT})\s+{re.escape(var)}\s*(\{{[^{{}}]*\}}|=\s*\{{[^{{}}]*\}}|;)", text)
    types = {t for t, _ in decls if t not in ("return", "auto", "const", "constexpr")}
    if len(decls) != 1 or len(types) != 1:
        return None
    type_name, init = decls[0]
    body_at = re.search(rf"\b(?:struct|class)\s+{re.escape(type_name)}\s*\{{", text)
    if body_at is None:
        return None
    body = _balanced(text, body_at.end() - 1) or ""
    fields = re.findall(rf"\b(?:int|int32_t|int64_t|uint32_t|size_t|long|unsigned)\s+({_IDENT})\s*"
                        rf"(?:=\s*([^;,{{}}]+?)|\{{\s*([^;{{}}]*?)\s*\}})?\s*;", body)
    names = [f[0] for f in fields]
    if member not in names:
        return None
    init = init.strip().lstrip("=").strip()
    if init.startswith("{"):
        items = split_top_level(init[1:-1])
        i = names.index(member)
        if items and not any(x.lstrip().startswith(".") for x in items):
            return _value(items[i], text, at, depth + 1) if i < len(items) else \
                _default(fields[i], text, at, depth)
        for x in items:  # designated: {.m = 512, ...}
            if mm := re.fullmatch(rf"\.\s*{re.escape(member)}\s*=\s*(.+)", x.strip(), re.S):
                return _value(mm.group(1), text, at, depth + 1)
    return _default(fields[names.index(member)], text, at, depth)


def _default(field: tuple[str, str, str], text: str, at: int, depth: int) -> int | None:
    expr = field[1] or field[2]
    return _value(expr, text, at, depth + 1) if expr else None


_FUNCTION = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*(?:const\s*)?(?:noexcept\s*)?\{")


def _parameter(name: str, text: str, at: int, depth: int) -> int | None:
    """A parameter ``name`` of the function around ``at``, when every call of that function in the
    file passes the same integer for it."""
    if at < 0:
        return None
    fn = None
    for m in _FUNCTION.finditer(text, 0, at):
        if m.group("name") in ("if", "for", "while", "switch", "catch", "return"):
            continue
        body = _balanced(text, m.end() - 1)
        if body is not None and m.end() + len(body) >= at:
            fn = m
    if fn is None:
        return None
    params = [p.strip() for p in split_top_level(fn.group("params"), "<([{", ">)]}")]
    index = next((i for i, p in enumerate(params) if re.search(rf"\b{re.escape(name)}\s*(?:=.*)?$", p)), None)
    if index is None:
        return None
    values = set()
    for call in re.finditer(rf"(?<![\w.:>]){re.escape(fn.group('name'))}\s*(?:<[^<>;]*>)?\s*\(", text):
        if call.start() == fn.start():
            continue
        inner = _balanced(text, call.end() - 1)
        if inner is None:
            return None
        args = split_top_level(inner, "<([{", ">)]}")
        if index >= len(args):
            return None
        values.add(_value(args[index], text, call.start(), depth + 1))
    if len(values) == 1 and None not in values:
        return values.pop()
    return None


def _extents(item: str, text: str) -> list[str] | None:
    """The M, N, K(, L) expressions of an Arguments' first item."""
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


_PACKED = re.compile(r"^(?:[\w:]*::)?(?P<layout>RowMajor|ColumnMajor)::packed\s*\(\s*\{(?P<ext>.*)\}\s*\)$", re.S)


def _leading_dimensions(refs: list[str], text: str, at: int) -> dict[str, int | None] | None:
    """The leading dimensions of a 2.x Arguments' four TensorRefs ``{ptr, ld}`` (A, B, C, D)."""
    if len(refs) != 4 or not all(r.strip().startswith("{") and r.strip().endswith("}") for r in refs):
        return None
    out: dict[str, int | None] = {}
    for name, ref in zip("abcd", refs):
        parts = split_top_level(ref.strip()[1:-1])
        if len(parts) != 2:
            out[name] = None
            continue
        ld = parts[1].strip()
        layout_name = re.match(r"^(?P<name>[\w:]+)::packed", ld)
        packed = _PACKED.match(ld) or (layout_name and _PACKED.match(
            _layout_alias(layout_name.group("name"), text) + ld[len(layout_name.group("name")):]))
        if packed:
            ext = split_top_level(packed.group("ext"))
            # RowMajor::packed({rows, cols}) has stride cols; ColumnMajor: rows
            pick = ext[1] if packed.group("layout") == "RowMajor" else ext[0]
            out[name] = _value(pick, text, at) if len(ext) == 2 else None
        else:
            out[name] = _value(ld, text, at)
    return out


def _layout_alias(name: str, text: str) -> str:
    """``LayoutA`` -> ``cutlass::layout::RowMajor`` when the file says ``using LayoutA = ...`` once."""
    short = name.split("::")[-1]
    found = set(re.findall(rf"\busing\s+{re.escape(short)}\s*=\s*([\w:]+)\s*;", text))
    return found.pop() if len(found) == 1 else name


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
        m_, n_, k_ = (_value(e, clean, m.start()) for e in extents[:3])
        line = clean.count("\n", 0, m.start()) + 1
        col = m.start() - (clean.rfind("\n", 0, m.start()) + 1) + 1
        lds = _leading_dimensions(items[1:5], clean, m.start()) if "GemmUniversalMode" not in inner[:200] else None
        out.append(Problem(m.group("gemm"), m_, n_, k_, Loc(path, line, col), lds))
    return out
