"""GEMM calls from a cuBLASLt log -> the static path's facts (``fusionlint.model.cublaslt_facts``).

Each distinct configuration of a log becomes the ``Configuration``s the static front end makes
for one GEMM: a ``heuristic`` one (at the first query that had it) and a ``matmul`` one (at the
first matmul), the matmul pointing at the query (``heuristic_loc``), so the rule engine judges it
exactly as a static GEMM. Every location is the log file and line of the judged call.

Values. The log prints names without their prefix (``COMPUTE_32F``, ``R_16BF``, ``OP_T``,
``EPILOGUE_BIAS``, ``ORDER_ROW``, ``MODE_DEVICE``), some data types as numbers
(``biasDataType=14``, ``scaleType=0``), pointers as addresses; names map to the API model's
constants (the enum of the attribute, the constant that is the name or ends in ``_`` + name),
addresses to run-time values (as a pointer variable is statically), except a null one. The
computeDesc dump prints only values that differ from the default, so an attribute a SetAttribute
line names and the dump does not show holds its documented default (for the attributes the dump
is known to print, ``PRINTED``; any other one is unknown); an attribute neither names was never
set (cuBLASLt would have printed it). Layout fields the dump does not show are the defaults.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from fusionlint.model.cublaslt_facts import ApiObject, AttrSet, Configuration, Field, FileFacts
from fusionlint.model.cublaslt_api import ApiModel, load_model
from fusionlint.model.values import Known, Loc, Symbol, Unknown, Value
from fusionlint.trace.calls import (
    CREATE_KEYS,
    CallLog,
    GemmCall,
    SetLine,
    desc_field,
    layout_field,
    pref_field,
)

# computeDesc keys cuBLASLt 13.1 was seen to print (each only when it differs from its default)
PRINTED = {"TRANSA", "TRANSB", "TRANSC", "EPILOGUE", "BIAS_POINTER", "BIAS_DATA_TYPE", "A_SCALE_POINTER",
           "B_SCALE_POINTER", "C_SCALE_POINTER", "D_SCALE_POINTER", "AMAX_D_POINTER", "EPILOGUE_AUX_POINTER",
           "EPILOGUE_AUX_LD", "EPILOGUE_AUX_DATA_TYPE", "FAST_ACCUM", "FILL_MODE", "POINTER_MODE",
           "A_SCALE_MODE", "B_SCALE_MODE", "SM_COUNT_TARGET"}
PREFIX = {"matmul_desc": "CUBLASLT_MATMUL_DESC_", "layout": "CUBLASLT_MATRIX_LAYOUT_",
          "preference": "CUBLASLT_MATMUL_PREF_"}
CREATE_ENUM = {"COMPUTE_TYPE": "cublasComputeType_t", "SCALE_TYPE": "cudaDataType_t", "TYPE": "cudaDataType_t"}
LAYOUT_CREATE = ("TYPE", "ROWS", "COLS", "LD")
HEX = re.compile(r"^0[xX][0-9a-fA-F]+$")
NUMBER = re.compile(r"^-?\d+$")


@dataclass
class TraceConfig:
    """One distinct configuration of a log: its calls and the facts made from the first of them."""

    key: tuple
    calls: list[GemmCall] = field(default_factory=list)
    configurations: list[Configuration] = field(default_factory=list)  # heuristic and/or matmul
    unknown_fields: list[str] = field(default_factory=list)  # dump keys the model has no attribute for

    @property
    def first(self) -> GemmCall:
        return self.calls[0]

    def of_kind(self, kind: str) -> list[GemmCall]:
        return [c for c in self.calls if c.kind == kind]


@dataclass
class TraceFacts:
    """A log's facts: for the rule engine (``file_facts``) and the summary (``configs``)."""

    path: str
    calls: CallLog
    configs: list[TraceConfig] = field(default_factory=list)
    file_facts: FileFacts | None = None
    undescribed: int = 0  # calls whose descriptors the log does not show (no dump at all)


