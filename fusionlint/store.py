"""The bottom of fusionlint's on-disk state: content hashes and keys, files written atomically
(temporary name, then ``os.replace``), JSON read back defensively, include-closure checks. It
imports nothing of fusionlint but the version, so every layer can use it: the result cache
(``cache``), the precompiled headers (``frontend.clang.parse``), the API model's JSON copy, the support
table's decompressed copy.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from functools import lru_cache
from pathlib import Path

from fusionlint import __version__

FORMAT = "v1"  # the layout version of the cache directory (<dir>/v1/...)
_TMP_PREFIX = ".tmp-"


def default_dir() -> Path:
    if os.environ.get("FUSIONLINT_CACHE_DIR"):
        return Path(os.environ["FUSIONLINT_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "fusionlint"


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def fusionlint_key() -> str:
    """fusionlint's version and a hash of its own files (code, API model, stand-in headers), so a
    changed checkout never reuses results of the old code."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".yaml", ".json", ".h") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            try:
                h.update(p.read_bytes())
            except OSError:
                pass
    return h.hexdigest()


@lru_cache(maxsize=1)
def libclang_key() -> str:
    """The identity of libclang's shared library (path, size, modification time; not loaded here)."""
    parts: list[object] = []
    try:
        import clang.cindex as ci

        name = ci.conf.get_filename()
        st = os.stat(name) if os.path.isabs(name) else None
        parts += [name, st.st_size if st else None, st.st_mtime_ns if st else None]
    except Exception:  # noqa: BLE001
        parts.append("?")
    return digest(*parts)


class FileHashes:
    """Content hashes of files, remembered while a file's stat is unchanged (one read per run)."""

    def __init__(self) -> None:
        self._memo: dict[tuple, str | None] = {}

    def __call__(self, path: str) -> str | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (path, st.st_mtime_ns, st.st_size, st.st_ino)
        if key not in self._memo:
            try:
                with open(path, "rb") as f:
                    self._memo[key] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                self._memo[key] = None
        return self._memo[key]


file_hash = FileHashes()


# -- atomic files ------------------------------------------------------------------------------
def write_atomic(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temporary file and a rename; False when it failed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary_file(path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return True
    except OSError:
        return False


def _temporary_file(directory: Path) -> tuple[int, str]:
    """A new file of this process in ``directory``, opened for writing (mode 0600, as
    ``tempfile.mkstemp`` makes it; that module is not imported for it: a small file's run
    writes one cache entry, and importing tempfile costs more than the write)."""
    for attempt in range(100):
        tmp = os.path.join(directory, f"{_TMP_PREFIX}{os.getpid()}-{time.monotonic_ns()}-{attempt}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{directory}: no free temporary file name")


def read_json(path: Path) -> dict | None:
    """A JSON object written by this module, or None (absent, unreadable, corrupt)."""
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        os.utime(path)  # least recently used goes first
    except OSError:
        pass
    return data


def _still_valid(deps: object, absent: object) -> bool:
    """Every recorded header still hashes the same and none of the missing ones appeared."""
    if not isinstance(deps, list) or not isinstance(absent, list):
        return False
    for item in deps:
        if not (isinstance(item, list) and len(item) == 2) or file_hash(str(item[0])) != item[1]:
            return False
    return not any(os.path.exists(str(p)) for p in absent)


def dependencies(paths: list[str], since: float) -> list[list[str]] | None:
    """[[path, hash]] of the headers a parse read, or None when one cannot be read or was modified
    after ``since`` (the parse may have seen another version: not cached)."""
    out = []
    for p in dict.fromkeys(paths):
        try:
            if os.stat(p).st_mtime > since - 1:
                return None
        except OSError:
            return None
        h = file_hash(p)
        if h is None:
            return None
        out.append([p, h])
    return out


def absent_candidates(missing: list[str], main: str, args: list[str], deps: list[str]) -> list[str]:
    """Where each header found nowhere could appear: the including directories and every include
    directory of the parse (a header created there later invalidates the entry)."""
    if not missing:
        return []
    from fusionlint.prefilter import DEFAULT_DIRS, search_dirs

    dirs = [os.path.dirname(os.path.abspath(main)), *search_dirs(args), *DEFAULT_DIRS,
            *sorted({os.path.dirname(d) for d in deps})]
    dirs = list(dict.fromkeys(dirs))
    return [os.path.join(d, m) for m in missing for d in dirs]


def cache_files(root: Path | str, *parts: str) -> Path:
    """A path inside the cache directory ``root``, under its layout version."""
    return Path(root) / FORMAT / Path(*parts)
