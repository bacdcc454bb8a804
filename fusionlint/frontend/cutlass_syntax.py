"""A small C++ reader for CUTLASS configurations, used when the CUTLASS headers are absent.

Without the headers libclang cannot resolve ``CollectiveBuilder<...>`` and friends, so this module
reads the main file's text itself: a lexer, a preprocessor (object- and function-like macros of
the file, ``#if``/``#ifdef`` with the macros the CUTLASS headers would define), and a
declaration reader that keeps what a GEMM configuration is made of — namespaces, structs and
class templates with their template parameters and bases, ``using``/``typedef`` aliases,
``constexpr`` constants, variables, function bodies (for local aliases), explicit
instantiations — and, for each, the parsed type/expression terms with source positions.

Nothing here evaluates; :mod:`fusionlint.frontend.cutlass_eval` does. The reader never raises on
bad input: a statement it cannot read is skipped up to the next ``;`` or balanced block.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import count

# ----------------------------------------------------------------------------------------------
# Tokens


@dataclass(slots=True)
class Tok:
    kind: str  # id | num | str | chr | punct
    text: str
    line: int
    col: int
    glued: bool = False  # a '>' that directly follows another '>' (from '>>')
    macro: str = ""  # the macro this token came from, if any


_PUNCT = ["...", "<<=", ">>=", "->*", "::", "->", "++", "--", "<<", "<=", ">=", "==", "!=", "&&", "||",
          "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*"]
_PUNCT_RE = "|".join(re.escape(p) for p in _PUNCT)
_TOKEN_RE = re.compile(
    r"(?P<ws>[ \t\r\f\v]+)"
    r"|(?P<nl>\n)"
    r"|(?P<lc>//[^\n]*)"
    r"|(?P<bc>/\*.*?(?:\*/|\Z))"
    r"|(?P<rstr>(?:u8|u|U|L)?R\"(?P<delim>[^ ()\\\t\n]{0,16})\(.*?\)(?P=delim)\")"
    r"|(?P<str>(?:u8|u|U|L)?\"(?:[^\"\\\n]|\\.)*\"?)"
    r"|(?P<chr>(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)*'?)"
    r"|(?P<num>\.?[0-9](?:[eEpP][+-]|[0-9a-zA-Z_.']|)*)"
    r"|(?P<id>[A-Za-z_$][A-Za-z0-9_$]*)"
    r"|(?P<cont>\\\n)"
    rf"|(?P<punct>{_PUNCT_RE}|[^\sA-Za-z0-9_])",
    re.S,
)


@dataclass
class Directive:
    line: int
    col: int
    name: str
    toks: list[Tok]
    text: str


def _byte_col(text: str, line_start: int, pos: int) -> int:
    seg = text[line_start:pos]
    return (len(seg.encode("utf-8")) if not seg.isascii() else len(seg)) + 1


def lex(text: str) -> list[Tok | Directive]:
    """Tokens and preprocessor directives of a source text, in order."""
    out: list[Tok | Directive] = []
    pos, line, line_start = 0, 1, 0
    at_bol = True
    n = len(text)
    directive: list[Tok] | None = None
    dir_start: tuple[int, int] = (0, 0)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        if m is None:  # cannot happen with the catch-all, but stay safe
            pos += 1
            continue
        kind = m.lastgroup
        s = m.group(0)
        if kind == "delim":
            kind = "rstr"
        start = pos
        pos = m.end()
        nl_inside = s.count("\n")
        if kind == "nl":
            if directive is not None:
                out.append(_make_directive(directive, dir_start))
                directive = None
            line += 1
            line_start = pos
            at_bol = True
            continue
        if kind in ("ws", "lc", "cont"):
            if kind == "cont":
                line += 1
                line_start = pos
            continue
        if kind == "bc":
            if nl_inside:
                line += nl_inside
                line_start = start + s.rfind("\n") + 1
            continue
        col = _byte_col(text, line_start, start)
        if kind == "punct" and s == "#" and at_bol and directive is None:
            directive = []
            dir_start = (line, col)
            at_bol = False
            continue
        at_bol = False
        tkind = {"rstr": "str", "str": "str", "chr": "chr", "num": "num", "id": "id"}.get(kind, "punct")
        toks: list[Tok]
        if tkind == "punct" and s == ">>":
            toks = [Tok("punct", ">", line, col), Tok("punct", ">", line, col + 1, glued=True)]
        else:
            toks = [Tok(tkind, s, line, col)]
        if directive is not None:
            directive.extend(toks)
        else:
            out.extend(toks)
        if nl_inside:  # raw string spanning lines
            line += nl_inside
            line_start = start + s.rfind("\n") + 1
    if directive is not None:
        out.append(_make_directive(directive, dir_start))
    return out


def _make_directive(toks: list[Tok], start: tuple[int, int]) -> Directive:
    name = toks[0].text if toks and toks[0].kind == "id" else ""
    return Directive(start[0], start[1], name, toks[1:] if name else toks, " ".join(t.text for t in toks))


def lex_string(text: str) -> list[Tok]:
    return [t for t in lex(text) if isinstance(t, Tok)]


# ----------------------------------------------------------------------------------------------
# Preprocessor


@dataclass
class Macro:
    name: str
    params: list[str] | None  # None: object-like
    body: list[Tok]
    line: int = 0
    variadic: bool = False


class Preprocessor:
    """Conditional inclusion and macro expansion for one file; ``#include`` is not followed."""

    def __init__(self, predefined: dict[str, str] | None = None):
        self.macros: dict[str, Macro] = {}
        for name, value in (predefined or {}).items():
            self.macros[name] = Macro(name, None, lex_string(value))
        self.inactive_lines: list[tuple[int, int]] = []
        self.notes: list[str] = []

    def define(self, d: Directive) -> None:
        toks = d.toks
        if not toks or toks[0].kind != "id":
            return
        name = toks[0].text
        rest = toks[1:]
        # function-like when '(' follows the name without a space
        if rest and rest[0].text == "(" and rest[0].line == toks[0].line and rest[0].col == toks[0].col + len(name):
            close = next((i for i, t in enumerate(rest) if t.text == ")"), None)
            if close is None:
                return
            params = [t.text for t in rest[1:close] if t.text != ","]
            variadic = "..." in params
            params = ["__VA_ARGS__" if p == "..." else p for p in params]
            self.macros[name] = Macro(name, params, rest[close + 1:], d.line, variadic)
        else:
            self.macros[name] = Macro(name, None, rest, d.line)

    # -- #if expressions -------------------------------------------------------------------
    def condition(self, toks: list[Tok]) -> bool:
        replaced: list[Tok] = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.text == "defined":
                j = i + 1
                paren = j < len(toks) and toks[j].text == "("
                if paren:
                    j += 1
                name = toks[j].text if j < len(toks) else ""
                replaced.append(Tok("num", "1" if name in self.macros else "0", t.line, t.col))
                i = j + (2 if paren else 1)
                continue
            if t.kind == "id" and t.text in ("__has_include", "__has_include_next", "__has_builtin", "__has_attribute",
                                             "__has_feature", "__has_cpp_attribute", "__has_extension"):
                j = i + 1
                depth = 0
                while j < len(toks):
                    if toks[j].text == "(":
                        depth += 1
                    elif toks[j].text == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                replaced.append(Tok("num", "1" if t.text.startswith("__has_include") else "0", t.line, t.col))
                i = j + 1
                continue
            replaced.append(t)
            i += 1
        expanded = self.expand(replaced)
        try:
            value = _PPExpr(expanded).parse()
        except (IndexError, ValueError, ZeroDivisionError):
            self.notes.append(f"line {toks[0].line if toks else 0}: #if condition not understood, taken as false")
            return False
        return bool(value)

    # -- macro expansion -------------------------------------------------------------------
    def expand(self, toks: list[Tok], disabled: frozenset[str] = frozenset()) -> list[Tok]:
        out: list[Tok] = []
        i = 0
        n = len(toks)
        while i < n:
            t = toks[i]
            m = self.macros.get(t.text) if t.kind == "id" and t.text not in disabled else None
            if m is None:
                out.append(t)
                i += 1
                continue
            if m.params is None:
                body = [Tok(b.kind, b.text, t.line, t.col, b.glued, t.macro or m.name) for b in m.body]
                out.extend(self.expand(body, disabled | {m.name}))
                i += 1
                continue
            if i + 1 >= n or toks[i + 1].text != "(":
                out.append(t)
                i += 1
                continue
            args: list[list[Tok]] = [[]]
            depth = 0
            j = i + 2
            while j < n:
                a = toks[j]
                if a.text in ("(", "[", "{"):
                    depth += 1
                elif a.text in (")", "]", "}"):
                    if depth == 0 and a.text == ")":
                        break
                    depth -= 1
                elif a.text == "," and depth == 0 and not (m.variadic and len(args) >= len(m.params)):
                    args.append([])
                    j += 1
                    continue
                args[-1].append(a)
                j += 1
            if j >= n:  # unterminated call: leave as is
                out.append(t)
                i += 1
                continue
            binding = {p: self.expand(args[k]) if k < len(args) else [] for k, p in enumerate(m.params)}
            body: list[Tok] = []
            for b in m.body:
                if b.kind == "id" and b.text in binding:
                    body.extend(Tok(x.kind, x.text, t.line, t.col, x.glued, t.macro or m.name) for x in binding[b.text])
                elif b.text in ("#", "##"):
                    continue
                else:
                    body.append(Tok(b.kind, b.text, t.line, t.col, b.glued, t.macro or m.name))
            out.extend(self.expand(body, disabled | {m.name}))
            i = j + 1
        return out

    def run(self, items: list[Tok | Directive]) -> list[Tok]:
        """The active tokens, macro-expanded."""
        stack: list[list[bool]] = []  # [active, taken, parent_active]
        active = True
        chunk: list[Tok] = []
        out: list[Tok] = []
        inactive_from: int | None = None

        def flush():
            if chunk:
                out.extend(self.expand(chunk))
                chunk.clear()

        for it in items:
            if isinstance(it, Tok):
                if active:
                    chunk.append(it)
                continue
            name = it.name
            if name in ("if", "ifdef", "ifndef"):
                flush()
                parent = active
                if not parent:
                    cond = False
                elif name == "if":
                    cond = self.condition(it.toks)
                elif name == "ifdef":
                    cond = bool(it.toks) and it.toks[0].text in self.macros
                else:
                    cond = not (bool(it.toks) and it.toks[0].text in self.macros)
                stack.append([cond, cond, parent])
                active = parent and cond
            elif name in ("elif", "elifdef", "elifndef") and stack:
                flush()
                top = stack[-1]
                if top[1] or not top[2]:
                    top[0] = False
                else:
                    if name == "elif":
                        cond = self.condition(it.toks)
                    elif name == "elifdef":
                        cond = bool(it.toks) and it.toks[0].text in self.macros
                    else:
                        cond = not (bool(it.toks) and it.toks[0].text in self.macros)
                    top[0] = cond
                    top[1] = cond
                active = top[0] and top[2]
            elif name == "else" and stack:
                flush()
                top = stack[-1]
                top[0] = not top[1]
                top[1] = True
                active = top[0] and top[2]
            elif name == "endif" and stack:
                flush()
                top = stack.pop()
                active = top[2]
            elif active and name == "define":
                flush()
                self.define(it)
            elif active and name == "undef":
                flush()
                if it.toks:
                    self.macros.pop(it.toks[0].text, None)
            if not active and inactive_from is None:
                inactive_from = it.line
            elif active and inactive_from is not None:
                self.inactive_lines.append((inactive_from, it.line))
                inactive_from = None
        flush()
        return out


