"""Translation-unit creation: flags, the CUDA prelude, stand-in headers, diagnostics.

A source is parsed host-side, as C++17 (or CUDA for .cu/.cuh), with every real header
directory found on the machine first and fusionlint's stand-in headers last
(``-idirafter``), so a real ``cublasLt.h`` always wins over the stand-in. A header that is
found nowhere is replaced by an empty one and the file parsed again, so that one missing
include does not hide the rest of the file (clang stops reporting after a fatal error).

Precompiled preambles (``ParseOptions.pch_dir``): the leading ``#include`` lines of a file
(its *preamble*; only blank lines, comments and ``#pragma once`` may sit between them) are
compiled once into a PCH, as a header in the file's own directory with the same arguments;
the file is then parsed with ``-include-pch`` and those lines blanked (line and column
numbers unchanged). The PCH is keyed by the preamble text, the directory, the arguments and
the versions, and used only while every header it read hashes the same. It is built the
second time a preamble is seen (by another file, or by a later run after the file changed),
so a one-off parse never pays for it, and only for preambles that pull in many headers. Any
doubt — errors on the preamble lines, a PCH libclang does not accept — means a normal parse.
A file that cannot call cuBLASLt (the name is written neither in it, its arguments nor any header
it reads) gets a PCH compiled without the headers' function bodies (``SkipFunctionBodies``; clang
keeps the bodies of constexpr functions and of those with a deduced return type, where CuTe and the
CUTLASS builders compute and assert), which makes a CUTLASS kernel's parse with it 1.6-1.9 times
as fast; the file's own bodies are always parsed, and the cuBLASLt interpreter, which follows
calls into headers, always gets every body.
"""
from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import clang.cindex as ci

from fusionlint.defaults import DEFAULT_STD, HEADER_SUFFIXES, NO_DEVICE_BODIES_MACRO  # noqa: F401 - HEADER_SUFFIXES also from here
from fusionlint.frontend.clang import explicit_instantiations, recovery, toolchain
from fusionlint.notes import toolkit_header

VIRTUAL_ROOT = "/__fusionlint__"
STUB_DIR = f"{VIRTUAL_ROOT}/include"
MISSING_DIR = f"{VIRTUAL_ROOT}/missing"
PRELUDE = f"{VIRTUAL_ROOT}/fusionlint_cuda_prelude.h"

CUDA_SUFFIXES = {".cu", ".cuh"}
SOURCE_SUFFIXES = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c++", ".h", ".hpp", ".hh", ".hxx"}
_NOT_FOUND = re.compile(r"^'(?P<name>[^']+)' file not found")
_MAX_MISSING_ROUNDS = 4


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" | "warning" | "fatal" | "note"
    path: str
    line: int
    column: int
    message: str


@dataclass
class ParseOptions:
    include_dirs: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    extra_args: list[str] = field(default_factory=list)
    std: str = DEFAULT_STD
    use_system_headers: bool = True
    pch_dir: str | None = None  # where precompiled preambles live; None: no PCH


@dataclass(frozen=True)
class UnitRecord:
    """What the result cache keeps of a parse (``ParsedUnit.record``): the file libclang parsed,
    the real files it read (include closure), the headers found nowhere, its arguments, and the
    precompiled preamble it used (None, "used", "prelude")."""

    path: str
    includes: tuple[str, ...]
    missing: tuple[str, ...]
    args: tuple[str, ...]
    pch: str | None = None


@dataclass
class ParsedUnit:
    path: Path
    tu: ci.TranslationUnit
    args: list[str]
    diagnostics: list[Diagnostic]
    missing_headers: list[str]
    header_mode: dict[str, str]
    includes: list[str] = field(default_factory=list)  # the real files the parse read (include closure)
    pch: str | None = None  # "used" when parsed with a precompiled preamble
    stand_ins: Mapping[str, str] | None = None  # the stand-in headers it was parsed with (None: stand_in_headers())
    recovered: list[str] | None = None  # what the partial-parse recovery declared (frontend/clang/recovery.py); None: not used
    options: ParseOptions | None = None  # what parse_file parsed it with (None: parsed another way)

    def record(self) -> UnitRecord:
        return UnitRecord(str(self.path), tuple(self.includes), tuple(self.missing_headers), tuple(self.args),
                          self.pch)

    def main_file_errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity in ("error", "fatal") and d.path == str(self.path)]

    def errors_between(self, first_line: int, last_line: int) -> list[Diagnostic]:
        return [d for d in self.main_file_errors() if first_line <= d.line <= last_line]


