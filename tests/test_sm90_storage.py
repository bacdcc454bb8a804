"""Source mode's sizes of the sm_90 builders' shared memory against nvcc's own, over the whole sample.

kernels_ref/evidence/nvcc-sm90-storage-sweep.json holds, for a seeded random sample of CUTLASS 4.2 sm_90
builder configurations, ``sizeof(CollectiveEpilogue::SharedStorage)``, the mainloop's builder-chosen
``Stages`` and ``sizeof(GemmKernel::SharedStorage)``, printed by host programs nvcc built
(:mod:`fusionlint.evidence.sweep_sm90_storage`). The very declarations nvcc compiled are parsed here
by fusionlint in source mode (no CUTLASS headers): every carve-out, stage count and kernel storage size
must come out known and equal to nvcc's.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import ROOT
from fusionlint.evidence.sweep_sm90_storage import INCLUDES, capacity_edge, declarations, gemm_program, sample
from fusionlint.frontend.cutlass.reader import extract_cutlass
from fusionlint.frontend.clang.parse import ParseOptions, parse_file
from fusionlint.model import sm90_storage
from fusionlint.rules.derived.epilogue_storage import kernel_smem_bytes
from fusionlint.rules.loader import load_rules
from fusionlint.rules.views import cutlass_view
from fusionlint.run.pipeline import check_file

RECORD = ROOT / "kernels_ref" / "evidence" / "nvcc-sm90-storage-sweep.json"


@lru_cache(maxsize=None)
def record() -> dict:
    return json.loads(RECORD.read_text())


def compiled() -> list[dict]:
    return [c for c in record()["configurations"] if c["compiles"]]


@lru_cache(maxsize=None)
def source_mode_gemms(tmp: str) -> dict[int, object]:
    """The sample's declarations in one file, read by fusionlint without the CUTLASS headers: the GEMM of
    each ``cfg<id>`` namespace by its id."""
    path = Path(tmp) / "sweep.cu"
    text = "\n".join(f"#include \"{h}\"" for h in INCLUDES) + "\n\n" + "\n".join(declarations(c) for c in compiled())
    path.write_text(text)
    starts = [(i, int(line.split()[1][3:])) for i, line in enumerate(text.splitlines(), 1)
              if line.startswith("namespace cfg")]
    out = {}
    for g in extract_cutlass(parse_file(path, ParseOptions(use_system_headers=False))):
        ids = [cid for line, cid in starts if line <= g.loc.line]
        out[ids[-1]] = g
    return out


def test_the_record_is_the_seeded_sample():
    rec = record()
    fresh = sample(rec["seed"], rec["count"])
    kept = [{k: v for k, v in c.items() if k in fresh[0]} for c in rec["configurations"]]
    assert kept == fresh
    assert len(compiled()) >= 0.9 * rec["count"]


def test_every_carveout_and_stage_count_equals_nvccs(tmp_path_factory):
    gemms = source_mode_gemms(str(tmp_path_factory.mktemp("sweep")))
    wrong, missing = [], []
    for c in compiled():
        g = gemms.get(c["id"])
        if g is None or g.mainloop is None:
            missing.append(c["id"])
            continue
        ml = g.mainloop
        if c["stage_count"] == "carveout":
            if ml.carveout_bytes.value != c["epilogue_storage_bytes"]:
                wrong.append((c["id"], "carveout", ml.carveout_bytes.value or ml.carveout_bytes.unknown,
                              c["epilogue_storage_bytes"]))
        if ml.stages.value != c["mainloop_stages"]:
            wrong.append((c["id"], "stages", ml.stages.value or ml.stages.unknown, c["mainloop_stages"]))
        kernel = kernel_smem_bytes(cutlass_view(g))  # what FL305 and FL312 compare with sm_90's capacity
        if kernel != c["kernel_storage_bytes"]:
            wrong.append((c["id"], "kernel", kernel, c["kernel_storage_bytes"]))
    assert not missing and not wrong


def test_a_fusion_with_shared_memory_stays_unknown(tmp_path):
    cfg = dict(compiled()[0], id=9999, epilogue_schedule="cutlass::epilogue::TmaWarpSpecializedCooperative"
               if "Cooperative" in compiled()[0]["kernel_schedule"] else "cutlass::epilogue::TmaWarpSpecialized",
               fusion="cutlass::epilogue::fusion::LinCombPerRowBias<{d}, float, {c}, float, float>",
               stage_count="carveout")
    path = tmp_path / "bias.cu"
    path.write_text("\n".join(f"#include \"{h}\"" for h in INCLUDES) + "\n\n" + declarations(cfg))
    (g,) = extract_cutlass(parse_file(path, ParseOptions(use_system_headers=False)))
    assert g.mainloop.carveout_bytes.value is None and "CUTLASS headers" in g.mainloop.carveout_bytes.unknown
    assert g.mainloop.stages.value is None


@pytest.mark.parametrize("m,n,k,bits,carveout,stages", [
    (128, 256, 64, 16, 33792, 4),  # kernels_ref/cutlass/bf16_coop_1x1.cu, nvcc and the instantiated mode
    (128, 128, 64, 16, 0, 7),
])
def test_auto_stage_count(m, n, k, bits, carveout, stages):
    assert sm90_storage.auto_stage_count(carveout, m, n, k, bits, bits) == stages


DEVICE = ROOT / "kernels_ref" / "evidence" / "h200-kernel-smem.json"


def test_the_capacity_edge_on_the_h200_and_fusionlints_verdicts(tmp_path):
    """Every StageCountAuto configuration of the sample with a TMA epilogue and the default fusion was built
    and run on the H200 (tools: fusionlint.evidence.harness over sweep_sm90_storage.gemm_program): it works
    exactly when nvcc's sizeof(GemmKernel::SharedStorage) fits in 232448 bytes, and fusionlint's FL312 in
    source mode flags exactly those that do not (the warp-specialized kernel's union included: FL312 used to
    flag 9 of the sample's working ones)."""
    programs = json.loads(DEVICE.read_text())["programs"]
    edge = capacity_edge(record())
    assert len(edge) == 30
    over = {c["id"] for c in edge if c["kernel_storage_bytes"] > 232448}
    ran = {int(Path(k).stem[5:]): p for k, p in programs.items() if Path(k).name.startswith("sweep")}
    assert set(ran) == {c["id"] for c in edge}
    # one more does not compile for another reason: TileN 144 with tf32 ("Stride Divisibility Condition"
    # when the host side builds the TMA copies), which FL333 reports
    not_built = {i for i, p in ran.items() if p["build_rc"] != 0}
    assert not_built == {311} and "Stride Divisibility Condition" in ran[311]["log"]
    assert {i for i, p in ran.items() if not p["works"]} - not_built == over and len(over) == 14
    for i in over:  # the GEMM builds and can_implement passes; initialize() is refused
        assert ran[i]["build_rc"] == 0 and [(c["function"], c["status"]) for c in ran[i]["calls"]] == \
            [("can_implement", "Success"), ("initialize", "ErrorInternal")]
    for c in edge:
        (tmp_path / f"sweep{c['id']:03d}.cu").write_text(gemm_program(c))
    flagged, errors, rules = set(), {}, load_rules()
    for path in sorted(tmp_path.glob("sweep*.cu")):
        checked = check_file(path, rules, ParseOptions(use_system_headers=False), "sm_90")
        codes = {f.code for f in checked.findings if f.severity == "error"}
        errors[int(path.stem[5:])] = codes
        if "FL312" in codes:
            flagged.add(int(path.stem[5:]))
    assert flagged == over
    assert errors[311] == {"FL333"}
    assert all(not codes for i, codes in errors.items() if ran[i]["works"])


RS_GRID = ROOT / "kernels_ref" / "evidence" / "h200-rs-grid.json"
# tf32 A and B ColumnMajor with TileK 24 (3 K-blocks): "Stride Divisibility Condition" slicing the RS
# mainloop's MN-major smem stage, which FL333's derivation does not model for the RS paths
RS_GRID_MISSED: set[int] = set()  # rs1026/rs1027 (tf32 A ColumnMajor, TileK 24) became FL333's


def test_the_rs_mainloop_edge_on_the_h200_and_fusionlints_verdicts(tmp_path):
    """The whole RS grid (tf32 and FP8, the four layout pairs, TileK of 2, 3, 4 and 8 MMA K-blocks) built
    and run on the H200: fusionlint in source mode reports an error exactly on the programs that failed
    (FL342, FL343, FL306, FL307, FL315 among them), none on the 19 that work (FL315 used to flag two of
    them: the FP8 NN GEMMs take the RS mainloop, which has no promotion interval), with the two misses
    named above."""
    from fusionlint.evidence.sweep_sm90_storage import rs_grid
    programs = json.loads(RS_GRID.read_text())["programs"]
    grid = {c["id"]: c for c in rs_grid()}
    ran = {int(Path(k).stem[2:]): p for k, p in programs.items()}
    assert set(ran) == set(grid) and sum(p["works"] for p in ran.values()) == 19
    rules, wrong, codes_of = load_rules(), [], {}
    for i, c in grid.items():
        path = tmp_path / f"rs{i}.cu"
        path.write_text(gemm_program(c, "fusionlint.evidence.sweep_sm90_storage.rs_grid()"))
        checked = check_file(path, rules, ParseOptions(use_system_headers=False), "sm_90")
        codes = {f.code for f in checked.findings if f.severity == "error"}
        codes_of[i] = codes
        if bool(codes) == ran[i]["works"] and i not in RS_GRID_MISSED:
            wrong.append((i, ran[i]["works"], sorted(codes)))
    assert wrong == []
    assert all(not codes_of[i] and not ran[i]["works"] for i in RS_GRID_MISSED)
    rs_loops = {i for i, p in ran.items() if "RS loops require more than 2" in p["log"]}
    assert rs_loops and all("FL342" in codes_of[i] or "FL307" in codes_of[i] for i in rs_loops)


SLICE_GRID = ROOT / "kernels_ref" / "evidence" / "h200-slice-grid.json"
# fp8 128x24x128: "Fragment size does not vectorize properly"; no rule knows it (its TileK 256 twin, 2021, fails the
# same way and FL315 flags it for its promotion interval)
SLICE_GRID_MISSED = {2020}


def test_the_smem_stage_slice_on_the_h200_and_fusionlints_verdicts(tmp_path):
    """The mainloop's stage slice, measured around CuTe's divisibility checks (slice_grid: half, tf32 and FP8
    TileN odd and even multiples of 8, one and two swizzle atoms along K; the RS tf32 A ColumnMajor at TileK 40
    and 48), built and run on the H200: FL333 fires exactly on the programs nvcc stopped with "Stride
    Divisibility Condition" or "Shape Divisibility Condition" (ten of them only through the stage layout's own
    composition with the swizzle), no error on the six that work, the misses named above."""
    from fusionlint.evidence.sweep_sm90_storage import slice_grid
    programs = json.loads(SLICE_GRID.read_text())["programs"]
    grid = {c["id"]: c for c in slice_grid()}
    ran = {int(Path(k).stem[5:]): p for k, p in programs.items()}
    assert set(ran) == set(grid) and sum(p["works"] for p in ran.values()) == 6
    rules, wrong = load_rules(), []
    divisibility = {i for i, p in ran.items() if "Divisibility Condition" in p["log"]}
    assert len(divisibility) == 18
    for i, c in grid.items():
        path = tmp_path / f"slice{i}.cu"
        path.write_text(gemm_program(c, "fusionlint.evidence.sweep_sm90_storage.slice_grid()"))
        checked = check_file(path, rules, ParseOptions(use_system_headers=False), "sm_90")
        codes = {f.code for f in checked.findings if f.severity == "error"}
        if ("FL333" in codes) != (i in divisibility) or (bool(codes) == ran[i]["works"]) != (i in SLICE_GRID_MISSED):
            wrong.append((i, ran[i]["works"], sorted(codes)))
    assert wrong == []
