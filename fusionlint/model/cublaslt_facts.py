"""Typed facts extracted from a source file: cuBLASLt objects, attribute writes, configurations.

Each value keeps its source location. ``to_dict`` gives the JSON form that ``fusionlint
facts`` prints and that rules read.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from fusionlint.model.values import Address, Handle, Known, Loc, Symbol, Unknown, Value

OBJECT_KINDS = ("matmul_desc", "layout", "preference")


def value_dict(v: Value, name: str | None = None) -> dict:
    """JSON form of an abstract value; ``name`` is the enum constant for a known enum value."""
    if isinstance(v, Known):
        d: dict = {"value": v.value}
        if name:
            d["name"] = name
        if v.via:
            d["via"] = v.via
        if v.origin:
            d["origin"] = v.origin.to_dict()
        return d
    if isinstance(v, Unknown):
        d = {"unknown": v.reason}
        if v.runtime:
            d["runtime"] = v.runtime
        if v.origin:
            d["origin"] = v.origin.to_dict()
        return d
    if isinstance(v, Address):
        return {"address_of": v.name, "type": v.ctype}
    if isinstance(v, Handle):
        return {"object": v.obj}
    if isinstance(v, Symbol):
        d = {"symbol": v.name}
        if v.ctype:
            d["type"] = v.ctype
        return d
    return {"unknown": "unsupported value"}


@dataclass(frozen=True)
class AttrSet:
    """One ``cublasLt*SetAttribute`` call (or a wrapper that forwards to one)."""

    function: str  # the API function, e.g. cublasLtMatmulDescSetAttribute
    object_kind: str  # matmul_desc | layout | preference
    object_id: int | None  # None when the descriptor argument did not resolve
    attribute: str | None  # CUBLASLT_MATMUL_DESC_TRANSA, or None when unresolved
    attribute_value: Value
    value: Value  # what the buffer argument points to
    size: Value  # the sizeInBytes argument
    buffer: str  # spelling of the buffer argument, e.g. "&transa"
    buffer_type: str  # C type of the buffer's pointee, e.g. "int64_t"
    loc: Loc  # the API call itself
    site: Loc  # where the user wrote it (outermost call in the main file)
    conditional: bool = False
    value_name: str | None = None  # enum constant name of a known value
    buffer_size: int | None = None  # sizeof the buffer's pointee type (None: void or unknown)
    # where the user wrote each argument (the caret of a finding about it); None through a wrapper
    attribute_at: Loc | None = None
    buffer_at: Loc | None = None
    size_at: Loc | None = None
    arm_path: tuple[int, ...] = ()  # the undecided branches' arms it was run in (Interpreter.arm_path)
    # per arm of ``arm_path``: the run-time data its branch is decided on ("": not known to be any)
    arm_runtime: tuple[str, ...] = ()
    # per arm of ``arm_path``: the runtime choices its branch is decided by (Interpreter.cond_choices)
    arm_choices: tuple[tuple[str, ...], ...] = ()

    def _off_path(self, call_path: tuple[int, ...] | None) -> int | None:
        """The depth of the first undecided branch whose arm this set ran in and a GEMM reached on
        the arms ``call_path`` did not (None: the set lies on the GEMM's path)."""
        path = call_path or ()
        return next((i for i, arm in enumerate(self.arm_path) if i >= len(path) or path[i] != arm), None)

    def runtime_condition(self, call_path: tuple[int, ...] | None) -> str:
        """The run-time data that decides whether this set runs before a GEMM reached on the arms
        ``call_path``: that of the first branch whose arm it ran in and the GEMM's did not."""
        i = self._off_path(call_path)
        return self.arm_runtime[i] if i is not None and len(self.arm_runtime) == len(self.arm_path) else ""

    def condition_choices(self, call_path: tuple[int, ...] | None) -> tuple[str, ...]:
        """The runtime choices that decide whether this set runs before a GEMM reached on the arms
        ``call_path`` (those of the same branch as ``runtime_condition``): forcing them gives each
        alternative its own configuration (``alternatives.expand``)."""
        i = self._off_path(call_path)
        return self.arm_choices[i] if i is not None and len(self.arm_choices) == len(self.arm_path) else ()

    def to_dict(self) -> dict:
        d = {
            "function": self.function, "object": self.object_id, "attribute": self.attribute,
            "attribute_value": value_dict(self.attribute_value),
            "value": value_dict(self.value, self.value_name), "size": value_dict(self.size),
            "buffer": self.buffer, "buffer_type": self.buffer_type,
            "loc": self.loc.to_dict(), "site": self.site.to_dict(), "conditional": self.conditional,
        }
        if self.buffer_size is not None:
            d["buffer_size"] = self.buffer_size
        args_at = {k: v.to_dict() for k, v in (("attribute", self.attribute_at), ("buffer", self.buffer_at),
                                               ("size", self.size_at)) if v is not None}
        if args_at:
            d["args_at"] = args_at
        return d


@dataclass
class Field:
    """The effective value of one descriptor field at a point in the program."""

    value: Value
    source: str  # create | set | default
    loc: Loc | None
    name: str | None = None  # enum constant name
    conditional: bool = False
    buffer_type: str = ""  # C type the user's buffer had (e.g. "const float *" for a bias pointer)
    arg_at: Loc | None = None  # the argument that gave the value (create argument, set buffer), where written

    def to_dict(self) -> dict:
        d = value_dict(self.value, self.name)
        d["source"] = self.source
        if self.buffer_type:
            d["buffer_type"] = self.buffer_type
        if self.loc is not None:
            d["at"] = self.loc.to_dict()
        if self.arg_at is not None and self.arg_at != self.loc:
            d["arg_at"] = self.arg_at.to_dict()
        if self.conditional:
            d["conditional"] = True
        return d


@dataclass
class ApiObject:
    """A cuBLASLt object (matmul descriptor, matrix layout, preference) and its history."""

    id: int
    kind: str
    name: str  # the variable it lives in, as written
    created_at: Loc
    create_function: str
    create_args: dict[str, Value] = field(default_factory=dict)
    sets: list[AttrSet] = field(default_factory=list)
    conditional_create: bool = False
    escaped_to: list[str] = field(default_factory=list)  # functions it was passed to unseen
    destroyed_at: Loc | None = None
    used: bool = False  # reached a heuristic or matmul call
    create_args_at: dict[str, Loc] = field(default_factory=dict)  # where each create argument is written

    def snapshot(self) -> "ApiObject":
        return ApiObject(self.id, self.kind, self.name, self.created_at, self.create_function,
                         dict(self.create_args), list(self.sets), self.conditional_create,
                         list(self.escaped_to), self.destroyed_at, self.used, dict(self.create_args_at))

    def absence_blocker(self) -> str | None:
        """Why an attribute that no write names may still have been set (None: it was not).

        Absence is decided per attribute: when every write names a known attribute and the
        object neither escaped nor was created conditionally, an attribute none of them names was
        never set, whatever the values written are."""
        if self.conditional_create:
            return f"{self.name} is created under a condition (line {self.created_at.line})"
        for e in self.escaped_to:
            if e.startswith("("):
                return f"{self.name} may be written by {e.strip('()')}"
            return f"{self.name} is passed to {e}(), which fusionlint does not see"
        for s in self.sets:
            if s.attribute is None:
                why = s.attribute_value.reason if isinstance(s.attribute_value, Unknown) else "not an attribute"
                return f"the {s.function} call at line {s.site.line} names an attribute that is not known ({why})"
        return None

    @property
    def complete(self) -> bool:
        """Every write to this object was seen and resolved, values included (``fusionlint facts``
        shows it; rules about a missing attribute need less: ``absence_blocker``)."""
        if self.escaped_to or self.conditional_create:
            return False
        return all(s.attribute is not None and not isinstance(s.value, Unknown) and not s.conditional
                   for s in self.sets)


@dataclass(frozen=True)
class CallStep:
    """One call on the way from the function analysed to a GEMM: ``caller`` calls ``callee`` at
    ``at`` (a wrapper inlined at its call site, or a call site in another translation unit)."""

    caller: str
    callee: str
    at: Loc

    def to_dict(self) -> dict:
        return {"caller": self.caller, "callee": self.callee, **self.at.to_dict()}


@dataclass
class Configuration:
    """Everything that feeds one GEMM: a ``cublasLtMatmul`` call, a heuristic query, or a
    descriptor configured without either."""

    kind: str  # matmul | heuristic | descriptor
    path: str
    loc: Loc
    site: Loc
    function: str  # enclosing function of the call
    desc: ApiObject | None
    layouts: dict[str, ApiObject | None]  # A B C D
    preference: ApiObject | None = None
    heuristic_loc: Loc | None = None
    operands: dict[str, Value] = field(default_factory=dict)  # A B C D alpha beta workspace …
    conditional: bool = False
    effective: dict[str, dict[str, Field]] = field(default_factory=dict)  # filled by the extractor
    unknowns: list[str] = field(default_factory=list)
    parse_errors_nearby: list[str] = field(default_factory=list)
    via: list[CallStep] = field(default_factory=list)  # the calls that led here, outermost first
    unresolved: dict[str, str] = field(default_factory=dict)  # part -> what its argument was instead of an object
    # the runtime alternative this configuration is (see frontend/interp/alternatives.py): the conditions
    # it holds under (as text), its index among the ``alternatives`` its root function was run as
    when: tuple[str, ...] = ()
    when_arms: tuple[tuple[str, int, int], ...] = ()  # per condition of ``when``: (choice key, arm, arms)
    # the keys of ``when_arms`` decided by the instantiation of a template, not by an input of the program
    compile_time: frozenset[str] = frozenset()
    alternatives: int = 1
    alternative_runs: frozenset = frozenset()  # the runs that gave it: (root, index among ``alternatives``)
    root: str = ""  # USR of the function the interpreter started from (not printed)
    arm_path: tuple[int, ...] = ()  # the undecided branches' arms its call was run in (not printed)

    def to_dict(self) -> dict:
        def obj(o: ApiObject | None) -> dict | None:
            if o is None:
                return None
            return {"id": o.id, "variable": o.name, "created_at": o.created_at.to_dict(),
                    "create_function": o.create_function, "complete": o.complete,
                    "escaped_to": o.escaped_to, "sets": [s.to_dict() for s in o.sets]}

        return {
            "kind": self.kind, "path": self.path, "line": self.site.line, "column": self.site.column,
            "call": self.loc.to_dict(), "function": self.function, "conditional": self.conditional,
            "matmul_desc": obj(self.desc),
            "layouts": {k: obj(v) for k, v in self.layouts.items()},
            "preference": obj(self.preference),
            "heuristic": self.heuristic_loc.to_dict() if self.heuristic_loc else None,
            "operands": {k: value_dict(v) for k, v in self.operands.items()},
            "parameters": {part: {k: f.to_dict() for k, f in fields.items()}
                           for part, fields in self.effective.items()},
            "unknowns": self.unknowns,
            "parse_errors_nearby": self.parse_errors_nearby,
            **({"via": [v.to_dict() for v in self.via]} if self.via else {}),
            **({"when": list(self.when)} if self.when else {}),
        }


@dataclass
class FileFacts:
    """What the front end learned from one file."""

    path: str
    configurations: list[Configuration] = field(default_factory=list)
    attribute_sets: list[AttrSet] = field(default_factory=list)  # every set call, resolved or not
    objects: list[ApiObject] = field(default_factory=list)
    cutlass: list = field(default_factory=list)  # CutlassGemm (fusionlint.model.cutlass_facts)
    diagnostics: list = field(default_factory=list)  # parse diagnostics of the main file
    missing_headers: list[str] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)  # parts of the file that could not be read
    functions_not_read: list[str] = field(default_factory=list)  # definitions the parse lost (frontend/clang/recovery.py)
    header_mode: dict[str, str] = field(default_factory=dict)
