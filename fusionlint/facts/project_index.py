"""One translation unit's part of the project index: what other translation units need
to know about it, from one parse.

- ``functions``: the functions the file defines that reach cuBLASLt (directly or through helpers
  the unit has the bodies of), each with its USR, name, parameters and which parameters reach which
  attribute or create argument (a field whose value is ``Unknown`` because it "comes from the
  caller": the reason the interpreter gives a parameter of a function analysed without a caller).
- ``calls``: its calls of functions it has no body of that are declared in user code (not in a
  system header, not in fusionlint's virtual stand-ins, not cuBLASLt itself), each as a
  ``CallContext``: the chain of calls that led there (ending with the call itself) and the
  arguments as the interpreter evaluated them at that point (a known value keeps where it was
  written, in this file).
- ``returns``: what the functions it defines return when that does not depend on the caller
  (``facts/return_summaries.py``): a call of one from another unit gets that value.
- ``roots``: the functions the interpreter starts from (no function of the unit calls them), each
  with its USR and, for a template's specialization, its template's: one that no unit's ``calls``
  name is an entry point of the project, whose parameters are input from outside it.

Callers and definitions are matched by USR, which for a function declared in a header and
defined in another file is the same in every translation unit of one run (the same headers: the
real ``cublasLt.h`` or fusionlint's stand-in, never both in one run).

CUTLASS template arguments do not cross translation units through calls: a template's body is in
every unit that instantiates it, so what feeds them is already in that unit. What the index keeps
for CUTLASS is which project headers each file includes (``run/index_build._record_includes``, no
parse): a header's template GEMMs are read where its includers instantiate them.
The storage (cache entries, the project's manifest, the parallel build) is ``run/project_index.py``.
"""
from __future__ import annotations

import re
from pathlib import Path

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.cublaslt.handler import CublasLtHandler
from fusionlint.frontend.interp.interpreter import FUNCTION_KINDS, Interpreter, function_label, loc_of
from fusionlint.frontend.clang.parse import is_virtual
from fusionlint.frontend.interp.runtime_values import is_runtime_object
from fusionlint.facts.return_summaries import return_summaries
from fusionlint.model.call_context import CallContext, context_to_json
from fusionlint.model.cublaslt_facts import CallStep
from fusionlint.model.values import Unknown

TYPE_CHECKING = False

if TYPE_CHECKING:
    from fusionlint.frontend.clang.parse import ParsedUnit
    from fusionlint.model.cublaslt_api import ApiModel

RECORD_FORMAT = 3

K = ci.CursorKind

# the interpreter's reasons for a value that comes from a parameter of the function analysed
# without a caller (runtime_values.parameter_value, CallerValuesMixin._unset_reason)
_PARAM = re.compile(r"^(?P<param>\w+) is a parameter of (?P<fn>[\w:~<>]+)\(\); its value comes from the caller$")
_MEMBER = re.compile(r"^\S+ comes from the caller \((?P<param>\w+) is a parameter of (?P<fn>[\w:~<>]+)\(\)\)$")


class IndexHandler(CublasLtHandler):
    """The cuBLASLt handler, and the calls of functions defined in other translation units."""

    def __init__(self, model: ApiModel, main_path: str) -> None:
        super().__init__(model, main_path)
        self.external: list[tuple[str, CallContext]] = []  # (callee USR, the call)
        self.external_templates: list[str] = []  # the templates of the specializations called

    def watches_external(self, ref: ci.Cursor) -> bool:
        if ref.kind not in FUNCTION_KINDS or ref.kind == K.DESTRUCTOR or self.is_api(ref.spelling):
            return False
        loc = ref.location
        if loc.file is None or loc.is_in_system_header or is_virtual(loc.file.name):
            return False
        return bool(ref.get_usr())

    def external_call(self, interp: Interpreter, ref: ci.Cursor, call: ci.Cursor, args: list) -> None:
        caller = function_label(interp.frames[-1].function) if interp.frames else ""
        step = CallStep(caller, function_label(ref), loc_of(call))
        self.external.append((ref.get_usr(), CallContext((*interp.call_chain(), step), tuple(args))))
        pattern = clangext.specialized_template(ref)
        if pattern is not None and pattern.get_usr():  # a template's specialization: its template too
            self.external_templates.append(pattern.get_usr())


