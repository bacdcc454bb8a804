"""Source lines of checked files, for suppressions, ``--show-source`` and location hashes."""
from __future__ import annotations

import hashlib
import os
from functools import lru_cache


@lru_cache(maxsize=512)
def _read(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    with open(path, "rb") as f:
        return tuple(f.read().decode("utf-8", errors="replace").splitlines())


def lines_of(path: str) -> tuple[str, ...]:
    """The file's lines (cached while the file is unchanged); () when it cannot be read."""
    try:
        st = os.stat(path)
        return _read(path, st.st_mtime_ns, st.st_size)
    except OSError:
        return ()


def line_text(path: str, line: int) -> str:
    lines = lines_of(path)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def normalised(text: str) -> str:
    """Whitespace collapsed: what a location hash is taken of, so re-indenting changes nothing."""
    return " ".join(text.split())


def line_hash(path: str, line: int) -> str:
    """A short hash of the normalised text of one source line."""
    return hashlib.sha256(normalised(line_text(path, line)).encode("utf-8")).hexdigest()[:16]
