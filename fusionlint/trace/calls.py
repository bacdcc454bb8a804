"""Log records -> GEMM calls: each ``cublasLt*MatmulAlgoGetHeuristic`` and ``cublasLt*Matmul`` with
everything the log says about it.

What a cuBLASLt 12.x/13.x log holds (level 5):

- ``[Api][cublasLtMatmulDescSetAttribute] matmulDesc=H attr=MATMUL_DESC_X buf=P sizeInBytes=N``
  (the same for layouts, ``matLayout=H``, and preferences, ``pref=H``): which attribute was
  written to which handle, and the size, but not the value.
- ``[Api][cublasLtMatmulAlgoGetHeuristic] Adesc=[...] ... computeDesc=[...]``: full dumps of the
  layouts and the matmul descriptor (non-default values only), no handle addresses.
- ``[Api][cublasLtMatmul] A=.. Adesc=H ... computeDesc=H ...``: the handles, then (when the call
  got as far) ``[Trace][cublasLtMatmul]`` with the same dumps and the algorithm chosen.
- ``[Error][function] text`` and ``[Info][function] heuristicResults=[..]`` after a call.

The descriptor handle ties SetAttribute lines to a matmul (``computeDesc=H``); a heuristic query
names no handle, so it is tied to the live descriptor most recently written whose written
attributes cover its dump. A handle's history starts again after its Destroy (addresses are
reused). Calls of different processes (the pid) never mix. The Trace line, with the full
computeDesc, is the reference for a matmul; a matmul rejected before its Trace line takes the
dumps of the heuristic query on the same descriptor. Standard library only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from fusionlint.trace.log_parser import ParsedLog, Record

MATMUL = re.compile(r"^cublasLt([A-Z]{0,4})Matmul$")
HEURISTIC = re.compile(r"^cublasLt([A-Z]{0,4})MatmulAlgoGetHeuristic$")
SET_FUNCTIONS = {"cublasLtMatmulDescSetAttribute": ("matmul_desc", "matmulDesc"),
                 "cublasLtMatrixLayoutSetAttribute": ("layout", "matLayout"),
                 "cublasLtMatmulPreferenceSetAttribute": ("preference", "pref")}
DESTROY = {"cublasLtMatmulDescDestroy": "matmulDesc", "cublasLtMatrixLayoutDestroy": "matLayout",
           "cublasLtMatmulPreferenceDestroy": "matmulPref"}
# computeDesc dump keys whose attribute name is not the key in upper snake case
DESC_KEY_ALIASES = {"fastAccumulationFlag": "FAST_ACCUM"}
PREF_KEY_ALIASES = {"maxWorkspaceSizeinBytes": "MAX_WORKSPACE_BYTES", "minBytesAlignmentA": "MIN_ALIGNMENT_A_BYTES",
                    "minBytesAlignmentB": "MIN_ALIGNMENT_B_BYTES", "minBytesAlignmentC": "MIN_ALIGNMENT_C_BYTES",
                    "minBytesAlignmentD": "MIN_ALIGNMENT_D_BYTES"}
# keys of the computeDesc dump that are the descriptor's create arguments, not attributes set
CREATE_KEYS = {"computeType": "COMPUTE_TYPE", "scaleType": "SCALE_TYPE"}


def snake(key: str) -> str:
    """``epilogueAuxLd`` -> ``EPILOGUE_AUX_LD``, ``amaxDPointer`` -> ``AMAX_D_POINTER``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", key).upper()


def desc_field(key: str) -> str:
    """The matmul-descriptor field (attribute name without ``CUBLASLT_MATMUL_DESC_``) of a dump key."""
    return CREATE_KEYS.get(key) or DESC_KEY_ALIASES.get(key) or snake(key)


def layout_field(key: str) -> str:
    return snake(key)


def pref_field(key: str) -> str:
    return PREF_KEY_ALIASES.get(key) or snake(key)


def attr_field(attr: str, kind: str) -> str:
    """``MATMUL_DESC_TRANSA`` (as SetAttribute lines name it) -> ``TRANSA``."""
    for prefix in ("CUBLASLT_", ""):
        for part in {"matmul_desc": ("MATMUL_DESC_",), "layout": ("MATRIX_LAYOUT_",),
                     "preference": ("MATMUL_PREF_",)}[kind]:
            if attr.startswith(prefix + part):
                return attr[len(prefix + part):]
    return attr


@dataclass(frozen=True)
class SetLine:
    """One logged SetAttribute call."""

    path: str
    line: int
    function: str
    kind: str  # matmul_desc | layout | preference
    handle: str
    attr: str  # as logged: MATMUL_DESC_TRANSA
    size: int | None

    @property
    def short(self) -> str:
        return attr_field(self.attr, self.kind)


@dataclass
class _Handle:
    created: int | None = None  # line of the Create call
    sets: list[SetLine] = field(default_factory=list)
    touched: int = 0  # line of the last write


