"""Extraction of CUTLASS GEMM configurations: 3.x collective builders, hand-assembled collectives,
kernels and adapters, config structs and templated wrappers, CUTLASS 2.x device GEMMs with their
defaults; in the syntactic mode (no CUTLASS headers, what CI has) and, where the CUTLASS headers
are installed (``nvidia-cutlass``), in the instantiated mode, which must agree with it."""
from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import FIXTURES
from fusionlint.frontend.cutlass.source import model as model
from fusionlint.frontend.clang import toolchain
from fusionlint.frontend.cutlass.reader import extract_cutlass
from fusionlint.frontend.clang.parse import ParseOptions, parse_file

EXTRACT = FIXTURES / "cutlass" / "extract"
ALL_FIXTURES = sorted(p.name for p in EXTRACT.glob("*.cu"))


@lru_cache(maxsize=None)
def gemms(name: str) -> tuple:
    """GEMMs of a fixture in the syntactic mode (no system headers: the CUTLASS includes are missing)."""
    unit = parse_file(EXTRACT / name, ParseOptions(use_system_headers=False))
    return tuple(extract_cutlass(unit))


def line_of(name: str, snippet: str, nth: int = 0) -> int:
    lines = [i for i, line in enumerate((EXTRACT / name).read_text().splitlines(), 1) if snippet in line]
    return lines[nth]


def P(part, field):
    """A Param's value (None when unknown)."""
    p = getattr(part, field)
    return p.value if p.unknown is None else None


# ------------------------------------------------------------------------------------------------
# CUTLASS 3.x, syntactic mode


