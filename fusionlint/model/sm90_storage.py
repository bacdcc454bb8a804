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

from math import gcd

SM90_SMEM_CAPACITY = 232448  # cutlass::gemm::collective::detail::sm90_smem_capacity_bytes (sm90_common.inl)
MAINLOOP_PIPELINE_BYTES = 16  # sizeof(PipelineTmaAsync<1>::SharedStorage): one full and one empty barrier
# fusions whose FusionCallbacks::SharedStorage holds no tensor (their nodes are scalar broadcasts, the
# source and accumulator fetches and element-wise computes): measured as 1 byte, an empty struct
EMPTY_STORAGE_FUSIONS = frozenset({
    "cutlass::epilogue::fusion::LinearCombination",
    "cutlass::epilogue::fusion::LinCombEltAct",
})
TMA_SCHEDULES = {"TmaWarpSpecialized": False, "TmaWarpSpecializedCooperative": True}  # -> cooperative


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


def tma_epilogue_storage_bytes(tile_m: int, tile_n: int, epi_m: int, epi_n: int, bits_c: int, c_row_major: bool,
                               bits_d: int, d_row_major: bool) -> int | None:
    """sizeof(SharedStorage) of CollectiveEpilogue<Sm90TmaWarpSpecialized<...>> (epilogue/collective/
    sm90_epilogue_tma_warpspecialized.hpp:161-230) with a fusion of no shared storage: the
    collective's smem of C and D (a struct of both, a union when C's smem is reused for D, D alone
    when C is void; each array aligned to its swizzle atom), then the empty fusion storage, then the C
    load pipeline's barriers (2 x 8 bytes per C stage), the whole rounded to its alignment. bits_c 0
    for a void C (its smem element is D's then). None where the builder would reject the tile."""
    if epi_m <= 0 or epi_n <= 0 or tile_m % epi_m or tile_n % epi_n:
        return None
    stages_c, stages_d, reuse = epilogue_stages((tile_m // epi_m) * (tile_n // epi_n), bits_c, bits_d)
    elem_c = bits_c or bits_d
    align_c = swizzle_alignment(epi_n if c_row_major else epi_m, elem_c)
    align_d = swizzle_alignment(epi_n if d_row_major else epi_m, bits_d)
    if align_c is None or align_d is None:
        return None
    tile = epi_m * epi_n
    bytes_c, bytes_d = stages_c * tile * elem_c // 8, (stages_c if reuse else stages_d) * tile * bits_d // 8
    if not bits_c:  # union { array<C, 0>; alignas(D) D[] }
        align = align_d
        collective = _round_up(max(1, bytes_d), align)
    elif reuse:  # union { alignas(max) C[]; alignas(max) D[] }
        align = max(align_c, align_d)
        collective = _round_up(max(bytes_c, bytes_d), align)
    else:  # struct { alignas(C) C[]; alignas(D) D[] }
        align = max(align_c, align_d)
        collective = _round_up(_round_up(bytes_c, align_d) + bytes_d, align)
    tensors = _round_up(collective + 1, align)  # + the empty FusionStorage, padded to the struct's alignment
    return _round_up(tensors + 16 * stages_c, align)


def auto_stage_count(carveout: int, tile_m: int, tile_n: int, tile_k: int, bits_a: int, bits_b: int,
                     capacity: int = SM90_SMEM_CAPACITY, alignment: int = 128) -> int:
    """compute_stage_count_or_override for StageCountAutoCarveout<carveout> (gemm/collective/builders/
    sm90_gmma_builder.inl:68-84): (capacity rounded down to the alignment - carve-out rounded up) /
    (A tile + B tile rounded up, + the pipeline's barriers); StageCountAuto is a carve-out of 0."""
    stage = _round_up(-(-bits_a * tile_m * tile_k // 8) + -(-bits_b * tile_n * tile_k // 8), alignment) \
        + MAINLOOP_PIPELINE_BYTES
    return (capacity // alignment * alignment - _round_up(carveout, alignment)) // stage
