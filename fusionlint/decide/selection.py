"""Which findings are reported: ``select``/``ignore``/``extend-select`` by code or code prefix,
longest prefix wins (flake8's DecisionEngine, ruff's semantics), plus ``per-file-ignores``.

Apart from the checks: rules always run; this only decides what is shown.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fusionlint.errors import InputError
from fusionlint.findings import DEFAULT_OFF
from fusionlint.paths import glob_matches

_CODE = re.compile(r"^FL\d{0,3}$")


class SelectionError(InputError, ValueError):
    """An unknown code or prefix; the message is one line."""


def check_codes(codes: Iterable[str], known: Iterable[str], where: str) -> tuple[str, ...]:
    """Upper-cased ``codes``; each must be a known code or a prefix of one (``FL1``, ``FL``)."""
    known = tuple(known)
    out = []
    for raw in codes:
        code = raw.strip().upper()
        if not _CODE.match(code) or not any(k.startswith(code) for k in known):
            raise SelectionError(f"{where}: unknown rule code or prefix '{raw}' (see 'fusionlint rule --all')")
        out.append(code)
    return tuple(out)


def _longest(code: str, prefixes: Iterable[str]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)


@dataclass(frozen=True)
class PerFileIgnore:
    pattern: str
    base: Path  # the pattern is relative to this directory (the config file's, or the cwd)
    codes: tuple[str, ...]

    def ignores(self, code: str, path: str) -> bool:
        return _longest(code, self.codes) >= 0 and glob_matches(self.pattern, path, self.base)


@dataclass(frozen=True)
class Selection:
    select: tuple[str, ...] = ("FL",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[PerFileIgnore, ...] = ()

    def enabled(self, code: str, path: str) -> bool:
        """Selected when the longest matching ``select`` prefix is longer than the longest
        matching ``ignore`` prefix (on a tie, ignore wins); a per-file ignore always wins. A code off
        by default (``DEFAULT_OFF``) is selected only by its full code."""
        s, i = _longest(code, self.select), _longest(code, self.ignore)
        if code in DEFAULT_OFF and code not in self.select:
            return False
        if s < 0 or s <= i:
            return False
        return not any(p.ignores(code, path) for p in self.per_file_ignores)


def parse_per_file_ignores(items: Iterable[str]) -> dict[str, list[str]]:
    """``PATTERN:CODE[,CODE...]`` items (several may share one argument, space-separated, as in
    flake8) -> ``{pattern: [codes]}``."""
    out: dict[str, list[str]] = {}
    for item in items:
        for part in item.split():
            pattern, sep, codes = part.rpartition(":")
            if not sep or not pattern or not codes:
                raise SelectionError(f"--per-file-ignores: expected PATTERN:CODE[,CODE...], got '{part}'")
            out.setdefault(pattern, []).extend(c for c in codes.split(",") if c)
    return out
