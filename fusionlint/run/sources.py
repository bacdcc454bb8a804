"""Which files to check: walk directories, keep C++/CUDA sources, skip the rest."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from fusionlint.frontend.clang.parse import SOURCE_SUFFIXES

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", "build", ".tox"}


class SourceError(Exception):
    """A path named on the command line that cannot be used."""


def is_source(path: Path) -> bool:
    return path.suffix.lower() in SOURCE_SUFFIXES


def _regular_file(path: Path) -> bool:
    """A regular file (through symlinks). In a directory walk, FIFOs, sockets, devices and
    links to them (``x.cpp -> /dev/zero``) and dangling links are passed over: reading them
    would block or never end."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def collect(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Source files under ``paths`` (sorted, deduplicated) and one-line errors for bad paths."""
    found: dict[str, Path] = {}
    errors: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            found.setdefault(str(p), p)
        elif p.is_dir():
            seen_dirs: set[tuple[int, int]] = set()
            for root, dirs, files in os.walk(p, followlinks=True):
                try:
                    st = os.stat(root)
                except OSError:  # gone or unreadable since it was listed
                    dirs[:] = []
                    continue
                if (st.st_dev, st.st_ino) in seen_dirs:  # a symlink loop
                    dirs[:] = []
                    continue
                seen_dirs.add((st.st_dev, st.st_ino))
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
                for name in sorted(files):
                    f = Path(root) / name
                    if is_source(f) and _regular_file(f):
                        found.setdefault(str(f), f)
        elif p.exists():
            errors.append(f"{raw}: not a regular file or directory")
        else:
            errors.append(f"{raw}: no such file or directory")
    return sorted(found.values(), key=str), errors
