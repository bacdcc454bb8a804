"""The CUTLASS source reader's terms: types and constant expressions as written (names with
template arguments, numbers, casts, sizeof, calls), parsed from tokens with their source
positions."""
from __future__ import annotations

import re
from dataclasses import dataclass

from fusionlint.frontend.cutlass.source.lexer import Tok, parse_int_literal


# ----------------------------------------------------------------------------------------------
# Terms: types and constant expressions as written


@dataclass(eq=False)
class Term:
    tok: Tok  # first token
    end: Tok  # last token

    @property
    def line(self) -> int:
        return self.tok.line

    @property
    def col(self) -> int:
        return self.tok.col


@dataclass(eq=False)
class NamePart:
    ident: str
    args: list[Term] | None
    tok: Tok


@dataclass(eq=False)
class TName(Term):
    parts: list[NamePart]
    leading: bool = False  # ::name
    typename: bool = False

    def dotted(self) -> str:
        return "::".join(p.ident for p in self.parts)


@dataclass(eq=False)
class TNum(Term):
    value: int | float
    is_bool: bool = False


@dataclass(eq=False)
class TBuiltin(Term):
    name: str


@dataclass(eq=False)
class TUnary(Term):
    op: str
    operand: Term


@dataclass(eq=False)
class TBinary(Term):
    op: str
    lhs: Term
    rhs: Term


@dataclass(eq=False)
class TTernary(Term):
    cond: Term
    a: Term
    b: Term


@dataclass(eq=False)
class TSizeof(Term):
    operand: Term
    op: str = "sizeof"


@dataclass(eq=False)
class TCast(Term):
    type: Term
    expr: Term


@dataclass(eq=False)
class TBraced(Term):
    type: Term
    args: list[Term]


@dataclass(eq=False)
class TCall(Term):
    callee: Term
    args: list[Term]


@dataclass(eq=False)
class TPtr(Term):
    base: Term
    suffix: str  # '*', '&', '&&'


@dataclass(eq=False)
class TOpaque(Term):
    reason: str


BUILTIN_WORDS = {"unsigned", "signed", "short", "long", "int", "char", "float", "double", "bool", "void",
                 "auto", "wchar_t", "char8_t", "char16_t", "char32_t", "__int128"}
CV_WORDS = {"const", "volatile", "constexpr", "static", "inline", "mutable", "thread_local", "extern",
            "__restrict__", "__restrict", "register", "consteval", "constinit"}


def join_tokens(toks: list[Tok]) -> str:
    out = ""
    prev: Tok | None = None
    for t in toks:
        if prev is not None:
            tight = (t.text in (",", ">", ")", "::", ";", "]") or prev.text in ("<", "(", "::", "[", "~", "!")
                     or (t.text == "<" and prev.kind == "id") or (t.text == "(" and prev.kind == "id")
                     or (t.text == "(" and prev.text == ">")
                     or (t.text == "{" and prev.text in (">", ")")) or t.text == "}" and prev.text == "{")
            if prev.text == "," or not tight:
                out += " "
        out += t.text
        prev = t
    return out


class ParseFail(Exception):
    pass


