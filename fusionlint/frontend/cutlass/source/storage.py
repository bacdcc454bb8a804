"""Source mode's values for what the sm_90 collective builders compute from shared memory: the carve-out
``sizeof(typename CollectiveEpilogue::SharedStorage)`` and the stage count of ``StageCountAuto`` /
``StageCountAutoCarveout<B>``, from the builders' facts read in the text (no CUTLASS headers).

The arithmetic is :mod:`fusionlint.model.sm90_storage`'s, checked against nvcc over a sampled space of
configurations; what lies outside that space (other fusions, mixed-width or register-sourced A,
grouped and block-scaled schedules, other architectures) keeps its unknown value and reason.
"""
from __future__ import annotations

from fusionlint.model import sm90_storage
from fusionlint.model.cutlass_facts import EpilogueBuilder, MainloopBuilder, Param, fact_values

_MODEL = "as CUTLASS 4.2's sm_90 builders compute it (fusionlint.model.sm90_storage)"


def epilogue_storage_bytes(ep: EpilogueBuilder) -> int | None:
    """sizeof(CollectiveEpilogue::SharedStorage) of an sm_90 epilogue builder, or None outside the measured space."""
    got = sm90_storage.builder_epilogue(fact_values(ep))
    return None if got is None else got[1]


def fill_builder_stages(ml: MainloopBuilder, carveout_epilogue: EpilogueBuilder | None) -> None:
    """Fill an automatic stage count's unknown carve-out (sizeof of ``carveout_epilogue``'s SharedStorage)
    and stage count where the builders' arithmetic is known for the configuration."""
    kind = ml.stage_count_kind.value
    if kind not in ("auto", "auto_carveout") or sm90_storage.as_int(ml.stages.value) is not None:
        return
    carveout = sm90_storage.as_int(ml.carveout_bytes.value)
    if carveout is None and kind == "auto_carveout" and ml.carveout_of.value == "epilogue_shared_storage" \
            and carveout_epilogue is not None:
        carveout = epilogue_storage_bytes(carveout_epilogue)
        if carveout is not None:
            ml.carveout_bytes = _computed(ml.carveout_bytes, carveout,
                                          f"sizeof({carveout_epilogue.name or 'CollectiveEpilogue'}::SharedStorage) "
                                          + _MODEL)
    values, tile = fact_values(ml), ml.tile_shape.value
    if carveout is None or sm90_storage.builder_ss_kernel(values) is None or not isinstance(tile, list) \
            or len(tile) < 3 or not all(isinstance(x, int) for x in tile[:3]):
        return
    n = sm90_storage.auto_stage_count(carveout, tile[0], tile[1], tile[2], values["element_a_bits"],
                                      values["element_b_bits"])
    ml.stages = _computed(ml.stages, n, "the collective builder's PipelineStages " + _MODEL)


def _computed(p: Param, value: int, how: str) -> Param:
    return Param(value, None, at=p.at, origin=p.origin, via=f"{p.via} -> {how}" if p.via else how, written=p.written)