class _PPExpr:
    """Integer expression of ``#if`` (identifiers left after expansion count as 0)."""

    _BIN = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"),
            ("+", "-"), ("*", "/", "%")]

    def __init__(self, toks: list[Tok]):
        # re-join '>' '>' into '>>'
        joined: list[str] = []
        for t in toks:
            if t.text == ">" and t.glued and joined and joined[-1] == ">":
                joined[-1] = ">>"
            else:
                joined.append(t.text if t.kind != "id" else ("1" if t.text == "true" else "0"))
        self.t = joined
        self.i = 0

    def peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def parse(self) -> int:
        v = self.ternary()
        if self.peek() is not None:
            raise ValueError("trailing tokens")
        return v

    def ternary(self) -> int:
        c = self.binary(0)
        if self.peek() == "?":
            self.i += 1
            a = self.ternary()
            if self.peek() != ":":
                raise ValueError(":")
            self.i += 1
            b = self.ternary()
            return a if c else b
        return c

    def binary(self, level: int) -> int:
        if level >= len(self._BIN):
            return self.unary()
        v = self.binary(level + 1)
        while self.peek() in self._BIN[level]:
            op = self.t[self.i]
            self.i += 1
            r = self.binary(level + 1)
            v = _apply_int(op, v, r)
        return v

    def unary(self) -> int:
        p = self.peek()
        if p in ("!", "-", "+", "~"):
            self.i += 1
            v = self.unary()
            return {"!": int(not v), "-": -v, "+": v, "~": ~v}[p]
        if p == "(":
            self.i += 1
            v = self.ternary()
            if self.peek() != ")":
                raise ValueError(")")
            self.i += 1
            return v
        if p is None:
            raise ValueError("end")
        self.i += 1
        return parse_int_literal(p)


