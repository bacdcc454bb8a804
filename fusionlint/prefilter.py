"""Pre-filter: which files cannot hold a cuBLASLt or CUTLASS configuration, decided without libclang.

A file is *relevant* (parsed) when its bytes contain a token of either API (``cublasLt``,
``cutlass``, ``cute``, ``CollectiveBuilder``, ``GemmUniversal``…), when a macro given on the
command line does, when it has a computed ``#include MACRO``, or when a header it includes —
transitively, looked up in the including file's directory and every include directory of the
parse (``-I``/``-isystem``/``-iquote``/``-idirafter``, the real CUDA/cuBLAS/CUTLASS dirs,
``/usr/include``, ``/usr/local/include``), and including ``-include`` files — is relevant.
A header found in none of them is not: libclang would replace it with an empty stand-in.

When in doubt the answer is "relevant" (for a check; not in the project index's first pass, which
scans with ``project_only``): an unreadable file, binary content, a file larger
than the scan limit. Only the standard C++ library directories of the compiler are not
looked into (they never name these APIs). Tokens inside comments count.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable

# Spellings through which the front ends find a GEMM: cuBLASLt calls and types, the cutlass/cute
# namespaces and include paths, and the CUTLASS class templates by name.
TOKENS = re.compile(rb"(?i:cublaslt)|(?i:cutlass)|\bcute\b|Collective(?:Builder|Mma)|GemmUniversal")
_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*(?:\"([^\"\n]*)\"|<([^>\n]*)>|(\S))",
                      re.M)
_FUSIONLINT = re.compile(rb"(?i)fusionlint")
_MAX_BYTES = 64 << 20
DEFAULT_DIRS = ("/usr/include", "/usr/local/include")


INCLUDE_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter")


def search_dirs(args: Iterable[str], flags: tuple[str, ...] = INCLUDE_FLAGS) -> tuple[str, ...]:
    """Include directories named in compiler arguments (``-I DIR``, ``-IDIR``, ``-isystem``…; those
    of ``flags``), fusionlint's virtual directories left out."""
    out: list[str] = []
    args = list(args)
    i = 0
    while i < len(args):
        a = args[i]
        for flag in flags:
            if a == flag and i + 1 < len(args):
                out.append(args[i + 1])
                i += 1
                break
            if a.startswith(flag) and len(a) > len(flag):
                out.append(a[len(flag):])
                break
        i += 1
    return tuple(d for d in dict.fromkeys(out) if not d.startswith("/__fusionlint__"))


def forced_includes(args: Iterable[str]) -> tuple[str, ...]:
    args = list(args)
    return tuple(args[i + 1] for i, a in enumerate(args[:-1]) if a == "-include"
                 and not args[i + 1].startswith("/__fusionlint__"))


# what the project index's first pass looks for (``Prefilter(CUBLASLT, project_only=True)``)
CUBLASLT = re.compile(rb"(?i:cublaslt)")


