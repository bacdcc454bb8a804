"""The interpreter's activation records: a function's (or a lambda's) frame, and the value a
lambda expression evaluates to."""
from __future__ import annotations

from dataclasses import dataclass, field

import clang.cindex as ci

from fusionlint.model.values import Key, Symbol, Value


@dataclass
class Frame:
    """One activation: parameter bindings, ``this``, and the argument types for ``sizeof``."""

    id: int
    function: ci.Cursor
    bindings: dict[str, Value] = field(default_factory=dict)  # param usr -> value (or Address alias)
    aliases: dict[str, Key] = field(default_factory=dict)  # reference param usr -> caller's key
    arg_types: dict[str, ci.Type] = field(default_factory=dict)  # param usr -> caller's argument type
    this_key: Key | None = None
    returned: Value | None = None
    branch_returns: list[Value] = field(default_factory=list)  # values returned inside undecided branches
    # the runtime choices those branches are decided by, and the first run-time data one is decided on
    return_choices: list[str] = field(default_factory=list)
    return_runtime: str = ""
    done: bool = False
    dead: bool = False  # the path ended in a throw or a call that never returns (done too): merged out
    cond_base: int = 0  # branch depth at entry: a return at this depth ends the call
    returned_key: Key | None = None  # storage of a returned local object (for member copies)
    from_caller: dict[str, str] = field(default_factory=dict)  # param usr -> name, for params no caller gave
    # a lambda's frame: the frame the lambda was made in, whose locals and parameters it captures
    outer: "Frame | None" = None
    extent: tuple[str, int, int] | None = None  # a lambda's (file, start, end offsets): its own declarations
    # the loops whose body runs now, outermost first, with the branch depth their body runs at
    loops: list[tuple[ci.Cursor, int]] = field(default_factory=list)
    # the variables declared in it, by name (for a use the parser left untyped: no cursor of its declaration)
    locals_by_name: dict[str, Key] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Closure(Symbol):
    """A lambda expression's value: the expression and the frame it was made in (its captures are
    read there: by reference, as the frame stands when the lambda runs)."""

    lambda_expr: ci.Cursor | None = None
    frame: Frame | None = None
