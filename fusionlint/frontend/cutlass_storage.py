"""Source mode's values for what the sm_90 collective builders compute from shared memory: the carve-out
``sizeof(typename CollectiveEpilogue::SharedStorage)`` and the stage count of ``StageCountAuto`` /
``StageCountAutoCarveout<B>``, from the builders' facts read in the text (no CUTLASS headers).

The arithmetic is :mod:`fusionlint.model.sm90_storage`'s, checked against nvcc over a sampled space of
configurations; what lies outside that space (other fusions, mixed-width or register-sourced A,
grouped and block-scaled schedules, other architectures) keeps its unknown value and reason.
"""
from __future__ import annotations

from fusionlint.model import sm90_storage
from fusionlint.model.cutlass_facts import EpilogueBuilder, MainloopBuilder, Param

_SM90, _TENSOR_OP = "cutlass::arch::Sm90", "cutlass::arch::OpClassTensorOp"
_ROW, _COL = "cutlass::layout::RowMajor", "cutlass::layout::ColumnMajor"
_NO_SMEM = {"cutlass::epilogue::NoSmemWarpSpecialized", "cutlass::epilogue::collective::EpilogueScheduleAuto"}
_AUTO_TILE = "cutlass::epilogue::collective::EpilogueTileAuto"
# the kernel schedules of the builders whose PipelineStages is compute_stage_count_or_override with the
# 128-byte alignment and sm_90's whole capacity (GMMA_TMA_WS_SS and GMMA_TMA_WS_FP8_FAST_ACCUM_SS,
# gemm/collective/builders/sm90_gmma_builder.inl:188-270, 503-585), and KernelScheduleAuto, which picks
# one of them for TMA-aligned operands of one width (:1000-1040)
_SS_SCHEDULES = {f"cutlass::gemm::{s}" for s in (
    "KernelTmaWarpSpecialized", "KernelTmaWarpSpecializedPingpong", "KernelTmaWarpSpecializedCooperative",
    "KernelTmaWarpSpecializedFP8FastAccum", "KernelTmaWarpSpecializedPingpongFP8FastAccum",
    "KernelTmaWarpSpecializedCooperativeFP8FastAccum")}
_AUTO_SCHEDULE = "cutlass::gemm::collective::KernelScheduleAuto"
_MODEL = "as CUTLASS 4.2's sm_90 builders compute it (fusionlint.model.sm90_storage)"


def _int(p: Param) -> int | None:
    v = p.value
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _ints(p: Param, n: int) -> list[int] | None:
    v = p.value
    if isinstance(v, list) and len(v) >= n and all(isinstance(x, int) and not isinstance(x, bool) for x in v[:n]):
        return v[:n]
    return None


def _row(p: Param) -> bool | None:
    return {_ROW: True, _COL: False}.get(p.value) if isinstance(p.value, str) else None


def epilogue_storage_bytes(ep: EpilogueBuilder) -> int | None:
    """sizeof(CollectiveEpilogue::SharedStorage) of an sm_90 epilogue builder, or None outside the measured space."""
    if ep.arch.value != _SM90 or ep.op_class.value != _TENSOR_OP:
        return None
    sched, fusion = ep.epilogue_schedule.value, ep.fusion_op.value
    if sched in _NO_SMEM:
        return 1 if fusion == "cutlass::epilogue::fusion::LinearCombination" else None  # an empty struct
    short = sched.rsplit("::", 1)[-1] if isinstance(sched, str) and sched.startswith("cutlass::epilogue::") else None
    if short not in sm90_storage.TMA_SCHEDULES or fusion not in sm90_storage.EMPTY_STORAGE_FUSIONS:
        return None
    tile = _ints(ep.tile_shape, 2)
    bits_d, c_row, d_row = ep.element_d.bits, _row(ep.layout_c), _row(ep.layout_d)
    bits_c = 0 if ep.element_c.value == "void" else ep.element_c.bits
    if tile is None or c_row is None or d_row is None or not isinstance(bits_c, int) or bits_d not in (8, 16, 32) \
            or bits_c not in (0, 8, 16, 32):
        return None
    if ep.epilogue_tile.value == _AUTO_TILE:
        epi = sm90_storage.epilogue_tile_auto(tile[0], tile[1], bits_d, sm90_storage.TMA_SCHEDULES[short])
    else:
        epi = _ints(ep.epilogue_tile, 2)
        if epi is None:
            return None
    return sm90_storage.tma_epilogue_storage_bytes(tile[0], tile[1], epi[0], epi[1], bits_c, c_row, bits_d, d_row)


def _ss_builder(ml: MainloopBuilder) -> bool:
    """The builder that makes this mainloop sizes its stages with compute_stage_count_or_override (128-byte
    alignment): sm_90 tensor ops, one of _SS_SCHEDULES, A and B of one width that is 16-bit or K-major
    (else is_use_rmem_A takes the RS builder, sm90_common.inl:394-415)."""
    if ml.arch.value != _SM90 or ml.op_class.value != _TENSOR_OP:
        return False
    bits_a, bits_b = ml.element_a.bits, ml.element_b.bits
    if bits_a not in (8, 16, 32) or bits_a != bits_b:
        return False
    a_row, b_row = _row(ml.layout_a), _row(ml.layout_b)
    if a_row is None or b_row is None or (bits_a != 16 and not (a_row and not b_row)):
        return False
    sched = ml.kernel_schedule.value
    if sched == _AUTO_SCHEDULE:
        align_a, align_b = _int(ml.alignment_a), _int(ml.alignment_b)
        return align_a is not None and align_b is not None and (align_a * bits_a) % 128 == 0 \
            and (align_b * bits_b) % 128 == 0
    return sched in _SS_SCHEDULES


def fill_builder_stages(ml: MainloopBuilder, carveout_epilogue: EpilogueBuilder | None) -> None:
    """Fill an automatic stage count's unknown carve-out (sizeof of ``carveout_epilogue``'s SharedStorage)
    and stage count where the builders' arithmetic is known for the configuration."""
    kind = ml.stage_count_kind.value
    if kind not in ("auto", "auto_carveout") or _int(ml.stages) is not None:
        return
    carveout = _int(ml.carveout_bytes)
    if carveout is None and kind == "auto_carveout" and ml.carveout_of.value == "epilogue_shared_storage" \
            and carveout_epilogue is not None:
        carveout = epilogue_storage_bytes(carveout_epilogue)
        if carveout is not None:
            ml.carveout_bytes = _computed(ml.carveout_bytes, carveout,
                                          f"sizeof({carveout_epilogue.name or 'CollectiveEpilogue'}::SharedStorage) "
                                          + _MODEL)
    tile = _ints(ml.tile_shape, 3)
    if carveout is None or tile is None or not _ss_builder(ml):
        return
    n = sm90_storage.auto_stage_count(carveout, tile[0], tile[1], tile[2], ml.element_a.bits, ml.element_b.bits)
    ml.stages = _computed(ml.stages, n, "the collective builder's PipelineStages " + _MODEL)


def _computed(p: Param, value: int, how: str) -> Param:
    return Param(value, None, at=p.at, origin=p.origin, via=f"{p.via} -> {how}" if p.via else how, written=p.written)
