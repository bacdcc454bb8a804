"""The CUTLASS 2.x thread-block size edge, measured whole: ``device::Gemm`` configurations of 16 and
32 warps (512 and 1024 threads: ThreadblockShape / WarpShape, K split included) next to 8-warp
neighbours, as self-checking programs in the mutation set's layout (``manifest.json``, so that
``mutations_cutlass run`` builds and runs them on the GPU machine and ``mutations_cutlass evaluate``
scores fusionlint on them).

CUTLASS 2.x launches ``cutlass::Kernel<GemmKernel>`` (cutlass/device_kernel.h), which has no
``__launch_bounds__``: ptxas may give each thread up to 255 registers, and a block of 512 threads
fits the SM's 65,536 registers only at 128 or fewer. The seeded mutation sets found 16-warp
blocks failing in ``run()`` (kErrorInternal) while lint stayed silent (seed 1 m0262; seed 2 m0022,
m0165); this grid asks the GPU where that edge lies. Each kernel's register count comes from
``nvcc -cubin -Xptxas -v`` of the same programs (kernels_ref/evidence/h200-2x-threads-grid-ptxas.txt).

    python3 -m fusionlint.evidence.grid_2x_threads write --out /tmp/g2x
    python3 -m fusionlint.evidence.mutations_cutlass run --dir /tmp/g2x --out OUT/h200-2x-threads-grid -j 16 ...
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from fusionlint.evidence.mutations_cutlass import BASES, base_config
from fusionlint.evidence.mutations_cutlass_emit import program_text, probe_header

HALF, BF16, TF32 = "cutlass::half_t", "cutlass::bfloat16_t", "cutlass::tfloat32_t"

# (threadblock, warp) pairs: 16 warps, 32 warps, and 8-warp neighbours
SHAPES = [
    ([128, 128, 32], [32, 32, 32]), ([128, 128, 64], [32, 32, 64]), ([64, 128, 64], [16, 32, 64]),
    ([128, 64, 64], [32, 16, 64]), ([64, 64, 64], [16, 16, 64]), ([128, 256, 32], [32, 64, 32]),
    ([256, 128, 32], [64, 32, 32]), ([256, 256, 32], [64, 64, 32]), ([128, 256, 64], [64, 64, 32]),
    ([128, 128, 64], [64, 32, 32]),  # 16 warps by shape (the last two with K split in two)
    ([128, 128, 32], [16, 32, 32]), ([64, 128, 64], [16, 16, 64]), ([128, 256, 32], [32, 32, 32]),  # 32 warps
    ([128, 128, 32], [64, 32, 32]), ([64, 128, 64], [32, 32, 64]), ([128, 128, 64], [32, 64, 64]),  # 8 warps
]
# element A/B, accumulator, C, instruction shape, alignment of A/B and of C
TYPES = [(HALF, "float", HALF, [16, 8, 16], 8, 8), (HALF, HALF, HALF, [16, 8, 16], 8, 8),
         (BF16, "float", BF16, [16, 8, 16], 8, 8), (TF32, "float", "float", [16, 8, 8], 4, 4)]


def warps(tb: list[int], w: list[int]) -> int:
    return (tb[0] // w[0]) * (tb[1] // w[1]) * (tb[2] // w[2])


def grid() -> list[dict]:
    """Manifest entries: every shape pair with fp16 (float accumulator); the 16-warp pairs and the
    8-warp neighbours also with a half accumulator, bf16 and tf32; 3 stages (and 2 for fp16)."""
    out: list[dict] = []
    for tb, w in SHAPES:
        for ab, acc, c, inst, align, align_c in TYPES:
            if ab != HALF or acc != "float":
                if tb[2] != w[2] and warps(tb, w) != 16:
                    continue
            for stages in ((3, 2) if (ab, acc) == (HALF, "float") else (3,)):
                cfg = base_config("fp16_sm80_2x", (512, 512, 256))
                cfg.update(element_a=ab, element_b=ab, element_c=c, element_acc=acc, instruction_shape=inst,
                           align_a=align, align_b=align, align_c=align_c, threadblock_shape=tb, warp_shape=w,
                           stages=stages)
                if tb[2] % inst[2] or w[2] % inst[2]:
                    continue
                i = len(out)
                out.append({"file": f"t{i:03d}_plain.cu", "index": i, "base": "fp16_sm80_2x", "generation": "2.x",
                            "style": "plain", "problem_form": "constexpr", "base_problem": [512, 512, 256],
                            "mutations": [{"field": k, "old": BASES["fp16_sm80_2x"][1].get(k), "new": cfg[k]}
                                          for k in ("element_a", "element_acc", "threadblock_shape", "warp_shape",
                                                    "stages") if cfg[k] != BASES["fp16_sm80_2x"][1].get(k)],
                            "config": cfg, "variant": 0, "warps": warps(tb, w)})
    return out


def write(out: Path) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(probe_header(), out / probe_header().name)
    entries = grid()
    for e in entries:
        (out / e["file"]).write_text(program_text(e), encoding="utf-8")
    manifest = {"generator": "fusionlint.evidence.grid_2x_threads", "format": 1, "seed": 0, "count": len(entries),
                "include": f"{probe_header().name} (copied next to the programs); the CUTLASS include and "
                           "util/include directories", "programs": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="grid_2x_threads", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="write the grid's programs and manifest.json into a directory")
    w.add_argument("--out", required=True, type=Path)
    a = ap.parse_args(argv)
    entries = write(a.out)
    by = {}
    for e in entries:
        by[e["warps"]] = by.get(e["warps"], 0) + 1
    print(f"{len(entries)} programs; by warps: {dict(sorted(by.items()))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
