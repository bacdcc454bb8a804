"""Lambdas in the interpreter (mixed into ``Interpreter``): a lambda expression's value is a
``Closure`` that remembers the frame that made it; calling it (a lambda variable, a
``std::function`` holding one, a lambda called where it is written) runs its body in a frame whose
``outer`` is that frame, so its captures are read where they live; a lambda handed to a function
without a body here may run, once, conditionally."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.interp.choices import merge_outcomes
from fusionlint.frontend.clang.cursors import strip
from fusionlint.frontend.interp.frames import Closure, Frame
from fusionlint.model.values import Loc, Unknown, Value

K = ci.CursorKind


class LambdaMixin:
    """Calls of lambdas and the frames their captures are read in."""

    def _called_closure(self, cursor: ci.Cursor, ref: ci.Cursor | None, callee: ci.Cursor | None) -> Closure | None:
        """The lambda a call runs: ``f()`` of a lambda variable or parameter, of a ``std::function``
        holding one, or a lambda called where it is written (``[&] { ... }()``)."""
        if ref is None or ref.spelling != "operator()" or callee is None:
            return None
        if callee.kind not in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR, K.LAMBDA_EXPR):
            return None  # only reads without side effects are evaluated here
        value = self.eval(callee)
        return value if isinstance(value, Closure) and value.lambda_expr is not None else None

    def call_closure(self, closure: Closure, arg_cursors: list[ci.Cursor], args: list[Value], origin: Loc) -> Value:
        """Run a lambda's body with ``args``, its captures read in the frame it was made in."""
        if closure.lambda_expr is None:
            return Unknown("lambda", origin)
        if arg_cursors and len(arg_cursors) == len(args) and isinstance(args[0], Closure) \
                and args[0].lambda_expr == closure.lambda_expr:
            arg_cursors, args = arg_cursors[1:], args[1:]  # an operator call's object is its first argument
        this_key = closure.frame.this_key if closure.frame is not None else None
        self.sites.append(origin)
        try:
            return self.invoke(closure.lambda_expr, arg_cursors, args, this_key=this_key, outer=closure.frame)
        finally:
            self.sites.pop()

    def _maybe_called(self, closure: Closure, reason: str, origin: Loc) -> None:
        """A lambda that a function without a body here receives: it may run, once or more, with
        arguments not known here (its writes merge as those of a branch)."""
        before = dict(self.env)
        frame_done = self.frame.done if self.frames else False
        with self._undecided() as arms:
            self._enter_arm(arms)
            try:
                self.call_closure(closure, [], [], origin)
            finally:
                if self.frames:
                    self.frame.done = frame_done
        self.env = merge_outcomes(before, [dict(self.env), before], reason, ())

    def _frame_of(self, decl: ci.Cursor) -> Frame:
        """The frame that holds ``decl``, a local or parameter: inside a lambda, one it captures
        belongs to the frame the lambda was made in."""
        frame = self.frame
        while frame.outer is not None and frame.extent is not None:
            loc = decl.location
            name = loc.file.name if loc.file is not None else ""
            if name == frame.extent[0] and frame.extent[1] <= loc.offset <= frame.extent[2]:
                break
            frame = frame.outer
        return frame

    def _held_closure(self, ctor_call: ci.Cursor) -> Closure | None:
        """The lambda a library wrapper (``std::function``) is built from, if that is what it is."""
        args = clangext.arguments(ctor_call)
        if len(args) != 1 or self._callee_definition(ctor_call) is not None:
            return None
        arg = strip(args[0])
        if arg.kind not in (K.LAMBDA_EXPR, K.DECL_REF_EXPR, K.MEMBER_REF_EXPR):
            return None
        value = self.eval(arg)
        return value if isinstance(value, Closure) else None

