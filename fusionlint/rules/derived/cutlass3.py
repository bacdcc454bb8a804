"""Derived quantities of the ``cutlass`` scope for CUTLASS 3.x sm_90 GEMMs (FL301-FL318, FL327-FL333):
the collective builders' decisions (schedules, tiles, stage counts, epilogue tiles, smem layouts)
and the TMA collectives' can_implement checks of literal problem sizes."""
from __future__ import annotations

from typing import Any

from fusionlint.model import sm90_storage
from fusionlint.rules.derived.cute_layout import (_smem_swizzle_bits, _stage_slice_divisible, _stage_tile_failure,
                                                 _stage_tile_leaves)
from fusionlint.rules.derived.cutlass_view import (SM90_SMEM_CAPACITY, _alignment_bits, _ints, _is, _part,
                                                   _short, _tile)
from fusionlint.rules.derived.registry import View, _get, derived


@derived("tile_m", "cutlass")
def tile_m(view: View) -> int | None:
    return _tile(view, 0)


@derived("kernel_schedule", "cutlass")
def kernel_schedule(view: View) -> str | None:
    """The mainloop's kernel schedule without namespace, e.g. KernelTmaWarpSpecializedCooperative."""
    return _short(_get(view, "mainloop.kernel_schedule"))


@derived("epilogue_schedule", "cutlass")
def epilogue_schedule(view: View) -> str | None:
    return _short(_get(view, "epilogue.epilogue_schedule"))


@derived("tma_kernel_schedule", "cutlass")
def tma_kernel_schedule(view: View) -> bool | None:
    """A TMA mainloop schedule (the builder asserts TMA alignment for these; Auto falls back silently)."""
    s = kernel_schedule(view)
    return None if s is None else s.startswith("KernelTma")


@derived("cooperative_schedule", "cutlass")
def cooperative_schedule(view: View) -> bool | None:
    s = kernel_schedule(view)
    return None if s is None else "Cooperative" in s


@derived("ab_alignment_128_bits", "cutlass")
def ab_alignment_128_bits(view: View) -> bool | None:
    """AlignmentA x bits(A) and AlignmentB x bits(B) are multiples of 128 bits (16 bytes, TMA)."""
    a, b = _alignment_bits(view, "mainloop", "a"), _alignment_bits(view, "mainloop", "b")
    if (a is not None and a % 128) or (b is not None and b % 128):
        return False
    return None if a is None or b is None else True


@derived("cd_alignment_128_bits", "cutlass")
def cd_alignment_128_bits(view: View) -> bool | None:
    """AlignmentC x bits(C) and AlignmentD x bits(D) are multiples of 128 bits (C void excepted)."""
    values = _part(view, "epilogue")
    c = None if values.get("element_c") == "void" else _alignment_bits(view, "epilogue", "c")
    d = _alignment_bits(view, "epilogue", "d")
    if (c is not None and c % 128) or (d is not None and d % 128):
        return False
    return None if d is None else True


