"""FL127: a cuBLASLt configuration against the measured support table (fusionlint/model/support_table.py).

The configuration's fact view is mapped onto the table's fields; a value the front end could
not resolve becomes the field's whole domain, an attribute nobody set becomes "unset" (only where its
absence is decided: every write to the descriptor names a known attribute and it did not escape;
otherwise either), and a value equal to the attribute's
default may be either "unset" or that value. The finding is raised only when no completion is
supported; it names the call and status cuBLASLt gave in the sweep and the nearest supported
configurations (fewest fields changed).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fusionlint.findings import BUILTIN_CODES
from fusionlint.findings import SUPPORT_TABLE as SUPPORT_TABLE_CODE
from fusionlint.model.support_table import LABELS, NOT_SET_VALUE, SupportTable, Verdict

SUPPORT_TABLE_NAME = BUILTIN_CODES[SUPPORT_TABLE_CODE][0]

_UNKNOWN = object()
# attributes whose default is a value of the domain too: (view value that equals the default)
_DEFAULTS = {"pointer_mode": "CUBLASLT_POINTER_MODE_HOST", "fast_accum": 0,
             "a_scale_mode": "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F",
             "b_scale_mode": "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F"}
_DESC_VALUES = {"compute_type": "COMPUTE_TYPE", "scale_type": "SCALE_TYPE", "transa": "TRANSA", "transb": "TRANSB",
                "epilogue": "EPILOGUE", "bias_data_type": "BIAS_DATA_TYPE", "aux_data_type": "EPILOGUE_AUX_DATA_TYPE",
                "a_scale_mode": "A_SCALE_MODE", "b_scale_mode": "B_SCALE_MODE", "fast_accum": "FAST_ACCUM",
                "pointer_mode": "POINTER_MODE"}
_ABSENT_MEANS = {"compute_type": None, "scale_type": None, "transa": "CUBLAS_OP_N", "transb": "CUBLAS_OP_N",
                 "epilogue": "CUBLASLT_EPILOGUE_DEFAULT"}
_DESC_POINTERS = {"bias_pointer": "BIAS_POINTER", "aux_pointer": "EPILOGUE_AUX_POINTER", "aux_ld": "EPILOGUE_AUX_LD",
                  "a_scale_pointer": "A_SCALE_POINTER", "b_scale_pointer": "B_SCALE_POINTER",
                  "c_scale_pointer": "C_SCALE_POINTER", "d_scale_pointer": "D_SCALE_POINTER",
                  "amax_d_pointer": "AMAX_D_POINTER"}


# layout attributes that select another family of kernels, which the sweep (interleaved, one plane per
# matrix) never measured: a planar complex layout (CUDALibrarySamples' LtPlanarComplex, CUDA_C_16F with a
# CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET) is outside the table, whatever its types
_UNSWEPT_LAYOUT = ("PLANE_OFFSET",)


def outside_sweep(view: dict) -> str | None:
    """The attribute that puts a configuration outside the measured space, None when none does."""
    from fusionlint.rules.markers import ABSENT

    for m in "ABCD":
        layout = view.get(f"layout_{m}", {}) or {}
        for attr in _UNSWEPT_LAYOUT:
            v = layout.get(attr, ABSENT)
            if v is not ABSENT and v != 0:
                return f"layout_{m}.{attr}"
    return None


def _plain(v: Any) -> Any:
    """A view value as the table spells it: a name, an int; None for unknown/runtime."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (str, int)):
        return v
    return _UNKNOWN


