"""Translation-unit creation: flags, the CUDA prelude, stand-in headers, diagnostics.

A source is parsed host-side, as C++17 (or CUDA for .cu/.cuh), with every real header
directory found on the machine first and fusionlint's stand-in headers last
(``-idirafter``), so a real ``cublasLt.h`` always wins over the stand-in. A header that is
found nowhere is replaced by an empty one and the file parsed again, so that one missing
include does not hide the rest of the file (clang stops reporting after a fatal error).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import clang.cindex as ci

from fusionlint.frontend import toolchain

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
    std: str = "c++17"
    use_system_headers: bool = True


@dataclass
class ParsedUnit:
    path: Path
    tu: ci.TranslationUnit
    args: list[str]
    diagnostics: list[Diagnostic]
    missing_headers: list[str]
    header_mode: dict[str, str]

    def main_file_errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity in ("error", "fatal") and d.path == str(self.path)]

    def errors_between(self, first_line: int, last_line: int) -> list[Diagnostic]:
        return [d for d in self.main_file_errors() if first_line <= d.line <= last_line]


_SEVERITY = {ci.Diagnostic.Ignored: "ignored", ci.Diagnostic.Note: "note", ci.Diagnostic.Warning: "warning",
             ci.Diagnostic.Error: "error", ci.Diagnostic.Fatal: "fatal"}


def is_virtual(path: str | None) -> bool:
    return bool(path) and str(path).startswith(VIRTUAL_ROOT)


def _package_headers(subdir: str) -> dict[str, str]:
    base = resources.files("fusionlint.frontend") / "include" / subdir
    return {p.name: p.read_text(encoding="utf-8") for p in base.iterdir() if p.name.endswith(".h")}


@lru_cache(maxsize=1)
def stand_in_headers() -> dict[str, str]:
    """Header name -> text of every stand-in header fusionlint can supply."""
    from fusionlint.frontend.api.stubs import stub_headers

    headers: dict[str, str] = {}
    headers.update(_package_headers("resource"))
    headers.update(_package_headers("cuda"))
    headers.update(stub_headers())
    return headers


@lru_cache(maxsize=1)
def _prelude_text() -> str:
    return (resources.files("fusionlint.frontend") / "include" / "fusionlint_cuda_prelude.h").read_text(encoding="utf-8")


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
    args = [*language_args(path), f"-std={options.std}", "-ferror-limit=0", "-fsyntax-only",
            "-Wno-pragma-once-outside-header"]
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


def parse_file(path: Path | str, options: ParseOptions | None = None, text: str | None = None) -> ParsedUnit:
    """Parse one source file. Raises ``clang.cindex.TranslationUnitLoadError`` on a libclang failure."""
    path = Path(path)
    options = options or ParseOptions()
    args, mode = build_args(path, options)
    unsaved = [(f"{STUB_DIR}/{name}", body) for name, body in stand_in_headers().items()]
    unsaved.append((PRELUDE, _prelude_text()))
    if text is not None:
        unsaved.append((str(path), text))
    missing: list[str] = []
    for _ in range(_MAX_MISSING_ROUNDS):
        extra = [(f"{MISSING_DIR}/{name}", f"/* fusionlint: '{name}' was not found; empty stand-in */\n")
                 for name in missing]
        tu = _index().parse(str(path), args=args, unsaved_files=unsaved + extra)
        diags = _diagnostics(tu)
        new = [m.group("name") for d in diags if (m := _NOT_FOUND.match(d.message))]
        new = [n for n in dict.fromkeys(new) if n not in missing and not n.startswith("/")]
        if not new:
            break
        missing += new
    return ParsedUnit(path=path, tu=tu, args=args, diagnostics=diags, missing_headers=missing, header_mode=mode)
