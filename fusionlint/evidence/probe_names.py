"""File names of probes: one per configuration, also where several share a source line (a call
checked per runtime alternative, the GEMMs a header's template makes at one line)."""
from __future__ import annotations


def unique_stem(stem: str, seen: dict[str, int]) -> str:
    """``stem`` the first time ``seen`` meets it, ``stem_alt<n>`` the n-th time."""
    n = seen[stem] = seen.get(stem, 0) + 1
    return stem if n == 1 else f"{stem}_alt{n}"
