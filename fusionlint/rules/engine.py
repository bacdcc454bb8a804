"""Evaluate rules on facts. Three-valued: a test on an unknown fact is unknown, and a rule
fires only when its condition is definitely true."""
from __future__ import annotations

import string
from dataclasses import fields as dataclass_fields
from typing import Any

from fusionlint.cutlass_facts import CutlassGemm, Param
from fusionlint.facts import AttrSet, Configuration, FileFacts
from fusionlint.findings import BUILTIN_CODES, CUTLASS_STATIC_ASSERT, Finding, Related
from fusionlint.frontend.api.model import ApiModel, load_model
from fusionlint.frontend.values import Known, Loc, Unknown, Value
from fusionlint.rules import derived
from fusionlint.rules.loader import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusionlint.support_table import SupportTable


class _Absent:
    """A field nobody set and that has no default."""

    def __repr__(self) -> str:
        return "absent"


class _Runtime:
    """A pointer, handle or object: present at run time, with no static value."""

    def __repr__(self) -> str:
        return "runtime value"


ABSENT = _Absent()
RUNTIME = _Runtime()
UNKNOWN = None


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
        values: dict[str, Any] = {}
        for f in dataclass_fields(part):
            p = getattr(part, f.name)
            if isinstance(p, Param):
                values[f.name] = p.value if p.known else UNKNOWN
                if p.bits is not None:
                    values[f"{f.name}_bits"] = p.bits
        if getattr(part, "default_config_problem", ""):
            values["default_config_problem"] = part.default_config_problem
        view[prefix] = values
    return view


def lookup(view: dict[str, Any], path: str) -> Any:
    return derived.walk(view, path, missing=ABSENT, not_a_dict=UNKNOWN)


def _test(value: Any, op: str, arg: Any) -> bool | None:
    if op == "known":
        return (value is not UNKNOWN and value is not RUNTIME and value is not ABSENT) == arg
    if op == "present":
        if value is UNKNOWN:
            return None
        return (value is not ABSENT) == arg
    if value is RUNTIME:
        return None if op != "ne" or arg not in (0, None) else True  # a live pointer is not null
    if value is UNKNOWN or value is ABSENT:
        return None
    try:
        if op == "eq":
            return value == arg
        if op == "ne":
            return value != arg
        if op == "in":
            return value in arg
        if op == "not_in":
            return value not in arg
        if op in ("lt", "le", "gt", "ge"):
            if not isinstance(value, (int, float)):
                return None
            return {"lt": value < arg, "le": value <= arg, "gt": value > arg, "ge": value >= arg}[op]
        if op in ("multiple_of", "not_multiple_of"):
            if not isinstance(value, int):
                return None
            return (value % arg == 0) == (op == "multiple_of")
    except TypeError:
        return None
    raise ValueError(f"unknown operator {op}")


def evaluate(cond: dict, view: dict[str, Any], complete: bool = True) -> bool | None:
    """Kleene logic over the condition tree. ``complete`` is false when some writes to the
    objects were not resolved: then 'absent' can not be concluded."""
    if "all" in cond:
        results = [evaluate(c, view, complete) for c in cond["all"]]
        if any(r is False for r in results):
            return False
        return True if all(r is True for r in results) else None
    if "any" in cond:
        results = [evaluate(c, view, complete) for c in cond["any"]]
        if any(r is True for r in results):
            return True
        return False if all(r is False for r in results) else None
    if "not" in cond:
        r = evaluate(cond["not"], view, complete)
        return None if r is None else not r
    if "fact" in cond:
        value = lookup(view, cond["fact"])
        if value is ABSENT and not complete:
            value = UNKNOWN
    else:
        value = derived.REGISTRY[cond["derived"]](view)
    op = next(k for k in cond if k not in ("fact", "derived"))
    return _test(value, op, cond[op])


def render(template: str, view: dict[str, Any]) -> str:
    """Fill ``{fact.path}`` / ``{derived_name}`` placeholders; unknown ones stay as written."""
    out = []
    for literal, field_name, _spec, _conv in string.Formatter().parse(template):
        out.append(literal)
        if field_name is None:
            continue
        if field_name in derived.REGISTRY:
            value = derived.REGISTRY[field_name](view)
        else:
            value = lookup(view, field_name)
        if value is UNKNOWN or value is ABSENT:
            out.append("unset" if value is ABSENT else "unknown")
        elif isinstance(value, bool):
            out.append("yes" if value else "no")
        else:
            out.append(str(value))
    return "".join(out)


