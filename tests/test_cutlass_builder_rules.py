"""The derived quantities that mirror CUTLASS 4.2's builder decisions (FL329-FL336), on fact views
alone (no parse): the values they compute for the configurations of the H200 mutation record, and
the 2.x specialization table against the headers it was generated from."""
from __future__ import annotations

import importlib.util
import json

import pytest

from conftest import ROOT
from fusionlint.rules import derived as d
from fusionlint.rules.engine import evaluate
from fusionlint.rules.loader import load_rules
from fusionlint.rules.markers import UNKNOWN

HALF, BF16, TF32 = "cutlass::half_t", "cutlass::bfloat16_t", "cutlass::tfloat32_t"
ROW, COL = "cutlass::layout::RowMajor", "cutlass::layout::ColumnMajor"
BITS = {HALF: 16, BF16: 16, TF32: 32, "float": 32, "int8_t": 8, "int32_t": 32}


def view3x(tile=(128, 128, 64), kernel="KernelTmaWarpSpecializedPingpong", epilogue="TmaWarpSpecialized",
           epi_tile="auto", ab=HALF, align=8, stages="carveout", layouts=(ROW, COL)) -> dict:
    ml = {"arch": "cutlass::arch::Sm90", "op_class": "cutlass::arch::OpClassTensorOp", "element_a": ab,
          "element_a_bits": BITS[ab], "element_b": ab, "element_b_bits": BITS[ab], "layout_a": layouts[0],
          "layout_b": layouts[1], "alignment_a": align, "alignment_b": align, "tile_shape": list(tile),
          "cluster_shape": [1, 1, 1], "element_accumulator": "float", "element_accumulator_bits": 32,
          "kernel_schedule": ("cutlass::gemm::collective::" if kernel == "KernelScheduleAuto" else "cutlass::gemm::")
          + kernel}
    if isinstance(stages, int):
        ml.update(stage_count_kind="fixed", stages=stages)
    else:
        ml.update(stage_count_kind="auto" if stages == "auto" else "auto_carveout", stages=UNKNOWN,
                  carveout_bytes=0 if stages == "auto" else UNKNOWN)
    ep = {"tile_shape": list(tile), "epilogue_schedule": f"cutlass::epilogue::{epilogue}",
          "epilogue_tile": "cutlass::epilogue::collective::EpilogueTileAuto" if epi_tile == "auto" else list(epi_tile),
          "element_c": HALF, "element_c_bits": 16, "element_d": HALF, "element_d_bits": 16, "alignment_c": 8,
          "alignment_d": 8, "layout_c": ROW, "layout_d": ROW}
    return {"api": "3.x", "mode": "syntactic", "arch": "sm_90", "mainloop": ml, "epilogue": ep}


def view2x(tb=(128, 256, 64), warp=(64, 64, 64), inst=(16, 8, 16), a=HALF, b=HALF, acc="float",
           arch="Sm80", stages=3, layout_c=ROW) -> dict:
    g = {"op_class": "cutlass::arch::OpClassTensorOp", "arch": f"cutlass::arch::{arch}", "threadblock_shape": list(tb),
         "warp_shape": list(warp), "instruction_shape": list(inst), "stages": stages, "element_a": a,
         "element_a_bits": BITS[a], "element_b": b, "element_b_bits": BITS[b], "element_accumulator": acc,
         "element_accumulator_bits": BITS[acc], "layout_a": ROW, "layout_b": COL, "layout_c": layout_c,
         "alignment_a": 8, "alignment_b": 8, "alignment_c": 8,
         "operator": "cutlass::arch::OpMultiplyAddSaturate" if "int8_t" in (a, b) else "cutlass::arch::OpMultiplyAdd"}
    return {"api": "2.x", "mode": "syntactic", "arch": "sm_90", "gemm": g}


def fired(view: dict) -> set[str]:
    return {r.id for r in load_rules() if r.scope == "cutlass" and not r.at.startswith("problem.")
            and evaluate(r.when, view, True) is True}


@pytest.mark.parametrize("kernel, tile_m, expect", [
    ("KernelScheduleAuto", 128, "KernelTmaWarpSpecializedCooperative"),
    ("KernelScheduleAuto", 64, "KernelTmaWarpSpecializedPingpong"),
    ("KernelTmaWarpSpecializedPingpong", 128, "KernelTmaWarpSpecializedPingpong")])
def test_kernel_schedule_auto_resolves_as_the_builder(kernel: str, tile_m: int, expect: str) -> None:
    assert d.builder_kernel_schedule(view3x(tile=(tile_m, 128, 64), kernel=kernel)) == expect


def test_kernel_schedule_auto_falls_back_to_cp_async_when_unaligned() -> None:
    assert d.builder_kernel_schedule(view3x(kernel="KernelScheduleAuto", align=4)) == "KernelCpAsyncWarpSpecialized"


