"""A small abstract interpreter over libclang cursors: the value-flow core of the front end.

It walks every function of the main file that (directly or through callees) calls the
watched API, statement by statement, keeping an environment of storage -> abstract value.
User-written callees (helpers, templates, RAII classes, getters) are inlined with their
parameters bound to the caller's arguments, so a value set through a wrapper resolves to the
caller's constant. Writes inside branches and loops whose condition is not known make the
value ``Unknown`` after the branch; nothing is guessed.

API calls are handed to a ``handler`` (see ``cublaslt/handler.py``), which models their effects.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping, Protocol, Sequence

import clang.cindex as ci

from fusionlint.frontend.clang import clangext

from fusionlint.frontend.interp import loops
from fusionlint.frontend.interp.arith import BINOPS as _BINOPS, wrap_int as _wrap_int
from fusionlint.frontend.interp.choices import (  # noqa: F401 - Choice is part of the API
    FOUND_NOWHERE, Assumption, Choice, ChoiceMixin, calls_defined_code, condition_runtime, fixed_note,
    is_fixed_unknown, merge_outcomes, merged_returns)
from fusionlint.frontend.clang.cursors import (  # noqa: F401 - the readers other modules import from here
    API_NAME,
    NON_EXPR_CHILDREN,
    names_in_text,
    with_defaults,
    expr_children,
    function_label,
    is_arrow,
    is_constant_decl,
    is_if_constexpr,
    is_stand_in_type,
    loc_of,
    parse_errors_in,
    points_to_const,
    short_spelling,
    strip,
    written,
)
from fusionlint.frontend.interp.dead_ends import is_check_macro, never_returns
from fusionlint.frontend.interp.frames import Closure, Frame
from fusionlint.frontend.interp.instantiation_roots import InstantiationsMixin, has_stand_in_arguments, instantiation_label
from fusionlint.frontend.interp.lambdas import LambdaMixin
from fusionlint.frontend.interp.loop_runs import LoopsMixin
from fusionlint.frontend.interp.nullness import ALLOCATORS, as_condition, null_compared
from fusionlint.frontend.interp.objects import ObjectsMixin, is_optional, is_smart_pointer, made_class, moved_argument
from fusionlint.frontend.clang.parse import MISSING_DIR, is_virtual
from fusionlint.frontend.interp.sizes import sizeof_value
from fusionlint.frontend.interp.runtime_values import (  # noqa: F401 - entry_input is part of the API
    CallerValuesMixin,
    callee_text as _callee_text,
    computed_from,
    entry_input,
    is_runtime_object as _is_runtime_object,
    parameter_value as _parameter_value,
)
from fusionlint.model.call_context import CallContext, IndexContext
from fusionlint.model.cublaslt_facts import CallStep
from fusionlint.model.values import Address, Handle, Key, Known, Loc, Symbol, Unknown, Value, first_runtime, runtime_of, same

K = ci.CursorKind

FUNCTION_KINDS = {K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR, K.FUNCTION_TEMPLATE,
                  K.CONVERSION_FUNCTION}
CONTAINER_KINDS = {K.NAMESPACE, K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE, K.UNEXPOSED_DECL,
                   K.LINKAGE_SPEC, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
CAST_KINDS = {K.PAREN_EXPR, K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR,
              K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR, K.CXX_CONST_CAST_EXPR}
_MAX_DEPTH = 6
_MAX_STEPS = 200_000


class ApiHandler(Protocol):
    def is_api(self, name: str) -> bool: ...

    def call(self, interp: "Interpreter", name: str, call: ci.Cursor, args: list[Value]) -> Value: ...

    def escaped(self, obj: int, function: str, origin: Loc) -> None: ...


class Interpreter(ChoiceMixin, LoopsMixin, LambdaMixin, ObjectsMixin, InstantiationsMixin, CallerValuesMixin):
    def __init__(self, tu: ci.TranslationUnit, main_path: str, handler: ApiHandler):
        self.tu = tu
        self.main_path = main_path
        self.handler = handler
        self.env: dict[Key, Value] = {}
        self.frames: list[Frame] = []
        # per undecided branch this point is inside (innermost last): the run-time data it is
        # decided on ("" where that is not known; see choices.condition_runtime)
        self.cond_runtime: list[str] = []
        # per undecided branch likewise: the runtime choices (``Choice.key``) that decide it, which
        # ``alternatives.expand`` can force (() for a loop or a condition that is not one)
        self.cond_choices: list[tuple[str, ...]] = []
        self.root_dead = False  # every path of the root function's run so far has thrown
        # this run's root function is an entry point of the project: no file of its compilation
        # database calls it, so its parameters are input from outside (a CallContext.outside)
        self.entry_root = False
        # the arms of undecided branches this point of the run is inside, outermost first (each arm
        # run has its own number): an attribute set on the path to a GEMM is not conditional there
        self.arm_path: tuple[int, ...] = ()
        self._arms = 0
        self._frame_ids = 0
        self._steps = 0
        self.root_steps: dict[str, int] = {}  # interpreter steps each root function's run took (by USR)
        self._relevant: dict[str, bool] = {}
        self._decls: dict[Key, ci.Cursor] = {}  # global/static variables met, for their initializers
        self._definitions: dict[ci.Cursor, ci.Cursor] = {}  # one cursor object per callee definition
        self.call_stack: list[str] = []
        self.sites: list[Loc] = []  # call sites of the inlined calls now running, outermost first
        self.last_returned_key: Key | None = None
        self.context_via: list[CallStep] = []  # calls from outside the unit that this run stands for
        # runtime choices: ``decisions`` (key -> alternative) forces them; the others met are in
        # ``choices``; ``taken`` lists the forced ones this root function's run went through
        self.decisions: dict[str, int] = {}
        self.forced: dict[str, Choice] = {}  # the choices ``decisions`` forces, as the unforced run met them
        self.choices: dict[str, Choice] = {}
        self.taken: list[Assumption] = []
        self._skipped_instantiations: list[tuple[Loc, ci.Cursor]] = []  # explicit ones with stand-in types
        self.roots: list[ci.Cursor] = []  # the functions the last run() started from
        # what functions of other translation units return, by USR (the project index)
        self.returns: Mapping[str, Value] = {}
        self._written_in = loops.PerCode(loops.changed_in)  # what each function changes (pointer choices)
        self._varying = loops.PerCode(loops.varying_in)  # what changes per iteration of each loop

    # ---- entry points -------------------------------------------------------------------
    def main_functions(self) -> list[ci.Cursor]:
        """Function definitions written in the main file, in source order."""
        found: list[ci.Cursor] = []

        def visit(c: ci.Cursor) -> None:
            for child in clangext.children_in_file(c, self.main_path):
                kind = child.kind
                if kind in FUNCTION_KINDS and child.is_definition():
                    found.append(child)
                elif kind in CONTAINER_KINDS:
                    visit(child)

        visit(self.tu.cursor)
        return found

    def run(self, contexts: IndexContext | None = None, only: set[str] | None = None) -> None:
        """Run every relevant function of the main file that no other one calls; a function with
        ``contexts.calls`` (by its USR: calls from other translation units) runs once per context,
        with that call's argument values and its calls as the start of every call chain. A call of
        a function of another unit returns what ``contexts.returns`` says it does."""
        if contexts is not None:
            self.returns = contexts.returns
        every = self.main_functions()
        self._skipped_instantiations = []
        self.roots = []
        instantiated = self._explicit_instantiations(every)
        functions = [f for f in every if self.relevant(f)]
        called: set[str] = set()
        guessed = {p.get_usr() for _, t in self._skipped_instantiations
                   if (p := clangext.specialized_template(t)) is not None}
        for _, target in instantiated:
            pattern = clangext.specialized_template(target)
            if pattern is not None and pattern.get_usr() not in guessed:  # else the pattern runs too
                called.add(pattern.get_usr())
        walked: set[ci.Cursor] = set()

        def mark(f: ci.Cursor) -> None:
            for c in clangext.calls_in(f):
                if (made := made_class(c)) is not None:  # std::make_unique<Gemm>(): Gemm's constructors are called
                    called.update(k.get_usr() for k in clangext.children(made) if k.kind == K.CONSTRUCTOR)
                target = self._callee_definition(c)
                if target is not None and target.get_usr() != f.get_usr():
                    called.add(target.get_usr())
                    # a template's instantiation runs its own body (libclang's cursor of the
                    # instantiated definition): its pattern is then no function to start from
                    pattern = clangext.specialized_template(target)
                    if pattern is not None and pattern.get_usr() != f.get_usr():
                        called.add(pattern.get_usr())
                        if target not in walked:  # what the instantiated body calls (an overload
                            walked.add(target)    # its pattern leaves unresolved) is called too
                            mark(target)

        for f in functions:
            mark(f)
        for _, target in instantiated:
            if target not in walked:
                walked.add(target)
                mark(target)
        for f in functions:
            if f.get_usr() in called or (only is not None and f.get_usr() not in only):
                continue
            this_key: Key | None = None
            parent = f.semantic_parent
            if f.kind != K.FUNCTION_DECL and parent is not None and parent.kind in CONTAINER_KINDS - {K.NAMESPACE}:
                this_key = ("this", parent.get_usr() or parent.spelling)
            self._run_root(f, contexts, this_key)
        for site, target in instantiated:  # each explicit instantiation, as if its line called it
            if only is None or target.get_usr() in only:
                self._run_root(target, contexts, first=(
                    CallStep("explicit instantiation", instantiation_label(target), site),))

    def _run_root(self, f: ci.Cursor, contexts: IndexContext | None,
                  this_key: Key | None = None, first: tuple[CallStep, ...] = ()) -> None:
        """Run ``f`` once per call from another unit (its ``contexts``), else once without a caller;
        ``first``: the steps every call chain starts with after that call's own."""
        self.roots.append(f)
        begin, end = (getattr(self.handler, name, None) for name in ("begin_root_run", "end_root_run"))
        calls: Mapping[str, Sequence[CallContext]] = contexts.calls if contexts is not None else {}
        for context in calls.get(f.get_usr(), ()) or (None,):
            self._steps = 0
            self.taken = []
            self.context_via = [*(context.via if context is not None else ()), *first]
            self.entry_root = context is not None and context.outside
            if begin is not None:
                begin()
            self.root_dead = False
            self.invoke(f, [], list(context.args) if context is not None else [], this_key=this_key)
            self.root_steps[f.get_usr()] = self.root_steps.get(f.get_usr(), 0) + self._steps
            if end is not None:
                end(self.root_dead)
        self.context_via = []
        self.entry_root = False

    def returned_by(self, f: ci.Cursor) -> Value:
        """What ``f`` returns when run without a caller, every parameter unknown (from the caller,
        also one with a default argument): the project index's summary of a function for the
        calls of other units."""
        self._steps = 0
        self.taken = []
        self.context_via = []
        self.root_dead = False
        params = [p for p in clangext.children(f) if p.kind == K.PARM_DECL]
        return self.invoke(f, [], [_parameter_value(f, p) for p in params])

    # ---- relevance ----------------------------------------------------------------------
    def relevant(self, fn: ci.Cursor) -> bool:
        """Does ``fn`` call the watched API, directly or through user-written callees?"""
        usr = fn.get_usr() or f"{fn.spelling}@{loc_of(fn)}"
        if usr in self._relevant:
            return self._relevant[usr]
        self._relevant[usr] = False  # recursion guard
        result = False
        for c in clangext.calls_in(fn):
            if self.handler.is_api(c.spelling or getattr(clangext.callee(c), "spelling", "")):
                result = True  # (a call in a template that waits for the instantiation: the name it finds)
                break
            target = self._callee_definition(c)
            if target is None and c.referenced is not None and self._watches(c.referenced):
                result = True
                break
            if target is not None and self.relevant(target):
                result = True
                break
        if not result:  # a call of the API that overload resolution rejected (clangext.failed_call) is no call
            result = any(self.handler.is_api(name) for name in names_in_text(fn, API_NAME))
        self._relevant[usr] = result
        return result

    def _watches(self, ref: ci.Cursor) -> bool:
        """Does the handler want the calls of ``ref``, a function this unit has no body of (the
        project index records calls into other translation units)? Handlers that do have
        ``watches_external(ref)`` and ``external_call(interp, ref, call, args)``."""
        watches = getattr(self.handler, "watches_external", None)
        return watches is not None and ref.kind in FUNCTION_KINDS and watches(ref)

    def _callee_definition(self, call: ci.Cursor) -> ci.Cursor | None:
        """The user-written definition a call runs (None: an API call, a library function, no body).
        Kept on the call's cursor, and one cursor object per definition, so that a helper inlined
        at several calls is read from libclang once."""
        known = call.__dict__.get("_fusionlint_callee", False)
        if known is False:
            known = self._find_callee_definition(call)
            if known is not None:
                known = self._definitions.setdefault(known, known)
            call.__dict__["_fusionlint_callee"] = known
        return known

    def _find_callee_definition(self, call: ci.Cursor) -> ci.Cursor | None:
        ref = clangext.callee(call)
        if ref is None or ref.kind not in FUNCTION_KINDS:
            return None
        if self.handler.is_api(ref.spelling):
            return None
        definition = ref.get_definition()
        if definition is not None and has_stand_in_arguments(definition):
            definition = None  # a type the recovery declared: run the template's pattern, not guessed traits
        if definition is None:
            tmpl = clangext.specialized_template(ref)
            if tmpl is not None:
                definition = tmpl.get_definition() or tmpl
        if definition is None or not definition.is_definition():
            return None
        loc = definition.location
        if loc.file is None or is_virtual(loc.file.name) or loc.is_in_system_header:
            return None
        return definition

    def user_site(self, loc: Loc, *supplied: Value) -> Loc:
        """Where to report an API call at ``loc``: where the user wrote the values it got.

        If the first known value in ``supplied`` (the attribute id, the type of a layout...)
        was written outside this call — e.g. at the call of a wrapper in the main file — that
        place; else the call itself when it is in the main file; else the outermost call in
        the main file that led to it."""
        origin = next((v.origin for v in supplied if isinstance(v, Known) and v.origin is not None), None)
        if origin is not None and origin.path == self.main_path and origin.line != loc.line \
                and any(site.path == self.main_path for site in self.sites):
            return origin
        if loc.path == self.main_path:
            return loc
        for site in self.sites:
            if site.path == self.main_path:
                return site
        return loc

    def call_chain(self) -> list[CallStep]:
        """The calls that led to the code now running, outermost first: the call sites of the
        inlined user functions (each ``caller`` -> ``callee`` at its site), after the calls from
        other translation units this run was given (``context_via``)."""
        chain = list(self.context_via)
        for i, site in enumerate(self.sites[:len(self.frames) - 1]):
            chain.append(CallStep(function_label(self.frames[i].function),
                                  function_label(self.frames[i + 1].function), site))
        return chain

    def runtime_symbol(self, name: str, ctype: str, origin: Loc, live: bool = False) -> Symbol:
        """A fresh runtime value (one allocation, one handle); ``live``: memory the program allocated."""
        self._frame_ids += 1
        return Symbol(name, ctype, origin, self._frame_ids, live=live)

    # ---- environment --------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def store(self, key: Key, value: Value) -> None:
        self.env[key] = value

    def load(self, key: Key, origin: Loc | None = None) -> Value:
        if key in self.env:
            return self.env[key]
        decl = self._decls.get(key)
        if decl is not None:
            return self._initial_value(decl, origin)
        return Unknown(self._unset_reason(key) or "value not set on this path", origin,
                       runtime=self._unset_runtime(key) or self._inside_runtime(key))

    def invalidate(self, key: Key, reason: str, origin: Loc) -> None:
        """Forget what is known about ``key`` and everything stored inside it."""
        self.env[key] = Unknown(reason, origin)
        for k in [k for k in self.env if self._inside(k, key)]:
            self.env[k] = Unknown(reason, origin)

    @staticmethod
    def _inside(k: Key, base: Key) -> bool:
        while k and k[0] in ("member", "elem"):
            k = k[1]
            if k == base:
                return True
        return False

    # ---- calls ----------------------------------------------------------------------------
    def _not_entered(self, fn: ci.Cursor) -> str:
        """Why a call of ``fn`` is not run (a recursive call, or calls nested deeper than
        ``_MAX_DEPTH``); "" when it is."""
        usr = fn.get_usr() or fn.spelling or f"lambda@{loc_of(fn)}"
        if usr in self.call_stack or len(self.call_stack) >= _MAX_DEPTH:
            return f"call depth limit at {function_label(fn)}()"
        return ""

    def invoke(self, fn: ci.Cursor, arg_cursors: list[ci.Cursor], args: list[Value],
               this_key: Key | None = None, outer: Frame | None = None) -> Value:
        """Run ``fn`` (a function definition, or a lambda expression made in frame ``outer``) with
        the arguments ``args`` (evaluated from ``arg_cursors``)."""
        if (not_entered := self._not_entered(fn)):
            return Unknown(not_entered, loc_of(fn))
        usr = fn.get_usr() or fn.spelling or f"lambda@{loc_of(fn)}"
        self._frame_ids += 1
        frame = Frame(self._frame_ids, fn, this_key=this_key, cond_base=self.cond_depth, outer=outer)
        if outer is not None:
            ext = fn.extent
            frame.extent = (ext.start.file.name if ext.start.file else "", ext.start.offset, ext.end.offset)
        params = [c for c in clangext.children(fn) if c.kind == K.PARM_DECL]
        for i, p in enumerate(params):
            pusr = p.get_usr() or f"{p.spelling}@{i}"
            if i < len(args) and args[i] is not None:  # None: an argument another unit could not hand over
                value, cur = args[i], arg_cursors[i] if i < len(arg_cursors) else None
                if p.type.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE) and cur is not None:
                    key = self.lvalue_key(cur)
                    if key is not None:
                        frame.aliases[pusr] = key
                if cur is not None:
                    frame.arg_types[pusr] = strip(cur).type
            else:
                default = expr_children(p) if i >= len(args) else []
                value = self.eval(default[-1]) if default else _parameter_value(
                    fn, p, entry=self.entry_root and not self.frames)
                if not default:
                    frame.from_caller[pusr] = p.spelling
            if pusr not in frame.aliases:
                value = self._null_by_decision(p, value)
            frame.bindings[pusr] = value
            if pusr not in frame.aliases:
                self.env[("param", frame.id, pusr)] = value
                if i < len(arg_cursors) and p.type.get_canonical().kind == ci.TypeKind.RECORD:
                    src = self._copy_source(arg_cursors[i])  # a struct passed by value: copy its members
                    if src is not None:
                        self._copy_members(src, ("param", frame.id, pusr))
        self.frames.append(frame)
        self.call_stack.append(usr)
        try:
            if fn.kind == K.CONSTRUCTOR:
                self._member_initializers(fn)
            body = next((c for c in clangext.children(fn) if c.kind == K.COMPOUND_STMT), None)
            if body is not None:
                self.exec(body)
        finally:
            self.call_stack.pop()
            self.frames.pop()
        self.last_returned_key = frame.returned_key
        if frame.dead and frame.returned is None and not frame.branch_returns:
            if self.frames:
                self.frame.dead = self.frame.done = True  # every path through the call throws: so does the caller's
            else:
                self.root_dead = True
        if frame.branch_returns:
            return merged_returns(fn, frame, self.choices)
        if frame.returned is not None:
            return frame.returned
        return Unknown(f"no return value from {fn.spelling}(){parse_errors_in(fn)}")

    def _member_initializers(self, ctor: ci.Cursor) -> None:
        """``Ctor(...) : field_(expr)`` — a MEMBER_REF followed by its initializer expression."""
        kids = list(clangext.children(ctor))
        for i, c in enumerate(kids):
            if c.kind == K.MEMBER_REF and i + 1 < len(kids) and self.frame.this_key is not None:
                init = kids[i + 1]
                if init.kind in (K.COMPOUND_STMT, K.MEMBER_REF, K.PARM_DECL):
                    continue
                key, inner = ("member", self.frame.this_key, c.spelling), strip(init)
                if inner.kind == K.CALL_EXPR and self._callee_definition(inner) is not None and \
                        inner.referenced is not None and inner.referenced.kind == K.CONSTRUCTOR:
                    self._default_members(key, inner.type, loc_of(c))  # ``desc_(compute, scale)``: built in place
                    self._construct(key, inner)
                    continue
                self.assign(key, self.eval(init), loc_of(c))
            elif c.kind == K.TYPE_REF and i + 1 < len(kids) and self.frame.this_key is not None \
                    and kids[i + 1].kind.is_expression():
                self._delegated(ctor, c, kids[i + 1])  # ``: Other(args)`` or ``: Base(args)``

    def _arguments(self, call: ci.Cursor, arg_cursors: list[ci.Cursor]) -> list[Value]:
        """The values of a call's arguments (one the call leaves to its default: that default)."""
        return [self.eval(a) for a in with_defaults(call, arg_cursors)]

    def call(self, cursor: ci.Cursor) -> Value:
        moved = moved_argument(cursor)
        if moved is not None:  # ``std::move(desc)``: the object itself, which goes where it is moved to
            return self.eval(moved)
        made = self._made_object(cursor)  # ``std::make_unique<Gemm>(...)``: a new object, built here
        if made is not None:
            return made
        ref = clangext.callee(cursor)
        name = cursor.spelling or (ref.spelling if ref is not None else "")
        kids = expr_children(cursor)
        origin = loc_of(cursor)
        # callee expression (first child) for method calls: obj.method / ptr->method
        callee = strip(kids[0]) if kids else None
        arg_cursors = clangext.arguments(cursor)
        if self.handler.is_api(name) or (ref is not None and self.handler.is_api(ref.spelling)):
            args = self._arguments(cursor, arg_cursors)
            return self.handler.call(self, ref.spelling if ref is not None else name, cursor, args)
        closure = self._called_closure(cursor, ref, callee)
        if closure is not None:
            args = self._arguments(cursor, arg_cursors)
            return self.call_closure(closure, arg_cursors, args, origin)
        this_key: Key | None = None
        if ref is not None and ref.kind in (K.CXX_METHOD, K.CONVERSION_FUNCTION, K.DESTRUCTOR):
            if callee is not None and callee.kind == K.MEMBER_REF_EXPR:
                base = expr_children(callee)
                this_key = self.lvalue_key(base[0]) if base else (self.frame.this_key if self.frames else None)
                if base and is_arrow(callee):  # ``p->run()``: the object p points to (``&g``, ``new``, a smart pointer's)
                    this_key = self._pointee(base[0]) or this_key
                elif this_key is None and base and strip(base[0]).kind == K.CALL_EXPR:
                    this_key = self._rvalue_object(base[0])  # ``RunPlan(...).ok()``: RunPlan runs
            elif self.frames:
                this_key = self.frame.this_key
        if ref is not None and is_optional(ref.semantic_parent):  # ``*opt``, ``opt = v``: the object is an argument
            operator = bool(arg_cursors) and not (callee is not None and callee.spelling == ref.spelling)
            key = self.lvalue_key(arg_cursors[0]) if operator else this_key
            return self._optional_call(ref.spelling, key, arg_cursors[1:] if operator else arg_cursors, origin)
        if this_key is None and len(arg_cursors) == 2 and ref is not None and ref.spelling == "operator=" \
                and is_smart_pointer(ref.semantic_parent) and (held := self.lvalue_key(arg_cursors[0])) is not None:
            return self._smart_pointer("operator=", held, [self.eval(arg_cursors[1])], origin)  # ``p = make_unique<T>()``
        if ref is not None and ref.kind == K.CXX_METHOD and ref.spelling == "operator=" and ref.is_default_method() \
                and len(arg_cursors) == 2 and (callee is None or callee.kind != K.MEMBER_REF_EXPR):
            return self._default_assignment(arg_cursors, origin)  # ``a = b`` of a class: a copy of b's members
        args = self._arguments(cursor, arg_cursors)
        target = self._callee_definition(cursor)
        if target is None and this_key is not None and ref is not None and is_smart_pointer(ref.semantic_parent):
            if ref.spelling != "swap":
                return self._smart_pointer(ref.spelling, this_key, args, origin)
            # both pointers change hands: this one is forgotten here, the argument (passed by
            # reference) below
            self.invalidate(this_key, f"swap() of the smart pointer at line {origin.line}", origin)
        if target is None and ref is not None and self._watches(ref):
            self.handler.external_call(self, ref, cursor, args)  # type: ignore[attr-defined]
        not_entered = self._not_entered(target) if target is not None else ""
        if not_entered:  # run as a call of a function without a body here: a function of its inputs
            target = None
        if target is not None and self._steps < _MAX_STEPS:
            self.sites.append(origin)
            try:
                result = self.invoke(target, arg_cursors, args, this_key=this_key)
            finally:
                self.sites.pop()
            if isinstance(result, Unknown) and _is_runtime_object(cursor.type):
                return self.runtime_symbol(f"{name}()", cursor.type.spelling, origin)  # a pointer/object
            return result
        folded = clangext.evaluate(cursor) if not cursor.type.kind == ci.TypeKind.VOID else None
        if not name:  # a call through a function pointer (or another callee without a name)
            name = _callee_text(callee)
        if target is None:  # a lambda handed to a function without a body here may be called by it
            for v in args:
                if isinstance(v, Closure) and self._steps < _MAX_STEPS:
                    self._maybe_called(v, f"lambda passed to {name}() at line {origin.line}", origin)
        # Anything passed by address or non-const reference may be written by an unseen callee.
        for a, v in zip(arg_cursors, args):
            if isinstance(v, Address) and not points_to_const(a.type):
                if v.ctype.rstrip().endswith("*"):  # e.g. cudaMalloc(&ptr, n): a runtime pointer now
                    self.store(v.key, self.runtime_symbol(v.name.lstrip("&"), v.ctype, origin,
                                                          live=name in ALLOCATORS))
                else:
                    self.invalidate(v.key, f"passed by pointer to {name}() at line {origin.line}", origin)
            elif isinstance(v, Handle):
                self.handler.escaped(v.obj, name, origin)
        # (what the recovery declared takes A&&, and is not known to write anything: a helper of
        # a missing header, an operator of its types; stood-in check macros write nothing)
        if ref is not None and not _recovered(ref) and not is_check_macro(cursor):
            params = [p for p in clangext.children(ref) if p.kind == K.PARM_DECL]
            for a, p in zip(arg_cursors, params):
                if p.type.kind == ci.TypeKind.LVALUEREFERENCE and not p.type.get_pointee().is_const_qualified():
                    key = self.lvalue_key(a)
                    if key is not None:
                        self.invalidate(key, f"passed by reference to {name}() at line {origin.line}", origin)
        if isinstance(folded, (int, float)):
            return Known(folded, origin, via=f"{name}()")
        if ref is not None and self.returns:  # a function of another unit, summarized by the index
            summary = self.returns.get(ref.get_usr())
            if summary is not None:
                return summary
        # a function of run-time data (a tensor's size(), get_dtype(tensor)) is run-time data; one of
        # the objects a caller passes is the caller's (Symbol.from_caller) as they are
        inputs = [self._receiver(callee, this_key), *args]
        why = first_runtime(inputs)
        if name.startswith("operator ") and callee is not None and callee.kind == K.MEMBER_REF_EXPR:
            base = expr_children(callee)
            converted = self.eval(base[0]) if base and not calls_defined_code(base[0]) else None
            if is_fixed_unknown(converted):  # a conversion of a missing header's constant: still that constant
                return converted
        if _is_runtime_object(cursor.type):  # (an operator of a stand-in type: as written, ``t.size``)
            # (as written: ``t.size``, ``args[0].cast<T*>()``, ``ColumnCount(A, false)``)
            label = written(cursor) if len(written(cursor)) <= 60 else ""
            return Symbol(label or f"{name}()", cursor.type.spelling, origin,
                          from_caller=not why and any(isinstance(v, Symbol) and v.from_caller for v in inputs))
        shown = written(cursor) if name.startswith("operator ") else ""  # a conversion: what it converts
        said = not_entered or (f"result of `{shown}`" if shown and len(shown) <= 60
                               else f"result of {name}() at line {origin.line}")
        return Unknown(said, origin, cursor.type.spelling, runtime=computed_from(cursor, name, why) if why else "")

    # ---- statements -----------------------------------------------------------------------
    def exec(self, stmt: ci.Cursor) -> None:
        if self.frames and self.frame.done:
            return
        self._steps += 1
        if self._steps > _MAX_STEPS:
            return
        kind = clangext.kind(stmt)
        if kind == K.COMPOUND_STMT:
            for s in clangext.children(stmt):
                self.exec(s)
                if self.frame.done:
                    return
        elif kind == K.DECL_STMT:
            for d in clangext.children(stmt):
                if d.kind == K.VAR_DECL:
                    self.declare(d)
                elif d.kind == K.UNEXPOSED_DECL:
                    self._bindings(d)
        elif kind == K.IF_STMT:
            self._exec_if(stmt)
        elif kind in (K.FOR_STMT, K.WHILE_STMT, K.CXX_FOR_RANGE_STMT):
            self._exec_loop(stmt)
        elif kind == K.DO_STMT:
            self._exec_do(stmt)
        elif kind == K.SWITCH_STMT:
            self._exec_switch(stmt)
        elif kind in (K.CASE_STMT, K.DEFAULT_STMT, K.LABEL_STMT):
            for s in clangext.children(stmt):
                if s.kind not in (K.INTEGER_LITERAL, K.DECL_REF_EXPR):
                    self.exec(s)
        elif kind == K.CXX_TRY_STMT:
            kids = list(clangext.children(stmt))
            if kids:
                self.exec(kids[0])
            self._exec_conditionally(kids[1:])
        elif kind == K.RETURN_STMT:
            kids = expr_children(stmt)
            built = self._returned_object(kids[0]) if kids else None  # ``return {status, std::move(d)};``
            value = built[1] if built is not None else self.eval(kids[0]) if kids else Known(0)
            if kids and self.frame.loops and isinstance(value, Known):
                value = self._iteration_return(kids[0], value)
            if built is not None:
                self.frame.returned_key = built[0]
            elif kids and value.__class__ is Symbol:
                self.frame.returned_key = self._copy_source(kids[0])
            if self.cond_depth == self._frame_cond_base():
                self.frame.returned = value
                self.frame.done = True
            else:  # on one path only: the result is what every path returns (see invoke)
                frame = self.frame
                frame.branch_returns.append(value)
                frame.return_choices += [c for cs in self.cond_choices[frame.cond_base:] for c in cs
                                         if c not in frame.return_choices]
                frame.return_runtime = frame.return_runtime or next(
                    (r for r in self.cond_runtime[frame.cond_base:] if r), "")
        elif kind in (K.NULL_STMT, K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT, K.CXX_CATCH_STMT):
            return
        elif kind.is_expression() or kind == K.CALL_EXPR:
            self.eval(stmt)
            if self.frames and never_returns(stmt, self.eval):
                self.frame.dead = self.frame.done = True

    def _frame_cond_base(self) -> int:
        return self.frame.cond_base

    @property
    def cond_depth(self) -> int:
        """How many undecided branches this point of the run is inside."""
        return len(self.cond_runtime)

    @contextmanager
    def _undecided(self, runtime: str = "", choices: tuple[str, ...] = ()) -> Iterator[tuple[int, ...]]:
        """Inside an undecided branch (an ``if``/``switch``/loop the run cannot decide, the right side of
        an unknown ``&&``, a lambda that may run): its run-time data and the choices that decide it are on
        the stacks while it runs; the arms it runs in are restored after. Yields the arms it starts from
        (for ``_enter_arm``)."""
        arms = self.arm_path
        self.cond_runtime.append(runtime)
        self.cond_choices.append(choices)
        try:
            yield arms
        finally:
            self.cond_runtime.pop()
            self.cond_choices.pop()
            self.arm_path = arms

    def _enter_arm(self, base: tuple[int, ...]) -> None:
        """Start running one arm of an undecided branch (a case, a loop body, a maybe-called lambda)
        inside the arms ``base``."""
        self._arms += 1
        self.arm_path = (*base, self._arms)

    def _exec_if(self, stmt: ci.Cursor) -> None:
        kids = list(clangext.children(stmt))
        decls = [k for k in kids if k.kind in (K.VAR_DECL, K.DECL_STMT)]
        for d in decls:
            self.declare(d) if d.kind == K.VAR_DECL else self.exec(d)
        rest = [k for k in kids if k not in decls]
        if not rest:
            return
        cond = as_condition(self.eval(rest[0]))
        then_, else_ = (rest[1] if len(rest) > 1 else None), (rest[2] if len(rest) > 2 else None)
        if isinstance(cond, Known):
            chosen = then_ if cond.value else else_
            if chosen is not None:
                self.exec(chosen)
            return
        if is_if_constexpr(stmt):  # decided by types in a template's pattern: no runtime choice
            self._branches([then_, else_], reason=f"branch at line {stmt.location.line}")
            return
        arm, keys = self._decide_condition(rest[0])
        if arm is not None:
            chosen = then_ if arm == 0 else else_
            if chosen is not None:
                self.exec(chosen)
            return
        self._branches([b for b in (then_, else_)], reason=f"branch at line {stmt.location.line}{fixed_note(cond)}",
                       choices=(*keys, *getattr(cond, "choices", ())),
                       runtime=condition_runtime(written(rest[0]) or "?", stmt.location.line, cond))

    def _exec_conditionally(self, stmts: list[ci.Cursor], reason: str = "", runtime: str = "") -> None:
        self._branches([*stmts, None], reason or "conditional code", sequential=True, runtime=runtime)

    def _branches(self, branches: list[ci.Cursor | None], reason: str, sequential: bool = False,
                  choices: tuple[str, ...] = (), runtime: str = "") -> None:
        """Run alternatives from the same starting state and merge: values that differ become Unknown
        (naming the runtime ``choices`` that decide between them, when the alternatives are those of one,
        and ``runtime``, the run-time data the choice is made on, when it is known to be some)."""
        before = dict(self.env)
        outcomes: list[dict[Key, Value]] = []
        frame = self.frame
        saved_done = frame.done
        with self._undecided(runtime, choices) as arms:
            if sequential:
                dead = False
                for b in branches:
                    if b is not None and not dead:
                        self._enter_arm(arms)
                        self.exec(b)
                        dead = frame.dead
                        frame.done, frame.dead = saved_done, False
                outcomes = [before] if dead else [dict(self.env), before]
            else:
                for b in branches:
                    self.env = dict(before)
                    if b is not None:
                        self._enter_arm(arms)
                        self.exec(b)
                        frame.done = saved_done
                    if frame.dead:  # a path that throws (or never returns) does not go on
                        frame.dead = False
                        continue
                    outcomes.append(self.env)
        if not outcomes:  # every path ends here
            self.env, frame.dead, frame.done = before, True, True
            return
        self.env = merge_outcomes(before, outcomes, reason, choices, runtime)

    # ---- declarations and assignment ---------------------------------------------------------
    def var_key(self, decl: ci.Cursor) -> Key:
        usr = decl.get_usr() or f"{decl.spelling}@{loc_of(decl)}"
        if decl.kind == K.VAR_DECL and decl.semantic_parent is not None and \
                decl.semantic_parent.kind in FUNCTION_KINDS and decl.storage_class != ci.StorageClass.STATIC:
            if not self.frames:
                return ("local", 0, usr)
            return ("local", self._frame_of(decl).id, usr)
        return ("global", usr)

    def _local_named(self, name: str) -> Key | None:
        """The storage of the variable ``name`` declared in this frame or, in a lambda, in the frames
        it was made in; None when there is none."""
        frame = self.frame if self.frames else None
        while frame is not None:
            if name in frame.locals_by_name:
                return frame.locals_by_name[name]
            frame = frame.outer
        return None

    def declare(self, decl: ci.Cursor) -> None:
        key = self.var_key(decl)
        if self.frames and key[0] == "local":
            self.frame.locals_by_name[decl.spelling] = key
        init = [c for c in clangext.children(decl) if c.kind not in NON_EXPR_CHILDREN]
        origin = loc_of(decl)
        if not init:
            self._default_members(key, decl.type, origin)
            self.store(key, Unknown(f"{decl.spelling} declared without a value", origin, decl.type.spelling))
            return
        expr = init[-1]
        inner = strip(expr)
        if inner.kind == K.CALL_EXPR and inner.referenced is not None and inner.referenced.kind == K.CONSTRUCTOR:
            held = self._held_closure(inner)
            if held is not None:  # std::function<...> f = [&] { ... };
                self.store(key, held)
                return
            self._default_members(key, decl.type, origin)
            # an object built here is run-time data only when built from some (a copy of one)
            args = self._construct(key, inner)
            if len(args) == 1 and isinstance(args[0], Address) and \
                    is_smart_pointer(decl.type.get_canonical().get_declaration()):
                self.store(key, args[0])  # ``std::shared_ptr<Gemm> g = std::make_shared<Gemm>();``
                return
            why = first_runtime(args)
            self.store(key, Symbol(decl.spelling, decl.type.spelling, origin, from_caller=not why))
            return
        if inner.kind == K.INIT_LIST_EXPR:
            self._built(key, decl.type, origin, inner, decl.spelling)
            return
        value = self._null_by_decision(decl, self.eval(expr))
        self.assign(key, value, origin, name=decl.spelling, source=expr)

    def _construct(self, key: Key, ctor_call: ci.Cursor) -> list[Value]:
        """Run the constructor call ``ctor_call`` on the object at ``key``; its arguments' values."""
        target = self._callee_definition(ctor_call)
        arg_cursors = clangext.arguments(ctor_call)
        args = self._arguments(ctor_call, arg_cursors)
        ref = ctor_call.referenced
        if ref is not None and (ref.is_copy_constructor() or ref.is_move_constructor()) and arg_cursors:
            src = self.lvalue_key(arg_cursors[0]) or self._copy_source(arg_cursors[0])
            if src is not None:
                self._copy_members(src, key)
            if target is None or ref.is_default_method() or not any(
                    c.kind == K.COMPOUND_STMT and list(clangext.children(c)) for c in clangext.children(target)):
                return args
        if target is not None:
            self.sites.append(loc_of(ctor_call))
            try:
                self.invoke(target, arg_cursors, args, this_key=key)
            finally:
                self.sites.pop()
        elif len(args) == 1 and arg_cursors:  # copy construction
            src = self.lvalue_key(arg_cursors[0]) or self._copy_source(arg_cursors[0])
            if src is not None:
                self._copy_members(src, key)
        return args

    def _copy_source(self, cursor: ci.Cursor) -> Key | None:
        """The storage an object expression is copied from (through implicit copy constructors and
        ``std::move``/``std::forward``)."""
        c = strip(cursor)
        moved = moved_argument(c)
        if moved is not None:
            return self.lvalue_key(moved) or self._copy_source(moved)
        if c.kind == K.CALL_EXPR and c.referenced is not None and c.referenced.kind == K.CONSTRUCTOR:
            args = clangext.arguments(c)
            if len(args) == 1 and (c.referenced.is_copy_constructor() or c.referenced.is_move_constructor()):
                return self._copy_source(args[0])
            return None
        if c.kind == K.CALL_EXPR:
            return self.last_returned_key
        return self.lvalue_key(c)

    def assign(self, key: Key, value: Value, origin: Loc, name: str = "", source: ci.Cursor | None = None) -> None:
        if source is not None and value.__class__ is Symbol:
            src_key = self.lvalue_key(source)
            if src_key is None and strip(source).kind == K.CALL_EXPR:
                src_key = self.last_returned_key  # an object returned by value from an inlined call
            if src_key is not None:
                self._copy_members(src_key, key)
        if isinstance(value, Known) and name and not value.via:
            value = Known(value.value, value.origin, via=f"variable {name}", ctype=value.ctype)
        self.store(key, value)

    # ---- lvalues ------------------------------------------------------------------------------
    def lvalue_key(self, cursor: ci.Cursor) -> Key | None:
        c = strip(cursor)
        if c.kind == K.DECL_REF_EXPR:
            ref = c.referenced
            if ref is None:
                return None
            if ref.kind == K.PARM_DECL and self.frames:
                pusr = ref.get_usr() or ref.spelling
                frame = self._frame_of(ref)
                if pusr in frame.aliases:
                    return frame.aliases[pusr]
                return ("param", frame.id, pusr)
            if ref.kind == K.VAR_DECL:
                key = self.var_key(ref)
                if key[0] == "global":
                    self._decls[key] = ref
                    self._constant_table(ref, key)
                return key
            return None
        if c.kind == K.MEMBER_REF_EXPR:
            kids = expr_children(c)
            if kids:
                base_expr = strip(kids[0])
                if base_expr.kind == K.CXX_THIS_EXPR:
                    base = self.frame.this_key if self.frames else None
                elif c.type is not None and is_arrow(c):
                    ptr = self.eval(kids[0])
                    base = ptr.key if isinstance(ptr, Address) else self.lvalue_key(kids[0])
                else:
                    base = self.lvalue_key(kids[0])
            else:
                base = self.frame.this_key if self.frames else None
            return ("member", base, c.spelling) if base is not None else None
        if c.kind == K.UNARY_OPERATOR and clangext.unary_operator(c) == "*":
            kids = expr_children(c)
            ptr = self.eval(kids[0]) if kids else None
            return ptr.key if isinstance(ptr, Address) else None
        if c.kind == K.ARRAY_SUBSCRIPT_EXPR:
            kids = expr_children(c)
            if len(kids) == 2:
                base = self.lvalue_key(kids[0])
                index = self.eval(kids[1])
                if base is not None and isinstance(index, Known):
                    return ("elem", base, index.value)
            return None
        return None

    # ---- expressions ----------------------------------------------------------------------------
    def eval(self, cursor: ci.Cursor) -> Value:
        self._steps += 1
        kind = clangext.kind(cursor)
        origin = loc_of(cursor)
        if kind == K.CALL_EXPR:
            if cursor.referenced is not None and cursor.referenced.kind == K.CONSTRUCTOR:
                args = expr_children(cursor)
                if len(args) == 1 and cursor.spelling == "":
                    return self.eval(args[0])
                if len(args) == 1:
                    inner = self.eval(args[0])
                    if not isinstance(inner, Unknown):
                        return inner
                return self._temporary(cursor)
            return self.call(cursor)
        if kind in (K.INTEGER_LITERAL, K.FLOATING_LITERAL, K.CXX_BOOL_LITERAL_EXPR, K.CHARACTER_LITERAL,
                    K.STRING_LITERAL):
            folded = clangext.evaluate(cursor)
            if folded is None and kind == K.CXX_BOOL_LITERAL_EXPR:
                folded = int(next(cursor.get_tokens()).spelling == "true")
            if folded is None:
                return Unknown("literal not folded", origin)
            return Known(int(folded) if isinstance(folded, bool) else folded, origin, via="literal")
        if kind in (K.CXX_NULL_PTR_LITERAL_EXPR, K.GNU_NULL_EXPR):
            return Known(0, origin, via="nullptr", ctype="nullptr_t")
        if kind in CAST_KINDS:
            kids = expr_children(cursor)
            failed = clangext.failed_call(cursor) if len(kids) > 1 else None  # (the callee and its arguments)
            if failed is not None:  # a call the parse could not resolve: of the API, or one that may do anything
                args = self._arguments(cursor, clangext.arguments(cursor))
                if self.handler.is_api(failed):
                    return self.handler.call(self, failed, cursor, args)
                for v in args:
                    if isinstance(v, Handle):
                        self.handler.escaped(v.obj, failed, origin)
                    elif isinstance(v, Address):
                        self.invalidate(v.key, f"passed to {failed}() at line {origin.line}, a call the parse "
                                        "could not resolve", origin)
                return Unknown(f"result of {failed}() at line {origin.line} (a call the parse could not resolve)",
                               origin)
            if len(kids) != 1:
                folded = clangext.evaluate(cursor) if kids else None
                if isinstance(folded, (int, float)):
                    return Known(folded, origin, via="constant expression")
                if not kids:
                    tokens = [t.spelling for t in cursor.get_tokens()]
                    if len(tokens) == 1 and (bound := self._binding(tokens[0])) is not None:
                        return bound
                    if len(tokens) == 1 and (local := self._local_named(tokens[0])) is not None:
                        return self.load(local, origin)  # ``auto d = f(dependent)``: a use of ``d``
                    return Unknown(f"`{' '.join(tokens)[:60]}` not typed by the parser (an error nearby?)", origin)
                return self._temporary(cursor)
            inner = self.eval(kids[0])
            if isinstance(inner, Known) and isinstance(inner.value, int) and kind != K.PAREN_EXPR:
                return Known(_wrap_int(inner.value, cursor.type), inner.origin, inner.via, cursor.type.spelling)
            return inner
        if kind == K.DECL_REF_EXPR:
            return self._decl_ref(cursor, origin)
        if kind == K.MEMBER_REF_EXPR:
            key = self.lvalue_key(cursor)
            if key is not None and key in self.env:
                return self.env[key]
            ref = cursor.referenced
            if ref is not None and ref.kind == K.FIELD_DECL:
                init = [c for c in clangext.children(ref) if c.kind not in NON_EXPR_CHILDREN]
                if init and key is None:
                    return self.eval(init[-1])
            return Unknown((self._unset_reason(key) if key is not None else None)
                           or f"member {cursor.spelling} not set on this path", origin,
                           runtime=(self._unset_runtime(key) if key is not None else "")
                           or self._member_runtime(key, cursor))
        if kind == K.UNARY_OPERATOR:
            return self._unary(cursor, origin)
        if kind == K.BINARY_OPERATOR:
            return self._binary(cursor, origin)
        if kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
            kids = expr_children(cursor)
            op = clangext.binary_operator(cursor)[:-1]
            key = self.lvalue_key(kids[0])
            lhs, rhs = self.eval(kids[0]), self.eval(kids[1])
            result = self._arith(op, lhs, rhs, origin)
            if key is not None:
                self.assign(key, result, origin)
            return result
        if kind == K.CONDITIONAL_OPERATOR:
            kids = expr_children(cursor)
            cond = as_condition(self.eval(kids[0]))
            if isinstance(cond, Known):
                return self.eval(kids[1] if cond.value else kids[2])
            arm, keys = self._decide_condition(kids[0])
            if arm is not None:
                return self.eval(kids[1] if arm == 0 else kids[2])
            before = dict(self.env)
            a = self.eval(kids[1])
            b = self.eval(kids[2])
            self.env.update({k: v for k, v in before.items() if k not in self.env})
            return a if same(a, b) else Unknown(f"depends on the condition at line {origin.line}", origin,
                                                choices=(*keys, *getattr(cond, "choices", ())),
                                                runtime=condition_runtime(written(kids[0]) or "?", origin.line, cond))
        if kind == K.CXX_UNARY_EXPR:
            return sizeof_value(cursor, origin, self.frames)
        if kind == K.ARRAY_SUBSCRIPT_EXPR:
            key = self.lvalue_key(cursor)
            if key is not None and key in self.env:
                return self.env[key]
            parts = [self.eval(k) if not calls_defined_code(k) else None for k in expr_children(cursor)[:2]]
            array, index = (runtime_of(v) for v in (*parts, None, None)[:2])
            why = f"an element of {array}" if array else f"the element at {index}" if index else ""
            return Unknown("array element", origin, runtime=why)
        if kind == K.CXX_THIS_EXPR:
            return Address(self.frame.this_key, "this") if self.frames and self.frame.this_key else Unknown("this", origin)
        if kind == K.INIT_LIST_EXPR:
            kids = expr_children(cursor)
            return self.eval(kids[0]) if len(kids) == 1 else Unknown("initializer list", origin)
        if kind == K.LAMBDA_EXPR:
            self._frame_ids += 1
            return Closure("lambda", "", origin, self._frame_ids, lambda_expr=cursor,
                           frame=self.frame if self.frames else None)
        if kind == K.CXX_NEW_EXPR and (made := self._new_object(cursor)) is not None:
            return made
        if kind in (K.CXX_NEW_EXPR, K.CXX_DELETE_EXPR, K.CXX_THROW_EXPR):
            for k in expr_children(cursor):
                self.eval(k)
            return Symbol(kind.name.lower(), cursor.type.spelling, origin, live=kind == K.CXX_NEW_EXPR)
        # Anything else: evaluate sub-expressions for their side effects, then try clang's folding.
        for k in expr_children(cursor):
            if k.kind.is_expression():
                self.eval(k)
        folded = clangext.evaluate(cursor)
        if isinstance(folded, (int, float)):
            return Known(folded, origin, via="constant expression")
        return Unknown(f"{kind.name.lower()} not evaluated", origin)

    def _temporary(self, cursor: ci.Cursor) -> Value:
        """A temporary object built by a constructor (e.g. ``Wrapper(args)``)."""
        self._frame_ids += 1
        key: Key = ("temp", self._frame_ids)
        if cursor.kind == K.CALL_EXPR:
            self._construct(key, cursor)
        else:
            for k in expr_children(cursor):
                self.eval(k)
        label = cursor.type.spelling
        if not label or label.startswith("<"):  # ``<dependent type>`` in a template's pattern: as written
            text = written(cursor)
            label = text if text and len(text) <= 60 else "temporary"
        return Symbol(label, cursor.type.spelling, loc_of(cursor))

    def _decl_ref(self, cursor: ci.Cursor, origin: Loc) -> Value:
        ref = cursor.referenced
        if ref is None:
            kids = expr_children(cursor)
            if len(kids) == 1 and not cursor.spelling:  # a template argument substituted in an instantiated
                return self.eval(kids[0])               # body (``DTYPE_OUT`` in ``igemmlt<8, 1>``: 8)
            return Unknown(f"'{cursor.spelling}' did not resolve (parse error?)", origin)
        if ref.kind == K.ENUM_CONSTANT_DECL:
            if _recovered(ref):  # a case label's constant of a missing header: its value is made up
                return _found_nowhere(cursor, ref, origin)
            return Known(ref.enum_value, origin, via=ref.spelling, ctype=ref.type.spelling)
        if ref.kind == K.PARM_DECL and self.frames:
            pusr = ref.get_usr() or ref.spelling
            frame = self._frame_of(ref)
            if pusr in frame.aliases:
                return self.load(frame.aliases[pusr], origin)
            key = ("param", frame.id, pusr)
            if key in self.env:
                return self.env[key]
            if pusr in frame.bindings:
                return frame.bindings[pusr]
            return Unknown(f"parameter {ref.spelling}", origin)
        if ref.kind == K.VAR_DECL:
            key = self.var_key(ref)
            if key[0] == "global":
                self._constant_table(ref, key)
            if key in self.env:
                return self.env[key]
            if _recovered(ref):  # ``extern any X;`` of the recovery: a constant or global of a missing header
                return _found_nowhere(cursor, ref, origin)
            if is_constant_decl(ref) or key[0] == "global":
                value = self._initial_value(ref, origin)
                if isinstance(value, Unknown):
                    folded = clangext.evaluate(cursor)
                    if isinstance(folded, (int, float)):
                        return Known(folded, loc_of(ref), via=f"constant {ref.spelling}")
                return value
            return Unknown(f"{ref.spelling} has no known value here", origin)
        if ref.kind in FUNCTION_KINDS:
            return Symbol(ref.spelling, ref.type.spelling, origin)
        folded = clangext.evaluate(cursor)
        if isinstance(folded, (int, float)):
            return Known(folded, origin, via=ref.spelling)
        if ref.kind == K.UNEXPOSED_DECL and (bound := self._binding(ref.spelling)) is not None:
            return bound
        return Unknown(f"{ref.spelling} ({ref.kind.name.lower()})", origin)

    def _initial_value(self, decl: ci.Cursor, origin: Loc | None) -> Value:
        """A constant's or a never-reassigned global's value, from its initializer."""
        init = [c for c in clangext.children(decl) if c.kind not in NON_EXPR_CHILDREN]
        if not init:
            return Unknown(f"{decl.spelling} has no initializer", origin)
        value = self.eval(init[-1])
        if isinstance(value, Known):
            kind = "constant" if is_constant_decl(decl) else "global variable"
            return Known(value.value, value.origin or loc_of(decl), value.via or f"{kind} {decl.spelling}",
                         decl.type.spelling)
        return value

    def _unary(self, cursor: ci.Cursor, origin: Loc) -> Value:
        op = clangext.unary_operator(cursor)
        kids = expr_children(cursor)
        if not kids:
            return Unknown("malformed unary expression", origin)
        operand = kids[0]
        if op == "&":
            key = self.lvalue_key(operand)
            if key is None:
                return Unknown("address of an unanalysed expression", origin)
            return Address(key, short_spelling(operand), strip(operand).type.spelling, origin)
        if op == "*":
            ptr = self.eval(operand)
            if isinstance(ptr, Address):
                return self.load(ptr.key, origin)
            why = runtime_of(ptr)
            return Unknown("dereference of an unknown pointer", origin, runtime=f"what {why} points to" if why else "")
        if op in ("++", "--"):
            key = self.lvalue_key(operand)
            old = self.eval(operand)
            new = self._arith("+" if op == "++" else "-", old, Known(1), origin)
            if key is not None:
                self.assign(key, new, origin)
            return old if clangext.unary_is_postfix(cursor) else new
        value = self.eval(operand)
        if op == "!":
            value = as_condition(value)
        if not isinstance(value, Known) or isinstance(value.value, str):
            return value if isinstance(value, Unknown) else Unknown(f"operator {op} on a non-constant", origin)
        v = value.value
        try:
            result = {"-": lambda: -v, "+": lambda: v, "~": lambda: ~int(v), "!": lambda: int(not v)}[op]()
        except KeyError:
            return Unknown(f"operator {op}", origin)
        return Known(result, value.origin, value.via, value.ctype)

    def _binary(self, cursor: ci.Cursor, origin: Loc) -> Value:
        op = clangext.binary_operator(cursor)
        kids = expr_children(cursor)
        if len(kids) != 2:
            return Unknown("malformed binary expression", origin)
        lhs_c, rhs_c = kids
        if op == "=":
            key = self.lvalue_key(lhs_c)
            value = self.eval(rhs_c)
            if key is not None:
                self.assign(key, value, origin, name=short_spelling(lhs_c), source=rhs_c)
            return value
        if op == ",":
            self.eval(lhs_c)
            return self.eval(rhs_c)
        lhs = self.eval(lhs_c)
        if op in ("&&", "||"):
            lhs = as_condition(lhs)
            if isinstance(lhs, Known) and (bool(lhs.value) == (op == "||")):
                return Known(int(bool(lhs.value)), origin)
            if isinstance(lhs, Known):
                rhs = self.eval(rhs_c)
            else:
                with self._undecided(runtime_of(lhs)) as arms:
                    self._enter_arm(arms)
                    rhs = self.eval(rhs_c)
            if isinstance(rhs, Known) and isinstance(lhs, Known):
                return Known(int(bool(rhs.value)), origin)
            return Unknown(f"logical {op} of non-constants", origin, runtime=first_runtime((lhs, rhs)))
        rhs = self.eval(rhs_c)
        return self._arith(op, lhs, rhs, origin, cursor.type)

    def _arith(self, op: str, lhs: Value, rhs: Value, origin: Loc, ctype: ci.Type | None = None) -> Value:
        if isinstance(lhs, Known) and isinstance(rhs, Known):
            fn = _BINOPS.get(op)
            if fn is None or isinstance(lhs.value, str) or isinstance(rhs.value, str):
                return Unknown(f"operator {op}", origin)
            try:
                result = fn(lhs.value, rhs.value)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                return Unknown(f"operator {op} failed on constants", origin)
            if ctype is not None and isinstance(result, int):
                result = _wrap_int(result, ctype)
            return Known(result, origin, via="arithmetic")
        why = null_compared(lhs, rhs) if op in ("==", "!=") else ""  # ``&config != nullptr``, an allocation
        if why:
            return Known(int(op == "!="), origin, via=why)
        for v in (lhs, rhs):
            if isinstance(v, Unknown):
                return v if v.runtime or not (why := first_runtime((lhs, rhs))) else \
                    Unknown(v.reason, v.origin, v.ctype, v.choices, why)
        return Unknown(f"operator {op} on non-constant operands", origin, runtime=first_runtime((lhs, rhs)))


def _recovered(ref: ci.Cursor) -> bool:
    """A declaration the partial-parse recovery made for a missing header: a function
    (``ColumnCount(A&&...)``, ``any operator*(L&&, R&&)``: its forwarding references say nothing of
    what it writes), a constant or a global (its value is not known)."""
    f = ref.location.file
    return f is not None and (f.name.startswith(MISSING_DIR + "/") or
                              ref.spelling.startswith("operator") and is_virtual(f.name))


def _found_nowhere(cursor: ci.Cursor, ref: ci.Cursor, origin: Loc) -> Unknown:
    """The value of a constant or global the recovery declared (``_recovered``), as ``cursor`` reads it."""
    return Unknown(f"`{written(cursor) or ref.spelling}`, {FOUND_NOWHERE}", origin, ref.type.spelling)
