"""Small readers of libclang cursors that the interpreter and its parts share: where a cursor
is, its expression children, implicit conversions skipped, how an expression or a function is
written."""
from __future__ import annotations

import itertools
import os
import re

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.clang.recovery import code_of
from fusionlint.model.values import Loc
from fusionlint.sourcetext import lines_of

API_NAME = re.compile(r"\bcublasLt[A-Z]\w*")

K = ci.CursorKind

NON_EXPR_CHILDREN = {K.TYPE_REF, K.NAMESPACE_REF, K.TEMPLATE_REF, K.OVERLOADED_DECL_REF}


def function_label(fn: ci.Cursor) -> str:
    """``Class::method`` for a member function, ``lambda at FILE:LINE`` for a lambda, else the
    function's name."""
    if fn.kind == K.LAMBDA_EXPR:
        loc = fn.location
        return f"lambda at {os.path.basename(loc.file.name) if loc.file else '?'}:{loc.line}"
    parent = fn.semantic_parent
    if fn.kind != K.FUNCTION_DECL and parent is not None and parent.kind in (
            K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE):
        return f"{parent.spelling}::{fn.spelling}"
    return fn.spelling


def loc_of(cursor: ci.Cursor) -> Loc:
    loc = cursor.__dict__.get("_fusionlint_loc")
    if loc is None:
        loc = cursor.__dict__["_fusionlint_loc"] = Loc(*clangext.location(cursor))
    return loc


def expr_children(cursor: ci.Cursor) -> list[ci.Cursor]:
    kids = cursor.__dict__.get("_fusionlint_expr_children")
    if kids is None:
        kids = cursor.__dict__["_fusionlint_expr_children"] = [
            c for c in clangext.children(cursor) if clangext.kind(c) not in NON_EXPR_CHILDREN]
    return kids


def strip(cursor: ci.Cursor) -> ci.Cursor:
    """Skip parentheses and implicit conversions (not explicit casts)."""
    while clangext.kind(cursor) in (K.PAREN_EXPR, K.UNEXPOSED_EXPR):
        kids = expr_children(cursor)
        if len(kids) != 1:
            break
        cursor = kids[0]
    return cursor


EXPLICIT_CASTS = (K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR, K.CXX_CONST_CAST_EXPR)


def strip_casts(cursor: ci.Cursor) -> ci.Cursor:
    """Skip parentheses, implicit conversions and explicit casts (``(const void*)&x``, ``((void*)0)``)."""
    while clangext.kind(cursor) in (K.PAREN_EXPR, K.UNEXPOSED_EXPR, *EXPLICIT_CASTS):
        kids = expr_children(cursor)
        if len(kids) != 1:
            break
        cursor = kids[0]
    return cursor


_SPACED = {"==", "!=", "&&", "||", "<=", ">=", "?", ":", "=", "+", "-", "/", "%", "|"}


def written(cursor: ci.Cursor) -> str:
    """An expression as written, its tokens joined the usual way (``DType::kBF16``, ``a.b(c, d)``,
    ``x == y``). Kept on the cursor object (the interpreter names the same conditions and calls in
    every run of a function)."""
    text = cursor.__dict__.get("_fusionlint_written")
    if text is not None:
        return text
    out: list[str] = []
    for t in cursor.get_tokens():
        tok = t.spelling
        if out:
            prev = out[-1]
            wordy = (prev[-1].isalnum() or prev[-1] == "_") and (tok[0].isalnum() or tok[0] == "_")
            if wordy or prev == "," or tok in _SPACED or prev in _SPACED:
                out.append(" ")
        out.append(tok)
    text = cursor.__dict__["_fusionlint_written"] = "".join(out)
    return text


def is_stand_in_type(t: ci.Type) -> bool:
    """A type the partial-parse recovery declared (frontend/clang/recovery.py) for a header found
    nowhere: its size and layout say nothing about the real one."""
    canonical = t.get_canonical()
    return "fusionlint_partial" in canonical.spelling or _derives_from_stand_in(canonical.get_declaration())


def is_shared_stand_in_type(t: ci.Type) -> bool:
    """The one permissive class itself (an unknown template's alias of it, or a type written through
    it): unlike the recovery's class of its own per unknown type, it stands for every type at once."""
    return "fusionlint_partial" in t.get_canonical().spelling


_STAND_IN_CLASSES: dict[tuple[str, str], bool] = {}  # (file declaring it, USR) -> derives from the stand-in


