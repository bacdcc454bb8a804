"""Target architectures: the spellings ``--arch`` (check, test-rules, verify) and a config's
``arch =`` accept, each turned into the one form the rules and the cache key use (``sm_90``,
``sm_90a``).

A rule lists the architectures it applies to (``arch: [sm_90]``; ``sm_90a`` counts as ``sm_90``);
a misspelt arch would silently turn every such rule off, so an unknown spelling is an error, and
a real architecture that no rule is written for (``sm_80``, ``sm_100a``) is a note.
"""
from __future__ import annotations

import re

from fusionlint.errors import InputError

# NVIDIA compute capabilities nvcc knows (sm_NN); "a" (arch-specific features) exists from 9.0 on.
KNOWN = (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121)
_SPELLING = re.compile(r"^(sm_|compute_)?(\d+)(a?)$")

ACCEPTED = ("sm_90 (Hopper: H100/H200, the default), sm_90a (Hopper with its arch-specific features, "
            "wgmma/setmaxnreg, which CUTLASS's sm_90 kernels are built for; the same rules), "
            "90 and 90a (the same as sm_90 and sm_90a), compute_90 and compute_90a (the virtual "
            "architecture nvcc compiles PTX for; checked as sm_90 and sm_90a); other compute capabilities "
            "in the same spellings (sm_80, sm_100a, ...) are accepted, but have no rules")


class ArchError(InputError):
    """An architecture fusionlint does not know."""


def normalize(text: str) -> str:
    """``sm_NN`` or ``sm_NNa`` for any accepted spelling; ``ArchError`` otherwise."""
    raw = text.strip().lower()
    m = _SPELLING.match(raw)
    if m is None or int(m.group(2)) not in KNOWN or not _suffix_ok(int(m.group(2)), m.group(3)):
        raise ArchError(f"unknown architecture '{text}'{_did_you_mean(raw)}; accepted: {ACCEPTED}")
    return f"sm_{int(m.group(2))}{m.group(3)}"


def _suffix_ok(num: int, suffix: str) -> bool:
    return suffix == "" or (suffix == "a" and num >= 90)


def _did_you_mean(raw: str) -> str:
    m = re.match(r"^(?:sm|compute|arch)?[-_ ]?(\d+)\.?(\d?)(a?)$", raw)
    if m is None:
        return ""
    num = int(m.group(1) + m.group(2)) if m.group(2) else int(m.group(1))
    if num in KNOWN and _suffix_ok(num, m.group(3)):
        return f" (did you mean 'sm_{num}{m.group(3)}'?)"
    return ""


def argument(text: str) -> str:
    """``type=`` of an ``--arch`` option: argparse turns the error into a usage error (exit 2)."""
    import argparse

    try:
        return normalize(text)
    except ArchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def has_rules(arch: str, rules) -> bool:
    """Whether any of ``rules`` is written for ``arch`` (rules for every architecture do not count)."""
    return any(r.arch and r.applies_to(arch) for r in rules)


def no_rules_note(arch: str, rules, where: str) -> str:
    """The note for an architecture that no rule is written for."""
    written_for = sorted({a for r in rules for a in r.arch})
    independent = sorted({*(r.id for r in rules if not r.arch), "FL000", "FL001", "FL300"})
    return (f"no rules for {arch} ({where}): the rules are written for {', '.join(written_for) or 'no architecture'}"
            f"; only the architecture-independent checks run ({', '.join(independent)})")