@derived("mainloop_smem_bytes", "cutlass")
def mainloop_smem_bytes(view: View) -> int | None:
    """Shared memory of an explicit StageCount<N> mainloop: N x (A tile + B tile + 16 B of barriers).
    A lower bound of the kernel's total (the epilogue and scheduler come on top)."""
    values = _part(view, "mainloop")
    if values.get("stage_count_kind") != "fixed":  # checked first: what it reads is what the value depends on
        return None
    stages, m, n, k = values.get("stages"), _tile(view, 0), _tile(view, 1), _tile(view, 2)
    bits_a, bits_b = values.get("element_a_bits"), values.get("element_b_bits")
    if not all(isinstance(x, int) for x in (stages, m, n, k, bits_a, bits_b)):
        return None
    per_stage = -(-bits_a * m * k // 8) + -(-bits_b * n * k // 8)
    return stages * (per_stage + 16)


@derived("smem_fits_sm90", "cutlass")
def smem_fits_sm90(view: View) -> bool | None:
    need = mainloop_smem_bytes(view)
    return None if need is None else need <= SM90_SMEM_CAPACITY


@derived("sm90_smem_capacity", "cutlass")
def sm90_smem_capacity(view: View) -> int:
    return SM90_SMEM_CAPACITY


@derived("narrow_nt_operands", "cutlass")
def narrow_nt_operands(view: View) -> bool | None:
    """8-bit A/B with A ColumnMajor and B RowMajor (the RS 'TransposeB' path)."""
    values = _part(view, "mainloop")
    bits = values.get("element_a_bits")
    a_col, b_row = _is(view, "mainloop.layout_a", "ColumnMajor"), _is(view, "mainloop.layout_b", "RowMajor")
    if bits is None or a_col is None or b_row is None:
        return None
    return bits == 8 and a_col and b_row


@derived("non16_tt_operands", "cutlass")
def non16_tt_operands(view: View) -> bool | None:
    """Non-16-bit A/B (tf32/float, fp8, int8) with A RowMajor and B RowMajor (the RS 'SwapAB' path)."""
    values = _part(view, "mainloop")
    bits = values.get("element_a_bits")
    a_row, b_row = _is(view, "mainloop.layout_a", "RowMajor"), _is(view, "mainloop.layout_b", "RowMajor")
    if bits is None or a_row is None or b_row is None:
        return None
    return bits != 16 and a_row and b_row


@derived("tile_k", "cutlass")
def tile_k(view: View) -> int | None:
    return _tile(view, 2)


@derived("tile_k_multiple", "cutlass")
def tile_k_multiple(view: View) -> int | None:
    """TileK granularity of an sm_90 GMMA: 32 bytes of A (16 for 16-bit, 8 for tf32, 32 for 8-bit)."""
    values = _part(view, "mainloop")
    bits = values.get("element_a_bits")
    return 256 // bits if isinstance(bits, int) and bits in (8, 16, 32) else None


@derived("tile_k_aligned", "cutlass")
def tile_k_aligned(view: View) -> bool | None:
    k, multiple = tile_k(view), tile_k_multiple(view)
    return None if k is None or multiple is None else k % multiple == 0


_FP8 = {"cutlass::float_e4m3_t", "cutlass::float_e5m2_t"}
_TF32 = {"float", "cutlass::tfloat32_t"}
_INT8 = {"int8_t", "uint8_t"}


@derived("gmma_type_supported", "cutlass")
def gmma_type_supported(view: View) -> bool | None:
    """(ElementA, ElementB, accumulator) is a combination the sm_90 GMMA selector accepts
    (same-width operands; mixed widths take CUTLASS's mixed-input path and are not judged)."""
    values = _part(view, "mainloop")
    a, b, acc = values.get("element_a"), values.get("element_b"), values.get("element_accumulator")
    if not all(isinstance(x, str) for x in (a, b, acc)):
        return None
    if values.get("element_a_bits") != values.get("element_b_bits"):
        return None
    if acc == "cutlass::half_t":
        return (a == b == "cutlass::half_t") or (a in _FP8 and b in _FP8)
    if acc == "float":
        return (a == b and a in ("cutlass::half_t", "cutlass::bfloat16_t")) or (a in _TF32 and b in _TF32) or \
            (a in _FP8 and b in _FP8)
    if acc == "int32_t":
        return a in _INT8 and b in _INT8
    return False


@derived("auto_stage_count", "cutlass")
def auto_stage_count(view: View) -> int | None:
    """What StageCountAuto / StageCountAutoCarveout<B> gives: (232448 - B rounded up to 128) divided by
    (A tile + B tile rounded up to 128, + 16 bytes of pipeline barriers), as CUTLASS's
    compute_stage_count_or_override computes it (sm90_gmma_builder.inl)."""
    ml = _part(view, "mainloop")
    kind, carveout = ml.get("stage_count_kind"), ml.get("carveout_bytes")
    if kind == "auto":
        carveout = 0
    if kind not in ("auto", "auto_carveout") or not isinstance(carveout, int):
        return None
    ml = _part(view, "mainloop")
    m, n, k, bits_a, bits_b = _tile(view, 0), _tile(view, 1), _tile(view, 2), ml.get("element_a_bits"), ml.get("element_b_bits")
    if not all(isinstance(x, int) for x in (m, n, k, bits_a, bits_b)):
        return None
    return sm90_storage.auto_stage_count(carveout, m, n, k, bits_a, bits_b)


def _auto_stage_bytes(view: View) -> int | None:
    """One stage as the automatic stage count sizes it (sm90_storage.stage_bytes)."""
    ml = _part(view, "mainloop")
    m, n, k, bits_a, bits_b = _tile(view, 0), _tile(view, 1), _tile(view, 2), ml.get("element_a_bits"), ml.get("element_b_bits")
    if not all(isinstance(x, int) for x in (m, n, k, bits_a, bits_b)):
        return None
    return sm90_storage.stage_bytes(m, n, k, bits_a, bits_b)


@derived("auto_stage_bytes", "cutlass")
def auto_stage_bytes(view: View) -> int | None:
    """One mainloop stage as compute_stage_count_or_override sizes it (see _auto_stage_bytes)."""
    return _auto_stage_bytes(view)


@derived("auto_stage_count_max", "cutlass")
def auto_stage_count_max(view: View, carveout_min: int | None = None) -> int | None:
    """The most stages StageCountAuto / StageCountAutoCarveout<B> can give in an sm_90 builder:
    compute_stage_count_or_override (gemm/collective/builders/sm90_gmma_builder.inl:69-84),
    (232448 / align * align - round_up(B, align)) / (round_up(A tile + B tile, align) + 16), with the
    smallest alignment (128; the RS and mixed-input builders use the smem swizzle's, up to 1024, :463)
    and B = 0 when the carve-out is not known (the epilogue's SharedStorage in source mode). Each of
    these only lowers the count, so this is an upper bound of the builder's PipelineStages; for A
    and B of different widths the larger of both operand orders (the mixed-input builder may swap)."""
    ml = _part(view, "mainloop")
    kind = ml.get("stage_count_kind")
    if kind not in ("auto", "auto_carveout"):
        return None
    carveout = ml.get("carveout_bytes") if kind == "auto_carveout" else 0
    carveout = carveout if isinstance(carveout, int) and not isinstance(carveout, bool) else (carveout_min or 0)
    m, n, k, bits_a, bits_b = _tile(view, 0), _tile(view, 1), _tile(view, 2), ml.get("element_a_bits"), \
        ml.get("element_b_bits")
    if not all(isinstance(x, int) for x in (m, n, k, bits_a, bits_b)):
        return None
    return max(sm90_storage.auto_stage_count(carveout, m, n, k, ba, bb) for ba, bb in {(bits_a, bits_b), (bits_b, bits_a)})


@derived("auto_stage_leftover_bytes", "cutlass")
def auto_stage_leftover_bytes(view: View) -> int | None:
    """Shared memory an automatic stage count leaves for everything else (the epilogue)."""
    stages, stage = auto_stage_count(view), _auto_stage_bytes(view)
    return None if stages is None or stage is None else SM90_SMEM_CAPACITY - stages * stage


@derived("tma_epilogue", "cutlass")
def tma_epilogue(view: View) -> bool | None:
    s = epilogue_schedule(view)
    return None if s is None else s in ("TmaWarpSpecialized", "TmaWarpSpecializedCooperative")


@derived("builder_kernel_schedule", "cutlass")
def builder_kernel_schedule(view: View) -> str | None:
    """The kernel schedule the sm_90 mainloop builder builds with: KernelScheduleAuto resolved as
    gemm/collective/builders/sm90_gmma_builder.inl:1002-1020 does it (CUDA >= 12.1): TMA when A and B
    are 16-byte aligned (sizeof x Alignment % 16), then Pingpong for TileM 64 and Cooperative for any
    other TileM; KernelCpAsyncWarpSpecialized when they are not. Other schedules are returned as written."""
    s = kernel_schedule(view)
    if s != "KernelScheduleAuto":
        return s
    a, b = _alignment_bits(view, "mainloop", "a"), _alignment_bits(view, "mainloop", "b")
    if a is None or b is None:
        return None
    if a % 128 or b % 128:
        return "KernelCpAsyncWarpSpecialized"
    m = tile_m(view)
    if m is None:
        return None
    return "KernelTmaWarpSpecializedPingpong" if m == 64 else "KernelTmaWarpSpecializedCooperative"


# sm_90 kernel schedules whose builder lays two consumer warpgroups along M (AtomLayoutMNK 2x1x1:
# sm90_gmma_builder.inl:245-249, :428-432, :559-563) and those with one (1x1x1)
_COOPERATIVE_MMA = {"KernelTmaWarpSpecializedCooperative", "KernelTmaWarpSpecializedCooperativeFP8FastAccum"}
_SINGLE_WARPGROUP_MMA = {"KernelTmaWarpSpecialized", "KernelTmaWarpSpecializedPingpong",
                         "KernelTmaWarpSpecializedFP8FastAccum", "KernelTmaWarpSpecializedPingpongFP8FastAccum",
                         "KernelCpAsyncWarpSpecialized", "KernelCpAsyncWarpSpecializedPingpong"}


@derived("mma_tile_m", "cutlass")
def mma_tile_m(view: View) -> int | None:
    """Rows of the builder's TiledMma: 64 (one GMMA warpgroup) x AtomLayoutMNK's M, which is 2 for the
    cooperative schedules (sm90_gmma_builder.inl:245-249; cp.async cooperative only for TileM >= 128,
    :802-803). The epilogue's mma_tile_m (sm90_epilogue_tma_warpspecialized.hpp:613) is this value."""
    s = builder_kernel_schedule(view)
    if s is None:
        return None
    if s in _COOPERATIVE_MMA:
        return 128
    if s == "KernelCpAsyncWarpSpecializedCooperative":
        m = tile_m(view)
        return None if m is None else (64 if m < 128 else 128)
    return 64 if s in _SINGLE_WARPGROUP_MMA else None


def _explicit_epilogue_tile(view: View) -> list[int] | None:
    return _ints(_part(view, "epilogue").get("epilogue_tile"), 2)


@derived("explicit_epilogue_tile_supported", "cutlass")
def explicit_epilogue_tile_supported(view: View) -> bool | None:
    """An explicit EpilogueTile (a cute::Shape) passes the TMA epilogue builder's checks,
    epilogue/collective/builders/sm90_builder.inl:160-162: M == 64 with TmaWarpSpecialized, M == 128
    with TmaWarpSpecializedCooperative, and N % 16 == 0. None for EpilogueTileAuto."""
    sched = epilogue_schedule(view)
    if sched is None or tma_epilogue(view) is not True:
        return None
    tile = _explicit_epilogue_tile(view)
    if tile is None:
        return None
    need_m = 128 if sched == "TmaWarpSpecializedCooperative" else 64
    return tile[0] == need_m and tile[1] % 16 == 0


@derived("epilogue_tile_m", "cutlass")
def epilogue_tile_m(view: View) -> int | None:
    """M of the TMA epilogue's tile: an explicit EpilogueTile's M, or the automatic one of
    sm90_compute_tile_shape_or_override (sm90_builder.inl:117-126): min(128, TileM) for
    TmaWarpSpecializedCooperative, min(64, TileM) for TmaWarpSpecialized."""
    sched = epilogue_schedule(view)
    if sched is None or tma_epilogue(view) is not True:
        return None
    tile = _part(view, "epilogue").get("epilogue_tile")
    if _short(tile) == "EpilogueTileAuto":
        m = tile_m(view)
        return None if m is None else min(128 if sched == "TmaWarpSpecializedCooperative" else 64, m)
    explicit = _explicit_epilogue_tile(view)
    return None if explicit is None else explicit[0]


@derived("mma_tile_m_divides_epilogue_tile_m", "cutlass")
def mma_tile_m_divides_epilogue_tile_m(view: View) -> bool | None:
    """CUTE_STATIC_ASSERT(epi_tile_m % mma_tile_m == 0) of the TMA epilogue's store
    (sm90_epilogue_tma_warpspecialized.hpp:671). An explicit tile the builder already rejects
    (sm90_builder.inl:160), or a TileM the MMA tile does not divide (the cooperative kernel's
    "Tile Size to be greater than or equal to 128": FL303), never gets there and counts as dividing."""
    if explicit_epilogue_tile_supported(view) is False:
        return True
    epi, mma, m = epilogue_tile_m(view), mma_tile_m(view), tile_m(view)
    if epi is None or mma is None or m is None:
        return None
    if m % mma:  # a TileM the MMA does not tile fails before (FL303, FL308)
        return True
    return epi % mma == 0


@derived("epilogue_tile_text", "cutlass")
def epilogue_tile_text(view: View) -> str | None:
    tile = _explicit_epilogue_tile(view)
    return None if tile is None else "x".join(map(str, tile))


@derived("tile_n", "cutlass")
def tile_n(view: View) -> int | None:
    return _tile(view, 1)


def _operand_k_major(layout: Any, operand: str) -> bool | None:
    short = _short(layout)
    if short not in ("RowMajor", "ColumnMajor"):
        return None
    return short == ("RowMajor" if operand == "a" else "ColumnMajor")


def _rmem_a(bits_a: int, bits_b: int, ka: bool, kb: bool) -> bool:
    """is_use_rmem_A (gemm/collective/builders/sm90_common.inl:394-415) for elements without scales:
    operands of different widths, or not both 16-bit and not both K-major, take the RS builder."""
    return bits_a != bits_b or (not (bits_a == 16 and bits_b == 16) and not (ka and kb))


@derived("register_sourced_a", "cutlass")
def register_sourced_a(view: View) -> bool | None:
    """The sm_90 builder takes the register-sourced (RS) mainloop (is_use_rmem_A): A and B of different
    widths, or 8/32-bit operands not both K-major (A RowMajor and B ColumnMajor)."""
    ml = _part(view, "mainloop")
    bits_a, bits_b = ml.get("element_a_bits"), ml.get("element_b_bits")
    ka, kb = _operand_k_major(ml.get("layout_a"), "a"), _operand_k_major(ml.get("layout_b"), "b")
    if not isinstance(bits_a, int) or not isinstance(bits_b, int) or ka is None or kb is None:
        return None
    return _rmem_a(bits_a, bits_b, ka, kb)


_RS_SCHEDULES = {"KernelTmaWarpSpecialized", "KernelTmaWarpSpecializedPingpong", "KernelTmaWarpSpecializedCooperative"}


@derived("rs_mma_k_blocks", "cutlass")
def rs_mma_k_blocks(view: View) -> int | None:
    """MMA K-blocks per K tile of the TMA RS mainloop (GMMA_TMA_WS_RS, sm90_gmma_builder.inl:306-345)
    for operands of one width: TileK / (256 / bits), the GMMA K being 32 bytes (tf32 8, 8-bit 32).
    None outside the RS path, for mixed widths (not measured), for other schedules, and for A and B
    both MN-major (A ColumnMajor, B RowMajor), whose B transpose fails first (FL343, FL306)."""
    if register_sourced_a(view) is not True or builder_kernel_schedule(view) not in _RS_SCHEDULES:
        return None
    ml = _part(view, "mainloop")
    if not _operand_k_major(ml.get("layout_a"), "a") and not _operand_k_major(ml.get("layout_b"), "b"):
        return None
    bits = ml.get("element_a_bits")
    k = _tile(view, 2)
    if k is None or bits != ml.get("element_b_bits") or bits not in (8, 32):
        return None
    return k * bits // 256


@derived("tf32_transposed_b_k_bytes", "cutlass")
def tf32_transposed_b_k_bytes(view: View) -> int | None:
    """Bytes of one K row of B's smem tile when the TMA RS mainloop transposes B in shared memory
    (TransposeB: 32-bit A ColumnMajor with B RowMajor, both MN-major; the builder's tf32 'NT' path),
    which sm90_mma_tma_gmma_rs_warpspecialized.hpp:195 requires to be 128. None elsewhere."""
    ml = _part(view, "mainloop")
    if builder_kernel_schedule(view) not in _RS_SCHEDULES or ml.get("element_a_bits") != 32 \
            or ml.get("element_b_bits") != 32:
        return None
    ka, kb, k = _operand_k_major(ml.get("layout_a"), "a"), _operand_k_major(ml.get("layout_b"), "b"), _tile(view, 2)
    if ka is None or kb is None or k is None:
        return None
    return k * 4 if not ka and not kb else None  # A ColumnMajor (M-major), B RowMajor (N-major)


@derived("smem_stage_slice_problem", "cutlass")
def smem_stage_slice_problem(view: View) -> str | None:
    """The operand whose mainloop smem layout cannot be sliced at its first stage: the TMA mainloops'
    to_underlying_arguments call make_tma_copy with SmemLayoutA{}(_,_,Int<0>{}) and
    SmemLayoutB{}(_,_,Int<0>{}) (sm90_mma_tma_gmma_ss_warpspecialized.hpp:181-188,
    sm90_mma_tma_gmma_rs_warpspecialized_mixed_input.hpp:327-349), and with a 128-byte swizzle a
    stage stride (TileN x TileK elements) such as 136 x 64 breaks CuTe's "Stride Divisibility
    Condition". "" when both slices compile; None when not known (an unknown stage count, a
    layout the selector rejects, an MN-major operand of the register-A path)."""
    s = builder_kernel_schedule(view)
    if s is None:
        return None
    if not s.startswith("KernelTma") or not s.endswith(("Cooperative", "Pingpong", "WarpSpecialized",
                                                         "FP8FastAccum")):
        return ""  # cp.async and other mainloops make no TMA copy from the smem layout
    ml = _part(view, "mainloop")
    m, n, k = _tile(view, 0), _tile(view, 1), _tile(view, 2)
    bits_a, bits_b = ml.get("element_a_bits"), ml.get("element_b_bits")
    ka, kb = _operand_k_major(ml.get("layout_a"), "a"), _operand_k_major(ml.get("layout_b"), "b")
    if not all(isinstance(x, int) for x in (m, n, k, bits_a, bits_b)) or ka is None or kb is None:
        return None
    if m % 64 or n % 8:  # the GMMA selector fails first (FL308, FL332)
        return ""
    rs = _rmem_a(bits_a, bits_b, ka, kb)
    # the register-A paths with B MN-major (B transposed in smem) or swapped (B narrower) are not modelled
    if rs and (not kb or bits_b < bits_a):
        return None
    stages = ml.get("stages") if ml.get("stage_count_kind") == "fixed" else None
    if not isinstance(stages, int):
        stages = None
    unknown = False
    for name, bits, mn, kmaj in (("A", bits_a, m, ka), ("B", bits_b, n, kb)):
        # the ss selector maps MN-major tf32 and 8-bit operands to K-major (gmma_ss_tag_to_major_A/B)
        major = "K" if kmaj or (not rs and bits in (8, 32)) else "MN"
        swizzle = _smem_swizzle_bits(major, bits, k if major == "K" else mn, rs=rs)
        if swizzle is None:
            unknown = True
            continue
        ok = _stage_slice_divisible(swizzle, mn * k, stages)
        if ok is False:
            return (f"the {name} tile's stages are {mn} x {k} = {mn * k} elements apart, which the "
                    f"{ {1: 32, 2: 64, 3: 128}[swizzle]}-byte swizzle of its shared-memory "
                    f"layout does not divide (CuTe's \"Stride Divisibility Condition\")")
        if ok is None:
            unknown = True
        leaves = _stage_tile_leaves(major, swizzle, bits, mn, k, k_first=not kmaj)
        if leaves is None:
            unknown = True
        elif failed := _stage_tile_failure(swizzle, leaves):
            shape = f"(({leaves[0][0]},{leaves[1][0]}),({leaves[2][0]},{leaves[3][0]}))"
            stride = f"(({leaves[0][1]},{leaves[1][1]}),({leaves[2][1]},{leaves[3][1]}))"
            return (f"the {name} tile's stage layout {shape}:{stride} ({major}-major {mn} x {k}) does not "
                    f"compose with the {({1: 32, 2: 64, 3: 128}[swizzle])}-byte swizzle of its shared-memory "
                    f"layout (CuTe's \"{failed}\")")
    return None if unknown else ""


@derived("tile_scheduler", "cutlass")
def tile_scheduler(view: View) -> str | None:
    return _short(_get(view, "kernel.tile_scheduler"))


@derived("fp8_fast_accum_schedule", "cutlass")
def fp8_fast_accum_schedule(view: View) -> bool | None:
    s = kernel_schedule(view)
    return None if s is None else s.endswith("FP8FastAccum")


@derived("ab_both_fp8", "cutlass")
def ab_both_fp8(view: View) -> bool | None:
    ml = _part(view, "mainloop")
    a, b = ml.get("element_a"), ml.get("element_b")
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return a in _FP8 and b in _FP8


@derived("fp8_promotion_steps", "cutlass")
def fp8_promotion_steps(view: View) -> int | None:
    """MMAs per K tile of the FP8 (non-fast-accumulation) mainloop: TileK / 32."""
    k = tile_k(view)
    return None if k is None or k <= 0 or k % 32 else k // 32


@derived("fp8_promotion_interval_ok", "cutlass")
def fp8_promotion_interval_ok(view: View) -> bool | None:
    """can_implement of the FP8 TMA mainloop: mma_promotion_interval (default 4) % (TileK / 32) == 0."""
    steps = fp8_promotion_steps(view)
    return None if steps is None else 4 % steps == 0


@derived("cluster_size", "cutlass")
def cluster_size(view: View) -> int | None:
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    return None if c is None else c[0] * c[1] * c[2]


@derived("cluster_k", "cutlass")
def cluster_k(view: View) -> int | None:
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    return None if c is None else c[2]


@derived("cluster_shape_text", "cutlass")
def cluster_shape_text(view: View) -> str | None:
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    return None if c is None else "x".join(map(str, c))


@derived("cluster_divides_tile", "cutlass")
def cluster_divides_tile(view: View) -> bool | None:
    """Do the cluster's M and N extents divide the tile's? The TMA mainloops split the tile across the
    cluster with cute::shape_div(TileShape, ClusterShape), whose "Divisibility Condition" needs one of
    each pair to divide the other (a cluster extent of at most 16 never is a multiple of a tile extent)."""
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    t = _ints(_part(view, "mainloop").get("tile_shape"), 3)
    if c is None or t is None or 0 in c[:2] or 0 in t[:2]:
        return None
    return all(ti % ci == 0 or ci % ti == 0 for ti, ci in zip(t[:2], c[:2]))


@derived("tile_shape_text", "cutlass")
def tile_shape_text(view: View) -> str | None:
    t = _ints(_part(view, "mainloop").get("tile_shape"), 3)
    return None if t is None else "x".join(map(str, t))


@derived("operator_style_epilogue", "cutlass")
def operator_style_epilogue(view: View) -> bool | None:
    """Is the epilogue a bare cutlass::epilogue::collective::DefaultEpilogue (called as an operator,
    without the load/store pipeline interface), not wrapped in Sm90TmaWarpSpecializedAdapter?"""
    ep = _part(view, "epilogue")
    if "type" not in ep:  # an epilogue from the CollectiveBuilder (or none read)
        return False if ep else None
    name = ep["type"]
    return _short(name) == "DefaultEpilogue" if isinstance(name, str) else None


@derived("sm90_warp_specialized_schedule", "cutlass")
def sm90_warp_specialized_schedule(view: View) -> bool | None:
    """An sm_90 warp-specialized kernel schedule (TMA or cp.async; ping-pong and cooperative included)."""
    s = kernel_schedule(view)
    if s is None:
        return None
    return "WarpSpecialized" in s and s.startswith(("KernelTma", "KernelCpAsync")) and not s.endswith(("Sm100", "Sm103", "Sm120"))


@derived("builder_arch", "cutlass")
def builder_arch(view: View) -> str | None:
    return _short(_get(view, "mainloop.arch")) or _short(_get(view, "epilogue.arch"))


# ---- literal problem sizes (can_implement) ------------------------------------------------------
def _contiguous(layout: Any, operand: str) -> str | None:
    """The extent that is contiguous in memory for an operand's layout: A is MxK, B is NxK
    (CUTLASS 3.x), C and D are MxN."""
    short = _short(layout)
    if short not in ("RowMajor", "ColumnMajor"):
        return None
    return {("a", "RowMajor"): "k", ("a", "ColumnMajor"): "m", ("b", "ColumnMajor"): "k", ("b", "RowMajor"): "n",
            ("c", "RowMajor"): "n", ("c", "ColumnMajor"): "m", ("d", "RowMajor"): "n", ("d", "ColumnMajor"): "m"}[
        (operand, short)]


@derived("tma_misaligned_extent", "cutlass")
def tma_misaligned_extent(view: View) -> str | None:
    """The first operand whose contiguous extent is not a multiple of 16 bytes of its elements, as
    the sm_90 TMA collectives' can_implement checks it ("" when all are; None when unknown)."""
    problem, ml, ep = _part(view, "problem"), _part(view, "mainloop"), _part(view, "epilogue")
    checks = [("A", "a", ml.get("layout_a"), ml.get("element_a_bits"))] * (tma_kernel_schedule(view) is True) + \
             [("B", "b", ml.get("layout_b"), ml.get("element_b_bits"))] * (tma_kernel_schedule(view) is True)
    if tma_epilogue(view) is True:
        if ep.get("element_c") != "void":
            checks.append(("C", "c", ep.get("layout_c"), ep.get("element_c_bits")))
        checks.append(("D", "d", ep.get("layout_d"), ep.get("element_d_bits")))
    unknown = False
    for name, operand, layout, bits in checks:
        extent = _contiguous(layout, operand)
        value = problem.get(extent) if extent else None
        if not isinstance(value, int) or not isinstance(bits, int) or bits <= 0 or 128 % bits:
            unknown = True
            continue
        need = 128 // bits
        if value % need:
            return (f"{extent.upper()} = {value}, the contiguous extent of {_short(layout)} {name}, is not a "
                    f"multiple of {need} {bits}-bit elements (16 bytes)")
    return None if unknown or not checks else ""
