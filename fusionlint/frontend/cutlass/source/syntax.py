"""A small C++ reader for CUTLASS configurations, used when the CUTLASS headers are absent.

Without the headers libclang cannot resolve ``CollectiveBuilder<...>`` and friends, so this module
reads the main file's text itself: a lexer, a preprocessor (object- and function-like macros of
the file, ``#if``/``#ifdef`` with the macros the CUTLASS headers would define), and a
declaration reader that keeps what a GEMM configuration is made of — namespaces, structs and
class templates with their template parameters and bases, ``using``/``typedef`` aliases,
``constexpr`` constants, variables, function bodies (for local aliases), explicit
instantiations — and, for each, the parsed type/expression terms with source positions.

Nothing here evaluates; :mod:`fusionlint.frontend.cutlass.source.evaluator` does. The reader never raises on
bad input: a statement it cannot read is skipped up to the next ``;`` or balanced block.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import count

from fusionlint.frontend.cutlass.source.includes import ProjectHeaders
from fusionlint.frontend.cutlass.source.lexer import InactiveRegion, Preprocessor, Tok, lex
from fusionlint.frontend.cutlass.source.terms import (
    ParseFail, TName, TOpaque, Term, TermParser, parse_term,
)

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
    inactive_regions: list[InactiveRegion]
    skipped: list[tuple[int, str]]  # statements the reader could not read (line, reason)
    headers: ProjectHeaders | None = None  # the project headers read in (their lines: ProjectHeaders.where)


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


def read_program(text: str, path: str, predefined: dict[str, str], headers: ProjectHeaders | None = None) -> Program:
    """The declarations of ``text``, with the project headers ``headers`` reads in their includes' place."""
    items = lex(text)
    pp = Preprocessor(predefined, include=headers)
    toks = pp.run(items)
    reader = Reader(toks, path)
    reader.read()
    return Program(path, reader.file, toks, reader.namespaces, reader.template_names, reader.value_names,
                   pp.notes, pp.inactive_lines, pp.inactive_regions, reader.skipped, headers)


def includes_cutlass(text: str) -> bool:
    return bool(re.search(r'^\s*#\s*include\s*[<"](cutlass|cute)/', text, re.M))
