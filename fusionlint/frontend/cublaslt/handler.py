"""cuBLASLt call sequences -> configurations.

The interpreter (``interp/interpreter.py``) runs the file's functions; this handler gives the cuBLASLt
calls their meaning: ``*Create``/``*Init`` make an object, ``*SetAttribute`` records a write,
``cublasLtMatmulAlgoGetHeuristic`` and ``cublasLtMatmul`` take a snapshot of everything that
feeds them. The result is one ``Configuration`` per matmul call site (plus heuristic queries
and descriptors that never reach a matmul).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import clang.cindex as ci

from fusionlint.model.call_context import IndexContext
from fusionlint.model.cublaslt_facts import ApiObject, AttrSet, Configuration, Field, FileFacts
from fusionlint.frontend.clang import clangext
from fusionlint.model.cublaslt_api import ApiModel, FunctionSpec, load_model
from fusionlint.frontend.interp import alternatives
from fusionlint.frontend.interp.interpreter import Interpreter, expr_children, is_stand_in_type, loc_of, strip
from fusionlint.frontend.clang.parse import ParsedUnit, closure_mentions
from fusionlint.model.values import Address, Handle, Known, Loc, Symbol, Unknown, Value

K = ci.CursorKind


@dataclass(frozen=True)
class CreateSpec:
    kind: str
    out_param: int  # index of the handle (pointer for Create, storage for Init)
    by_pointer: bool  # Create takes T*, Init takes the storage itself
    args: dict[str, int]  # field name -> argument index


CREATE = {
    "cublasLtMatmulDescCreate": CreateSpec("matmul_desc", 0, True, {"COMPUTE_TYPE": 1, "SCALE_TYPE": 2}),
    "cublasLtMatmulDescInit_internal": CreateSpec("matmul_desc", 0, False, {"COMPUTE_TYPE": 2, "SCALE_TYPE": 3}),
    "cublasLtMatmulDescInit": CreateSpec("matmul_desc", 0, False, {"COMPUTE_TYPE": 1, "SCALE_TYPE": 2}),
    "cublasLtMatrixLayoutCreate": CreateSpec("layout", 0, True, {"TYPE": 1, "ROWS": 2, "COLS": 3, "LD": 4}),
    "cublasLtMatrixLayoutInit_internal": CreateSpec("layout", 0, False, {"TYPE": 2, "ROWS": 3, "COLS": 4, "LD": 5}),
    "cublasLtMatrixLayoutInit": CreateSpec("layout", 0, False, {"TYPE": 1, "ROWS": 2, "COLS": 3, "LD": 4}),
    "cublasLtMatmulPreferenceCreate": CreateSpec("preference", 0, True, {}),
    "cublasLtMatmulPreferenceInit_internal": CreateSpec("preference", 0, False, {}),
    "cublasLtMatmulPreferenceInit": CreateSpec("preference", 0, False, {}),
}
SET = {
    "cublasLtMatmulDescSetAttribute": ("matmul_desc", "cublasLtMatmulDescAttributes_t"),
    "cublasLtMatrixLayoutSetAttribute": ("layout", "cublasLtMatrixLayoutAttribute_t"),
    "cublasLtMatmulPreferenceSetAttribute": ("preference", "cublasLtMatmulPreferenceAttributes_t"),
}
GET = {"cublasLtMatmulDescGetAttribute", "cublasLtMatrixLayoutGetAttribute",
       "cublasLtMatmulPreferenceGetAttribute"}
DESTROY = {"cublasLtMatmulDescDestroy", "cublasLtMatrixLayoutDestroy", "cublasLtMatmulPreferenceDestroy"}
# Prefix of each attribute enum's constants; the short field name is the rest.
PREFIX = {"matmul_desc": "CUBLASLT_MATMUL_DESC_", "layout": "CUBLASLT_MATRIX_LAYOUT_",
          "preference": "CUBLASLT_MATMUL_PREF_"}
# Enum type of the value given at creation.
CREATE_ENUMS = {"COMPUTE_TYPE": "cublasComputeType_t", "SCALE_TYPE": "cudaDataType_t", "TYPE": "cudaDataType_t"}
# Documented defaults (cublasLt.h doc comments: "Default value: ..."), by constant name.
DEFAULTS = {
    "matmul_desc": {"TRANSA": "CUBLAS_OP_N", "TRANSB": "CUBLAS_OP_N", "TRANSC": "CUBLAS_OP_N",
                    "EPILOGUE": "CUBLASLT_EPILOGUE_DEFAULT", "POINTER_MODE": "CUBLASLT_POINTER_MODE_HOST",
                    "FILL_MODE": "CUBLAS_FILL_MODE_FULL", "FAST_ACCUM": 0},
    "layout": {"ORDER": "CUBLASLT_ORDER_COL", "BATCH_COUNT": 1, "STRIDED_BATCH_OFFSET": 0},
    "preference": {},
}
MATMUL_ARGS = ["handle", "desc", "alpha", "A", "Adesc", "B", "Bdesc", "beta", "C", "Cdesc", "D", "Ddesc",
               "algo", "workspace", "workspace_size", "stream"]
HEURISTIC_ARGS = ["handle", "desc", "Adesc", "Bdesc", "Cdesc", "Ddesc", "preference", "requested",
                  "results", "count"]


class CublasLtHandler:
    def __init__(self, model: ApiModel, main_path: str, first_id: int = 1):
        self.model = model
        self.main_path = main_path
        self.first_id = first_id  # the id of the first object made (the runs of alternatives number theirs apart)
        self.objects: dict[int, ApiObject] = {}
        self.storage: dict[tuple, int] = {}  # Init'd opaque storage key -> object id
        self.sets: list[AttrSet] = []
        self.configs: list[Configuration] = []
        self.orphan_kinds: set[str] = set()
        self.heuristics: dict[int, tuple[Loc, dict[str, Value], bool, str, Loc]] = {}
        self._run_first = 0  # how many objects there were when the root function's run now going began
        self.dead_runs: set[int] = set()  # ids of objects made by root function runs that throw on every path

    def begin_root_run(self) -> None:
        self._run_first = len(self.objects)

    def end_root_run(self, dead: bool) -> None:
        """A root function's run ended; ``dead``: on every path it threw (as a forced runtime choice
        can make it): what it made is never used, and is not reported as an unused descriptor."""
        if dead:
            self.dead_runs.update(self.first_id + i for i in range(self._run_first, len(self.objects)))

    # --- ApiHandler protocol ---------------------------------------------------------------
    def is_api(self, name: str) -> bool:
        return name.startswith("cublasLt") and self.model.function(name) is not None or name in CREATE

    def escaped(self, obj: int, function: str, origin: Loc) -> None:
        if obj in self.objects and function not in self.objects[obj].escaped_to:
            self.objects[obj].escaped_to.append(function)

    def call(self, interp: Interpreter, name: str, call: ci.Cursor, args: list[Value]) -> Value:
        loc = loc_of(call)
        arg_cursors = clangext.arguments(call)
        if name in CREATE:
            self._create(interp, CREATE[name], name, args, arg_cursors, loc)
        elif name in SET:
            self._set(interp, name, args, arg_cursors, loc)
        elif name in GET and len(args) > 2 and isinstance(args[2], Address):
            interp.invalidate(args[2].key, f"read back by {name}() at line {loc.line}", loc)
        elif name in DESTROY and args:
            obj = self._object(args[0])
            if obj is not None:
                obj.destroyed_at = loc
        elif name == "cublasLtMatmulAlgoGetHeuristic":
            self._heuristic(interp, args, loc)
        elif name == "cublasLtMatmul":
            self._matmul(interp, call, args, loc)
        spec = self.model.function(name)
        if spec is not None:
            self._written_back(interp, spec, args, loc)
        if spec is not None and spec.returns != "cublasStatus_t" and not spec.returns.rstrip().endswith("*"):
            # a query (cublasLtGetVersion()): what the library loaded at run time says
            return Unknown(f"result of {name}()", loc, spec.returns,
                           runtime=f"`{name}()`, which the cuBLASLt library loaded at run time returns")
        return Symbol(f"{name}()", "cublasStatus_t", loc)

    # --- object resolution -------------------------------------------------------------------
    def _object(self, v: Value) -> ApiObject | None:
        if isinstance(v, Handle):
            return self.objects.get(v.obj)
        if isinstance(v, Address) and v.key in self.storage:
            return self.objects.get(self.storage[v.key])
        return None

    def _create(self, interp: Interpreter, spec: CreateSpec, name: str, args: list[Value],
                arg_cursors: list[ci.Cursor], loc: Loc) -> None:
        if len(args) <= spec.out_param:
            return
        out = args[spec.out_param]
        obj = ApiObject(id=self.first_id + len(self.objects), kind=spec.kind,
                        name=_text(arg_cursors[spec.out_param]).lstrip("&") if arg_cursors else "?",
                        created_at=interp.user_site(loc, *args[1:]), create_function=name,
                        conditional_create=interp.cond_depth > 0)
        for fname, idx in spec.args.items():
            obj.create_args[fname] = args[idx] if idx < len(args) else Unknown("missing argument", loc)
            if obj.created_at == loc and idx < len(arg_cursors):  # written by the user here, not in a wrapper
                obj.create_args_at[fname] = _written(arg_cursors[idx], loc)
        self.objects[obj.id] = obj
        if not isinstance(out, Address):
            return
        if spec.by_pointer:
            interp.store(out.key, Handle(obj.id, loc))
        else:
            self.storage[out.key] = obj.id
            interp.store(out.key, Handle(obj.id, loc))

    def _set(self, interp: Interpreter, name: str, args: list[Value], arg_cursors: list[ci.Cursor],
             loc: Loc) -> None:
        kind, enum_type = SET[name]
        if len(args) < 4:
            return
        obj = self._object(args[0])
        attr_v = args[1]
        spec = self.model.attribute_by_value(enum_type, attr_v.value) if isinstance(attr_v, Known) else None
        buf = args[2]
        value: Value
        buffer_type = ""
        if isinstance(buf, Address):
            value = interp.load(buf.key, loc)
            buffer_type = buf.ctype
        else:
            value = Unknown("buffer is not the address of a variable", loc)
            if arg_cursors:
                t = strip(arg_cursors[2]).type.get_canonical()
                if t.kind == ci.TypeKind.POINTER:
                    buffer_type = t.get_pointee().spelling
        buffer_type = _unqualified_pointer(buffer_type)
        buffer_size = None
        if len(arg_cursors) > 2:
            t = strip(arg_cursors[2]).type.get_canonical()
            if t.kind == ci.TypeKind.POINTER and not is_stand_in_type(t.get_pointee()):
                size = t.get_pointee().get_size()
                buffer_size = size if size > 0 else None
        if isinstance(value, Handle):
            value = Symbol(f"object {value.obj}")
        value_name = None
        if spec is not None and spec.enum and isinstance(value, Known) and isinstance(value.value, int):
            value_name = self.model.enum_name(spec.enum, value.value)
        site = interp.user_site(loc, attr_v)
        at = [_written(c, loc) if site == loc else None for c in arg_cursors[1:4]] if len(arg_cursors) > 3 else []
        record = AttrSet(function=name, object_kind=kind, object_id=obj.id if obj else None,
                         attribute=spec.name if spec else None, attribute_value=attr_v, value=value,
                         size=args[3], buffer=_text(arg_cursors[2]) if len(arg_cursors) > 2 else "",
                         buffer_type=buffer_type, loc=loc, site=site,
                         conditional=interp.cond_depth > 0, arm_path=interp.arm_path,
                         arm_runtime=tuple(interp.cond_runtime), arm_choices=tuple(interp.cond_choices),
                         value_name=value_name,
                         buffer_size=buffer_size,
                         attribute_at=at[0] if at else None, buffer_at=at[1] if at else None,
                         size_at=at[2] if at else None)
        self.sets.append(record)
        if obj is not None:
            obj.sets.append(record)
        else:
            self.orphan_kinds.add(kind)

    def _snapshot(self, v: Value) -> ApiObject | None:
        obj = self._object(v)
        if obj is None:
            return None
        obj.used = True
        return obj.snapshot()

    def _heuristic(self, interp: Interpreter, args: list[Value], loc: Loc) -> None:
        named = dict(zip(HEURISTIC_ARGS, args))
        desc = self._object(named.get("desc", Unknown("")))
        if desc is not None:
            desc.used = True
            self.heuristics[desc.id] = (loc, named, interp.cond_depth > 0, _function_name(interp),
                                        interp.user_site(loc))
        for key in ("Adesc", "Bdesc", "Cdesc", "Ddesc", "preference"):
            o = self._object(named.get(key, Unknown("")))
            if o is not None:
                o.used = True
        cfg = self._config("heuristic", loc, interp.user_site(loc), _function_name(interp), named,
                           interp.cond_depth > 0)
        self._context(interp, cfg)
        self.configs.append(cfg)

    @staticmethod
    def _written_back(interp: Interpreter, spec: FunctionSpec, args: list[Value], loc: Loc) -> None:
        """What a cuBLASLt function writes through its output parameters (a non-const ``T *`` or
        ``T[]`` of the API model, not ``void *``, not the descriptor a Create/Init makes) is what the
        library found at run time: the heuristic's results and count, an attribute's size written, a
        property. (Not the 0 the count held before the call: TransformerEngine's ``if (returned == 0)
        NVTE_ERROR(...)`` after its heuristic would end every path to its matmul.)"""
        made = CREATE[spec.name].out_param if spec.name in CREATE else None
        for i, (param, arg) in enumerate(zip(spec.params, args)):
            if i == made or not isinstance(arg, Address) or not _is_output(param.type):
                continue
            interp.store(arg.key, Unknown(f"{arg.name.lstrip('&')} written by {spec.name}() at line {loc.line}",
                                          loc, arg.ctype, runtime=f"what {spec.name}() at line {loc.line} wrote"))

    def _matmul(self, interp: Interpreter, call: ci.Cursor, args: list[Value], loc: Loc) -> None:
        named = dict(zip(MATMUL_ARGS, args))
        desc = self._object(named.get("desc", Unknown("")))
        heur_loc = None
        if desc is not None and desc.id in self.heuristics:
            heur_loc, hargs, _, _, _ = self.heuristics[desc.id]
            if "preference" in hargs:
                named["preference"] = hargs["preference"]
        cfg = self._config("matmul", loc, interp.user_site(loc), _function_name(interp), named,
                           interp.cond_depth > 0)
        cfg.heuristic_loc = heur_loc
        self._context(interp, cfg)
        self.configs.append(cfg)

    @staticmethod
    def _context(interp: Interpreter, cfg: Configuration) -> None:
        """Where the configuration comes from: the calls that led to it, the function the run
        started from, and the runtime choices forced on the way (when alternatives are enumerated)."""
        cfg.via = interp.call_chain()
        cfg.root = interp.root_usr()
        cfg.arm_path = interp.arm_path
        cfg.when = tuple(str(a) for a in interp.taken)
        cfg.when_arms = tuple((a.choice.key, a.arm, len(a.choice.arms)) for a in interp.taken)
        cfg.compile_time = frozenset(a.choice.key for a in interp.taken if a.choice.compile_time)

    def _config(self, kind: str, loc: Loc, site: Loc, function: str, named: dict[str, Value],
                conditional: bool) -> Configuration:
        layouts = {m: self._snapshot(named.get(f"{m}desc", Unknown(""))) for m in "ABCD"}
        cfg = Configuration(kind=kind, path=self.main_path, loc=loc, site=site, function=function,
                            desc=self._snapshot(named.get("desc", Unknown(""))), layouts=layouts,
                            preference=self._snapshot(named.get("preference", Unknown(""))),
                            conditional=conditional)
        for key in ("A", "B", "C", "D", "alpha", "beta", "workspace", "workspace_size", "requested"):
            if key in named:
                cfg.operands[key] = named[key]
        for part, key in (("matmul_desc", "desc"), *((f"layout_{m}", f"{m}desc") for m in "ABCD"),
                          ("preference", "preference")):
            v = named.get(key)
            if v is not None and self._object(v) is None:  # what the argument was instead
                cfg.unresolved[part] = f"the argument is `{v.name}`" if isinstance(v, Symbol) \
                    else v.reason if isinstance(v, Unknown) else ""
        if kind == "heuristic":
            cfg.heuristic_loc = loc
        return cfg

    # --- results ---------------------------------------------------------------------------
    def finish(self) -> list[Configuration]:
        configs = list(self.configs)
        for obj in self.objects.values():
            if obj.kind == "matmul_desc" and not obj.used and obj.created_at.path == self.main_path \
                    and obj.id not in self.dead_runs:
                configs.append(Configuration(kind="descriptor", path=self.main_path, loc=obj.created_at,
                                             site=obj.created_at, function="", desc=obj.snapshot(),
                                             layouts={m: None for m in "ABCD"},
                                             conditional=obj.conditional_create))
        for cfg in configs:
            self._resolve(cfg)
        return sorted(configs, key=lambda c: (c.site.line, c.site.column, c.kind))

    def effective_fields(self, obj: ApiObject, arm_path: tuple[int, ...] | None = None) -> dict[str, Field]:
        """Create arguments, then documented defaults, then each set in program order. ``arm_path``:
        the undecided branches' arms the GEMM call was reached in; a set run inside an undecided
        branch is conditional unless it lies on that path (the same loop body or branch arm as the
        call, or one enclosing it)."""
        fields: dict[str, Field] = {}
        for fname, v in obj.create_args.items():
            fields[fname] = Field(v, "create", obj.created_at, self._enum_name(CREATE_ENUMS.get(fname), v),
                                  arg_at=obj.create_args_at.get(fname))
        for fname, default in DEFAULTS[obj.kind].items():
            if fname in fields:
                continue
            if isinstance(default, str):
                value = self.model.enum_value(default)
                fields[fname] = Field(Known(value, None, via="default"), "default", None, default)
            else:
                fields[fname] = Field(Known(default, None, via="default"), "default", None)
        prefix = PREFIX[obj.kind]
        for s in obj.sets:
            if s.attribute is None:
                continue
            fname = s.attribute[len(prefix):] if s.attribute.startswith(prefix) else s.attribute
            on_path = arm_path is not None and s.arm_path == arm_path[:len(s.arm_path)]
            conditional = s.conditional and not on_path
            new = Field(s.value, "set", s.site, s.value_name, conditional, s.buffer_type, s.buffer_at)
            old = fields.get(fname)
            if conditional and not (old is not None and _same_known(old.value, s.value)):
                new = Field(Unknown(f"set conditionally at line {s.site.line}", s.site,
                                    runtime=s.runtime_condition(arm_path),
                                    choices=s.condition_choices(arm_path)), "set", s.site,
                            None, True, arg_at=s.buffer_at)
            fields[fname] = new
        return fields

    def _enum_name(self, enum_type: str | None, v: Value) -> str | None:
        if enum_type and isinstance(v, Known) and isinstance(v.value, int):
            return self.model.enum_name(enum_type, v.value)
        return None

    def _resolve(self, cfg: Configuration) -> None:
        parts: dict[str, ApiObject | None] = {"matmul_desc": cfg.desc, **{f"layout_{m}": l for m, l in
                                                                        cfg.layouts.items()},
                                              "preference": cfg.preference}
        for part, obj in parts.items():
            if obj is None:
                if cfg.kind != "descriptor" and (part != "preference" or cfg.heuristic_loc is not None):
                    why = cfg.unresolved.get(part)
                    cfg.unknowns.append(f"{part}: the object did not resolve" + (f" ({why})" if why else ""))
                continue
            fields = self.effective_fields(obj, cfg.arm_path if cfg.kind != "descriptor" else None)
            cfg.effective[part] = fields
            for fname, f in fields.items():
                if isinstance(f.value, Unknown):
                    cfg.unknowns.append(f"{part}.{fname}: {f.value.reason}")
            if obj.kind in self.orphan_kinds:
                obj.escaped_to.append("(a set call whose object did not resolve)")


_TOP_QUALIFIERS = re.compile(r"\*(?:\s*\b(?:const|volatile|__restrict__|__restrict|restrict)\b)+\s*$")


def _unqualified_pointer(ctype: str) -> str:
    """``const float *const`` -> ``const float *``: the qualifiers of the pointer variable itself
    (e.g. a pointer passed through a ``const T &`` helper parameter) say nothing about the buffer."""
    return _TOP_QUALIFIERS.sub("*", ctype)


def _same_known(a: Value, b: Value) -> bool:
    return isinstance(a, Known) and isinstance(b, Known) and a.value == b.value


def _written(arg: ci.Cursor, call: Loc) -> Loc:
    """Where the user wrote an argument of the call at ``call`` (inside a macro call, the argument
    itself rather than the macro)."""
    return Loc(*clangext.written_location(arg, (call.path, call.line, call.column)))


def _text(cursor: ci.Cursor) -> str:
    tokens = [t.spelling for t in cursor.get_tokens()]
    return "".join(tokens) if tokens else cursor.spelling


def _function_name(interp: Interpreter) -> str:
    if not interp.frames:
        return ""
    fn = interp.frames[0].function
    parent = fn.semantic_parent
    if parent is not None and parent.kind in (K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE):
        return f"{parent.spelling}::{fn.spelling}"
    return fn.spelling


API_PREFIX = "cublasLt"  # every function the handler watches is named so (see CublasLtHandler.is_api)


def may_call_api(unit: ParsedUnit, text: str | None = None) -> bool:
    """False when no cuBLASLt function can be called in the translation unit: its name is written
    neither in the main file (``text``, its content), nor in the compiler arguments (a ``-D``
    macro), nor in any header the parse read (a call written through a macro has the name in the
    macro's file, a declaration in its header). Then there is nothing to interpret, and a large
    file without GEMMs is not walked at all."""
    if text is None or API_PREFIX in text or any(API_PREFIX in a for a in unit.args):
        return True
    return closure_mentions(unit, API_PREFIX)


def extract(unit: ParsedUnit, text: str | None = None, model: ApiModel | None = None,
            contexts: IndexContext | None = None) -> FileFacts:
    """Run the interpreter over the main file and collect its cuBLASLt facts. ``text`` is the main
    file's content (when given, a translation unit that cannot call cuBLASLt is not walked);
    ``model``: the API model (default: the shipped one); ``contexts``: what the project index
    says of the file's surroundings: the calls of its functions from other translation units (each
    function run once per call) and what the functions of other units it calls return."""
    main_path = str(unit.path)
    model = model or load_model()
    handler = CublasLtHandler(model, main_path)
    interp = None
    if may_call_api(unit, text):
        interp = Interpreter(unit.tu, main_path, handler)
        interp.run(contexts)
    configs = handler.finish()
    if interp is not None:
        configs = alternatives.expand(configs, interp, lambda first_id: CublasLtHandler(model, main_path, first_id),
                                      contexts)
    errors = unit.main_file_errors()
    for cfg in configs:
        fn_lines = (cfg.site.line - 200, cfg.site.line)
        cfg.parse_errors_nearby = [f"{d.line}:{d.column}: {d.message}" for d in errors
                                   if fn_lines[0] <= d.line <= fn_lines[1]][:10]
    return FileFacts(path=main_path, configurations=configs, attribute_sets=handler.sets,
                     objects=list(handler.objects.values()), diagnostics=unit.diagnostics,
                     missing_headers=unit.missing_headers, header_mode=unit.header_mode)


def _is_output(ctype: str) -> bool:
    """A parameter type the library writes a value through: ``int *``, ``size_t *``,
    ``cublasLtMatmulHeuristicResult_t[]`` (not ``const T *``, not the raw buffer ``void *``)."""
    t = ctype.replace(" ", "")
    if "const" in t or not (t.endswith("*") or t.endswith("[]")):
        return False
    return t.rstrip("*[]") != "void"
