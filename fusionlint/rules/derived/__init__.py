"""Derived quantities that rules may name (``derived: NAME``): one small function each.

A function takes the fact view of the rule's scope and returns a value, or ``None`` when the
facts it needs are unknown (the rule then stays silent). The engine traces which facts a
function reads to tell an undecided check (a fact it read is unknown) from one that does not
apply: read what decides applicability first, and return before reading the rest.

The quantities live in one module per scope and library (``attribute_set``, ``cublaslt``,
``cutlass3``, ``cutlass2``, ``epilogue_storage``; ``cutlass_view`` and ``cute_layout`` are their helpers); importing
this package registers them all in ``REGISTRY`` (with ``SCOPES`` and ``BLAME``, ``registry.py``).
"""
from __future__ import annotations

from fusionlint.rules.derived import attribute_set, cublaslt, cutlass2, cutlass3, epilogue_storage  # noqa: F401 (they register)
from fusionlint.rules.derived.cublaslt import pointee_data_type
from fusionlint.rules.derived.cute_layout import _coalesce_x, _stage_slice_divisible
from fusionlint.rules.derived.cutlass3 import auto_stage_count_max, builder_kernel_schedule, \
    explicit_epilogue_tile_supported
from fusionlint.rules.derived.registry import BLAME, REGISTRY, SCOPE_NAMES, SCOPES, View, blame, derived, walk

__all__ = ["BLAME", "REGISTRY", "SCOPES", "SCOPE_NAMES", "View", "blame", "derived", "walk", "pointee_data_type",
           "auto_stage_count_max", "builder_kernel_schedule", "explicit_epilogue_tile_supported", "_coalesce_x",
           "_stage_slice_divisible"]
