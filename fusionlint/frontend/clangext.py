"""libclang C functions the Python bindings do not wrap (operator kinds, constant evaluation)."""
from __future__ import annotations

import ctypes
from functools import lru_cache

import clang.cindex as ci

_EVAL_INT, _EVAL_FLOAT = 1, 2
_EVAL_STRINGS = {3, 4, 5}  # ObjCStrLiteral, StrLiteral, CFStr


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    lib = ci.conf.lib
    lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
    lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
    for name in ("clang_getBinaryOperatorKindSpelling", "clang_getUnaryOperatorKindSpelling"):
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_int]
        fn.restype = ci._CXString
        fn.errcheck = ci._CXString.from_result
    lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
    lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_getAsDouble.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsDouble.restype = ctypes.c_double
    lib.clang_EvalResult_getAsStr.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsStr.restype = ctypes.c_char_p
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_dispose.restype = None
    return lib


def binary_operator(cursor: ci.Cursor) -> str:
    """The operator of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR cursor, e.g. ``"+"`` or ``"|="``."""
    lib = _lib()
    return lib.clang_getBinaryOperatorKindSpelling(lib.clang_getCursorBinaryOperatorKind(cursor))


def unary_operator(cursor: ci.Cursor) -> str:
    """The operator of a UNARY_OPERATOR cursor: ``"&"``, ``"-"``, ``"++"`` (pre/post both ``"++"``)."""
    lib = _lib()
    return lib.clang_getUnaryOperatorKindSpelling(lib.clang_getCursorUnaryOperatorKind(cursor))


def unary_is_postfix(cursor: ci.Cursor) -> bool:
    return _lib().clang_getCursorUnaryOperatorKind(cursor) in (1, 2)


def evaluate(cursor: ci.Cursor) -> int | float | str | None:
    """clang's own constant folding of an expression cursor (None when it cannot fold it)."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == _EVAL_INT:
            if lib.clang_EvalResult_isUnsignedInt(res):
                return int(lib.clang_EvalResult_getAsUnsigned(res))
            return int(lib.clang_EvalResult_getAsLongLong(res))
        if kind == _EVAL_FLOAT:
            return float(lib.clang_EvalResult_getAsDouble(res))
        if kind in _EVAL_STRINGS:
            raw = lib.clang_EvalResult_getAsStr(res)
            return raw.decode("utf-8", "replace") if raw is not None else None
        return None
    finally:
        lib.clang_EvalResult_dispose(res)


def specialized_template(cursor: ci.Cursor) -> ci.Cursor | None:
    tmpl = ci.conf.lib.clang_getSpecializedCursorTemplate(cursor)
    return None if tmpl is None or tmpl.kind.is_invalid() else tmpl


_CALL_EXPR = ci.CursorKind.CALL_EXPR.value
_RECURSE = 2  # CXChildVisit_Recurse


def calls_in(cursor: ci.Cursor) -> list[ci.Cursor]:
    """The CALL_EXPR cursors below ``cursor``, in preorder: what ``[c for c in
    cursor.walk_preorder() if c.kind == CALL_EXPR]`` gives, in one clang_visitChildren walk that
    builds no Cursor object for the other nodes (about five times faster on large files)."""
    lib = ci.conf.lib
    found: list[ci.Cursor] = []

    def visit(child: ci.Cursor, _parent: ci.Cursor, _data: object) -> int:
        if lib.clang_getCursorKind(child) == _CALL_EXPR:
            child._tu = cursor._tu
            found.append(child)
        return _RECURSE

    lib.clang_visitChildren(cursor, ci.callbacks["cursor_visit"](visit), None)
    return found
