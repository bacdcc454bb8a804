"""Evaluate rules on facts. Three-valued: a test on an unknown fact is unknown, and a rule
fires only when its condition is definitely true.

A rule whose condition is neither true nor false because a fact it reads (directly or through a
derived quantity) is unknown — a value that did not resolve, a run-time value compared with a
constant, or an attribute of which it cannot be told whether it was set — is *undecided* on that
configuration; ``run_rules`` lists those checks with the reasons (``Undecided``). A condition that
cannot hold whatever the unknown values are, because a part of it is unknown with every fact it
read known (a derived quantity with nothing to say: it does not apply), is not.

A finding is reported where the mistake was written: at the write of the fact its condition
turned on (a SetAttribute call, a layout's create call), with the caret on the offending argument;
the call that cuBLASLt rejects (heuristic or matmul) is a related location."""
from __future__ import annotations

import string
from dataclasses import replace
from pathlib import Path
from typing import Any

from fusionlint.defaults import DEFAULT_ARCH, HEADER_SUFFIXES
from fusionlint.model.cutlass_facts import CutlassGemm, Param
from fusionlint.model.cublaslt_facts import ApiObject, AttrSet, CallStep, Configuration, FileFacts
from fusionlint.findings import (
    BUILTIN_CODES,
    CUTLASS_STATIC_ASSERT,
    Finding,
    Related,
    Undecided,
    on_unknown_inputs,
)
from fusionlint.model.cublaslt_api import ApiModel, load_model
from fusionlint.model.values import Known, Loc, Unknown, Value
from fusionlint.rules import derived
from fusionlint.rules.loader import Rule
from fusionlint.rules.markers import ABSENT, RUNTIME, UNKNOWN  # noqa: F401 - also the names the rules' users import
from fusionlint.rules.views import (  # noqa: F401 - the view builders, also imported from here
    _plain,
    attribute_set_view,
    configuration_view,
    cutlass_view,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusionlint.model.support_table import SupportTable


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


class Facts:
    """What the engine knows about a view's facts besides their values: whether a fact missing
    from the view was never set, why a value is unknown, and where each value was written. This
    base class knows nothing more: every absence is decided (``complete``) or none is."""

    def __init__(self, complete: bool = True) -> None:
        self.complete = complete

    def absence_known(self, path: str) -> bool:
        """May a fact missing from the view be taken as never set?"""
        return self.complete

    def presence(self, path: str, value: Any) -> bool | None:
        """Is the fact set (True), never set (False), or cannot it be told (None)?"""
        if value is ABSENT:
            return False if self.absence_known(path) else None
        return None if value is UNKNOWN else True

    def reason(self, path: str, value: Any) -> str:
        """Why ``path`` (whose view value is ``value``) keeps a test from being decided."""
        if value is ABSENT:
            return f"whether {path} is set is not known"
        if value is RUNTIME:
            return f"{path} is a run-time value"
        return f"{path} is not known"

    def counts(self, path: str) -> bool:
        """Does an unknown ``path`` make a check undecided (False: the fact does not exist here)?"""
        return True

    def write(self, path: str) -> Loc | None:
        """Where the user wrote the value of ``path`` (its argument), if anywhere in the main file."""
        return None

    def home(self, path: str) -> Loc | None:
        """Where the object holding ``path`` was made (for a fact nobody wrote: a default, an absence)."""
        return None


def _reason_of(v: Value) -> str | None:
    return v.text() if isinstance(v, Unknown) else None


class AttrSetFacts(Facts):
    """The facts of one SetAttribute call: every argument is there; the arguments' locations."""

    def __init__(self, s: AttrSet) -> None:
        super().__init__(True)
        self.s = s

    def reason(self, path: str, value: Any) -> str:
        why = _reason_of({"size": self.s.size, "value": self.s.value, "attribute": self.s.attribute_value}.get(
            path, Known(0)))
        if path in ("attribute", "attribute_type", "attribute_size") and self.s.attribute is None:
            why = _reason_of(self.s.attribute_value) or "not an attribute of this object"
            return f"the attribute id is not known ({why})"
        return f"{path}: {why}" if why else super().reason(path, value)

    def write(self, path: str) -> Loc | None:
        s = self.s
        if path in ("size", "attribute_size"):
            return s.size_at
        if path in ("value", "value_name", "buffer", "buffer_type", "buffer_size"):
            return s.buffer_at
        if path in ("attribute", "attribute_type"):
            return s.attribute_at
        return None


class ConfigurationFacts(Facts):
    """The facts of one cuBLASLt configuration. Absence is decided per attribute: an attribute no
    write names was never set when every write to its object names a known attribute and the
    object neither escaped nor was created under a condition (``ApiObject.absence_blocker``),
    whatever the values written are; an attribute written only under an unknown condition may or
    may not be set."""

    def __init__(self, cfg: Configuration) -> None:
        super().__init__(True)
        self.cfg = cfg
        self.objects: dict[str, ApiObject | None] = {"matmul_desc": cfg.desc, "preference": cfg.preference,
                                                     **{f"layout_{m}": o for m, o in cfg.layouts.items()}}
        self._blockers: dict[str, str | None] = {}

    def blocker(self, part: str) -> str | None:
        """Why absence cannot be decided for any attribute of ``part`` (None: it can)."""
        if part not in self._blockers:
            obj = self.objects.get(part)
            if obj is None:
                if part == "preference" and self.cfg.heuristic_loc is None:
                    why: str | None = "there is no preference object (no heuristic query)"
                elif self.cfg.kind == "descriptor" and part != "matmul_desc":
                    why = "the descriptor reaches no heuristic or matmul call, so there are no layouts"
                else:
                    why = f"the {part} object did not resolve"
            else:
                why = obj.absence_blocker()
            self._blockers[part] = why
        return self._blockers[part]

    @staticmethod
    def _part(path: str) -> tuple[str, str]:
        part, _, name = path.partition(".")
        return ("matmul_desc" if part == "pointer_types" else part), name

    def absence_known(self, path: str) -> bool:
        part, _ = self._part(path)
        return part not in self.objects or self.blocker(part) is None  # kind, operands: the call's own

    def counts(self, path: str) -> bool:
        # a descriptor that reaches no heuristic or matmul has no layouts: rules about them do not apply
        return not (self.cfg.kind == "descriptor" and self._part(path)[0] not in ("matmul_desc", "kind", "operands"))

    def field(self, path: str):
        """The effective field of ``path`` (``part.name``), None when there is none."""
        part, name = self._part(path)
        return self.cfg.effective.get(part, {}).get(name) if name else None

    def presence(self, path: str, value: Any) -> bool | None:
        part, name = self._part(path)
        if part not in self.objects or not name:
            return super().presence(path, value)
        f = self.field(path)
        if f is None:
            return False if self.blocker(part) is None else None
        if f.source == "set" and f.conditional and isinstance(f.value, Unknown):
            from fusionlint.frontend.cublaslt.handler import DEFAULTS, PREFIX

            obj = self.objects[part]
            kind = obj.kind if obj is not None else ""
            if obj is None or (name not in DEFAULTS.get(kind, {}) and name not in obj.create_args and not any(
                    s.attribute == PREFIX.get(kind, "") + name and not s.conditional for s in obj.sets)):
                return None  # written only under a condition: maybe set, maybe not
        return True

    def reason(self, path: str, value: Any) -> str:
        part, name = self._part(path)
        f = self.field(path)
        if value is ABSENT or f is None:
            if part in self.objects and self.blocker(part) is not None:
                return f"whether {path} is set is not known: {self.blocker(part)}" if name else self.blocker(part)
            return super().reason(path, value)
        if f.source == "set" and f.conditional and isinstance(f.value, Unknown):
            why = f" (run-time data: {f.value.runtime})" if f.value.runtime else ""
            return f"{path} is set only under a condition (line {f.loc.line if f.loc else '?'}){why}"
        if isinstance(f.value, Unknown):
            return f"{path}: {f.value.text()}"
        return super().reason(path, value)

    def write(self, path: str) -> Loc | None:
        f = self.field(path)
        if f is None or f.source == "default" or f.loc is None or f.loc.path != self.cfg.path:
            return None
        return f.arg_at if f.arg_at is not None and f.arg_at.path == f.loc.path else f.loc

    def home(self, path: str) -> Loc | None:
        part, _ = self._part(path)
        obj = self.objects.get(part)
        if obj is None or obj.created_at.path != self.cfg.path:
            return None
        return obj.created_at


class CutlassFacts(Facts):
    """The facts of one CUTLASS GEMM: every template argument is there; why one is unknown."""

    def __init__(self, g: CutlassGemm) -> None:
        super().__init__(True)
        self.g = g

    def _param(self, path: str) -> Param | None:
        part_name, _, field_name = path.partition(".")
        part = {"mainloop": self.g.mainloop, "epilogue": self.g.epilogue, "kernel": self.g.kernel,
                "gemm": self.g.gemm2x}.get(part_name)
        p = getattr(part, field_name.removesuffix("_bits"), None) if part is not None and field_name else None
        return p if isinstance(p, Param) else None

    def counts(self, path: str) -> bool:
        # a template argument the GEMM does not have reads as unknown too: only one with a reason counts
        if path.startswith("problem."):
            return True
        p = self._param(path)
        return p is not None and p.unknown is not None

    def reason(self, path: str, value: Any) -> str:
        p = self._param(path)
        if p is not None and p.unknown:
            return f"{path}: {p.unknown}"
        if path.startswith("problem."):
            return f"{path} is not written as a literal"
        return super().reason(path, value)


_DEFAULT_FACTS = Facts(True)
_INCOMPLETE_FACTS = Facts(False)


def _facts_of(complete: bool | Facts) -> Facts:
    if isinstance(complete, Facts):
        return complete
    return _DEFAULT_FACTS if complete else _INCOMPLETE_FACTS


class _Traced(dict):
    """A view that logs each fact a derived quantity reads: ``(path, value)``, ``ABSENT`` for a
    fact it looked for and did not find."""

    def __init__(self, data: dict, path: str, log: list[tuple[str, Any]]) -> None:
        super().__init__(data)
        self._path, self._log = path, log

    def _at(self, key: Any) -> str:
        return f"{self._path}.{key}" if self._path else str(key)

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if isinstance(value, dict):
            return _Traced(value, self._at(key), self._log)
        self._log.append((self._at(key), value))
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return self[key]
        self._log.append((self._at(key), ABSENT))
        return default

    def __contains__(self, key: object) -> bool:
        found = dict.__contains__(self, key)
        if not found:
            self._log.append((self._at(key), ABSENT))
        return found


_NOT_FACTS = ("arch",)


def _derived_reads(name: str, view: dict[str, Any]) -> tuple[Any, list[tuple[str, Any]]]:
    """A derived quantity's value and the facts it read (in order, once each)."""
    log: list[tuple[str, Any]] = []
    value = derived.REGISTRY[name](_Traced(view, "", log))
    seen: dict[str, Any] = {}
    for path, v in log:
        if path.split(".")[0] not in _NOT_FACTS:
            seen.setdefault(path, v)
    return value, list(seen.items())


def evaluate(cond: dict, view: dict[str, Any], complete: bool | Facts = True,
             why: list[str] | None = None) -> bool | None:
    """Kleene logic over the condition tree. ``complete`` says when a fact missing from the view
    counts as never set: a bool for every fact (false when some writes to the objects were not
    resolved), or a ``Facts`` object that decides it per fact. When the result is None and ``why``
    is a list, the reasons it could not be decided are appended to it (none: it does not apply)."""
    facts = _facts_of(complete)
    if "all" in cond or "any" in cond:
        key = "all" if "all" in cond else "any"
        results, reasons, inapplicable = [], [], False
        for c in cond[key]:
            sub: list[str] | None = [] if why is not None else None
            r = evaluate(c, view, facts, sub)
            results.append(r)
            if r is None and sub:
                reasons += sub
            inapplicable |= r is None and sub == []  # unknown with every fact it read known: stays so
        decisive = key != "all"  # the value one child decides the whole with
        if any(r is decisive for r in results):
            return decisive
        if all(r is (not decisive) for r in results):
            return not decisive
        if why is not None and not (key == "all" and inapplicable):  # such an "all" can never hold
            why += reasons
        return None
    if "not" in cond:
        r = evaluate(cond["not"], view, facts, why)
        return None if r is None else not r
    op = next(k for k in cond if k not in ("fact", "derived"))
    if "fact" in cond:
        path = cond["fact"]
        value = lookup(view, path)
        if op == "present":
            present = facts.presence(path, value)
            if present is None:
                if why is not None and facts.counts(path):
                    why.append(facts.reason(path, value))
                return None
            return present == cond[op]
        if value is ABSENT and not facts.absence_known(path):
            result = _test(UNKNOWN, op, cond[op])
            if result is None and why is not None and facts.counts(path):
                why.append(facts.reason(path, ABSENT))
            return result
        result = _test(value, op, cond[op])
        if result is None and why is not None and (value is UNKNOWN or value is RUNTIME) and facts.counts(path):
            why.append(facts.reason(path, value))
        return result
    if why is None:
        return _test(derived.REGISTRY[cond["derived"]](view), op, cond[op])
    value, reads = _derived_reads(cond["derived"], view)
    result = _test(value, op, cond[op])
    if result is None:
        why += [facts.reason(p, v) for p, v in reads
                if (v is UNKNOWN or (v is ABSENT and not facts.absence_known(p))) and facts.counts(p)]
    return result


def _blame(cond: dict, view: dict[str, Any], facts: Facts) -> list[list[str]]:
    """For a condition that holds: per deciding test, in the condition's order, the facts it is
    about (a fact test its fact; a derived quantity what ``derived.BLAME`` names, else the facts
    it read)."""
    if "all" in cond:
        return [leaf for c in cond["all"] for leaf in _blame(c, view, facts)]
    if "any" in cond:
        first = next((c for c in cond["any"] if evaluate(c, view, facts) is True), None)
        return _blame(first, view, facts) if first is not None else []
    if "not" in cond:
        return [[p for leaf in _reads(cond["not"], view) for p in leaf]]
    return _reads(cond, view)


def _reads(cond: dict, view: dict[str, Any]) -> list[list[str]]:
    if "all" in cond or "any" in cond:
        return [leaf for c in cond.get("all", cond.get("any")) for leaf in _reads(c, view)]
    if "not" in cond:
        return _reads(cond["not"], view)
    if "fact" in cond:
        return [[cond["fact"]]]
    name = cond["derived"]
    if name in derived.BLAME:
        return [list(derived.BLAME[name](view))]
    return [[p for p, _ in _derived_reads(name, view)[1]]]


def _primary(about: tuple[str, ...], cond: dict, view: dict[str, Any], facts: Facts) -> Loc | None:
    """Where to report a holding condition: the write of the first fact it is about that the user
    wrote — the rule's ``about`` facts first (those the decision turned on), then the deciding
    tests' facts from the last test back (a rule states its context first and the violation last)
    — else where the object of such a fact was made."""
    order = _deciding(about, cond, view, facts)
    for p in order:
        loc = facts.write(p)
        if loc is not None:
            return loc
    for p in order:
        loc = facts.home(p)
        if loc is not None:
            return loc
    return None


def _deciding(about: tuple[str, ...], cond: dict, view: dict[str, Any], facts: Facts) -> list[str]:
    """The facts a holding condition turned on, most telling first (see ``_primary``)."""
    leaves = _blame(cond, view, facts)
    deciding = list(dict.fromkeys(p for leaf in reversed(leaves) for p in leaf))
    return [p for p in about if p in deciding] + [p for p in deciding if p not in about]


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


def run_rules(rules: list[Rule], facts: FileFacts, arch: str = DEFAULT_ARCH, model: ApiModel | None = None,
              support: SupportTable | None = None, undecided: list[Undecided] | None = None) -> list[Finding]:
    """The findings of ``rules`` on ``facts``; with a measured ``support`` table, also FL127 for
    each cuBLASLt GEMM that no other rule found an error in. With an ``undecided`` list, each
    check that unknown facts kept from being decided is appended to it."""
    model = model or load_model()
    active = [r for r in rules if r.applies_to(arch)]
    findings: list[Finding] = []
    by_scope: dict[str, list[Rule]] = {}
    for r in active:
        by_scope.setdefault(r.scope, []).append(r)

    def judge(rule: Rule, view: dict[str, Any], ctx: Facts, at: Loc) -> bool:
        """Is the rule's condition true here; an undecided check is recorded at ``at``."""
        result = evaluate(rule.when, view, ctx)
        if result is None and undecided is not None:
            reasons: list[str] = []
            evaluate(rule.when, view, ctx, reasons)
            if reasons:
                undecided.append(Undecided(rule.id, rule.name, at.path, at.line, at.column,
                                           tuple(dict.fromkeys(reasons))))
        return result is True

    for s in facts.attribute_sets:
        view = attribute_set_view(s, model)
        view["arch"] = arch
        ctx = AttrSetFacts(s)
        for rule in by_scope.get("attribute_set", []):
            if judge(rule, view, ctx, s.site):
                related = ()
                if s.site != s.loc:
                    related = (Related(s.loc.path, s.loc.line, s.loc.column, f"{s.function} called here"),)
                findings.append(_finding(rule, view, _attribute_set_where(rule, s, view, ctx), related))
    heuristic_sites = {c.loc for c in facts.configurations if c.kind == "heuristic"}
    matmul_heuristics = {c.heuristic_loc for c in facts.configurations if c.kind == "matmul"}
    explained: set = set()  # GEMMs (their heuristic call, else their own call) with an error finding
    of_alternative: dict[int, Configuration] = {}  # finding id -> the runtime alternative it was found in
    judged: list[tuple[Configuration, dict, ConfigurationFacts]] = []
    for cfg in facts.configurations:
        view = configuration_view(cfg)
        view["arch"] = arch
        ctx = ConfigurationFacts(cfg)
        judged.append((cfg, view, ctx))
        for rule in by_scope.get("configuration", []):
            # Judge each GEMM once: at its heuristic query, or at the matmul for failures that
            # cuBLASLt only reports there.
            if rule.at == "matmul" and cfg.kind == "heuristic" and cfg.loc in matmul_heuristics:
                continue
            if rule.at != "matmul" and cfg.kind == "matmul" and cfg.heuristic_loc in heuristic_sites:
                continue
            if judge(rule, view, ctx, cfg.site):
                at = _where(rule, cfg, view, ctx)
                related = _configuration_related(cfg, at)
                findings.append(_finding(rule, view, at, related + _value_from_elsewhere(rule, view, ctx, at, related)))
                if cfg.alternatives > 1:
                    of_alternative[id(findings[-1])] = cfg
                if rule.severity == "error":
                    explained.add(_gemm_key(cfg))
    if support is not None and arch.rstrip("a") == "sm_90":
        for f, cfg in _support_findings(support, judged, explained, heuristic_sites, matmul_heuristics):
            findings.append(f)
            if cfg.alternatives > 1:
                of_alternative[id(f)] = cfg
    for g in facts.cutlass:
        view = cutlass_view(g)
        view["arch"] = arch
        ctx = CutlassFacts(g)
        explained, note = False, _mode_note(g)
        for rule in by_scope.get("cutlass", []):
            if rule.at.startswith("problem."):  # judged once per literal problem size in the GEMM's Arguments
                for p in g.problems:
                    lds = tuple((f"ld_{x}", v) for x, v in (p.lds or {}).items())
                    pview = {**view, "problem": {k: (UNKNOWN if v is None else v)
                                                 for k, v in (("m", p.m), ("n", p.n), ("k", p.k), *lds)}}
                    if judge(rule, pview, ctx, p.at):
                        findings.append(_when_compiled(g, _finding(rule, pview, p.at, note)))
                continue
            if judge(rule, view, ctx, g.instantiated_at or g.loc):
                findings.append(_when_compiled(g, _finding(rule, view, _cutlass_where(rule, g), note)))
                explained = explained or rule.severity == "error"
        if not explained:
            findings += static_assert_findings(g)
            if undecided is not None and g.mode == "instantiated" and not g.device_bodies:
                at = g.instantiated_at or g.loc
                undecided.append(Undecided(CUTLASS_STATIC_ASSERT, BUILTIN_CODES[CUTLASS_STATIC_ASSERT][0], at.path,
                                           at.line, at.column, (DEVICE_BODIES_NOT_INSTANTIATED,)))
    # a header checked on its own: its functions run without the files that call them, so a finding
    # that holds only on some of their inputs' values is a question for those callers
    findings = _say_when(findings, of_alternative, Path(facts.path).suffix.lower() in HEADER_SUFFIXES)
    unique: dict[tuple, Finding] = {}
    for f in findings:
        first = unique.setdefault((f.code, f.path, f.line, f.column), f)
        if first is not f:  # the same finding reached again (another call of the same helper): its calls too
            more = tuple(r for r in f.related if r.message.startswith("via ") and r not in first.related)
            if more:
                unique[(f.code, f.path, f.line, f.column)] = replace(first, related=first.related + more)
    return list(unique.values())


def _when_compiled(g: CutlassGemm, f: Finding) -> Finding:
    """A finding on an instance that only another build compiles (``#ifdef X`` around it) says so."""
    return replace(f, message=f"{f.message} (when {g.condition})") if g.condition else f


def _say_when(findings: list[Finding], of_alternative: dict[int, Configuration], header: bool = False) -> list[Finding]:
    """A finding made on runtime alternatives of a configuration (frontend/interp/alternatives.py) says
    under which conditions it holds, unless it holds in every alternative. Where every way to reach it
    needs a value of an input fusionlint does not know (a parameter no caller here passes, run-time
    data), it is no error: it becomes an ``FL002`` warning stating the condition (off unless selected;
    else an undecided check). Only a condition decided by a template's instantiation
    (``std::is_same<T, half>::value``) keeps it an error. In a header checked on its own (``header``)
    every condition is on inputs: the files including it decide them."""
    if not of_alternative:
        return findings
    runs: dict[tuple, set[tuple[str, int]]] = {}  # finding -> the (root function, run) it was made in
    whens: dict[tuple, list[Configuration]] = {}
    total: dict[tuple, int] = {}  # finding -> the runs of the root functions it was made in
    always: set[tuple] = set()  # findings also made on a configuration that holds in every run
    for f in findings:
        cfg = of_alternative.get(id(f))
        key = (f.code, f.path, f.line, f.column)
        if cfg is None:
            always.add(key)
            continue
        if cfg.root not in {root for root, _ in runs.get(key, ())}:
            total[key] = total.get(key, 0) + cfg.alternatives
        runs.setdefault(key, set()).update(cfg.alternative_runs)
        whens.setdefault(key, []).append(cfg)
    out = []
    for f in findings:
        key = (f.code, f.path, f.line, f.column)
        if id(f) in of_alternative and key not in always and len(runs[key]) < total[key] \
                and all(c.when for c in whens[key]):
            conditions = simplest_conditions(whens[key])
            if conditions:
                said = "; or when ".join(text for text, _ in conditions[:3]) + \
                    ("; or in other cases" if len(conditions) > 3 else "")
                if header or all(on_inputs for _, on_inputs in conditions):
                    out.append(on_unknown_inputs(f, said, header))
                    continue
                f = replace(f, message=f"{f.message} (when {said})")
        out.append(f)
    return out


def simplest_conditions(configs: list[Configuration]) -> list[tuple[str, bool]]:
    """The conditions under which ``configs`` (alternatives a finding was made on) are reached, each
    a conjunction, with every choice left out that does not matter: a choice whose every arm occurs
    with the same other conditions ("`fast` is true and `trans` is true; or `fast` is true and
    `trans` is false" is "`fast` is true"). [] when nothing is left (the finding always holds). With
    each, whether it needs a value of an input of the program (a choice not decided by a template's
    instantiation, ``Configuration.compile_time``)."""
    text: dict[tuple[str, int], str] = {}
    arms: dict[str, int] = {}
    order: dict[str, tuple[int, int]] = {}
    rows: set[frozenset[tuple[str, int]]] = set()
    by_types: set[str] = set()
    for cfg in configs:
        if len(cfg.when_arms) != len(cfg.when):  # made without the choices' keys: as written
            return list(dict.fromkeys((" and ".join(c.when), True) for c in configs))
        by_types |= cfg.compile_time
        for i, ((k, a, n), t) in enumerate(zip(cfg.when_arms, cfg.when)):
            text[k, a], arms[k] = t, n
            order.setdefault(k, (len(order), i))
        rows.add(frozenset((k, a) for k, a, _ in cfg.when_arms))
    changed = True
    while changed:
        changed = False
        for k in sorted(arms, key=order.__getitem__):
            seen: dict[frozenset, set[int]] = {}
            for r in rows:
                seen.setdefault(frozenset(x for x in r if x[0] != k), set()).update(a for kk, a in r if kk == k)
            new = {rest if len(seen[rest]) == arms[k] else r
                   for r in rows for rest in [frozenset(x for x in r if x[0] != k)]}
            new = {r for r in new if not any(o < r for o in new)}  # a more special conjunction adds nothing
            if new != rows:
                rows, changed = new, True
    if frozenset() in rows:
        return []
    return sorted((" and ".join(text[x] for x in sorted(r, key=lambda x: order[x[0]])),
                   any(k not in by_types for k, _ in r)) for r in rows)


def _configuration_related(cfg: Configuration, at: Loc) -> tuple[Related, ...]:
    """The call cuBLASLt judges the configuration in (when the finding is elsewhere), and where the
    matmul descriptor was created."""
    related = []
    if at != cfg.site and cfg.kind in ("heuristic", "matmul"):
        fn = "cublasLtMatmul" if cfg.kind == "matmul" else "cublasLtMatmulAlgoGetHeuristic"
        related.append(Related(cfg.site.path, cfg.site.line, cfg.site.column,
                               f"{fn} is called with this configuration here"))
    if cfg.desc is not None and (cfg.desc.created_at.path, cfg.desc.created_at.line) != (at.path, at.line):
        related.append(Related(cfg.desc.created_at.path, cfg.desc.created_at.line, cfg.desc.created_at.column,
                               "matmul descriptor created here"))
    related += call_chain_related(cfg.via)
    return tuple(related)


def _value_from_elsewhere(rule: Rule, view: dict[str, Any], ctx: ConfigurationFacts, at: Loc,
                          related: tuple[Related, ...]) -> tuple[Related, ...]:
    """Where the value the finding turned on was written, when that is in another file than the
    finding and no ``related`` location is on that line (a function of another translation unit
    returned it: the project index; a caller's argument is its "via" step already)."""
    for p in _deciding(_about(rule), rule.when, view, ctx):
        f = ctx.field(p)
        v = f.value if f is not None else None
        if isinstance(v, Known) and v.origin is not None and v.origin.path != at.path:
            if any((r.path, r.line) == (v.origin.path, v.origin.line) for r in related):
                return ()
            name = f.name or str(v.value)
            how = v.via.removeprefix(f"{name}, ") if v.via != name else ""
            return (Related(v.origin.path, v.origin.line, v.origin.column,
                            f"{name} comes from here" + (f" ({how})" if how else "")),)
    return ()


def call_chain_related(via: list[CallStep]) -> list[Related]:
    """The calls that led to a GEMM, outermost first: "via main() -> LtSgemm(...)" at each call."""
    return [Related(step.at.path, step.at.line, step.at.column,
                    f"via the explicit instantiation {step.callee}" if step.caller == "explicit instantiation"
                    else f"via {step.caller}() -> {step.callee}(...)")
            for step in via]


def _about(rule: Rule) -> tuple[str, ...]:
    """The facts a rule is about, most telling first: its ``about`` list, else its ``at`` field."""
    return rule.about or ((rule.at,) if "." in rule.at else ())


def _attribute_set_where(rule: Rule, s: AttrSet, view: dict[str, Any], ctx: AttrSetFacts) -> Loc:
    """The offending argument of the user's SetAttribute call (when the user wrote the call
    itself, not a wrapper around it), else the call."""
    loc = _primary(_about(rule), rule.when, view, ctx)
    return loc if loc is not None and loc.path == s.site.path else s.site


def _gemm_key(cfg: Configuration) -> tuple:
    """One GEMM: its heuristic query (else its own call), in one calling context."""
    at = cfg.heuristic_loc if cfg.kind == "matmul" and cfg.heuristic_loc is not None else cfg.loc
    return (at, tuple(cfg.via), cfg.when)


def _support_findings(support: SupportTable, judged: list[tuple[Configuration, dict, ConfigurationFacts]], explained: set,
                      heuristic_sites: set, matmul_heuristics: set) -> list[tuple[Finding, Configuration]]:
    """FL127 for each GEMM no rule explained, at the call cuBLASLt fails in: a heuristic failure at
    the heuristic query, a cublasLtMatmul failure at the matmul when the file has one."""
    from fusionlint.rules.support_check import (
        SUPPORT_TABLE_CODE,
        SUPPORT_TABLE_NAME,
        check_view,
    )

    out = []
    for cfg, view, ctx in judged:
        if _gemm_key(cfg) in explained:
            continue
        result = check_view(support, view, ctx.absence_known)
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
        related += tuple(call_chain_related(cfg.via))
        out.append((Finding(SUPPORT_TABLE_CODE, SUPPORT_TABLE_NAME, "error", cfg.site.path, cfg.site.line,
                            cfg.site.column, message, fix, related), cfg))
    return out


def _mode_note(g: CutlassGemm) -> tuple[Related, ...]:
    """Which reading produced the verdict (the mode note), at the GEMM's line."""
    where = g.instantiated_at or g.loc
    if g.mode == "instantiated" and g.device_bodies:
        how = "instantiated with the CUTLASS headers, device bodies included"
    elif g.mode == "instantiated":
        how = "instantiated with the CUTLASS headers (host side; --device-bodies also instantiates the device bodies)"
    elif g.condition:
        how = "read from the source text as a build would compile it when " + g.condition.split(":")[0]
    else:
        how = "read from the source text (syntactic mode: no usable CUTLASS headers)"
    if g.instantiated_at is not None and g.instantiated_at.path != g.path and g.context:
        how += f"; instantiated here as {g.context}"  # a header's template, from a file that includes it
    return (Related(where.path, where.line, where.column, f"GEMM `{g.name or 'unnamed'}` {how}"),)


DEVICE_BODIES_NOT_INSTANTIATED = (
    "the static_asserts inside the kernel's and the collectives' __device__ bodies: not instantiated (host side "
    "only; the rules that mirror them ran); --device-bodies instantiates them as nvcc does")


def static_assert_findings(g: CutlassGemm, limit: int = 3) -> list[Finding]:
    """FL300: what fails when libclang instantiates the GEMM with the CUTLASS headers
    (instantiated mode): CUTLASS static_asserts first, then other hard errors the instantiation
    raises inside the CUTLASS headers (an incomplete type, a missing member, no matching
    specialization), each at the user's line that asked for the instantiation."""
    asserts = [d for d in g.diagnostics if d.kind == "static_assert"]
    errors = [d for d in g.diagnostics if d.kind == "error"]
    out = []
    for d in [*asserts, *errors][:limit]:
        related = (Related(d.header_loc.path, d.header_loc.line, d.header_loc.column, "the assertion in CUTLASS"
                           if d.kind == "static_assert" else "the error in CUTLASS"),) \
            if d.header_loc is not None else ()
        if d.kind == "static_assert":
            message = (f'CUTLASS static_assert fails for {g.name or "this GEMM"}: "{d.message}" (found by '
                       "instantiating the templates with the CUTLASS headers; nvcc stops at the same assertion)")
        else:
            text = d.message if len(d.message) <= 300 else d.message[:297] + "..."
            message = (f"CUTLASS does not compile for {g.name or 'this GEMM'}: {text} (found by "
                       "instantiating the templates with the CUTLASS headers; nvcc fails there too)")
        out.append(Finding(CUTLASS_STATIC_ASSERT, BUILTIN_CODES[CUTLASS_STATIC_ASSERT][0], "error", d.at.path,
                           d.at.line, d.at.column, message,
                           "change the template argument the assertion names; `fusionlint facts` shows the "
                           "GEMM's resolved arguments" if d.kind == "static_assert" else
                           "no CUTLASS specialization serves this combination of template arguments; "
                           "`fusionlint facts` shows the GEMM's resolved arguments", related))
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


def _where(rule: Rule, cfg: Configuration, view: dict[str, Any] | None = None,
           ctx: ConfigurationFacts | None = None) -> Loc:
    """Where the configuration was made wrong: the write (SetAttribute call, create call; the
    caret on its argument) of the fact the rule's decision turned on, ``about`` facts first;
    else the call being judged."""
    view = configuration_view(cfg) if view is None else view
    loc = _primary(_about(rule), rule.when, view, ctx or ConfigurationFacts(cfg))
    return loc if loc is not None else cfg.site
