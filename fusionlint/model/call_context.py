"""A call of a function from outside the translation unit that defines it: the calls that lead
there and the argument values, so that the function can be evaluated once per such call.

The project index (``facts/project_index.py``) records them per translation unit; the
interpreter (``frontend/interp/interpreter.py``) takes them for the functions it starts from. It also records
what a unit's functions return when that does not depend on their caller (``returns``): the
interpreter takes those for calls of functions it has no body of.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fusionlint.model.cublaslt_facts import CallStep
from fusionlint.model.values import Known, Loc, Unknown, Value


@dataclass(frozen=True)
class CallContext:
    via: tuple[CallStep, ...]  # outermost first; the last step is the call of the function itself
    args: tuple[Value, ...]  # one per argument written at the call (Known or Unknown)
    # no call at all: the function is an entry point of the project (no file of its compilation
    # database calls it), run once without a caller; its parameters are input from outside
    outside: bool = False


# the context of an entry point (see ``CallContext.outside``)
OUTSIDE = CallContext((), (), outside=True)


@dataclass(frozen=True)
class IndexContext:
    """What the project index tells the interpreter about a file's surroundings: the calls of its
    functions from other translation units (``calls``, by the callee's USR) and what functions
    defined in other units return (``returns``, by their USR: a known value, or the run-time data
    it is)."""

    calls: Mapping[str, Sequence[CallContext]] = field(default_factory=dict)
    returns: Mapping[str, Value] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.calls or self.returns)


def loc_from_dict(d: dict) -> Loc:
    return Loc(str(d["path"]), int(d["line"]), int(d["column"]))


def value_to_json(v: Value) -> dict:
    """Only what a caller can hand over: a compile-time value, or why it is not one."""
    if isinstance(v, Known) and isinstance(v.value, (int, float, str)) and not isinstance(v.value, bool):
        d: dict = {"value": v.value, "via": v.via, "ctype": v.ctype}
        if v.origin is not None:
            d["origin"] = v.origin.to_dict()
        return d
    reason = v.reason if isinstance(v, Unknown) else "not a compile-time value"
    d = {"unknown": reason}
    if isinstance(v, Unknown) and v.runtime:
        d["runtime"] = v.runtime
    origin = getattr(v, "origin", None)
    if isinstance(origin, Loc):
        d["origin"] = origin.to_dict()
    return d


def value_from_json(d: dict) -> Value:
    origin = loc_from_dict(d["origin"]) if "origin" in d else None
    if "value" in d:
        return Known(d["value"], origin, str(d.get("via", "")), str(d.get("ctype", "")))
    return Unknown(str(d.get("unknown", "")), origin, runtime=str(d.get("runtime", "")))


def context_to_json(c: CallContext) -> dict:
    return {"via": [s.to_dict() for s in c.via], "args": [value_to_json(a) for a in c.args]}


def context_from_json(d: dict) -> CallContext:
    via = tuple(CallStep(str(s["caller"]), str(s["callee"]), loc_from_dict(s)) for s in d["via"])
    return CallContext(via, tuple(value_from_json(a) for a in d["args"]))