def _derives_from_stand_in(decl: ci.Cursor) -> bool:
    """A class the recovery declared: it derives from ``fusionlint_partial::any``. Memoised per file
    and USR: ``at::Half`` is the recovery's class where ATen is missing and the real one elsewhere."""
    if decl is None or decl.kind not in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL):
        return False
    where = decl.location.file
    key = (where.name if where is not None else "", decl.get_usr() or "")
    known = _STAND_IN_CLASSES.get(key)
    if known is None:
        known = any(c.kind == ci.CursorKind.CXX_BASE_SPECIFIER and "fusionlint_partial" in c.type.get_canonical().spelling
                    for c in decl.get_children())
        if key[1]:
            _STAND_IN_CLASSES[key] = known
    return known


def with_defaults(call: ci.Cursor, args: list[ci.Cursor]) -> list[ci.Cursor]:
    """A call's argument expressions, where an argument the call leaves to its default (libclang: an
    expression without children or text) is the default its callee's declaration writes."""
    params: list[ci.Cursor] | None = None
    out = []
    for i, a in enumerate(args):
        if a.kind == K.UNEXPOSED_EXPR and a.extent.start.file is None and not list(a.get_children()):
            if params is None:
                ref = call.referenced
                params = [p for p in clangext.children(ref) if p.kind == K.PARM_DECL] if ref is not None else []
            default = [c for c in clangext.children(params[i]) if c.kind not in NON_EXPR_CHILDREN] \
                if i < len(params) else []
            if default:
                a = default[-1]
        out.append(a)
    return out


def points_to_const(t: ci.Type) -> bool:
    """Whether ``t`` is a pointer to const (what a callee cannot write through)."""
    canon = t.get_canonical()
    return canon.kind == ci.TypeKind.POINTER and canon.get_pointee().is_const_qualified()


def is_constexpr(decl: ci.Cursor, within: int = 6) -> bool:
    """Whether a variable or function is declared ``constexpr`` (among its first ``within`` tokens)."""
    return any(t.spelling == "constexpr" for t in itertools.islice(decl.get_tokens(), within))


def is_constant_decl(decl: ci.Cursor) -> bool:
    """Whether a variable is declared ``const`` or ``constexpr``."""
    return decl.type.is_const_qualified() or is_constexpr(decl)


def is_arrow(member_ref: ci.Cursor) -> bool:
    """Whether a member reference is written ``p->m`` (not ``o.m``)."""
    for t in member_ref.get_tokens():
        if t.spelling == "->":
            return True
        if t.spelling == member_ref.spelling:
            return False
    return False


def is_if_constexpr(stmt: ci.Cursor) -> bool:
    """Whether an ``if`` statement is ``if constexpr``."""
    tokens = stmt.get_tokens()
    next(tokens, None)  # if
    second = next(tokens, None)
    return second is not None and second.spelling == "constexpr"


def short_spelling(cursor: ci.Cursor) -> str:
    """An expression as written when it is short (under 12 tokens), else the cursor's spelling."""
    tokens = [t.spelling for t in cursor.get_tokens()]
    text = "".join(tokens) if len(tokens) < 12 else cursor.spelling
    return text or cursor.spelling


def parse_errors_in(fn: ci.Cursor) -> str:
    """`` (…)`` naming the first parse error inside ``fn``'s body (code the parser dropped, where a
    header was not found: onnxruntime's ``case ONNX_NAMESPACE::TensorProto_DataType_FLOAT:``), or ""."""
    ext = fn.extent
    path = ext.start.file.name if ext.start.file else None
    for d in fn.translation_unit.diagnostics:
        loc = d.location
        if d.severity >= ci.Diagnostic.Error and loc.file is not None and loc.file.name == path \
                and ext.start.line <= loc.line <= ext.end.line:
            return f" (the parser dropped code of it: {d.spelling} at line {loc.line})"
    return ""


def names_in_text(fn: ci.Cursor, pattern: re.Pattern[str]) -> list[str]:
    """The words of ``pattern`` in the source text of ``fn`` (its lines as the file on disk has them;
    none for a file not on disk): names written in calls that the parse did not make calls of."""
    start, end = fn.extent.start, fn.extent.end
    path = start.file.name if start.file is not None else ""
    lines = lines_of(path) if path and os.path.isfile(path) else ()
    return pattern.findall(code_of("\n".join(lines[start.line - 1:end.line])))  # (outside comments and strings)
