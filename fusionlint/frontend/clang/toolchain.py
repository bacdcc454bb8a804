"""Where real headers live on this machine: the CUDA toolkit, the cuBLAS and CUTLASS wheels.

Only directories are looked up; nothing found here is imported or executed.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class HeaderDirs:
    """Include directories of real headers, in search order, with what each provides."""

    cuda: tuple[Path, ...] = ()
    cublas: tuple[Path, ...] = ()
    cutlass: tuple[Path, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def all(self) -> list[Path]:
        return [*self.cublas, *self.cutlass, *self.cuda]


def _site_dirs(top: str) -> list[Path]:
    """Directories of an installed (possibly namespace) package, without importing it."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    return [Path(p) for p in (spec.submodule_search_locations or [])]


def _cuda_dirs() -> list[Path]:
    roots: list[str] = []
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if os.environ.get(var):
            roots.append(os.environ[var])
    roots.append("/usr/local/cuda")
    found: list[Path] = []
    for root in roots:
        inc = Path(root) / "include"
        if (inc / "cuda_runtime_api.h").is_file() and inc not in found:
            found.append(inc)
            # CUDA 13 moved CCCL (<cuda/std/...>, cub, thrust) under include/cccl; nvcc adds it
            # implicitly and CUTLASS 4.x includes <cuda/std/...>.
            if (inc / "cccl").is_dir():
                found.append(inc / "cccl")
    return found


def _cublas_dirs(cuda: list[Path]) -> list[Path]:
    found = [d for d in cuda if (d / "cublasLt.h").is_file()]
    for nv in _site_dirs("nvidia"):
        for sub in ("cu13/include", "cublas/include", "cu12/include"):
            inc = nv / sub
            if (inc / "cublasLt.h").is_file() and inc not in found:
                found.append(inc)
    return found


def _cutlass_dirs(cuda: list[Path]) -> list[Path]:
    found = [d for d in cuda if (d / "cutlass" / "cutlass.h").is_file()]
    for lib in _site_dirs("cutlass_library"):
        for sub in ("source/include", "source/tools/util/include"):
            inc = lib / sub
            if inc.is_dir() and inc not in found:
                found.append(inc)
    return found


def find_header_dirs() -> HeaderDirs:
    """The real header directories on this machine, looked up now (``discover`` remembers them for
    the front end; ``verify`` and ``calibrate`` look once per run, for the probes they build)."""
    cuda = _cuda_dirs()
    return HeaderDirs(cuda=tuple(cuda), cublas=tuple(_cublas_dirs(cuda)), cutlass=tuple(_cutlass_dirs(cuda)))


@lru_cache(maxsize=None)
def discover(use_system: bool = True) -> HeaderDirs:
    """Real header directories found on this machine (none when ``use_system`` is false)."""
    if not use_system:
        return HeaderDirs(notes=("system headers disabled: fusionlint stand-ins only",))
    return find_header_dirs()
