"""A finding: one rule violated at one place. Message text is final; formats only lay it out."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Related:
    path: str
    line: int
    column: int
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: str  # error | warning | info
    path: str
    line: int
    column: int
    message: str
    fix: str = ""
    related: tuple[Related, ...] = field(default=())

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.message)

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "severity": self.severity,
                "code": self.code, "name": self.name, "message": self.message, "fix": self.fix,
                "related": [r.__dict__ for r in self.related]}


@dataclass(frozen=True)
class Undecided:
    """A rule that could not be decided on one configuration: its condition is neither true nor
    false because facts it reads are unknown (``reasons`` says which, and why). Not a finding:
    counted in the summary and listed with ``-v``."""

    code: str
    name: str
    path: str
    line: int
    column: int
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "code": self.code, "name": self.name,
                "reasons": list(self.reasons)}

    @classmethod
    def from_dict(cls, d: dict) -> Undecided:
        return cls(str(d["code"]), str(d["name"]), str(d["path"]), int(d["line"]), int(d["column"]),
                   tuple(str(r) for r in d["reasons"]))


INTERNAL_ERROR = "FL000"  # a file that could not be checked (unreadable, libclang failure, our bug)
UNUSED_SUPPRESSION = "FL001"  # a `// fusionlint: ignore...` comment that matches no finding
ON_UNKNOWN_INPUTS = "FL002"  # a rule's finding only on paths that values fusionlint does not know choose
DEFAULT_OFF = frozenset({ON_UNKNOWN_INPUTS})  # reported only when selected by their full code
WARNING_CODES = frozenset({UNUSED_SUPPRESSION, ON_UNKNOWN_INPUTS})  # built-in codes that warn; the others are errors
CUTLASS_STATIC_ASSERT = "FL300"  # a CUTLASS static_assert that fails when libclang instantiates the GEMM
SUPPORT_TABLE = "FL127"  # a cuBLASLt configuration the measured support table says no GPU run accepted

def not_checked(path: object, reason: str, part: bool = False) -> Finding:
    """The one FL000 finding: a file (or, with ``part``, part of it) that could not be checked,
    with the reason in one line."""
    what = "part of the file not checked" if part else "file not checked"
    return Finding(INTERNAL_ERROR, BUILTIN_CODES[INTERNAL_ERROR][0], "error", str(path), 1, 1, f"{what}: {reason}")


# Codes that are not YAML rules: (name, description). Selection, SARIF and the docs know them.
BUILTIN_CODES: dict[str, tuple[str, str]] = {
    INTERNAL_ERROR: ("file-not-checked",
                     "The file could not be checked (unreadable, a libclang failure, or a fusionlint bug); "
                     "the other files are still checked."),
    CUTLASS_STATIC_ASSERT: ("cutlass-static-assert",
                            "With the CUTLASS headers on the include path (instantiated mode), libclang "
                            "instantiates each GEMM; a CUTLASS static_assert that fails is reported at the "
                            "user's line that instantiates it, with the assertion's own message. It is CUTLASS's "
                            "own check, so nvcc would stop at the same assertion. Reported only when no "
                            "fusionlint rule already explains an error in that GEMM."),
    SUPPORT_TABLE: ("cublaslt-unsupported-configuration",
                    "With a measured cuBLASLt support table (written by `fusionlint calibrate` on a GPU, or "
                    "bundled for your cuBLASLt version), each cuBLASLt configuration is checked against what "
                    "that GPU's cuBLASLt accepted when the whole type/mode space was swept: types, compute "
                    "and scale type, transposes, orders, batching, epilogue, bias/aux pointers and types, "
                    "scale pointers and modes, fast accumulation, pointer mode. A value fusionlint could not "
                    "resolve counts as any value: the finding needs every completion to be unsupported. It "
                    "names the call and status cuBLASLt gave and the nearest supported configurations. "
                    "Reported only when no other rule already explains an error in that GEMM; without a "
                    "table (`-v` says so) it checks nothing. A planar complex layout "
                    "(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET) is outside the swept space: not checked."),
    ON_UNKNOWN_INPUTS: ("finding-on-unknown-inputs",
                        "A rule's finding that holds only on some paths through the code, each chosen by a "
                        "value fusionlint does not know: a parameter of a function no call in the checked files "
                        "passes, run-time data, the inputs of a header checked on its own. Such a path may be "
                        "one no caller takes, so it is not an error: by default it is counted and listed with `-v` "
                        "among the checks that could not be decided; selected by its code (`--extend-select FL002`) it is a "
                        "warning naming the rule, the condition and the rule's message. A condition a template's "
                        "instantiation decides (`std::is_same<T, half>::value`) keeps the rule's error."),
    UNUSED_SUPPRESSION: ("unused-suppression",
                         "A `// fusionlint: ignore...` comment that suppresses no finding, an unknown code in "
                         "one, or an ignore-begin/ignore-end without its partner. Remove or fix the comment."),
}


_ON_INPUTS = re.compile(r"^(FL\d{3}) \(([\w-]+)\) (.*)$", re.S)


def on_unknown_inputs(f: Finding, said: str, header: bool) -> Finding:
    """The ``FL002`` warning for rule finding ``f`` that holds only when ``said`` (conditions on
    values fusionlint does not know)."""
    whose = ("values of the inputs of the header's functions, which come from the files including it "
             "(checked on its own, the header has no callers)") if header else \
        "values fusionlint does not know (inputs no call in the checked files passes, or run-time data)"
    return replace(f, code=ON_UNKNOWN_INPUTS, name=BUILTIN_CODES[ON_UNKNOWN_INPUTS][0], severity="warning",
                   message=f"{f.code} ({f.name}) only when {said}, {whose}: {f.message}")


def undecided_of(f: Finding) -> Undecided:
    """An ``FL002`` warning as the undecided check of its rule (FL002 not selected)."""
    m = _ON_INPUTS.match(f.message)
    if m is None:
        return Undecided(f.code, f.name, f.path, f.line, f.column, (f.message,))
    return Undecided(m.group(1), m.group(2), f.path, f.line, f.column, (m.group(3),))


def merge_undecided(undecided) -> list[Undecided]:
    """One entry per rule and place: the runtime alternatives of one GEMM (``alternatives.py``)
    leave the same check undecided for reasons worded apart (one names the run-time data a value is,
    another the same value without it); their reasons are merged, in order, a reason dropped where
    another says the same with its run-time data."""
    groups: dict[tuple, list[str]] = {}
    first: dict[tuple, Undecided] = {}
    for u in undecided:
        key = (u.code, u.path, u.line, u.column)
        first.setdefault(key, u)
        reasons = groups.setdefault(key, [])
        reasons += [r for r in u.reasons if r not in reasons]
    out = []
    for key, reasons in groups.items():
        kept = [r for r in reasons if not any(o != r and o.startswith(r + " (run-time data: ") for o in reasons)]
        u = first[key]
        out.append(Undecided(u.code, u.name, u.path, u.line, u.column, tuple(kept)))
    return out

