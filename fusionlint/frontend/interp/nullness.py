"""Conditions that test a pointer against null (runtime choices).

``if (bias)``, ``bias != nullptr ? … : …`` and ``int has_bias = (bias != NULL); … if (has_bias)`` all
decide one thing: whether ``bias`` is null. They are one runtime choice, and on its "null" side the
pointer is null: a ``BIAS_POINTER`` set from it there is a null pointer, which cuBLASLt takes as no
bias (llm.c's ``matmul_forward3`` sets the bias pointer whatever ``has_bias`` is, and picks the
epilogue by ``has_bias``).
"""
from __future__ import annotations

from typing import Callable

import clang.cindex as ci

from fusionlint.frontend.clang import clangext

from fusionlint.frontend.interp import loops
from fusionlint.frontend.clang.cursors import expr_children, strip, strip_casts
from fusionlint.model.values import Address, Known, Symbol, Value

K = ci.CursorKind
_NULLS = (K.CXX_NULL_PTR_LITERAL_EXPR, K.GNU_NULL_EXPR)


def pointer_test(cond: ci.Cursor, written: Callable[[ci.Cursor], set[str]]) -> tuple[ci.Cursor, bool] | None:
    """If ``cond`` tests whether a pointer variable is null: the DECL_REF_EXPR of that pointer and
    whether ``cond`` is true when it is null. A variable initialized from such a test (``has_bias``)
    counts when neither it nor the pointer is changed in its function (``written``: ``loops.changed_in``)."""
    c, negated = _without_not(cond)
    if c.kind == K.BINARY_OPERATOR and clangext.binary_operator(c) in ("==", "!="):
        sides = expr_children(c)
        if len(sides) == 2:
            for ptr, other in (sides, sides[::-1]):
                if _is_null(other) and _pointer_variable(strip(ptr)):
                    return strip(ptr), negated != (clangext.binary_operator(c) == "==")
        return None
    if c.kind != K.DECL_REF_EXPR or c.referenced is None:
        return None
    if _pointer_variable(c):
        return c, negated
    flag = c.referenced
    if flag.kind != K.VAR_DECL or flag.type.get_canonical().kind == ci.TypeKind.POINTER:
        return None
    init = [k for k in flag.get_children() if k.kind.is_expression()]
    if len(init) == 1 and init[0].kind == K.INIT_LIST_EXPR:  # ``const bool has{bias != nullptr};``
        init = expr_children(init[0])
    fn = flag.semantic_parent
    if len(init) != 1 or fn is None or fn.kind not in (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE):
        return None
    inner = pointer_test(init[0], written) if init[0].kind != K.DECL_REF_EXPR else None
    if inner is None:
        return None
    changed = written(fn)
    if any(loops.variable_id(d) in changed for d in (flag, inner[0].referenced)):
        return None
    return inner[0], negated != inner[1]


def _without_not(cond: ci.Cursor) -> tuple[ci.Cursor, bool]:
    c, negated = strip(cond), False
    while c.kind == K.UNARY_OPERATOR and clangext.unary_operator(c) == "!":
        kids = expr_children(c)
        if len(kids) != 1:
            break
        c, negated = strip(kids[0]), not negated
    return c, negated


def _is_null(c: ci.Cursor) -> bool:
    """``nullptr``, ``NULL`` (``__null``, or ``((void*)0)`` where a C header defines it) or ``0``."""
    s = strip_casts(c)
    return s.kind in _NULLS or (s.kind == K.INTEGER_LITERAL and clangext.evaluate(s) == 0)


def _pointer_variable(c: ci.Cursor) -> bool:
    ref = c.referenced if c.kind == K.DECL_REF_EXPR else None
    return ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL) and \
        ref.type.get_canonical().kind == ci.TypeKind.POINTER


def not_null(value: Value | None) -> str:
    """Why ``value`` is a pointer known not to be null (an object's address, memory the program
    allocated: ``Symbol.live``); "" when it is not known to be one."""
    if isinstance(value, Address):
        return "the address of an object is not null"
    return "an allocated pointer is not null" if isinstance(value, Symbol) and value.live else ""


def null_compared(lhs: Value, rhs: Value) -> str:
    """When one side of ``==``/``!=`` is a pointer known not to be null and the other null (0,
    ``nullptr``, ``NULL``): why that pointer is not null; else ""."""
    for a, b in ((lhs, rhs), (rhs, lhs)):
        why = not_null(a)
        if why and isinstance(b, Known) and b.value == 0 and not isinstance(b.value, str):
            return why
    return ""


# what writes a pointer to memory it allocated through its first argument (the program stops or
# checks the status when it fails: the pointer is taken as not null)
ALLOCATORS = frozenset({"cudaMalloc", "cudaMallocAsync", "cudaMallocManaged", "cudaMallocHost", "cudaHostAlloc",
                        "cudaMallocPitch", "cudaMallocFromPoolAsync", "cuMemAlloc", "cuMemAlloc_v2",
                        "cuMemAllocAsync", "cuMemAllocManaged", "cuMemHostAlloc", "cuMemAllocPitch",
                        "cuMemAllocPitch_v2", "cuMemAllocFromPoolAsync"})


def as_condition(value: Value) -> Value:
    """A value used as a condition: a pointer known not to be null is true."""
    why = not_null(value)
    return Known(1, value.origin, via=why) if why else value
