"""libclang C functions the Python bindings do not wrap (operator kinds, constant evaluation)."""
from __future__ import annotations

import ctypes
from functools import lru_cache

import clang.cindex as ci

_EVAL_INT, _EVAL_FLOAT = 1, 2
_EVAL_STRINGS = {3, 4, 5}  # ObjCStrLiteral, StrLiteral, CFStr

# the cursor kinds of a template's parameters, in the order they are written among its children
TEMPLATE_PARAMETERS = (ci.CursorKind.TEMPLATE_TYPE_PARAMETER, ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER,
                       ci.CursorKind.TEMPLATE_TEMPLATE_PARAMETER)


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
    lib.clang_getFileLocation.argtypes = [ci.SourceLocation, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_void_p]
    lib.clang_getFileLocation.restype = None
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


_CONTINUE = 1  # CXChildVisit_Continue


def _names(tu: ci.TranslationUnit) -> dict[int | None, str]:
    """File names by the address of libclang's file object, for one translation unit (the
    addresses mean nothing once it is gone, so the table lives on the unit's Python object)."""
    names = tu.__dict__.get("_fusionlint_file_names")
    if names is None:
        names = tu.__dict__["_fusionlint_file_names"] = {None: ""}
    return names


# Output arguments of clang_getInstantiationLocation, reused (the interpreter runs in one thread);
# _FILE_ADDRESS reads the file pointer written into _FILE without a ctypes.cast per call.
_FILE = ci.c_object_p()
_FILE_ADDRESS = ctypes.c_void_p.from_address(ctypes.addressof(_FILE))
_LINE, _COLUMN = ctypes.c_uint(), ctypes.c_uint()
_FILE_REF, _LINE_REF, _COLUMN_REF = ctypes.byref(_FILE), ctypes.byref(_LINE), ctypes.byref(_COLUMN)


def _file_name(names: dict[int | None, str], address: int | None) -> str:
    name = names.get(address)
    if name is None:
        name = names[address] = ci.File(ctypes.cast(ctypes.c_void_p(address), ci.c_object_p)).name
    return name


def location(cursor: ci.Cursor) -> tuple[str, int, int]:
    """(file name, line, column) of the cursor's expansion location: what ``cursor.location.file.name``
    (or ``""``), ``.line`` and ``.column`` give, with each file's name fetched once per unit."""
    tu = getattr(cursor, "_tu", None)
    if tu is None:
        loc = cursor.location
        return (loc.file.name if loc.file else ""), loc.line, loc.column
    ci.conf.lib.clang_getInstantiationLocation(cursor.location, _FILE_REF, _LINE_REF, _COLUMN_REF, None)
    return _file_name(_names(tu), _FILE_ADDRESS.value), _LINE.value, _COLUMN.value


def written_location(cursor: ci.Cursor, expansion: tuple[str, int, int]) -> tuple[str, int, int]:
    """Where the text of ``cursor`` is written: for an argument of a macro call
    (``CHECK(cublasLtMatmulDescSetAttribute(desc, ATTR, &v, sizeof(v)))``) the argument's own
    line and column instead of the macro call's (``expansion``, what ``location`` gives). Text that
    comes from a macro's body (its ``#define``, above the call) keeps ``expansion``."""
    _lib().clang_getFileLocation(cursor.location, _FILE_REF, _LINE_REF, _COLUMN_REF, None)
    tu = getattr(cursor, "_tu", None)
    name = _file_name(_names(tu), _FILE_ADDRESS.value) if tu is not None else expansion[0]
    written = (name, _LINE.value, _COLUMN.value)
    if name != expansion[0] or (written[1], written[2]) < (expansion[1], expansion[2]):
        return expansion
    return written


def children_in_file(cursor: ci.Cursor, path: str) -> list[ci.Cursor]:
    """The children of ``cursor`` whose expansion location is in the file named ``path``: what
    ``[c for c in cursor.get_children() if c.location.file and c.location.file.name == path]``
    gives, without Python objects for the location and file of each child (a translation unit's
    top level holds thousands of declarations from headers)."""
    lib = ci.conf.lib
    tu = cursor._tu
    names = _names(tu)
    found: list[ci.Cursor] = []

    def visit(child: ci.Cursor, _parent: ci.Cursor, _data: object) -> int:
        lib.clang_getInstantiationLocation(lib.clang_getCursorLocation(child), _FILE_REF, None, None, None)
        if _file_name(names, _FILE_ADDRESS.value) == path:
            child._tu = tu
            found.append(child)
        return _CONTINUE

    lib.clang_visitChildren(cursor, ci.callbacks["cursor_visit"](visit), None)
    return found