def _finding(rule: Rule, view: dict[str, Any], at: Loc, related: tuple[Related, ...] = ()) -> Finding:
    return Finding(code=rule.id, name=rule.name, severity=rule.severity, path=at.path, line=at.line,
                   column=at.column, message=render(rule.message, view), fix=render(rule.fix, view),
                   related=related)


def run_rules(rules: list[Rule], facts: FileFacts, arch: str = "sm_90", model: ApiModel | None = None,
              support: SupportTable | None = None) -> list[Finding]:
    """The findings of ``rules`` on ``facts``; with a measured ``support`` table, also FL127 for
    each cuBLASLt GEMM that no other rule found an error in."""
    model = model or load_model()
    active = [r for r in rules if r.applies_to(arch)]
    findings: list[Finding] = []
    by_scope: dict[str, list[Rule]] = {}
    for r in active:
        by_scope.setdefault(r.scope, []).append(r)
    for s in facts.attribute_sets:
        view = attribute_set_view(s, model)
        view["arch"] = arch
        for rule in by_scope.get("attribute_set", []):
            if evaluate(rule.when, view) is True:
                related = ()
                if s.site != s.loc:
                    related = (Related(s.loc.path, s.loc.line, s.loc.column, f"{s.function} called here"),)
                findings.append(_finding(rule, view, s.site, related))
    heuristic_sites = {c.loc for c in facts.configurations if c.kind == "heuristic"}
    matmul_heuristics = {c.heuristic_loc for c in facts.configurations if c.kind == "matmul"}
    explained: set = set()  # GEMMs (their heuristic call, else their own call) with an error finding
    judged: list[tuple[Configuration, dict, bool]] = []
    for cfg in facts.configurations:
        view = configuration_view(cfg)
        view["arch"] = arch
        complete = all(o.complete for o in [cfg.desc, *cfg.layouts.values(), cfg.preference] if o is not None)
        judged.append((cfg, view, complete))
        for rule in by_scope.get("configuration", []):
            # Judge each GEMM once: at its heuristic query, or at the matmul for failures that
            # cuBLASLt only reports there.
            if rule.at == "matmul" and cfg.kind == "heuristic" and cfg.loc in matmul_heuristics:
                continue
            if rule.at != "matmul" and cfg.kind == "matmul" and cfg.heuristic_loc in heuristic_sites:
                continue
            if evaluate(rule.when, view, complete) is True:
                related = ()
                if cfg.desc is not None:
                    related = (Related(cfg.desc.created_at.path, cfg.desc.created_at.line,
                                       cfg.desc.created_at.column, "matmul descriptor created here"),)
                findings.append(_finding(rule, view, _where(rule, cfg), related))
                if rule.severity == "error":
                    explained.add(_gemm_key(cfg))
    if support is not None and arch.rstrip("a") == "sm_90":
        findings += _support_findings(support, judged, explained, heuristic_sites, matmul_heuristics)
    for g in facts.cutlass:
        view = cutlass_view(g)
        view["arch"] = arch
        explained, note = False, _mode_note(g)
        for rule in by_scope.get("cutlass", []):
            if rule.at.startswith("problem."):  # judged once per literal problem size in the GEMM's Arguments
                for p in g.problems:
                    pview = {**view, "problem": {k: (UNKNOWN if v is None else v)
                                                 for k, v in (("m", p.m), ("n", p.n), ("k", p.k))}}
                    if evaluate(rule.when, pview) is True:
                        findings.append(_finding(rule, pview, p.at, note))
                continue
            if evaluate(rule.when, view) is True:
                findings.append(_finding(rule, view, _cutlass_where(rule, g), note))
                explained = explained or rule.severity == "error"
        if not explained:
            findings += static_assert_findings(g)
    unique: dict[tuple, Finding] = {}
    for f in findings:
        unique.setdefault((f.code, f.path, f.line, f.column), f)
    return list(unique.values())


