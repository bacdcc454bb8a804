"""A finding: one rule violated at one place. Message text is final; formats only lay it out."""
from __future__ import annotations

from dataclasses import dataclass, field


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
    UNUSED_SUPPRESSION: ("unused-suppression",
                         "A `// fusionlint: ignore...` comment that suppresses no finding, an unknown code in "
                         "one, or an ignore-begin/ignore-end without its partner. Remove or fix the comment."),
}


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