class _Converter:
    def __init__(self, model: ApiModel, path: str) -> None:
        self.model = model
        self.path = path
        self.next_id = 0
        self.unknown: list[str] = []

    # --- values ----------------------------------------------------------------------------
    def enum_constant(self, enum_type: str | None, text: str) -> tuple[int, str] | None:
        e = self.model.enum(enum_type) if enum_type else None
        if e is None:
            return None
        if NUMBER.match(text):
            value = int(text)
            return value, e.name_of(value) or ""
        matches = [n for n in e.values if n == text or n.endswith("_" + text)]
        if not matches:
            return None
        best = min(matches, key=len)
        return e.values[best], best

    def value(self, kind: str, name: str, text, at: Loc) -> tuple[Value, str | None]:
        """A logged value of field ``name`` of a ``kind`` object -> (value, enum constant name)."""
        if not isinstance(text, str):
            return Unknown(f"{name} is logged as a group, not a value", at), None
        spec = self.model.attribute(PREFIX[kind] + name)
        enum = CREATE_ENUM.get(name) if name in CREATE_ENUM and (kind != "layout" or name == "TYPE") else None
        enum = enum or (spec.enum if spec is not None else None)
        if spec is not None and spec.pointer or (HEX.match(text) and enum is None):
            if HEX.match(text) and int(text, 16) == 0:
                return Known(0, at, via="log"), None
            return Symbol(text.lower(), "void *", at), None
        if enum:
            found = self.enum_constant(enum, text)
            if found is not None:
                return Known(found[0], at, via="log"), found[1] or None
            return Unknown(f"{text} is not a constant of {enum}", at), None
        if NUMBER.match(text):
            return Known(int(text), at, via="log"), None
        try:
            return Known(float(text), at, via="log"), None
        except ValueError:
            return Unknown(f"{name}={text} is not a number", at), None

    def default(self, kind: str, name: str, at: Loc) -> tuple[Value, str | None]:
        """The documented default of an attribute (the model's ``default``), as a value."""
        spec = self.model.attribute(PREFIX[kind] + name)
        text = (spec.default or "").strip().strip("'") if spec is not None else ""
        if text == "NULL":
            return Known(0, at, via="default"), None
        if NUMBER.match(text):
            v = int(text)
            n = self.model.enum_name(spec.enum, v) if spec is not None and spec.enum else None
            return Known(v, at, via="default"), n
        if text and self.model.enum_value(text) is not None:
            return Known(self.model.enum_value(text), at, via="default"), text
        try:
            return Known(float(text.rstrip("fF")), at, via="default"), None
        except ValueError:
            pass
        return Unknown(f"the log does not show {PREFIX[kind]}{name} and its default is not known", at), None

    # --- objects ---------------------------------------------------------------------------
    def _object(self, kind: str, name: str, at: Loc, create_function: str) -> ApiObject:
        self.next_id += 1
        return ApiObject(id=self.next_id, kind=kind, name=name, created_at=at, create_function=create_function,
                         used=True)

    def _attr_set(self, obj: ApiObject, s: SetLine, value: Value, name: str | None) -> AttrSet:
        at = Loc(s.path, s.line, 1)
        attribute = PREFIX[s.kind] + s.short
        spec = self.model.attribute(attribute)
        return AttrSet(function=s.function, object_kind=s.kind, object_id=obj.id,
                       attribute=attribute if spec is not None else None,
                       attribute_value=Known(spec.value, at, via="log") if spec is not None else
                       Unknown(f"{s.attr} is not an attribute of the API model", at),
                       value=value, size=Known(s.size, at, via="log") if s.size is not None else
                       Unknown("no sizeInBytes in the log line", at),
                       buffer="", buffer_type="", loc=at, site=at, value_name=name)

    def descriptor(self, call: GemmCall, at: Loc) -> tuple[ApiObject | None, dict[str, Field]]:
        if call.desc is None:
            return None, {}
        obj = self._object("matmul_desc", f"computeDesc {call.desc_handle or '(no handle in the log)'}", at,
                           "cublasLtMatmulDescCreate")
        from fusionlint.frontend.cublaslt.handler import DEFAULTS

        fields: dict[str, Field] = {}
        dumped: dict[str, tuple[Value, str | None]] = {}
        for key, text in call.desc.items():
            if not key:
                continue
            name = desc_field(key)
            if name not in CREATE_KEYS.values() and self.model.attribute(PREFIX["matmul_desc"] + name) is None:
                self.unknown.append(f"computeDesc.{key}")
                continue
            dumped[name] = self.value("matmul_desc", name, text, at)
        for name in CREATE_KEYS.values():
            v, n = dumped.pop(name, (Unknown(f"the log does not show {name}", at), None))
            obj.create_args[name] = v
            fields[name] = Field(v, "create", None, n)
        for name in DEFAULTS["matmul_desc"]:
            v, n = self.default("matmul_desc", name, at)
            fields[name] = Field(v, "default", None, n)
        written: dict[str, None] = {}
        for s in call.desc_sets or []:
            if s.kind != "matmul_desc":
                continue
            if s.short in dumped:
                v, n = dumped[s.short]
            elif s.short in PRINTED:
                v, n = self.default("matmul_desc", s.short, at)
            else:
                v, n = Unknown(f"cuBLASLt's log does not print {PREFIX['matmul_desc']}{s.short}", at), None
            obj.sets.append(self._attr_set(obj, s, v, n))
            written[s.short] = None
        for name in list(written) + [n for n in dumped if n not in written]:
            v, n = dumped.get(name) or next((s.value, s.value_name) for s in obj.sets
                                            if s.attribute == PREFIX["matmul_desc"] + name)
            fields[name] = Field(v, "set", None, n)
        return obj, fields

    def layout(self, call: GemmCall, m: str, at: Loc) -> tuple[ApiObject | None, dict[str, Field]]:
        dump = call.layouts.get(m)
        if dump is None:
            return None, {}
        from fusionlint.frontend.cublaslt.handler import DEFAULTS

        obj = self._object("layout", f"{m}desc {call.layout_handles.get(m, '(no handle in the log)')}", at,
                           "cublasLtMatrixLayoutCreate")
        fields: dict[str, Field] = {}
        values: dict[str, tuple[Value, str | None]] = {}
        for key, text in dump.items():
            if not key:
                continue
            name = layout_field(key)
            if name not in LAYOUT_CREATE and self.model.attribute(PREFIX["layout"] + name) is None:
                self.unknown.append(f"{m}desc.{key}")
                continue
            values[name] = self.value("layout", name, text, at)
        for name in LAYOUT_CREATE:
            v, n = values.pop(name, (Unknown(f"the log does not show {m}desc {name.lower()}", at), None))
            obj.create_args[name] = v
            fields[name] = Field(v, "create", None, n)
        for name in DEFAULTS["layout"]:
            v, n = self.default("layout", name, at)
            fields[name] = Field(v, "default", None, n)
        for s in call.layout_sets.get(m) or []:
            v, n = values.get(s.short) or self.default("layout", s.short, at)
            obj.sets.append(self._attr_set(obj, s, v, n))
            fields[s.short] = Field(v, "set", None, n)
        for name, (v, n) in values.items():
            fields[name] = Field(v, "set", None, n)
        return obj, fields

    def preference(self, call: GemmCall, at: Loc) -> tuple[ApiObject | None, dict[str, Field]]:
        """The preference dump prints every field; those at their default are left out, as a
        preference no SetAttribute wrote has no fields in the static facts."""
        if call.preference is None:
            return None, {}
        obj = self._object("preference", "preference", at, "cublasLtMatmulPreferenceCreate")
        fields: dict[str, Field] = {}
        for key, text in call.preference.items():
            name = pref_field(key)
            if not key or self.model.attribute(PREFIX["preference"] + name) is None:
                if key:
                    self.unknown.append(f"preference.{key}")
                continue
            v, n = self.value("preference", name, text, at)
            d, _ = self.default("preference", name, at)
            if isinstance(d, Known) and isinstance(v, Known) and d.value == v.value:
                continue
            if name == "IMPL_MASK" and isinstance(v, Known) and v.value == 2 ** 64 - 1:
                continue
            fields[name] = Field(v, "set", None, n)
        return obj, fields

    def configuration(self, call: GemmCall, kind: str) -> Configuration:
        at = Loc(self.path, call.line, 1)
        desc, desc_fields = self.descriptor(call, at)
        cfg = Configuration(kind=kind, path=self.path, loc=at, site=at, function=call.function, desc=desc,
                            layouts={}, conditional=False)
        if desc_fields:
            cfg.effective["matmul_desc"] = desc_fields
        for m in "ABCD":
            obj, fields = self.layout(call, m, at)
            cfg.layouts[m] = obj
            if obj is not None:
                cfg.effective[f"layout_{m}"] = fields
        pref, pref_fields = self.preference(call, at)
        if pref is not None:
            cfg.preference = pref
            cfg.effective["preference"] = pref_fields
        if kind == "heuristic":
            cfg.heuristic_loc = at
        ws = call.operands.get("workSpaceSizeInBytes")
        if isinstance(ws, str) and ws.isdigit():
            cfg.operands["workspace_size"] = Known(int(ws), at, via="log")
        for part, fields in cfg.effective.items():
            for name, f in fields.items():
                if isinstance(f.value, Unknown):
                    cfg.unknowns.append(f"{part}.{name}: {f.value.reason}")
        for part, obj in (("matmul_desc", desc), *((f"layout_{m}", cfg.layouts[m]) for m in "ABCD")):
            if obj is None:
                cfg.unknowns.append(f"{part}: the log shows no dump of it for this call")
        return cfg


