"""The project's own headers for the CUTLASS source reader.

A GEMM is often spread over files: vLLM's ``scaled_mm_sm90_fp8_dispatch.cuh`` picks tile shapes
and schedules for a ``cutlass_3x_gemm`` template that ``scaled_mm.cuh`` defines; a project keeps its
alignments in a ``config.h``. The source reader (``syntax``) reads one token stream, so
``#include "..."`` lines that name a header of the project are replaced by that header's tokens,
as the preprocessor would (the including file's macros and conditionals apply).

Which headers: a quoted include found next to the including file or in a ``-I``/``-iquote``
directory of the file's arguments; never an angle-bracket include, a ``cutlass/``/``cute/`` header,
or a header under a directory holding CUTLASS's or the CUDA toolkit's headers (libclang reads
those; the reader models CUTLASS itself). A header is read once (``#pragma once`` or guards).

Lines: the tokens of the k-th file read carry line ``k * LINE_STRIDE + line``, so that every
position stays one integer pair; :meth:`ProjectHeaders.where` maps it back to (path, line).
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path

from fusionlint import prefilter
from fusionlint.frontend.cutlass.source.lexer import Directive, Tok, lex
from fusionlint.model.values import Loc

LINE_STRIDE = 1 << 22  # no source file has four million lines
MAX_FILES = 64
MAX_FILE_BYTES = 1 << 20
MAX_TOTAL_BYTES = 8 << 20
_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".ipp", ".inc", ".cu", ".cpp", ".cc", ".cxx"}
_LIBRARY_PREFIXES = ("cutlass/", "cute/")
# a directory holding one of these is a library's include root, not the project's
_QUOTED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_LIBRARY_MARKERS = ("cutlass/cutlass.h", "cute/tensor.hpp", "cuda_runtime.h", "cublasLt.h")


def search_dirs(args: list[str]) -> list[Path]:
    """The ``-iquote`` and ``-I`` directories of a parse's arguments (in that order, as the compiler
    searches quoted includes after the including file's directory), without library roots and
    fusionlint's virtual directories."""
    out: list[Path] = []
    for d in prefilter.search_dirs(args, ("-iquote",)) + prefilter.search_dirs(args, ("-I",)):
        p = Path(d)  # a relative directory is the working directory's, as for the compiler
        if p.is_dir() and not _library_root(p) and p not in out:
            out.append(p)
    return out


def _library_root(d: Path) -> bool:
    return any((d / m).is_file() for m in _LIBRARY_MARKERS)


class ProjectHeaders:
    """Reads the project headers a file includes, for ``Preprocessor.run``'s ``include`` hook."""

    def __init__(self, main_path: str, dirs: list[Path] | None = None):
        self.files: list[str] = [main_path]
        self.dirs = list(dirs or [])
        self._seen: set[str] = set()
        self._bytes = 0
        self.notes: list[str] = []

    def where(self, line: int) -> tuple[str, int]:
        """The file and real line of a reader line number."""
        k, real = divmod(line, LINE_STRIDE)
        return (self.files[k] if 0 <= k < len(self.files) else self.files[0]), real

    def in_main(self, line: int) -> bool:
        return line < LINE_STRIDE

    def __call__(self, d: Directive) -> list[Tok | Directive] | None:
        """The items of the header ``d`` includes, or None when it is not one to read."""
        if not d.toks or d.toks[0].kind != "str" or not d.toks[0].text.startswith('"'):
            return None
        name = d.toks[0].text.strip('"')
        if not name or name.startswith(_LIBRARY_PREFIXES) or Path(name).suffix.lower() not in _SUFFIXES:
            return None
        including, _ = self.where(d.line)
        target = self._resolve(name, Path(including).parent)
        if target is None:
            return None
        key = os.path.realpath(target)
        if key in self._seen or key == os.path.realpath(self.files[0]):
            return []  # read once: the reader keeps no guard macros of headers it skipped
        if len(self.files) >= MAX_FILES:
            return None
        try:
            size = target.stat().st_size
            if size > MAX_FILE_BYTES or self._bytes + size > MAX_TOTAL_BYTES:
                self.notes.append(f"{name}: not read (too large for the source reader)")
                return None
            text = target.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        self._seen.add(key)
        self._bytes += size
        k = len(self.files)
        self.files.append(str(target))
        return _shifted(lex(text), k * LINE_STRIDE)

    def closure(self, text: str) -> list[str]:
        """The real paths of the project headers ``text`` (the main file's) includes, transitively, as
        this reader reads them (quoted includes, within the limits): the project index records them so
        that a header's template GEMMs can be read where its includers instantiate them."""
        return [key for key, _text in self._headers(text)]

    def reach(self, text: str, pattern: re.Pattern[str]) -> bool:
        """Whether a project header ``text`` includes (transitively, within the limits) matches
        ``pattern``: a file that only includes the project's CUTLASS header (FBGEMM's
        f8f8bf16_rowwise_<config>.cu over f8f8bf16_rowwise_common.cuh) is a CUTLASS file."""
        return any(header is not None and pattern.search(header) for _key, header in self._headers(text))

    def _headers(self, text: str) -> Iterator[tuple[str, str | None]]:
        """(real path, text or None when unreadable or too large) of each project header ``text``
        includes, transitively, in the order found (lazily: a caller may stop early)."""
        todo = [(text, Path(self.files[0]).parent)]
        seen: set[str] = set()
        while todo and len(seen) < MAX_FILES:
            body, here = todo.pop()
            for name in _QUOTED.findall(body):
                if name.startswith(_LIBRARY_PREFIXES) or Path(name).suffix.lower() not in _SUFFIXES:
                    continue
                target = self._resolve(name, here)
                if target is None or (key := os.path.realpath(target)) in seen:
                    continue
                seen.add(key)
                try:
                    header = target.read_text(encoding="utf-8", errors="replace") \
                        if target.stat().st_size <= MAX_FILE_BYTES else None
                except OSError:
                    header = None
                yield key, header
                if header is not None:
                    todo.append((header, target.parent))

    def _resolve(self, name: str, here: Path) -> Path | None:
        for d in [here, *self.dirs]:
            p = d / name
            if p.is_file():
                if any(_library_root(q) for q in list(p.parents)[:4]):
                    return None
                return p
        return None


def _shifted(items: list[Tok | Directive], base: int) -> list[Tok | Directive]:
    for it in items:
        it.line += base
        if isinstance(it, Directive):
            for t in it.toks:
                t.line += base
    return items


def relocate(obj, headers: ProjectHeaders, _seen: set[int] | None = None):
    """``obj`` (facts: dataclasses, lists, dicts) with every ``Loc`` in a header's line space mapped
    to that header's path and real line; changed in place where mutable, returned."""
    seen = _seen if _seen is not None else set()
    if isinstance(obj, Loc):
        if headers.in_main(obj.line):
            return obj
        path, line = headers.where(obj.line)
        return Loc(path, line, obj.column)
    if id(obj) in seen:
        return obj
    if isinstance(obj, list):
        seen.add(id(obj))
        for i, v in enumerate(obj):
            obj[i] = relocate(v, headers, seen)
    elif isinstance(obj, dict):
        seen.add(id(obj))
        for k, v in obj.items():
            obj[k] = relocate(v, headers, seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        seen.add(id(obj))
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            nv = relocate(v, headers, seen)
            if nv is not v:
                object.__setattr__(obj, f.name, nv)  # frozen ones (CutlassDiagnostic) too
    return obj
