"""The fact views rules read, and the one list of what they hold.

A rule's condition names facts of its scope's view: ``attribute_set`` (one SetAttribute call),
``configuration`` (what reaches a heuristic query or a matmul), ``cutlass`` (one CUTLASS GEMM).
The builders below make those views; :func:`fact_fields` says, per scope, which roots and fields
a view has (what the loader checks a rule's fact paths against); :func:`fact_roots` is their
union. A new fact is added here and in its dataclass, nowhere else.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from fusionlint.model.cutlass_facts import CutlassGemm, fact_values
from fusionlint.model.cublaslt_facts import AttrSet, Configuration
from fusionlint.model.cublaslt_api import ApiModel
from fusionlint.model.values import Known, Unknown, Value
from fusionlint.rules.markers import RUNTIME, UNKNOWN

ANY = "*"  # a root whose fields are not listed (the operands of a configuration: any name is accepted)


def _plain(v: Value, name: str | None = None) -> Any:
    if isinstance(v, Known):
        return name if name else v.value
    if isinstance(v, Unknown):
        return UNKNOWN
    return RUNTIME


def attribute_set_view(s: AttrSet, model: ApiModel) -> dict[str, Any]:
    spec = model.attribute(s.attribute) if s.attribute else None
    return {
        "function": s.function, "object_kind": s.object_kind, "attribute": s.attribute,
        "attribute_type": spec.type if spec else UNKNOWN, "attribute_size": spec.size if spec else UNKNOWN,
        "size": _plain(s.size), "value": _plain(s.value, s.value_name), "value_name": s.value_name,
        "buffer": s.buffer, "buffer_type": s.buffer_type or UNKNOWN, "conditional": s.conditional,
        "buffer_size": s.buffer_size if s.buffer_size is not None else UNKNOWN,
    }


def configuration_view(cfg: Configuration) -> dict[str, Any]:
    view: dict[str, Any] = {"kind": cfg.kind, "operands": {k: _plain(v) for k, v in cfg.operands.items()}}
    for part, fields in cfg.effective.items():
        view[part] = {name: _plain(f.value, f.name) for name, f in fields.items()}
    # C types of the user's pointer variables written into pointer attributes (bias, aux, scales)
    view["pointer_types"] = {name: f.buffer_type for name, f in cfg.effective.get("matmul_desc", {}).items()
                             if f.buffer_type and f.buffer_type.rstrip().endswith("*")}
    return view


def cutlass_view(g: CutlassGemm) -> dict[str, Any]:
    """``{"api": "3.x", "mainloop": {"tile_shape": [128, 128, 64], "element_a_bits": 16, ...}, ...}``."""
    view: dict[str, Any] = {"api": g.api, "mode": g.mode, "kind": g.kind}
    for prefix, part in (("mainloop", g.mainloop), ("epilogue", g.epilogue), ("kernel", g.kernel), ("gemm", g.gemm2x)):
        if part is None:
            continue
        values = fact_values(part, UNKNOWN)
        if getattr(part, "default_config_problem", ""):
            values["default_config_problem"] = part.default_config_problem
        view[prefix] = values
    return view


@lru_cache(maxsize=1)
def fact_fields() -> dict[str, dict[str, frozenset[str] | str | None]]:
    """Per scope, the facts a condition can name: root -> its field names (None: a value with no
    fields, ``_ANY``: fields not checked). A misspelt field would otherwise read as absent and
    make the rule silently dead (or, with ``present: false``, fire everywhere)."""
    import dataclasses

    from fusionlint.model import cutlass_facts
    from fusionlint.model.cublaslt_api import load_model

    model = load_model()

    def short(enum_type: str, prefix: str) -> frozenset[str]:
        return frozenset(n[len(prefix):] for n in model.attributes_of(enum_type) if n.startswith(prefix))

    def fields(*classes: type) -> frozenset[str]:
        names = {f.name for c in classes for f in dataclasses.fields(c)}
        return frozenset(names | {f"{n}_bits" for n in names})

    desc = short("cublasLtMatmulDescAttributes_t", "CUBLASLT_MATMUL_DESC_")
    layout = short("cublasLtMatrixLayoutAttribute_t", "CUBLASLT_MATRIX_LAYOUT_")
    attribute_set = dict.fromkeys(("function", "object_kind", "attribute", "attribute_type", "attribute_size", "size",
                                   "value", "value_name", "buffer", "buffer_type", "buffer_size", "conditional"))
    configuration = {"kind": None, "matmul_desc": desc, **{f"layout_{m}": layout for m in "ABCD"},
                     "preference": short("cublasLtMatmulPreferenceAttributes_t", "CUBLASLT_MATMUL_PREF_"),
                     "operands": ANY, "pointer_types": desc}
    cutlass = {"api": None, "mode": None, "kind": None,
               "mainloop": fields(cutlass_facts.MainloopBuilder, cutlass_facts.CollectiveMmaFacts),
               "epilogue": fields(cutlass_facts.EpilogueBuilder, cutlass_facts.OtherEpilogue),
               "kernel": fields(cutlass_facts.KernelFacts), "gemm": fields(cutlass_facts.Gemm2x),
               "problem": ANY}  # m, n, k of a literal problem size; ``at: problem.shape`` places the finding
    return {"attribute_set": attribute_set, "configuration": configuration, "cutlass": cutlass}


@lru_cache(maxsize=1)
def fact_roots() -> frozenset[str]:
    """The first component of every fact path a rule may name, in any scope."""
    return frozenset(root for scope in fact_fields().values() for root in scope)