def table_config(view: dict, complete: bool | Callable[[str], bool]) -> dict[str, Any]:
    """``{table field: value | [candidates] | None (unknown)}`` for one configuration view.
    ``complete`` says whether an attribute missing from the view was never set: one answer for
    every attribute, or per attribute (``complete("matmul_desc.BIAS_POINTER")``, the engine's
    per-attribute absence)."""
    from fusionlint.rules.markers import ABSENT, RUNTIME, UNKNOWN

    desc = view.get("matmul_desc", {}) or {}
    out: dict[str, Any] = {}

    def absent_or_unknown(default: Any, attr: str) -> Any:
        known = complete(f"matmul_desc.{attr}") if callable(complete) else complete
        return default if known else None

    for m in "ABCD":
        layout = view.get(f"layout_{m}", {}) or {}
        t = layout.get("TYPE", UNKNOWN)
        out[f"{m.lower()}_type"] = t if isinstance(t, str) else None
        order = layout.get("ORDER", "CUBLASLT_ORDER_COL")
        out[f"order_{m.lower()}"] = order if isinstance(order, str) else (
            None if order is UNKNOWN or order is RUNTIME else "CUBLASLT_ORDER_COL" if order is ABSENT else order)
    batches = [(view.get(f"layout_{m}", {}) or {}).get("BATCH_COUNT", 1) for m in "ABCD"]
    if all(isinstance(b, int) and not isinstance(b, bool) for b in batches) and len(set(batches)) == 1:
        out["batch"] = 1 if batches[0] <= 1 else 2
    else:
        out["batch"] = None
    for field, attr in _DESC_VALUES.items():
        v = desc.get(attr, ABSENT)
        if v is ABSENT:
            out[field] = absent_or_unknown(_ABSENT_MEANS.get(field, NOT_SET_VALUE), attr)
            continue
        p = _plain(v)
        if p is _UNKNOWN or v is UNKNOWN:
            out[field] = None
            continue
        if field == "fast_accum" and isinstance(p, int):
            p = 1 if p else 0
        if field in _DEFAULTS and p == _DEFAULTS[field]:
            out[field] = [NOT_SET_VALUE, p]
        else:
            out[field] = p
    for field, attr in _DESC_POINTERS.items():
        v = desc.get(attr, ABSENT)
        if v is ABSENT:
            out[field] = absent_or_unknown(False, attr)
        elif v is RUNTIME:
            out[field] = True
        elif v is UNKNOWN:
            out[field] = None
        elif isinstance(v, int) and not isinstance(v, bool):
            out[field] = bool(v) if field != "aux_ld" else True
        else:
            out[field] = None
    return out


def _value_text(v: Any) -> str:
    if v is True:
        return "set"
    if v is False:
        return "not set"
    return str(v)


def describe_fields(table: SupportTable, config: dict[str, Any], fields: list[str] | tuple[str, ...]) -> str:
    parts = []
    for f in fields:
        v = config.get(f)
        if isinstance(v, list):
            v = v[-1]
        parts.append(f"{LABELS.get(f, f)} {_value_text(v) if v is not None else 'unknown'}")
    return ", ".join(parts)


def status_text(status: str) -> str:
    """A table status as a user reads it: a sweep driver killed by a signal means the program died
    inside cuBLASLt (the table keeps the driver's words)."""
    import re

    m = re.match(r"driver died \(exit status (-?\d+)\)", status or "")
    if m:
        code = int(m.group(1))
        sig = {-6: "SIGABRT", -11: "SIGSEGV", -7: "SIGBUS", -8: "SIGFPE"}.get(code)
        return f"the program killed inside cuBLASLt ({sig or f'exit status {code}'}; no status returned)"
    return status


def nearest_text(table: SupportTable, suggestions: list[tuple[str, list]]) -> str:
    out = []
    for field, values in suggestions:
        if "+" in field:
            names = " + ".join(LABELS.get(f, f) for f in field.split("+"))
            out.append(f"{names} -> " + " | ".join("(" + ", ".join(_value_text(x) for x in v) + ")" for v in values))
        else:
            shown = [_value_text(v) for v in values[:6]]
            more = f" (+{len(values) - 6} more)" if len(values) > 6 else ""
            out.append(f"{LABELS.get(field, field)} -> {' | '.join(shown)}{more}")
    return "; ".join(out)


def check_view(table: SupportTable, view: dict,
               complete: bool | Callable[[str], bool]) -> tuple[Verdict, str, str] | None:
    """(verdict, message, fix) when the table says no completion of this configuration is
    supported; None otherwise (supported, or outside the measured space)."""
    if outside_sweep(view) is not None:
        return None
    config = table_config(view, complete)
    outside: set[str] = set()  # values the sweep never measured: the stages sweeping them decide nothing
    cands = table.candidates(config, outside)
    if cands is None:
        return None
    verdict = table.check(cands, outside)
    if verdict.supported is not False:
        return None
    if verdict.stage == "types":
        fields: tuple[str, ...] = table.type_fields
    else:
        stage = next(s for s in table.stages if s.name == verdict.stage)
        fields = tuple(dict.fromkeys((*table.type_fields, *stage.fields)))
    unknown = [LABELS.get(f, f) for f in fields if len(cands[f]) > 1 and f not in outside]
    got = status_text(verdict.failure) or "rejected"
    if unknown:
        got = f"whatever the {', '.join(unknown)} (not known statically): {got}"
    message = f"{table.description} does not support {describe_fields(table, config, fields)}; the sweep got {got}"
    known = [f for f in fields if len(cands[f]) == 1]
    suggestions = table.nearest(cands, [f for f in known if f not in outside], skip=outside)
    fix = ("nearest supported (fewest fields changed): " + nearest_text(table, suggestions)) if suggestions else \
        "no configuration with one or two of these fields changed is supported; see `fusionlint rule FL127`"
    return verdict, message, fix
