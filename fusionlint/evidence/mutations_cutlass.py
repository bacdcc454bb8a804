"""A seeded random-mutation test set of CUTLASS GEMMs, its device run, and its scoring.

Each program is one of the working kernels of ``kernels_ref/cutlass/*.cu`` (six CUTLASS 3.x
collective-builder GEMMs and one 2.x ``device::Gemm``) at a small problem size, with one or two
configuration fields changed at random to values users really write — legal or not — in one of
three code styles (file-scope aliases, a config struct, a templated wrapper), its problem size in
one of five forms. Each is a self-checking program: it runs the GEMM once (can_implement,
initialize, run), checks D against a host reference and prints the ``EVIDENCE`` lines of
``fusionlint_cutlass_probe.h``. Built with nvcc for sm_90a and run on a Hopper GPU, the programs
record the truth (does the configuration build, run and compute D?); fusionlint's findings on the
same files are then scored against it::

    python3 -m fusionlint.evidence.mutations_cutlass generate --seed 1 --count 320 --out DIR
    # on the GPU machine (tools/h200_cutlass_mutations.sh): build and run a slice, within a time limit
    FUSIONLINT_EVIDENCE_INCLUDES=<cutlass>/include:<cutlass>/util/include \\
        python3 -m fusionlint.evidence.mutations_cutlass run --dir DIR --out DIR-h200 -j 16 --time-limit 480
    # anywhere fusionlint is installed (util/include too: the probe header the programs include reads
    # cutlass/util/packed_stride.hpp, and without it every file falls back to the syntactic mode):
    fusionlint check --exit-zero --output-format json -I <cutlass>/include -I <cutlass>/util/include DIR \\
        > DIR-findings.json
    python3 -m fusionlint.evidence.mutations_cutlass evaluate --manifest DIR/manifest.json \\
        --truth DIR-h200.json --findings DIR-findings.json --markdown DIR-report.md

A program fails when it does not build, does not run to the end, a CUTLASS step or CUDA reports an
error, or D is wrong; fusionlint catches it when it reports an error-severity finding in that
file. Standard library only (the GPU machine has only python3); the program text is written by
:mod:`fusionlint.evidence.mutations_cutlass_emit`.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from fusionlint.evidence.mutation import mutate as mutate_fields
from fusionlint.evidence import harness
from fusionlint.evidence.mutations_cutlass_emit import (
    FORMS, GENERATIONS, STYLES, program_text, probe_header,
)

# ---- value domains: what users type (every name is a CUTLASS 4.2 one) -------------------------------
HALF, BF16, TF32, E4M3, E5M2 = ("cutlass::half_t", "cutlass::bfloat16_t", "cutlass::tfloat32_t",
                                "cutlass::float_e4m3_t", "cutlass::float_e5m2_t")
ROW, COL = "cutlass::layout::RowMajor", "cutlass::layout::ColumnMajor"
AB_TYPES_3X = [HALF, BF16, "float", TF32, E4M3, E5M2, "int8_t"]
CD_TYPES_3X = [HALF, BF16, "float", E4M3]
ACC_TYPES = ["float", HALF, "int32_t"]
AB_TYPES_2X = [HALF, BF16, "float", TF32, "int8_t"]
CD_TYPES_2X = [HALF, BF16, "float"]
LAYOUTS = [ROW, COL]
ALIGNMENTS = [1, 2, 4, 8, 16]
KERNEL_SCHEDULES = [
    "cutlass::gemm::KernelTmaWarpSpecialized", "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    "cutlass::gemm::KernelTmaWarpSpecializedPingpong", "cutlass::gemm::KernelTmaWarpSpecializedFP8FastAccum",
    "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum",
    "cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum", "cutlass::gemm::collective::KernelScheduleAuto"]
EPILOGUE_SCHEDULES = ["cutlass::epilogue::TmaWarpSpecialized", "cutlass::epilogue::TmaWarpSpecializedCooperative",
                      "cutlass::epilogue::NoSmemWarpSpecialized", "cutlass::epilogue::collective::EpilogueScheduleAuto"]
# "auto": StageCountAuto; "carveout": StageCountAutoCarveout<sizeof(CollectiveEpilogue::SharedStorage)>;
# "carveout_epi": StageCountAutoCarveoutEpi<CollectiveEpilogue>; an int: StageCount<n>
STAGES_3X: list = ["auto", "carveout", "carveout_epi", 2, 3, 4, 5, 6, 7, 8]
CLUSTERS = [[1, 1, 1], [2, 1, 1], [1, 2, 1], [2, 2, 1], [4, 1, 1], [1, 4, 1], [3, 1, 1], [1, 1, 2], [2, 4, 1]]
EPILOGUE_TILES: list = ["auto", [64, 32], [64, 64], [128, 32], [128, 64], [64, 16]]
THREADBLOCK_SHAPES = [[128, 256, 64], [256, 128, 64], [128, 128, 64], [128, 128, 32], [64, 64, 64], [128, 64, 64],
                      [64, 128, 64], [64, 64, 32], [256, 128, 32], [128, 256, 32], [256, 256, 64]]
WARP_SHAPES = [[64, 64, 64], [64, 64, 32], [32, 32, 64], [64, 32, 64], [32, 64, 64], [64, 64, 16], [32, 32, 32],
               [128, 64, 64]]
INSTRUCTION_SHAPES = [[16, 8, 16], [16, 8, 8], [16, 8, 32], [8, 8, 4], [1, 1, 1]]
ARCHS = ["cutlass::arch::Sm70", "cutlass::arch::Sm75", "cutlass::arch::Sm80", "cutlass::arch::Sm86",
         "cutlass::arch::Sm89", "cutlass::arch::Sm90"]
EXTENTS_MN = [64, 128, 256, 384, 500, 512, 768, 1000, 1024]
EXTENTS_K = [64, 100, 128, 250, 256, 384, 500, 512, 1000, 1024]

# field -> (domain, weight of being picked), per CUTLASS generation
FIELDS_3X: dict[str, tuple[list, float]] = {
    "tile_m": ([64, 128, 256], 6), "tile_n": ([16, 32, 64, 96, 100, 128, 136, 192, 256], 8),
    "tile_k": ([32, 64, 128, 256], 6), "cluster": (CLUSTERS, 8), "stages": (STAGES_3X, 8),
    "kernel_schedule": (KERNEL_SCHEDULES, 10), "epilogue_schedule": (EPILOGUE_SCHEDULES, 10),
    "element_a": (AB_TYPES_3X, 4), "element_b": (AB_TYPES_3X, 4), "element_c": (CD_TYPES_3X, 3),
    "element_d": (CD_TYPES_3X, 3), "element_acc": (ACC_TYPES, 3),
    "layout_a": (LAYOUTS, 3), "layout_b": (LAYOUTS, 3), "layout_c": (LAYOUTS, 3),
    "align_a": (ALIGNMENTS, 3), "align_b": (ALIGNMENTS, 3), "align_c": (ALIGNMENTS, 3),
    "epilogue_tile": (EPILOGUE_TILES, 4),
    "m": (EXTENTS_MN, 2), "n": (EXTENTS_MN, 2), "k": (EXTENTS_K, 3),
}
FIELDS_2X: dict[str, tuple[list, float]] = {
    "threadblock_shape": (THREADBLOCK_SHAPES, 10), "warp_shape": (WARP_SHAPES, 8),
    "instruction_shape": (INSTRUCTION_SHAPES, 6), "stages": ([1, 2, 3, 4, 5, 6, 7, 8], 8),
    "align_a": (ALIGNMENTS, 4), "align_b": (ALIGNMENTS, 4), "align_c": (ALIGNMENTS, 4),
    "element_a": (AB_TYPES_2X, 3), "element_b": (AB_TYPES_2X, 3), "element_c": (CD_TYPES_2X, 3),
    "element_acc": (ACC_TYPES, 3), "layout_a": (LAYOUTS, 3), "layout_b": (LAYOUTS, 3), "layout_c": (LAYOUTS, 3),
    "arch": (ARCHS, 6), "m": (EXTENTS_MN, 2), "n": (EXTENTS_MN, 2), "k": (EXTENTS_K, 3),
}
FIELDS = {"3.x": FIELDS_3X, "2.x": FIELDS_2X}
SHARE_2X = 0.3  # of the programs

# The problem sizes a base runs at (the mutations of m, n, k start from these): small, so that the
# host reference is cheap, and multiples of every tile extent and alignment of the bases.
BASE_PROBLEMS = [(256, 256, 128), (256, 256, 256), (512, 256, 256), (256, 512, 512), (512, 512, 256)]


# ---- base configurations: kernels_ref/cutlass/*.cu ---------------------------------------------------
def _base3x(ab: str, cd: str, align_ab: int, align_cd: int, tile: list[int], cluster: list[int], schedule: str,
            epilogue: str) -> dict:
    return {"element_a": ab, "element_b": ab, "element_c": cd, "element_d": cd, "element_acc": "float",
            "layout_a": ROW, "layout_b": COL, "layout_c": ROW,
            "align_a": align_ab, "align_b": align_ab, "align_c": align_cd,
            "tile_m": tile[0], "tile_n": tile[1], "tile_k": tile[2], "cluster": cluster, "stages": "carveout",
            "kernel_schedule": f"cutlass::gemm::{schedule}", "epilogue_schedule": f"cutlass::epilogue::{epilogue}",
            "epilogue_tile": "auto"}


COOP, PINGPONG = "KernelTmaWarpSpecializedCooperative", "KernelTmaWarpSpecializedPingpong"
COOP_EPI = "TmaWarpSpecializedCooperative"
BASES: dict[str, tuple[str, dict]] = {  # name -> (generation, configuration without the problem size)
    "bf16_coop_1x1": ("3.x", _base3x(BF16, BF16, 8, 8, [128, 256, 64], [1, 1, 1], COOP, COOP_EPI)),
    "bf16_coop_2x1": ("3.x", _base3x(BF16, BF16, 8, 8, [128, 256, 64], [2, 1, 1], COOP, COOP_EPI)),
    "fp16_pingpong_1x1": ("3.x", _base3x(HALF, HALF, 8, 8, [128, 128, 64], [1, 1, 1], PINGPONG, "TmaWarpSpecialized")),
    "fp16_pingpong_2x1": ("3.x", _base3x(HALF, HALF, 8, 8, [128, 128, 64], [2, 1, 1], PINGPONG, "TmaWarpSpecialized")),
    "fp8_e4m3_tn_fastaccum": ("3.x", _base3x(E4M3, BF16, 16, 8, [128, 256, 128], [2, 1, 1],
                                             "KernelTmaWarpSpecializedCooperativeFP8FastAccum", COOP_EPI)),
    "tf32_tn": ("3.x", _base3x("float", "float", 4, 4, [128, 128, 32], [1, 1, 1], COOP, COOP_EPI)),
    "fp16_sm80_2x": ("2.x", {"element_a": HALF, "element_b": HALF, "element_c": HALF, "element_acc": "float",
                             "layout_a": ROW, "layout_b": COL, "layout_c": ROW, "align_a": 8, "align_b": 8,
                             "align_c": 8, "threadblock_shape": [128, 256, 64], "warp_shape": [64, 64, 64],
                             "instruction_shape": [16, 8, 16], "stages": 3, "arch": "cutlass::arch::Sm80"}),
}


def base_config(name: str, problem: tuple[int, int, int]) -> dict:
    cfg = json.loads(json.dumps(BASES[name][1]))  # a deep copy
    cfg["m"], cfg["n"], cfg["k"] = problem
    return cfg


# ---- mutation ----------------------------------------------------------------------------------------
def mutate(rng: random.Random, generation: str, cfg: dict) -> tuple[dict, list[dict]]:
    """1 or 2 distinct fields, each given another value of its domain."""
    return mutate_fields(rng, FIELDS[generation], cfg)


def generate(seed: int, count: int) -> list[dict]:
    """The manifest entries (without the program text) of ``count`` programs for ``seed``: the code
    style cycles through :data:`STYLES` and the problem-size form through :data:`FORMS` (every
    pair once in 15 programs)."""
    rng = random.Random(seed)
    names_3x = sorted(n for n, (g, _) in BASES.items() if g == "3.x")
    names_2x = sorted(n for n, (g, _) in BASES.items() if g == "2.x")
    entries = []
    for i in range(count):
        style, form = STYLES[i % len(STYLES)], FORMS[(i // len(STYLES)) % len(FORMS)]
        base = rng.choice(names_2x) if rng.random() < SHARE_2X else rng.choice(names_3x)
        generation = BASES[base][0]
        problem = rng.choice(BASE_PROBLEMS)
        cfg, changes = mutate(rng, generation, base_config(base, problem))
        variant = rng.randrange(1 << 30)  # small per-program choices of spelling
        entries.append({"file": f"m{i:04d}_{style}.cu", "index": i, "base": base, "generation": generation,
                        "style": style, "problem_form": form, "base_problem": list(problem), "mutations": changes,
                        "config": cfg, "variant": variant})
    return entries


def base_entry(entry: dict) -> dict:
    """``entry`` without its mutations (the same base, problem, style and spelling choices)."""
    out = json.loads(json.dumps(entry))
    out["config"] = base_config(entry["base"], tuple(entry["base_problem"]))
    out["mutations"] = []
    return out


def write_set(seed: int, count: int, out: Path) -> list[dict]:
    """Write the programs, the probe header they include and ``manifest.json`` to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(probe_header(), out / probe_header().name)
    entries = generate(seed, count)
    for e in entries:
        (out / e["file"]).write_text(program_text(e), encoding="utf-8")
    manifest = {"generator": "fusionlint.evidence.mutations_cutlass", "format": 1, "seed": seed, "count": count,
                "styles": STYLES, "problem_forms": FORMS, "generations": GENERATIONS,
                "include": f"{probe_header().name} (copied next to the programs); the CUTLASS include and "
                           "util/include directories", "programs": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return entries


def distribution(entries: list[dict]) -> dict:
    return {"programs": len(entries), "generations": dict(Counter(e["generation"] for e in entries)),
            "styles": dict(Counter(e["style"] for e in entries)),
            "problem_forms": dict(Counter(e["problem_form"] for e in entries)),
            "bases": dict(sorted(Counter(e["base"] for e in entries).items())),
            "mutations_per_program": dict(Counter(len(e["mutations"]) for e in entries)),
            "fields": dict(sorted(Counter(f"{e['generation']} {m['field']}" for e in entries
                                          for m in e["mutations"]).items()))}


# ---- the device run: build and run a slice of the set within a time limit ----------------------------
NOT_BUILT = "not built: the run's time limit (--time-limit) was reached"


def device_toolchain(include_dirs: list[str], build_timeout: int = 600, run_timeout: int = 60) -> harness.Toolchain:
    """The evidence harness's toolchain for CUTLASS programs (its nvcc flags, sm_90a; include dirs
    from ``include_dirs`` and $FUSIONLINT_EVIDENCE_INCLUDES). CUTLASS's host adapter may call the
    driver API, so libcuda is linked (as ``fusionlint verify`` does); no cuBLAS."""
    return harness.Toolchain(include_dirs=list(include_dirs), link=["-lcuda"], build_timeout=build_timeout,
                             run_timeout=run_timeout)


def run_slice(sources: list[Path], jobs: int, tc: harness.Toolchain, time_limit: float,
              workdir: Path) -> list[harness.Outcome]:
    """Build each program and run it right after (the GPU is idle while others build). Builds not
    started when ``time_limit`` seconds have passed are skipped (build rc 124, :data:`NOT_BUILT`);
    builds in flight are cut at the limit (rc 124, "build timed out")."""
    deadline = time.monotonic() + time_limit

    def one(src: Path) -> harness.Outcome:
        left = deadline - time.monotonic()
        if left < 15:
            return harness.Outcome(str(src), 124, log=NOT_BUILT)
        t = dataclasses.replace(tc, build_timeout=int(min(tc.build_timeout, left)))
        start = time.monotonic()
        rc, log = harness.build(src, harness._exe(src, workdir), t)
        took = time.monotonic() - start
        if rc != 0:
            return harness.Outcome(str(src), rc, log=harness.clip_log(f"build {took:.0f}s\n{log}"))
        o = harness.run_built(src, workdir, int(max(10, min(tc.run_timeout, deadline + 30 - time.monotonic()))))
        o.log = f"build {took:.0f}s\n{o.log}"
        return o

    with cf.ThreadPoolExecutor(max(1, jobs)) as pool:
        return list(pool.map(one, sources))


def run_main(args: argparse.Namespace) -> int:
    manifest = json.loads((args.dir / "manifest.json").read_text(encoding="utf-8"))
    entries = manifest["programs"][args.offset:args.offset + args.count if args.count else None]
    sources = [args.dir / e["file"] for e in entries]
    includes = [*(args.include or []), str(probe_header().parent)]
    tc = device_toolchain(includes, run_timeout=args.run_timeout)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fusionlint-mutc-") as tmp:
        info = harness.machine(Path(tmp), harness.Toolchain(include_dirs=includes))
        info.update(slice={"offset": args.offset, "count": len(sources), "of": len(manifest["programs"]),
                           "seed": manifest["seed"], "time_limit_s": args.time_limit},
                    command=" ".join(tc.command(Path("SOURCE.cu"), Path("SOURCE.bin"))))
        left = args.time_limit - (time.monotonic() - start)
        outcomes = run_slice(sources, args.jobs, tc, left, Path(tmp))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    harness.write_record(args.out, info, outcomes)
    built = sum(o.build_rc == 0 for o in outcomes)
    skipped = sum(o.log == NOT_BUILT for o in outcomes)
    print(f"wrote {args.out}.json/.txt: {len(outcomes)} programs ({skipped} not built for the time limit), "
          f"{built} built, {sum(o.works for o in outcomes)} work, in {time.monotonic() - start:.0f}s")
    redo = [args.offset + i for i, o in enumerate(outcomes) if o.build_rc == 124]
    if redo:
        print(f"{len(redo)} not built or cut by the time limit; next slice: --offset {redo[0]}")
    else:
        print(f"slice done; next slice: --offset {args.offset + len(outcomes)}")
    return 0


# ---- scoring -----------------------------------------------------------------------------------------
def merge_truth(records: list[dict]) -> dict[str, dict]:
    """``{file name: harness outcome}`` over one or more records (slices of one set); a real result
    wins over a program the time limit left unbuilt."""
    out: dict[str, dict] = {}
    for r in records:
        for path, o in r.get("programs", {}).items():
            name = Path(path).name
            if name not in out or unscored(out[name]):
                out[name] = o
    return out


def unscored(o: dict) -> str:
    """Why a harness outcome says nothing about the configuration ("" when it does): not built
    (time limit), build or run timed out, a library missing at link time (the machine, not the GEMM)."""
    if o.get("build_rc") == 124:
        return "not built (time limit)" if str(o.get("log", "")).startswith("not built") else "build timed out"
    if o.get("build_rc") and "cannot find -l" in str(o.get("log", "")):
        return "link failed: a library is missing on the build machine"
    if o.get("build_rc") == 0 and o.get("run_rc") is None:
        return "run timed out or not run"
    return ""


def outcome_text(o: dict) -> str:
    """The harness's words for an outcome (compile error: <static_assert text>, <step> -> <status>...)."""
    fields = {k: o.get(k) for k in ("source", "build_rc", "run_rc", "calls", "numerics", "cuda_errors", "tflops",
                                    "log", "numerics_skipped")}
    fields = {k: v for k, v in fields.items() if v is not None or k == "run_rc"}
    return harness.describe(harness.Outcome(**{"source": "", "build_rc": 0, **fields}))


def evaluate(manifest: dict, truth: dict[str, dict], findings: list[dict]) -> dict:
    """Score the findings against the truth: recall on the failing programs, false errors on the
    working ones, per mutated field, per style, per problem form, per generation and per rule."""
    errors: dict[str, list[dict]] = defaultdict(list)
    others = 0
    for f in findings:
        if f.get("severity") == "error":
            errors[Path(f.get("path", "")).name].append(f)
        else:
            others += 1
    rows, not_run, not_scored = [], [], []
    for e in manifest["programs"]:
        o = truth.get(e["file"])
        if o is None:
            not_run.append(e["file"])
            continue
        if why := unscored(o):
            not_scored.append({"file": e["file"], "why": why})
            continue
        errs = errors.get(e["file"], [])
        rows.append({"file": e["file"], "base": e["base"], "generation": e["generation"], "style": e["style"],
                     "problem_form": e["problem_form"], "mutations": e["mutations"], "works": bool(o.get("works")),
                     "outcome": outcome_text(o), "errors": errs, "codes": sorted({f.get("code", "?") for f in errs})})
    failing = [r for r in rows if not r["works"]]
    working = [r for r in rows if r["works"]]

    def tally(key) -> dict[str, dict]:
        out: dict[str, Counter] = defaultdict(Counter)
        for r in rows:
            for k in key(r):
                c = out[k]
                c["programs"] += 1
                if r["works"]:
                    c["working"] += 1
                    c["false_errors"] += bool(r["errors"])
                else:
                    c["failing"] += 1
                    c["caught" if r["errors"] else "missed"] += 1
        return {k: dict(v) for k, v in sorted(out.items())}

    per_rule: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        for code in r["codes"]:
            per_rule[code]["failing" if not r["works"] else "working"] += 1
    kinds = Counter(harness.kind_of(r["outcome"]) for r in failing)
    caught = sum(bool(r["errors"]) for r in failing)
    false_err = [r for r in working if r["errors"]]

    def brief(r: dict) -> dict:
        return {"file": r["file"], "base": r["base"], "mutations": r["mutations"], "outcome": r["outcome"]}

    return {
        "programs": len(manifest["programs"]), "scored": len(rows), "not_run": not_run, "not_scored": not_scored,
        "working": len(working), "failing": len(failing), "caught": caught,
        "recall": caught / len(failing) if failing else None,
        "false_error_rate": len(false_err) / len(working) if working else None,
        "failure_kinds": dict(kinds.most_common()),
        "misses": [brief(r) for r in failing if not r["errors"]],
        "false_errors": [{**brief(r), "findings": [{"code": f.get("code"), "line": f.get("line"),
                                                    "message": f.get("message")} for f in r["errors"]]}
                         for r in false_err],
        "per_field": tally(lambda r: [f"{r['generation']} {m['field']}" for m in r["mutations"]]),
        "per_style": tally(lambda r: [r["style"]]),
        "per_problem_form": tally(lambda r: [r["problem_form"]]),
        "per_generation": tally(lambda r: [r["generation"]]),
        "per_rule": {k: dict(v) for k, v in sorted(per_rule.items())},
        "non_error_findings": others,
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _short(v) -> str:
    if isinstance(v, list):
        return "x".join(str(x) for x in v)
    return str(v).rsplit("::", 1)[-1]


def _muts(ms: list[dict]) -> str:
    return "; ".join(f"{m['field']} {_short(m['old'])} -> {_short(m['new'])}" for m in ms)


def summary_text(s: dict) -> str:
    lines = [f"programs {s['programs']} (scored {s['scored']}, not in the record {len(s['not_run'])}, "
             f"not scored {len(s['not_scored'])}): {s['working']} work, {s['failing']} fail "
             f"({', '.join(f'{k} {v}' for k, v in s['failure_kinds'].items())})",
             f"recall {_pct(s['recall'])} ({s['caught']}/{s['failing']} failing programs with an error finding)",
             f"false errors {len(s['false_errors'])}/{s['working']} working programs ({_pct(s['false_error_rate'])})"]
    for fe in s["false_errors"]:
        lines.append(f"  false error {fe['file']} [{_muts(fe['mutations'])}]: "
                     + "; ".join(f"{f['code']} {f['message']}" for f in fe["findings"]))
    for m in s["misses"]:
        lines.append(f"  miss {m['file']} [{_muts(m['mutations'])}]: {m['outcome']}")
    for title, key in (("per style", "per_style"), ("per problem form", "per_problem_form"),
                       ("per generation", "per_generation")):
        lines.append(f"{title}: " + ", ".join(
            f"{k} recall {v.get('caught', 0)}/{v.get('failing', 0)}, false errors {v.get('false_errors', 0)}/"
            f"{v.get('working', 0)}" for k, v in s[key].items()))
    return "\n".join(lines)


def _table(title: str, first: str, rows: dict[str, dict]) -> list[str]:
    md = ["", f"## {title}", "", f"| {first} | programs | failing | caught | missed | working | false errors |",
          "|---|---|---|---|---|---|---|"]
    for k, c in rows.items():
        md.append(f"| {k} | {c.get('programs', 0)} | {c.get('failing', 0)} | {c.get('caught', 0)} | "
                  f"{c.get('missed', 0)} | {c.get('working', 0)} | {c.get('false_errors', 0)} |")
    return md


def markdown(s: dict) -> str:
    md = ["# CUTLASS random-mutation evaluation", "",
          f"- programs: {s['programs']} (scored {s['scored']}; not in the record: {len(s['not_run'])}; "
          f"not scored (not built for the time limit, or timed out): {len(s['not_scored'])})",
          f"- working: {s['working']}, failing: {s['failing']} ("
          + ", ".join(f"{k}: {v}" for k, v in s["failure_kinds"].items()) + ")",
          f"- **recall**: {_pct(s['recall'])} ({s['caught']} of {s['failing']} failing programs get an error)",
          f"- **false errors**: {len(s['false_errors'])} of {s['working']} working programs "
          f"({_pct(s['false_error_rate'])})"]
    md += ["", "## False errors", ""]
    if s["false_errors"]:
        md += ["| program | base | mutations | outcome | findings |", "|---|---|---|---|---|"]
        for fe in s["false_errors"]:
            found = "<br>".join(f"{f['code']}: {f['message']}" for f in fe["findings"]).replace("|", "\\|")
            md.append(f"| {fe['file']} | {fe['base']} | {_muts(fe['mutations'])} | {fe['outcome']} | {found} |")
    else:
        md.append("None.")
    md += ["", "## Misses", ""]
    if s["misses"]:
        md += ["| program | base | mutations | outcome |", "|---|---|---|---|"]
        for m in s["misses"]:
            md.append(f"| {m['file']} | {m['base']} | {_muts(m['mutations'])} | "
                      f"{m['outcome'].replace('|', chr(92) + '|')} |")
    else:
        md.append("None.")
    md += _table("Per mutated field", "field", s["per_field"])
    md += _table("Per style", "style", s["per_style"])
    md += _table("Per problem-size form", "form", s["per_problem_form"])
    md += _table("Per CUTLASS generation", "generation", s["per_generation"])
    md += ["", "## Per rule", "", "| rule | on failing programs | on working programs |", "|---|---|---|"]
    for code, c in s["per_rule"].items():
        md.append(f"| {code} | {c.get('failing', 0)} | {c.get('working', 0)} |")
    if s["not_scored"]:
        md += ["", "Not scored: " + ", ".join(f"{n['file']} ({n['why']})" for n in s["not_scored"])]
    return "\n".join(md) + "\n"


# ---- command line ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m fusionlint.evidence.mutations_cutlass",
                                 description="Seeded random-mutation CUTLASS GEMMs, their device run and scoring.")
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write DIR/mNNNN_<style>.cu, the probe header and DIR/manifest.json")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--out", required=True, type=Path)
    r = sub.add_parser("run", help="build and run (a slice of) a generated set on this GPU machine")
    r.add_argument("--dir", required=True, type=Path, help="the generated set (with its manifest.json)")
    r.add_argument("--out", required=True, type=Path, help="record path without suffix (.json and .txt)")
    r.add_argument("--offset", type=int, default=0, help="first program of the slice (manifest order)")
    r.add_argument("--count", type=int, default=0, help="programs in the slice (0: all from --offset)")
    r.add_argument("-I", "--include", action="append", help="an include directory (also "
                   f"${harness.EXTRA_INCLUDES_ENV}, ':'-separated)")
    r.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    r.add_argument("--time-limit", type=float, default=480,
                   help="seconds for the whole slice; what is not built by then is recorded as not built")
    r.add_argument("--run-timeout", type=int, default=60)
    ev = sub.add_parser("evaluate", help="score fusionlint's findings against the device record")
    ev.add_argument("--manifest", required=True, type=Path)
    ev.add_argument("--truth", required=True, type=Path, nargs="+", help="the harness record(s) (<out>.json)")
    ev.add_argument("--findings", required=True, type=Path,
                    help="fusionlint check --output-format json output on the programs")
    ev.add_argument("--markdown", type=Path, help="also write the report as markdown")
    ev.add_argument("--json", type=Path, help="also write the scores as JSON")
    args = ap.parse_args(argv)

    if args.command == "generate":
        entries = write_set(args.seed, args.count, args.out)
        print(json.dumps(distribution(entries), indent=1))
        print(f"wrote {len(entries)} programs and {args.out / 'manifest.json'}")
        return 0
    if args.command == "run":
        if shutil.which("nvcc") is None:
            print("mutations_cutlass run: nvcc not found on PATH", file=sys.stderr)
            return 2
        return run_main(args)
    try:
        manifest = json.loads(args.manifest.read_text(encoding="utf-8"))
        truth = merge_truth([json.loads(t.read_text(encoding="utf-8")) for t in args.truth])
        findings = json.loads(args.findings.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"evaluate: cannot read the inputs: {exc}", file=sys.stderr)
        return 2
    s = evaluate(manifest, truth, findings)
    print(summary_text(s))
    if args.markdown:
        args.markdown.write_text(markdown(s), encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(s, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
