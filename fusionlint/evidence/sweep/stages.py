"""How the sweep covers the configuration space: exhaustive over the type fields, then, for every
type combination cuBLASLt accepts, exhaustive over each group of fields that interact (a
*stage*), the other fields at the base configuration. The model's claim — a configuration
works exactly when each stage accepts its projection — is tested on random configurations
drawn from the joint space (``joint.py``).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator

from fusionlint.evidence.sweep.space import BASE, DOMAINS, OPS, mode_needs, needs

# stage name -> the fields it sweeps besides the type fields; "needs": whether the pointers its
# epilogue and block scale modes read are set for them (when the stage does not sweep them
# itself; the table keeps the flag as "complete_epilogue")
STAGES: list[tuple[str, list[str], bool]] = [
    ("layout", ["transa", "transb", "order_a", "order_b", "order_c", "order_d", "batch"], True),
    # the orders of A and B with the transposes (a row-major A with TRANSB=C, or GELU_AUX with a
    # row-major A, behave unlike the column-major base: H200 joint check of 2 Dec 2026)
    ("epilogue", ["epilogue", "transa", "transb", "order_a", "order_b", "order_d"], True),
    # an aux pointer with a row-major D fails where the column-major base works (same check)
    ("epilogue_pointers", ["epilogue", "bias_pointer", "aux_pointer", "aux_ld", "order_d"], False),
    ("bias_type", ["epilogue", "bias_data_type"], True),
    ("aux_type", ["epilogue", "aux_data_type"], True),
    ("scales", ["a_scale_pointer", "b_scale_pointer", "c_scale_pointer", "d_scale_pointer", "amax_d_pointer",
                "fast_accum"], True),
    ("scale_modes", ["a_scale_mode", "b_scale_mode", "a_scale_pointer", "b_scale_pointer"], True),
    ("pointer_mode", ["pointer_mode"], True),
    # FP8 block and outer-vector scale modes with the transposes and orders, and with the
    # epilogues and batching: each rejects some that the scalar modes accept (H200 joint check of
    # 2 Dec 2026, second table: its 18 missed failures all had such a mode)
    ("scale_modes_layout", ["a_scale_mode", "b_scale_mode", "transa", "transb", "order_a", "order_b", "order_d"],
     True),
    ("scale_modes_epilogue", ["a_scale_mode", "b_scale_mode", "epilogue", "batch"], True),
    # and with the C/D scale and amax pointers and fast accumulation: a block scale mode rejects a
    # C scale pointer and FAST_ACCUM, which the scalar modes accept (H200 joint-check blame of
    # 2 Dec 2026, tools/joint_blame.py: 28 of the 30 failures missed on the table before)
    ("scale_modes_scales", ["a_scale_mode", "b_scale_mode", "c_scale_pointer", "d_scale_pointer", "amax_d_pointer",
                            "fast_accum"], True),
]
assert all(set(f) <= set(DOMAINS) for _, f, _ in STAGES) and OPS


# A field that follows another when a stage sweeps only the other: cuBLASLt wants C and D in one
# order, so a stage that varied D's order alone would measure that mismatch (already the layout
# stage's finding) instead of its own fields, and reject row-major C/D outright.
TIES: dict[str, str] = {"order_c": "order_d"}


def ties(fields: list[str]) -> dict[str, str]:
    """The ties that apply to a stage sweeping ``fields``."""
    return {f: g for f, g in TIES.items() if g in fields and f not in fields}


def product(fields: list[str], domains: dict[str, list] = DOMAINS) -> Iterator[tuple]:
    """Every value combination of ``fields`` in the table's order (the last field varies fastest)."""
    return itertools.product(*(domains[f] for f in fields))


def configuration(values: dict, complete_epilogue: bool = True) -> dict:
    """A full configuration: ``values`` over the base, with the pointers its epilogue and scale
    modes read when asked (``values`` itself has the last word)."""
    cfg = dict(BASE)
    if complete_epilogue:
        cfg.update(needs(str(values.get("epilogue", BASE["epilogue"]))))
        cfg.update(mode_needs(values))
    cfg.update(values)
    return cfg


def stage_rows(types: dict, stage: tuple[str, list[str], bool], domains: dict[str, list] = DOMAINS) -> Iterator[dict]:
    _, fields, complete = stage
    tied = ties(fields)
    for combo in product(fields, domains):
        cfg = configuration({**types, **dict(zip(fields, combo))}, complete)
        for f, g in tied.items():
            cfg[f] = cfg[g]
        yield cfg
