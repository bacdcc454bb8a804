"""Evaluation of the terms read by :mod:`.syntax`: name lookup through namespaces, aliases,
config structs (with base classes) and template parameters; constant expressions
(``128 / cutlass::sizeof_bits<T>::value``, ``16 / sizeof(T)``, ``cute::conditional_t``...); and the
CUTLASS GEMM templates, which become :class:`Construct` records (builder, collective, kernel,
adapter, 2.x device GEMM) with every template argument, its position and its provenance.

Class and function templates of the file are instantiated the way the compiler would for each
template-id found outside templates (``gemm_wrapper<ConfigA>``, ``template struct X<C>;``,
``run<Config>(...)``), recursively. Whatever cannot be evaluated is a :class:`VUnknown` with a reason.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from fusionlint.model.cutlass_facts import UNBOUND_TEMPLATE_PARAMETER
from fusionlint.frontend.cutlass.source import model
from fusionlint.frontend.cutlass.source.lexer import lex_string
from fusionlint.frontend.cutlass.source.syntax import (
    AliasDecl, ClassDecl, ConstDecl, Decl, FuncDecl, NamespaceAlias, NamespaceDecl, Program, Scope, VarDecl,
)
from fusionlint.frontend.cutlass.source.terms import (
    TBinary, TBraced, TBuiltin, TCall, TCast, Term, TName, TNum, TOpaque, TPtr, TSizeof, TTernary, TUnary, join_tokens,
    parse_term,
)

# ----------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class VInt:
    value: int | float
    is_bool: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class VIntC:  # cute::C<N> / cute::Int<N> / _N
    value: int


@dataclass(frozen=True)
class VTuple:  # cute::Shape / Stride / tuple, 2.x GemmShape
    items: tuple


@dataclass(frozen=True)
class VType:
    name: str
    args: tuple = ()
    ptr: str = ""


@dataclass(frozen=True)
class VUnknown:
    reason: str
    # what the unknown value is, where a rule can still use that: "epilogue_shared_storage" for
    # sizeof(CollectiveEpilogue::SharedStorage), whose lower bound the rules compute from the epilogue
    tag: str = ""
    of: tuple = ()  # with a tag: the key of the construct it is a member of (that epilogue builder)


@dataclass(frozen=True)
class VClass:  # a class of the file, or an instance of a class template of the file
    qualname: str
    decl_id: int
    env_key: tuple = ()
    args: tuple = ()  # template arguments (values) of an instance


@dataclass(frozen=True)
class VNamespace:
    key: str


@dataclass(frozen=True)
class VConstruct:
    key: tuple  # (kind, (line, col), ctx)


Value = VInt | VIntC | VTuple | VType | VUnknown | VClass | VNamespace | VConstruct


@dataclass(frozen=True)
class Res:
    value: object
    origin: tuple[int, int] | None = None
    via: tuple[str, ...] = ()


def unknown(reason: str, origin=None) -> Res:
    return Res(VUnknown(reason), origin)


def as_int(v) -> int | None:
    if isinstance(v, VInt) and isinstance(v.value, int):
        return v.value
    if isinstance(v, VIntC):
        return v.value
    return None


def render(v) -> str:
    """Canonical text of a value (contexts, template arguments of opaque types)."""
    if isinstance(v, VInt):
        return str(int(v.value)) if isinstance(v.value, bool) else str(v.value)
    if isinstance(v, VIntC):
        return f"cute::C<{v.value}>"
    if isinstance(v, VTuple):
        return "cute::tuple<" + ", ".join(render(x) for x in v.items) + ">"
    if isinstance(v, VType):
        s = v.name + ("<" + ", ".join(render(a) for a in v.args) + ">" if v.args else "")
        return s + (" " + v.ptr if v.ptr else "")
    if isinstance(v, VClass):
        return v.qualname + ("<" + ", ".join(render(a) for a in v.args) + ">" if v.args else "")
    if isinstance(v, VNamespace):
        return v.key
    if isinstance(v, VConstruct):
        return f"<{v.key[0]} at {v.key[1][0]}:{v.key[1][1]}>"
    if isinstance(v, VUnknown):
        return "?"
    return str(v)


def element_size_bits(v) -> int | None:
    if isinstance(v, VType) and not v.ptr:
        name = render(v) if v.args else v.name
        return model.element_bits(name)
    return None


# ----------------------------------------------------------------------------------------------
# Environment: bindings of template parameters


class Env:
    def __init__(self, binds: dict | None = None, frames: tuple = ()):
        self.binds: dict[tuple[int, str], Res] = binds or {}
        self.frames = frames  # ((scope, (Res|None per param)), ...)
        self.key = tuple(sorted(((k[0], k[1]), v.value) for k, v in self.binds.items()))

    def extend(self, scope: Scope, values: list[Res | None]) -> "Env":
        b = dict(self.binds)
        for p, r in zip(scope.tparams or [], values):
            if r is not None:
                b[(scope.id, p.name)] = r
        return Env(b, self.frames + ((scope, tuple(values)),))

    def ctx(self) -> str:
        parts = []
        for scope, values in self.frames:
            args = []
            for p, r in zip(scope.tparams or [], values):
                args.append(render(r.value) if r is not None else p.name)
            name = scope.qualname() if scope.kind == "class" else (scope.owner.name if scope.owner else scope.name)
            if scope.kind == "function":
                outer = scope.parent.qualname() if scope.parent is not None else ""
                name = f"{outer}::{name}" if outer else name
            parts.append(f"{name}<{', '.join(args)}>")
        return " / ".join(parts)


# ----------------------------------------------------------------------------------------------
# Constructs


@dataclass
class ArgRes:
    res: Res
    term: Term | None  # None when defaulted
    written: str
    index: int


@dataclass
class Construct:
    kind: str  # mainloop_builder | epilogue_builder | collective_mma | kernel | adapter | gemm2x
    template: str  # qualified template name
    site: tuple[int, int]
    ctx: str
    args: list[ArgRes]
    holder: Decl | None = None
    scope: Scope | None = None
    refs: list[tuple] = field(default_factory=list)  # keys of constructs used as arguments

    @property
    def key(self) -> tuple:
        return (self.kind, self.site, self.ctx)


@dataclass
class Instance:
    scope: Scope
    env: Env
    site: tuple[int, int]
    explicit: bool = False


_SHAPES = {"cute::Shape", "cute::Stride", "cute::tuple", "cute::Coord", "cute::Step", "cute::Tile",
           "cutlass::gemm::GemmShape", "cute::Layout_K", "cutlass::MatrixShape"}
_CONDITIONAL_T = {"cute::conditional_t", "std::conditional_t", "cuda::std::conditional_t",
                  "cutlass::platform::conditional_t"}
_CONDITIONAL = {"std::conditional", "cute::conditional", "cutlass::platform::conditional", "cuda::std::conditional"}
_IS_SAME_V = {"cute::is_same_v", "std::is_same_v", "cuda::std::is_same_v", "cutlass::platform::is_same_v"}
_IS_SAME = {"std::is_same", "cute::is_same", "cutlass::platform::is_same", "cuda::std::is_same"}
_ONE_NUMBER = {"cutlass::gemm::collective::StageCount", "cutlass::gemm::collective::StageCountAutoCarveout"}
_SIZEOF_BITS_V = {"cute::sizeof_bits_v", "cutlass::sizeof_bits_v"}
_TAG_TO_STRIDE = {"TagToStrideA_t": "A", "TagToStrideB_t": "B", "TagToStrideC_t": "C"}
_INTEGRAL = {"int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "bool",
             "char"}
MAX_INSTANCES = 256
MAX_DEPTH = 60


class Evaluator:
    def __init__(self, prog: Program):
        self.prog = prog
        self.constructs: dict[tuple, Construct] = {}
        self.instances: dict[tuple, Instance] = {}
        self.instance_order: list[tuple] = []
        self.decls: dict[int, Decl] = {}
        self.class_envs: dict[tuple, Env] = {}
        self._memo: dict[tuple, Res] = {}
        self._busy: set[tuple] = set()
        self._holder: list[tuple[Decl, Term]] = []
        self._base_guard: set[int] = set()
        self._depth = 0
        self._ext_using_cache: dict[int, list[str]] = {}
        self.ctx_sites: dict[str, tuple[int, int]] = {}
        self.template_scopes_with_instances: set[int] = set()
        self.plain_types = False  # read GEMM templates as plain types (libclang spellings)
        self._gemm_lines: list[int] | None = None
        self._partial_ok: set[int] | None = None  # while reading callers: templates with full instances

    # -- driver ----------------------------------------------------------------------------
    def run(self) -> None:
        root = Env()
        self._walk(self.prog.file, root)
        done: set[tuple] = set()
        self._instantiate_pending(done)
        # templates of the file that are not instantiated in it but instantiate GEMM templates with
        # arguments of their own (vLLM's dispatch: cutlass_gemm_sm90_fp8_dispatch<cutlass::float_e4m3_t,
        # cutlass::bfloat16_t, Epilogue> from a function template the bindings' TU instantiates): read
        # generically, and what they instantiate is instantiated with the arguments written there, the
        # enclosing template's parameters staying unknown (a partial instance)
        self._partial_ok = set(self.template_scopes_with_instances)
        try:
            for scope in self._callers_of_gemm_templates():
                if scope.id in self.template_scopes_with_instances:
                    continue
                self._walk(scope, root.extend(scope, [None] * len(scope.tparams or [])), instance=True)
                self._instantiate_pending(done)  # before the templates it instantiates get their turn
        finally:
            self._partial_ok = None
        self._deduced_calls(root)
        self._instantiate_pending(done)
        # templates that contain GEMMs but are not instantiated in this file: read them generically
        for scope in self._template_scopes(self.prog.file):
            if scope.id in self.template_scopes_with_instances:
                continue
            if not self._contains_cutlass(scope):
                continue
            env = root.extend(scope, [None] * len(scope.tparams or []))
            self._walk(scope, env, instance=True)

    def _instantiate_pending(self, done: set[tuple]) -> None:
        while True:
            todo = [k for k in self.instance_order if k not in done]
            if not todo or len(done) >= MAX_INSTANCES:
                break
            for k in todo:
                done.add(k)
                inst = self.instances[k]
                self._walk(inst.scope, inst.env, instance=True)

    def _callers_of_gemm_templates(self) -> list[Scope]:
        """The uninstantiated templates that do not write a GEMM template themselves but name a
        template of the file that does (or that names one, and so on), outermost first."""
        scopes = list(self._template_scopes(self.prog.file))
        if len(scopes) < 2:
            return []
        names_in: dict[int, set[str]] = {}
        lines = [(s.first_line, s.last_line, s) for s in scopes]
        for t in self.prog.tokens:
            if t.kind != "id":
                continue
            for lo, hi, s in lines:
                if lo <= t.line <= hi:
                    names_in.setdefault(s.id, set()).add(t.text)
        reach = {s.id for s in scopes if self._contains_cutlass(s)}
        reach_names = {self._template_name(s) for s in scopes if s.id in reach}
        changed = True
        while changed:
            changed = False
            for s in scopes:
                if s.id not in reach and names_in.get(s.id, set()) & reach_names:
                    reach.add(s.id)
                    reach_names.add(self._template_name(s))
                    changed = True
        callers = [s for s in scopes if s.id in reach and not self._contains_cutlass(s)]
        # outermost first: a template that no other caller names (each names itself where declared)
        depth: dict[int, int] = {}

        def named_by(s: Scope) -> list[Scope]:
            return [o for o in callers if o is not s and self._template_name(s) in names_in.get(o.id, set())]

        def level(s: Scope, seen: frozenset = frozenset()) -> int:
            if s.id not in depth:
                outer = [o for o in named_by(s) if o.id not in seen]
                depth[s.id] = 1 + max((level(o, seen | {s.id}) for o in outer), default=-1)
            return depth[s.id]

        return sorted(callers, key=lambda s: (level(s), s.first_line))

    def _deduced_calls(self, root: Env) -> None:
        """A function template with GEMMs that the main file calls without template arguments
        (CUTLASS example 51's ``example::gett_kernel(problem_shape, ptr_A, stride_A, ...)``, declared
        in its header) is instantiated at that call with every template parameter unknown (deduced
        from the call's arguments, which the reader does not type): what the template fixes itself
        (tile, cluster, schedule) is then known in the calling file."""
        headers = self.prog.headers
        if headers is None or len(headers.files) < 2:
            return
        for scope in self._template_scopes(self.prog.file):
            # a template of a project header (the main file's own are read generically, as before)
            if scope.kind != "function" or headers.in_main(scope.first_line) \
                    or scope.id in self.template_scopes_with_instances or not self._contains_cutlass(scope):
                continue
            name = self._template_name(scope)
            toks = self.prog.tokens
            site = next(((t.line, t.col) for i, t in enumerate(toks[:-1])
                         if t.kind == "id" and t.text == name and toks[i + 1].text == "("
                         and headers.in_main(t.line) and (i == 0 or toks[i - 1].text not in (".", "->"))),
                        None)
            if site is None:
                continue
            values = [unknown(f"template parameter {p.name} of {name} is deduced from the arguments of the call "
                              f"at line {site[0]}", site) for p in scope.tparams or []]
            self._register_instance(scope, root.extend(scope, values), site, False)

    def uninstantiated_gemm_templates(self) -> list[str]:
        """The names of the file's templates that write a CUTLASS GEMM and that the file instantiates nowhere."""
        return [self._template_name(s) for s in self._template_scopes(self.prog.file)
                if s.id not in self.template_scopes_with_instances and self._contains_cutlass(s)]

    @staticmethod
    def _template_name(s: Scope) -> str:
        return s.owner.name if s.owner is not None else s.name

    def _template_scopes(self, scope: Scope):
        for c in scope.children:
            if c.tparams is not None and not (c.owner is not None and isinstance(c.owner, ClassDecl)
                                              and c.owner.specialization):
                if not scope.is_template_context():
                    yield c
            else:
                yield from self._template_scopes(c)

    def _contains_cutlass(self, scope: Scope) -> bool:
        if self._gemm_lines is None:
            names = {"CollectiveBuilder", "GemmUniversal", "GemmUniversalAdapter", "CollectiveMma", "Gemm",
                     "GemmBatched", "GemmSplitKParallel"}
            self._gemm_lines = sorted({x.line for x in self.prog.tokens if x.kind == "id" and x.text in names})
        i = bisect.bisect_left(self._gemm_lines, scope.first_line)
        return i < len(self._gemm_lines) and self._gemm_lines[i] <= scope.last_line

    def _walk(self, scope: Scope, env: Env, instance: bool = False) -> None:
        if self._depth > MAX_DEPTH:
            return
        self._depth += 1
        try:
            for d in scope.order:
                self.decls[id(d)] = d
                if isinstance(d, AliasDecl) and d.tparams is None:
                    self.eval_decl(d, env)
                elif isinstance(d, ConstDecl):
                    self.eval_decl(d, env)
                elif isinstance(d, VarDecl) and d.vtype is not None:
                    self._holder.append((d, d.vtype))
                    try:
                        self.eval_term(d.vtype, scope, env)
                    finally:
                        self._holder.pop()
            for use in scope.uses:
                self._holder.append((None, use.term))  # type: ignore[arg-type]
                try:
                    self.eval_term(use.term, scope, env, explicit=use.explicit)
                finally:
                    self._holder.pop()
            for child in scope.children:
                if child.tparams is not None:
                    continue
                if child.owner is not None and isinstance(child.owner, ClassDecl) and child.owner.specialization:
                    continue
                self._walk(child, env, instance)
        finally:
            self._depth -= 1

    # -- declarations ----------------------------------------------------------------------
    def display(self, d: Decl) -> str:
        s = d.scope
        if s.kind == "class" and s.name:
            return f"{s.name}::{d.name}"
        return d.name

    def eval_decl(self, d: Decl, env: Env) -> Res:
        key = (id(d), env.key)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return unknown(f"{d.name} is defined in terms of itself")
        self._busy.add(key)
        self.decls[id(d)] = d
        try:
            r = self._eval_decl(d, env)
        finally:
            self._busy.discard(key)
        self._memo[key] = r
        return r

    def _eval_decl(self, d: Decl, env: Env) -> Res:
        if isinstance(d, AliasDecl):
            if d.term is None:
                return unknown(f"{d.name} has no definition")
            self._holder.append((d, d.term))
            try:
                r = self.eval_term(d.term, d.scope, env)
            finally:
                self._holder.pop()
            return Res(r.value, r.origin, (self.display(d),) + r.via)
        if isinstance(d, ConstDecl):
            if d.text.startswith("enum:"):
                return self._enum_value(d, env)
            if d.term is None:
                return unknown(f"{d.name} has no initializer")
            r = self.eval_term(d.term, d.scope, env)
            v = r.value
            if d.vtype is not None and isinstance(d.vtype, TBuiltin):
                canon = model.BUILTIN_CANON.get(d.vtype.name, d.vtype.name)
                if canon in _INTEGRAL and (n := as_int(v)) is not None:
                    v = VInt(int(n) if canon != "bool" else int(bool(n)), canon == "bool")
            elif isinstance(v, VIntC):
                v = VInt(v.value)
            return Res(v, r.origin, (self.display(d),) + r.via)
        if isinstance(d, ClassDecl):
            if d.body is not None and d.body.tparams is not None:
                return Res(VType(d.body.qualname()))
            # (a class nested in a template's instance: its members and bases are read in that env)
            self.decls.setdefault(id(d), d)
            self.class_envs.setdefault((id(d), env.key), env)
            return Res(VClass(d.body.qualname() if d.body else d.name, id(d), env.key))
        if isinstance(d, NamespaceDecl):
            return Res(VNamespace(d.body.qualname() if d.body else d.name))
        if isinstance(d, NamespaceAlias):
            if isinstance(d.term, TName):
                return self.eval_term(d.term, d.scope, env)
            return unknown(f"namespace alias {d.name}")
        if isinstance(d, VarDecl):
            return unknown(f"{d.name} is a variable, not a constant")
        if isinstance(d, FuncDecl):
            return unknown(f"{d.name} is a function")
        return unknown(f"{d.name}: unsupported declaration")

    def _enum_value(self, d: ConstDecl, env: Env) -> Res:
        prev = getattr(d, "enum_prev", None)
        off = getattr(d, "enum_offset", 0)
        if d.term is not None:
            r = self.eval_term(d.term, d.scope, env)
            return Res(VInt(as_int(r.value)) if as_int(r.value) is not None else r.value, r.origin,
                       (self.display(d),))
        if prev is None:
            return Res(VInt(off - 1 if off else 0), (d.tok.line, d.tok.col), (self.display(d),))
        r = self.eval_term(prev, d.scope, env)
        n = as_int(r.value)
        return Res(VInt(n + off) if n is not None else r.value, (d.tok.line, d.tok.col), (self.display(d),))

    # -- terms -----------------------------------------------------------------------------
    def eval_term(self, term: Term, scope: Scope, env: Env, explicit: bool = False) -> Res:
        origin = (term.line, term.col)
        if isinstance(term, TNum):
            return Res(VInt(term.value, term.is_bool), origin)
        if isinstance(term, TBuiltin):
            return Res(VType(model.BUILTIN_CANON.get(term.name, term.name)), origin)
        if isinstance(term, TName):
            r = self.eval_name(term, scope, env, explicit)
            return r if r.origin is not None else Res(r.value, origin, r.via)
        if isinstance(term, TPtr):
            r = self.eval_term(term.base, scope, env)
            if isinstance(r.value, VType):
                return Res(VType(r.value.name, r.value.args, (r.value.ptr + " " + term.suffix).strip()), r.origin, r.via)
            if isinstance(r.value, VUnknown):
                return r
            return unknown(f"pointer to {render(r.value)}", origin)
        if isinstance(term, TUnary):
            r = self.eval_term(term.operand, scope, env)
            n = as_int(r.value) if not (isinstance(r.value, VInt) and isinstance(r.value.value, float)) else r.value.value
            if n is None:
                return self._unknown_from(r, origin)
            v = {"-": -n, "+": n, "!": int(not n), "~": ~int(n)}[term.op]
            return Res(VInt(v, term.op == "!"), origin)
        if isinstance(term, TBinary):
            return self._binary(term, scope, env, origin)
        if isinstance(term, TTernary):
            c = self.eval_term(term.cond, scope, env)
            n = as_int(c.value)
            if n is None:
                return self._unknown_from(c, origin)
            return self.eval_term(term.a if n else term.b, scope, env)
        if isinstance(term, TSizeof):
            r = self.eval_term(term.operand, scope, env)
            if isinstance(r.value, VUnknown):
                return Res(VUnknown(f"sizeof: {r.value.reason}" if not r.value.reason.startswith("sizeof")
                                    else r.value.reason, r.value.tag, r.value.of), origin)
            bits = element_size_bits(r.value)
            if bits is None or bits == 0:
                return unknown(f"{term.op} of {render(r.value)} is only known to the compiler", origin)
            return Res(VInt(max(1, bits // 8)), origin, r.via)
        if isinstance(term, TCast):
            r = self.eval_term(term.expr, scope, env)
            t = self.eval_term(term.type, scope, env)
            if isinstance(t.value, VType) and t.value.name in _INTEGRAL:
                n = as_int(r.value)
                if n is None and isinstance(r.value, VInt):
                    n = int(r.value.value)
                if n is None:
                    return self._unknown_from(r, origin)
                return Res(VInt(int(bool(n)) if t.value.name == "bool" else int(n)), r.origin, r.via)
            return r
        if isinstance(term, TBraced):
            return self.eval_term(term.type, scope, env)
        if isinstance(term, TCall):
            return self._call(term, scope, env, origin)
        if isinstance(term, TOpaque):
            return unknown(term.reason, origin)
        return unknown("unsupported expression", origin)

    def _unknown_from(self, r: Res, origin) -> Res:
        if isinstance(r.value, VUnknown):
            return Res(r.value, origin, r.via)
        return unknown(f"{render(r.value)} is not a number", origin)

    def _binary(self, term: TBinary, scope: Scope, env: Env, origin) -> Res:
        a = self.eval_term(term.lhs, scope, env)
        op = term.op
        if op in ("&&", "||"):
            x = as_int(a.value)
            if x is not None and ((op == "&&" and not x) or (op == "||" and x)):
                return Res(VInt(int(bool(x)), True), origin)
        b = self.eval_term(term.rhs, scope, env)
        x, y = _num(a.value), _num(b.value)
        if x is None:
            return self._unknown_from(a, origin)
        if y is None:
            return self._unknown_from(b, origin)
        try:
            if isinstance(x, float) or isinstance(y, float):
                v = _float_op(op, x, y)
            else:
                from fusionlint.frontend.cutlass.source.lexer import _apply_int
                v = _apply_int(op, x, y)
        except ZeroDivisionError:
            return unknown(f"division by zero in {join_tokens(self._span(term))}", origin)
        except ValueError:
            return unknown(f"operator {op}", origin)
        return Res(VInt(v, op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||")), origin)

    def _span(self, term: Term) -> list:
        toks = self.prog.tokens
        try:
            i = next(k for k, t in enumerate(toks) if t is term.tok)
            j = next(k for k in range(i, len(toks)) if toks[k] is term.end)
            return toks[i:j + 1]
        except StopIteration:
            return [term.tok]

    def written(self, term: Term) -> str:
        return join_tokens(self._span(term))

    def _call(self, term: TCall, scope: Scope, env: Env, origin) -> Res:
        callee = term.callee
        if not isinstance(callee, TName):
            return unknown("call of an expression", origin)
        fname = callee.parts[-1].ident
        targs = callee.parts[-1].args or []
        args = [self.eval_term(a, scope, env) for a in term.args]
        idx = None
        if targs:
            r = self.eval_term(targs[0], scope, env)
            idx = as_int(r.value)

        def tup(v):
            return v.items if isinstance(v, VTuple) else None

        def prod(items):
            p = 1
            for it in items:
                n = it if isinstance(it, int) else (as_int(it) if not isinstance(it, tuple) else None)
                if isinstance(it, VTuple):
                    n = prod(it.items)
                if n is None:
                    return None
                p *= n
            return p

        if fname in ("size", "get", "shape") and args:
            items = tup(args[0].value)
            if items is None:
                return unknown(f"{fname}() of {render(args[0].value)}", origin)
            if idx is not None:
                if idx >= len(items):
                    return unknown(f"{fname}<{idx}> out of range", origin)
                it = items[idx]
                if fname == "size":
                    n = prod([it]) if not isinstance(it, int) else it
                    return Res(VInt(n), origin) if n is not None else unknown("size of a run-time extent", origin)
                return Res(VInt(it) if isinstance(it, int) else it, origin)
            n = prod(items)
            return Res(VInt(n), origin) if n is not None else unknown("size of a run-time extent", origin)
        nums = [_num(a.value) for a in args]
        if fname in ("min", "max", "ceil_div", "round_up") and args and all(n is not None for n in nums):
            if fname == "min":
                return Res(VInt(min(nums)), origin)
            if fname == "max":
                return Res(VInt(max(nums)), origin)
            if fname == "ceil_div" and len(nums) == 2 and nums[1]:
                return Res(VInt(-(-nums[0] // nums[1])), origin)
            if fname == "round_up" and len(nums) == 2 and nums[1]:
                return Res(VInt(-(-nums[0] // nums[1]) * nums[1]), origin)
        return unknown(f"result of {callee.dotted()}() is only known to the compiler", origin)

    # -- names -----------------------------------------------------------------------------
    def ext_usings(self, scope: Scope, env: Env) -> list[str]:
        if scope.id in self._ext_using_cache:
            return self._ext_using_cache[scope.id]
        out: list[str] = []
        s: Scope | None = scope
        while s is not None:
            for u in s.using_dirs:
                out.append("::".join(p.ident for p in u.parts))
            s = s.parent
        self._ext_using_cache[scope.id] = out
        return out

    def lookup(self, name: str, scope: Scope, env: Env, pos: tuple[int, int] | None = None):
        s: Scope | None = scope
        while s is not None:
            if s.tparams is not None:
                for p in s.tparams:
                    if p.name == name:
                        return ("param", s, p, env)
            ds = s.decls.get(name)
            if ds:
                if pos is not None and s.kind != "class":
                    # outside classes only the declarations before the use are visible
                    before = [d for d in ds if (d.tok.line, d.tok.col) < pos]
                    ds = before or ds
                return ("decl", _pick(ds), env)
            if s.kind == "class" and s.bases and s.id not in self._base_guard:
                found = self._base_lookup(s, name, env)
                if found is not None:
                    return found
            for u in s.using_dirs:
                ns = self.prog.namespaces.get("::".join(p.ident for p in u.parts))
                if ns is not None and name in ns.decls:
                    return ("decl", _pick(ns.decls[name]), env)
            s = s.parent
        return ("ext", [name], scope)

    def _base_lookup(self, s: Scope, name: str, env: Env):
        self._base_guard.add(s.id)
        try:
            for b in s.bases:
                r = self.eval_term(b, s, env)
                if isinstance(r.value, VClass):
                    found = self._class_member(r.value, name)
                    if found is not None:
                        return found
        finally:
            self._base_guard.discard(s.id)
        return None

    def _kernel_base(self, cls: VClass, depth: int = 0) -> VConstruct | None:
        """The CUTLASS kernel a class of the user's derives from, directly or through other classes
        (``struct GemmKernel : only_sm90<GemmUniversal<...>> {}``, ``only_sm90<K> : K``); None when
        it derives from none."""
        d = self.decls.get(cls.decl_id)
        if depth > 4 or not isinstance(d, ClassDecl) or d.body is None or not d.body.bases:
            return None
        env = self.class_envs.get((cls.decl_id, cls.env_key), Env())
        for b in d.body.bases:
            v = self.eval_term(b, d.body, env).value
            if isinstance(v, VConstruct) and v.key[0] in ("kernel", "gemm2x"):
                return v
            if isinstance(v, VClass):
                found = self._kernel_base(v, depth + 1)
                if found is not None:
                    return found
        return None

    def _class_member(self, cls: VClass, name: str):
        d = self.decls.get(cls.decl_id)
        if not isinstance(d, ClassDecl) or d.body is None:
            return None
        env = self.class_envs.get((cls.decl_id, cls.env_key), Env())
        ds = d.body.decls.get(name)
        if ds:
            return ("decl", _pick(ds), env)
        if d.body.bases and d.body.id not in self._base_guard:
            return self._base_lookup(d.body, name, env)
        return None

    def eval_name(self, term: TName, scope: Scope, env: Env, explicit: bool = False) -> Res:
        ent = None
        for i, part in enumerate(term.parts):
            if i == 0:
                if term.leading:
                    ds = self.prog.file.decls.get(part.ident)
                    ent = ("decl", _pick(ds), env) if ds else ("ext", [part.ident], scope)
                else:
                    ent = self.lookup(part.ident, scope, env, (part.tok.line, part.tok.col))
            else:
                ent = self._member(ent, part.ident, scope, env, (part.tok.line, part.tok.col))
            if part.args is not None:
                ent = ("value", self._apply(ent, part, term, scope, env, explicit))
            if ent[0] == "value" and isinstance(ent[1].value, VUnknown):
                return ent[1]
        return self._to_res(ent, (term.line, term.col))

    def _left_out_uses(self, name: str) -> str:
        """Where the only uses of the template ``name`` are in code the preprocessor leaves out
        (FBGEMM's ``#ifdef SMOOTHQUANT_SM90A`` around the calls of ``i8i8bf16sm90a_impl<...>``):
        ``: it is instantiated only in code this build leaves out, under ...``; else ""."""
        regions = [r for r in self.prog.inactive_regions if name in r.names]
        toks = self.prog.tokens
        if not regions or any(t.text == name and toks[i + 1].text == "<" for i, t in enumerate(toks[:-1])):
            return ""  # (an active ``name<...>``: instantiated here)
        where = ", ".join(dict.fromkeys(f"`{r.directive}` (line {r.line})" for r in regions))
        return f": it is instantiated only in code this build leaves out, under {where}"

    def _to_res(self, ent, origin) -> Res:
        kind = ent[0]
        if kind == "value":
            return ent[1]
        if kind == "param":
            _, s, p, env = ent
            r = env.binds.get((s.id, p.name))
            if r is None:
                owner = s.owner.name if s.owner else s.name
                return unknown(f"template parameter {p.name} of {owner} {UNBOUND_TEMPLATE_PARAMETER}"
                               f"{self._left_out_uses(owner)}", origin)
            return Res(r.value, r.origin, (p.name,) + r.via)
        if kind == "decl":
            _, d, env = ent
            if d is None:
                return unknown("no declaration", origin)
            return self.eval_decl(d, env)
        if kind == "ext":
            path, scope = ent[1], ent[2]
            return Res(self._ext_value(path, scope), origin)
        return unknown("name not understood", origin)

    def _ext_value(self, path: list[str], scope: Scope):
        q = model.qualify(path, self.ext_usings(scope, Env()))
        n = model.is_cute_int(q)
        if n is not None:
            return VIntC(n)
        if q == "cutlass::gemm::collective::StageCountAuto":
            return VType("cutlass::gemm::collective::StageCountAutoCarveout", (VInt(0),))
        if q in ("true_type", "cute::true_type", "std::true_type"):
            return VIntC(1)
        if q in ("false_type", "cute::false_type", "std::false_type"):
            return VIntC(0)
        if "::" not in q and q not in model.ELEMENT_BITS and q not in model.STD_INTS:
            return VUnknown(f"{q} is not declared in this file")
        return VType(q)

    def _member(self, ent, name: str, scope: Scope, env: Env, origin):
        kind = ent[0]
        if kind == "ext":
            return ("ext", ent[1] + [name], ent[2])
        if kind == "decl":
            d = ent[1]
            if isinstance(d, NamespaceDecl) and d.body is not None:
                ds = d.body.decls.get(name)
                if ds:
                    return ("decl", _pick(ds), ent[2])
                return ("ext", d.body.qualname().split("::") + [name], scope)
            if isinstance(d, ClassDecl) and d.body is not None and d.body.tparams is None:
                cls = VClass(d.body.qualname(), id(d), ent[2].key)
                self.class_envs.setdefault((id(d), ent[2].key), ent[2])
                found = self._class_member(cls, name)
                return found if found is not None else ("value", unknown(f"{d.name}::{name} is not declared",
                                                                          origin))
            r = self._to_res(ent, origin)
            return self._member(("value", r), name, scope, env, origin)
        if kind == "param":
            r = self._to_res(ent, origin)
            return self._member(("value", r), name, scope, env, origin)
        # a value
        r: Res = ent[1]
        v = r.value
        if isinstance(v, VUnknown):
            return ent
        if isinstance(v, VClass):
            found = self._class_member(v, name)
            if found is not None:
                return found
            return ("value", unknown(f"{render(v)}::{name} is not declared in this file", origin))
        if isinstance(v, VNamespace):
            ns = self.prog.namespaces.get(v.key)
            if ns is not None and name in ns.decls:
                return ("decl", _pick(ns.decls[name]), env)
            return ("ext", v.key.split("::") + [name], scope)
        if isinstance(v, VConstruct):
            c = self.constructs.get(v.key)
            if c is not None and c.kind in ("mainloop_builder", "epilogue_builder") and name == "CollectiveOp":
                return ent
            what = {"mainloop_builder": "mainloop", "epilogue_builder": "epilogue", "collective_mma": "collective",
                    "kernel": "kernel", "adapter": "GEMM", "gemm2x": "GEMM"}.get(v.key[0], "CUTLASS type")
            alias = r.via[0] if r.via else what
            tag = "epilogue_shared_storage" if v.key[0] == "epilogue_builder" and name == "SharedStorage" else ""
            return ("value", Res(VUnknown(f"{alias}::{name} is a member of the CUTLASS {what}, only known with the "
                                          "CUTLASS headers", tag, v.key if tag else ()), origin))
        if isinstance(v, VType):
            q = v.name
            if name == "value" and q == "cutlass::sizeof_bits" and v.args:
                bits = element_size_bits(v.args[0])
                if bits is None:
                    return ("value", unknown(f"sizeof_bits of {render(v.args[0])} is not known to fusionlint",
                                             origin))
                return ("value", Res(VInt(bits), r.origin, r.via))
            if name == "value" and q in _IS_SAME and len(v.args) == 2:
                return ("value", Res(VInt(int(v.args[0] == v.args[1]), True), r.origin, r.via))
            if name == "type" and q in _CONDITIONAL and len(v.args) == 3:
                c = as_int(v.args[0])
                return ("value", Res(v.args[1] if c else v.args[2], r.origin, r.via))
            if name == "value" and q in ("std::integral_constant", "cute::integral_constant") and len(v.args) == 2:
                return ("value", Res(VInt(as_int(v.args[1])), r.origin, r.via))
            if name == "value" and q == "cutlass::gemm::collective::StageCount" and v.args:
                return ("value", Res(v.args[0], r.origin, r.via))
            if name == "type" and q.endswith("LayoutTranspose") and v.args:
                a = v.args[0]
                if isinstance(a, VType) and a.name == "cutlass::layout::RowMajor":
                    return ("value", Res(VType("cutlass::layout::ColumnMajor"), r.origin, r.via))
                if isinstance(a, VType) and a.name == "cutlass::layout::ColumnMajor":
                    return ("value", Res(VType("cutlass::layout::RowMajor"), r.origin, r.via))
            if not v.args:  # e.g. cutlass::FloatRoundStyle::round_to_nearest
                return ("ext", q.split("::") + [name], scope)
            return ("value", unknown(f"{render(v)}::{name} is only known with the CUTLASS headers", origin))
        return ("value", unknown(f"member {name} of {render(v)}", origin))

    # -- template application ---------------------------------------------------------------
    def _apply(self, ent, part, term: TName, scope: Scope, env: Env, explicit: bool) -> Res:
        origin = (term.line, term.col)
        arg_terms = part.args or []
        kind = ent[0]
        if kind == "decl":
            d = ent[1]
            if isinstance(d, ClassDecl) and d.body is not None and d.body.tparams is not None:
                return self._instantiate_class(d, arg_terms, scope, env, ent[2], origin, explicit)
            if isinstance(d, AliasDecl) and d.tparams is not None:
                return self._instantiate_alias(d, arg_terms, scope, env, ent[2], origin)
            if isinstance(d, FuncDecl) and d.body is not None and d.body.tparams is not None:
                self._instantiate_function(d, arg_terms, scope, env, ent[2], origin, explicit)
                return unknown(f"{d.name}<...> is a function", origin)
            r = self._to_res(ent, origin)
            if isinstance(r.value, VType) and not r.value.args:
                return self._apply_external(r.value.name, arg_terms, term, scope, env, origin)
            return unknown(f"{d.name} is not a template", origin)
        if kind == "ext":
            q = model.qualify(ent[1], self.ext_usings(ent[2], env))
            return self._apply_external(q, arg_terms, term, scope, env, origin)
        if kind == "param":
            r = self._to_res(ent, origin)
            if isinstance(r.value, VType) and not r.value.args:
                return self._apply_external(r.value.name, arg_terms, term, scope, env, origin)
            return unknown(f"template template parameter {ent[2].name}", origin)
        r = ent[1]
        if isinstance(r.value, VType) and not r.value.args:
            return self._apply_external(r.value.name, arg_terms, term, scope, env, origin)
        return unknown(f"{render(r.value)} is not a template", origin)

    def _bind(self, tscope: Scope, arg_terms: list[Term], scope: Scope, env: Env, decl_env: Env) -> Env:
        params = tscope.tparams or []
        args = [self.eval_term(a, scope, env) for a in arg_terms]
        values: list[Res | None] = []
        for i, p in enumerate(params):
            if p.pack:
                rest = args[i:]
                values.append(Res(VTuple(tuple(r.value for r in rest))))
                break
            if i < len(args):
                values.append(args[i])
            elif p.default is not None:
                partial = decl_env.extend(tscope, values + [None] * (len(params) - len(values)))
                r = self.eval_term(p.default, tscope, partial)
                values.append(Res(r.value, r.origin, r.via))
            else:
                values.append(unknown(f"no argument for template parameter {p.name}"))
        values += [None] * (len(params) - len(values))
        norm = []
        for p, r in zip(params, values):
            if r is not None and p.kind == "value" and isinstance(r.value, VIntC):
                r = Res(VInt(r.value.value), r.origin, r.via)
            norm.append(r)
        return decl_env.extend(tscope, norm)

    def _instantiate_class(self, d: ClassDecl, arg_terms, scope, env, decl_env, origin, explicit) -> Res:
        tscope = d.body
        new_env = self._bind(tscope, arg_terms, scope, env, decl_env)
        args = tuple(new_env.binds[(tscope.id, p.name)].value if (tscope.id, p.name) in new_env.binds else VUnknown("")
                     for p in tscope.tparams or [])
        cls = VClass(tscope.qualname(), id(d), new_env.key, args)
        self.decls[id(d)] = d
        self.class_envs.setdefault((id(d), new_env.key), new_env)
        self._register_instance(tscope, new_env, origin, explicit)
        return Res(cls, origin)

    def _instantiate_alias(self, d: AliasDecl, arg_terms, scope, env, decl_env, origin) -> Res:
        tscope = d.tpl_scope
        if tscope is None or d.term is None:
            return unknown(f"alias template {d.name}", origin)
        new_env = self._bind(tscope, arg_terms, scope, env, decl_env)
        self._holder.append((d, d.term))
        try:
            r = self.eval_term(d.term, tscope, new_env)
        finally:
            self._holder.pop()
        return Res(r.value, r.origin, (d.name,) + r.via)

    def _instantiate_function(self, d: FuncDecl, arg_terms, scope, env, decl_env, origin, explicit) -> None:
        tscope = d.body
        new_env = self._bind(tscope, arg_terms, scope, env, decl_env)
        self._register_instance(tscope, new_env, origin, explicit)

    def _register_instance(self, tscope: Scope, env: Env, origin, explicit: bool) -> None:
        own = [r for k, r in env.binds.items() if k[0] == tscope.id]
        unbound = [r for r in own if isinstance(r.value, VUnknown) and "not bound" in r.value.reason]
        if unbound:
            # instantiated with a parameter of an uninstantiated template: not an instance, except
            # while reading the callers of GEMM templates, where a template without instances of
            # its own is instantiated with what is written (some argument known)
            partial = self._partial_ok
            if partial is None or tscope.id in partial or len(unbound) == len(own):
                return
        key = (tscope.id, env.key)
        self.template_scopes_with_instances.add(tscope.id)
        if key not in self.instances:
            self.instances[key] = Instance(tscope, env, origin, explicit)
            self.instance_order.append(key)
            self.ctx_sites.setdefault(env.ctx(), origin)

    def _apply_external(self, q: str, arg_terms: list[Term], term: TName, scope: Scope, env: Env, origin) -> Res:
        args = [self.eval_term(a, scope, env) for a in arg_terms]
        vals = [r.value for r in args]
        last = q.split("::")[-1]
        if q in _SHAPES:
            items = []
            for v in vals:
                if isinstance(v, VIntC):
                    items.append(v.value)
                elif isinstance(v, VInt) and isinstance(v.value, int) and q == "cutlass::gemm::GemmShape":
                    items.append(v.value)
                else:
                    items.append(v)
            return Res(VTuple(tuple(items)), origin)
        if q in ("cute::Int", "cute::C", "cute::constant") and vals:
            n = as_int(vals[0])
            return Res(VIntC(n), args[0].origin, args[0].via) if n is not None else Res(vals[0] if isinstance(vals[0], VUnknown) else
                                                                  VUnknown("Int<> of a non-constant"), origin)
        if q in ("std::integral_constant", "cute::integral_constant") and len(vals) == 2:
            n = as_int(vals[1])
            return Res(VIntC(n), origin) if n is not None else Res(VUnknown("integral_constant"), origin)
        if q in _CONDITIONAL_T and len(args) == 3:
            c = as_int(vals[0])
            if c is None:
                return self._unknown_from(args[0], origin)
            return args[1] if c else args[2]
        if q in _IS_SAME_V and len(vals) == 2:
            if any(isinstance(v, VUnknown) for v in vals):
                return self._unknown_from(args[0] if isinstance(vals[0], VUnknown) else args[1], origin)
            return Res(VInt(int(vals[0] == vals[1]), True), origin)
        if q == "cutlass::layout::is_trivial_permute" and len(vals) == 1 and isinstance(vals[0], VType):
            return Res(VInt(int(vals[0].name == "cutlass::layout::NoPermute"), True), origin)
        if q in _SIZEOF_BITS_V and vals:
            bits = element_size_bits(vals[0])
            if bits is None:
                return unknown(f"sizeof_bits of {render(vals[0])} is not known to fusionlint", origin)
            return Res(VInt(bits), origin)
        if last in _TAG_TO_STRIDE and vals and isinstance(vals[0], VType):
            tag = vals[0].name
            op = _TAG_TO_STRIDE[last]
            row = tag == "cutlass::layout::RowMajor"
            col = tag == "cutlass::layout::ColumnMajor"
            if not (row or col):
                return unknown(f"{last}<{render(vals[0])}>", origin)
            k_major = row if op in ("A", "C") else col
            items = ("int64_t", 1, "int64_t") if k_major else (1, "int64_t", "int64_t")
            return Res(VTuple(tuple(VType(x) if isinstance(x, str) else x for x in items)), origin)
        # CUTLASS GEMM templates
        kind = None
        if q.endswith("collective::CollectiveBuilder") or q == "CollectiveBuilder":
            kind = "epilogue_builder" if q.startswith("cutlass::epilogue") else "mainloop_builder"
            # an unqualified (or wrongly qualified) name: the arguments tell which builder it is
            # (the mainloop's 5th argument is AlignmentA, the epilogue's the epilogue tile type)
            if len(vals) > 4 and not isinstance(vals[4], VUnknown):
                kind = "mainloop_builder" if as_int(vals[4]) is not None else "epilogue_builder"
            q = model.EPILOGUE_BUILDER if kind == "epilogue_builder" else model.MAINLOOP_BUILDER
        elif q in (model.KERNEL, "cutlass::gemm::device::GemmUniversal", "GemmUniversal"):
            if vals and isinstance(vals[0], VTuple) or (vals and len(vals) <= 5 and q == model.KERNEL):
                kind, q = "kernel", model.KERNEL
            else:
                kind, q = "gemm2x", "cutlass::gemm::device::GemmUniversal"
        elif q == model.ADAPTER:
            kind = "adapter"
        elif q == model.COLLECTIVE_MMA:
            kind = "collective_mma"
        elif q in model.GEMM2X:
            kind = "gemm2x"
        if kind is not None and not self.plain_types:
            return self._construct(kind, q, args, arg_terms, term, scope, env, origin)
        if len(args) == 1 and q in _ONE_NUMBER and as_int(vals[0]) is not None:
            # the number is what matters: point at where it was written
            return Res(VType(q, (VInt(as_int(vals[0])),)), args[0].origin, args[0].via)
        return Res(VType(q, tuple(vals)), origin)

    def _construct(self, kind, q, args: list[Res], arg_terms, term: TName, scope, env, origin) -> Res:
        if kind == "adapter" and args and isinstance(args[0].value, VClass):
            # vLLM's ``struct GemmKernel : KernelType {}`` wrapped where it is used (a helper's
            # ``GemmUniversalAdapter<typename Config::GemmKernel>``): the kernel the class derives
            # from is the GEMM, read where its class holds it, as the instantiated mode reads it
            kernel = self._kernel_base(args[0].value)
            if kernel is not None:
                return Res(kernel, origin)
        site = origin
        key = (kind, site, env.ctx())
        if key not in self.constructs:
            holder = None
            if self._holder and self._holder[-1][1] is term:
                holder = self._holder[-1][0]
            c = Construct(kind, q, site, env.ctx(), [
                ArgRes(r, t, self.written(t), i) for i, (r, t) in enumerate(zip(args, arg_terms))],
                holder=holder, scope=scope)
            for r in args:
                c.refs.extend(nested_constructs(r.value))
            self.constructs[key] = c
        return Res(VConstruct(key), origin)


def nested_constructs(v) -> list[tuple]:
    """Keys of the constructs in a value (directly, or as template arguments of a type)."""
    if isinstance(v, VConstruct):
        return [v.key]
    out: list[tuple] = []
    if isinstance(v, VType):
        for a in v.args:
            out += nested_constructs(a)
    elif isinstance(v, VTuple):
        for a in v.items:
            out += nested_constructs(a)
    return out


def _pick(ds: list[Decl]) -> Decl:
    for d in reversed(ds):
        if isinstance(d, (AliasDecl, ConstDecl, ClassDecl, NamespaceDecl, NamespaceAlias)) and \
                not (isinstance(d, ClassDecl) and d.specialization):
            return d
    return ds[-1]


def _num(v):
    if isinstance(v, VInt):
        return v.value
    if isinstance(v, VIntC):
        return v.value
    return None


def _float_op(op, x, y):
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        return x / y
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return int({"==": x == y, "!=": x != y, "<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op])
    raise ValueError(op)


def parse_type_string(text: str, evaluator: Evaluator) -> Res:
    """Evaluate a canonical type spelling from libclang (e.g. ``cute::tuple<cute::C<128>, ...>``)
    in the file's global scope."""
    text = text.replace("(anonymous namespace)::", "").replace("struct ", "").replace("class ", "")
    toks = lex_string(text)
    if not toks:
        return unknown("empty type")
    term = parse_term(toks, 0, len(toks))
    saved = evaluator.prog.tokens
    try:
        evaluator.prog.tokens = toks
        evaluator.plain_types = True
        return evaluator.eval_term(term, evaluator.prog.file, Env())
    finally:
        evaluator.prog.tokens = saved
        evaluator.plain_types = False


def open_extent(v: VTuple) -> str | None:
    """Why the first extent of a tuple value that is not known is not (None when all are known)."""
    for i, it in enumerate(v.items):
        if isinstance(it, VUnknown):
            return f"extent {i} is not known: {it.reason}"
        if isinstance(it, VTuple) and (inner := open_extent(it)) is not None:
            return inner
    return None


def shape_list(v: VTuple) -> list:
    """A tuple value as a nested list: integers, type names, None for what is unknown."""
    out = []
    for it in v.items:
        if isinstance(it, int):
            out.append(it)
        elif isinstance(it, VIntC):
            out.append(it.value)
        elif isinstance(it, VInt):
            out.append(it.value)
        elif isinstance(it, VTuple):
            out.append(shape_list(it))
        elif isinstance(it, VType):
            out.append(render(it))
        elif isinstance(it, VUnknown):
            out.append(None)
        else:
            out.append(render(it))
    return out
