"""Objects the interpreter models beyond plain storage (mixed into ``Interpreter``): the
standard library's smart pointers (the pointer they hold is the object's value), structured
bindings (runtime data, with where they come from) and constructors that delegate to another
constructor or build a base class."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.clang.cursors import expr_children, loc_of, strip, written
from fusionlint.model.values import Key, Known, Loc, Unknown, Value, first_runtime

K = ci.CursorKind

_SMART_POINTERS = {"unique_ptr", "shared_ptr"}


def is_smart_pointer(cls: ci.Cursor | None) -> bool:
    """Is ``cls`` the standard library's ``unique_ptr`` or ``shared_ptr`` (a class of namespace std)?"""
    if cls is None or cls.spelling not in _SMART_POINTERS:
        return False
    parent = cls.semantic_parent
    while parent is not None and parent.kind == K.NAMESPACE and parent.spelling != "std":
        parent = parent.semantic_parent  # an inline namespace such as __1 (libc++)
    return parent is not None and parent.kind == K.NAMESPACE and parent.spelling == "std"


class ObjectsMixin:
    """Smart pointers, structured bindings and constructor delegation."""

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

