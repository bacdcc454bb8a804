"""The shared-memory arithmetic of CUTLASS 4.2's sm_90 collective builders, as plain functions of numbers.

What ``sizeof(typename CollectiveEpilogue::SharedStorage)`` is for the epilogues the sm_90 epilogue
builder makes, and how many stages ``StageCountAuto`` / ``StageCountAutoCarveout<B>`` give the
mainloop, so that source mode (no CUTLASS headers) knows the values the compiler computes. Each
function cites the CUTLASS lines it follows; tests/test_sm90_storage.py checks them against nvcc's
own numbers over a seeded random sample of configurations
(kernels_ref/evidence/nvcc-sm90-storage-sweep.json, :mod:`fusionlint.evidence.sweep_sm90_storage`).
A configuration outside what was measured gets ``None``, never a guess.
"""
from __future__ import annotations

from collections.abc import Mapping
from math import gcd
from typing import Any

SM90_SMEM_CAPACITY = 232448  # cutlass::gemm::collective::detail::sm90_smem_capacity_bytes (sm90_common.inl)
MAINLOOP_PIPELINE_BYTES = 16  # sizeof(PipelineTmaAsync<1>::SharedStorage): one full and one empty barrier
# fusions whose FusionCallbacks::SharedStorage holds no tensor (their nodes are scalar broadcasts, the
# source and accumulator fetches and element-wise computes): measured as 1 byte, an empty struct
EMPTY_STORAGE_FUSIONS = frozenset({
    "cutlass::epilogue::fusion::LinearCombination",
    "cutlass::epilogue::fusion::LinCombEltAct",
})
TMA_SCHEDULES = {"TmaWarpSpecialized": False, "TmaWarpSpecializedCooperative": True}  # -> cooperative
NO_SMEM_SCHEDULES = {"NoSmemWarpSpecialized", "EpilogueScheduleAuto"}  # Auto builds NoSmem (sm90_builder.inl:620)
DEFAULT_FUSION = "cutlass::epilogue::fusion::LinearCombination"
# the mainloop kernel schedules of the SS builders measured (GMMA_TMA_WS_SS, GMMA_TMA_WS_FP8_FAST_ACCUM_SS:
# gemm/collective/builders/sm90_gmma_builder.inl:188-270, 503-585), with the GemmUniversal kernel each makes
SS_KERNELS = {
    "KernelTmaWarpSpecialized": "warpspecialized", "KernelTmaWarpSpecializedFP8FastAccum": "warpspecialized",
    "KernelTmaWarpSpecializedPingpong": "pingpong", "KernelTmaWarpSpecializedPingpongFP8FastAccum": "pingpong",
    "KernelTmaWarpSpecializedCooperative": "cooperative", "KernelTmaWarpSpecializedCooperativeFP8FastAccum": "cooperative",
}


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def epilogue_tile_auto(tile_m: int, tile_n: int, bits_d: int, cooperative: bool) -> tuple[int, int]:
    """EpilogueTileAuto: sm90_compute_tile_shape_or_override (epilogue/collective/builders/
    sm90_builder.inl:112-165): (min(128, M), gcd(min(32, N), N)) for the cooperative schedule,
    (min(64, M), gcd(min(N_perf, N), N)) otherwise, N_perf 64 for an 8-bit D with N % 64 == 0, else 32."""
    if cooperative:
        return min(128, tile_m), gcd(min(32, tile_n), tile_n)
    n_perf = 64 if bits_d == 8 and tile_n % 64 == 0 else 32
    return min(64, tile_m), gcd(min(n_perf, tile_n), tile_n)


def epilogue_stages(epi_tiles: int, bits_c: int, bits_d: int) -> tuple[int, int, bool]:
    """(StagesC, StagesD, ReuseSmemC) of sm90_get_tma_dispatch_policy (sm90_builder.inl:64-86); bits_c 0
    for a void C."""
    reuse = bits_c == bits_d and bits_d > 8
    stages_d = min(epi_tiles, 2)
    stages_c = max(min(epi_tiles, 4), stages_d + 1) if reuse else min(epi_tiles, 4)
    return stages_c, stages_d, reuse


