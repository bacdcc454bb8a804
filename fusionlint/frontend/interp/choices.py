"""Runtime choices in the interpreter: an ``if``, a ``?:`` or a ``switch`` whose
condition is not known. Unforced, the interpreter merges their paths and the values that differ
name the choice (``Unknown.choices``); forced (``Interpreter.decisions``, set by
``alternatives.py``), only the chosen alternative runs and the run records it (``taken``).
The ``switch`` statement is read here in both cases."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import clang.cindex as ci

from fusionlint.frontend.clang import clangext

from fusionlint.frontend.interp import loops, nullness
from fusionlint.frontend.clang.cursors import expr_children, function_label, is_constexpr, loc_of, strip, written
from fusionlint.frontend.interp.frames import Frame
from fusionlint.model.values import Key, Known, Loc, Unknown, Value, first_runtime, runtime_of, runtime_source, same

K = ci.CursorKind
_PARAMETER = re.compile(r"^\w+ is a parameter of .*its value comes from the caller$")
_ABSENT = object()
POINTER_ARMS = ("non-null", "null")  # the arms of a choice on whether a pointer is null


@dataclass(frozen=True)
class Choice:
    """A runtime choice the interpreter met with an unknown condition: an ``if``, a ``?:`` or a
    ``switch``. ``key`` is the same for the same condition written again in the same function (so
    that ``if (flag)`` and a later ``flag ? a : b`` are decided together); ``arms`` names the
    alternatives ("true", "false"; or the case labels)."""

    key: str
    text: str  # the condition as written (``!`` taken off: the arms are those of the rest)
    loc: Loc
    arms: tuple[str, ...]
    # decided by a value fixed before the program runs that fusionlint does not know (a constant of
    # a header found nowhere; this says which, "" for a runtime choice): one arm is taken every time,
    # not known which, so its alternatives are not checked one by one (alternatives._keys) and the
    # values it decides stay unknown
    fixed: str = ""
    # decided when the template is instantiated: the condition reads template parameters and
    # constants only (``std::is_same<T, half>::value``, ``sizeof(T) == 2``), no input of the program
    # (see ``decided_by_types``); a finding on one of its arms holds for every instantiation that takes it
    compile_time: bool = False

    def says(self, arm: int) -> str:
        """The condition under which alternative ``arm`` runs, for a message."""
        return f"`{self.text}` is {self.arms[arm]} (line {self.loc.line})"


@dataclass(frozen=True)
class Assumption:
    """One runtime choice taken one way: ``choice`` with alternative ``arm``."""

    choice: Choice
    arm: int

    def __str__(self) -> str:
        return self.choice.says(self.arm)


def covers_enum(cond: ci.Cursor, labels: list[Value]) -> bool:
    """Do the case labels name every enumerator of the switch value's enum type?"""
    t = strip(cond).type.get_canonical()
    if t.kind != ci.TypeKind.ENUM:
        return False
    decl = t.get_declaration()
    values = {c.enum_value for c in clangext.children(decl) if c.kind == K.ENUM_CONSTANT_DECL}
    seen = {v.value for v in labels if isinstance(v, Known)}
    return bool(values) and values <= seen


def merge_outcomes(before: dict[Key, Value], outcomes: list[dict[Key, Value]], reason: str,
                   choices: tuple[str, ...] = (), runtime: str = "") -> dict[Key, Value]:
    """The state after alternatives run from ``before``: a value that differs between the
    ``outcomes`` becomes Unknown ("set differently on paths through the REASON"), naming the runtime
    ``choices`` that decide between them (``runtime``: the run-time data the choice is made on, when
    it is known to be some: see ``condition_runtime``). Every outcome starts as a copy of ``before`` and the
    interpreter never removes a key, so a key whose value is the very object it was before in
    every outcome stays as it is; only the others are compared."""
    merged: dict[Key, Value] = dict(before)
    changed = {k for o in outcomes if o is not before for k, v in o.items() if before.get(k, _ABSENT) is not v}
    for key in changed:
        vals = [o.get(key) for o in outcomes]
        first = vals[0]
        if first is not None and all(v is first or (v is not None and same(first, v)) for v in vals[1:]):
            merged[key] = first
        else:
            known = next((v for v in vals if v is not None), None)
            # the choices an outcome already differed by (an earlier branch) decide it too
            inner = tuple(dict.fromkeys(c for v in vals if isinstance(v, Unknown) for c in v.choices))
            merged[key] = Unknown(f"set differently on paths through the {reason}", getattr(known, "origin", None),
                                  choices=tuple(dict.fromkeys((*choices, *inner))), runtime=runtime)
    return merged


