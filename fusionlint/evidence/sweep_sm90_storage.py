"""nvcc's own sizes of CUTLASS 4.2's sm_90 shared storage, over a seeded random sample of builder configurations.

For each configuration (tile shape, element types and layouts of A/B/C/D, kernel and epilogue
schedules, epilogue tile, fusion, stage-count form) a small host program built by nvcc prints
``sizeof(CollectiveEpilogue::SharedStorage)``, the mainloop's ``DispatchPolicy::Stages`` that the
collective builder chose with ``StageCountAutoCarveout<sizeof(CollectiveEpilogue::SharedStorage)>``
(or ``StageCountAuto``) and ``sizeof(GemmKernel::SharedStorage)``. Nothing runs on a GPU: the numbers
are compile-time constants, read by the compiler users build with. They are the truth that
:mod:`fusionlint.model.sm90_storage` (the builders' arithmetic that source mode uses) is tested
against over the whole sample (tests/test_sm90_storage.py)::

    python3 -m fusionlint.evidence.sweep_sm90_storage run --seed 1 --count 400 \\
        --cutlass .cutlass/include --out kernels_ref/evidence/nvcc-sm90-storage-sweep.json -j 2

A configuration whose program does not compile is recorded with the compiler's first error line
(its batch is split until each failing configuration stands alone). Standard library only.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HALF, BF16, TF32, E4M3, E5M2 = ("cutlass::half_t", "cutlass::bfloat16_t", "cutlass::tfloat32_t",
                                "cutlass::float_e4m3_t", "cutlass::float_e5m2_t")
ROW, COL = "cutlass::layout::RowMajor", "cutlass::layout::ColumnMajor"
BITS = {HALF: 16, BF16: 16, TF32: 32, "float": 32, E4M3: 8, E5M2: 8, "void": 0}
KS = "cutlass::gemm::"
ES = "cutlass::epilogue::"
# kernel schedule -> the TMA epilogue schedule it takes
KERNELS = {
    KS + "KernelTmaWarpSpecialized": ES + "TmaWarpSpecialized",
    KS + "KernelTmaWarpSpecializedPingpong": ES + "TmaWarpSpecialized",
    KS + "KernelTmaWarpSpecializedCooperative": ES + "TmaWarpSpecializedCooperative",
}
FP8_KERNELS = {
    KS + "KernelTmaWarpSpecializedFP8FastAccum": ES + "TmaWarpSpecialized",
    KS + "KernelTmaWarpSpecializedPingpongFP8FastAccum": ES + "TmaWarpSpecialized",
    KS + "KernelTmaWarpSpecializedCooperativeFP8FastAccum": ES + "TmaWarpSpecializedCooperative",
}
FUSIONS = ["default", ES + "fusion::LinCombEltAct<cutlass::epilogue::thread::ReLu, {d}, float, {c}, float>"]
INCLUDES = ["cute/tensor.hpp", "cutlass/cutlass.h", "cutlass/gemm/dispatch_policy.hpp",
            "cutlass/gemm/collective/collective_builder.hpp", "cutlass/epilogue/collective/collective_builder.hpp",
            "cutlass/gemm/kernel/gemm_universal.hpp"]


def sample(seed: int, count: int) -> list[dict]:
    """``count`` configurations, seeded; each one the builders should accept (the rules' own
    constraints are kept: schedule pairs, TileM per schedule, K-major 8/32-bit operands)."""
    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < count:
        ab = rng.choice([HALF, BF16, HALF, BF16, E4M3, TF32])
        kernels = dict(KERNELS, **(FP8_KERNELS if ab == E4M3 else {}))
        kernel = rng.choice(sorted(kernels))
        coop = "Cooperative" in kernel
        m = rng.choice([128, 256]) if coop else rng.choice([64, 128])
        n = rng.choice([16, 32, 48, 64, 64, 80, 96, 128, 128, 128, 144, 160, 192, 192, 224, 256, 256])
        k_bytes = rng.choice([64, 128, 128, 256])
        k = k_bytes * 8 // BITS[ab]
        la, lb = (ROW, COL) if BITS[ab] != 16 else (rng.choice([ROW, COL]), rng.choice([ROW, COL]))
        d = rng.choice([HALF, BF16, "float", HALF, BF16] + ([E4M3] if ab == E4M3 else []))
        c = rng.choice(["void", d, d, HALF, BF16, "float"])
        lc = rng.choice([ROW, COL])
        ld = rng.choice([lc, lc, ROW, COL])
        epi = rng.choice(["tma", "tma", "tma", "nosmem", "auto"])
        epilogue_schedule = {"tma": kernels[kernel], "nosmem": ES + "NoSmemWarpSpecialized",
                             "auto": ES + "collective::EpilogueScheduleAuto"}[epi]
        if epi == "auto" and rng.random() < 0.5:
            kernel = KS + "collective::KernelScheduleAuto"
        tile = "auto"
        if epi == "tma" and rng.random() < 0.3:
            em = 128 if coop else 64
            en = rng.choice([x for x in (16, 32, 64) if n % x == 0 and x <= n])
            if m % em == 0:
                tile = [em, en]
        out.append({"id": len(out), "element_a": ab, "element_b": ab, "layout_a": la, "layout_b": lb,
                    "tile": [m, n, k], "element_c": c, "layout_c": lc, "element_d": d, "layout_d": ld,
                    "kernel_schedule": kernel, "epilogue_schedule": epilogue_schedule, "epilogue_tile": tile,
                    "fusion": rng.choice(FUSIONS) if epi == "tma" else "default",  # NoSmem/Auto: no fusion
                    "stage_count": rng.choice(["carveout", "carveout", "carveout", "auto"])})
    return out


def rs_grid() -> list[dict]:
    """The register-sourced (RS) mainloop's K-iteration edge, whole: tf32 and FP8 operands in all four
    layout pairs (only A RowMajor x B ColumnMajor is both K-major and takes the SS builder) and
    TileK of 2, 3, 4 and 8 MMA K-blocks (tf32 8, FP8 32 per block), with the cooperative (128-row) and
    pingpong (64-row) kernels, C and D float / half. Ids from 1000 (apart from :func:`sample`'s)."""
    out: list[dict] = []
    for ab, block, kernels in ((TF32, 8, [KS + "KernelTmaWarpSpecializedCooperative", KS + "KernelTmaWarpSpecializedPingpong"]),
                               (E4M3, 32, [KS + "KernelTmaWarpSpecializedCooperative"])):
        for la in (ROW, COL):
            for lb in (ROW, COL):
                for blocks in (2, 3, 4, 8):
                    for kernel in kernels:
                        coop = "Cooperative" in kernel
                        d = "float" if ab == TF32 else HALF
                        out.append({"id": 1000 + len(out), "element_a": ab, "element_b": ab, "layout_a": la,
                                    "layout_b": lb, "tile": [128 if coop else 64, 128, blocks * block],
                                    "element_c": d, "layout_c": ROW, "element_d": d, "layout_d": ROW,
                                    "kernel_schedule": kernel, "epilogue_schedule": KERNELS[kernel],
                                    "epilogue_tile": "auto", "fusion": "default", "stage_count": "carveout"})
    return out


def slice_grid() -> list[dict]:
    """The mainloop's stage slice SmemLayout{}(_,_,Int<0>{}) around CuTe's divisibility checks (FL333):
    SS GEMMs (A RowMajor x B ColumnMajor) of half, tf32 and FP8 with TileN an odd multiple of 8 (and
    even neighbours) at one and at two or more swizzle atoms along K, and the RS mainloop's tf32 A
    ColumnMajor at TileK 40 and 48; cooperative 128-row tiles, C and D of the A/B type (float for
    tf32). Ids from 2000."""
    out: list[dict] = []
    ss = [(HALF, [24, 40, 48, 56, 136], [64, 128]), (TF32, [48, 80, 96, 112, 144], [32, 64]),
          (E4M3, [24, 40, 48], [128, 256])]
    kernel = KS + "KernelTmaWarpSpecializedCooperative"
    for ab, ns, ks in ss:
        for n in ns:
            for k in ks:
                d = "float" if ab == TF32 else HALF if ab == E4M3 else ab
                out.append({"id": 2000 + len(out), "element_a": ab, "element_b": ab, "layout_a": ROW, "layout_b": COL,
                            "tile": [128, n, k], "element_c": d, "layout_c": ROW, "element_d": d, "layout_d": ROW,
                            "kernel_schedule": kernel, "epilogue_schedule": KERNELS[kernel],
                            "epilogue_tile": "auto", "fusion": "default", "stage_count": "carveout"})
    for k in (40, 48):
        out.append({"id": 2000 + len(out), "element_a": TF32, "element_b": TF32, "layout_a": COL, "layout_b": COL,
                    "tile": [128, 128, k], "element_c": "float", "layout_c": ROW, "element_d": "float", "layout_d": ROW,
                    "kernel_schedule": kernel, "epilogue_schedule": KERNELS[kernel],
                    "epilogue_tile": "auto", "fusion": "default", "stage_count": "carveout"})
    return out


GRIDS = {"rs": rs_grid, "slice": slice_grid}


def _int(v: int) -> str:
    return f"cute::Int<{v}>"


def _alignment(element: str) -> int:
    return 128 // BITS[element] if BITS[element] else 8


def declarations(cfg: dict) -> str:
    """The namespace ``cfg<id>`` with the configuration's CollectiveEpilogue, CollectiveMainloop and GemmKernel."""
    m, n, k = cfg["tile"]
    c, d = cfg["element_c"], cfg["element_d"]
    tile = "cutlass::epilogue::collective::EpilogueTileAuto" if cfg["epilogue_tile"] == "auto" else \
        f"cute::Shape<{', '.join(_int(x) for x in cfg['epilogue_tile'])}>"
    fusion = "" if cfg["fusion"] == "default" else ",\n    " + cfg["fusion"].format(d=d, c=d if c == "void" else c)
    align_c = _alignment(d if c == "void" else c)
    stages = "cutlass::gemm::collective::StageCountAuto" if cfg["stage_count"] == "auto" else \
        "cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>"
    return f"""namespace cfg{cfg['id']} {{
using TileShape = cute::Shape<{_int(m)}, {_int(n)}, {_int(k)}>;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape, {tile},
    float, float, {c}, {cfg['layout_c']}, {align_c}, {d}, {cfg['layout_d']}, {_alignment(d)},
    {cfg['epilogue_schedule']}{fusion}>::CollectiveOp;
using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    {cfg['element_a']}, {cfg['layout_a']}, {_alignment(cfg['element_a'])},
    {cfg['element_b']}, {cfg['layout_b']}, {_alignment(cfg['element_b'])}, float,
    TileShape, ClusterShape, {stages}, {cfg['kernel_schedule']}>::CollectiveOp;
using GemmKernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue>;
}}
"""


def program(cfgs: list[dict]) -> str:
    lines = [f"#include \"{h}\"" for h in INCLUDES] + ["#include <cstdio>", ""]
    lines += [declarations(c) for c in cfgs]
    lines.append("int main() {")
    for c in cfgs:
        ns = f"cfg{c['id']}"
        lines.append(f"  std::printf(\"%d %zu %d %zu\\n\", {c['id']}, sizeof(typename {ns}::CollectiveEpilogue::"
                     f"SharedStorage), int({ns}::CollectiveMainloop::DispatchPolicy::Stages), "
                     f"sizeof(typename {ns}::GemmKernel::SharedStorage));")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def gemm_program(cfg: dict, of: str = "kernels_ref/evidence/nvcc-sm90-storage-sweep.json") -> str:
    """A self-checking program of one configuration: its GEMM run once at twice its tile (K four times)
    through ``probe_gemm3x`` of fusionlint_cutlass_probe.h, which prints the ``EVIDENCE`` lines the
    harness (:mod:`fusionlint.evidence.harness`) records. Built and run on the H200 for the automatic
    stage counts whose kernel storage lies on either side of sm_90's capacity."""
    m, n, k = cfg["tile"]
    lines = [f"// configuration {cfg['id']} of {of}"]
    lines += [f"#include \"{h}\"" for h in INCLUDES]
    lines += ["#include \"cutlass/gemm/device/gemm_universal_adapter.h\"", "#include \"fusionlint_cutlass_probe.h\"", "",
              declarations(cfg), f"using Gemm = cutlass::gemm::device::GemmUniversalAdapter<cfg{cfg['id']}::GemmKernel>;",
              f"int main() {{ probe_gemm3x<Gemm>({2 * m}, {2 * n}, {4 * k}); return 0; }}", ""]
    return "\n".join(lines)


def capacity_edge(record: dict) -> list[dict]:
    """The compiled configurations with StageCountAuto, a TMA epilogue and the default fusion: those whose
    kernel storage exceeds 232448 bytes (initialize() should fail) and those that fit (it should not)."""
    return [c for c in record["configurations"] if c["compiles"] and c["stage_count"] == "auto"
            and c["fusion"] == "default" and c["epilogue_schedule"].rsplit("::", 1)[-1].startswith("TmaWarp")]


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line:
            return re.sub(r"^.*?error[^:]*:\s*", "", line).strip()[:300]
    return text.strip().splitlines()[-1][:300] if text.strip() else "no output"


def measure(cfgs: list[dict], cutlass: str, work: Path) -> dict[int, dict]:
    """Build and run one program of ``cfgs``; a batch that does not compile is halved until each
    failing configuration stands alone."""
    tag = f"b{cfgs[0]['id']}_{len(cfgs)}"
    src, exe = work / f"{tag}.cu", work / tag
    src.write_text(program(cfgs))
    cmd = ["nvcc", "-std=c++17", "-arch=sm_90a", "--expt-relaxed-constexpr", "-w", "-I", cutlass, str(src),
           "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True)
    if build.returncode != 0:
        if len(cfgs) == 1:
            return {cfgs[0]["id"]: {"compiles": False, "error": _first_error(build.stdout + build.stderr)}}
        half = len(cfgs) // 2
        return {**measure(cfgs[:half], cutlass, work), **measure(cfgs[half:], cutlass, work)}
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        i, epi, stages, kernel = line.split()
        got[int(i)] = {"compiles": True, "epilogue_storage_bytes": int(epi), "mainloop_stages": int(stages),
                       "kernel_storage_bytes": int(kernel)}
    return got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="sweep_sm90_storage", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--count", type=int, default=400)
    r.add_argument("--batch", type=int, default=25)
    r.add_argument("--cutlass", required=True, help="the nvidia-cutlass include directory")
    r.add_argument("--out", required=True)
    r.add_argument("-j", type=int, default=os.cpu_count() or 1)
    w = sub.add_parser("write", help="write a grid's self-checking programs (gemm_program) into a directory")
    w.add_argument("--grid", choices=sorted(GRIDS), required=True)
    w.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "write":
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        for c in GRIDS[a.grid]():
            (out / f"{a.grid}{c['id']}.cu").write_text(
                gemm_program(c, f"fusionlint.evidence.sweep_sm90_storage.{GRIDS[a.grid].__name__}()"))
        return 0
    cfgs = sample(a.seed, a.count)
    batches = [cfgs[i:i + a.batch] for i in range(0, len(cfgs), a.batch)]
    t0 = time.time()
    results: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(a.j) as pool:
        for done, got in enumerate(pool.map(lambda b: measure(b, a.cutlass, Path(tmp)), batches), 1):
            results.update(got)
            print(f"{done}/{len(batches)} batches, {time.time() - t0:.0f} s", file=sys.stderr)
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    record = {"what": "sizeof(CollectiveEpilogue::SharedStorage), the mainloop builder's Stages and "
                      "sizeof(GemmKernel::SharedStorage), printed by nvcc-built host programs",
              "nvcc": nvcc, "cutlass": "nvidia-cutlass 4.2.0.0", "seed": a.seed, "count": a.count,
              "flags": "-std=c++17 -arch=sm_90a --expt-relaxed-constexpr",
              "configurations": [dict(c, **results[c["id"]]) for c in cfgs]}
    Path(a.out).write_text(json.dumps(record, indent=1) + "\n")
    ok = sum(1 for c in record["configurations"] if c["compiles"])
    print(f"{ok} of {len(cfgs)} configurations compile; {time.time() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
