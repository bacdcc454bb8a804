"""What the interpreter needs to know about a loop it runs once: the parts of a ``for`` header, and
which variables change from one iteration to the next.

The interpreter runs a loop's body once, as a branch that may not run. A variable the body writes
comes out of the loop unknown (the merge sees two values), but a ``return`` inside the body sees
the first iteration's values: ``for (a = 256;; a /= 2) if (addr % a == 0) return a;`` would return
256. ``varying_in`` names what changes per iteration, so such a return is unknown instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.clang.cursors import strip_casts

K = ci.CursorKind
T = TypeVar("T")
_WRITES = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=")


@dataclass(frozen=True)
class ForParts:
    """A ``for`` statement's header, by part; a part left empty is None."""

    init: ci.Cursor | None
    cond: ci.Cursor | None
    inc: ci.Cursor | None
    body: ci.Cursor | None


def for_parts(stmt: ci.Cursor) -> ForParts:
    """Split a FOR_STMT into its parts. libclang leaves empty parts out of the children, so the
    header's two top-level ``;`` tell which part a child is."""
    kids = list(clangext.children(stmt))
    body = kids[-1] if kids else None
    semis = _header_semicolons(stmt)
    parts: list[ci.Cursor | None] = [None, None, None]
    for k in kids[:-1]:
        if len(semis) < 2:  # the header could not be read: keep the children's order
            slot = parts.index(None) if None in parts else 2
        else:
            offset = k.extent.start.offset
            slot = 0 if offset < semis[0] else 1 if offset < semis[1] else 2
        parts[slot] = k
    return ForParts(parts[0], parts[1], parts[2], body)


def _header_semicolons(stmt: ci.Cursor) -> list[int]:
    """Offsets of the two ``;`` of a ``for (init; cond; inc)`` header (fewer when it is not plain text,
    e.g. written through a macro)."""
    depth, found = 0, []
    for t in stmt.get_tokens():
        s = t.spelling
        if s in ("(", "[", "{"):
            depth += 1
        elif s in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                break
        elif s == ";" and depth == 1:
            found.append(t.extent.start.offset)
    return found[:2]


def written_in(code: ci.Cursor) -> tuple[dict[str, str], list[ci.Cursor]]:
    """The variables (USR -> name) that ``code`` may change: those it assigns, increments, or hands
    out by non-const reference or by address (except as a pointer-to-const argument, which is read:
    ``SetAttribute(desc, attr, &value, sizeof value)``); and the variables it declares."""
    written: dict[str, str] = {}
    decls: list[ci.Cursor] = []
    read_only: set[int] = set()  # ``&x`` arguments handed to pointer-to-const parameters
    stack = list(code.get_children())
    while stack:
        c = stack.pop()
        if c.kind == K.LAMBDA_EXPR:
            continue
        if c.kind == K.VAR_DECL:
            decls.append(c)
        elif c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and \
                clangext.binary_operator(c) in _WRITES:
            _note_target(next(iter(c.get_children()), None), written)
        elif c.kind == K.UNARY_OPERATOR and clangext.unary_operator(c) in ("++", "--") or \
                c.kind == K.UNARY_OPERATOR and clangext.unary_operator(c) == "&" and c.hash not in read_only:
            _note_target(next(iter(c.get_children()), None), written)
        elif c.kind == K.CALL_EXPR:
            ref = c.referenced
            params = list(ref.get_arguments()) if ref is not None else []
            for i, a in enumerate(clangext.arguments(c)):
                if i < len(params) and _mutable_reference(params[i].type):
                    _note_target(a, written)
                elif i < len(params) and _pointer_to_const(params[i].type):
                    inner = strip_casts(a)
                    if inner.kind == K.UNARY_OPERATOR:
                        read_only.add(inner.hash)
        stack.extend(c.get_children())
    return written, decls


def changed_in(code: ci.Cursor) -> set[str]:
    """The variables ``code`` may change (``written_in``), by ``variable_id``."""
    return set(written_in(code)[0])


class PerCode(Generic[T]):
    """``compute(code)`` kept per piece of code (a function, a loop), by where it is written: the
    interpreter asks again for each call of a function and each run of a loop."""

    def __init__(self, compute: Callable[[ci.Cursor], T]) -> None:
        self._compute = compute
        self._kept: dict[tuple[str, int], T] = {}

    def __call__(self, code: ci.Cursor) -> T:
        key = (code.location.file.name if code.location.file else "", code.extent.start.offset)
        if key not in self._kept:
            self._kept[key] = self._compute(code)
        return self._kept[key]


def varying_in(loop: ci.Cursor) -> dict[str, str]:
    """The variables (USR -> name) whose value may differ from one iteration of ``loop`` to the
    next: those it changes (``written_in``), its range variable, and the ones it declares from those."""
    written, decls = written_in(loop)
    if loop.kind == K.CXX_FOR_RANGE_STMT:
        first = next(iter(loop.get_children()), None)
        if first is not None and first.kind == K.VAR_DECL:
            written[variable_id(first)] = first.spelling
    changed = True
    while changed:  # a variable declared in the body from one that varies varies too
        changed = False
        for d in decls:
            u = variable_id(d)
            if u not in written and reads_any(d, written):
                written[u] = d.spelling
                changed = True
    return written


def jumps_in(loop: ci.Cursor) -> bool:
    """Does ``loop`` hold a ``break``, ``continue`` or ``goto`` (the interpreter does not follow them)?"""
    stack = list(loop.get_children())
    while stack:
        c = stack.pop()
        if c.kind in (K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT):
            return True
        if c.kind != K.LAMBDA_EXPR:
            stack.extend(c.get_children())
    return False


def reads_any(expr: ci.Cursor, names: dict[str, str]) -> str | None:
    """The name of the first variable of ``names`` (USR -> name) that ``expr`` reads, if any."""
    stack = [expr]
    while stack:
        c = stack.pop()
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
            u = variable_id(c.referenced)
            if u in names:
                return names[u]
        if c.kind != K.LAMBDA_EXPR:
            stack.extend(c.get_children())
    return None


def _note_target(target: ci.Cursor | None, written: dict[str, str]) -> None:
    """Note the variable a write goes to: ``x = …``, ``s.f = …``, ``a[i] = …``, ``&x``."""
    while target is not None and target.kind != K.DECL_REF_EXPR:
        kids = list(target.get_children())
        if target.kind == K.ARRAY_SUBSCRIPT_EXPR or kids:
            target = kids[0] if kids else None
        else:
            return
    if target is not None and target.referenced is not None and target.referenced.kind in (K.VAR_DECL, K.PARM_DECL):
        written[variable_id(target.referenced)] = target.referenced.spelling


def _mutable_reference(t: ci.Type) -> bool:
    canon = t.get_canonical()
    return canon.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE) and \
        not canon.get_pointee().is_const_qualified()


def _pointer_to_const(t: ci.Type) -> bool:
    canon = t.get_canonical()
    return canon.kind == ci.TypeKind.POINTER and canon.get_pointee().is_const_qualified()


def variable_id(decl: ci.Cursor) -> str:
    """The key of a variable in what ``written_in`` and ``varying_in`` return."""
    return decl.get_usr() or f"{decl.spelling}@{decl.extent.start.offset}"
