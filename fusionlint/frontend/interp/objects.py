"""Objects the interpreter models beyond plain storage (mixed into ``Interpreter``): the members of
structs (default member initializers, aggregate initialization, copies), the standard library's
smart pointers (the pointer they hold is the object's value) and ``std::optional`` (its value is the
object's value, whether it holds one a member ``__engaged`` of it), structured bindings (runtime
data, with where they come from), constructors that delegate to another constructor or build a
base class, and objects built in a return statement or called on where they are made
(``return {status, std::move(desc)};``, ``RunPlan(...).ok()``)."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.clang.cursors import NON_EXPR_CHILDREN, expr_children, loc_of, strip, written
from fusionlint.frontend.clang.parse import is_virtual
from fusionlint.model.values import Address, Key, Known, Loc, Symbol, Unknown, Value, first_runtime

K = ci.CursorKind

_SMART_POINTERS = {"unique_ptr", "shared_ptr"}


def is_smart_pointer(cls: ci.Cursor | None) -> bool:
    """Is ``cls`` the standard library's ``unique_ptr`` or ``shared_ptr`` (a class of namespace std)?"""
    return cls is not None and cls.spelling in _SMART_POINTERS and _in_std(cls)


def is_optional(cls: ci.Cursor | None) -> bool:
    """Is ``cls`` ``std::optional`` (the class template or one of its specializations)?"""
    return cls is not None and cls.spelling == "optional" and _in_std(cls)


def _optional_type(ctype: ci.Type) -> bool:
    decl = ctype.get_canonical().get_declaration()
    return decl is not None and is_optional(decl)


def _nullopt(cursor: ci.Cursor) -> bool:
    """``std::nullopt`` (or ``{}``), as an argument or initializer."""
    c = strip(cursor)
    return "nullopt_t" in c.type.spelling or c.kind == K.INIT_LIST_EXPR and not expr_children(c)


ENGAGED = "__engaged"  # the member of a std::optional's storage that says whether it holds a value


def _in_std(cls: ci.Cursor) -> bool:
    parent = cls.semantic_parent
    while parent is not None and parent.kind == K.NAMESPACE and parent.spelling != "std":
        parent = parent.semantic_parent  # an inline namespace such as __1 (libc++)
    return parent is not None and parent.kind == K.NAMESPACE and parent.spelling == "std"


def moved_argument(c: ci.Cursor) -> ci.Cursor | None:
    """The argument of ``std::move(x)`` / ``std::forward<T>(x)``; None for any other expression."""
    if c.kind != K.CALL_EXPR or c.spelling not in ("move", "forward"):
        return None
    ref = c.referenced
    parent = ref.semantic_parent if ref is not None else None
    args = clangext.arguments(c)
    if parent is None or parent.kind != K.NAMESPACE or parent.spelling != "std" or len(args) != 1:
        return None
    return args[0]


def made_class(call: ci.Cursor) -> ci.Cursor | None:
    """The class ``std::make_unique<T>(...)`` / ``std::make_shared<T>(...)`` builds (its declaration);
    None for any other call."""
    ref = call.referenced if call.kind == K.CALL_EXPR else None
    if ref is None or ref.spelling not in ("make_unique", "make_shared") or not _in_std(ref):
        return None
    if call.type.get_num_template_arguments() < 1:
        return None
    decl = call.type.get_template_argument_type(0).get_canonical().get_declaration()
    return decl if decl is not None and decl.kind in (K.STRUCT_DECL, K.CLASS_DECL) else None