# what the interpreter says of a constant the partial-parse recovery declared (interp._decl_ref)
FOUND_NOWHERE = "declared by a header found nowhere (its value is not known)"


def is_fixed_unknown(value: Value) -> bool:
    """A value fixed before the program runs that fusionlint does not know: a constant of a header
    found nowhere (not run-time data: the same in every run)."""
    return isinstance(value, Unknown) and not value.runtime and FOUND_NOWHERE in value.reason


def fixed_note(value: Value) -> str:
    """What a merge reason adds when the condition is a value fixed before the program runs that
    fusionlint does not know (``is_fixed_unknown``): which one; else ""."""
    return f", decided by {value.reason}" if is_fixed_unknown(value) else ""


def fixed_choices_note(keys: Iterable[str], choices: dict[str, Choice]) -> str:
    """``fixed_note`` for a merge of paths some of whose ``keys`` are fixed choices (see ``Choice.fixed``)."""
    said = [choices[k].fixed for k in keys if k in choices and choices[k].fixed]
    return f", decided by {'; '.join(dict.fromkeys(said))}" if said else ""


def condition_runtime(text: str, line: int, value: Value | None) -> str:
    """The run-time data a branch is decided on: its condition ``text`` (written at ``line``), when
    the condition's ``value`` is known to be run-time data; else ""."""
    why = runtime_source(runtime_of(value))
    return f"the condition `{text}` at line {line}, on {why}" if why else ""