@dataclass
class GemmCall:
    kind: str  # heuristic | matmul
    path: str
    line: int  # the call's Api line (or its Trace line when the log has no Api line for it)
    pid: int
    function: str
    desc: dict | None = None  # computeDesc dump
    layouts: dict = field(default_factory=lambda: {m: None for m in "ABCD"})  # A..D dumps
    preference: dict | None = None
    desc_handle: str | None = None
    layout_handles: dict = field(default_factory=dict)
    desc_sets: list[SetLine] | None = None  # None: no SetAttribute lines could be tied to the call
    layout_sets: dict = field(default_factory=dict)  # A..D -> list[SetLine] (matmul calls only)
    desc_created: int | None = None
    trace_line: int | None = None
    algo: dict | None = None  # the Trace line's algo=[...]
    results: list[str] | None = None  # heuristicResults (algorithm ids found)
    errors: list[tuple[int, str]] = field(default_factory=list)  # cuBLASLt's [Error] lines
    dumps_from: str = ""  # where the dumps came from: "trace", "api", "heuristic:<line>", "" none
    operands: dict = field(default_factory=dict)  # A B C D workSpaceSizeInBytes beta ... as logged
    internal: str = ""  # cuBLAS's own entry points (cublasLtTSTMatmul...): "TST"
    heuristic: GemmCall | None = None  # the query this matmul follows, with the same configuration

    @property
    def rejected(self) -> bool:
        return bool(self.errors) or (self.kind == "heuristic" and self.results is not None and not self.results)


@dataclass
class CallLog:
    """The calls of one log, in order, and every SetAttribute line (FL100 judges those)."""

    log: ParsedLog
    calls: list[GemmCall] = field(default_factory=list)
    sets: list[SetLine] = field(default_factory=list)
    unused: int = 0  # records of functions this reader does not interpret (Create, Destroy, CtxInit...)


class _Process:
    def __init__(self) -> None:
        self.handles: dict[str, dict[str, _Handle]] = {"matmul_desc": {}, "layout": {}, "preference": {}}
        self.pending_desc: int | None = None  # a DescCreate line no handle has claimed yet
        self.calls: list[GemmCall] = []

    def handle(self, kind: str, h: str) -> _Handle:
        table = self.handles[kind]
        if h not in table:
            created = None
            if kind == "matmul_desc":
                created, self.pending_desc = self.pending_desc, None
            table[h] = _Handle(created)
        return table[h]


def _dump_attributes(desc: dict | None) -> set[str]:
    return {desc_field(k) for k in (desc or {}) if k and k not in CREATE_KEYS}


def read_calls(log: ParsedLog) -> CallLog:
    out = CallLog(log)
    procs: dict[int, _Process] = {}
    for r in log.records:
        p = procs.setdefault(r.pid, _Process())
        if r.level == "Api":
            _api(r, p, out)
        elif r.level == "Trace":
            _trace(r, p, out)
        elif r.level == "Error":
            call = _last(p, r.function)
            if call is not None:
                call.errors.append((r.line, r.text.strip()))
        elif r.level == "Info" and "heuristicResults" in r.fields:
            call = _last(p, r.function)
            if call is not None:
                v = r.fields["heuristicResults"]
                call.results = [str(x) for x in v] if isinstance(v, list) else []
        else:
            out.unused += 1
    return out


def _last(p: _Process, function: str) -> GemmCall | None:
    for call in reversed(p.calls):
        if call.function == function:
            return call
    return None


def _api(r: Record, p: _Process, out: CallLog) -> None:
    f = r.fields
    if r.function == "cublasLtMatmulDescCreate":
        p.pending_desc = r.line
    elif r.function in SET_FUNCTIONS:
        kind, key = SET_FUNCTIONS[r.function]
        h, attr = f.get(key), f.get("attr")
        if not isinstance(h, str) or not isinstance(attr, str):
            return
        size = f.get("sizeInBytes")
        s = SetLine(r.path, r.line, r.function, kind, h, attr,
                    int(size) if isinstance(size, str) and size.isdigit() else None)
        state = p.handle(kind, h)
        state.sets.append(s)
        state.touched = r.line
        out.sets.append(s)
    elif r.function in DESTROY:
        h = f.get(DESTROY[r.function])
        kind = {"matmulDesc": "matmul_desc", "matLayout": "layout", "matmulPref": "preference"}[DESTROY[r.function]]
        if isinstance(h, str):
            p.handles[kind].pop(h, None)
    elif HEURISTIC.match(r.function):
        call = GemmCall("heuristic", r.path, r.line, r.pid, r.function, internal=HEURISTIC.match(r.function)[1])
        _take_dumps(call, f)
        call.dumps_from = "api"
        if not call.internal:
            _tie_heuristic(call, p)
        p.calls.append(call)
        out.calls.append(call)
    elif MATMUL.match(r.function):
        call = GemmCall("matmul", r.path, r.line, r.pid, r.function, internal=MATMUL.match(r.function)[1])
        h = f.get("computeDesc")
        if isinstance(h, str) and not h.startswith("[") and not call.internal:
            state = p.handle("matmul_desc", h)
            call.desc_handle, call.desc_sets, call.desc_created = h, list(state.sets), state.created
            for m in "ABCD":
                lh = f.get(f"{m}desc")
                if isinstance(lh, str):
                    call.layout_handles[m] = lh
                    call.layout_sets[m] = list(p.handles["layout"][lh].sets) if lh in p.handles["layout"] else []
        call.operands = {k: v for k, v in f.items() if isinstance(v, str) and k in (
            "A", "B", "C", "D", "workSpace", "workSpaceSizeInBytes", "stream", "algo")}
        p.calls.append(call)
        out.calls.append(call)
    else:
        out.unused += 1


