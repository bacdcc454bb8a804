"""The defaults of fusionlint's options, in one place: the front end's C++ standard, the rules'
target architecture, the time limits and the file limit of the commands. Imports nothing, so
that every layer can use them (``ParseOptions``, the rules' engine, the command line, ``run/``)."""
from __future__ import annotations

DEFAULT_STD = "c++17"  # -std of a file whose command line, compilation database and config name none
DEFAULT_ARCH = "sm_90"  # the rules' target architecture when neither --arch, the database nor a config names one
VERIFY_ARCH = "sm_90a"  # what ``verify`` builds its probes for (CUTLASS's sm_90 kernels need the "a" features)

CHECK_TIMEOUT = 120  # seconds per file (check, the language server); 0: none
ISOLATED_TIMEOUT = 600  # seconds per file: facts, graph and probe (a forked child each), test-rules' default
VERIFY_BUILD_TIMEOUT = 600  # seconds per probe build of ``verify``
# Whether instantiated mode (the CUTLASS headers found) also instantiates the kernels' and the
# collectives' __device__ bodies, as nvcc does for sm_90a (--device-bodies, ``device-bodies = true``).
# Off by default: the device side of one GEMM costs libclang ~12 s by itself (a 4.7x cap against
# nvcc -c, bench/RESULTS-h200-cutlass.md), and the rules that mirror the device-side asserts caught
# on the measured mutation sets everything it caught (docs/evidence.md, "CUTLASS random mutations").
DEVICE_BODIES = False
NO_DEVICE_BODIES_MACRO = "FUSIONLINT_NO_DEVICE_BODIES"  # the prelude's switch (fusionlint_cuda_prelude.h)
MAX_FILES = 100_000  # check refuses more files than this (--max-files; 0: no limit)
HEADER_SUFFIXES = frozenset({".cuh", ".h", ".hpp", ".hh", ".hxx"})  # included by the project's translation units