def overloaded_decls(ref: ci.Cursor) -> list[ci.Cursor]:
    """The declarations an ``OVERLOADED_DECL_REF`` names (the set a name lookup found)."""
    lib = ci.conf.lib
    return [lib.clang_getOverloadedDecl(ref, i) for i in range(lib.clang_getNumOverloadedDecls(ref))]


def callee(call: ci.Cursor) -> ci.Cursor | None:
    """The function a call names: ``call.referenced``, or, for a call inside a template that
    libclang left unresolved because an argument depends on a template parameter (``f(&p)`` with
    ``const T* p``: the lookup waits for the instantiation), the one function its name finds,
    when the name finds one (a C function such as cuBLASLt's, a helper with no overload). None
    when the name finds none or several."""
    ref = call.referenced
    if ref is not None or kind(call) != ci.CursorKind.CALL_EXPR:
        return ref
    kids = children(call)
    name = kids[0] if kids else None
    while name is not None and kind(name) in (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.DECL_REF_EXPR):
        inner = children(name)
        name = inner[0] if len(inner) == 1 else None
    if name is None or kind(name) != ci.CursorKind.OVERLOADED_DECL_REF:
        return None
    found = {d.get_usr(): d for d in overloaded_decls(name) if d is not None}
    return next(iter(found.values())) if len(found) == 1 else None


def failed_call(cursor: ci.Cursor) -> str | None:
    """The function named by a call that overload resolution rejected (an argument of a type the
    partial parse got wrong: XLA's ``cublasLtMatmul(..., palgo, ...)`` with ``palgo`` from a
    ``std::any_cast`` of a recovered type): clang keeps it as a recovery expression, which libclang
    shows as an unexposed expression of the callee's name followed by the arguments. None for any
    other cursor."""
    if kind(cursor) != ci.CursorKind.UNEXPOSED_EXPR:
        return None
    kids = children(cursor)
    if len(kids) < 2 or kind(kids[0]) != ci.CursorKind.DECL_REF_EXPR:
        return None
    inner = children(kids[0])
    ref = inner[0] if len(inner) == 1 else kids[0].referenced
    if ref is None or kind(ref) not in (ci.CursorKind.OVERLOADED_DECL_REF, ci.CursorKind.FUNCTION_DECL):
        return None
    return ref.spelling or None


def arguments(cursor: ci.Cursor) -> list[ci.Cursor]:
    """``list(cursor.get_arguments())`` of a call, kept on the cursor object like ``children``: the
    argument cursors libclang makes are new objects each time, and whatever was kept on them (their
    children, their callee's definition) would be looked up again at every visit of the call. For a
    call overload resolution rejected (``failed_call``): the expressions after the callee."""
    args = cursor.__dict__.get("_fusionlint_arguments")
    if args is None:
        tu = cursor._tu
        args = cursor.__dict__["_fusionlint_arguments"] = children(cursor)[1:] if failed_call(cursor) \
            else list(cursor.get_arguments())
        for a in args:
            a._tu = tu
    return args


def children(cursor: ci.Cursor) -> list[ci.Cursor]:
    """``list(cursor.get_children())``, kept on the cursor object: the interpreter visits the same
    statements and expressions again (loops, branches, helpers inlined at several calls), and the
    kept children keep what libclang already told about them (spelling, location, referenced)."""
    kids = cursor.__dict__.get("_fusionlint_children")
    if kids is None:
        kids = cursor.__dict__["_fusionlint_children"] = []
        tu = cursor._tu

        def visit(child: ci.Cursor, _parent: ci.Cursor, _data: object) -> int:
            child._tu = tu  # (Cursor.get_children also compares each child with the null cursor: two C calls)
            kids.append(child)
            return _CONTINUE

        ci.conf.lib.clang_visitChildren(cursor, ci.callbacks["cursor_visit"](visit), None)
    return kids


_CURSOR_KINDS = ci.CursorKind._kinds


def kind(cursor: ci.Cursor) -> ci.CursorKind:
    """``cursor.kind`` without the property and the bounds check of ``CursorKind.from_id`` (the
    interpreter asks for it tens of thousands of times)."""
    return _CURSOR_KINDS[cursor._kind_id]