_SEVERITY = {ci.Diagnostic.Ignored: "ignored", ci.Diagnostic.Note: "note", ci.Diagnostic.Warning: "warning",
             ci.Diagnostic.Error: "error", ci.Diagnostic.Fatal: "fatal"}


_PACKAGE_INCLUDE = Path(__file__).resolve().parent / "include"  # fusionlint's own headers (package data)


def is_virtual(path: str | None) -> bool:
    return bool(path) and str(path).startswith(VIRTUAL_ROOT)


def _package_headers(subdir: str) -> dict[str, str]:
    base = _PACKAGE_INCLUDE / subdir
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(base.iterdir()) if p.name.endswith(".h")}


@lru_cache(maxsize=1)
def stand_in_headers() -> dict[str, str]:
    """Header name -> text of every stand-in header fusionlint can supply, made from the package's
    headers and the API model (once per process). ``check`` gives the parse the copy its cache keeps
    instead (``frontend.cublaslt.api_data.ApiData``, through ``parse_file``'s ``stand_ins``)."""
    from fusionlint.frontend.clang.cublas_stubs import stub_headers

    headers: dict[str, str] = {}
    headers.update(_package_headers("resource"))
    headers.update(_package_headers("cuda"))
    headers.update(stub_headers())
    return headers


@lru_cache(maxsize=1)
def _prelude_text() -> str:
    return (_PACKAGE_INCLUDE / "fusionlint_cuda_prelude.h").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _index() -> ci.Index:
    return ci.Index.create()


def language_args(path: Path) -> list[str]:
    if path.suffix.lower() in CUDA_SUFFIXES:
        return ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-Wno-unknown-cuda-version",
                "-include", PRELUDE]
    return ["-x", "c++"]


def build_args(path: Path, options: ParseOptions) -> tuple[list[str], dict[str, str]]:
    """Compiler arguments for ``path`` and a description of where headers come from."""
    dirs = toolchain.discover(options.use_system_headers)
    # -frelaxed-template-template-args: C++17's P0522 matching of template template arguments, which
    # nvcc's host compilers (GCC) and clang 19 apply by default and libclang 18 does not (vLLM's
    # epilogues pass `cutlass::multiply_add`, a template with a defaulted parameter, to Sm90Compute)
    args = [*language_args(path), f"-std={options.std}", "-ferror-limit=0", "-fsyntax-only",
            "-Wno-pragma-once-outside-header", "-frelaxed-template-template-args"]
    for inc in options.include_dirs:
        args += ["-I", inc]
    for real in dirs.all():
        args += ["-isystem", str(real)]
    for d in options.defines:
        args.append(f"-D{d}")
    args += options.extra_args
    args += ["-idirafter", STUB_DIR, "-idirafter", MISSING_DIR]
    mode = {
        "cublas": str(dirs.cublas[0]) if dirs.cublas else "fusionlint stand-in (API model)",
        "cuda": str(dirs.cuda[0]) if dirs.cuda else "fusionlint stand-in",
        "cutlass": str(dirs.cutlass[0]) if dirs.cutlass else "not found",
    }
    return args, mode


def _diagnostics(tu: ci.TranslationUnit) -> list[Diagnostic]:
    out = []
    for d in tu.diagnostics:
        loc = d.location
        out.append(Diagnostic(_SEVERITY.get(d.severity, "note"), loc.file.name if loc.file else "",
                              loc.line, loc.column, d.spelling))
    return out


def _virtual_files(stand_ins: Mapping[str, str] | None = None) -> dict[str, str]:
    """The files fusionlint supplies to every parse, by their virtual path: the stand-in headers
    (``stand_in_headers()`` unless given) and the CUDA prelude."""
    files = {f"{STUB_DIR}/{name}": body for name, body in (stand_in_headers() if stand_ins is None
                                                           else stand_ins).items()}
    files[PRELUDE] = _prelude_text()
    return files