def swizzle_alignment(contiguous: int, bits: int) -> int | None:
    """alignment_for_swizzle (cutlass/detail/layout.hpp:420) of the smem layout atom that
    ss_smem_selector (gemm/collective/builders/sm90_common.inl:273) picks along the tile's contiguous
    extent (N of a row-major C/D tile, M of a column-major one): 1024, 512, 256 or 128 bytes for the
    SW128, SW64, SW32 and INTER atoms (widths 1024, 512, 256, 128 bits). None where the selector asserts."""
    for width_bits, align in ((1024, 1024), (512, 512), (256, 256), (128, 128)):
        if width_bits % bits == 0 and contiguous % (width_bits // bits) == 0:
            return align
    return None


def _struct(fields: list[tuple[int, int]], min_align: int = 1) -> tuple[int, int]:
    """(sizeof, alignof) of a struct of ``fields`` (size, alignment) in order, as C++ lays it out."""
    offset, align = 0, min_align
    for size, a in fields:
        offset = _round_up(offset, a) + size
        align = max(align, a)
    return _round_up(max(offset, 1), align), align


def _union(fields: list[tuple[int, int]]) -> tuple[int, int]:
    align = max(a for _, a in fields)
    return _round_up(max(size for size, _ in fields), align), align


EMPTY = (1, 1)  # an empty struct


def tma_epilogue_parts(tile_m: int, tile_n: int, epi_m: int, epi_n: int, bits_c: int, c_row_major: bool,
                       bits_d: int, d_row_major: bool) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """(sizeof, alignof) of the TensorStorage and of the PipelineStorage of CollectiveEpilogue<
    Sm90TmaWarpSpecialized<...>> (epilogue/collective/sm90_epilogue_tma_warpspecialized.hpp:161-232)
    with a fusion of no shared storage. TensorStorage: the collective's smem of C and D (a struct of
    both, a union when C's smem is reused for D, D alone when C is void; each array aligned to its
    swizzle atom), then the empty fusion storage. PipelineStorage: the C load pipeline's barriers,
    2 x 8 bytes per C stage. bits_c 0 for a void C (its smem element is D's then). None where the
    builder would reject the tile."""
    if epi_m <= 0 or epi_n <= 0 or tile_m % epi_m or tile_n % epi_n:
        return None
    stages_c, stages_d, reuse = epilogue_stages((tile_m // epi_m) * (tile_n // epi_n), bits_c, bits_d)
    elem_c = bits_c or bits_d
    align_c = swizzle_alignment(epi_n if c_row_major else epi_m, elem_c)
    align_d = swizzle_alignment(epi_n if d_row_major else epi_m, bits_d)
    if align_c is None or align_d is None:
        return None
    tile = epi_m * epi_n
    arr_c = (stages_c * tile * elem_c // 8, align_c)
    arr_d = ((stages_c if reuse else stages_d) * tile * bits_d // 8, align_d)
    if not bits_c:  # union { array<C, 0>; alignas(D) D[] }
        collective = _union([EMPTY, arr_d])
    elif reuse:  # union { alignas(max) C[]; alignas(max) D[] }
        both = max(align_c, align_d)
        collective = _union([(arr_c[0], both), (arr_d[0], both)])
    else:  # struct { alignas(C) C[]; alignas(D) D[] }
        collective = _struct([arr_c, arr_d])
    return _struct([collective, EMPTY]), (16 * stages_c, 8)


def tma_epilogue_storage_bytes(tile_m: int, tile_n: int, epi_m: int, epi_n: int, bits_c: int, c_row_major: bool,
                               bits_d: int, d_row_major: bool) -> int | None:
    """sizeof(CollectiveEpilogue::SharedStorage) of the TMA epilogue of tma_epilogue_parts: its
    TensorStorage, then its PipelineStorage."""
    parts = tma_epilogue_parts(tile_m, tile_n, epi_m, epi_n, bits_c, c_row_major, bits_d, d_row_major)
    return None if parts is None else _struct(list(parts))[0]


# the epilogues without shared memory (NoSmemWarpSpecialized, what EpilogueScheduleAuto builds:
# epilogue/collective/detail.hpp:273-283): an empty TensorStorage and PipelineTransactionAsync<0>'s
# storage, one byte each as nvcc lays them out (measured: the kernels' sizes match only so)
NO_SMEM_EPILOGUE_PARTS = (EMPTY, (1, 1))


def kernel_storage_bytes(kernel: str, tile_m: int, tile_n: int, tile_k: int, bits_a: int, bits_b: int, stages: int,
                         epilogue: tuple[tuple[int, int], tuple[int, int]]) -> int | None:
    """sizeof(GemmKernel::SharedStorage) of GemmUniversal with an SS TMA mainloop of ``stages`` stages and
    an epilogue of (TensorStorage, PipelineStorage) ``epilogue``, for ``kernel`` "cooperative"
    (sm90_gemm_tma_warpspecialized_cooperative.hpp:149-168: the pipelines' barriers, each 16-aligned,
    with the load-order barrier; the tile scheduler's empty storage; a 128-aligned struct of the
    epilogue's tensors then the mainloop's), "pingpong" (sm90_gemm_tma_warpspecialized_pingpong.hpp:
    163-184: the same with the math warp groups' 2 x 2 order barriers) or "warpspecialized"
    (sm90_gemm_tma_warpspecialized.hpp:120-137: a union of both tensor storages, then the barriers).
    The mainloop's TensorStorage (sm90_mma_tma_gmma_ss_warpspecialized.hpp:153-158): A's and B's
    stages as 16-aligned arrays in a 128-aligned struct; its pipeline: 2 x 8 bytes per stage."""
    ml_tensors = _struct([(stages * -(-tile_m * tile_k * bits_a // 8), 16),
                          (stages * -(-tile_n * tile_k * bits_b // 8), 16)], 128)
    ml_pipeline = 16 * stages
    ep_tensors, ep_pipeline = epilogue
    if kernel in ("cooperative", "pingpong"):
        barriers = [(ml_pipeline, 16), (ep_pipeline[0], 16)] + ([(32, 16)] if kernel == "pingpong" else []) \
            + [(16, 16)]
        return _struct([_struct(barriers, 16), (1, 16), _struct([ep_tensors, ml_tensors], 128)])[0]
    if kernel == "warpspecialized":
        return _struct([_union([ml_tensors, ep_tensors]), _struct([(ml_pipeline, 16), (ep_pipeline[0], 16)], 16)])[0]
    return None


def ss_kernel(schedule: str, tile_m: int, bits_a: int, bits_b: int, a_row_major: bool, b_row_major: bool,
              align_a: int | None, align_b: int | None) -> str | None:
    """The GemmUniversal kind ("cooperative", "pingpong", "warpspecialized") of a mainloop made by one of
    the SS builders of SS_KERNELS, whose PipelineStages is compute_stage_count_or_override with a
    128-byte alignment; None for any other builder. The SS builders take A and B of one width that is
    16-bit or K-major (else is_use_rmem_A picks the RS builder, sm90_common.inl:394-415);
    KernelScheduleAuto with TMA-aligned operands of one width takes Pingpong for TileM 64, else
    Cooperative (sm90_gmma_builder.inl:1000-1040)."""
    if bits_a not in (8, 16, 32) or bits_a != bits_b or (bits_a != 16 and not (a_row_major and not b_row_major)):
        return None
    if schedule == "KernelScheduleAuto":
        if align_a is None or align_b is None or (align_a * bits_a) % 128 or (align_b * bits_b) % 128:
            return None
        return "pingpong" if tile_m == 64 else "cooperative"
    return SS_KERNELS.get(schedule)


def epilogue_parts(schedule: str, fusion: str, tile_m: int, tile_n: int, epilogue_tile: tuple[int, int] | None,
                   bits_c: int, c_row_major: bool, bits_d: int, d_row_major: bool
                   ) -> tuple[tuple[tuple[int, int], tuple[int, int]], int] | None:
    """((TensorStorage, PipelineStorage) as (sizeof, alignof) pairs, sizeof(SharedStorage)) of the epilogue
    an sm_90 epilogue builder makes: the TMA schedules (``schedule`` without namespace) with a fusion of
    EMPTY_STORAGE_FUSIONS, ``epilogue_tile`` None for EpilogueTileAuto; NoSmemWarpSpecialized and
    EpilogueScheduleAuto with the default fusion (one byte). bits_c 0 for a void C. None outside that."""
    if schedule in NO_SMEM_SCHEDULES:
        return (NO_SMEM_EPILOGUE_PARTS, 1) if fusion == DEFAULT_FUSION else None
    if schedule not in TMA_SCHEDULES or fusion not in EMPTY_STORAGE_FUSIONS or bits_d not in (8, 16, 32) \
            or bits_c not in (0, 8, 16, 32):
        return None
    epi = epilogue_tile or epilogue_tile_auto(tile_m, tile_n, bits_d, TMA_SCHEDULES[schedule])
    parts = tma_epilogue_parts(tile_m, tile_n, epi[0], epi[1], bits_c, c_row_major, bits_d, d_row_major)
    return None if parts is None else (parts, _struct(list(parts))[0])


def auto_stage_count(carveout: int, tile_m: int, tile_n: int, tile_k: int, bits_a: int, bits_b: int,
                     capacity: int = SM90_SMEM_CAPACITY, alignment: int = 128) -> int:
    """compute_stage_count_or_override for StageCountAutoCarveout<carveout> (gemm/collective/builders/
    sm90_gmma_builder.inl:68-84): (capacity rounded down to the alignment - carve-out rounded up) /
    (A tile + B tile rounded up, + the pipeline's barriers); StageCountAuto is a carve-out of 0."""
    stage = stage_bytes(tile_m, tile_n, tile_k, bits_a, bits_b, alignment)
    return (capacity // alignment * alignment - _round_up(carveout, alignment)) // stage


def stage_bytes(tile_m: int, tile_n: int, tile_k: int, bits_a: int, bits_b: int, alignment: int = 128) -> int:
    """One mainloop stage as compute_stage_count_or_override sizes it: the A and B tiles rounded up to
    the alignment, plus the pipeline's barriers."""
    return _round_up(-(-bits_a * tile_m * tile_k // 8) + -(-bits_b * tile_n * tile_k // 8), alignment) \
        + MAINLOOP_PIPELINE_BYTES


# ---- the same questions asked of a builder's fact values ----------------------------------------------
# ``values``: a part's facts by field name, element widths as ``<field>_bits`` (the shape of a rule view's
# ``mainloop`` / ``epilogue`` and of the front end's Params); anything not an int / str there is unknown.
def _short(v: Any) -> str | None:
    return v.rsplit("::", 1)[-1] if isinstance(v, str) else None


def as_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _nums(v: Any, n: int) -> list[int] | None:
    return v[:n] if isinstance(v, list) and len(v) >= n and all(as_int(x) is not None for x in v[:n]) else None


def _row_major(v: Any) -> bool | None:
    return {"RowMajor": True, "ColumnMajor": False}.get(_short(v) or "")


def _sm90_tensor_op(values: Mapping[str, Any]) -> bool:
    return _short(values.get("arch")) == "Sm90" and _short(values.get("op_class")) in ("OpClassTensorOp", None)


def builder_epilogue(values: Mapping[str, Any]) -> tuple[tuple[tuple[int, int], tuple[int, int]], int] | None:
    """epilogue_parts of an sm_90 epilogue builder's fact values, None where one of them is unknown."""
    tile, sched, fusion = _nums(values.get("tile_shape"), 2), _short(values.get("epilogue_schedule")), \
        values.get("fusion_op")
    c_row, d_row, bits_d = _row_major(values.get("layout_c")), _row_major(values.get("layout_d")), \
        as_int(values.get("element_d_bits"))
    bits_c = 0 if values.get("element_c") == "void" else as_int(values.get("element_c_bits"))
    auto = _short(values.get("epilogue_tile")) == "EpilogueTileAuto"
    explicit = None if auto else _nums(values.get("epilogue_tile"), 2)
    if not _sm90_tensor_op(values) or tile is None or sched is None or not isinstance(fusion, str) or c_row is None \
            or d_row is None or bits_d is None or bits_c is None or (explicit is None and not auto):
        return None
    return epilogue_parts(sched, fusion, tile[0], tile[1], tuple(explicit) if explicit else None,  # type: ignore[arg-type]
                          bits_c, c_row, bits_d, d_row)


def builder_ss_kernel(values: Mapping[str, Any]) -> str | None:
    """ss_kernel of an sm_90 mainloop builder's fact values, None where one of them is unknown."""
    tile, sched = _nums(values.get("tile_shape"), 1), _short(values.get("kernel_schedule"))
    bits_a, bits_b = as_int(values.get("element_a_bits")), as_int(values.get("element_b_bits"))
    a_row, b_row = _row_major(values.get("layout_a")), _row_major(values.get("layout_b"))
    if not _sm90_tensor_op(values) or tile is None or sched is None or bits_a is None or bits_b is None \
            or a_row is None or b_row is None:
        return None
    return ss_kernel(sched, tile[0], bits_a, bits_b, a_row, b_row, as_int(values.get("alignment_a")),
                     as_int(values.get("alignment_b")))

