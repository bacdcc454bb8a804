"""The sm_90 TMA epilogue's shared memory, which the kernel needs next to the mainloop's stages.

A lower bound of ``sizeof(CollectiveEpilogue::SharedStorage)`` for the epilogues the sm_90
epilogue builder makes with ``TmaWarpSpecialized`` / ``TmaWarpSpecializedCooperative``
(CUTLASS 4.2 include/cutlass/epilogue/collective/builders/sm90_builder.inl and
sm90_epilogue_tma_warpspecialized.hpp). The quantities read the fact views of ``derived`` (its ``cutlass3`` and ``cutlass_view``).
"""
from __future__ import annotations

from fusionlint.rules.derived.cutlass3 import (
    _explicit_epilogue_tile, auto_stage_count_max, builder_kernel_schedule, auto_stage_leftover_bytes, epilogue_schedule, mainloop_smem_bytes, tma_epilogue,
)
from fusionlint.model import sm90_storage
from fusionlint.rules.derived.cutlass_view import SM90_SMEM_CAPACITY, _part, _short, _tile
from fusionlint.rules.derived.registry import View, derived


def _epilogue_tile(view: View) -> tuple[int, int] | None:
    """The epilogue tile (M, N): sm90_compute_tile_shape_or_override (sm90_builder.inl:112-165) for
    EpilogueTileAuto, else an explicit cute::Shape."""
    ep = _part(view, "epilogue")
    m, n, bits_d, sched = _tile(view, 0), _tile(view, 1), ep.get("element_d_bits"), epilogue_schedule(view)
    if not all(isinstance(x, int) for x in (m, n, bits_d)) or sched is None:
        return None
    tile = ep.get("epilogue_tile")
    if _short(tile) == "EpilogueTileAuto":
        return sm90_storage.epilogue_tile_auto(m, n, bits_d, sched == "TmaWarpSpecializedCooperative")
    explicit = _explicit_epilogue_tile(view)
    return None if explicit is None else (explicit[0], explicit[1])


