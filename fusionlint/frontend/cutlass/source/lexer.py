"""The CUTLASS source reader's lexer and preprocessor: tokens with byte columns, the file's own
object- and function-like macros, ``#if``/``#ifdef`` with the macros the CUTLASS headers would
define."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import count
from typing import Callable


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


@dataclass
class InactiveRegion:
    """Code the preprocessor leaves out: the directive that starts it (``#ifdef SMOOTHQUANT_SM90A``),
    at ``line``, and the names written in it."""

    line: int
    directive: str
    names: set[str] = field(default_factory=set)


class Preprocessor:
    """Conditional inclusion and macro expansion. ``#include`` is followed only where ``include``
    (``includes.ProjectHeaders``) returns the header's items: they take the directive's place."""

    def __init__(self, predefined: dict[str, str] | None = None,
                 include: Callable[[Directive], list[Tok | Directive] | None] | None = None):
        self.include = include
        self.macros: dict[str, Macro] = {}
        for name, value in (predefined or {}).items():
            self.macros[name] = Macro(name, None, lex_string(value))
        self.inactive_lines: list[tuple[int, int]] = []
        self.inactive_regions: list[InactiveRegion] = []
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

        pending = list(reversed(items))
        while pending:
            it = pending.pop()
            if isinstance(it, Tok):
                if active:
                    chunk.append(it)
                elif it.kind == "id" and self.inactive_regions:
                    self.inactive_regions[-1].names.add(it.text)
                continue
            name = it.name
            if active and name == "include" and self.include is not None:
                sub = self.include(it)
                if sub:
                    pending.extend(reversed(sub))
                continue
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
                self.inactive_regions.append(
                    InactiveRegion(it.line, f"#{name} {' '.join(t.text for t in it.toks)}".strip()))
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
