"""``compile_commands.json``: per-file include dirs, macros, standard and target arch.

Only an allow-list of flags is translated (``-I -isystem -iquote -idirafter -D -U -std -include``
and the nvcc/clang arch flags); everything else is dropped. So flags that load code
(``-fplugin=``, ``-fpass-plugin=``, ``-Xclang -load``, ``-Xclang -plugin``), response files
(``@file``, nvcc ``--options-file``) and the compiler itself never reach libclang: the
database is read as data and nothing named in it is executed.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from fusionlint.errors import InputError

DB_NAME = "compile_commands.json"

# Flags (gcc/clang/nvcc) whose value is the next argument when not attached; their values are
# skipped so that they are not mistaken for source files or flags.
_TAKES_VALUE = {
    "-o", "-MF", "-MT", "-MQ", "-x", "-Xclang", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-mllvm",
    "-Xptxas", "-Xnvlink", "-Xcudafe", "-Xarchive", "-Xfatbin", "-ccbin", "--compiler-bindir",
    "--linker-options", "--ptxas-options", "--archive-options", "-code", "--gpu-code", "-maxrregcount",
    "--maxrregcount", "-t", "--threads", "--default-stream", "-rdc", "--relocatable-device-code",
    "--options-file", "-optf", "--diag-suppress", "--diag-error", "--diag-warn", "-target", "--target",
    "-L", "-l", "-isysroot", "--sysroot", "-include-pch", "-imacros", "-iprefix", "-iwithprefix",
    "-odir", "--output-directory", "--dependency-output", "-MJ", "-arch", "--gpu-architecture",
    "-gencode", "--generate-code", "-Xcompiler", "--compiler-options", "-std", "--std",
    "-I", "--include-path", "-isystem", "--system-include", "-iquote", "-idirafter", "-D", "--define-macro",
    "-U", "--undefine-macro", "-include", "--pre-include",
}
_INCLUDE_FLAGS = {"-I": "-I", "--include-path": "-I", "-isystem": "-isystem", "--system-include": "-isystem",
                  "-iquote": "-iquote", "-idirafter": "-idirafter", "-include": "-include",
                  "--pre-include": "-include"}
_ARCH_FLAGS = {"-arch", "--gpu-architecture", "-gencode", "--generate-code", "--cuda-gpu-arch", "--offload-arch",
               "-code", "--gpu-code"}
_ATTACHED = ("-isystem", "-iquote", "-idirafter", "-I", "-D", "-U")  # -IDIR, -DNAME=VALUE
_SM = re.compile(r"(?:sm|compute)_(\d+)([a-z]?)")
# -std values passed on to libclang; anything else (a typo, a C standard, text with spaces) is dropped
_STD = re.compile(r"(?:c|gnu)\+\+(?:98|03|0x|11|1y|14|1z|17|2a|20|2b|23|2c|26)")


def _loads_code(flag: str, value: str | None) -> str | None:
    """Why a (flag, value) pair is worth reporting when dropped: it would load or run code, or
    read flags from a file (None: an ordinary flag fusionlint has no use for)."""
    if flag.startswith(("-fplugin", "-fpass-plugin")):
        return "loads a compiler plugin"
    if flag == "-Xclang" and value is not None and value.startswith(("-load", "-plugin", "-add-plugin")):
        return "loads a compiler plugin"
    if flag == "-mllvm" and value is not None and value.startswith("-load"):
        return "loads an LLVM plugin"
    if flag.startswith("@") or flag in ("--options-file", "-optf"):
        return "response files are not read"
    if flag in ("-ccbin", "--compiler-bindir") or flag.startswith("-B"):
        return "names a compiler or tool; nothing is executed"
    return None


class CompileDbError(InputError):
    """A database that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class CompileFlags:
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    std: str | None = None
    extra_args: tuple[str, ...] = ()
    arch: str | None = None
    arch_from: str = field(default="", compare=False)  # where the arch was written ("<db>: entry 3: -arch=sm_90a")
    # flags that were dropped and are worth reporting (plugins, response files, bad -std...)
    dropped: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class CompileDb:
    path: Path
    entries: dict[str, CompileFlags] = field(default_factory=dict)  # resolved source path -> flags
    notes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # one line per dropped flag worth reporting (--verbose)

    def lookup(self, source: Path) -> CompileFlags | None:
        return self.entries.get(str(source.resolve()))