class TermParser:
    """Recursive-descent reader of a type or constant expression from a token list."""

    def __init__(self, toks: list[Tok], start: int = 0, end: int | None = None,
                 is_value_name=lambda name: False):
        self.t = toks
        self.i = start
        self.end = len(toks) if end is None else end
        self.is_value_name = is_value_name

    # -- helpers ---------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.t[j] if j < self.end else None

    def text(self, k: int = 0) -> str:
        t = self.peek(k)
        return t.text if t is not None else ""

    def take(self) -> Tok:
        if self.i >= self.end:
            raise ParseFail("unexpected end")
        t = self.t[self.i]
        self.i += 1
        return t

    def expect(self, text: str) -> Tok:
        t = self.take()
        if t.text != text:
            raise ParseFail(f"expected {text!r}, got {t.text!r}")
        return t

    def last(self) -> Tok:
        return self.t[self.i - 1]

    # -- expressions -----------------------------------------------------------------------
    _BIN = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"),
            ("+", "-"), ("*", "/", "%")]

    def expr(self, in_targs: bool = False) -> Term:
        return self.ternary(in_targs)

    def ternary(self, in_targs: bool) -> Term:
        c = self.binary(0, in_targs)
        if self.text() == "?":
            self.take()
            a = self.ternary(False)
            self.expect(":")
            b = self.ternary(in_targs)
            return TTernary(c.tok, self.last(), c, a, b)
        return c

    def _binop(self, level: int, in_targs: bool) -> str | None:
        t = self.peek()
        if t is None:
            return None
        s = t.text
        if s == ">" and (n := self.peek(1)) is not None and n.text == ">" and n.glued:
            s = ">>"
        if in_targs and s in (">", ">>", ">="):
            return None
        return s if s in self._BIN[level] else None

    def binary(self, level: int, in_targs: bool) -> Term:
        if level >= len(self._BIN):
            return self.unary(in_targs)
        lhs = self.binary(level + 1, in_targs)
        while (op := self._binop(level, in_targs)) is not None:
            # a '*' or '&' right before ',', '>' or ')' is a pointer/reference declarator
            if op in ("*", "&", "&&") and self.text(1) in (",", ">", ")", "", "const", "...", ";"):
                break
            self.take()
            if op == ">>":
                self.take()
            rhs = self.binary(level + 1, in_targs)
            lhs = TBinary(lhs.tok, self.last(), op, lhs, rhs)
        return lhs

    def unary(self, in_targs: bool) -> Term:
        t = self.peek()
        if t is None:
            raise ParseFail("end")
        if t.text in ("-", "+", "!", "~", "not"):
            self.take()
            operand = self.unary(in_targs)
            return TUnary(t, self.last(), "!" if t.text == "not" else t.text, operand)
        if t.text in ("sizeof", "alignof", "alignas"):
            self.take()
            if self.text() == "...":
                self.take()
            if self.text() == "(":
                self.take()
                start = self.i
                try:
                    operand = self.expr()
                    if self.text() != ")":
                        raise ParseFail(")")
                except ParseFail:
                    self.i = start
                    operand = self._skip_balanced_until(")", "sizeof operand")
                self.expect(")")
            else:
                operand = self.unary(in_targs)
            return TSizeof(t, self.last(), operand, t.text)
        return self.postfix(self.primary(in_targs), in_targs)

    def _skip_balanced_until(self, stop: str, why: str) -> Term:
        start_tok = self.peek()
        depth = 0
        while self.i < self.end:
            s = self.text()
            if depth == 0 and s == stop:
                break
            if s in ("(", "[", "{"):
                depth += 1
            elif s in (")", "]", "}"):
                depth -= 1
            self.take()
        if start_tok is None:
            raise ParseFail("empty")
        return TOpaque(start_tok, self.last(), why)

    def postfix(self, term: Term, in_targs: bool) -> Term:
        while True:
            s = self.text()
            if s == "{" and isinstance(term, (TName, TBuiltin)):
                self.take()
                args = self.arg_list("}")
                term = TBraced(term.tok, self.last(), term, args)
            elif s == "(" and isinstance(term, (TName, TBuiltin, TBraced, TCall)):
                self.take()
                args = self.arg_list(")")
                if isinstance(term, TBuiltin) and len(args) == 1:
                    term = TCast(term.tok, self.last(), term, args[0])
                else:
                    term = TCall(term.tok, self.last(), term, args)
            elif s in (".", "->"):
                self.take()
                name = self.take()
                term = TOpaque(term.tok, name, f"member access .{name.text}")
            elif s == "[":
                self.take()
                self._skip_balanced_until("]", "subscript")
                self.expect("]")
                term = TOpaque(term.tok, self.last(), "subscript")
            elif s in ("*", "&", "&&") and self.text(1) in (",", ">", ")", "", "const", "...", ";", "*", "&"):
                tok = self.take()
                term = TPtr(term.tok, tok, term, tok.text)
            elif s == "const" and isinstance(term, (TName, TBuiltin, TPtr)):
                self.take()
            elif s == "...":
                self.take()
            else:
                return term

    def arg_list(self, close: str) -> list[Term]:
        args: list[Term] = []
        if self.text() == close:
            self.take()
            return args
        while True:
            args.append(self.expr())
            if self.text() == "...":
                self.take()
            s = self.take().text
            if s == close:
                return args
            if s != ",":
                raise ParseFail(f"expected , or {close}")

    def primary(self, in_targs: bool) -> Term:
        t = self.peek()
        if t is None:
            raise ParseFail("end")
        s = t.text
        if t.kind == "num":
            self.take()
            try:
                if re.fullmatch(r"[0-9][0-9']*[uUlLzZ]*|0[xX][0-9a-fA-F']+[uUlLzZ]*|0[bB][01']+[uUlLzZ]*", s):
                    return TNum(t, t, parse_int_literal(s))
                return TNum(t, t, float(s.rstrip("fFlL").replace("'", "")))
            except ValueError:
                return TOpaque(t, t, f"number {s}")
        if s in ("true", "false"):
            self.take()
            return TNum(t, t, 1 if s == "true" else 0, True)
        if s in ("nullptr", "this"):
            self.take()
            return TOpaque(t, t, s)
        if t.kind in ("str", "chr"):
            self.take()
            return TOpaque(t, t, "literal")
        if s == "(":
            self.take()
            # C-style cast: (type) expr
            save = self.i
            if self.text() in BUILTIN_WORDS or self.text() == "typename":
                try:
                    ty = self.type_only()
                    if self.text() == ")":
                        self.take()
                        e = self.unary(in_targs)
                        return TCast(t, self.last(), ty, e)
                except ParseFail:
                    pass
                self.i = save
            inner = self.expr(False)
            self.expect(")")
            return inner
        if s in ("static_cast", "const_cast", "reinterpret_cast"):
            self.take()
            self.expect("<")
            ty = self.expr(True)
            self.close_angle()
            self.expect("(")
            e = self.expr()
            self.expect(")")
            return TCast(t, self.last(), ty, e)
        if s in ("decltype", "__decltype", "noexcept", "typeid"):
            self.take()
            self.expect("(")
            inner = self._skip_balanced_until(")", f"{s}(...)")
            self.expect(")")
            return TOpaque(t, self.last(), f"{s}(...) is only known to the compiler")
        if s in CV_WORDS or s in ("struct", "class", "union", "enum"):
            self.take()
            inner = self.primary(in_targs)
            return inner
        if s in BUILTIN_WORDS:
            words = []
            first = t
            while self.text() in BUILTIN_WORDS or self.text() in ("const", "volatile"):
                w = self.take().text
                if w not in ("const", "volatile"):
                    words.append(w)
            return TBuiltin(first, self.last(), " ".join(words))
        if s in ("typename", "::", "template") or t.kind == "id":
            return self.name()
        if s == "[":  # lambda
            self._skip_balanced_until(";", "lambda")
            return TOpaque(t, self.last(), "lambda")
        raise ParseFail(f"unexpected {s!r}")

    def type_only(self) -> Term:
        p = self.primary(True)
        return self.postfix(p, True)

    def close_angle(self) -> None:
        t = self.take()
        if t.text != ">":
            raise ParseFail(f"expected '>', got {t.text!r}")

    def name(self) -> TName:
        first = self.peek()
        typename = False
        leading = False
        if self.text() == "typename":
            typename = True
            self.take()
        if self.text() == "::":
            leading = True
            self.take()
        parts: list[NamePart] = []
        while True:
            if self.text() == "template":
                self.take()
            t = self.take()
            if t.kind != "id" and t.text != "operator":
                raise ParseFail(f"expected a name, got {t.text!r}")
            args = None
            if self.text() == "<" and not self.is_value_name(t.text):
                save = self.i
                try:
                    self.take()
                    args = []
                    if self.text() == ">":
                        self.take()
                    else:
                        while True:
                            args.append(self.expr(True))
                            if self.text() == "...":
                                self.take()
                            if self.text() == ",":
                                self.take()
                                continue
                            self.close_angle()
                            break
                except ParseFail:
                    self.i = save
                    args = None
            parts.append(NamePart(t.text, args, t))
            if self.text() == "::" and self.peek(1) is not None and (self.peek(1).kind == "id"
                                                                     or self.text(1) == "template"):
                self.take()
                continue
            break
        return TName(first, self.last(), parts, leading, typename)


def parse_term(toks: list[Tok], start: int = 0, end: int | None = None, is_value_name=lambda n: False) -> Term:
    """Parse exactly toks[start:end] as one term (a TOpaque covering it when it does not parse)."""
    end = len(toks) if end is None else end
    if start >= end:
        raise ParseFail("empty")
    p = TermParser(toks, start, end, is_value_name)
    try:
        term = p.expr()
        while p.i < end and p.text() in ("const", "volatile", "&", "&&", "*", "..."):
            if p.text() in ("*", "&", "&&"):
                tok = p.take()
                term = TPtr(term.tok, tok, term, tok.text)
            else:
                p.take()
        if p.i != end:
            raise ParseFail(f"unexpected {p.text()!r}")
        return term
    except ParseFail as exc:
        return TOpaque(toks[start], toks[end - 1], f"not understood: {exc}")