def _unsaved_base(stand_ins: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    return list(_virtual_files(stand_ins).items())


def _missing_stand_ins(missing: list[str], beside: str | None = None,
                       first_text: str | None = None) -> list[tuple[str, str]]:
    """Empty stand-ins for headers found nowhere (``first_text``: the first one's text instead, the
    recovery's declarations). A header included by a relative path (``"../../3rdparty/x.h"``) is
    looked up next to the file that includes it, not in the include directories: its stand-in is
    put there too, ``beside`` being the main file's directory (virtual: nothing is written)."""
    out = []
    for i, name in enumerate(missing):
        toolkit = toolkit_header(name)
        body = f"#include <{toolkit}>  /* fusionlint: '{name}' was not found; the toolkit's header instead */\n" \
            if toolkit else f"/* fusionlint: '{name}' was not found; empty stand-in */\n"
        if i == 0 and first_text is not None:
            body = (body if toolkit else "") + first_text
        out.append((f"{MISSING_DIR}/{name}", body))
        if beside and name.startswith(("./", "../")):
            # (at the path as clang forms it, the dots kept: relative or absolute as the main file's;
            # never where a file is: one a header includes by the same relative path from its own
            # directory, which clang did not find there, would be that real file blanked)
            for where in dict.fromkeys((os.path.join(beside, name), os.path.join(os.path.abspath(beside), name))):
                if not os.path.exists(where):
                    out.append((where, body))
    return out


def _parse_rounds(path: str, args: list[str], unsaved: list[tuple[str, str]], rounds: int = _MAX_MISSING_ROUNDS,
                  options: int = 0) -> tuple[ci.TranslationUnit, list[Diagnostic], list[str]]:
    """Parse, replacing headers found nowhere with empty ones and parsing again (a few rounds).

    A missing header is a fatal error, so each round finds one: the result is the first
    ``rounds`` missing headers, and a parse that stops at the next one when there are more."""
    missing: list[str] = []
    for _ in range(rounds):
        tu = _index().parse(path, args=args, unsaved_files=unsaved + _missing_stand_ins(missing, os.path.dirname(path)),
                            options=options)
        diags = _diagnostics(tu)
        new = [m.group("name") for d in diags if (m := _NOT_FOUND.match(d.message))]
        new = [n for n in dict.fromkeys(new) if n not in missing and not n.startswith("/")]
        if not new:
            break
        missing += new
    return tu, diags, missing


def _real_includes(tu: ci.TranslationUnit) -> list[str]:
    """The files on disk the parse read (not fusionlint's virtual headers, nor the stand-in of a
    header missing by a relative path, put beside the file that includes it: on no disk, it would
    keep the parse's results out of every cache)."""
    out = []
    for inc in tu.get_includes():
        name = inc.include.name if inc.include is not None else ""
        if name and not is_virtual(name) and os.path.exists(name):
            out.append(name)
    return list(dict.fromkeys(out))


def parse_file(path: Path | str, options: ParseOptions | None = None, text: str | None = None,
               stand_ins: Mapping[str, str] | None = None, overrides: Mapping[str, str] | None = None) -> ParsedUnit:
    """Parse one source file, with the stand-in headers ``stand_ins`` (default: ``stand_in_headers()``).
    ``overrides``: other files' contents to parse instead of what is on disk (path -> text; no
    precompiled preamble is used then). Raises ``clang.cindex.TranslationUnitLoadError`` on a libclang
    failure."""
    path = Path(path)
    options = options or ParseOptions()
    if overrides:
        options = replace(options, pch_dir=None)
    args, mode = build_args(path, options)
    synthetic: list[tuple[int, int]] = []
    if text is not None:  # explicit instantiations of function templates, as functions (see the module)
        text, synthetic = explicit_instantiations.synthesize(text)
    if stand_ins is None:
        stand_ins = stand_in_headers()
    unsaved = _unsaved_base(stand_ins) + list((overrides or {}).items())
    unit = None
    if options.pch_dir and text is not None:
        try:
            unit = _parse_with_pch(path, args, mode, unsaved, text, Path(options.pch_dir))
        except ci.TranslationUnitLoadError:
            unit = None
    if unit is None:
        if text is not None:
            unsaved.append((str(path), text))
        tu, diags, missing = _parse_rounds(str(path), args, unsaved)
        unit = ParsedUnit(path=path, tu=tu, args=args, diagnostics=diags, missing_headers=missing,
                          header_mode=mode, includes=_real_includes(tu))
    unit.stand_ins = stand_ins
    if synthetic:
        unit.diagnostics = _without_synthetic(unit.diagnostics, str(path), synthetic)
    if text is not None and unit.missing_headers:  # headers found nowhere: declare what they would have (recovery.py)
        if recovery.wants_recovery(unit):
            unit = _recover(unit, _unsaved_base(stand_ins) + list((overrides or {}).items()) + [(str(path), text)],
                            text)
    if options.pch_dir and text is not None and unit.pch != "used":
        _note_preamble(path, args, text, Path(options.pch_dir), unit)
    if synthetic and unit.recovered is not None:
        unit.diagnostics = _without_synthetic(unit.diagnostics, str(path), synthetic)
    unit.options = options
    return unit


def _without_synthetic(diags: list[Diagnostic], path: str, spans: list[tuple[int, int]]) -> list[Diagnostic]:
    """The diagnostics that are not inside the text ``explicit_instantiations`` added."""
    starts = dict(spans)
    return [d for d in diags if not (d.path == path and d.line in starts and d.column >= starts[d.line])]


_MENTIONS: dict[tuple[str, bytes], tuple[tuple[int, int, int], bool]] = {}  # (file, word) -> (stat, found)


def closure_mentions(unit: ParsedUnit, word: str) -> bool:
    """``_tu_mentions`` of the unit's translation unit."""
    return _tu_mentions(unit.tu, word, _virtual_files(unit.stand_ins))


def _tu_mentions(tu: ci.TranslationUnit, word: str, virtual: Mapping[str, str], ignore: tuple[str, ...] = ()) -> bool:
    """Whether ``word`` appears in the text of any file the parse read: the headers on disk, the
    stand-in headers fusionlint supplied, the CUDA prelude. A file that cannot be read counts as
    mentioning it. Answers for headers on disk are remembered while their size and modification
    time stay (the same headers come back for every file of a project). ``virtual``: the files
    fusionlint supplied, by virtual path (``_virtual_files``)."""
    needle = word.encode("utf-8")
    for inc in tu.get_includes():
        name = inc.include.name if inc.include is not None else ""
        if not name or name in ignore:
            continue
        if is_virtual(name):
            if name.startswith(MISSING_DIR + "/"):
                continue  # an empty stand-in for a header found nowhere
            text = virtual.get(name)
            if text is None or word in text:
                return True
            continue
        try:
            st = os.stat(name)
        except OSError:
            return True
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        known = _MENTIONS.get((name, needle))
        if known is not None and known[0] == stamp:
            if known[1]:
                return True
            continue
        try:
            with open(name, "rb") as f:
                found = needle in f.read()
        except OSError:
            return True
        _MENTIONS[name, needle] = (stamp, found)
        if found:
            return True
    return False


# ----------------------------------------------------------------------------------------------
# Precompiled preambles

PREAMBLE_NAME = "__fusionlint_preamble__.h"
PCH_MIN_INCLUDES = 20  # a preamble that reads fewer headers parses faster than a PCH loads and pays off
_PCH_LOCK_AGE = 600.0
_PRE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:<[^>\n]*>|"[^"\n]*")[ \t]*(?://.*)?$')
_PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once[ \t]*(?://.*)?$")
_PCH_TROUBLE = re.compile(r"precompiled header|PCH file|AST file|module file", re.I)
# The PCH holds only the include block, so skipping function bodies skips the headers' bodies alone
# (clang keeps those of constexpr functions and of functions with a deduced return type, which
# CuTe's type computations need); the file's own bodies are parsed in full with the PCH.
_PCH_PARSE_OPTIONS = ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES
_API_WORD = "cublasLt"  # frontend.cublaslt.handler.API_PREFIX: the interpreter runs only where this is written


_CUTLASS_INCLUDE = re.compile(r'#[ \t]*include[ \t]*[<"](?:cutlass|cute)/')
_DEVICE_MARKER = "fusionlint_device_bodies"  # the prelude's namespace when it turns the device bodies on


def _may_skip_bodies(text: str, args: list[str]) -> bool:
    """Whether the PCH of the file's include block may skip the headers' function bodies: not when the
    file may call cuBLASLt (the interpreter reads the bodies; its headers are checked later), nor
    when it is a CUDA file that includes CUTLASS, whose kernels and collectives the prelude then
    instantiates down to their device bodies (their static_asserts are inside function bodies;
    an include block that reaches CUTLASS through the user's own headers is caught in _build_pch)."""
    if _API_WORD in text or any(_API_WORD in a for a in args):
        return False
    return not (PRELUDE in args and _CUTLASS_INCLUDE.search(text)
                and not any(NO_DEVICE_BODIES_MACRO in a for a in args))


def has_device_bodies(tu: ci.TranslationUnit) -> bool:
    """Whether the prelude turned on the device bodies in ``tu`` (its marker namespace is there)."""
    return any(c.kind == ci.CursorKind.NAMESPACE and c.spelling == _DEVICE_MARKER for c in tu.cursor.get_children())


@dataclass(frozen=True)
class Preamble:
    lines: tuple[int, ...]  # 0-based indexes of the moved #include lines
    header: str  # what the PCH is made of: those lines
    body: str  # the file with those lines blanked


def split_preamble(text: str) -> Preamble | None:
    """The leading ``#include`` lines of a file, or None when it has none. Stops at the first line
    that is not blank, a comment, ``#pragma once`` or a plain ``#include <...>``/``"..."``."""
    lines = text.split("\n")
    moved: list[int] = []
    in_block = False
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        if line.endswith("\\"):
            break
        if in_block:
            end = line.find("*/")
            if end < 0:
                continue
            in_block = False
            rest = line[end + 2:].strip()
            if rest and not rest.startswith("//"):
                break
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if stripped.startswith("/*"):
            end = stripped.find("*/", 2)
            if end < 0:
                in_block = True
                continue
            rest = stripped[end + 2:].strip()
            if rest and not rest.startswith("//"):
                break
            continue
        if _PRAGMA_ONCE.match(line):
            continue
        if _PRE_INCLUDE.match(line):
            moved.append(i)
            continue
        break
    if not moved:
        return None
    header = "\n".join(lines[i].rstrip("\r") for i in moved) + "\n"
    body_lines = list(lines)
    for i in moved:
        body_lines[i] = ""
    return Preamble(tuple(moved), header, "\n".join(body_lines))


def _pch_args(args: list[str]) -> list[str]:
    """The file's arguments for compiling its preamble as a header."""
    out = list(args)
    i = out.index("-x")
    if out[i + 1] == "c++":
        out[i + 1] = "c++-header"
    return out


PRELUDE_ONLY = f"{VIRTUAL_ROOT}/fusionlint_prelude_pch.h"


def _pch_target(path: Path, args: list[str], pre: Preamble, skip: bool) -> tuple[str, str]:
    """(key, path of the header compiled into the PCH). A file's own preamble is compiled as a header
    in its directory (quoted includes resolve the same); the CUDA prelude alone (an empty preamble)
    is one PCH for every CUDA file with these arguments."""
    from fusionlint import store

    if not pre.lines:
        return store.digest("pch", store.fusionlint_key(), store.libclang_key(), os.getcwd(), args, skip), PRELUDE_ONLY
    header_path = str(path.parent.absolute() / PREAMBLE_NAME)
    return store.digest("pch", store.fusionlint_key(), store.libclang_key(), os.getcwd(), args,
                        header_path, pre.header, skip), header_path


def _candidates(path: Path, args: list[str], text: str) -> list[Preamble]:
    """The PCHs a file could use, best first: its own preamble, then (CUDA) the prelude alone."""
    out = []
    pre = split_preamble(text)
    if pre is not None:
        out.append(pre)
    if PRELUDE in args:
        out.append(Preamble((), "", text))
    return out


def _note_preamble(path: Path, args: list[str], text: str, pch_dir: Path, unit: ParsedUnit) -> None:
    """After a parse without the file's own PCH: remember that its preambles were seen (the next
    sighting builds a PCH). A parse that ended in a fatal error (headers found nowhere, past the
    re-parse rounds) marks the file's own preamble as not worth trying while its headers stay."""
    from fusionlint import store

    fatal = any(d.severity == "fatal" for d in unit.diagnostics)
    skip = _may_skip_bodies(text, args)
    for pre in _candidates(path, args, text):
        key = _pch_target(path, args, pre, skip)[0]
        meta_path = pch_dir / f"{key}.json"
        if store.read_json(meta_path) is not None:
            continue
        record: dict = {"seen": time.time(), "n_includes": len(unit.includes)}
        deps = store.dependencies(unit.includes, time.time()) if fatal and pre.lines else None
        if deps is not None:
            record = {"key": key, "failed": True, "deps": deps,
                      "absent": store.absent_candidates(unit.missing_headers, str(path), args, unit.includes)}
        store.write_atomic(meta_path, json.dumps(record).encode())


def _lock(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        os.close(fd)
        return True
    except FileExistsError:
        try:
            if time.time() - path.stat().st_mtime > _PCH_LOCK_AGE:  # a builder that died
                path.unlink()
                return _lock(path)
        except OSError:
            pass
        return False
    except OSError:
        return False


def _build_at_first_sight(pre: Preamble, mode: dict[str, str], skip: bool) -> bool:
    """Whether a file's own PCH is built the first time its include block is seen. Yes for a file
    that cannot call cuBLASLt parsed with the CUTLASS headers and without their device bodies
    (-DFUSIONLINT_NO_DEVICE_BODIES): a PCH without the headers' function bodies, built and used,
    costs less than the plain parse it replaces (CUTLASS-3 kernel: 9.5 s against 16.4 s; CUTLASS-2:
    3.5 s against 5.0 s, bench/RESULTS.md). Otherwise a PCH, which keeps every body, costs more
    than a plain parse, and is built only when the block is seen again."""
    return skip and bool(pre.lines) and mode.get("cutlass", "not found") != "not found"


def _build_pch(path: Path, key: str, header_path: str, args: list[str], unsaved: list[tuple[str, str]],
               pre: Preamble, pch_dir: Path, skip: bool, first_sight: bool = False) -> dict | None:
    """Compile the preamble into ``<key>.pch`` and return its record (None: not possible here). At
    a first sight (``_build_at_first_sight``), a preamble whose headers name cuBLASLt gets no PCH
    now (one with every body would cost more than the plain parse); the next sighting builds it."""
    from fusionlint import store

    lock = pch_dir / f"{key}.lock"
    if not _lock(lock):
        return None  # another process is building it: parse normally meanwhile
    try:
        since = time.time()
        tu, diags, missing = _parse_rounds(header_path, _pch_args(args), unsaved + [(header_path, pre.header)],
                                           options=_PCH_PARSE_OPTIONS if skip else 0)
        # a header of the preamble may call cuBLASLt, or the prelude instantiates CUTLASS's device
        # bodies: keep every body
        if skip and (_tu_mentions(tu, _API_WORD, dict(unsaved)) or has_device_bodies(tu)):
            if first_sight:
                return None
            skip = False
            tu, diags, missing = _parse_rounds(header_path, _pch_args(args), unsaved + [(header_path, pre.header)])
        includes = _real_includes(tu)
        if any(d.severity == "fatal" or (d.path == header_path and d.severity == "error") for d in diags):
            # the preamble stops the parse, or has errors of its own: no PCH while its headers stay the same
            deps = store.dependencies(includes, since)
            if deps is not None:
                store.write_atomic(pch_dir / f"{key}.json", json.dumps(
                    {"key": key, "failed": True, "deps": deps,
                     "absent": store.absent_candidates(missing, str(path), args, includes)}).encode())
            return None
        inclusions = []
        for inc in tu.get_includes():
            src = inc.source.name if inc.source is not None else ""
            tgt = inc.include.name if inc.include is not None else ""
            inclusions.append([src, tgt, inc.depth])
        deps = store.dependencies(includes, since)
        if deps is None:
            return None
        pch_file = pch_dir / f"{key}.pch"
        tmp = pch_dir / f"{store._TMP_PREFIX}{key}-{os.getpid()}.pch"
        try:
            tu.save(str(tmp))
            os.replace(tmp, pch_file)
        except (ci.TranslationUnitSaveError, OSError):
            try:
                tmp.unlink()
            except OSError:
                pass
            return None
        del tu
        record = {"key": key, "pch": pch_file.name, "deps": deps, "missing": missing,
                  "absent": store.absent_candidates(missing, str(path), args, includes),
                  "diagnostics": [[d.severity, d.path, d.line, d.column, d.message] for d in diags],
                  "inclusions": inclusions, "header": header_path, "bodies": "skipped" if skip else "parsed"}
        store.write_atomic(pch_dir / f"{key}.json", json.dumps(record).encode())
        return record
    finally:
        try:
            lock.unlink()
        except OSError:
            pass


def _parse_with_pch(path: Path, args: list[str], mode: dict[str, str], unsaved: list[tuple[str, str]],
                    text: str, pch_dir: Path) -> ParsedUnit | None:
    """The file parsed with a precompiled preamble, or None (parse it normally)."""
    skip = _may_skip_bodies(text, args)
    for pre in _candidates(path, args, text):
        unit = _parse_with(path, args, mode, unsaved, pre, pch_dir, skip)
        if unit is not None:
            return unit
    return None


def _parse_with(path: Path, args: list[str], mode: dict[str, str], unsaved: list[tuple[str, str]],
                pre: Preamble, pch_dir: Path, skip: bool) -> ParsedUnit | None:
    from fusionlint import store

    key, header_path = _pch_target(path, args, pre, skip)
    meta = store.read_json(pch_dir / f"{key}.json")
    first_sight = meta is None
    if first_sight:
        if not _build_at_first_sight(pre, mode, skip):
            return None  # the normal parse notes it; the next sighting builds the PCH
        meta = {}
    if meta.get("failed"):
        if meta.get("key") == key and store._still_valid(meta.get("deps"), meta.get("absent")):
            return None  # known not to make a PCH
        meta = {}
    pch_file = pch_dir / f"{key}.pch"
    usable = meta.get("key") == key and pch_file.is_file() and \
        store._still_valid(meta.get("deps"), meta.get("absent"))
    if not usable:
        if meta.get("key") is None and int(meta.get("n_includes", PCH_MIN_INCLUDES)) < PCH_MIN_INCLUDES:
            return None
        meta = _build_pch(path, key, header_path, args, unsaved, pre, pch_dir, skip, first_sight)
        if meta is None:
            return None
    main_args = list(args)
    if "-include" in main_args and PRELUDE in main_args:  # the PCH holds the prelude already
        i = main_args.index(PRELUDE)
        del main_args[i - 1:i + 1]
    main_args += ["-include-pch", str(pch_file)]
    pch_missing = list(meta.get("missing", []))
    base = unsaved + [(header_path, pre.header), (str(path), pre.body)] + \
        _missing_stand_ins(pch_missing, os.path.dirname(str(path)))
    # the rounds a plain parse has left after the preamble's missing headers (same final state)
    tu, diags, missing = _parse_rounds(str(path), main_args, base, max(1, _MAX_MISSING_ROUNDS - len(pch_missing)))
    if any(_PCH_TROUBLE.search(d.message) for d in diags):
        try:  # libclang rejected it (e.g. a header touched since): rebuilt on the next sighting
            pch_file.unlink()
        except OSError:
            pass
        return None
    if meta.get("bodies") == "skipped" and (_tu_mentions(tu, _API_WORD, dict(unsaved), (str(pch_file), header_path))
                                            or has_device_bodies(tu)):
        return None  # a header after the preamble may call cuBLASLt, or device bodies: every body is needed

    def remap(d: list) -> Diagnostic:
        severity, dpath, line, column, message = d
        if dpath == header_path and 0 < line <= len(pre.lines):
            return Diagnostic(severity, str(path), pre.lines[line - 1] + 1, column, message)
        return Diagnostic(severity, dpath, line, column, message)

    inclusions = []
    for src, tgt, depth in meta.get("inclusions", []):
        inclusions.append(ci.FileInclusion(_NamedFile(str(path) if src == header_path else src),
                                           _NamedFile(tgt), None, depth))
    tu.__class__ = _PchTranslationUnit
    tu._pch_inclusions = inclusions
    includes = [d[0] for d in meta["deps"]] + [n for n in _real_includes(tu) if n != str(pch_file)]
    return ParsedUnit(path=path, tu=tu, args=args, diagnostics=[remap(d) for d in meta.get("diagnostics", [])] + diags,
                      missing_headers=list(dict.fromkeys(pch_missing + missing)), header_mode=mode,
                      includes=list(dict.fromkeys(includes)), pch="used" if pre.lines else "prelude")


class _NamedFile:
    """A file known by name only (an inclusion recorded when the PCH was built)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<File: {self.name}>"


class _PchTranslationUnit(ci.TranslationUnit):
    """A translation unit parsed with a precompiled preamble: ``get_includes`` also lists the
    inclusions inside the PCH, as a parse without it would."""

    _pch_inclusions: list = []

    def get_includes(self):
        return iter([*self._pch_inclusions, *super().get_includes()])


def _includes_written_in(path: str) -> list[str]:
    """The headers a file on disk includes, as written (none when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return recovery.includes_written(f.read())
    except OSError:
        return []


_RECOVERY_ROUNDS = 2  # recovery parses at most (the second only for names the first one's errors hid)


def _recover(unit: ParsedUnit, unsaved: list[tuple[str, str]], text: str) -> ParsedUnit:
    """``unit`` parsed again with a recovery header (``stand_in``) in the first missing header's
    place, when that reads more of the main file; else ``unit``. ``unsaved``: the parse's files
    (fusionlint's headers, the main file's text). At most three more parses: one with every missing
    header stood in when ``unit``'s rounds stopped at one more (its diagnostics are cut there), and
    the recovery parses (``_RECOVERY_ROUNDS``; a round is kept only when it reads more)."""
    path = str(unit.path)
    missing = list(unit.missing_headers)
    tu, diags = unit.tu, unit.diagnostics
    cut = any(d.severity == "fatal" and (m := _NOT_FOUND.match(d.message)) and m.group("name") in missing
              for d in diags)
    if cut:
        # the rounds stopped at one more missing header (diagnostics are cut there): parse once with an
        # empty stand-in for every header the main file includes as well; they are searched last, so
        # a header found anywhere is still the real one, and those used are the ones found nowhere
        named = [n for n in dict.fromkeys(missing + recovery.includes_written(text))
                 if not n.startswith("/")]
        for _ in range(_MAX_MISSING_ROUNDS):  # and what those headers' stand-ins leave missing in other headers
            tu = _index().parse(path, args=unit.args, unsaved_files=unsaved + _missing_stand_ins(named, os.path.dirname(path)))
            diags = _diagnostics(tu)
            not_found = [(d, m) for d in diags if d.severity == "fatal" and (m := _NOT_FOUND.match(d.message))]
            more = [m.group("name") for _d, m in not_found]
            # a header that stopped the parse at one of its includes likely misses more of them (one
            # parse each, clang stopping at the first): every include it writes is stood in at once
            # (a stand-in is searched last: a header found anywhere is still the real one)
            more += [n for d, _m in not_found if d.path for n in _includes_written_in(d.path)]
            more = [n for n in dict.fromkeys(more) if n not in named and not n.startswith("/")]
            if not more:
                break
            named += more
        if any(d.severity == "fatal" for d in diags):
            return unit
        used = []
        beside = {where: n for n in named for where, _ in _missing_stand_ins([n], os.path.dirname(path))[1:]}
        for inc in tu.get_includes():
            name = inc.include.name if inc.include is not None else ""
            if name.startswith(MISSING_DIR + "/"):
                used.append(name[len(MISSING_DIR) + 1:])
            elif name in beside:  # a relative include's stand-in, beside the main file
                used.append(beside[name])
        missing = list(dict.fromkeys(missing + used))
    model = dict(unit.stand_ins) if unit.stand_ins is not None else stand_in_headers()
    reported = list(diags)
    header = recovery.stand_in(tu, reported, path, text, model)
    best = (tu, diags, None)
    for _ in range(_RECOVERY_ROUNDS):
        if header is None:
            break
        files = _missing_stand_ins(missing, os.path.dirname(path), header.text)
        tu2 = _index().parse(path, args=unit.args, unsaved_files=unsaved + files)
        diags2 = _diagnostics(tu2)
        if any(d.severity == "fatal" for d in diags2):
            break
        if recovery._score(tu2, diags2, path, text) < recovery._score(best[0], best[1], path, text):
            best = (tu2, diags2, header.names)
        elif not any(n.endswith(recovery.OUT_OF_LINE) for n in header.names):
            break  # (a round that reads no more is followed by another only when it made member bodies readable)
        # names the first round's errors hid (``ColumnCount(A)`` with ``A`` of a type only the
        # recovery declared is reported only now; the bodies of out-of-line members it made readable):
        # one more round declares them too, and is kept if it reads more than the rounds before
        known = {(d.path, d.line, d.column, d.message) for d in reported}
        fresh = [d for d in diags2 if recovery.names_unknown(d) and (d.path, d.line, d.column, d.message) not in known]
        if not fresh:
            break
        reported += fresh
        header = recovery.stand_in(tu, reported, path, text, model)
    if best[0] is unit.tu:
        return unit
    tu, diags, names = best
    return ParsedUnit(path=unit.path, tu=tu, args=unit.args, diagnostics=diags, missing_headers=missing,
                        header_mode=unit.header_mode, includes=_real_includes(tu), stand_ins=unit.stand_ins,
                        recovered=names)