def _split(args: list[str]) -> list[tuple[str, str | None, str]]:
    """(flag, value, as written) triples; value is the attached or following argument for flags
    that take one."""
    out: list[tuple[str, str | None, str]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _TAKES_VALUE:
            value = args[i + 1] if i + 1 < len(args) else None
            out.append((a, value, a if value is None else f"{a} {value}"))
            i += 2
            continue
        attached = next((f for f in _ATTACHED if a.startswith(f) and len(a) > len(f)), None)
        name, eq, value = a.partition("=")
        if attached:
            out.append((attached, a[len(attached):], a))
        elif eq and name.startswith("-"):
            out.append((name, value, a))
        else:
            out.append((a, None, a))
        i += 1
    return out


def _archs(value: str) -> list[tuple[int, str]]:
    return [(int(num), suffix) for num, suffix in _SM.findall(value)]


def translate(args: list[str], directory: Path) -> CompileFlags:
    """Translate one compile command's arguments (without argv[0]) into parse options."""
    includes: list[str] = []
    extra: list[str] = []
    defines: list[str] = []
    std: str | None = None
    archs: list[tuple[int, str, str]] = []  # (number, suffix, the flag as written)
    dropped: list[str] = []

    def absolute(p: str) -> str:
        return str(directory / p) if not Path(p).is_absolute() else p

    def drop(written: str, why: str) -> None:
        dropped.append(f"dropped {written}: {why}")

    def walk(items: list[str]) -> None:
        nonlocal std
        for flag, value, written in _split(items):
            why = _loads_code(flag, value)
            if why:
                drop(written, why)
                continue
            if value is None or "\0" in value:
                continue  # a flag without value or a source file: dropped
            if flag in ("-Xcompiler", "--compiler-options"):
                walk(value.split(","))  # host-compiler flags, through the same allow-list
            elif flag in _INCLUDE_FLAGS:
                if _INCLUDE_FLAGS[flag] == "-I":
                    includes.append(absolute(value))
                elif flag in ("-include", "--pre-include") and not _regular_file(absolute(value)):
                    drop(written, "not a regular file")  # never read a FIFO or /dev/zero as a header
                else:
                    extra.extend([_INCLUDE_FLAGS[flag], absolute(value)])
            elif flag in ("-D", "--define-macro"):
                defines.append(value)
            elif flag in ("-U", "--undefine-macro"):
                extra.append(f"-U{value}")
            elif flag in ("-std", "--std"):
                if _STD.fullmatch(value):
                    std = value
                else:
                    drop(written, "not a C++ standard libclang knows")
            elif flag in _ARCH_FLAGS:
                archs.extend((num, suffix, written) for num, suffix in _archs(value))

    walk(args)
    arch, arch_from = None, ""
    if archs:
        num, suffix, arch_from = max(archs)
        arch = f"sm_{num}{suffix}"
    return CompileFlags(tuple(includes), tuple(defines), std, tuple(extra), arch, arch_from, tuple(dropped))


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _arguments(entry: dict, where: str) -> list[str]:
    if isinstance(entry.get("arguments"), list) and all(isinstance(a, str) for a in entry["arguments"]):
        return entry["arguments"]
    if isinstance(entry.get("command"), str):
        try:
            return shlex.split(entry["command"])
        except ValueError as exc:
            raise CompileDbError(f"{where}: command: {exc}") from None
    raise CompileDbError(f"{where}: needs 'arguments' (a list of strings) or 'command' (a string)")


@lru_cache(maxsize=None)
def load(path: Path) -> CompileDb:
    """Read a database (``path`` is the file or a directory holding it)."""
    path = path / DB_NAME if path.is_dir() else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompileDbError(f"{path}: cannot read compilation database: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CompileDbError(f"{path}: malformed compilation database: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise CompileDbError(f"{path}: malformed compilation database: nested too deeply") from None
    if not isinstance(data, list):
        raise CompileDbError(f"{path}: malformed compilation database: expected a JSON array of entries")
    db = CompileDb(path)
    for i, entry in enumerate(data):
        where = f"{path}: entry {i + 1}"
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
                or not isinstance(entry.get("directory"), str):
            raise CompileDbError(f"{where}: malformed compilation database: needs 'directory' and 'file' strings")
        for key in ("directory", "file"):
            if "\0" in entry[key]:
                raise CompileDbError(f"{where}: malformed compilation database: '{key}' holds a NUL character")
        directory = path.parent / entry["directory"]  # relative: to the database's directory
        try:
            source = (directory / entry["file"]).resolve()
        except (OSError, RuntimeError) as exc:  # e.g. a symlink loop
            db.notes.append(f"{where}: {entry['file']}: {exc}; entry skipped")
            continue
        args = _arguments(entry, where)
        if not source.is_file():
            db.notes.append(f"{where}: {entry['file']}: no such file; entry skipped")
            continue
        flags = translate(args[1:], directory)
        if flags.arch:
            flags = dataclasses.replace(flags, arch_from=f"{where}: {flags.arch_from}")
        db.dropped += [f"{where}: {d}" for d in flags.dropped]
        db.entries.setdefault(str(source), flags)
    return db


@lru_cache(maxsize=None)
def discover(directory: Path) -> Path | None:
    """The nearest ``compile_commands.json`` at or above ``directory``, also in a ``build/``
    subdirectory (as clangd looks), cached per directory."""
    for candidate in (directory / DB_NAME, directory / "build" / DB_NAME):
        if candidate.is_file():
            return candidate
    return None if directory.parent == directory else discover(directory.parent)