class ObjectsMixin:
    """Struct members, smart pointers, ``std::optional``, structured bindings and constructor delegation."""

    def _default_members(self, key: Key, ctype: ci.Type, origin: Loc) -> None:
        """Default member initializers (``int32_t transa = CUBLAS_OP_T;``) of a struct variable."""
        if _optional_type(ctype):  # ``std::optional<T> x;``: holds nothing
            self._optional_set(key, None, origin)
            return
        decl = ctype.get_canonical().get_declaration()
        if decl is None or decl.kind not in (K.STRUCT_DECL, K.CLASS_DECL):
            return
        loc = decl.location
        if loc.file is None or loc.is_in_system_header or is_virtual(loc.file.name):
            return
        for f in clangext.children(decl):
            if f.kind == K.FIELD_DECL:
                init = [c for c in clangext.children(f) if c.kind not in NON_EXPR_CHILDREN]
                fkey = ("member", key, f.spelling)
                if init and _optional_type(f.type):
                    self._optional_set(fkey, None if _nullopt(init[-1]) else self.eval(init[-1]), origin)
                elif init:
                    self.store(fkey, self.eval(init[-1]))
                else:
                    self._default_members(fkey, f.type, origin)

    def _built(self, key: Key, ctype: ci.Type, origin: Loc, how: ci.Cursor | None = None, name: str = "") -> Key:
        """An object of class (or array) ``ctype`` at ``key``: its default member initializers run, then
        built by ``how`` (an initializer list, or a constructor call; None: left to the caller), its
        value the object itself (named ``name``, else its type)."""
        self._default_members(key, ctype, origin)
        if how is not None:
            self._aggregate(key, ctype, how) if how.kind == K.INIT_LIST_EXPR else self._construct(key, how)
        self.store(key, Symbol(name or ctype.spelling or "temporary", ctype.spelling, origin, from_caller=True))
        return key

    def _new_key(self, space: str) -> Key:
        """A fresh place for an object no variable names (``temp``: a temporary, ``heap``: ``new``)."""
        self._frame_ids += 1
        return (space, self._frame_ids)

    def _aggregate(self, key: Key, ctype: ci.Type, init_list: ci.Cursor) -> None:
        decl = ctype.get_canonical().get_declaration()
        fields = [f for f in clangext.children(decl) if f.kind == K.FIELD_DECL] if decl is not None else []
        if not fields and decl is not None:  # a class template's specialization: the pattern's fields
            pattern = clangext.specialized_template(decl)
            fields = [f for f in clangext.children(pattern) if f.kind == K.FIELD_DECL] if pattern is not None else []
        elems = expr_children(init_list)
        if ctype.get_canonical().kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
            element = ctype.get_canonical().element_type
            for i, e in enumerate(elems):
                inner = strip(e)
                if inner.kind == K.INIT_LIST_EXPR and element.get_canonical().kind == ci.TypeKind.RECORD:
                    self._built(("elem", key, i), element, loc_of(inner), inner)  # a table of structs
                else:
                    self.store(("elem", key, i), self.eval(e))
            return
        for f, e in zip(fields, elems):
            inner = strip(e)
            if inner.kind == K.INIT_LIST_EXPR:
                self._aggregate(("member", key, f.spelling), f.type, inner)
            else:
                value = self.eval(e)
                self.store(("member", key, f.spelling), value)
                if e.type.get_canonical().kind == ci.TypeKind.RECORD:
                    src = self._copy_source(e)  # an object member (``{status, std::move(desc)}``): its members
                    if src is not None:
                        self._copy_members(src, ("member", key, f.spelling))

    def _returned_object(self, expr: ci.Cursor) -> tuple[Key, Value] | None:
        """``return {status, std::move(desc)};`` or ``return Desc(raw);``: an object of a class built in
        the return statement, in a temporary the caller copies from; None for anything else."""
        c = strip(expr)
        if c.type.get_canonical().kind != ci.TypeKind.RECORD:
            return None
        ctor = c.referenced if c.kind == K.CALL_EXPR else None
        if not (c.kind == K.INIT_LIST_EXPR or ctor is not None and ctor.kind == K.CONSTRUCTOR
                and clangext.arguments(c) and not (ctor.is_copy_constructor() or ctor.is_move_constructor())):
            return None
        key = self._built(self._new_key("temp"), c.type, loc_of(c), c)
        return key, self.env[key]

    def _rvalue_object(self, expr: ci.Cursor) -> Key:
        """The object a member function is called on when it is no variable (``make().ok()``): the
        call that makes it runs; the object is the one it returned, or a temporary holding its value."""
        c = strip(expr)
        if c.referenced is not None and c.referenced.kind == K.CONSTRUCTOR:  # ``Builder(args).transa(t)``
            return self._built(self._new_key("temp"), c.type, loc_of(c), c)
        self.last_returned_key = None
        value = self.eval(expr)
        if self.last_returned_key is not None:
            return self.last_returned_key
        key = self._new_key("temp")
        self.store(key, value)
        return key

    def _pointee(self, pointer: ci.Cursor) -> Key | None:
        """The storage a pointer expression points to, when it is known (``&gemm``, ``new Gemm``,
        ``std::make_unique<Gemm>()``, a smart pointer holding one of them); else None."""
        c = strip(pointer)
        ref = c.referenced if c.kind == K.CALL_EXPR else None
        value = None
        if ref is not None and ref.spelling in ("operator->", "operator*") and _in_std(ref.semantic_parent):
            kids = expr_children(c)  # ``p->`` on a smart pointer (libstdc++: a base class's operator): [p, operator->]
            key = self.lvalue_key(kids[0]) if kids else None
            value = self.env.get(key) if key is not None else None
        if value is None:
            value = self.eval(pointer)
        return value.key if isinstance(value, Address) else None

    def _new_object(self, new_expr: ci.Cursor) -> Value | None:
        """``new Gemm(args)``: the object built at a new place; its address. None for an array or a
        type that is no class."""
        ctor = next((k for k in expr_children(new_expr) if k.kind == K.CALL_EXPR and k.referenced is not None
                     and k.referenced.kind == K.CONSTRUCTOR), None)
        pointee = new_expr.type.get_pointee()
        if ctor is None or pointee.get_canonical().kind != ci.TypeKind.RECORD:
            return None
        origin = loc_of(new_expr)
        key = self._built(self._new_key("heap"), pointee, origin, ctor)
        return Address(key, f"new {pointee.spelling}", pointee.spelling, origin)

    def _made_object(self, call: ci.Cursor) -> Value | None:
        """``std::make_unique<Gemm>(args)`` / ``std::make_shared``: the object built at a new place by
        the constructor of as many parameters as there are arguments; its address (the smart pointer's
        value). None for any other call."""
        decl = made_class(call)
        if decl is None:
            return None
        record = call.type.get_template_argument_type(0)
        origin = loc_of(call)
        arg_cursors = clangext.arguments(call)
        args = [self.eval(a) for a in arg_cursors]
        key = self._built(self._new_key("heap"), record, origin)  # the constructor runs below, by its arity
        ctors = [c for c in clangext.children(decl) if c.kind == K.CONSTRUCTOR
                 and len([p for p in clangext.children(c) if p.kind == K.PARM_DECL]) == len(args)]
        target = next((c.get_definition() for c in ctors if c.get_definition() is not None), None)
        if target is not None:
            self.sites.append(origin)
            try:
                self.invoke(target, arg_cursors, args, this_key=key)
            finally:
                self.sites.pop()
        return Address(key, f"make {record.spelling}", record.spelling, origin)

    def _constant_table(self, decl: ci.Cursor, key: Key) -> None:
        """A global (or static) array or struct built from an initializer list
        (``static const Cfg kConfigs[] = {{...}, {...}};``): its elements and members, once."""
        if key in self.env or decl.type.get_canonical().kind not in (
                ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.RECORD):
            return
        init = [c for c in clangext.children(decl) if c.kind not in NON_EXPR_CHILDREN]
        if init and strip(init[-1]).kind == K.INIT_LIST_EXPR:
            self._built(key, decl.type, loc_of(decl), strip(init[-1]), decl.spelling)

    def _copy_members(self, src: Key, dst: Key) -> None:
        for k, v in list(self.env.items()):
            rebased = self._rebase(k, src, dst)
            if rebased is not None:
                self.env[rebased] = v

    def _rebase(self, k: Key, src: Key, dst: Key) -> Key | None:
        if k == src:
            return None
        if k and k[0] in ("member", "elem"):
            if k[1] == src:
                return (k[0], dst, k[2])
            inner = self._rebase(k[1], src, dst)
            return (k[0], inner, k[2]) if inner is not None else None
        return None

    def _optional_set(self, key: Key, value: Value | None, origin: Loc) -> None:
        """``key`` (a std::optional) holds ``value`` from here on; None: it holds nothing."""
        self.store(("member", key, ENGAGED), Known(int(value is not None), origin,
                                                   via="a std::optional " + ("set" if value is not None else "empty")))
        if value is not None:
            self.store(key, value)

    def _optional_call(self, method: str, key: Key | None, arg_cursors: list[ci.Cursor], origin: Loc) -> Value:
        """A member of ``std::optional`` called on the optional at ``key``: ``has_value()`` and
        ``operator bool`` read whether it holds a value, ``value()``, ``*`` and ``->`` the value,
        ``value_or(x)`` either; ``=``, ``emplace`` and ``reset`` change it. Unknown where it is not
        known whether it holds a value (a caller's optional)."""
        args = [self.eval(a) for a in arg_cursors]
        if key is None:
            return Unknown(f"{method}() of an std::optional not analysed", origin)
        if method in ("operator=", "emplace"):
            self._optional_set(key, None if arg_cursors and _nullopt(arg_cursors[-1]) else
                               (args[-1] if args else Unknown("emplace()", origin)), origin)
            return Unknown(f"{method}() returns the optional", origin)
        if method == "reset":
            self._optional_set(key, None, origin)
            return Unknown("reset() returns nothing", origin)
        engaged = self.env.get(("member", key, ENGAGED))
        if method in ("has_value", "operator bool"):
            return engaged if isinstance(engaged, Known) else \
                Unknown(f"whether the std::optional holds a value (line {origin.line})", origin)
        if method in ("value", "operator*", "operator->"):
            return self.load(key, origin)
        if method == "value_or" and args:
            if isinstance(engaged, Known):
                return self.load(key, origin) if engaged.value else args[-1]
            return Unknown(f"value_or() of an std::optional not known to hold a value (line {origin.line})", origin)
        self.invalidate(key, f"{method}() of the std::optional at line {origin.line}", origin)
        return Unknown(f"result of {method}() at line {origin.line}", origin)

    def _smart_pointer(self, method: str, key: Key, args: list[Value], origin: Loc) -> Value:
        """``std::unique_ptr``/``shared_ptr`` members: the pointer they hold is the object's value
        (``p.reset(raw)`` stores it, ``p.get()``, ``*p`` and ``p->`` read it)."""
        if method == "reset":
            self.store(key, args[0] if args else Known(0, origin, via="reset()"))
            return Unknown("reset() returns nothing", origin)
        if method == "release":
            value = self.load(key, origin)
            self.store(key, Known(0, origin, via="release()"))
            return value
        if method in ("get", "operator->", "operator*"):
            return self.load(key, origin)
        if method == "operator=" and len(args) == 1 and isinstance(args[0], Address):  # ``p = std::make_unique<T>()``
            self.store(key, args[0])
            return args[0]
        self.invalidate(key, f"{method}() of the smart pointer at line {origin.line}", origin)
        return Unknown(f"result of {method}() at line {origin.line}", origin)

    def _default_assignment(self, arg_cursors: list[ci.Cursor], origin: Loc) -> Value:
        """``a = b`` with a class's implicit (or defaulted) assignment operator, whose body libclang
        does not show: ``a``'s members become ``b``'s (see ``_assigned``)."""
        target, value = self.lvalue_key(arg_cursors[0]), self.eval(arg_cursors[1])
        if target is not None:
            self._assigned(target, arg_cursors[1], value, origin)
        return value

    def _assigned(self, key: Key, source: ci.Cursor, value: Value, origin: Loc) -> None:
        """``key``'s members after ``key = source``: the source's where it is storage the interpreter
        knows (``c = preset``); else forgotten (``c = *reinterpret_cast<Config *>(p)``), as run-time
        data where the source is."""
        src = self.lvalue_key(source) or self._copy_source(source)
        if src is not None:
            self._copy_members(src, key)
            return
        why = first_runtime((value,))
        for k in [k for k in self.env if self._inside(k, key)]:
            self.env[k] = Unknown(f"assigned at line {origin.line}", origin, runtime=why)

    def _bindings(self, decl: ci.Cursor) -> None:
        """``auto [a, b] = expr;``: the names are parts of an object (a tensor's dimensions, a pair
        a call returned): runtime data here, each with where it comes from."""
        kids = list(clangext.children(decl))
        names = [c for c in kids if c.kind == K.UNEXPOSED_DECL]
        init = [c for c in kids if c.kind.is_expression()]
        if not names or not init:
            return
        value = self.eval(init[-1])
        origin = loc_of(decl)
        source = written(init[-1])
        for n in names:
            self.store(self._binding_key(n.spelling),
                       Unknown(f"{n.spelling} is runtime data (a part of {source}, line {origin.line})"
                               if not isinstance(value, Known) else f"{n.spelling}: a part of {source}",
                               loc_of(n), runtime="" if isinstance(value, Known) else f"a part of `{source}`"))

    def _binding_key(self, name: str) -> Key:
        return ("binding", self.frame.id if self.frames else 0, name)

    def _binding(self, name: str) -> Value | None:
        """The value of a structured binding of this frame, by name (in an expression libclang
        could not type, the reference to it has no cursor of the binding); None: no such binding."""
        return self.env.get(self._binding_key(name))

    def _delegated(self, ctor: ci.Cursor, type_ref: ci.Cursor, init: ci.Cursor) -> None:
        """A constructor's delegation to another of its class, or its base class's construction:
        run that constructor on the same object."""
        this_key = self.frame.this_key
        inner = strip(init)
        if inner.kind == K.CALL_EXPR and inner.referenced is not None and inner.referenced.kind == K.CONSTRUCTOR:
            self._construct(this_key, inner)
            return
        # in a class template's pattern the call is not resolved: ``Bench<T>(a, b)`` is a list of
        # arguments; take the one constructor of that class those arguments fit
        args = expr_children(init) if init.kind == K.UNEXPOSED_EXPR else [init]
        record = type_ref.referenced
        if record is None:
            return
        fits = []
        for c in clangext.children(record):
            if c.kind != K.CONSTRUCTOR or c == ctor:
                continue
            params = [p for p in clangext.children(c) if p.kind == K.PARM_DECL]
            required = sum(1 for p in params if not expr_children(p))
            if required <= len(args) <= len(params):
                fits.append(c)
        if len(fits) != 1:
            return
        target = fits[0] if fits[0].is_definition() else fits[0].get_definition()
        if target is None:
            return
        values = [self.eval(a) for a in args]
        self.sites.append(loc_of(init))
        try:
            self.invoke(target, args, values, this_key=this_key)
        finally:
            self.sites.pop()

