"""How the interpreter runs loops (mixed into ``Interpreter``): a loop's body runs once, as code
that may not run (a ``do``'s first run is not conditional), and a ``for``'s increment after the body.
A value returned inside the body that reads what changes per iteration is unknown (``loops.py``)."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.clang import clangext

from fusionlint.frontend.interp import loops
from fusionlint.frontend.interp.choices import condition_runtime
from fusionlint.frontend.clang.cursors import loc_of, strip, written
from fusionlint.model.values import Known, Unknown, Value, first_runtime

K = ci.CursorKind
MAX_UNROLLED = 16  # iterations of a loop whose every iteration is known, each run on its own


def _straight(loop: ci.Cursor) -> bool:
    """A loop body that runs to its end every iteration: no ``return``, ``break``, ``continue`` or
    ``goto`` (lambdas aside)."""
    if loops.jumps_in(loop):
        return False
    stack = list(loop.get_children())
    while stack:
        c = stack.pop()
        if c.kind == K.RETURN_STMT:
            return False
        if c.kind != K.LAMBDA_EXPR:
            stack.extend(c.get_children())
    return True


def _few_iterations(interp, stmt: ci.Cursor, parts: loops.ForParts) -> bool:
    """Whether a counted loop ends within ``MAX_UNROLLED`` iterations: its condition, tested on a copy
    of the state after each increment, turns false in time (the body's effects aside)."""
    saved = dict(interp.env)
    try:
        for _ in range(MAX_UNROLLED + 1):
            cond = interp.eval(parts.cond)
            if not isinstance(cond, Known):
                return False
            if not cond.value:
                return True
            if parts.inc is None:
                return False
            interp.exec(parts.inc)
        return False
    finally:
        interp.env = saved


class LoopsMixin:
    """Loops, for ``Interpreter``."""

    def _exec_do(self, stmt: ci.Cursor) -> None:
        kids = list(clangext.children(stmt))
        self.frame.loops.append((stmt, self.cond_depth))  # the first run of the body is not conditional
        try:
            if kids:
                self.exec(kids[0])  # the body runs at least once
            if len(kids) > 1:
                cond = self.eval(kids[1])
                if not (isinstance(cond, Known) and not cond.value):
                    self._exec_conditionally([kids[0]])
        finally:
            self.frame.loops.pop()

    def _exec_loop(self, stmt: ci.Cursor) -> None:
        """Run a loop's body (and a ``for``'s increment after it) once, as code that may not run; a loop
        whose every iteration is known (``_unrolled``) runs each of them."""
        if stmt.kind == K.CXX_FOR_RANGE_STMT and self._range_unrolled(stmt):
            return
        if stmt.kind == K.FOR_STMT:
            parts = loops.for_parts(stmt)
            if parts.init is not None:
                self.exec(parts.init)
            if self._unrolled(stmt, parts):
                return
            heads, body = [parts.cond], [parts.body, parts.inc]
        else:
            kids = list(clangext.children(stmt))
            heads, body = kids[:-1], kids[-1:]
        conds = []
        for k in heads:
            if k is None:
                continue
            if k.kind == K.VAR_DECL:
                self.declare(k)
            elif k.kind.is_expression():
                conds.append((k, self.eval(k)))
        runtime = next((condition_runtime(written(k) or "?", stmt.location.line, v) for k, v in conds
                        if first_runtime((v,))), "")
        body = [b for b in body if b is not None]
        if body:
            self.frame.loops.append((stmt, self.cond_depth + 1))
            try:
                self._exec_conditionally(body, reason=f"loop at line {stmt.location.line}", runtime=runtime)
            finally:
                self.frame.loops.pop()

    def _unrolled(self, stmt: ci.Cursor, parts: loops.ForParts) -> bool:
        """``for (int i = 0; i < 3; ++i)``: while the condition is known, each iteration runs as code
        that does run (each GEMM in it with that iteration's values: a table of configurations), at
        most ``MAX_UNROLLED`` of them. False (nothing run) when the first test is not known, the body
        may jump out, or the count is larger: the loop then runs once, as code that may not run."""
        if parts.cond is None or parts.body is None or not _straight(stmt):
            return False
        first = self.eval(parts.cond)
        if not isinstance(first, Known) or not first.value or not _few_iterations(self, stmt, parts):
            return False
        self.frame.loops.append((stmt, self.cond_depth))  # a condition that varies per iteration is no choice
        try:
            for _ in range(MAX_UNROLLED):
                cond = self.eval(parts.cond)
                if not isinstance(cond, Known) or not cond.value:
                    return True
                self.exec(parts.body)
                if self.frame.done:
                    return True
                if parts.inc is not None:
                    self.exec(parts.inc)
        finally:
            self.frame.loops.pop()
        return True

    def _range_unrolled(self, stmt: ci.Cursor) -> bool:
        """``for (const Cfg &c : kConfigs)`` over an array of known length (at most ``MAX_UNROLLED``):
        each element bound to the loop variable in turn, each iteration run as code that does run."""
        kids = list(clangext.children(stmt))
        var = next((k for k in kids if k.kind == K.VAR_DECL), None)
        ranges = [k for k in kids[:-1] if k.kind.is_expression()]
        if var is None or not ranges or not _straight(stmt):
            return False
        array = strip(ranges[0])
        count = array.type.get_canonical().get_array_size() if array.type.get_canonical().kind == \
            ci.TypeKind.CONSTANTARRAY else -1
        base = self.lvalue_key(array) if 0 < count <= MAX_UNROLLED else None
        if base is None:
            return False
        target = self.var_key(var)
        self.frame.loops.append((stmt, self.cond_depth))
        try:
            for i in range(count):
                element = ("elem", base, i)
                self.store(target, self.load(element, loc_of(var)))
                self._copy_members(element, target)
                self.exec(kids[-1])
                if self.frame.done:
                    break
        finally:
            self.frame.loops.pop()
        return True

    def _varies_per_iteration(self, cond: ci.Cursor) -> bool:
        """Does ``cond`` read a variable that a loop running now changes from one iteration to the next
        (``addr % a == 0`` while ``a`` halves)? Forcing it one way would force every iteration so."""
        return any(loops.reads_any(cond, self._varying(loop)) for loop, _ in self.frame.loops)

    def _iteration_return(self, expr: ci.Cursor, value: Known) -> Value:
        """A value returned inside a loop's body, which runs once here: unknown when it reads a variable
        that changes from one iteration to the next (which iteration returns is not known), unless
        every iteration that gets there returns: then it is the first one's."""
        frame = self.frame
        for i, (loop, _depth) in enumerate(frame.loops):
            name = loops.reads_any(expr, self._varying(loop))
            if name is not None and not self._first_iteration_returns(frame.loops[i:]):
                return Unknown(f"which iteration of the loop at line {loop.location.line} returns is not known "
                               f"({name} changes in it)", value.origin, value.ctype,
                               runtime=next((r for r in self.cond_runtime[frame.cond_base:] if r), ""))
        return value

    def _first_iteration_returns(self, nest: list[tuple[ci.Cursor, int]]) -> bool:
        """Is this point of the run reached on the first iteration of each loop of ``nest`` (a loop
        and the ones inside it that run now, with the branch depth their bodies run at), whatever the
        data: no branch between the loop's body and here, and no ``break``/``continue``/``goto`` in it?"""
        depths = [d for _, d in nest]
        return self.cond_depth == depths[-1] and all(b == a + 1 for a, b in zip(depths, depths[1:])) \
            and not any(loops.jumps_in(loop) for loop, _ in nest)
