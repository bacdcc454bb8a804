"""What the interpreter knows of values that only exist at run time: which C types are runtime
objects (pointers, handles, structs: a symbol, not a number), the value of a parameter of a
function analysed without a caller, and the phrases that say which run-time data an unknown value
is (``Unknown.runtime``)."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.cursors import function_label, loc_of, written
from fusionlint.model.values import Symbol, Unknown, Value


RUNTIME_TYPE_KINDS = {ci.TypeKind.POINTER, ci.TypeKind.RECORD, ci.TypeKind.LVALUEREFERENCE,
                       ci.TypeKind.RVALUEREFERENCE, ci.TypeKind.MEMBERPOINTER}


def is_runtime_object(t: ci.Type) -> bool:
    """Pointers, handles and objects: things whose identity matters, not a numeric value."""
    return t.get_canonical().kind in RUNTIME_TYPE_KINDS


def computed_from(call: ci.Cursor, name: str, why: str) -> str:
    """A call's result computed from run-time data ``why``: the call as written (``input.size(0)``),
    with ``why`` where the text does not show it."""
    text = written(call)
    text = text if text and len(text) <= 60 else f"{name}()"
    return f"`{text}`" if why.strip("`") in text else f"`{text}`, from {why}"


def callee_text(callee: ci.Cursor | None) -> str:
    """A name for a callee that has none (a function pointer, ``table[i]``, ``ops->run``): the
    callee expression as written, else ``<function pointer>``."""
    text = "".join(t.spelling for t in callee.get_tokens()) if callee is not None else ""
    return text if text and len(text) <= 60 else "<function pointer>"


def parameter_value(fn: ci.Cursor, param: ci.Cursor, entry: bool = False) -> Value:
    """The value of a parameter of a function analysed without a caller (``entry``: an entry
    point of the project, whose parameters are input from outside it at run time)."""
    if is_runtime_object(param.type):
        return Symbol(param.spelling, param.type.spelling, loc_of(param))
    return Unknown(f"{param.spelling} is a parameter of {fn.spelling}(); its value comes from the caller",
                   loc_of(param), param.type.spelling, runtime=entry_input(param.spelling, fn) if entry else "")


def entry_input(spelled: str, fn: ci.Cursor) -> str:
    """The run-time data a parameter (or a part of one) of an entry point ``fn`` is."""
    return f"`{spelled}`, input of {function_label(fn)}(), which no file of the project calls"