def parse_int_literal(text: str) -> int:
    s = text.replace("'", "").rstrip("uUlLzZ")
    if s.lower().startswith("0x"):
        return int(s, 16)
    if s.lower().startswith("0b"):
        return int(s, 2)
    if len(s) > 1 and s.startswith("0") and s.isdigit():
        return int(s, 8)
    return int(s)


def _apply_int(op: str, a: int, b: int) -> int:
    if op == "||":
        return int(bool(a) or bool(b))
    if op == "&&":
        return int(bool(a) and bool(b))
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "&":
        return a & b
    if op == "==":
        return int(a == b)
    if op == "!=":
        return int(a != b)
    if op == "<":
        return int(a < b)
    if op == ">":
        return int(a > b)
    if op == "<=":
        return int(a <= b)
    if op == ">=":
        return int(a >= b)
    if op == "<<":
        return a << b
    if op == ">>":
        return a >> b
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise ZeroDivisionError
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    if op == "%":
        if b == 0:
            raise ZeroDivisionError
        return a - b * _apply_int("/", a, b)
    raise ValueError(op)


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


# ----------------------------------------------------------------------------------------------
# Declarations

_ids = count(1)


@dataclass(eq=False)
class TParam:
    kind: str  # type | value | template
    name: str
    default: Term | None
    tok: Tok
    pack: bool = False
    vtype: Term | None = None  # the type of a non-type parameter


@dataclass(eq=False)
class Decl:
    name: str
    tok: Tok  # the name token
    scope: "Scope"  # the scope that declares it
    text: str = ""

    @property
    def loc(self) -> tuple[int, int]:
        return (self.tok.line, self.tok.col)


@dataclass(eq=False)
class AliasDecl(Decl):
    term: Term | None = None
    tparams: list[TParam] | None = None  # alias template
    tpl_scope: "Scope | None" = None  # scope holding the alias template's parameters


@dataclass(eq=False)
class ConstDecl(Decl):
    term: Term | None = None
    vtype: Term | None = None


@dataclass(eq=False)
class VarDecl(Decl):
    vtype: Term | None = None


@dataclass(eq=False)
class ClassDecl(Decl):
    body: "Scope | None" = None
    specialization: bool = False  # explicit or partial specialization (not used for lookup)


@dataclass(eq=False)
class FuncDecl(Decl):
    body: "Scope | None" = None


@dataclass(eq=False)
class NamespaceAlias(Decl):
    term: Term | None = None


@dataclass(eq=False)
class Use:
    """A template-id (or explicit instantiation) that may instantiate a template of the file."""

    term: Term
    scope: "Scope"
    explicit: bool = False  # 'template struct X<...>;'


@dataclass(eq=False)
class Scope:
    kind: str  # file | namespace | class | block | function
    name: str
    parent: "Scope | None"
    tparams: list[TParam] | None = None  # this class/function/alias is a template
    decls: dict[str, list[Decl]] = field(default_factory=dict)
    order: list[Decl] = field(default_factory=list)
    using_dirs: list[TName] = field(default_factory=list)
    bases: list[Term] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    children: list["Scope"] = field(default_factory=list)
    owner: Decl | None = None  # the class/function this scope belongs to
    id: int = field(default_factory=lambda: next(_ids))
    first_line: int = 0
    last_line: int = 0

    def add(self, d: Decl) -> None:
        self.decls.setdefault(d.name, []).append(d)
        self.order.append(d)

    def qualname(self) -> str:
        parts: list[str] = []
        s: Scope | None = self
        while s is not None and s.kind != "file":
            if s.kind in ("namespace", "class") and s.name and not s.name.startswith("("):
                parts.append(s.name)
            elif s.kind in ("block", "function"):
                pass
            s = s.parent
        return "::".join(reversed(parts))

    def is_template_context(self) -> bool:
        s: Scope | None = self
        while s is not None:
            if s.tparams is not None:
                return True
            s = s.parent
        return False


@dataclass
class Program:
    path: str
    file: Scope
    tokens: list[Tok]
    namespaces: dict[str, Scope]
    template_names: set[str]
    value_names: set[str]
    preprocessor_notes: list[str]
    inactive_lines: list[tuple[int, int]]
    skipped: list[tuple[int, str]]  # statements the reader could not read (line, reason)


# Specifiers skipped in front of declarations.
_DECL_SPECIFIERS = {"static", "inline", "constexpr", "const", "volatile", "extern", "thread_local", "mutable",
                    "virtual", "explicit", "friend", "consteval", "constinit", "register", "__forceinline__",
                    "__host__", "__device__", "__global__", "__inline__", "CUTLASS_HOST_DEVICE", "CUTLASS_DEVICE",
                    "CUTLASS_HOST", "CUTE_HOST_DEVICE", "CUTE_DEVICE", "CUTE_HOST", "CUTLASS_GLOBAL",
                    "__launch_bounds__", "[[", "typename"}
