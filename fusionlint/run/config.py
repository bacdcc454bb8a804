"""Project configuration: ``[tool.fusionlint]`` in ``pyproject.toml``, or the top level of
``fusionlint.toml`` / ``.fusionlint.toml``, found by walking up from each checked file; the
nearest file wins (a ``pyproject.toml`` without ``[tool.fusionlint]`` does not count).

Relative paths and globs in a file are relative to that file's directory. Errors are one
line, ``file: key: problem``.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fusionlint.errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from typing import Any

CONFIG_NAMES = (".fusionlint.toml", "fusionlint.toml", "pyproject.toml")
_STD = re.compile(r"^(c|gnu)\+\+(98|03|0x|11|1y|14|1z|17|2a|20|2b|23|2c|26)$")  # what clang accepts for -std
_DEFINE = re.compile(r"^[A-Za-z_]\w*(\([^)]*\))?(=.*)?$", re.S)


class ConfigError(InputError):
    """A configuration file that cannot be used; the message is ``file: key: problem``."""


@dataclass(frozen=True)
class FileConfig:
    path: Path
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    include_dirs: tuple[str, ...] = ()  # absolute
    defines: tuple[str, ...] = ()
    arch: str | None = None
    std: str | None = None
    rulesets: tuple[str, ...] = ()  # absolute
    exclude: tuple[str, ...] = ()
    support_table: str | None = None  # absolute: the measured cuBLASLt support table (FL127)
    device_bodies: bool | None = None  # instantiate CUTLASS's device bodies (None: not set here)

    @property
    def base(self) -> Path:
        return self.path.parent


def _strings(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: {key}: expected a list of strings, got {_kind(value)}")
    return tuple(value)


def _string(path: Path, key: str, value: Any, pattern: re.Pattern | None = None) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{path}: {key}: expected a string, got {_kind(value)}")
    if pattern is not None and not pattern.match(value):
        raise ConfigError(f"{path}: {key}: invalid value '{value}'")
    return value


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


def _per_file_ignores(path: Path, key: str, value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key}: expected a table of glob = [codes], got {_kind(value)}")
    return tuple((glob, _strings(path, f"{key}.{glob}", codes)) for glob, codes in value.items())


def _absolute(base: Path, items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str((base / p).resolve()) if not Path(p).is_absolute() else p for p in items)


def from_table(path: Path, table: dict[str, Any]) -> FileConfig:
    """Validate one ``[tool.fusionlint]`` table (or a fusionlint.toml's top level)."""
    base = path.parent
    fields: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("select", "ignore", "extend-select"):
            fields[key.replace("-", "_")] = _strings(path, key, value)
        elif key == "per-file-ignores":
            fields["per_file_ignores"] = _per_file_ignores(path, key, value)
        elif key in ("include-dirs", "rulesets"):
            fields[key.replace("-", "_")] = _absolute(base, _strings(path, key, value))
        elif key == "defines":
            defines = _strings(path, key, value)
            bad = next((d for d in defines if not _DEFINE.match(d)), None)
            if bad is not None:
                raise ConfigError(f"{path}: {key}: invalid macro definition '{bad}' (expected NAME or NAME=VALUE)")
            fields["defines"] = defines
        elif key == "exclude":
            fields["exclude"] = _strings(path, key, value)
        elif key == "arch":
            from fusionlint.arch import ArchError, normalize

            try:
                fields["arch"] = normalize(_string(path, key, value))
            except ArchError as exc:
                raise ConfigError(f"{path}: {key}: {exc}") from None
        elif key == "std":
            fields["std"] = _string(path, key, value, _STD)
        elif key == "support-table":
            text = _string(path, key, value)
            fields["support_table"] = "none" if text.lower() == "none" else _absolute(base, (text,))[0]
        elif key == "device-bodies":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: {key}: expected true or false, got {_kind(value)}")
            fields["device_bodies"] = value
        else:
            known = ("select, ignore, extend-select, per-file-ignores, include-dirs, defines, arch, std, rulesets, "
                     "exclude, support-table, device-bodies")
            raise ConfigError(f"{path}: {key}: unknown key (known: {known})")
    return FileConfig(path=path, **fields)


@lru_cache(maxsize=None)
def load_config(path: Path) -> FileConfig | None:
    """The configuration in ``path``; None for a pyproject.toml without ``[tool.fusionlint]``."""
    if sys.version_info >= (3, 11):  # imported here: a tree without config files never needs it
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: TOML syntax error: {str(exc).splitlines()[0]}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("fusionlint")
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: tool.fusionlint: expected a table, got {_kind(table)}")
        return from_table(path, table)
    return from_table(path, data)


@lru_cache(maxsize=None)
def config_for_dir(directory: Path) -> FileConfig | None:
    """The nearest configuration at or above ``directory`` (absolute), cached per directory."""
    for name in CONFIG_NAMES:
        candidate = directory / name
        if candidate.is_file():
            cfg = load_config(candidate)
            if cfg is not None:
                return cfg
    return None if directory.parent == directory else config_for_dir(directory.parent)


def config_for_file(path: Path) -> FileConfig | None:
    return config_for_dir(path.resolve().parent)