def _pointer_free(d: dict | None) -> tuple:
    """A dump as a hashable key, with addresses replaced by whether they are null."""
    if d is None:
        return ()
    out = []
    for k, v in sorted(d.items()):
        if isinstance(v, str) and HEX.match(v):
            v = "null" if int(v, 16) == 0 else "set"
        out.append((k, v if isinstance(v, str) else repr(v)))
    return tuple(out)


def config_key(call: GemmCall) -> tuple:
    """What makes two calls the same configuration: the dumps (addresses only as set or null) and
    the attributes written (with their sizes), not the call kind."""
    sets = tuple((s.attr, s.size) for s in call.desc_sets or ())
    layout_sets = tuple((m, tuple((s.attr, s.size) for s in call.layout_sets.get(m) or ())) for m in "ABCD")
    return (call.internal, _pointer_free(call.desc), tuple(_pointer_free(call.layouts.get(m)) for m in "ABCD"),
            _pointer_free(call.preference), sets, layout_sets)


def trace_facts(calls: CallLog, model: ApiModel | None = None) -> TraceFacts:
    """The facts of one log's calls: distinct configurations, and the FileFacts the rules read."""
    model = model or load_model()
    path = calls.log.path
    out = TraceFacts(path, calls)
    groups: dict[tuple, TraceConfig] = {}
    for call in calls.calls:
        if call.desc is None and all(v is None for v in call.layouts.values()):
            out.undescribed += 1
            continue
        key = config_key(call)
        groups.setdefault(key, TraceConfig(key)).calls.append(call)
    conv = _Converter(model, path)
    facts = FileFacts(path=path)
    for tc in groups.values():
        conv.unknown = []
        heuristics, matmuls = tc.of_kind("heuristic"), tc.of_kind("matmul")
        h_cfg = conv.configuration(heuristics[0], "heuristic") if heuristics else None
        if h_cfg is not None:
            tc.configurations.append(h_cfg)
        if matmuls:
            m_cfg = conv.configuration(matmuls[0], "matmul")
            if h_cfg is not None:
                m_cfg.heuristic_loc = h_cfg.loc
            tc.configurations.append(m_cfg)
        tc.unknown_fields = sorted(set(conv.unknown))
        out.configs.append(tc)
        facts.configurations += tc.configurations
        for cfg in tc.configurations:
            facts.objects += [o for o in (cfg.desc, cfg.preference, *cfg.layouts.values()) if o is not None]
    facts.configurations.sort(key=lambda c: (c.site.line, c.kind))
    facts.attribute_sets = attribute_sets(calls, model)
    out.file_facts = facts
    return out


