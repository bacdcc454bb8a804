"""The values a fact view holds besides plain names and numbers: a field nobody set (ABSENT), a
pointer or handle known to exist only at run time (RUNTIME), and an unknown value (UNKNOWN)."""
from __future__ import annotations


class _Absent:
    """A field nobody set and that has no default."""

    def __repr__(self) -> str:
        return "absent"


class _Runtime:
    """A pointer, handle or object: present at run time, with no static value."""

    def __repr__(self) -> str:
        return "runtime value"


ABSENT = _Absent()
RUNTIME = _Runtime()
UNKNOWN = None