@derived("epilogue_storage_min_bytes", "cutlass")
def epilogue_storage_min_bytes(view: View) -> int | None:
    """A lower bound of the TMA epilogue's SharedStorage. The builder's dispatch policy
    (sm90_get_tma_dispatch_policy, sm90_builder.inl:64-86) has EpiTiles = (TileM/EpiM) x (TileN/EpiN),
    StagesD = min(EpiTiles, 2), ReuseSmem = bits(C) == bits(D) > 8, StagesC = ReuseSmem ?
    max(min(EpiTiles, 4), StagesD + 1) : min(EpiTiles, 4). The collective
    (sm90_epilogue_tma_warpspecialized.hpp:161-227) stores StagesC epilogue tiles of C and StagesD of D
    (one union of StagesC tiles when C's smem is reused, D alone when C is void) and the C load
    pipeline's barriers (2 x 8 bytes per stage of PipelineTransactionAsync<StagesC>). The fusion's
    storage, alignment padding and an aux tensor come on top: not counted. 0 for the epilogues
    without shared memory (NoSmemWarpSpecialized and the other non-TMA schedules)."""
    tma = tma_epilogue(view)
    if tma is not True:
        return None if tma is None else 0
    ep = _part(view, "epilogue")
    tile = _epilogue_tile(view)
    m, n = _tile(view, 0), _tile(view, 1)
    bits_d, element_c, bits_c = ep.get("element_d_bits"), ep.get("element_c"), ep.get("element_c_bits")
    if tile is None or m is None or n is None or not isinstance(bits_d, int) or not isinstance(element_c, str):
        return None
    tm, tn = tile
    if tm <= 0 or tn <= 0 or m % tm or n % tn:
        return None  # the builder rejects this tile (FL331, FL332)
    epi_tiles = (m // tm) * (n // tn)
    tile_elems = tm * tn
    if element_c == "void":
        stages_c, stages_d, _ = sm90_storage.epilogue_stages(epi_tiles, 0, bits_d)
        return stages_d * tile_elems * bits_d // 8 + 16 * stages_c
    if not isinstance(bits_c, int):
        return None
    stages_c, stages_d, reuse = sm90_storage.epilogue_stages(epi_tiles, bits_c, bits_d)
    if reuse:
        tensors = stages_c * tile_elems * bits_c // 8
    else:
        tensors = stages_c * tile_elems * bits_c // 8 + stages_d * tile_elems * bits_d // 8
    return tensors + 16 * stages_c


@derived("kernel_smem_bytes", "cutlass")
def kernel_smem_bytes(view: View) -> int | None:
    """sizeof(GemmKernel::SharedStorage), what initialize() asks of the GPU, where
    fusionlint.model.sm90_storage knows it (checked against nvcc over a sample of configurations):
    an SS-builder mainloop with a known stage count (explicit, or the builder's automatic one) and a
    TMA epilogue without fusion storage or a NoSmem one, in the cooperative, pingpong (both with the
    default persistent tile scheduler) or warp-specialized kernel. None otherwise."""
    ml, epilogue = _part(view, "mainloop"), sm90_storage.builder_epilogue(_part(view, "epilogue"))
    kind, stages = sm90_storage.builder_ss_kernel(ml), sm90_storage.as_int(ml.get("stages"))
    parts = epilogue[0] if epilogue else None
    m, n, k = _tile(view, 0), _tile(view, 1), _tile(view, 2)
    if kind is None or stages is None or parts is None or m is None or n is None or k is None:
        return None
    if kind != "warpspecialized" and _short(_part(view, "kernel").get("tile_scheduler")) not in \
            ("PersistentScheduler", "void"):
        return None
    return sm90_storage.kernel_storage_bytes(kind, m, n, k, ml["element_a_bits"], ml["element_b_bits"], stages, parts)


@derived("kernel_smem_min_bytes", "cutlass")
def kernel_smem_min_bytes(view: View) -> int | None:
    """A lower bound of an explicit StageCount<N> kernel's shared memory: kernel_smem_bytes where it is
    known; else the mainloop's N stages and the TMA epilogue's storage, which the persistent
    (cooperative, pingpong) kernels' SharedStorage holds one after the other and the warp-specialized
    one in a union (the larger of both). The mainloop alone when the epilogue's is not known and
    that already exceeds sm_90's capacity."""
    ml = mainloop_smem_bytes(view)  # None unless StageCount<N>: checked first, so nothing else is read then
    if ml is None:
        return None
    exact = kernel_smem_bytes(view)
    if exact is not None:
        return exact
    epi = epilogue_storage_min_bytes(view)
    if epi is None:
        return ml if ml > SM90_SMEM_CAPACITY else None
    return ml + epi if _persistent(view) is True else max(ml, epi)


def _persistent(view: View) -> bool | None:
    """Whether the kernel's SharedStorage holds the mainloop's and the epilogue's tensors one after the
    other (the persistent cooperative and pingpong kernels) rather than in a union (the
    warp-specialized kernel, sm90_gemm_tma_warpspecialized.hpp:120-128)."""
    sched = builder_kernel_schedule(view)  # KernelScheduleAuto as the builder resolves it
    if sched is None:
        return None
    if sched.startswith("KernelTmaWarpSpecialized") or sched.startswith("KernelCpAsyncWarpSpecialized"):
        return "Pingpong" in sched or "Cooperative" in sched  # sm90_gemm_[tma_]warpspecialized.hpp: a union
    return None


@derived("kernel_smem_fits_sm90", "cutlass")
def kernel_smem_fits_sm90(view: View) -> bool | None:
    need = kernel_smem_min_bytes(view)
    return None if need is None else need <= SM90_SMEM_CAPACITY


@derived("auto_stages_leave_no_epilogue_storage", "cutlass")
def auto_stages_leave_no_epilogue_storage(view: View) -> bool | None:
    """StageCountAuto (or a known carve-out) leaves less shared memory than the TMA epilogue needs:
    the kernel's SharedStorage exceeds sm_90's capacity (kernel_smem_bytes where it is known; else, in
    the persistent kernels, whose SharedStorage holds the epilogue's tensors after the mainloop's,
    the space left by the stages against the lower bound epilogue_storage_min_bytes). The
    warp-specialized kernel keeps both in a union, which the stages alone never overflow."""
    tma = tma_epilogue(view)
    if tma is not True:
        return None if tma is None else False
    exact = kernel_smem_bytes(view)
    if exact is not None:
        return exact > SM90_SMEM_CAPACITY
    persistent = _persistent(view)
    if persistent is not True:  # the warp-specialized kernel's union: the epilogue shares the stages' memory
        return None if persistent is None else False
    left, need = auto_stage_leftover_bytes(view), epilogue_storage_min_bytes(view)
    return None if left is None or need is None else left < need


@derived("auto_stage_count_bound", "cutlass")
def auto_stage_count_bound(view: View) -> int | None:
    """An upper bound of the stages StageCountAuto / StageCountAutoCarveout<B> gives (see
    auto_stage_count_max), with B bounded from below by epilogue_storage_min_bytes when it is
    sizeof(CollectiveEpilogue::SharedStorage) or StageCountAutoCarveoutEpi."""
    ml = _part(view, "mainloop")
    if ml.get("stage_count_kind") == "auto_carveout" and not isinstance(ml.get("carveout_bytes"), int) \
            and ml.get("carveout_of") == "epilogue_shared_storage":
        carveout = epilogue_storage_min_bytes(view)
        if carveout is not None:
            return auto_stage_count_max(view, carveout)
    return auto_stage_count_max(view)


_WIDE_32 = {"float", "cutlass::tfloat32_t"}
_NARROW_16 = {"cutlass::half_t", "cutlass::bfloat16_t"}


@derived("mixed_width_32bit_a_16bit_b", "cutlass")
def mixed_width_32bit_a_16bit_b(view: View) -> bool | None:
    """A is 32-bit (float / tfloat32_t) and B 16-bit (half_t / bfloat16_t) in an sm_90 CollectiveBuilder:
    sizeof_bits differ, so the builder takes the mixed-input RS mainloop (sm90_gmma_builder.inl:320-
    345), converts the narrower B and swaps A and B (SwapAB = !IsATransformed, :406)."""
    ml = _part(view, "mainloop")
    a, b = ml.get("element_a"), ml.get("element_b")
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return a in _WIDE_32 and b in _NARROW_16