def attribute_sets(calls: CallLog, model: ApiModel) -> list[AttrSet]:
    """Every distinct SetAttribute write of the log (attribute and size; the log has no value),
    at its first line: what FL100 judges."""
    seen: set = set()
    out = []
    for s in calls.sets:
        key = (s.function, s.attr, s.size)
        if key in seen:
            continue
        seen.add(key)
        at = Loc(s.path, s.line, 1)
        attribute = PREFIX[s.kind] + s.short
        spec = model.attribute(attribute)
        out.append(AttrSet(function=s.function, object_kind=s.kind, object_id=None,
                           attribute=attribute if spec is not None else None,
                           attribute_value=Known(spec.value, at, via="log") if spec is not None else
                           Unknown(f"{s.attr} is not an attribute of the API model", at),
                           value=Unknown("cuBLASLt's log does not print the value written", at),
                           size=Known(s.size, at, via="log") if s.size is not None else
                           Unknown("no sizeInBytes in the log line", at),
                           buffer="", buffer_type="", loc=at, site=at))
    return out


# ---- facts only the source has -------------------------------------------------------------------
@dataclass(frozen=True)
class SourceFact:
    """A fact a traced configuration took from the static configuration it is linked to."""

    name: str  # the matmul_desc field: BIAS_POINTER
    buffer_type: str  # the C type of the user's pointer variable: "const float *"
    at: Loc  # where the source writes it (the SetAttribute argument)


