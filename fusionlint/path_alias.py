"""A stand-in name for a file whose name is not UTF-8.

libclang's Python bindings pass file names as UTF-8, so a name holding other bytes (``caf\\xe9.cpp``
on a Latin-1 file system, decoded by Python with surrogate escapes) cannot be parsed under its own
name. Such a file is parsed under an alias in the same directory (its text handed to libclang as an
unsaved file, so neighbouring headers still resolve), and every path in the extracted facts is
renamed back before the rules see them.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import fields, is_dataclass, replace
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from typing import Any

VIRTUAL_DIR = "/__fusionlint_alias__"


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf8_alias(path: Path) -> Path | None:
    """A UTF-8 name to parse ``path`` under, or None when its own name will do."""
    if _encodes(str(path)):
        return None
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:16]
    suffix = path.suffix if _encodes(path.suffix) else ".cpp"
    name = f".fusionlint-alias-{digest}{suffix}"
    # next to the file when the directory's name is UTF-8 (its includes resolve as before)
    return path.with_name(name) if _encodes(str(path.parent)) else Path(VIRTUAL_DIR) / name


def renamed(obj: Any, old: str, new: str, _memo: dict[int, Any] | None = None) -> Any:
    """``obj`` with every string equal to ``old`` replaced by ``new``, through dataclasses (rebuilt
    with ``dataclasses.replace``, so frozen ones get fresh hashes), lists, tuples, sets and dicts.
    Shared objects stay shared; other objects are kept as they are."""
    memo = {} if _memo is None else _memo
    if isinstance(obj, str):
        return new if obj == old else obj
    key = id(obj)
    if key in memo:
        return memo[key]
    out: Any = obj
    if is_dataclass(obj) and not isinstance(obj, type):
        memo[key] = obj  # a cycle back to this object keeps the original
        changes = {}
        for f in fields(obj):
            if not f.init:
                continue
            value = getattr(obj, f.name)
            new_value = renamed(value, old, new, memo)
            if new_value is not value:
                changes[f.name] = new_value
        out = replace(obj, **changes) if changes else obj
    elif isinstance(obj, list):
        items = [renamed(x, old, new, memo) for x in obj]
        out = items if any(a is not b for a, b in zip(items, obj)) else obj
    elif isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        items = [renamed(x, old, new, memo) for x in obj]
        out = tuple(items) if any(a is not b for a, b in zip(items, obj)) else obj
    elif isinstance(obj, (set, frozenset)):
        items = [renamed(x, old, new, memo) for x in obj]
        out = type(obj)(items) if any(a is not b for a, b in zip(items, obj)) else obj
    elif isinstance(obj, dict):
        pairs = [(renamed(k, old, new, memo), renamed(v, old, new, memo)) for k, v in obj.items()]
        changed = any(k2 is not k or v2 is not v for (k2, v2), (k, v) in zip(pairs, obj.items()))
        out = dict(pairs) if changed else obj
    memo[key] = out
    return out