@pytest.mark.parametrize("kernel, epilogue, epi_tile, flagged", [
    ("KernelTmaWarpSpecializedCooperative", "TmaWarpSpecialized", "auto", True),   # m0135, m0236
    ("KernelScheduleAuto", "TmaWarpSpecialized", "auto", True),                    # m0011, m0157
    ("KernelScheduleAuto", "TmaWarpSpecializedCooperative", "auto", False),         # m0189, m0307
    ("KernelTmaWarpSpecializedPingpong", "TmaWarpSpecialized", (64, 32), False),    # m0099, m0107
    ("KernelTmaWarpSpecializedCooperative", "TmaWarpSpecializedCooperative", (64, 32), False)])  # FL331's
def test_fl329_pairs_the_mma_tile_with_the_epilogue_tile(kernel, epilogue, epi_tile, flagged) -> None:
    assert ("FL329" in fired(view3x(kernel=kernel, epilogue=epilogue, epi_tile=epi_tile))) == flagged


@pytest.mark.parametrize("tile, ab, stages, count", [
    ((128, 128, 256), HALF, "carveout", 1), ((128, 256, 256), BF16, "auto", 1), ((128, 128, 256), "float", "auto", 0),
    ((128, 128, 128), HALF, "carveout", 3), ((128, 256, 64), BF16, "auto", 4)])
def test_auto_stage_count_max_is_the_builders_formula(tile, ab, stages, count) -> None:
    v = view3x(tile=tile, ab=ab, stages=stages)
    assert d.auto_stage_count_max(v) == count
    assert ("FL330" in fired(v)) == (count < 2)


@pytest.mark.parametrize("epilogue, epi_tile, ok", [
    ("TmaWarpSpecializedCooperative", (64, 32), False), ("TmaWarpSpecializedCooperative", (128, 32), True),
    ("TmaWarpSpecialized", (128, 32), False), ("TmaWarpSpecialized", (64, 16), True),
    ("TmaWarpSpecialized", (64, 24), False)])
def test_explicit_epilogue_tile_checks_of_the_builder(epilogue, epi_tile, ok) -> None:
    kernel = "KernelTmaWarpSpecializedCooperative" if "Cooperative" in epilogue else "KernelTmaWarpSpecializedPingpong"
    assert d.explicit_epilogue_tile_supported(view3x(kernel=kernel, epilogue=epilogue, epi_tile=epi_tile)) == ok


def test_the_swizzle_projection_is_the_layout_nvcc_printed() -> None:
    # m0284's log: composition_impl with LShape=(16,64,2), LStride=(1,0,1024), RShape=6, RStride=8704
    assert d._coalesce_x([16, 8, 1, 8, 1], [1, 0, 128, 0, 1024]) == ([16, 64, 2], [1, 0, 1024])
    assert d._stage_slice_divisible(3, 136 * 64, 6) is False
    assert d._stage_slice_divisible(3, 128 * 64, 6) is True


@pytest.mark.parametrize("tile, codes", [((128, 136, 64), {"FL333"}), ((128, 100, 64), {"FL332"}),
                                         ((128, 96, 64), set()), ((128, 192, 64), set()), ((128, 16, 64), set())])
def test_tile_n_rules(tile, codes) -> None:
    assert fired(view3x(tile=tile)) & {"FL332", "FL333"} == codes


@pytest.mark.parametrize("kw, code", [
    ({"a": BF16}, "FL334"), ({"a": "int8_t"}, "FL334"), ({"acc": "int32_t"}, "FL334"), ({"b": "float"}, "FL334"),
    ({"a": BF16, "layout_c": COL}, "FL334"), ({"arch": "Sm70"}, "FL335"), ({"arch": "Sm75"}, "FL335"),
    ({"warp": (32, 32, 64)}, "FL336"), ({"warp": (32, 32, 32)}, "FL336")])
def test_cutlass2_rules_flag_the_record_failures(kw: dict, code: str) -> None:
    assert code in fired(view2x(**kw))


@pytest.mark.parametrize("kw", [{}, {"acc": HALF}, {"a": BF16, "b": BF16}, {"a": "float", "b": "float", "inst": (16, 8, 8)},
                                {"inst": (16, 8, 8)}, {"arch": "Sm75", "stages": 2}, {"warp": (128, 64, 64)}])
def test_cutlass2_rules_pass_working_configurations(kw: dict) -> None:
    assert fired(view2x(**kw)) & {"FL334", "FL335", "FL336"} == set()


def test_specialization_table_matches_the_headers(tmp_path) -> None:
    include = ROOT / ".cutlass" / "include"
    if not (include / "cutlass" / "arch" / "mma_sm80.h").exists():
        pytest.skip("no CUTLASS headers in .cutlass/include")
    spec = importlib.util.spec_from_file_location("gen_cutlass2x_tables", ROOT / "tools" / "gen_cutlass2x_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "tables.json"
    assert module.main(["--cutlass-include", str(include), "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads((ROOT / "fusionlint" / "rules" /
                                                      "cutlass2x_specializations.json").read_text())