def source_only_facts(static_cfg: Configuration) -> dict[str, Field]:
    """The facts of a static configuration a log cannot carry: the C types of the pointer
    variables written into the matmul descriptor's pointer attributes (``Field.buffer_type`` of a
    ``matmul_desc`` field, which the rules read as ``pointer_types``: FL124's bias buffer). The log
    has only the pointers' addresses. (The other buffer types, of non-pointer attributes, are not
    in the rules' view of a configuration; those of SetAttribute calls are FL100's, judged per
    logged write, with no configuration.)"""
    return {name: f for name, f in static_cfg.effective.get("matmul_desc", {}).items()
            if f.buffer_type and f.buffer_type.rstrip().endswith("*")}


def take_source_facts(traced: Configuration, statics: list[Configuration]) -> list[SourceFact]:
    """Give ``traced`` the source-only facts of the static configurations it is linked to (each
    one ``same_configuration``): a pointer field the log shows set takes the C type of the
    variable the source writes into it, when every linked site that writes it agrees on the type
    (sites that disagree leave it unknown, as it was). Returns what was taken."""
    desc = traced.effective.get("matmul_desc")
    if not desc:
        return []
    found: dict[str, list[tuple[str, Loc]]] = {}
    for s in statics:
        for name, f in source_only_facts(s).items():
            at = f.arg_at or f.loc or s.site
            found.setdefault(name, []).append((f.buffer_type, at))
    taken = []
    for name, candidates in found.items():
        mine = desc.get(name)
        if mine is None or mine.buffer_type or isinstance(mine.value, Known) and mine.value.value == 0:
            continue
        if len({t for t, _ in candidates}) != 1:
            continue
        buffer_type, at = candidates[0]
        desc[name] = replace(mine, buffer_type=buffer_type)
        taken.append(SourceFact(name, buffer_type, at))
    return taken


# ---- comparing with the static path ---------------------------------------------------------------
# The parts of a configuration's fact view the log carries. Not compared: ``pointer_types`` (the C
# types of the user's pointer variables: the log has addresses only), ``operands`` (variables
# statically, addresses in the log) and ``kind``.
COMPARED_PARTS = ("matmul_desc", "layout_A", "layout_B", "layout_C", "layout_D", "preference")


def view_differences(static_cfg: Configuration, traced: Configuration) -> tuple[list[tuple[str, object, object]], int]:
    """The fields in which two configurations' fact views differ, ``(fact, static, traced)``, and
    how many fields were not compared because the static value is unknown (a function parameter,
    an opaque call). A run-time value (a pointer) equals a run-time value; an absent attribute
    equals only an absent one."""
    from fusionlint.rules.engine import configuration_view
    from fusionlint.rules.markers import ABSENT, UNKNOWN

    sv, tv = configuration_view(static_cfg), configuration_view(traced)
    diffs: list[tuple[str, object, object]] = []
    skipped = 0
    for part in COMPARED_PARTS:
        a, b = sv.get(part, ABSENT), tv.get(part, ABSENT)
        if not isinstance(a, dict) or not isinstance(b, dict):
            if not (a is b or a == b):
                diffs.append((part, a, b))
            continue
        for name in sorted(set(a) | set(b)):
            x, y = a.get(name, ABSENT), b.get(name, ABSENT)
            if x is UNKNOWN:
                skipped += 1
                continue
            if not (x is y or x == y):
                diffs.append((f"{part}.{name}", x, y))
    return diffs, skipped


def attribute_sequence(cfg: Configuration) -> tuple[str, ...]:
    """The matmul-descriptor attributes written, in order (static: the SetAttribute calls; traced:
    the SetAttribute lines tied to the call)."""
    return tuple(s.attribute or "?" for s in (cfg.desc.sets if cfg.desc is not None else ()))


def same_configuration(static_cfg: Configuration, traced: Configuration) -> bool:
    """Is ``traced`` the configuration written at ``static_cfg``: the same kind of call, every
    compared fact the static path knows equal, and the same attribute writes in the same order
    (when the log ties writes to the call)?"""
    if static_cfg.kind != traced.kind:
        return False
    diffs, _ = view_differences(static_cfg, traced)
    if diffs:
        return False
    seq = attribute_sequence(traced)
    return not seq or seq == attribute_sequence(static_cfg)
