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


INTERNAL_ERROR = "FL000"  # a file that could not be checked (unreadable, libclang failure, our bug)