def _take_dumps(call: GemmCall, f: dict) -> None:
    for m in "ABCD":
        d = f.get(f"{m}desc")
        if isinstance(d, dict):
            call.layouts[m] = d
    if isinstance(f.get("computeDesc"), dict):
        call.desc = f["computeDesc"]
    if isinstance(f.get("preference"), dict):
        call.preference = f["preference"]


def _tie_heuristic(call: GemmCall, p: _Process) -> None:
    """The live descriptor most recently written whose written attributes include every attribute
    the query's dump shows; none when no descriptor fits."""
    shown = _dump_attributes(call.desc)
    best: tuple[int, str, _Handle] | None = None
    for h, state in p.handles["matmul_desc"].items():
        written = {s.short for s in state.sets}
        if shown <= written and (best is None or state.touched > best[0]):
            best = (state.touched, h, state)
    if best is not None:
        call.desc_handle, call.desc_sets, call.desc_created = best[1], list(best[2].sets), best[2].created


def _trace(r: Record, p: _Process, out: CallLog) -> None:
    if not MATMUL.match(r.function):
        out.unused += 1
        return
    call = None
    for c in reversed(p.calls):
        if c.function == r.function and c.kind == "matmul":
            call = c if c.trace_line is None else None
            break
    if call is None:  # a Trace line without its Api line (CUBLASLT_LOG_MASK without Api)
        call = GemmCall("matmul", r.path, r.line, r.pid, r.function, internal=MATMUL.match(r.function)[1])
        p.calls.append(call)
        out.calls.append(call)
    _take_dumps(call, r.fields)
    call.trace_line, call.dumps_from = r.line, "trace"
    if isinstance(r.fields.get("algo"), dict):
        call.algo = r.fields["algo"]
    for k in ("beta", "outOfPlace"):
        if isinstance(r.fields.get(k), str):
            call.operands[k] = r.fields[k]


def finish(calls: CallLog) -> CallLog:
    """Pair each matmul with the heuristic query it follows: the last query on the same descriptor
    (or, when neither is tied to a handle, the query just before it). A matmul without dumps of
    its own (rejected before its Trace line) takes the query's; one whose dumps equal the query's
    is that query's GEMM (``heuristic``) and takes its preference, which the Trace line lacks."""
    last_heuristic: dict[tuple[int, str | None], GemmCall] = {}
    previous: dict[int, GemmCall] = {}
    for call in calls.calls:
        if call.kind == "heuristic":
            last_heuristic[(call.pid, call.desc_handle)] = call
        else:
            h = last_heuristic.get((call.pid, call.desc_handle))
            prev = previous.get(call.pid)
            if h is None and prev is not None and prev.kind == "heuristic" and prev.desc_handle is None:
                h = prev
            if h is not None and call.dumps_from == "":
                call.desc, call.layouts = h.desc, dict(h.layouts)
                call.dumps_from = f"heuristic:{h.line}"
            if h is not None and _same(call.desc, h.desc) and all(
                    _same(call.layouts.get(m), h.layouts.get(m)) for m in "ABCD"):
                call.heuristic = h
                if call.preference is None:
                    call.preference = h.preference
                # the query names no handles: what the matmul's handles say holds for it too
                if not h.layout_sets and call.layout_sets:
                    h.layout_sets, h.layout_handles = dict(call.layout_sets), dict(call.layout_handles)
                if h.desc_sets is None and call.desc_sets is not None:
                    h.desc_sets, h.desc_handle, h.desc_created = list(call.desc_sets), call.desc_handle, call.desc_created
        previous[call.pid] = call
    return calls


def _plain(d: dict | None) -> dict | None:
    """A dump with addresses reduced to null / not null (buffers move between calls)."""
    if d is None:
        return None
    out = {}
    for k, v in d.items():
        if isinstance(v, str) and re.fullmatch(r"0[xX][0-9a-fA-F]+", v):
            v = "null" if int(v, 16) == 0 else "set"
        out[k] = v
    return out


def _same(a: dict | None, b: dict | None) -> bool:
    return _plain(a) == _plain(b)


def calls_of(log: ParsedLog) -> CallLog:
    return finish(read_calls(log))