class ChoiceMixin:
    """The interpreter's handling of runtime choices (mixed into ``Interpreter``)."""

    def root_usr(self) -> str:
        """The USR of the function this run started from."""
        return (self.frames[0].function.get_usr() or "") if self.frames else ""

    def _choice(self, cond: ci.Cursor, arms: tuple[str, ...]) -> tuple[Choice, bool, ci.Cursor | None]:
        """The choice an unknown condition makes (``negated``: written as ``!x``, whose arms are
        those of ``x`` swapped), and the pointer it tests against null when it does."""
        c, negated = strip(cond), False
        while clangext.kind(c) == K.UNARY_OPERATOR and len(arms) == 2:
            tokens = [t.spelling for t in c.get_tokens()]
            kids = expr_children(c)
            if not tokens or tokens[0] != "!" or len(kids) != 1:
                break
            c, negated = strip(kids[0]), not negated
        tested = c  # where the condition is written, for messages (and the order of choices)
        pointer = nullness.pointer_test(c, self._written_in) if len(arms) == 2 else None
        if pointer is not None:  # ``bias``, ``bias != nullptr``, ``has_bias``: whether ``bias`` is null
            c, negated, arms = pointer[0], negated != pointer[1], POINTER_ARMS
        text = written(c) or c.spelling or "?"
        fn = (self.frames[-1].function.get_usr() or self.frames[-1].function.spelling) if self.frames else ""
        tail = '|'.join(arms) if len(arms) != 2 or pointer is not None else ''
        key = f"{fn}|{text}|{tail}"
        if c.kind == K.DECL_REF_EXPR:
            key = self._variable_choice_key(c.referenced, self.eval(c), tail) or key
        choice = self.choices.get(key)
        if choice is None:
            value = self.eval(c) if not calls_defined_code(c) else None
            choice = Choice(key, text, loc_of(tested), arms,
                            fixed=f"`{text}`: {value.reason}" if is_fixed_unknown(value) else "",
                            compile_time=pointer is None and decided_by_types(c))
        return choice, negated, c if pointer is not None else None

    @staticmethod
    def _variable_choice_key(ref: ci.Cursor | None, value: Value, tail: str = "") -> str | None:
        """The choice key of a condition that reads one variable ``ref`` (whose value is ``value``)."""
        if isinstance(value, Unknown) and value.origin is not None and (
                _PARAMETER.search(value.reason) or ref is not None and ref.kind == K.PARM_DECL):
            # a variable holding a root function's parameter: one choice wherever it is read; a
            # parameter of a function called more than once (``ToCudaDataType(dtype_A)``,
            # ``ToCudaDataType(dtype_B)``): one choice per value it is called with, not one for all
            return f"parameter|{value.origin.path}:{value.origin.line}:{value.origin.column}|{tail}"
        if ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL):
            # one variable is one choice in every function that reads it: a lambda that captures
            # it (PyTorch's ``[&] { return bias ? EPILOGUE_BIAS : ... }()`` and ``if (bias)``)
            d = loc_of(ref)
            return f"variable|{d.path}:{d.line}:{d.column}|{tail}"
        return None

    def _null_by_decision(self, decl: ci.Cursor, value: Value) -> Value:
        """A pointer variable's value as it is bound: null when this run is forced down the side of a
        pointer choice where it is (the choice may be read after the pointer is used: a bias pointer
        set before ``epilogue = bias ? … : …``)."""
        if self.decisions and decl.type.get_canonical().kind == ci.TypeKind.POINTER:
            key = self._variable_choice_key(decl, value, "|".join(POINTER_ARMS))
            fn = decl.semantic_parent
            if key is not None and self.decisions.get(key) == 1 and fn is not None \
                    and loops.variable_id(decl) not in self._written_in(fn):  # the same pointer until its test
                if not any(a.choice.key == key for a in self.taken):  # the run goes that way from here
                    choice = self.forced.get(key) or Choice(key, decl.spelling, loc_of(decl), POINTER_ARMS)
                    self.taken.append(Assumption(choice, 1))
                return Known(0, loc_of(decl), via=f"null here ({decl.spelling} is null)", ctype=decl.type.spelling)
        return value

    def _decide(self, cond: ci.Cursor, arms: tuple[str, ...] = ("true", "false")) -> tuple[int | None, Choice]:
        """The alternative forced for this unknown condition (its index in ``arms``), or None
        (then the choice is recorded as met)."""
        choice, negated, pointer = self._choice(cond, arms)
        if self.frames and self.frame.loops and self._varies_per_iteration(cond):
            return None, choice  # a condition of its own in each iteration: no one choice to force
        arm = self.decisions.get(choice.key)
        if arm is None:
            self.choices.setdefault(choice.key, choice)
            return None, choice
        if not any(a.choice.key == choice.key for a in self.taken):
            self.taken.append(Assumption(choice, arm))
        if pointer is not None and arm == 1:
            self._is_null(pointer)
        return (1 - arm if negated else arm), choice

    def _is_null(self, pointer: ci.Cursor) -> None:
        """On the side of a pointer choice where the pointer (its DECL_REF_EXPR) is null: it is, from
        here on."""
        key = self.lvalue_key(pointer)
        if key is not None:
            self.env[key] = Known(0, loc_of(pointer), via=f"null here ({written(pointer)} is null)",
                                  ctype=pointer.type.spelling)

    def _decide_condition(self, cond: ci.Cursor) -> tuple[int | None, tuple[str, ...]]:
        """A two-way condition's forced alternative (0: true, 1: false, None: not forced) and the
        choices it depends on. ``a && b`` and ``a || b`` are decided operand by operand, each its own
        choice, so that ``if (flag)`` and a later ``if (other && flag)`` agree on ``flag``; an
        operand with a call into the file's own code is not read twice, and the whole condition is
        then one choice."""
        c = strip(cond)
        while c.kind == K.CALL_EXPR and c.spelling == "operator bool":  # a stand-in's test: obj.operator bool()
            member = next((k for k in c.get_children() if k.kind == K.MEMBER_REF_EXPR), None)
            obj = next(iter(member.get_children()), None) if member is not None else None
            if obj is None:
                break
            c = strip(obj)
        op, kids = "", []
        if clangext.kind(c) == K.BINARY_OPERATOR:
            op = clangext.binary_operator(c)
            kids = expr_children(c) if op in ("&&", "||") else []
        elif c.kind == K.CALL_EXPR and c.spelling in ("operator&&", "operator||"):  # on stand-in types
            op, kids = c.spelling[len("operator"):], clangext.arguments(c)
        if len(kids) == 2 and not any(calls_defined_code(k) for k in kids):
            keys: tuple[str, ...] = ()
            sides: list[bool | None] = []
            for k in kids:
                v = self.eval(k)
                if isinstance(v, Known):
                    side = bool(v.value)
                else:
                    arm, more = self._decide_condition(k)
                    keys += tuple(x for x in more if x not in keys)
                    side = None if arm is None else arm == 0
                if side is (op == "||"):  # false && ..., true || ...: decided by this operand
                    return (0 if side else 1), keys
                sides.append(side)
            if None in sides:
                return None, keys
            return (0 if (all(sides) if op == "&&" else any(sides)) else 1), keys
        arm, choice = self._decide(cond)
        return arm, (choice.key,)

    def _exec_switch(self, stmt: ci.Cursor) -> None:
        """A ``switch``: with a known value (or a forced choice) only the case it selects runs, up to
        its ``break``; else every case from the same state, merged."""
        kids = list(clangext.children(stmt))
        if len(kids) < 2:
            return
        for k in kids[:-2]:  # switch (init; value)
            self.declare(k) if k.kind == K.VAR_DECL else self.exec(k)
        cond_c, body = kids[-2], kids[-1]
        cond = self.eval(cond_c)
        stmts = list(clangext.children(body)) if body.kind == K.COMPOUND_STMT else [body]
        arms: list[tuple[str, list[Value], int]] = []  # (label text, label values, index in stmts)
        for i, st in enumerate(stmts):
            labels, values, c = [], [], st
            while c.kind in (K.CASE_STMT, K.DEFAULT_STMT):
                inner = list(clangext.children(c))
                if c.kind == K.CASE_STMT and inner:
                    labels.append("`" + written(inner[0]) + "`")
                    values.append(self.eval(inner[0]))
                else:
                    labels.append("none of the cases")
                    values.append(Known("default"))
                c = inner[-1] if inner else c
                if not inner:
                    break
            if labels:
                arms.append((" or ".join(labels), values, i))
        if not arms:
            return
        has_default = any(any(isinstance(v, Known) and v.value == "default" for v in vals) for _, vals, _ in arms)
        if not has_default and covers_enum(cond_c, [v for _, vals, _ in arms for v in vals]):
            has_default = True  # every enumerator has its case: no value runs none of them
        chosen: int | None = None  # index into arms; len(arms): no case runs
        if isinstance(cond, Known):
            matching = [j for j, (_, vals, _) in enumerate(arms) if any(same(v, cond) for v in vals)]
            defaults = [j for j, (_, vals, _) in enumerate(arms)
                        if any(isinstance(v, Known) and v.value == "default" for v in vals)]
            if matching or defaults or all(all(isinstance(v, Known) for v in vals) for _, vals, _ in arms):
                chosen = (matching or defaults or [len(arms)])[0]
        choice = None
        if chosen is None:
            labels = tuple(label for label, _, _ in arms) + (() if has_default else ("none of the cases",))
            arm, choice = self._decide(cond_c, labels)
            chosen = arm
        if chosen is not None:
            if chosen < len(arms):
                self._run_case(stmts, arms[chosen][2])
            return
        self._branches_of_cases(stmts, [i for _, _, i in arms], has_default, stmt, choice,
                                condition_runtime(written(cond_c) or "?", stmt.location.line, cond), fixed_note(cond))

    def _run_case(self, stmts: list[ci.Cursor], start: int) -> None:
        """Run a switch body from the case at ``start`` to the first ``break`` (falling through)."""
        for st in stmts[start:]:
            c = st
            while c.kind in (K.CASE_STMT, K.DEFAULT_STMT):
                inner = list(clangext.children(c))
                if not inner:
                    break
                c = inner[-1]
            if c.kind == K.BREAK_STMT:
                return
            if c.kind == K.COMPOUND_STMT:
                inner = list(clangext.children(c))
                for s2 in inner:
                    if s2.kind == K.BREAK_STMT:
                        return
                    self.exec(s2)
                    if self.frame.done:
                        return
                continue
            self.exec(c)
            if self.frame.done:
                return

    def _branches_of_cases(self, stmts: list[ci.Cursor], starts: list[int], has_default: bool,
                           stmt: ci.Cursor, choice: Choice | None, runtime: str = "", note: str = "") -> None:
        """Every case of a switch whose value is not known, each from the same state, merged
        (``runtime``: the run-time data the switch is on, see ``condition_runtime``; ``note``: what
        the merge reason adds, see ``fixed_note``)."""
        before = dict(self.env)
        frame = self.frame
        saved_done = frame.done
        outcomes: list[dict[Key, Value]] = []
        with self._undecided(runtime, (choice.key,) if choice is not None else ()) as arms:
            for start in starts:
                self.env = dict(before)
                self._enter_arm(arms)
                self._run_case(stmts, start)
                frame.done = saved_done
                if frame.dead:  # the case throws (or never returns): its state does not go on
                    frame.dead = False
                    continue
                outcomes.append(self.env)
        if not has_default:
            outcomes.append(before)
        if not outcomes:  # every case ends here
            self.env, frame.dead, frame.done = before, True, True
            return
        self.env = merge_outcomes(before, outcomes, f"switch at line {stmt.location.line}{note}",
                                  (choice.key,) if choice is not None else (), runtime)


