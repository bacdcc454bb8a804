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
_AUTO_TILE = "cutlass::epilogue::collective::EpilogueTileAuto"
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


def _short(p: Param) -> str | None:
    return p.value.rsplit("::", 1)[-1] if isinstance(p.value, str) else None


def epilogue_storage_bytes(ep: EpilogueBuilder) -> int | None:
    """sizeof(CollectiveEpilogue::SharedStorage) of an sm_90 epilogue builder, or None outside the measured space."""
    if ep.arch.value != _SM90 or ep.op_class.value != _TENSOR_OP:
        return None
    tile = _ints(ep.tile_shape, 2)
    c_row, d_row, sched = _row(ep.layout_c), _row(ep.layout_d), _short(ep.epilogue_schedule)
    bits_c = 0 if ep.element_c.value == "void" else ep.element_c.bits
    explicit = None if ep.epilogue_tile.value == _AUTO_TILE else _ints(ep.epilogue_tile, 2)
    if tile is None or c_row is None or d_row is None or sched is None or not isinstance(bits_c, int) \
            or not isinstance(ep.element_d.bits, int) or not isinstance(ep.fusion_op.value, str) \
            or (explicit is None and ep.epilogue_tile.value != _AUTO_TILE):
        return None
    got = sm90_storage.epilogue_parts(sched, ep.fusion_op.value, tile[0], tile[1],
                                      tuple(explicit) if explicit else None, bits_c, c_row, ep.element_d.bits, d_row)
    return None if got is None else got[1]


def _ss_builder(ml: MainloopBuilder) -> bool:
    """The builder that makes this mainloop sizes its stages with compute_stage_count_or_override
    (sm90_storage.ss_kernel)."""
    tile, a_row, b_row, sched = _ints(ml.tile_shape, 1), _row(ml.layout_a), _row(ml.layout_b), _short(ml.kernel_schedule)
    if ml.arch.value != _SM90 or ml.op_class.value != _TENSOR_OP or tile is None or a_row is None or b_row is None \
            or sched is None or not isinstance(ml.element_a.bits, int) or not isinstance(ml.element_b.bits, int):
        return False
    return sm90_storage.ss_kernel(sched, tile[0], ml.element_a.bits, ml.element_b.bits, a_row, b_row,
                                  _int(ml.alignment_a), _int(ml.alignment_b)) is not None


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