_CONTROL = {"if", "while", "for", "switch", "catch"}


class Reader:
    """Reads declarations out of the active token stream into a scope tree."""

    def __init__(self, toks: list[Tok], path: str):
        self.t = toks
        self.path = path
        self.file = Scope("file", "", None)
        self.file.first_line, self.file.last_line = 1, (toks[-1].line if toks else 1)
        self.namespaces: dict[str, Scope] = {"": self.file}
        self.skipped: list[tuple[int, str]] = []
        self.template_names, self.value_names = self._prescan()

    # -- prescan: names of templates and of constants (for '<' disambiguation) ---------------
    def _prescan(self) -> tuple[set[str], set[str]]:
        t = self.t
        tpl: set[str] = set()
        vals: set[str] = set()
        n = len(t)
        for i, tok in enumerate(t):
            if tok.text == "template" and i + 1 < n and t[i + 1].text == "<":
                j = self._match(i + 1, "<", ">")
                if j is None:
                    continue
                k = j + 1
                while k < n and t[k].text == "template" and k + 1 < n and t[k + 1].text == "<":
                    k2 = self._match(k + 1, "<", ">")
                    if k2 is None:
                        break
                    k = k2 + 1
                if k < n and t[k].text in ("struct", "class", "union"):
                    if k + 1 < n and t[k + 1].kind == "id":
                        tpl.add(t[k + 1].text)
                    continue
                if k < n and t[k].text == "using" and k + 1 < n:
                    tpl.add(t[k + 1].text)
                    continue
                depth = 0
                prev = None
                for m in range(k, min(n, k + 200)):
                    s = t[m].text
                    if s in ("(", ";", "{", "=") and depth == 0:
                        if s == "(" and prev is not None and prev.kind == "id":
                            tpl.add(prev.text)
                        elif s == "=" and prev is not None and prev.kind == "id":
                            tpl.add(prev.text)  # variable template
                        break
                    if s == "<":
                        depth += 1
                    elif s == ">":
                        depth -= 1
                    prev = t[m]
            elif tok.text in ("constexpr", "const") and i + 1 < n:
                # 'constexpr int name =' / 'static constexpr auto name ='
                for m in range(i + 1, min(n, i + 12)):
                    if t[m].text in ("=", "{") and t[m - 1].kind == "id":
                        vals.add(t[m - 1].text)
                        break
                    if t[m].text in (";", "(", ")"):
                        break
            elif tok.text == "enum":
                j = i + 1
                while j < n and t[j].text != "{" and t[j].text != ";":
                    j += 1
                if j < n and t[j].text == "{":
                    k = self._match(j, "{", "}") or j
                    for m in range(j + 1, k):
                        if t[m].kind == "id" and t[m - 1].text in ("{", ","):
                            vals.add(t[m].text)
        # non-type template parameters are values too
        for i, tok in enumerate(t):
            if tok.text in ("int", "bool", "auto", "size_t", "int32_t", "int64_t", "uint32_t", "unsigned") \
                    and i + 2 < n and t[i + 1].kind == "id" and t[i + 2].text in (",", ">", "=", "..."):
                vals.add(t[i + 1].text)
        vals -= tpl
        return tpl, vals

    def _match(self, i: int, open_: str, close: str) -> int | None:
        """Index of the token closing the bracket at i (angle brackets: parentheses-aware)."""
        depth = 0
        paren = 0
        t = self.t
        for j in range(i, len(t)):
            s = t[j].text
            if open_ == "<":
                if s in ("(", "[", "{"):
                    paren += 1
                elif s in (")", "]", "}"):
                    paren -= 1
                    if paren < 0:
                        return None
                elif paren == 0:
                    if s == "<":
                        depth += 1
                    elif s == ">":
                        depth -= 1
                        if depth == 0:
                            return j
                    elif s == ";":
                        return None
            else:
                if s == open_:
                    depth += 1
                elif s == close:
                    depth -= 1
                    if depth == 0:
                        return j
        return None

    def _match_any(self, i: int) -> int:
        """Index of the matching close of the (, [ or { at i; the last token when unbalanced."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = [pairs[self.t[i].text]]
        for j in range(i + 1, len(self.t)):
            s = self.t[j].text
            if s == "namespace" and j + 1 < len(self.t) and self.t[j + 1].text != "=" and \
                    (self.t[j - 1].text in (";", "}", "{") or self.t[j - 1].kind == "id"):
                # a namespace never opens inside brackets or function bodies: the bracket at i is
                # unbalanced (an edit in progress); stop before it
                if self.t[j - 1].text != "using":
                    return j - 1
            if s in pairs:
                stack.append(pairs[s])
            elif s in (")", "]", "}"):
                if stack and s == stack[-1]:
                    stack.pop()
                    if not stack:
                        return j
                elif s == "}" and "}" in stack:  # recover from a stray ) or ]
                    while stack and stack[-1] != "}":
                        stack.pop()
                    stack.pop()
                    if not stack:
                        return j
        return len(self.t) - 1

    def is_value_name(self, name: str) -> bool:
        return name in self.value_names

    def term(self, start: int, end: int) -> Term:
        return parse_term(self.t, start, end, self.is_value_name)

    # -- top level -------------------------------------------------------------------------
    def read(self) -> Scope:
        self.decls(0, len(self.t), self.file)
        return self.file

    def _statement_end(self, i: int, end: int) -> int:
        """Index of the ';' ending the statement at i (or end), skipping balanced brackets."""
        j = i
        while j < end:
            s = self.t[j].text
            if s == ";":
                return j
            if s == "namespace" and j > i and self.t[j - 1].text != "using":
                return j - 1
            if s in ("(", "[", "{"):
                j = self._match_any(j) + 1
                continue
            if s == "}":  # unbalanced: stop here
                return j
            j += 1
        return end

    def decls(self, i: int, end: int, scope: Scope, tparams: list[TParam] | None = None) -> None:
        """Declarations at namespace or class scope in toks[i:end]."""
        t = self.t
        while i < end:
            tok = t[i]
            s = tok.text
            try:
                if s == ";":
                    i += 1
                elif s in ("public", "private", "protected") and i + 1 < end and t[i + 1].text == ":":
                    i += 2
                elif s == "namespace":
                    i = self._namespace(i, end, scope)
                elif s == "inline" and i + 1 < end and t[i + 1].text == "namespace":
                    i = self._namespace(i + 1, end, scope)
                elif s == "extern" and i + 1 < end and t[i + 1].kind == "str":
                    if i + 2 < end and t[i + 2].text == "{":
                        close = self._match_any(i + 2)
                        self.decls(i + 3, close, scope)
                        i = close + 1
                    else:
                        i += 2
                elif s == "extern" and i + 1 < end and t[i + 1].text == "template":
                    i = self._template(i + 1, end, scope, explicit_extern=True)
                elif s == "template":
                    i = self._template(i, end, scope)
                elif s == "using":
                    i = self._using(i, end, scope)
                elif s == "typedef":
                    i = self._typedef(i, end, scope)
                elif s in ("static_assert", "friend"):
                    i = self._statement_end(i, end) + 1
                elif s == "enum":
                    i = self._enum(i, end, scope)
                elif s in ("struct", "class", "union") and self._is_class_def(i, end):
                    i = self._class(i, end, scope, None)
                else:
                    i = self._declaration(i, end, scope)
            except (ParseFail, IndexError, RecursionError) as exc:  # nested too deeply: skip the statement
                self.skipped.append((tok.line, "nested too deeply" if isinstance(exc, RecursionError) else str(exc)))
                i = self._statement_end(i, end) + 1

    def _namespace(self, i: int, end: int, scope: Scope) -> int:
        t = self.t
        j = i + 1
        names: list[str] = []
        while j < end and (t[j].kind == "id" or t[j].text in ("::", "inline")):
            if t[j].kind == "id" and t[j].text != "inline":
                names.append(t[j].text)
            j += 1
        if j < end and t[j].text == "=":  # namespace alias
            semi = self._statement_end(j, end)
            alias = NamespaceAlias(names[0] if names else "", t[i + 1], scope, term=self.term(j + 1, semi))
            scope.add(alias)
            return semi + 1
        if j >= end or t[j].text != "{":
            return self._statement_end(i, end) + 1
        close = self._match_any(j)
        inner = scope
        if not names:
            names = ["(anonymous)"]
        for name in names:
            inner = self._namespace_scope(inner, name)
        inner.first_line = min(inner.first_line or t[j].line, t[j].line)
        inner.last_line = max(inner.last_line, t[close].line)
        self.decls(j + 1, close, inner)
        return close + 1

    def _namespace_scope(self, parent: Scope, name: str) -> Scope:
        key = (parent.qualname() + "::" + name) if parent.qualname() else name
        sc = self.namespaces.get(key)
        if sc is None:
            sc = Scope("namespace", name, parent)
            self.namespaces[key] = sc
            parent.children.append(sc)
            parent.add(_NamespaceDecl(name, Tok("id", name, 0, 0), parent, body=sc))
        return sc

    def _tparams(self, i: int) -> tuple[list[TParam], int]:
        """Template parameter list starting at '<' (index i); returns params and index after '>'."""
        t = self.t
        close = self._match(i, "<", ">")
        if close is None:
            raise ParseFail("unbalanced template parameter list")
        params: list[TParam] = []
        j = i + 1
        while j < close:
            # one parameter up to a top-level ','
            k = j
            depth = 0
            while k < close:
                s = t[k].text
                if s in ("(", "[", "{", "<"):
                    depth += 1
                elif s in (")", "]", "}", ">"):
                    depth -= 1
                elif s == "," and depth == 0:
                    break
                k += 1
            params.append(self._tparam(j, k))
            j = k + 1
        return params, close + 1

    def _tparam(self, j: int, k: int) -> TParam:
        t = self.t
        eq = next((m for m in range(j, k) if t[m].text == "=" and self._depth0(j, m)), None)
        head_end = eq if eq is not None else k
        default = self.term(eq + 1, k) if eq is not None and eq + 1 < k else None
        head = t[j:head_end]
        pack = any(x.text == "..." for x in head)
        names = [x for x in head if x.kind == "id" and x.text not in ("typename", "class")]
        if head and head[0].text == "template":
            name_tok = head[-1]
            return TParam("template", name_tok.text if name_tok.kind == "id" else "", default, name_tok, pack)
        if head and head[0].text in ("typename", "class") and (len(head) <= 3):
            name_tok = names[-1] if names else head[0]
            return TParam("type", name_tok.text if names else "", default, name_tok, pack)
        # non-type parameter: 'int N', 'bool B', 'cutlass::ScaleType::Kind K', 'auto V'
        name_tok = head[-1] if head and head[-1].kind == "id" else head[0]
        vtype = self.term(j, head_end - 1) if head_end - 1 > j else None
        return TParam("value", name_tok.text if name_tok.kind == "id" else "", default, name_tok, pack, vtype)

    def _depth0(self, a: int, b: int) -> bool:
        depth = 0
        for m in range(a, b):
            s = self.t[m].text
            if s in ("(", "[", "{", "<"):
                depth += 1
            elif s in (")", "]", "}", ">"):
                depth -= 1
        return depth == 0

    def _template(self, i: int, end: int, scope: Scope, explicit_extern: bool = False) -> int:
        t = self.t
        if i + 1 < end and t[i + 1].text != "<":
            # explicit instantiation: template struct X<...>; / template void f<...>(...);
            semi = self._statement_end(i, end)
            j = i + 1
            if t[j].text in ("struct", "class", "union"):
                j += 1
            term = self.term(j, semi)
            if isinstance(term, TOpaque):  # function instantiation: take the name part
                k = j
                while k < semi and t[k].text != "(":
                    k += 1
                p = TermParser(t, j, k, self.is_value_name)
                try:
                    # skip the return type: the last name with template arguments
                    last = None
                    while p.i < k:
                        start = p.i
                        try:
                            nm = p.name()
                            last = nm
                        except ParseFail:
                            p.i = start + 1
                    if last is not None:
                        term = last
                except ParseFail:
                    pass
            scope.uses.append(Use(term, scope, explicit=True))
            return semi + 1
        params, j = self._tparams(i + 1)
        # nested template headers (member templates of class templates defined outside): merge
        while j < end and t[j].text == "template" and j + 1 < end and t[j + 1].text == "<":
            more, j = self._tparams(j + 1)
            params = params + more
        if j < end and t[j].text in ("struct", "class", "union") and self._is_class_def(j, end):
            return self._class(j, end, scope, params)
        if j < end and t[j].text == "using":
            return self._using(j, end, scope, params)
        if j < end and t[j].text in ("struct", "class", "union"):  # forward declaration
            return self._statement_end(j, end) + 1
        return self._declaration(j, end, scope, params)

    def _is_class_def(self, i: int, end: int) -> bool:
        """'struct X ... {' (a definition) rather than 'struct X x;' or a forward declaration."""
        t = self.t
        j = i + 1
        depth = 0
        while j < end:
            s = t[j].text
            if s == "<":
                close = self._match(j, "<", ">")
                if close is None:
                    return False
                j = close + 1
                continue
            if s in ("(", "["):
                if t[j].text == "[" and j + 1 < end and t[j + 1].text == "[":  # attribute
                    j = self._match_any(j) + 1
                    continue
                if s == "(" and t[j - 1].text in ("alignas", "__align__", "__attribute__", "__declspec"):
                    j = self._match_any(j) + 1
                    continue
                return False
            if s == "{":
                return depth == 0
            if s in (";", "=", ")"):
                return False
            j += 1
        return False

    def _class(self, i: int, end: int, scope: Scope, tparams: list[TParam] | None) -> int:
        t = self.t
        j = i + 1
        # skip attributes and alignas(...)
        while j < end and (t[j].text in ("alignas", "__align__", "__attribute__", "__declspec") or
                           (t[j].text == "[" and j + 1 < end and t[j + 1].text == "[")):
            if t[j].text == "[":
                j = self._match_any(j) + 1
            else:
                j = self._match_any(j + 1) + 1
        name_tok = t[j] if t[j].kind == "id" else None
        specialization = False
        if name_tok is not None:
            j += 1
            # qualified definition 'struct ns::X {' : take the last part
            while j + 1 < end and t[j].text == "::" and t[j + 1].kind == "id":
                name_tok = t[j + 1]
                j += 2
            if j < end and t[j].text == "<":
                close = self._match(j, "<", ">")
                specialization = True
                j = (close or j) + 1
        while j < end and t[j].text in ("final", "alignas"):
            j += 1
        bases: list[Term] = []
        if j < end and t[j].text == ":":
            j += 1
            brace = j
            while brace < end and t[brace].text != "{":
                if t[brace].text == "<":
                    brace = (self._match(brace, "<", ">") or brace) + 1
                    continue
                brace += 1
            # split bases on top-level commas
            k = j
            start = j
            while k <= brace:
                if k == brace or (t[k].text == "," and self._depth0(start, k)):
                    seg = [m for m in range(start, k) if t[m].text not in ("public", "private", "protected",
                                                                           "virtual")]
                    if seg:
                        bases.append(self.term(seg[0], seg[-1] + 1))
                    start = k + 1
                if k < brace and t[k].text == "<":
                    k = (self._match(k, "<", ">") or k) + 1
                    continue
                k += 1
            j = brace
        if j >= end or t[j].text != "{":
            return self._statement_end(i, end) + 1
        close = self._match_any(j)
        name = name_tok.text if name_tok is not None else "(anonymous)"
        body = Scope("class", name, scope, tparams=tparams, bases=bases)
        body.first_line, body.last_line = t[j].line, t[close].line
        decl = ClassDecl(name, name_tok or t[i], scope, body=body, specialization=specialization)
        body.owner = decl
        scope.children.append(body)
        if not specialization:
            scope.add(decl)
        self.decls(j + 1, close, body)
        # 'struct X {...} x, *y;' declarators after the body
        k = close + 1
        semi = self._statement_end(k, end)
        return semi + 1

    def _enum(self, i: int, end: int, scope: Scope) -> int:
        t = self.t
        j = i + 1
        while j < end and t[j].text in ("class", "struct"):
            j += 1
        ename = t[j].text if j < end and t[j].kind == "id" else ""
        while j < end and t[j].text not in ("{", ";"):
            j += 1
        if j >= end or t[j].text == ";":
            return j + 1
        close = self._match_any(j)
        scoped = t[i + 1].text in ("class", "struct")
        target = scope
        if scoped and ename:
            target = Scope("class", ename, scope)
            target.owner = ClassDecl(ename, t[i + 1], scope, body=target)
            scope.add(target.owner)
            scope.children.append(target)
        k = j + 1
        prev: Term | None = None
        idx = 0
        while k < close:
            e = k
            while e < close and not (t[e].text == "," and self._depth0(k, e)):
                e += 1
            if t[k].kind == "id":
                if e > k + 2 and t[k + 1].text == "=":
                    val = self.term(k + 2, e)
                    prev, idx = val, 0
                else:
                    val = None
                    idx += 1
                d = ConstDecl(t[k].text, t[k], target, term=val, vtype=None)
                d.text = f"enum:{ename}:{idx if val is None else 0}"
                d.enum_prev = prev  # type: ignore[attr-defined]
                d.enum_offset = idx if val is None else 0  # type: ignore[attr-defined]
                d.enum_name = ename  # type: ignore[attr-defined]
                target.add(d)
            k = e + 1
        return self._statement_end(close + 1, end) + 1

    def _using(self, i: int, end: int, scope: Scope, tparams: list[TParam] | None = None) -> int:
        t = self.t
        semi = self._statement_end(i, end)
        if t[i + 1].text == "namespace":
            term = self.term(i + 2, semi)
            if isinstance(term, TName):
                scope.using_dirs.append(term)
            return semi + 1
        if t[i + 1].kind == "id" and i + 2 < semi and t[i + 2].text == "=":
            name_tok = t[i + 1]
            term = self.term(i + 3, semi)
            tpl_scope = None
            if tparams is not None:
                tpl_scope = Scope("class", name_tok.text, scope, tparams=tparams)
                tpl_scope.first_line, tpl_scope.last_line = name_tok.line, t[semi - 1].line if semi > 0 else 0
            d = AliasDecl(name_tok.text, name_tok, scope, term=term, tparams=tparams, tpl_scope=tpl_scope)
            scope.add(d)
            self._collect_uses(i + 3, semi, tpl_scope or scope)
            return semi + 1
        # using-declaration: using ns::Name;  /  using typename Base::Name;
        j = i + 1
        if t[j].text == "typename":
            j += 1
        term = self.term(j, semi)
        if isinstance(term, TName) and len(term.parts) > 1:
            d = AliasDecl(term.parts[-1].ident, term.parts[-1].tok, scope, term=term)
            d.text = "using-declaration"
            scope.add(d)
        return semi + 1

    def _typedef(self, i: int, end: int, scope: Scope) -> int:
        t = self.t
        semi = self._statement_end(i, end)
        # typedef T Name;  (function-pointer typedefs are ignored)
        if semi - 1 > i + 1 and t[semi - 1].kind == "id":
            name_tok = t[semi - 1]
            j = i + 1
            if t[j].text in ("struct", "class", "union") and self._is_class_def(j, semi + 1):
                return self._statement_end(i, end) + 1
            term = self.term(j, semi - 1)
            scope.add(AliasDecl(name_tok.text, name_tok, scope, term=term))
            self._collect_uses(j, semi - 1, scope)
        return semi + 1

    def _declaration(self, i: int, end: int, scope: Scope, tparams: list[TParam] | None = None) -> int:
        """A variable or function declaration/definition at namespace or class scope."""
        t = self.t
        j = i
        depth = 0
        saw_paren = False
        saw_eq = False
        name_before_paren: Tok | None = None
        while j < end:
            s = t[j].text
            if s == ";":
                break
            if s == "}":
                break
            if s == "namespace" and j > i and t[j - 1].text != "using":
                self.skipped.append((t[i].line, "unterminated declaration"))
                return j
            if s == "<" and j > i and t[j - 1].kind == "id":
                close = self._match(j, "<", ">")
                if close is not None:
                    j = close + 1
                    continue
            if s == "=":
                saw_eq = True
            if s == "(":
                if not saw_paren and not saw_eq and j > i and t[j - 1].kind == "id" and \
                        t[j - 1].text not in ("alignas", "__attribute__", "__launch_bounds__", "decltype",
                                              "noexcept", "__align__"):
                    saw_paren = True
                    name_before_paren = t[j - 1]
                j = self._match_any(j) + 1
                continue
            if s == "[":
                j = self._match_any(j) + 1
                continue
            if s == "{":
                if saw_paren and not saw_eq:
                    return self._function(i, j, end, scope, tparams, name_before_paren)
                if saw_eq or (j > i and t[j - 1].kind == "id"):  # brace initializer
                    j = self._match_any(j) + 1
                    continue
                j = self._match_any(j) + 1
                continue
            if s == ":" and saw_paren and not saw_eq:
                # constructor initializer list: find the body '{' after ')' or '}' of the last item
                k = j + 1
                while k < end:
                    if t[k].text in ("(", "{") and t[k - 1].kind == "id" or (t[k].text == "<" and
                                                                            t[k - 1].kind == "id"):
                        if t[k].text == "<":
                            k = (self._match(k, "<", ">") or k) + 1
                            continue
                        k = self._match_any(k) + 1
                        continue
                    if t[k].text == "{":
                        return self._function(i, k, end, scope, tparams, name_before_paren)
                    if t[k].text == ";":
                        break
                    k += 1
                j = k
                continue
            j += 1
        semi = j
        if not saw_paren:
            self._variables(i, semi, scope, tparams)
        self._collect_uses(i, semi, scope)
        return semi + 1

    def _function(self, i: int, brace: int, end: int, scope: Scope, tparams: list[TParam] | None,
                  name_tok: Tok | None) -> int:
        t = self.t
        close = self._match_any(brace)
        name = name_tok.text if name_tok is not None else "(function)"
        body = Scope("function", name, scope, tparams=tparams)
        body.first_line, body.last_line = t[i].line, t[close].line
        decl = FuncDecl(name, name_tok or t[i], scope, body=body)
        body.owner = decl
        scope.children.append(body)
        scope.add(decl)
        self._collect_uses(i, brace, body)
        self.block(brace + 1, close, body)
        return close + 1

    def _variables(self, i: int, semi: int, scope: Scope, tparams: list[TParam] | None = None) -> None:
        """'[specifiers] TYPE name [= init], name2 [= init];'"""
        t = self.t
        # split declarators on top-level commas
        segs: list[tuple[int, int]] = []
        start = i
        depth = 0
        k = i
        while k < semi:
            s = t[k].text
            if s == "<" and k > i and t[k - 1].kind == "id":
                close = self._match(k, "<", ">")
                if close is not None and close < semi:
                    k = close + 1
                    continue
            if s in ("(", "[", "{"):
                k = self._match_any(k) + 1
                continue
            if s == "," and depth == 0:
                segs.append((start, k))
                start = k + 1
            k += 1
        segs.append((start, semi))
        first_type: Term | None = None
        is_const = False
        for n, (a, b) in enumerate(segs):
            # find '=' or '{' initializer
            eq = None
            k = a
            while k < b:
                s = t[k].text
                if s == "<" and k > a and t[k - 1].kind == "id":
                    close = self._match(k, "<", ">")
                    if close is not None and close < b:
                        k = close + 1
                        continue
                if s in ("(", "["):
                    k = self._match_any(k) + 1
                    continue
                if s in ("=", "{"):
                    eq = k
                    break
                k += 1
            lhs_end = eq if eq is not None else b
            # name: last identifier of the declarator (before any '[')
            m = lhs_end - 1
            while m >= a and t[m].text == "]":
                m = self._find_open_bracket(m) - 1
            if m < a or t[m].kind != "id":
                continue
            name_tok = t[m]
            if n == 0:
                spec_words = {x.text for x in t[a:m]}
                is_const = bool(spec_words & {"constexpr", "const"})
                ts = a
                while ts < m and t[ts].text in _DECL_SPECIFIERS - {"typename"} | {"const", "volatile"}:
                    ts += 1
                first_type = self.term(ts, m) if ts < m else None
            init: Term | None = None
            if eq is not None:
                if t[eq].text == "=":
                    init = self.term(eq + 1, b) if eq + 1 < b else None
                    if init is not None and t[eq + 1].text == "{":  # = {x}
                        close = self._match_any(eq + 1)
                        init = self.term(eq + 2, close) if close > eq + 2 else None
                else:
                    close = self._match_any(eq)
                    init = self.term(eq + 1, close) if close > eq + 1 else None
            if is_const and init is not None:
                scope.add(ConstDecl(name_tok.text, name_tok, scope, term=init, vtype=first_type))
            elif tparams is None:
                scope.add(VarDecl(name_tok.text, name_tok, scope, vtype=first_type))

    def _find_open_bracket(self, close: int) -> int:
        depth = 0
        for j in range(close, -1, -1):
            s = self.t[j].text
            if s == "]":
                depth += 1
            elif s == "[":
                depth -= 1
                if depth == 0:
                    return j
        return 0

    # -- uses of the file's templates ------------------------------------------------------
    def _collect_uses(self, a: int, b: int, scope: Scope) -> None:
        t = self.t
        k = a
        while k < b:
            tok = t[k]
            if tok.kind == "id" and tok.text in self.template_names and k + 1 < b and t[k + 1].text == "<":
                # walk back over a qualifier 'ns::' / '::'
                s = k
                while s - 2 >= a and t[s - 1].text == "::" and t[s - 2].kind == "id":
                    s -= 2
                if s - 1 >= a and t[s - 1].text == "typename":
                    s -= 1
                p = TermParser(t, s, b, self.is_value_name)
                try:
                    term = p.name()
                    if any(part.args is not None for part in term.parts):
                        scope.uses.append(Use(term, scope))
                    k = max(p.i, k + 1)
                    continue
                except ParseFail:
                    pass
            k += 1

    # -- function bodies -------------------------------------------------------------------
    def block(self, i: int, end: int, scope: Scope) -> None:
        t = self.t
        while i < end:
            tok = t[i]
            s = tok.text
            try:
                if s == ";":
                    i += 1
                elif s == "{":
                    close = self._match_any(i)
                    inner = Scope("block", "", scope)
                    inner.first_line, inner.last_line = tok.line, t[close].line
                    scope.children.append(inner)
                    self.block(i + 1, close, inner)
                    i = close + 1
                elif s in _CONTROL:
                    j = i + 1
                    if j < end and t[j].text == "constexpr":
                        j += 1
                    if j < end and t[j].text == "(":
                        close = self._match_any(j)
                        self._collect_uses(j + 1, close, scope)
                        i = close + 1
                    else:
                        i = j
                elif s in ("else", "do", "try"):
                    i += 1
                elif s in ("case", "default"):
                    while i < end and t[i].text != ":":
                        i += 1
                    i += 1
                elif s == "using":
                    i = self._using(i, end, scope)
                elif s == "typedef":
                    i = self._typedef(i, end, scope)
                elif s in ("static_assert", "return", "throw", "break", "continue", "goto"):
                    semi = self._statement_end(i, end)
                    self._collect_uses(i, semi, scope)
                    self._lambda_bodies(i, semi, scope)
                    i = semi + 1
                elif s in ("struct", "class", "union") and self._is_class_def(i, end):
                    i = self._class(i, end, scope, None)
                elif s == "enum":
                    i = self._enum(i, end, scope)
                elif tok.kind == "id" and i + 1 < end and t[i + 1].text == ":" and s not in ("public", "private"):
                    i += 2  # label
                else:
                    semi = self._statement_end(i, end)
                    self._block_statement(i, semi, scope)
                    i = semi + 1
            except (ParseFail, IndexError, RecursionError) as exc:  # nested too deeply: skip the statement
                self.skipped.append((tok.line, "nested too deeply" if isinstance(exc, RecursionError) else str(exc)))
                i = self._statement_end(i, end) + 1

    def _block_statement(self, i: int, semi: int, scope: Scope) -> None:
        t = self.t
        self._collect_uses(i, semi, scope)
        self._lambda_bodies(i, semi, scope)
        # a declaration statement: specifiers TYPE name ...
        j = i
        while j < semi and t[j].text in _DECL_SPECIFIERS - {"typename"}:
            j += 1
        p = TermParser(t, j, semi, self.is_value_name)
        try:
            ty = p.type_only()
        except ParseFail:
            return
        if p.i < semi and t[p.i].kind == "id" and (p.i + 1 == semi or t[p.i + 1].text in ("=", "{", "(", ",", "[")):
            self._variables(i, semi, scope)

    def _lambda_bodies(self, i: int, semi: int, scope: Scope) -> None:
        t = self.t
        k = i
        while k < semi:
            if t[k].text == "{" and k > i and t[k - 1].text in (")", "]", "mutable"):
                close = self._match_any(k)
                inner = Scope("block", "lambda", scope)
                inner.first_line, inner.last_line = t[k].line, t[close].line
                scope.children.append(inner)
                self.block(k + 1, close, inner)
                k = close + 1
                continue
            k += 1


@dataclass(eq=False)
class _NamespaceDecl(Decl):
    body: Scope | None = None


NamespaceDecl = _NamespaceDecl


def read_program(text: str, path: str, predefined: dict[str, str]) -> Program:
    items = lex(text)
    pp = Preprocessor(predefined)
    toks = pp.run(items)
    reader = Reader(toks, path)
    reader.read()
    return Program(path, reader.file, toks, reader.namespaces, reader.template_names, reader.value_names,
                   pp.notes, pp.inactive_lines, reader.skipped)


def includes_cutlass(text: str) -> bool:
    return bool(re.search(r'^\s*#\s*include\s*[<"](cutlass|cute)/', text, re.M))