_RUNTIME_KINDS = {K.CXX_THIS_EXPR, K.CALL_EXPR, K.ARRAY_SUBSCRIPT_EXPR}


def decided_by_types(c: ci.Cursor, depth: int = 0) -> bool:
    """Whether a condition reads no input of the program, only template parameters, types and
    constants: ``std::is_same<T, half>::value``, ``sizeof(T) == 2``, ``N > 4``, a ``constexpr`` (or
    ``const``, so initialized) local. In a template run with a stand-in argument such a condition is
    unknown only because the instantiation is; a parameter, a variable, a member, ``this`` or a call
    is run-time data."""
    for n in c.walk_preorder():
        if n.kind in _RUNTIME_KINDS and not (n.kind == K.CALL_EXPR and n.referenced is not None
                                              and is_constexpr(n.referenced, 8)):
            return False
        if n.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR):
            d = n.referenced
            if d is None:
                continue  # a name in a dependent type (``std::is_same<T, X>::value``)
            if d.kind in (K.PARM_DECL, K.FIELD_DECL):
                return False
            if d.kind == K.VAR_DECL and not _constant_variable(d, depth):
                return False
    return True


def _constant_variable(d: ci.Cursor, depth: int) -> bool:
    """A ``constexpr`` variable, a static data member of a class (``traits<T>::value``), or a ``const``
    one whose initializer reads no input."""
    if is_constexpr(d, 8) or d.semantic_parent is not None and d.semantic_parent.kind in (
            K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION):
        return True
    if not d.type.is_const_qualified() or depth > 2:
        return False
    init = [k for k in d.get_children() if k.kind.is_expression()]
    return bool(init) and decided_by_types(init[-1], depth + 1)


