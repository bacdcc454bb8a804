"""Which measured cuBLASLt support table ``check`` uses (rule FL127).

In order: ``--support-table FILE`` (or ``support-table`` in the configuration); else the table
whose cuBLASLt version matches the headers found on this machine (the CUDA toolkit, the
nvidia-cublas wheel, ``-I`` directories; fusionlint's stand-ins model cuBLASLt 13.1), among the
tables ``fusionlint calibrate`` wrote (``$XDG_DATA_HOME/fusionlint/support``, default
``~/.local/share/fusionlint/support``) and those bundled in ``rulesets/*/support/``; else the
nearest version, with a note saying so. No table at all: FL127 checks nothing (a note with
``-v``).

Only file names and headers are read here; a table is loaded by the worker that uses it.
"""
from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

STAND_IN_VERSION = 130100  # the API model (model/cublaslt_api.yaml) is cublasLt.h of nvidia-cublas 13.1
TABLE_GLOB = "cublaslt-*.json.gz"
_VER = re.compile(r"^\s*#\s*define\s+CUBLAS_VER_(MAJOR|MINOR|PATCH)\s+(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class Choice:
    path: str | None
    note: str = ""  # what to tell the user (fallback, none found); "" for an exact match


def user_table_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fusionlint" / "support"


def bundled_table_dirs() -> list[Path]:
    root = Path(__file__).resolve().parents[2] / "rulesets"
    if not root.is_dir():  # installed: the rulesets package
        try:
            from importlib import resources

            root = Path(str(resources.files("fusionlint.rulesets")))
        except (ImportError, ModuleNotFoundError):
            return []
    return sorted(p for p in root.glob("*/support") if p.is_dir())


def header_version(include_dirs: list[str] | tuple[str, ...] = (), use_system: bool = True) -> tuple[int, str]:
    """(cuBLAS version as major*10000 + minor*100 + patch, where it was read)."""
    dirs = [Path(d) for d in include_dirs]
    if use_system:
        from fusionlint.frontend.clang.toolchain import discover

        dirs += list(discover(True).cublas)
    for d in dirs:
        v = _read_version(d / "cublas_api.h")
        if v:
            return v, str(d / "cublas_api.h")
    return STAND_IN_VERSION, "fusionlint's stand-in headers (cuBLASLt 13.1)"


@cache
def _read_version(header: Path) -> int:
    try:
        text = header.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    parts = dict((k, int(v)) for k, v in _VER.findall(text))
    if "MAJOR" not in parts:
        return 0
    return parts["MAJOR"] * 10000 + parts.get("MINOR", 0) * 100 + parts.get("PATCH", 0)


@cache
def table_version(path: str) -> int:
    """The cuBLASLt version a table was measured with (read from the file, 0 when unreadable)."""
    try:
        data = json.loads(gzip.decompress(Path(path).read_bytes()))
        return int(data.get("cublaslt_version", 0))
    except (OSError, ValueError, EOFError, TypeError):
        return 0


def available_tables() -> list[str]:
    dirs = [user_table_dir(), *bundled_table_dirs()]
    return [str(p) for d in dirs if d.is_dir() for p in sorted(d.glob(TABLE_GLOB))]


def choose(explicit: str | None, version: int, where: str, tables: list[str] | None = None) -> Choice:
    from fusionlint.model.support_table import version_text

    if explicit and explicit.lower() == "none":
        return Choice(None, "--support-table none: FL127 checks nothing")
    if explicit:
        return Choice(explicit)
    tables = available_tables() if tables is None else tables
    known = [(table_version(t), t) for t in tables]
    known = [(v, t) for v, t in known if v > 0]
    if not known:
        return Choice(None, "no measured cuBLASLt support table (run `fusionlint calibrate` on a GPU machine, or "
                            "pass --support-table FILE): FL127 checks nothing")
    exact = [t for v, t in known if v // 100 == version // 100]
    if exact:
        return Choice(exact[0])
    v, t = min(known, key=lambda vt: (abs(vt[0] - version), -vt[0]))
    return Choice(t, f"no measured support table for cuBLASLt {version_text(version)} ({where}); FL127 uses the "
                     f"one measured with cuBLASLt {version_text(v)}: {t}")


def for_headers(explicit: str | None, include_dirs: list[str] | tuple[str, ...], use_system: bool) -> Choice:
    """``choose`` for a run whose cuBLASLt headers are searched in ``include_dirs`` (and the system's
    when ``use_system``): ``check`` per configuration, ``verify`` per file."""
    version, where = (0, "") if explicit else header_version(include_dirs, use_system)
    return choose(explicit, version, where)
