"""Where a project starts, paths relative to it, and glob matching for exclude/per-file-ignores."""
from __future__ import annotations

from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def _root_of(start: str) -> str:
    for d in (Path(start), *Path(start).parents):
        if (d / ".git").exists():
            return str(d)
    return start


def project_root(start: Path | str | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: cwd) holding ``.git``, else ``start``."""
    return Path(_root_of(str(Path(start or Path.cwd()).resolve())))


def relative_posix(path: Path | str, root: Path) -> str | None:
    """``path`` relative to ``root`` with ``/`` separators, or None when it lies outside ``root``."""
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def glob_matches(pattern: str, path: Path | str, base: Path) -> bool:
    """Whether ``path`` matches ``pattern`` relative to ``base`` (ruff-like).

    ``*`` also crosses ``/``; a leading ``**/`` may match nothing; a pattern matches a file
    when it matches the file or one of its parent directories; a pattern without ``/`` also
    matches any single path component (``exclude = ["third_party"]``)."""
    rel = relative_posix(path, base) or Path(path).resolve().as_posix()
    parts = rel.split("/")
    candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    if "/" not in pattern.rstrip("/"):
        candidates += parts
    patterns = [pattern.rstrip("/")]
    if pattern.startswith("**/"):
        patterns.append(pattern[3:].rstrip("/"))
    return any(fnmatchcase(c, p) for c in candidates for p in patterns)