def _reached(unknown: Unknown) -> tuple[str, str] | None:
    """(parameter, function) when the value comes from a parameter of a function without a caller."""
    m = _PARAM.match(unknown.reason) or _MEMBER.match(unknown.reason)
    return (m["param"], m["fn"]) if m else None


def index_unit(unit: ParsedUnit, model: ApiModel) -> dict:
    """The unit's index record (JSON data): its cuBLASLt functions and its calls into other units."""
    main_path = str(unit.path)
    handler = IndexHandler(model, main_path)
    interp = Interpreter(unit.tu, main_path, handler)
    interp.run()
    configs = handler.finish()
    # which of the file's functions reach cuBLASLt (not merely a function of another unit)
    plain = Interpreter(unit.tu, main_path, CublasLtHandler(model, main_path))
    every = interp.main_functions()
    functions = [f for f in every if f.get_usr() and plain.relevant(f)]
    reaches: dict[str, dict[str, set[str]]] = {}  # function name -> parameter -> fields
    counts: dict[str, int] = {}
    for cfg in configs:
        counts[cfg.function] = counts.get(cfg.function, 0) + 1
        for part, fields in cfg.effective.items():
            for name, f in fields.items():
                hit = _reached(f.value) if isinstance(f.value, Unknown) else None
                if hit is not None:
                    reaches.setdefault(hit[1], {}).setdefault(hit[0], set()).add(f"{part}.{name}")
    out_functions = []
    seen: set[str] = set()
    for f in functions:
        usr = f.get_usr()
        if usr in seen:
            continue
        seen.add(usr)
        params = [c for c in f.get_children() if c.kind == K.PARM_DECL]
        label = function_label(f)
        mine = reaches.get(f.spelling, {})
        out_functions.append({
            "usr": usr, "name": f.spelling, "label": label, "line": loc_of(f).line,
            "params": [{"name": p.spelling, "type": p.type.spelling, "runtime": is_runtime_object(p.type)}
                       for p in params],
            "reaches": {p: sorted(v) for p, v in sorted(mine.items())},
            "configurations": counts.get(label, 0),
        })
    calls = [{"usr": usr, "context": context_to_json(ctx)} for usr, ctx in handler.external]
    roots = []
    for f in dict.fromkeys(interp.roots):
        pattern = clangext.specialized_template(f)
        roots.append({"usr": f.get_usr(), "label": function_label(f),
                      **({"template": pattern.get_usr()} if pattern is not None and pattern.get_usr() else {})})
    return {"format": RECORD_FORMAT, "path": main_path, "functions": out_functions, "calls": calls,
            "roots": roots, "called_templates": sorted(set(handler.external_templates)),
            "returns": return_summaries(plain, every)}


def record_summary(record: dict) -> tuple[int, int]:
    """(functions reaching cuBLASLt, call sites into other units) of one record."""
    return len(record.get("functions", ())), len(record.get("calls", ()))


def index_file(path: Path, options, api=None) -> tuple[dict, object]:
    """Parse ``path`` once and make its record; also the parse's ``UnitRecord`` (what the cache
    keeps: the include closure and missing headers)."""
    from fusionlint.facts.extract import _read_text
    from fusionlint.frontend.clang.parse import parse_file
    from fusionlint.model.cublaslt_api import load_model

    text = _read_text(path)
    unit = parse_file(path, options, text=text, stand_ins=api.stand_ins() if api is not None else None)
    model = api.model() if api is not None else load_model()
    return index_unit(unit, model), unit.record()
