"""What the interpreter knows of values that only exist at run time: which C types are runtime
objects (pointers, handles, structs: a symbol, not a number), the value of a parameter of a
function analysed without a caller, and the phrases that say which run-time data an unknown value
is (``Unknown.runtime``)."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.interp.choices import calls_defined_code
from fusionlint.frontend.clang.cursors import expr_children, function_label, loc_of, written
from fusionlint.model.values import Key, Symbol, Unknown, Value, runtime_of, runtime_source

TYPE_CHECKING = False

if TYPE_CHECKING:
    from fusionlint.frontend.interp.frames import Frame

K = ci.CursorKind


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
    why = runtime_source(why)
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
        return Symbol(param.spelling, param.type.spelling, loc_of(param), from_caller=not entry)
    return Unknown(f"{param.spelling} is a parameter of {fn.spelling}(); its value comes from the caller",
                   loc_of(param), param.type.spelling, runtime=entry_input(param.spelling, fn) if entry else "")


def entry_input(spelled: str, fn: ci.Cursor) -> str:
    """The run-time data a parameter (or a part of one) of an entry point ``fn`` is."""
    return f"`{spelled}`, input of {function_label(fn)}(), which no file of the project calls"


def _member_path(key: Key) -> tuple[Key, list[str]]:
    """The storage a member or element key is inside, and the members and elements down to it,
    innermost first (``g.m[2]``: ``g``'s key and ``["[2]", "m"]``)."""
    names = []
    while key and key[0] in ("member", "elem"):
        names.append(str(key[2]) if key[0] == "member" else f"[{key[2]}]")
        key = key[1]
    return key, names


def _spelled(names: list[str]) -> str:
    """The members and elements of ``_member_path`` as written after their storage (``.m[2]``)."""
    return "".join(n if n.startswith("[") else f".{n}" for n in reversed(names))


class CallerValuesMixin:
    """Values from outside the function being run (mixed into ``Interpreter``): storage inside a
    parameter of a function analysed without a caller, the object a method without a body is
    called on, and which of them are run-time data."""

    def _receiver(self, callee: ci.Cursor | None, this_key: Key | None) -> Value | None:
        """The object a method without a body here is called on (``t`` of ``t.size(0)``, the
        temporary ``t.size(0)`` of its conversion to ``int64_t``); None for a plain function."""
        if this_key is not None:
            return self.env.get(this_key)
        if callee is None or callee.kind != K.MEMBER_REF_EXPR:
            return None
        base = expr_children(callee)
        return self.eval(base[0]) if base and not calls_defined_code(base[0]) else None

    def _from_caller(self, key: Key) -> tuple[Frame, str, str] | None:
        """(frame, parameter, the storage as written) for storage inside a parameter of a function
        analysed without a caller (``g.m`` of ``const GemmArgs &g``); None for other storage."""
        key, names = _member_path(key)
        if not names or not key or key[0] != "param":
            return None
        frame = next((f for f in self.frames if f.id == key[1]), None)
        if frame is None or key[2] not in frame.from_caller:
            return None
        param = frame.from_caller[key[2]]
        return frame, param, param + _spelled(names)

    def _of_this(self, key: Key) -> str | None:
        """The storage as written (``this->Atype_``) for a member of the object the root method is
        called on, which no caller gave (its state comes from the methods that ran before: setters,
        the constructor); None for other storage."""
        key, names = _member_path(key)
        if not names or not self.frames or key != self.frames[0].this_key:
            return None
        return "this" + "".join(n if n.startswith("[") else f"->{n}" if i == 0 else f".{n}"
                                for i, n in enumerate(reversed(names)))

    def _unset_reason(self, key: Key) -> str | None:
        """Why storage inside a parameter of a function analysed without a caller has no value: it
        comes from the caller (so does the state of the object a root method is called on). None
        for other storage."""
        found = self._from_caller(key)
        if found is None:
            spelled = self._of_this(key)
            if spelled is None:
                return None
            root = self.frames[0].function
            return (f"{spelled} comes from the caller (the state of the {root.semantic_parent.spelling} object "
                    f"{root.spelling}() is called on, set by the methods that ran before)")
        frame, param, spelled = found
        return f"{spelled} comes from the caller ({param} is a parameter of {frame.function.spelling}())"

    def _unset_runtime(self, key: Key) -> str:
        """The run-time input storage inside a parameter of the root function is, when that
        function is an entry point of the project (``entry_root``); so is the state of the object
        a root method is called on; else ""."""
        if not self.entry_root:
            return ""
        found = self._from_caller(key)
        if found is None:
            spelled = self._of_this(key)
            return entry_input(spelled, self.frames[0].function) if spelled is not None else ""
        if found[0] is not self.frames[0]:
            return ""
        return entry_input(found[2], found[0].function)

    def _inside_runtime(self, key: Key) -> str:
        """A member or element not set here of storage that holds run-time data (a struct parameter
        bound to ``*inputA``, a tensor a library call returned): that part of it; else ""."""
        root, names = _member_path(key)
        why = runtime_of(self.env.get(root)) if names else ""
        return f"`{_spelled(names).removeprefix('.')}` of {runtime_source(why)}" if why else ""

    def _member_runtime(self, key: Key | None, cursor: ci.Cursor) -> str:
        """A field not set here of an object that is run-time data (``A->rows`` of a tensor a
        library call returned, ``info()->sm_count``): that field, of that object; else ""."""
        if key is None:  # of a temporary: the object's value
            base = expr_children(cursor)[:1]
            value = self.eval(base[0]) if base and not calls_defined_code(base[0]) else None
        else:
            value = self.env.get(_member_path(key)[0])
        why = runtime_of(value)
        return computed_from(cursor, cursor.spelling, why) if why else ""
