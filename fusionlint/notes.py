"""Notes about how a file was checked that are not findings: headers found nowhere.

A header that is found nowhere is parsed as an empty stand-in, so that one missing include does
not stop the file; but whatever it declares (types, macros, the helper that sets up the GEMM) is
then unknown and the findings that depend on it are missed. So each file's missing headers are
reported, once per header, in every output format: on stderr (``fusionlint: note: ...``), and in
the formats that have a place for them (SARIF ``toolExecutionNotifications``, GitHub ``::notice``
commands, JUnit ``system-err``); the JSON array stays an array of findings.

Library headers with a fallback of their own (CUTLASS and CCCL: without them the CUTLASS GEMMs
are read from the source text, and each finding says so) are summed up in one note for the run;
``-v`` names them per file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# header prefix -> library; files missing only these are read in the syntactic mode
LIBRARIES = {"cutlass/": "CUTLASS", "cute/": "CUTLASS", "cuda/": "CCCL", "nv/": "CCCL", "cub/": "CCCL",
             "thrust/": "CCCL"}


# the CUDA toolkit's and cuBLAS's headers, as projects that vendor the toolkit include them by a path of
# their own (TensorFlow/XLA's Bazel layout: "third_party/gpus/cuda/include/cublasLt.h")
_TOOLKIT_HEADER = re.compile(r"(?:^|/)cuda/include/((?:cublasLt|cublas_v2|cublas_api|cublas|cuda|cuda_runtime|"
                             r"cuda_runtime_api|driver_types|library_types|cuda_fp16|cuda_bf16|cuda_fp8)\.h)$")


def toolkit_header(name: str) -> str | None:
    """The toolkit header ``name`` is a vendored path of (``cublasLt.h``), else None."""
    m = _TOOLKIT_HEADER.search(name)
    return m.group(1) if m else None


@dataclass(frozen=True)
class Note:
    path: str | None  # None: about the run, not one file
    line: int  # 0: no line (the header is included from another header)
    column: int
    message: str
    detail: bool = False  # a per-file detail of a run-level note (JUnit's per-file output; -v)

    def text(self) -> str:
        """The stderr line (without the ``fusionlint: note:`` prefix)."""
        if self.path is None:
            return self.message
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


def library_of(header: str) -> str | None:
    return next((lib for prefix, lib in LIBRARIES.items() if header.startswith(prefix)), None)


def _include_site(path: str, header: str) -> tuple[int, int]:
    """(line, column) of the ``#include`` of ``header`` in ``path``; (0, 0) when it is not there
    (included from a header) or the file cannot be read."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return 0, 0
    m = re.search(r'^([ \t]*)#[ \t]*include[ \t]*[<"]' + re.escape(header) + r'[>"]', text, re.M)
    if m is None:
        return 0, 0
    return text.count("\n", 0, m.start()) + 1, len(m.group(1)) + 1


def missing_header_notes(path: str, headers: list[str]) -> list[Note]:
    """One note per header of ``path`` that was found nowhere; CUTLASS/CCCL headers as one
    ``detail`` note (the run's summary, ``library_summary``, reports them)."""
    notes = []
    library = [h for h in headers if library_of(h)]
    for header in dict.fromkeys(h for h in headers if not library_of(h)):
        line, column = _include_site(path, header)
        toolkit = toolkit_header(header)
        if toolkit:
            notes.append(Note(path, line, column, f"header '{header}' not found: <{toolkit}> (the CUDA toolkit's, "
                              "or fusionlint's model of cuBLAS) stands in for it", detail=True))
            continue
        notes.append(Note(path, line, column,
                          f"header '{header}' not found: checked with an empty stand-in in its place, so what it "
                          "declares (types, macros, helper functions) is unknown and findings that depend on it "
                          "are missed; add its directory with -I, or give the build's compile_commands.json (-p)"))
    if library:
        notes.append(Note(path, 0, 0, f"library headers not found: {', '.join(dict.fromkeys(library))}", detail=True))
    return notes


def library_summary(missing: dict[str, list[str]]) -> Note | None:
    """One note for the files checked without the CUTLASS (or CCCL) headers: {file: headers}."""
    if not missing:
        return None
    headers = list(dict.fromkeys(h for hs in missing.values() for h in hs))
    libraries = list(dict.fromkeys(library_of(h) for h in headers))
    shown = ", ".join(headers[:4]) + (f" and {len(headers) - 4} more" if len(headers) > 4 else "")
    n = len(missing)
    hint = []
    if "CUTLASS" in libraries:
        hint.append("their CUTLASS GEMMs are read from the source text; `pip install 'fusionlint[cutlass]'` or "
                    "-I <cutlass>/include lets libclang instantiate them")
    if "CCCL" in libraries:
        hint.append("CUDA 13 keeps the CCCL headers (cuda/, nv/, cub/, thrust/) under <cuda>/include/cccl: "
                    "add it with -I")
    return Note(None, 0, 0, f"{n} file{'s' if n != 1 else ''} checked without the {' and '.join(libraries)} "
                            f"headers ({shown} not found): " + "; ".join(hint) + " (-v lists the files)")
