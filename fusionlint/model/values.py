"""Abstract values of the static evaluator: known constants, unknowns with a reason,
addresses of storage, handles of cuBLASLt objects and opaque runtime symbols.

Every value remembers where it came from, so a finding can point at the line that set it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Loc:
    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column}


@dataclass(frozen=True)
class Known:
    """A value known at compile time. ``via`` says how it was obtained (enum, variable, sizeof…)."""

    value: int | float | str
    origin: Loc | None = None
    via: str = ""
    ctype: str = ""


@dataclass(frozen=True)
class Unknown:
    reason: str
    origin: Loc | None = None
    ctype: str = ""
    # the runtime choices (interpreter decision keys: a branch, a ternary, a switch) this value
    # differs by; forcing them one way or the other makes it known (see Interpreter.decisions)
    choices: tuple[str, ...] = ()
    # what run-time data the value comes from, as a phrase ("`input.size(0)`", "the condition
    # `bias != nullptr` at line 12, on `bias`"); "" when the reason is not known to be run-time data (a value
    # the linter could not follow, a compiler-only type, a limit of the analysis)
    runtime: str = ""

    def text(self) -> str:
        """The reason, with the run-time data it names (for messages)."""
        return f"{self.reason} (run-time data: {self.runtime})" if self.runtime else self.reason


# A storage location: ("local", frame, usr), ("global", usr), ("member", base, field),
# ("this", class usr) for an unbound ``this``; ("elem", base, index) for array elements.
Key = tuple


@dataclass(frozen=True)
class Address:
    """The address of a storage location (``&x``), with the pointee's C type."""

    key: Key
    name: str
    ctype: str = ""
    origin: Loc | None = None


@dataclass(frozen=True)
class Handle:
    """A cuBLASLt object created by the analysed code (descriptor, layout, preference)."""

    obj: int
    origin: Loc | None = None


@dataclass(frozen=True)
class Symbol:
    """A runtime value with a name but no static value: a device pointer, a handle, a stream."""

    name: str
    ctype: str = ""
    origin: Loc | None = None
    ident: int = 0  # distinguishes runtime values with the same name (two allocations)
    # not known to be run-time data: the caller's object (a parameter of a function analysed
    # without a caller that is no entry point of the project, or any without the project index),
    # or an object built here from no run-time data
    from_caller: bool = False
    # a pointer to memory the program allocated (cudaMalloc and its kin wrote it, a new-expression
    # made it): not null, whatever its value
    live: bool = field(default=False, compare=False)


Value = Union[Known, Unknown, Address, Handle, Symbol]


def is_known(v: Value) -> bool:
    return isinstance(v, Known)


def same(a: Value, b: Value) -> bool:
    """Two values that are interchangeable for analysis (origins ignored)."""
    if isinstance(a, Known) and isinstance(b, Known):
        return a.value == b.value
    if isinstance(a, Handle) and isinstance(b, Handle):
        return a.obj == b.obj
    if isinstance(a, Address) and isinstance(b, Address):
        return a.key == b.key
    if isinstance(a, Symbol) and isinstance(b, Symbol):
        return a.name == b.name and a.ident == b.ident
    return False


def runtime_of(v: Value | None) -> str:
    """The run-time data ``v`` is or comes from, as a phrase; "" when it is not known to be any:
    an unknown value's ``runtime``, or a runtime object (pointer, handle, tensor) by its name."""
    if isinstance(v, Unknown):
        return v.runtime
    if isinstance(v, Symbol):
        return "" if v.from_caller else f"`{v.name}`"
    return ""


_DERIVED = re.compile(r"^(?:the condition `[^`]*` at line \d+, on |`[^`]*`, from )")


def runtime_source(phrase: str) -> str:
    """Where a run-time data phrase starts: ``the condition `c` at line 9, on `n`, input of f()``
    and ```size(n)`, from `n`, ...`` are both about ``n``: the phrase with what was derived from it
    taken off (a value derived in steps names its source, not every step)."""
    while (m := _DERIVED.match(phrase)) and phrase[m.end():]:
        phrase = phrase[m.end():]
    return phrase


def first_runtime(values) -> str:
    """The run-time data the first of ``values`` that is some names ("" when none is)."""
    for v in values:
        if (why := runtime_of(v)):
            return why
    return ""


def describe(v: Value) -> str:
    if isinstance(v, Known):
        return repr(v.value)
    if isinstance(v, Unknown):
        return f"<unknown: {v.text()}>"
    if isinstance(v, Address):
        return f"&{v.name}"
    if isinstance(v, Handle):
        return f"<object {v.obj}>"
    return v.name