class Prefilter:
    """Decides relevance for many files, sharing what it learnt about headers between them."""

    def __init__(self, tokens: re.Pattern[bytes] = TOKENS, project_only: bool = False) -> None:
        """``tokens``: what makes a file relevant (default: cuBLASLt or CUTLASS; the project index's
        first pass: cuBLASLt only, ``CUBLASLT``). ``project_only``: follow only the headers found in
        ``-I``/``-iquote`` directories and beside their includer (not the system's: a computed
        include in /usr/include/limits.h would make every file relevant)."""
        self.tokens = tokens
        # (also: what cannot be told without preprocessing, ``#include MACRO`` or an unreadable
        # file, is relevant for a check, not for the index's first pass: CUTLASS's computed includes
        # would make every CUTLASS file one to parse with the CUTLASS headers, minutes)
        self.project_only = project_only
        self._direct: dict[str, tuple[bool, tuple]] = {}  # absolute path -> (token hit, includes)
        self._dirs: dict[tuple, tuple] = {}  # compiler arguments -> (include directories, -include files)
        self._listing: dict[str, frozenset[str] | None] = {}  # directory -> its entries
        self._closure: dict[tuple[str, tuple[str, ...]], bool] = {}  # (header, dirs) -> relevant
        self._resolved: dict[tuple, tuple[str, ...]] = {}
        self._mentions: dict[str, bool] = {}  # file -> holds the word fusionlint (a suppression comment?)

    # -- one file's own bytes --------------------------------------------------------------
    def _scan(self, path: str) -> tuple[bool, tuple]:
        """(relevant by itself, its includes as (quoted, name) pairs); doubt reads as relevant
        (not with ``project_only``)."""
        if path in self._direct:
            return self._direct[path]
        data: bytes | None = None
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                chunks = []
                size = 0
                while size <= _MAX_BYTES:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                data = b"".join(chunks) if len(chunks) != 1 else chunks[0]
            finally:
                os.close(fd)
        except OSError:
            data = None
        self._mentions[path] = data is None or _FUSIONLINT.search(data) is not None
        if data is None or len(data) > _MAX_BYTES or b"\x00" in data[:8192]:
            result: tuple[bool, tuple] = (not self.project_only, ())
        elif self.tokens.search(data):
            result = (True, ())
        else:
            includes = []
            hit = False
            for m in _INCLUDE.finditer(data):
                if m.group(3) is not None:  # #include MACRO: cannot tell without preprocessing
                    if self.project_only:
                        continue
                    hit = True
                    break
                quoted = m.group(1) is not None
                includes.append((quoted, (m.group(1) if quoted else m.group(2)).decode("utf-8", "replace").strip()))
            result = (hit, tuple(includes))
        self._direct[path] = result
        return result

    def _resolve(self, includer_dir: str, quoted: bool, name: str, dirs: tuple[str, ...]) -> tuple[str, ...]:
        """Every file the include could name (all candidates, not just clang's first: conservative)."""
        key = (includer_dir if quoted else "", name, dirs)
        if key in self._resolved:
            return self._resolved[key]
        found = []
        if os.path.isabs(name):
            if os.path.isfile(name):
                found.append(os.path.abspath(name))
        else:
            sub, _, base = name.rpartition("/")
            for d in ([includer_dir] if quoted else []) + list(dirs):
                if self._exists(f"{d}/{sub}" if sub else d, base):
                    c = os.path.join(d, name)
                    if os.path.isfile(c):
                        found.append(os.path.abspath(c))
        result = tuple(dict.fromkeys(found))
        self._resolved[key] = result
        return result

    def _exists(self, directory: str, name: str) -> bool:
        """Whether ``directory`` has an entry ``name``, from a cached listing (one listing per
        directory instead of a stat per include and directory)."""
        entries = self._listing.get(directory, False)
        if entries is False:
            try:
                entries = frozenset(os.listdir(directory))
            except OSError:
                entries = None
            self._listing[directory] = entries
        return entries is not None and name in entries

    def _header_relevant(self, header: str, dirs: tuple[str, ...]) -> bool:
        """Whether ``header`` or anything it includes, transitively, is relevant (exact: a full walk)."""
        key = (header, dirs)
        if key in self._closure:
            return self._closure[key]
        seen = {header}
        todo = [header]
        result = False
        while todo and not result:
            h = todo.pop()
            hit, includes = self._scan(h)
            if hit:
                result = True
                break
            base = os.path.dirname(h)
            for quoted, name in includes:
                for target in self._resolve(base, quoted, name, dirs):
                    known = self._closure.get((target, dirs))
                    if known:
                        result = True
                        break
                    if known is None and target not in seen:
                        seen.add(target)
                        todo.append(target)
                if result:
                    break
        self._closure[key] = result
        return result

    def mentions_fusionlint(self, path: str) -> bool:
        """Whether a file scanned for ``relevant`` holds the word fusionlint (when unsure: True)."""
        return self._mentions.get(os.path.abspath(path), True)

    # -- entry point -----------------------------------------------------------------------
    def relevant(self, path: str, args: Iterable[str], defines: Iterable[str] = ()) -> bool:
        """Whether ``path`` may hold a configuration given these compiler arguments."""
        if any(self.tokens.search(d.encode("utf-8", "replace")) for d in defines):
            return True
        args = tuple(args)
        if args not in self._dirs:
            if self.project_only:
                self._dirs[args] = (search_dirs(args, ("-I", "-iquote")), ())
            else:
                self._dirs[args] = (search_dirs(args) + tuple(d for d in DEFAULT_DIRS if os.path.isdir(d)),
                                    forced_includes(args))
        dirs, forced_files = self._dirs[args]
        real = os.path.abspath(path)
        hit, includes = self._scan(real)
        if hit:
            return True
        base = os.path.dirname(real)
        forced = [(False, f) for f in forced_files]
        for f in forced_files:  # -include FILE is looked up in the working directory first
            if os.path.isfile(f) and self._header_relevant(os.path.abspath(f), dirs):
                return True
        for quoted, name in [*includes, *forced]:
            for target in self._resolve(base, quoted, name, dirs):
                if target != real and self._header_relevant(target, dirs):
                    return True
        return False