def test_bf16_cooperative_aliases_constexpr_and_locations():
    name = "hopper_bf16_cooperative.cu"
    (g,) = gemms(name)
    assert (g.api, g.kind, g.name, g.mode, g.cutlass_headers) == ("3.x", "GemmUniversalAdapter", "Gemm", "syntactic",
                                                                  False)
    assert g.loc.line == line_of(name, "using Gemm = cutlass::gemm::device::GemmUniversalAdapter")
    ml, ep, k = g.mainloop, g.epilogue, g.kernel
    assert ml.kind == "CollectiveBuilder" and ml.name == "CollectiveMainloop"
    assert P(ml, "arch") == "cutlass::arch::Sm90" and P(ml, "op_class") == "cutlass::arch::OpClassTensorOp"
    assert (P(ml, "element_a"), P(ml, "layout_a"), P(ml, "alignment_a")) == \
        ("cutlass::bfloat16_t", "cutlass::layout::RowMajor", 8)
    assert (P(ml, "element_b"), P(ml, "layout_b"), P(ml, "alignment_b")) == \
        ("cutlass::bfloat16_t", "cutlass::layout::ColumnMajor", 8)
    assert ml.element_a.bits == 16 and P(ml, "element_accumulator") == "float"
    assert P(ml, "tile_shape") == [128, 256, 64] and P(ml, "cluster_shape") == [1, 1, 1]
    assert P(ml, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
    # sizeof(CollectiveEpilogue::SharedStorage) and the builder's stage count, computed as CUTLASS does
    # (fusionlint.model.sm90_storage; nvcc and the instantiated mode give the same: 33792 bytes, 4 stages)
    assert P(ml, "stage_count_kind") == "auto_carveout" and (P(ml, "carveout_bytes"), P(ml, "stages")) == (33792, 4)
    assert "sizeof(CollectiveEpilogue::SharedStorage) as CUTLASS 4.2's sm_90 builders compute it" in ml.carveout_bytes.via
    # where the argument is written, where the value comes from, and through which alias
    ts = ml.tile_shape
    assert (ts.at.line, ts.at.column) == (line_of(name, "    TileShape, ClusterShape,", 1), 5)
    assert ts.origin.line == line_of(name, "using TileShape = Shape<_128, _256, _64>;")
    assert ts.via == "TileShape" and ts.written == "TileShape"
    al = ml.alignment_a
    assert al.origin.line == line_of(name, "constexpr int AlignmentA") and al.via == "AlignmentA"
    assert ep.name == "CollectiveEpilogue"
    assert P(ep, "tile_shape") == [128, 256, 64] and P(ep, "epilogue_tile") == \
        "cutlass::epilogue::collective::EpilogueTileAuto"
    assert (P(ep, "element_c"), P(ep, "layout_c"), P(ep, "alignment_c")) == \
        ("cutlass::bfloat16_t", "cutlass::layout::RowMajor", 8)
    assert (P(ep, "element_d"), P(ep, "layout_d"), P(ep, "alignment_d")) == \
        ("cutlass::bfloat16_t", "cutlass::layout::RowMajor", 8)
    assert ep.element_d.via == "ElementD -> ElementC"  # using ElementD = ElementC;
    assert P(ep, "epilogue_schedule") == "cutlass::epilogue::TmaWarpSpecializedCooperative"
    fo = ep.fusion_op
    assert fo.default and fo.value == "cutlass::epilogue::fusion::LinearCombination"
    assert fo.args == ["cutlass::bfloat16_t", "float", "cutlass::bfloat16_t", "float"]
    assert P(k, "problem_shape") == ["int32_t"] * 4
    assert P(k, "tile_scheduler") == "cutlass::gemm::PersistentScheduler"
    assert not g.diagnostics and g.unknowns == []


def test_pingpong_cluster_namespace_aliases_typedefs_int_constants():
    name = "hopper_fp16_pingpong_cluster2.cu"
    (g,) = gemms(name)
    assert g.name == "PingpongGemm" and g.kind == "GemmUniversalAdapter"  # typedef
    ml, ep = g.mainloop, g.epilogue
    assert P(ml, "tile_shape") == [128, 128, 64]  # Shape<Int<kTileM>, ...>
    assert P(ml, "cluster_shape") == [2, 1, 1] and P(ep, "cluster_shape") == [2, 1, 1]
    assert P(ml, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedPingpong"  # cg:: namespace alias
    assert P(ep, "epilogue_schedule") == "cutlass::epilogue::TmaWarpSpecialized"  # ce:: namespace alias
    assert (P(ml, "stage_count_kind"), P(ml, "stages")) == ("fixed", 5)
    assert ml.stages.origin.line == line_of(name, "constexpr int kStages = 5;")
    assert P(ml, "element_a") == "cutlass::half_t" and ml.element_a.via == "Half"  # typedef
    assert P(ml, "alignment_a") == 8  # 16 / sizeof(Half)
    assert P(ep, "layout_c") == "cutlass::layout::ColumnMajor"
    assert P(g.kernel, "problem_shape") == ["int32_t"] * 3
    assert g.kernel.tile_scheduler.default and P(g.kernel, "tile_scheduler") == "void"


def test_fp8_fast_accum_carveout_fusion_operation_stream_k():
    name = "hopper_fp8_fast_accum.cu"
    (g,) = gemms(name)
    ml, ep = g.mainloop, g.epilogue
    assert (P(ml, "element_a"), P(ml, "element_b")) == ("cutlass::float_e4m3_t", "cutlass::float_e4m3_t")
    assert ml.element_a.bits == 8 and P(ml, "alignment_a") == 16 and P(ml, "alignment_b") == 16
    assert P(ml, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum"
    assert P(ml, "stage_count") == "cutlass::gemm::collective::StageCountAutoCarveout"
    assert P(ml, "stage_count_kind") == "auto_carveout"
    assert P(ml, "tile_shape") == [128, 128, 128] and P(ml, "cluster_shape") == [1, 2, 1]
    assert (P(ep, "element_d"), P(ep, "alignment_d")) == ("cutlass::bfloat16_t", 8)
    fo = ep.fusion_op
    assert not fo.default and fo.value == "cutlass::epilogue::fusion::LinearCombination"
    assert fo.args == ["cutlass::bfloat16_t", "float", "cutlass::bfloat16_t", "float"]
    assert fo.via == "FusionOperation" and fo.origin.line == line_of(name, "using FusionOperation =")
    assert P(g.kernel, "tile_scheduler") == "cutlass::gemm::StreamKScheduler"


def test_config_structs_and_templated_wrapper_two_configs():
    name = "config_struct_wrapper.cu"
    large, small = sorted(gemms(name), key=lambda g: g.context)
    assert large.context == "mylib::gemm_wrapper<mylib::ConfigLarge>"
    assert small.context == "mylib::gemm_wrapper<mylib::ConfigSmall>"
    # 'using GemmLarge = gemm_wrapper<ConfigLarge>::Gemm;' and 'template struct gemm_wrapper<ConfigSmall>;'
    assert large.instantiated_at.line == line_of(name, "using GemmLarge = gemm_wrapper<ConfigLarge>::Gemm;")
    assert small.instantiated_at.line == line_of(name, "template struct gemm_wrapper<ConfigSmall>;")
    for g in (large, small):
        assert g.kind == "GemmUniversalAdapter" and g.name == "Gemm"
        assert g.loc.line == line_of(name, "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;")
        ml = g.mainloop
        assert P(ml, "element_a") == "cutlass::half_t" and P(ml, "alignment_a") == 8  # from the base struct
        assert ml.alignment_a.via == "Fp16GemmBase::kAlignmentA"
        assert P(g.epilogue, "alignment_d") == 8 and P(g.epilogue, "layout_c") == "cutlass::layout::RowMajor"
        assert not g.unknowns
    ml = large.mainloop
    assert P(ml, "tile_shape") == [256, 128, 64] and P(ml, "cluster_shape") == [2, 1, 1]
    assert P(ml, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
    assert P(ml, "stages") == 3 and ml.stages.via == "ConfigLarge::kStages"
    assert ml.tile_shape.at.line == line_of(name, "typename Config::TileShape, typename Config::ClusterShape,", 1)
    assert ml.tile_shape.origin.line == line_of(name, "using TileShape = cute::Shape<cute::_256")
    assert P(large.epilogue, "epilogue_schedule") == "cutlass::epilogue::TmaWarpSpecializedCooperative"
    ml = small.mainloop
    assert P(ml, "tile_shape") == [64, 128, 64] and P(ml, "cluster_shape") == [1, 1, 1]
    assert P(ml, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedPingpong"
    assert P(ml, "stages") == 6
    assert P(small.epilogue, "epilogue_schedule") == "cutlass::epilogue::TmaWarpSpecialized"


def test_hand_assembled_collective_mma():
    name = "hand_assembled_collective_mma.cu"
    (g,) = gemms(name)
    ml = g.mainloop
    assert ml.kind == "CollectiveMma" and ml.name == "CollectiveMainloop"
    assert P(ml, "dispatch_policy") == "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized"
    assert ml.dispatch_policy.args == [4, [1, 2, 1], "cutlass::gemm::KernelTmaWarpSpecialized"]
    assert (P(ml, "stages"), P(ml, "cluster_shape"), P(ml, "kernel_schedule")) == \
        (4, [1, 2, 1], "cutlass::gemm::KernelTmaWarpSpecialized")
    assert P(ml, "tile_shape") == [128, 128, 64]
    assert P(ml, "stride_a") == ["int64_t", 1, "int64_t"] and P(ml, "layout_a") == "cutlass::layout::RowMajor"
    assert P(ml, "stride_b") == ["int64_t", 1, "int64_t"] and P(ml, "layout_b") == "cutlass::layout::ColumnMajor"
    assert P(ml, "gmem_tiled_copy_a") == "cute::SM90_TMA_LOAD_MULTICAST"
    assert P(ml, "gmem_tiled_copy_b") == "cute::SM90_TMA_LOAD"
    assert P(ml, "smem_copy_atom_a") == "void" and P(ml, "transform_b") == "cute::identity"
    assert "decltype" in ml.tiled_mma.unknown  # unknown stays unknown, with the reason
    assert g.epilogue.kind == "other"
    assert P(g.epilogue, "type") == "cutlass::epilogue::collective::DefaultEpilogue"


def test_function_template_dispatch_fixture():
    name = "function_template_dispatch.cu"
    large, small = sorted(gemms(name), key=lambda g: g.context)
    assert small.context == "rowwise::f8f8bf16_impl<64, 128, 128, 2, 1, 1, 1, 1>"
    assert large.context == "rowwise::f8f8bf16_impl<128, 256, 128, 1, 2, 1, 0, 0>"
    assert small.instantiated_at.line == line_of(name, "f8f8bf16_impl<64, 128, 128, 2, 1, 1, true, true>")
    assert (P(small.mainloop, "tile_shape"), P(small.mainloop, "cluster_shape")) == ([64, 128, 128], [2, 1, 1])
    assert P(small.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum"
    assert small.mainloop.kernel_schedule.via == "MainLoopSchedule -> FastAccum -> FastPongSchedule"
    assert P(small.epilogue, "epilogue_schedule") == "cutlass::epilogue::TmaWarpSpecialized"
    assert (P(large.mainloop, "tile_shape"), P(large.mainloop, "cluster_shape")) == ([128, 256, 128], [1, 2, 1])
    assert P(large.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
    assert P(large.epilogue, "epilogue_schedule") == "cutlass::epilogue::TmaWarpSpecializedCooperative"
    for g in (small, large):
        assert (P(g.mainloop, "alignment_a"), P(g.epilogue, "alignment_d")) == (16, 8)
        assert P(g.kernel, "problem_shape") == ["int32_t"] * 3


def test_syntax_errors_around_a_valid_configuration():
    name = "syntax_error_around_config.cu"
    (g,) = gemms(name)
    assert g.kind == "GemmUniversalAdapter"
    ml, ep = g.mainloop, g.epilogue
    assert P(ml, "tile_shape") == [128, 128, 64] and P(ml, "cluster_shape") == [2, 1, 1]
    assert (P(ml, "stage_count"), P(ml, "stage_count_kind"), P(ml, "carveout_bytes")) == \
        ("cutlass::gemm::collective::StageCountAuto", "auto", 0)
    assert P(ml, "kernel_schedule") == "cutlass::gemm::collective::KernelScheduleAuto"
    assert P(ep, "epilogue_schedule") == "cutlass::epilogue::collective::EpilogueScheduleAuto"
    assert P(ep, "alignment_c") == 4 and P(ml, "alignment_b") == 8


def test_static_assert_fixture_values():
    (g,) = gemms("static_assert_tile_m96.cu")
    assert P(g.mainloop, "tile_shape") == [96, 256, 64]


# ------------------------------------------------------------------------------------------------
# CUTLASS 2.x


def test_2x_defaults_from_default_gemm_configuration():
    by = {g.name: g for g in gemms("gemm2x_defaults.cu")}
    assert set(by) == {"CutlassSgemm", "HgemmSm80", "BatchedBf16", "SplitKSgemm"}
    s = by["CutlassSgemm"].gemm2x
    assert by["CutlassSgemm"].kind == "device::Gemm" and by["CutlassSgemm"].api == "2.x"
    assert (P(s, "op_class"), P(s, "arch")) == ("cutlass::arch::OpClassSimt", "cutlass::arch::Sm70")
    assert s.op_class.default and s.threadblock_shape.default
    assert (P(s, "threadblock_shape"), P(s, "warp_shape"), P(s, "instruction_shape")) == \
        ([128, 128, 8], [32, 64, 8], [1, 1, 1])
    assert (P(s, "stages"), P(s, "alignment_a"), P(s, "alignment_b"), P(s, "alignment_c")) == (2, 1, 1, 1)
    assert P(s, "element_accumulator") == "float" and s.element_accumulator.default
    assert P(s, "swizzle") == "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle"
    assert P(s, "split_k_serial") is False and P(s, "operator") == "cutlass::arch::OpMultiplyAdd"
    h = by["HgemmSm80"].gemm2x
    assert h.default_config.startswith("DefaultGemmConfiguration<OpClassTensorOp, Sm80")
    assert (P(h, "threadblock_shape"), P(h, "warp_shape"), P(h, "instruction_shape")) == \
        ([128, 256, 64], [64, 64, 64], [16, 8, 16])
    assert (P(h, "stages"), P(h, "alignment_a"), P(h, "alignment_b"), P(h, "alignment_c")) == (3, 8, 8, 8)
    assert P(h, "epilogue_op") == "cutlass::epilogue::thread::LinearCombination"
    assert h.epilogue_op.args == ["cutlass::half_t", 8, "float", "float"]
    b = by["BatchedBf16"]
    assert b.kind == "device::GemmBatched"
    assert P(b.gemm2x, "swizzle") == "cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle"
    assert P(b.gemm2x, "element_a") == "cutlass::bfloat16_t" and P(b.gemm2x, "layout_b") == "cutlass::layout::RowMajor"
    k = by["SplitKSgemm"]
    assert k.kind == "device::GemmSplitKParallel"
    assert P(k.gemm2x, "swizzle") == "cutlass::gemm::threadblock::GemmSplitKHorizontalThreadblockSwizzle"
    assert P(k.gemm2x, "threadblock_shape") == [128, 128, 8]


def test_2x_explicit_shapes_stages_swizzle_and_local_alias():
    name = "gemm2x_explicit.cu"
    by = {g.name: g for g in gemms(name)}
    g = by["Bf16Gemm"].gemm2x
    assert (P(g, "threadblock_shape"), P(g, "warp_shape"), P(g, "instruction_shape")) == \
        ([128, 128, 32], [64, 64, 32], [16, 8, 16])
    assert not g.threadblock_shape.default and g.threadblock_shape.via == "ShapeMMAThreadBlock"
    assert g.threadblock_shape.origin.line == line_of(name, "using ShapeMMAThreadBlock =")
    assert P(g, "stages") == 4 and g.stages.via == "NumStages"
    assert P(g, "swizzle") == "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle" and g.swizzle.args == [8]
    assert P(g, "alignment_c") == 8  # 128 / sizeof_bits<bfloat16_t> in the epilogue functor
    assert (P(g, "alignment_a"), P(g, "alignment_b")) == (8, 8) and g.alignment_a.default
    u = by["HalfUniversal"]
    assert u.kind == "device::GemmUniversal"
    assert (P(u.gemm2x, "threadblock_shape"), P(u.gemm2x, "stages"), P(u.gemm2x, "alignment_a"),
            P(u.gemm2x, "alignment_c")) == ([256, 128, 32], 3, 8, 4)
    assert P(u.gemm2x, "layout_a") == "cutlass::layout::ColumnMajor" and P(u.gemm2x, "element_c") == "float"
    assert P(u.gemm2x, "operator") == "cutlass::arch::OpMultiplyAdd" and not u.gemm2x.operator.default
    s = by["SplitKSerialGemm"]  # declared inside run_split_k_serial()
    assert s.loc.line == line_of(name, "using SplitKSerialGemm")
    assert P(s.gemm2x, "split_k_serial") is True and P(s.gemm2x, "arch") == "cutlass::arch::Sm80"
    assert P(s.gemm2x, "op_class") == "cutlass::arch::OpClassSimt"


def test_2x_sm90_defaults_do_not_exist():
    got = model.default_gemm_configuration("cutlass::arch::OpClassTensorOp", "cutlass::arch::Sm90",
                                           "cutlass::half_t", "cutlass::half_t", "cutlass::half_t", "float")
    assert isinstance(got, str) and "only for double" in got
    got = model.default_gemm_configuration("cutlass::arch::OpClassTensorOp", "cutlass::arch::Sm80",
                                           "int8_t", "int8_t", "int32_t", "int32_t")
    assert got.instruction == (16, 8, 32) and got.operator == "cutlass::arch::OpMultiplyAddSaturate"


# ------------------------------------------------------------------------------------------------
# Inline sources: unknowns, preprocessor, wrappers without instantiation


def extract_text(tmp_path: Path, text: str, name: str = "t.cu") -> list:
    p = tmp_path / name
    p.write_text(text)
    return extract_cutlass(parse_file(p, ParseOptions(use_system_headers=False)), text)


_BUILDER = """
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    cutlass::half_t, cutlass::layout::RowMajor, ALIGN,
    cutlass::half_t, cutlass::layout::ColumnMajor, ALIGN,
    float, TILE, cute::Shape<cute::_1, cute::_1, cute::_1>,
    cutlass::gemm::collective::StageCountAuto, SCHEDULE>::CollectiveOp;
"""


def test_preprocessor_branches_and_macros(tmp_path):
    text = ('#include "cutlass/gemm/collective/collective_builder.hpp"\n'
            "#define TILE_M 256\n#define MAKE_TILE(M, N) cute::Shape<cute::Int<M>, cute::Int<N>, cute::_64>\n"
            "#if defined(CUTLASS_ARCH_MMA_SM90_SUPPORTED)\n#define ALIGN 8\n#else\n#define ALIGN 2\n#endif\n"
            "#if 0\nusing Mainloop = int;\n#endif\n"
            "#define SCHEDULE cutlass::gemm::KernelTmaWarpSpecializedCooperative\n#define TILE MAKE_TILE(TILE_M, 128)\n"
            + _BUILDER)
    (g,) = extract_text(tmp_path, text)
    assert g.kind == "CollectiveBuilder" and g.name == "Mainloop"
    assert P(g.mainloop, "tile_shape") == [256, 128, 64] and P(g.mainloop, "alignment_a") == 8
    assert P(g.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
    assert g.notes == ["collective(s) not used by a GemmUniversal kernel in this file"]


def test_uninstantiated_wrapper_keeps_parameters_unknown(tmp_path):
    text = ("template <class Tile, int Align>\nstruct Wrap {\n"
            + _BUILDER.replace("TILE", "Tile").replace("ALIGN", "Align")
            .replace("SCHEDULE", "cutlass::gemm::KernelTmaWarpSpecialized") + "};\n")
    (g,) = extract_text(tmp_path, text)
    assert g.context == "Wrap<Tile, Align>"
    assert "template parameter Tile of Wrap is not bound" in g.mainloop.tile_shape.unknown
    assert "template parameter Align" in g.mainloop.alignment_a.unknown
    assert P(g.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecialized"


def test_a_template_instantiated_only_under_a_macro_the_build_leaves_undefined_is_read_with_it_defined(tmp_path):
    # FBGEMM's i8i8bf16.cu: i8i8bf16sm90a_impl<64, 128, ...> is called only under
    # `#ifdef SMOOTHQUANT_SM90A`, which no build defines: its instances are read with the macro defined
    wrap = ("template <class Tile, int Align>\nstruct Wrap {\n"
            + _BUILDER.replace("TILE", "Tile").replace("ALIGN", "Align")
            .replace("SCHEDULE", "cutlass::gemm::KernelTmaWarpSpecialized") + "};\n")
    use = "using Used = Wrap<cute::Shape<cute::_128, cute::_128, cute::_64>, 8>;\n"
    (g,) = extract_text(tmp_path, wrap + "#ifdef SMOOTHQUANT_SM90A\n" + use + "#endif\n")
    assert g.context == "Wrap<cute::tuple<128, 128, 64>, 8>" and not g.unknowns
    assert P(g.mainloop, "tile_shape") == [128, 128, 64] and P(g.mainloop, "alignment_a") == 8
    assert g.condition == "`SMOOTHQUANT_SM90A` is defined: `#ifdef SMOOTHQUANT_SM90A` at line 11, left out by this build"
    assert P(g.mainloop, "stages") == 7  # the builder: 232448 // (2 x 128 x 64 x 2 bytes + 16), no carve-out
    (g,) = extract_text(tmp_path, wrap + "#if defined(SMOOTHQUANT_SM90A)\n" + use + "#endif\n")
    assert g.condition.startswith("`SMOOTHQUANT_SM90A` is defined: `#if defined ( SMOOTHQUANT_SM90A )` at line 11")
    # a region that defining one macro does not compile keeps the generic reading, saying why
    (g,) = extract_text(tmp_path, wrap + "#if defined(A) && defined(B)\n" + use + "#endif\n")
    assert not g.condition and g.mainloop.tile_shape.unknown == (
        "template parameter Tile of Wrap is not bound in this file: it is instantiated only in code this build "
        "leaves out, under `#if defined ( A ) && defined ( B )` (line 11)")
    # not when the build instantiates it too, nor when nothing does
    (g,) = extract_text(tmp_path, wrap + "#ifdef SMOOTHQUANT_SM90A\n" + use + "#else\n" + use.replace("_128,", "_64,", 1)
                        + "#endif\n")
    assert P(g.mainloop, "tile_shape") == [64, 128, 64] and not g.condition
    (g,) = extract_text(tmp_path, wrap)
    assert g.mainloop.tile_shape.unknown == "template parameter Tile of Wrap is not bound in this file"


def test_function_template_wrapper_and_conditional_types(tmp_path):
    text = ("#include <cute/tensor.hpp>\nusing namespace cute;\n"
            "struct Big { using Tile = Shape<_256, _128, _64>; static constexpr bool kCoop = true; };\n"
            "template <class Cfg>\nvoid run() {\n"
            "  using Sched = cute::conditional_t<Cfg::kCoop, cutlass::gemm::KernelTmaWarpSpecializedCooperative,\n"
            "                                    cutlass::gemm::KernelTmaWarpSpecializedPingpong>;\n"
            "  constexpr int kAlign = 128 / cutlass::sizeof_bits<cutlass::half_t>::value;\n"
            + _BUILDER.replace("TILE", "typename Cfg::Tile").replace("ALIGN", "kAlign").replace("SCHEDULE", "Sched")
            + "}\nvoid go() { run<Big>(); }\n")
    (g,) = extract_text(tmp_path, text)
    assert g.context == "run<Big>" and g.instantiated_at.line == text.splitlines().index("void go() { run<Big>(); }") + 1
    assert P(g.mainloop, "tile_shape") == [256, 128, 64] and P(g.mainloop, "alignment_b") == 8
    assert P(g.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"


def test_function_template_with_int_and_bool_parameters(tmp_path):
    """FBGEMM style: tile, cluster and schedule flags as non-type template parameters of a function,
    instantiated by explicit calls from a dispatcher."""
    text = (
        "namespace fb {\n"
        "template <int TB_M, int TB_N, int TB_K, int TBS_M, bool PONG, bool FAST_ACCUM>\nint impl(int m) {\n"
        "  constexpr int kAlign = 16 / sizeof(cutlass::float_e4m3_t);\n"
        "  using TILE = cute::Shape<cute::Int<TB_M>, cute::Int<TB_N>, cute::Int<TB_K>>;\n"
        "  using Fast = cute::conditional_t<PONG, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,\n"
        "                                   cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum>;\n"
        "  using SCHEDULE = cute::conditional_t<FAST_ACCUM, Fast, cutlass::gemm::KernelTmaWarpSpecializedCooperative>;\n"
        + _BUILDER.replace("ALIGN", "kAlign").replace("cute::Shape<cute::_1, cute::_1, cute::_1>",
                                                       "cute::Shape<cute::Int<TBS_M>, cute::_1, cute::_1>")
        + "  return m;\n}\n"
        "int dispatch(int m) {\n  if (m <= 64) return impl<64, 128, 128, 2, true, true>(m);\n"
        "  return impl<128, 128, 128, 1, false, false>(m);\n}\n}  // namespace fb\n")
    small, large = sorted(extract_text(tmp_path, text), key=lambda g: P(g.mainloop, "tile_shape"))
    assert small.context == "fb::impl<64, 128, 128, 2, 1, 1>" and large.context == "fb::impl<128, 128, 128, 1, 0, 0>"
    assert P(small.mainloop, "tile_shape") == [64, 128, 128] and P(small.mainloop, "cluster_shape") == [2, 1, 1]
    assert P(small.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum"
    assert small.mainloop.kernel_schedule.via == "SCHEDULE -> Fast"
    assert P(large.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
    assert P(large.mainloop, "alignment_a") == 16 and P(large.mainloop, "cluster_shape") == [1, 1, 1]


def test_divide_by_zero_and_unknown_names_stay_unknown(tmp_path):
    text = _BUILDER.replace("TILE", "MyTile").replace("ALIGN", "128 / cutlass::sizeof_bits<void>::value") \
        .replace("SCHEDULE", "cutlass::gemm::KernelTmaWarpSpecialized")
    (g,) = extract_text(tmp_path, text)
    assert "division by zero" in g.mainloop.alignment_a.unknown
    assert g.mainloop.tile_shape.unknown == "MyTile is not declared in this file"
    assert "mainloop.tile_shape: MyTile is not declared in this file" in g.unknowns


def test_files_without_cutlass_give_nothing(tmp_path):
    assert extract_text(tmp_path, "int main() { return 0; }\n", "plain.cpp") == []


def test_json_and_speed_of_the_syntactic_reading():
    for name in ALL_FIXTURES:
        unit = parse_file(EXTRACT / name, ParseOptions(use_system_headers=False))
        t = time.perf_counter()
        out = extract_cutlass(unit)
        assert time.perf_counter() - t < 30  # ~0.1 s here: only a blow-up fails, not a busy machine
        assert out, name
        for g in out:
            d = json.loads(json.dumps(g.to_dict()))
            assert d["mode"] == "syntactic" and d["path"].endswith(name)


# ------------------------------------------------------------------------------------------------
# With the CUTLASS headers (nvidia-cutlass installed): instantiated mode


def cutlass_include_dirs() -> list[str]:
    dirs = toolchain.discover(True)
    if not dirs.cutlass:
        return []
    out = [str(d) for d in dirs.cutlass]
    for cuda in dirs.cuda:  # CUDA 13 keeps libcu++ (cuda/std/...) under include/cccl
        if (cuda / "cccl").is_dir():
            out.append(str(cuda / "cccl"))
    return out


needs_cutlass = pytest.mark.skipif(not cutlass_include_dirs(), reason="CUTLASS headers (nvidia-cutlass) not installed")


@lru_cache(maxsize=None)
def gemms_instantiated(path: str) -> tuple:
    p = Path(path)
    unit = parse_file(p, ParseOptions(include_dirs=cutlass_include_dirs() + [str(p.parent)]))
    return tuple(extract_cutlass(unit))


# values the two modes may legitimately differ on: what only the compiler knows, and cute types
# spelled through alias templates in the source
# the epilogue's SharedStorage size, and what the builder chose with it (an automatic stage count)
ONLY_INSTANTIATED = {"mainloop.carveout_bytes", "mainloop.tiled_mma", "mainloop.stages"}
SPELLED_DIFFERENTLY = {"mainloop.smem_layout_atom_a", "mainloop.smem_layout_atom_b"}  # cute alias templates


def same_facts(syn, inst) -> list[str]:
    out = []
    for a, b in zip(sorted(syn, key=lambda g: (g.loc.line, g.context)),
                    sorted(inst, key=lambda g: (g.loc.line, g.context))):
        va, vb = a.values(), b.values()
        for k in sorted(set(va) | set(vb)):
            if k in ONLY_INSTANTIATED and va.get(k) is None or k in SPELLED_DIFFERENTLY:
                continue
            if va.get(k) != vb.get(k):
                out.append(f"{a.name}@{a.loc.line} {a.context} {k}: {va.get(k)!r} != {vb.get(k)!r}")
    if len(syn) != len(inst):
        out.append(f"{len(syn)} GEMMs syntactically, {len(inst)} instantiated")
    return out


@needs_cutlass
@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_both_modes_give_the_same_facts(name):
    inst = gemms_instantiated(str(EXTRACT / name))
    assert same_facts(gemms(name), inst) == []
    for g in inst:
        assert g.cutlass_headers
        assert not [n for n in g.notes if "syntactic reading gave" in n]


@needs_cutlass
def test_instantiated_mode_reads_the_specializations():
    (g,) = gemms_instantiated(str(EXTRACT / "hopper_bf16_cooperative.cu"))
    assert g.mode == "instantiated"
    assert g.mainloop.carveout_bytes.value > 0  # sizeof(CollectiveEpilogue::SharedStorage)
    assert g.built["mainloop.stages"] >= 2
    # StageCountAutoCarveout: the stage count is the builder's, read from its CollectiveOp
    assert g.mainloop.stage_count_kind.value == "auto_carveout"
    assert g.mainloop.stages.value == g.built["mainloop.stages"] and "chosen by the collective builder" in g.mainloop.stages.via
    assert g.built["mainloop.dispatch_policy"].startswith("cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized")
    large, small = sorted(gemms_instantiated(str(EXTRACT / "config_struct_wrapper.cu")), key=lambda g: g.context)
    # reachable from 'using GemmLarge = gemm_wrapper<ConfigLarge>::Gemm;'; libclang does not show the
    # members of an explicit instantiation, so ConfigSmall stays syntactic
    assert (large.mode, small.mode) == ("instantiated", "syntactic")
    assert large.built["mainloop.stages"] == 3
    for g in gemms_instantiated(str(EXTRACT / "gemm2x_defaults.cu")):
        assert g.mode == "instantiated"
    # function template instances, reached through the dispatcher's calls
    large, small = sorted(gemms_instantiated(str(EXTRACT / "function_template_dispatch.cu")), key=lambda g: g.context)
    assert (small.mode, large.mode) == ("instantiated", "instantiated")
    assert small.built["mainloop.kernel_schedule"] == "cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum"


@needs_cutlass
def test_static_assert_is_mapped_to_the_users_line():
    name = "static_assert_tile_m96.cu"
    (g,) = gemms_instantiated(str(EXTRACT / name))
    msgs = {(d.message, d.at.line) for d in g.diagnostics}
    assert ("Tile_M must be a multiple of 64.", line_of(name, "using CollectiveMainloop =")) in msgs
    d = next(d for d in g.diagnostics if d.message == "Tile_M must be a multiple of 64.")
    assert d.kind == "static_assert" and d.header_loc is not None and "cute" in d.header_loc.path
    assert not gemms_instantiated(str(EXTRACT / "hopper_bf16_cooperative.cu"))[0].diagnostics


# ------------------------------------------------------------------------------------------------
# The Hopper examples shipped in the nvidia-cutlass wheel

def wheel_examples() -> Path | None:
    for inc in toolchain.discover(True).cutlass:
        ex = inc.parent / "examples"
        if (ex / "48_hopper_warp_specialized_gemm").is_dir():
            return ex
    return None


needs_examples = pytest.mark.skipif(wheel_examples() is None, reason="nvidia-cutlass examples not installed")
RESOLVED = ["mainloop.tile_shape", "mainloop.cluster_shape", "mainloop.kernel_schedule", "mainloop.stage_count_kind",
            "mainloop.element_a", "mainloop.element_b", "mainloop.element_accumulator", "epilogue.element_c",
            "epilogue.element_d", "epilogue.epilogue_schedule", "epilogue.tile_shape", "epilogue.cluster_shape"]


def assert_resolved(g) -> None:
    """Every RESOLVED value known, except one the reader cannot know: a template parameter deduced
    from the types of a call's arguments (example 51's gett_kernel(...) call), which says so."""
    v = g.values()
    for k in RESOLVED:
        if k in v:
            part, field = k.split(".")
            unknown = getattr(getattr(g, part), field).unknown or ""
            if "is deduced from the arguments of the call at line" in unknown:
                continue
            assert v[k] is not None, f"{g.path}:{g.loc.line} {g.context} {k}"
    if v.get("mainloop.stage_count_kind") == "fixed":
        assert v["mainloop.stages"] is not None


@needs_examples
def test_wheel_hopper_examples_syntactic():
    ex = wheel_examples()
    found = 0
    # 88_hopper_fmha is attention, not a GEMM: its own collectives (FmhaBwdMainloopTmaWarpSpecialized...)
    # are read as GEMM-like templates, but the builders' fields (stage count kind) are not theirs
    for f in sorted(p for p in ex.glob("*hopper*/*.cu") if "fmha" not in p.parent.name):
        for g in extract_cutlass(parse_file(f, ParseOptions(use_system_headers=False))):
            found += 1
            assert_resolved(g)
    assert found >= 40


@needs_examples
@needs_cutlass
@pytest.mark.parametrize("example", ["48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu",
                                     "49_hopper_gemm_with_collective_builder/49_collective_builder.cu",
                                     "54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.cu"])
def test_wheel_hopper_examples_instantiated(example):
    ex = wheel_examples()
    f = ex / example
    unit = parse_file(f, ParseOptions(include_dirs=cutlass_include_dirs() + [str(f.parent), str(ex / "common")]))
    inst = extract_cutlass(unit)
    syn = extract_cutlass(parse_file(f, ParseOptions(use_system_headers=False)))
    assert inst and same_facts(syn, inst) == []
    for g in inst:
        assert_resolved(g)
        # 49 builds its GEMMs in ExampleRunner<...> objects: reached through runner.run()'s body
        assert g.mode == "instantiated", (g.context, g.notes)
        assert g.built.get("mainloop.stages")


@needs_cutlass
def test_cutlass_static_assert_becomes_a_finding_when_no_rule_explains_it():
    """Instantiated mode: a CUTLASS/CuTe static_assert no rule covers is reported as FL300 at the
    user's line, with the assertion's text; a GEMM a rule already flags gets no FL300 on top."""
    from fusionlint.rules.engine import run_rules
    from fusionlint.rules.loader import load_rules
    from fusionlint.model.cublaslt_facts import FileFacts

    (g,) = gemms_instantiated(str(EXTRACT / "static_assert_epilogue_tile.cu"))
    assert g.mode == "instantiated"
    facts = FileFacts(str(EXTRACT / "static_assert_epilogue_tile.cu"), cutlass=[g])
    # FL331 (the builders' epilogue-tile check in source mode) explains this one: no FL300 on top
    assert {f.code for f in run_rules(load_rules([]), facts)} == {"FL331"}
    rules = [r for r in load_rules([]) if r.id != "FL331"]  # without the rule, FL300 reports it
    found = run_rules(rules, facts)
    assert {f.code for f in found} == {"FL300"}
    assert any("Unsupported tile shape" in f.message for f in found)
    lines = _lines_of_gemm(g)  # at the GEMM's lines, or at a use of it that asked for the instantiation
    assert all(f.path == str(EXTRACT / "static_assert_epilogue_tile.cu") for f in found)
    assert any(f.line in lines for f in found)

    (g96,) = gemms_instantiated(str(EXTRACT / "static_assert_tile_m96.cu"))
    assert g96.diagnostics  # CUTLASS's assertion is there ...
    codes = {f.code for f in run_rules(rules, FileFacts(str(EXTRACT / "static_assert_tile_m96.cu"), cutlass=[g96]))}
    assert "FL300" not in codes and {"FL303", "FL308"} <= codes  # ... but the rules already explain it


def _lines_of_gemm(g) -> set[int]:
    from fusionlint.frontend.cutlass.reader import _lines_of

    return set(_lines_of(g))


def test_literal_problem_sizes_of_arguments(tmp_path):
    """Literal M/N/K written into a GEMM's Arguments are attached to that GEMM: through literals,
    constexpr names, #defines and a 2.x GemmCoord; a runtime extent stays unknown."""
    (g,) = gemms("../rules/FL318_fp16_k250.cu")
    (p,) = g.problems
    assert (p.gemm, p.m, p.n, p.k) == ("Gemm", 768, 512, 250)
    assert p.at.line == line_of("../rules/FL318_fp16_k250.cu", "typename Gemm::Arguments arguments")
    src = (FIXTURES / "cutlass" / "rules" / "FL326_2x_stages4_ok.cu").read_text().replace(
        "int main() {",
        "constexpr int kM = 1024;\n#define KN 2048\n"
        "int main(int argc, char **) {\n"
        "  cutlass::gemm::GemmCoord problem_size(kM, KN, 512);\n"
        "  Gemm::Arguments args{problem_size, {nullptr, 512}, {nullptr, 512}, {nullptr, KN}, {nullptr, KN}};\n"
        "  Gemm::Arguments dynamic{{argc, KN, 512}, {nullptr, 512}};\n")
    f = tmp_path / "sizes_2x.cu"
    f.write_text(src)
    (g2,) = extract_cutlass(parse_file(f, ParseOptions(use_system_headers=False)))
    assert [(p.m, p.n, p.k) for p in g2.problems] == [(1024, 2048, 512), (None, 2048, 512)]


def test_a_file_body_under_a_cudart_version_guard_is_read():
    """cudart_version_guard.cu: a GEMM under `#if CUDART_VERSION >= 12000`."""
    (g,) = gemms("cudart_version_guard.cu")
    assert (P(g.mainloop, "tile_shape"), P(g.mainloop, "cluster_shape")) == ([128, 256, 64], [1, 2, 1])
    assert P(g.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"


# ------------------------------------------------------------------------------------------------
# Project headers: a GEMM template in one header, its configurations in the file that includes it

HEADERS = EXTRACT / "project_headers"


def test_a_dispatch_file_instantiates_a_project_headers_gemm_template():
    """vLLM style (scaled_mm_sm90_fp8_dispatch.cuh over scaled_mm.cuh): the dispatch file's config
    structs instantiate fp8_gemm.cuh's template with their tiles and schedules, its entry template
    the output types; the entry's own parameter stays unknown. Each configuration is this file's,
    at the line that makes it; the values keep the file and line they were written at."""
    found = gemms("project_headers/fp8_dispatch.cuh")
    name = "project_headers/fp8_dispatch.cuh"
    large, small = line_of(name, "using Gemm = typename Fp8Gemm", 0), line_of(name, "using Gemm = typename Fp8Gemm", 1)
    seen = {(P(g.mainloop, "tile_shape")[0], P(g.epilogue, "element_d"), g.loc.line) for g in found}
    assert seen == {(128, "cutlass::bfloat16_t", large), (64, "cutlass::bfloat16_t", small),
                    (128, "cutlass::half_t", large), (64, "cutlass::half_t", small)}
    for g in found:
        assert g.loc.path == str(HEADERS / "fp8_dispatch.cuh") == g.path
        assert "proj::entry<Tag> / proj::dispatch<" in g.context and ", ?>" in g.context
        assert f"declared at {HEADERS / 'fp8_gemm.cuh'}:" in " ".join(g.notes)
        assert P(g.mainloop, "element_a") == "cutlass::float_e4m3_t" and P(g.mainloop, "alignment_a") == 16
        assert P(g.epilogue, "alignment_d") == 8 and P(g.mainloop, "cluster_shape") == [1, 2, 1]
        # the cluster shape two includes away, the layouts in the template's header
        assert (g.mainloop.cluster_shape.origin.path, g.mainloop.cluster_shape.origin.line) == \
            (str(HEADERS / "gemm_defaults.h"), 6)
        assert g.mainloop.layout_a.at.path == str(HEADERS / "fp8_gemm.cuh")
        # the builders' arithmetic runs on the instantiated values (source mode)
        assert P(g.mainloop, "stages") is not None and P(g.mainloop, "carveout_bytes") is not None


def test_a_project_header_linted_alone_keeps_its_parameters_unknown():
    """The header's own GEMM is generic (its parameters are bound by the files that include it);
    the dispatch file does not repeat it."""
    (g,) = gemms("project_headers/fp8_gemm.cuh")
    assert g.context.startswith("proj::Fp8Gemm<ElementAB, ElementOut, TileShape")
    assert "template parameter TileShape of Fp8Gemm is not bound" in g.mainloop.tile_shape.unknown
    assert P(g.mainloop, "cluster_shape") is None


def test_a_finding_through_a_project_header_lands_in_the_including_file(capsys):
    """FL303 (the cooperative kernel with a 64-row tile) at the dispatch file's tile shape, once
    for both output types; and no FL300 from the header linted alone: a project header below a
    directory named cutlass/ (this one's path) is not CUTLASS's own headers."""
    from fusionlint.cli import main

    rc = main(["check", "--no-cache", "--no-system-headers", "--output-format", "json", str(HEADERS)])
    findings = [f for f in json.loads(capsys.readouterr().out) if f["severity"] == "error"]
    assert rc == 1
    assert [(f["code"], Path(f["path"]).name, f["line"]) for f in findings] == \
        [("FL303", "fp8_dispatch.cuh", line_of("project_headers/fp8_dispatch.cuh", "Shape<_64, _128, _128>"))]


def test_project_headers_from_include_dirs_but_not_library_roots(tmp_path):
    """A quoted include is looked up next to the file, then in -iquote/-I directories; a header
    under a directory that holds CUTLASS's (or the CUDA toolkit's) headers is the library's and
    is not read; a missing one is skipped."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "tiles.h").write_text(
        "#pragma once\n#include <cute/tensor.hpp>\nconstexpr int kAlign = 8;\n"
        "using Tile = cute::Shape<cute::_128, cute::_128, cute::_64>;\n")
    (tmp_path / "lib" / "cutlass").mkdir(parents=True)
    (tmp_path / "lib" / "cutlass" / "cutlass.h").write_text("#pragma once\n")
    (tmp_path / "lib" / "libtiles.h").write_text("constexpr int kLibAlign = 8;\n")
    src = tmp_path / "src"
    src.mkdir()
    text = ('#include "tiles.h"\n#include "libtiles.h"\n#include "absent.h"\n'
            + _BUILDER.replace("TILE", "Tile").replace("SCHEDULE", "cutlass::gemm::KernelTmaWarpSpecializedCooperative"))
    for align, want in (("kAlign", 8), ("kLibAlign", None)):
        (src / "k.cu").write_text(text.replace("ALIGN", align))
        unit = parse_file(src / "k.cu", ParseOptions(use_system_headers=False,
                                                     include_dirs=[str(tmp_path / "inc"), str(tmp_path / "lib")]))
        (g,) = extract_cutlass(unit)
        assert P(g.mainloop, "alignment_a") == want
        assert P(g.mainloop, "tile_shape") == [128, 128, 64]
        assert g.mainloop.tile_shape.origin.path == str(tmp_path / "inc" / "tiles.h")


def test_a_file_that_only_includes_the_projects_cutlass_header(tmp_path):
    """FBGEMM style: f8f8bf16_rowwise_<config>.cu names no CUTLASS type; it calls the wrapper of its
    include (f8f8bf16_rowwise_common.cuh) with the tile as template arguments. Its GEMMs are found
    (through the facts pipeline, as `check` and `facts` run it), at the call."""
    from fusionlint.facts.extract import extract_file

    (tmp_path / "rowwise_common.cuh").write_text(
        "#pragma once\n#include <cute/tensor.hpp>\n#include <cutlass/gemm/collective/collective_builder.hpp>\n"
        "template <int TM, int TN, int TK, bool PONG>\nint rowwise_impl() {\n"
        "  using Tile = cute::Shape<cute::Int<TM>, cute::Int<TN>, cute::Int<TK>>;\n"
        "  using Sched = cute::conditional_t<PONG, cutlass::gemm::KernelTmaWarpSpecializedPingpong,\n"
        "                                    cutlass::gemm::KernelTmaWarpSpecializedCooperative>;\n"
        + _BUILDER.replace("TILE", "Tile").replace("ALIGN", "8").replace("SCHEDULE", "Sched")
        + "  return 0;\n}\n")
    src = tmp_path / "rowwise_64_128_64_t.cu"
    src.write_text('#include "rowwise_common.cuh"\n\nint rowwise_64_128_64_t() {\n'
                   "  return rowwise_impl<64, 128, 64, true>();\n}\n")
    (g,) = extract_file(src, ParseOptions(use_system_headers=False)).cutlass
    assert (g.loc.path, g.loc.line) == (str(src), 4)
    assert P(g.mainloop, "tile_shape") == [64, 128, 64]
    assert P(g.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedPingpong"
    assert g.mainloop.tile_shape.origin.path == str(tmp_path / "rowwise_common.cuh")  # the Shape<...> alias


def test_a_project_headers_function_template_called_with_deduced_arguments():
    """CUTLASS example 51 style: the main file calls a header's GEMM function template without
    template arguments. The GEMM is the main file's, at that call; what the template fixes itself is
    known, each deduced parameter unknown with the call named as its source."""
    (g,) = gemms("project_headers/gett_main.cu")
    call = line_of("project_headers/gett_main.cu", "proj::gett_like(")
    assert (g.path, g.loc.line) == (str(HEADERS / "gett_main.cu"), call)
    assert P(g.mainloop, "tile_shape") == [128, 128, 64] and P(g.mainloop, "cluster_shape") == [1, 2, 1]
    assert P(g.mainloop, "kernel_schedule") == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
    assert P(g.mainloop, "element_a") is None
    assert g.mainloop.element_a.unknown == \
        f"template parameter ElementA of gett_like is deduced from the arguments of the call at line {call}"


@needs_cutlass
def test_gemm_members_of_a_runner_class_template_are_instantiated():
    """Example 53's shape: the GEMM is a member alias of a class template that main() only constructs and
    calls; libclang shows the specialization's members through the data members its bodies use."""
    gemms_ = sorted(gemms_instantiated(str(EXTRACT / "runner_class_members.cu")), key=lambda g: g.context)
    assert [g.mode for g in gemms_] == ["instantiated", "instantiated"]
    bf16, fp16 = gemms_
    assert "bfloat16_t" in bf16.context and "half_t" in fp16.context
    for g in gemms_:
        assert g.loc.line == line_of("runner_class_members.cu", "using Gemm =")
        assert g.mainloop.carveout_bytes.value > 0  # sizeof(CollectiveEpilogue::SharedStorage), by the compiler
        assert g.mainloop.stages.value == g.built["mainloop.stages"]
        assert "chosen by the collective builder" in g.mainloop.stages.via
    assert fp16.mainloop.layout_b.value == "cutlass::layout::ColumnMajor"
    assert bf16.mainloop.layout_b.value == "cutlass::layout::RowMajor"


@needs_cutlass
def test_a_project_headers_function_template_is_read_where_the_main_file_instantiates_it():
    """Example 51's shape (header_function_template/): the GEMM sits in a function template of a project
    header, its element types and layouts deduced from the main file's call. The source reader leaves
    them unknown ("deduced from the arguments of the call"); with the CUTLASS headers they are read from
    libclang's specialization, which the instantiated reader now follows into the project's headers."""
    path = EXTRACT / "header_function_template" / "main.cu"
    (g,) = gemms_instantiated(str(path))
    assert g.mode == "instantiated"
    assert g.loc.path.endswith("main.cu") and g.loc.line == 5  # where this file makes it
    assert any("gemm_entry.cuh:38" in n for n in g.notes)
    ml, ep = g.mainloop, g.epilogue
    assert (ml.element_a.value, ml.layout_a.value) == ("cutlass::half_t", "cutlass::layout::RowMajor")
    assert (ml.element_b.value, ml.layout_b.value) == ("cutlass::half_t", "cutlass::layout::ColumnMajor")
    assert (ml.alignment_a.value, ml.alignment_b.value, ep.alignment_d.value) == (8, 8, 8)
    assert ml.stages.value == g.built["mainloop.stages"] and ml.carveout_bytes.value > 0
    g.collect_unknowns()
    assert g.unknowns == []


@needs_cutlass
def test_a_header_class_templates_kernel_wrapped_in_derived_structs_is_instantiated_per_epilogue_template():
    """vLLM's cutlass_w8a8 shape (header_kernel_base/): the kernel is `struct GemmKernel : KernelType {}`
    with `KernelType = only_sm90<GemmUniversal<...>>` inside a class template of a project header; a
    template template parameter picks the epilogue (one template has a defaulted parameter: P0522
    matching, -frelaxed-template-template-args); only the header's function templates name the kernels.
    Each of the four instantiations is read from libclang, with the builders' choices."""
    path = EXTRACT / "header_kernel_base" / "main.cu"
    got = gemms_instantiated(str(path))
    assert len(got) == 4 and {g.mode for g in got} == {"instantiated"}
    by_ctx = {(("PlainEpilogue" in g.context), tuple(g.mainloop.tile_shape.value)): g for g in got}
    assert sorted(by_ctx) == [(False, (64, 128, 64)), (False, (128, 128, 64)), (True, (64, 128, 64)), (True, (128, 128, 64))]
    for g in got:
        assert g.loc.path.endswith("main.cu") and g.loc.line == 6
        assert g.mainloop.stages.value == g.built["mainloop.stages"] > 0
        assert g.epilogue.element_d.value == "cutlass::half_t"  # through Epilogue_<ElementD, TileShape>::Element
        g.collect_unknowns()
        assert g.unknowns == []


def test_an_adapter_of_a_kernel_a_struct_derives_from_is_that_kernels_gemm_in_the_source_mode():
    """The same fixture without the CUTLASS headers: dispatch.cuh's helper wraps
    `typename Config::GemmKernel` (a struct deriving, through only_sm90<>, from the GemmUniversal) in a
    GemmUniversalAdapter. That adapter is the kernel's GEMM, read where gemm_3x holds it: four GEMMs,
    no adapter with nothing of its own (there were two more, `GemmOp`, 'kernel not resolved')."""
    got = gemms("header_kernel_base/main.cu")
    assert [g.kind for g in got] == ["GemmUniversal"] * 4
    assert sorted((("PlainEpilogue" in g.context), tuple(P(g.mainloop, "tile_shape")))
                  for g in got) == [(False, (64, 128, 64)), (False, (128, 128, 64)), (True, (64, 128, 64)),
                                    (True, (128, 128, 64))]
    assert not any("not resolved" in n for g in got for n in g.notes)


@needs_cutlass
def test_gemms_of_a_function_template_whose_body_does_not_compile_are_read_from_a_reduced_parse():
    """FBGEMM's shape (framework_bodies/rowwise.cu): ATen is missing, so the function template's body has
    errors even with the recovery's stand-ins and clang instantiates none of its specializations. One more
    parse with the body reduced to its type declarations (frontend/cutlass/instantiated/template_bodies.py) gives both."""
    path = EXTRACT / "framework_bodies" / "rowwise.cu"
    got = sorted(gemms_instantiated(str(path)), key=lambda g: g.mainloop.tile_shape.value)
    assert [g.mode for g in got] == ["instantiated", "instantiated"]
    assert [g.mainloop.tile_shape.value for g in got] == [[64, 128, 64], [128, 128, 64]]
    assert [g.mainloop.cluster_shape.value for g in got] == [[1, 1, 1], [2, 1, 1]]
    for g in got:
        assert g.loc.line == line_of("framework_bodies/rowwise.cu", "using Gemm =")
        assert any("reduced to their type declarations" in n for n in g.notes)
        assert g.mainloop.stages.value == g.built["mainloop.stages"] > 0
        assert g.mainloop.carveout_bytes.value > 0


def test_a_reduced_body_keeps_its_declarations_at_their_places():
    """template_bodies.declarations_only on the real parse (no CUTLASS needed): statements that are not
    type or constant declarations become spaces; lines, columns and the declarations stay."""
    from fusionlint.frontend.cutlass.instantiated.template_bodies import declarations_only

    path = EXTRACT / "framework_bodies" / "rowwise.cu"
    text = path.read_text()
    unit = parse_file(path, ParseOptions(use_system_headers=False), text=text)
    gemm_line = line_of("framework_bodies/rowwise.cu", "using Gemm =")
    reduced = declarations_only(unit.tu, [str(path)], {str(path): {gemm_line}}, {str(path): text})
    (new,) = reduced.values()
    old_lines, new_lines = text.splitlines(), new.splitlines()
    assert len(old_lines) == len(new_lines) and len(new) == len(text)
    code = new[new.index("template <int TileM"):]
    assert "size_to_dim_" not in code and "reinterpret_cast" not in code and "gemm.initialize" not in code
    for line in (gemm_line, line_of("framework_bodies/rowwise.cu", "constexpr int AlignmentA")):
        assert new_lines[line - 1] == old_lines[line - 1]
    # the dispatch function is no template: untouched
    assert new_lines[-4:] == old_lines[-4:]
    # a body without a GEMM line, or without errors, is not reduced
    assert declarations_only(unit.tu, [str(path)], {str(path): {1}}, {str(path): text}) == {}


def test_a_tile_of_a_template_no_code_instantiates_is_open_and_says_why():
    name = "uninstantiated_template.cu"
    (g,) = gemms(name)
    tile = g.mainloop.tile_shape
    assert tile.value == [None, None, 128] and tile.unknown is None
    assert tile.open == "extent 0 is not known: template parameter TILE_M of int8_gemm_sm90 is not bound in this file"
    assert tile.to_dict()["open"] == tile.open
    assert g.mainloop.cluster_shape.open is None and "open" not in g.mainloop.cluster_shape.to_dict()


def test_a_finding_in_an_instance_only_another_build_compiles_says_under_which_macro(capsys):
    """left_out_instances.cu: of gemm_sm90a_impl's two instances, both under `#ifdef SMOOTHQUANT_SM90A`,
    the 64-row cooperative tile gets FL303 at the tile shape, saying that a build defining the macro
    compiles it; a build that defines it gets the same finding without the condition."""
    from fusionlint.cli import main

    path = FIXTURES / "cutlass" / "extract" / "left_out_instances.cu"
    tile = line_of("left_out_instances.cu", "using TileShape")
    for flags, said in (([], " (when `SMOOTHQUANT_SM90A` is defined: `#ifdef SMOOTHQUANT_SM90A` at line "
                         f"{line_of('left_out_instances.cu', '#ifdef SMOOTHQUANT_SM90A', -1)}, left out by this build)"),
                        (["-DSMOOTHQUANT_SM90A"], "")):
        rc = main(["check", "--no-cache", "--no-system-headers", "--output-format", "json", *flags, str(path)])
        findings = [f for f in json.loads(capsys.readouterr().out) if f["severity"] == "error"]
        assert rc == 1 and [(f["code"], f["line"]) for f in findings] == [("FL303", tile)]
        assert findings[0]["message"].endswith("on sm_90)" + said)
