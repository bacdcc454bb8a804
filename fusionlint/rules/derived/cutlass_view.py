"""Readers of a CUTLASS fact view (its parts, the tile, alignments, template names) and the sm_90
shared-memory capacity, shared by the 3.x and the 2.x quantities."""
from __future__ import annotations

from typing import Any

from fusionlint.model import sm90_storage
from fusionlint.rules.derived.registry import View, _get


# bytes per block with opt-in, measured on the H200 (= CUTLASS sm90_smem_capacity_bytes)
SM90_SMEM_CAPACITY = sm90_storage.SM90_SMEM_CAPACITY


def _short(name: Any) -> str | None:
    return name.rsplit("::", 1)[-1] if isinstance(name, str) else None


def _part(view: View, name: str) -> dict:
    """A part of a CUTLASS view (mainloop, epilogue, kernel, gemm, problem); {} when absent."""
    part = view.get(name)
    return part if isinstance(part, dict) else {}


def _tile(view: View, i: int) -> int | None:
    tile = _part(view, "mainloop").get("tile_shape")
    if isinstance(tile, list) and len(tile) > i and isinstance(tile[i], int):
        return tile[i]
    return None


def _alignment_bits(view: View, part: str, operand: str) -> int | None:
    values = view.get(part)
    if not isinstance(values, dict):
        return None
    alignment, bits = values.get(f"alignment_{operand}"), values.get(f"element_{operand}_bits")
    if isinstance(alignment, int) and isinstance(bits, int):
        return alignment * bits
    return None


def _is(view: View, path: str, short: str) -> bool | None:
    v = _short(_get(view, path))
    return None if v is None else v == short


def _ints(values: Any, n: int) -> list[int] | None:
    if isinstance(values, list) and len(values) >= n and all(isinstance(v, int) for v in values[:n]):
        return values[:n]
    return None
