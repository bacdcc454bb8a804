"""What a translation unit's functions return, for the calls of them from other units (the project
index): TransformerEngine's ``cublas_version()`` is defined in ``util/cuda_runtime.cpp``
and called under ``if`` in ``gemm/cublaslt_gemm.cu``; a ``default_compute()`` in one file may give
the compute type of a descriptor made in another.

A function is summarized when it returns a scalar (an integer, enum, boolean or floating-point
value: what a cuBLASLt attribute or a condition takes), is not a template nor a non-static method
(whose result depends on its object), and what it returns, run without a caller, does not depend
on the caller: a known value, or an unknown one that names the run-time data it is (the library
version). Anything else is left out, and a call of it stays the unknown "result of f()" it was.

A function that reads state the program may change is left out (``reads_mutable_state``): a
variable of static storage that is not const (a global a setter writes, a counter) has its
initial value only when the program starts. A static local that the function only returns (the
cached ``static size_t version = cublasLtGetVersion(); return version;``) is not such state.
"""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.interp.interpreter import Interpreter, function_label, loc_of
from fusionlint.model.call_context import value_to_json
from fusionlint.model.values import Known, Unknown, Value

K = ci.CursorKind
T = ci.TypeKind

_WRAPPERS = {K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR,
             K.CXX_FUNCTIONAL_CAST_EXPR}
_MAX_LINES = 200  # a longer function is not summarized (nor followed into)
_MAX_DEPTH = 4  # helpers followed from a summarized function

_SCALAR = {T.BOOL, T.CHAR_U, T.UCHAR, T.USHORT, T.UINT, T.ULONG, T.ULONGLONG, T.CHAR_S, T.SCHAR, T.SHORT, T.INT,
           T.LONG, T.LONGLONG, T.FLOAT, T.DOUBLE, T.ENUM}


def summarizable(fn: ci.Cursor) -> bool:
    """A function whose result a caller in another unit may use as it is (see the module's doc)."""
    if fn.kind == K.CXX_METHOD and not fn.is_static_method():
        return False
    if fn.kind not in (K.FUNCTION_DECL, K.CXX_METHOD) or not fn.get_usr():
        return False
    return fn.result_type.get_canonical().kind in _SCALAR


def _static_storage(var: ci.Cursor) -> bool:
    parent = var.semantic_parent
    if parent is None or parent.kind in (K.TRANSLATION_UNIT, K.NAMESPACE, K.LINKAGE_SPEC, K.CLASS_DECL,
                                         K.STRUCT_DECL, K.CLASS_TEMPLATE):
        return True  # a namespace-scope variable or a static data member
    return var.storage_class in (ci.StorageClass.STATIC, ci.StorageClass.EXTERN) or var.tls_kind != ci.TLSKind.NONE


def _short(fn: ci.Cursor) -> bool:
    return fn.extent.end.line - fn.extent.start.line <= _MAX_LINES


def reads_mutable_state(fn: ci.Cursor, depth: int = 0, seen: set[str] | None = None) -> bool:
    """Does ``fn`` (or a helper it calls that this unit has the body of) read a variable of static
    storage that is not const, other than a static local it only returns? Also True for a function
    too long or too deep to look through."""
    seen = set() if seen is None else seen
    usr = fn.get_usr()
    if usr in seen:
        return False
    seen.add(usr)
    if depth > _MAX_DEPTH or not _short(fn):
        return True
    stack: list[tuple[ci.Cursor, ci.Cursor | None]] = [(fn, None)]
    while stack:
        c, parent = stack.pop()
        if c.kind == K.DECL_REF_EXPR:
            var = c.referenced
            if var is not None and var.kind == K.VAR_DECL and _static_storage(var) \
                    and not var.type.is_const_qualified():
                local = var.semantic_parent is not None and var.semantic_parent == fn
                if not (local and parent is not None and parent.kind == K.RETURN_STMT):
                    return True
        elif c.kind == K.CALL_EXPR and c.referenced is not None:
            body = c.referenced.get_definition()
            if body is not None and body.kind in (K.FUNCTION_DECL, K.CXX_METHOD) \
                    and not body.location.is_in_system_header and reads_mutable_state(body, depth + 1, seen):
                return True
        keep = parent if c.kind in _WRAPPERS else c  # a return's operand through casts and parentheses
        stack.extend((k, keep) for k in c.get_children())
    return False


def independent(value: Value) -> bool:
    """Is ``value`` the same whoever calls: known, or run-time data of the function's own?"""
    if isinstance(value, Known):
        return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
    return isinstance(value, Unknown) and bool(value.runtime) and not value.choices


def return_summaries(interp: Interpreter, functions: list[ci.Cursor]) -> list[dict]:
    """Of ``functions`` (the unit's definitions, ``interp.main_functions()``), the summarizable ones
    whose result does not depend on the caller, each run by ``interp`` (a cuBLASLt interpreter of
    the unit): its USR, label, line and the value (``call_context.value_to_json``, with the run-time
    data)."""
    out: list[dict] = []
    seen: set[str] = set()
    for fn in functions:
        usr = fn.get_usr()
        if usr in seen or not summarizable(fn) or reads_mutable_state(fn):
            continue
        seen.add(usr)
        value = interp.returned_by(fn)
        if independent(value):
            out.append({"usr": usr, "label": function_label(fn), "line": loc_of(fn).line,
                        "value": value_to_json(value)})
    return out
