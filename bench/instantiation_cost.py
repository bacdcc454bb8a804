#!/usr/bin/env python3
"""Where instantiated mode's time goes on a CUTLASS 3.x file (the CUTLASS speed target: ≥ 10× nvcc).

libclang parses of one CUTLASS-3 GEMM file with fusionlint's own arguments and stand-in headers,
each in a fresh process-local index, in-process time only:

- ``host only``: the whole file without the device bodies (``-DFUSIONLINT_NO_DEVICE_BODIES``);
- ``full``: the whole file as instantiated mode parses it (the prelude instantiates the kernels'
  and collectives' device bodies);
- ``PCH build``: the file's include block compiled into a precompiled header (bodies kept, as
  fusionlint does for a CUDA file that includes CUTLASS);
- with that PCH, the file's body cut down to: ``types only`` (the GEMM's aliases, no use),
  ``kernel storage`` (``sizeof(GemmKernel::SharedStorage)``), ``kernel body`` (only the kernel's
  ``operator()`` instantiated, in a ``__global__`` function), and ``whole body`` (the file as is).

``kernel body`` minus ``types only`` is the price of the device side of one GEMM: clang's semantic
analysis of CuTe's and CUTLASS's device templates, which no header cache can hold (it depends on
the GEMM's own template arguments). With ``--nvcc`` the same file's ``nvcc -c`` is timed too, and
the ratios to it are printed.

    python bench/instantiation_cost.py kernels_ref/cutlass/bf16_coop_1x1.cu -I .cutlass/include \\
        -I .cutlass/util/include [--nvcc] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import clang.cindex as ci

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fusionlint.frontend.clang.parse import (  # noqa: E402
    PRELUDE, ParseOptions, _pch_args, _unsaved_base, build_args, split_preamble,
)

BODIES = {
    "types only": "int main() { return 0; }\n",
    "kernel storage": "int main() { return int(sizeof(typename GemmKernel::SharedStorage)); }\n",
    "kernel body": ("__global__ void fusionlint_kernel_body(typename GemmKernel::Params p) {\n"
                    "  extern __shared__ char smem[]; GemmKernel op; op(p, smem);\n}\nint main() { return 0; }\n"),
}


def timed_parse(path: str, args: list[str], unsaved: list[tuple[str, str]]) -> tuple[float, int]:
    """(seconds, error diagnostics) of one libclang parse in a fresh index."""
    index = ci.Index.create()
    start = time.perf_counter()
    tu = index.parse(path, args=args, unsaved_files=unsaved)
    took = time.perf_counter() - start
    return took, sum(1 for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error)


def nvcc_seconds(path: Path, includes: list[str]) -> float | None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, "-std=c++17", "-O2", "-arch=sm_90a", "--expt-relaxed-constexpr", *[a for d in includes for a in ("-I", d)],
               "-c", str(path), "-o", str(Path(tmp) / "k.o")]
        start = time.perf_counter()
        rc = subprocess.run(cmd, capture_output=True).returncode
        return time.perf_counter() - start if rc == 0 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("--nvcc", action="store_true", help="also time nvcc -c of the file (sm_90a, -O2)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    path = a.file.resolve()
    text = path.read_text()
    if "int main()" not in text:
        print("instantiation_cost: the file needs an `int main()` after its GEMM's declarations", file=sys.stderr)
        return 2
    args, _ = build_args(path, ParseOptions(include_dirs=[str(Path(d).resolve()) for d in a.includes]))
    unsaved = [tuple(u) for u in _unsaved_base()]
    rows: dict[str, float] = {}
    rows["host only"], _ = timed_parse(str(path), args + ["-DFUSIONLINT_NO_DEVICE_BODIES"], unsaved)
    rows["full"], errors = timed_parse(str(path), args, unsaved)
    pre = split_preamble(text)
    if pre is None:
        print("instantiation_cost: no include block", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        header = str(path.parent / "__fusionlint_cost_preamble__.h")
        pch = os.path.join(tmp, "pre.pch")
        index = ci.Index.create()
        start = time.perf_counter()
        tu = index.parse(header, args=_pch_args(args), unsaved_files=unsaved + [(header, pre.header)])
        tu.save(pch)
        rows["PCH build"] = time.perf_counter() - start
        del tu
        main_args = list(args)
        i = main_args.index(PRELUDE)
        del main_args[i - 1:i + 1]
        main_args += ["-include-pch", pch]
        head = pre.body[:pre.body.index("int main()")]
        for name, body in [*BODIES.items(), ("whole body", pre.body[len(head):])]:
            rows[f"with PCH: {name}"], _ = timed_parse(str(path), main_args,
                                                       unsaved + [(header, pre.header), (str(path), head + body)])
    nvcc = nvcc_seconds(path, a.includes) if a.nvcc else None
    device = rows["with PCH: kernel body"] - rows["with PCH: types only"]
    print(f"{a.file} (libclang parses, seconds; {errors} errors in the full parse)")
    for name, secs in rows.items():
        ratio = f"   nvcc / this {nvcc / secs:5.1f}" if nvcc else ""
        print(f"  {name:<28} {secs:7.2f}{ratio}")
    print(f"  {'device side of the kernel':<28} {device:7.2f}   (kernel body - types only, with the PCH)")
    if nvcc:
        print(f"  {'nvcc -c':<28} {nvcc:7.2f}")
        print(f"  the device side alone caps instantiated mode at {nvcc / device:.1f}x nvcc on this file")
    if a.json:
        a.json.write_text(json.dumps({"file": str(a.file), "seconds": rows, "device_side": device, "nvcc": nvcc,
                                      "full_parse_errors": errors}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