def calls_defined_code(c: ci.Cursor) -> bool:
    """An expression that calls a function defined in the translation unit (evaluating it again
    would run that function again) or assigns."""
    if c.kind == K.CALL_EXPR:
        ref = c.referenced
        if ref is not None and ref.get_definition() is not None:
            return True
    if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and clangext.binary_operator(c).endswith("=") \
            and clangext.binary_operator(c) not in ("==", "!=", "<=", ">="):
        return True
    if c.kind == K.UNARY_OPERATOR and any(t.spelling in ("++", "--") for t in c.get_tokens()):
        return True
    return any(calls_defined_code(k) for k in c.get_children())


def merged_returns(fn: ci.Cursor, frame: Frame, known: dict[str, Choice]) -> Value:
    """The result of a call whose ``return``s sit in branches the run could not decide: the value
    when every path returns the same one, else unknown (which path runs is not known here;
    ``known``: the choices met, to say which fixed value decides it)."""
    values = [*frame.branch_returns, *([frame.returned] if frame.returned is not None else [])]
    if all(same(v, values[0]) for v in values[1:]):
        return values[0]
    choices = tuple(dict.fromkeys([*frame.return_choices, *(c for v in values for c in getattr(v, "choices", ()))]))
    return Unknown(f"{function_label(fn)}() returns different values on different paths"
                   f"{fixed_choices_note(choices, known)}", loc_of(fn),
                   choices=choices, runtime=frame.return_runtime or first_runtime(values))