def _gemm_key(cfg: Configuration) -> Loc:
    return cfg.heuristic_loc if cfg.kind == "matmul" and cfg.heuristic_loc is not None else cfg.loc


def _support_findings(support: SupportTable, judged: list[tuple[Configuration, dict, bool]], explained: set,
                      heuristic_sites: set, matmul_heuristics: set) -> list[Finding]:
    """FL127 for each GEMM no rule explained, at the call cuBLASLt fails in: a heuristic failure at
    the heuristic query, a cublasLtMatmul failure at the matmul when the file has one."""
    from fusionlint.rules.support_check import (
        SUPPORT_TABLE_CODE,
        SUPPORT_TABLE_NAME,
        check_view,
    )

    out = []
    for cfg, view, complete in judged:
        if _gemm_key(cfg) in explained:
            continue
        result = check_view(support, view, complete)
        if result is None:
            continue
        verdict, message, fix = result
        at_matmul = verdict.failure.startswith("cublasLtMatmul ->")
        if cfg.kind == "heuristic" and at_matmul and cfg.loc in matmul_heuristics:
            continue  # the matmul configuration reports it
        if cfg.kind == "matmul" and not at_matmul and cfg.heuristic_loc in heuristic_sites:
            continue  # the heuristic configuration reports it
        related = ()
        if cfg.desc is not None:
            related = (Related(cfg.desc.created_at.path, cfg.desc.created_at.line, cfg.desc.created_at.column,
                               "matmul descriptor created here"),)
        out.append(Finding(SUPPORT_TABLE_CODE, SUPPORT_TABLE_NAME, "error", cfg.site.path, cfg.site.line,
                           cfg.site.column, message, fix, related))
    return out


def _mode_note(g: CutlassGemm) -> tuple[Related, ...]:
    """Which reading produced the verdict (issue: record the mode), at the GEMM's line."""
    where = g.instantiated_at or g.loc
    if g.mode == "instantiated":
        how = "instantiated with the CUTLASS headers"
    else:
        how = "read from the source text (syntactic mode: no usable CUTLASS headers)"
    return (Related(where.path, where.line, where.column, f"GEMM `{g.name or 'unnamed'}` {how}"),)


def static_assert_findings(g: CutlassGemm, limit: int = 3) -> list[Finding]:
    """FL300: CUTLASS static_asserts that failed when libclang instantiated the GEMM (instantiated mode)."""
    out = []
    for d in [d for d in g.diagnostics if d.kind == "static_assert"][:limit]:
        related = (Related(d.header_loc.path, d.header_loc.line, d.header_loc.column, "the assertion in CUTLASS"),) \
            if d.header_loc is not None else ()
        out.append(Finding(CUTLASS_STATIC_ASSERT, BUILTIN_CODES[CUTLASS_STATIC_ASSERT][0], "error", d.at.path,
                           d.at.line, d.at.column,
                           f'CUTLASS static_assert fails for {g.name or "this GEMM"}: "{d.message}" (found by '
                           f"instantiating the templates with the CUTLASS headers; nvcc stops at the same assertion)",
                           "change the template argument the assertion names; `fusionlint facts` shows the "
                           "GEMM's resolved arguments", related))
    return out


def _cutlass_where(rule: Rule, g: CutlassGemm) -> Loc:
    """The line that wrote the offending argument's value (``at: mainloop.alignment_a``), else the GEMM."""
    if "." in rule.at:
        part_name, _, field_name = rule.at.partition(".")
        part = {"mainloop": g.mainloop, "epilogue": g.epilogue, "kernel": g.kernel, "gemm": g.gemm2x}.get(part_name)
        p = getattr(part, field_name, None) if part is not None else None
        if isinstance(p, Param):
            for loc in (p.origin, p.at):
                if loc is not None and loc.path == g.path:
                    return loc
    return g.instantiated_at or g.loc


def _where(rule: Rule, cfg: Configuration) -> Loc:
    """The field's set call for ``at: part.FIELD`` rules, else the call being judged."""
    if "." in rule.at:
        part, _, name = rule.at.partition(".")
        f = cfg.effective.get(part, {}).get(name)
        if f is not None and f.loc is not None:
            return f.loc
    return cfg.site
