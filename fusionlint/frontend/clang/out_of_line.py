"""Classes declared in a header found nowhere, rebuilt from the out-of-line definitions of their members.

A source file that implements a class of its own header (XLA's ``cuda_blas_lt.cc``: ``absl::Status
BlasLt::Init() {`` and ``auto BlasLt::MatmulPlan::GetAlgorithms(...) const -> ... {`` inside
``namespace stream_executor { namespace cuda {``) loses every such function when the header is
missing: the recovery (``recovery.stand_in``) would declare ``BlasLt`` a namespace of its own, in which
``cuda`` cannot define members, and the definitions, their cuBLASLt calls with them, are not read.

``members`` finds those definitions in the main file's text (at namespace scope, qualified by a root
name that nothing declares) and writes for each a member declaration that the definition matches:
the definition's own return type, name, parameters and qualifiers, ``static`` unless it is
``const``-qualified, a constructor, a destructor or virtual (a static member can be called both
through the class and through an object; the definition does not repeat ``static``). The recovery
puts them in a permissive class of that name, nested as the qualifiers are, in the namespace the
definitions are written in. Declarations only, taken from the file's own text.
"""
from __future__ import annotations

import re

_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_AFTER = {"const", "noexcept", "override", "final", "volatile", "&", "&&"}


def members(code: str, roots: set[str], token: re.Pattern[str]) -> dict[tuple[str, ...], dict[tuple[str, ...], list[str]]]:
    """{namespace path: {class path (``("BlasLt", "MatrixLayout")``): [member declarations]}} of the
    out-of-line definitions in ``code`` (the main file, comments and strings blanked) qualified by a
    name of ``roots``; ``token``: the recovery's token pattern."""
    toks = token.findall(_DIRECTIVE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), code))
    out: dict[tuple[str, ...], dict[tuple[str, ...], list[str]]] = {}
    frames: list[tuple[str, ...] | None] = []  # per open brace: the namespace it opens (None: any other block)
    start = 0  # first token of the declaration being read at namespace scope
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "{":
            if all(f is not None for f in frames):  # at namespace scope
                ns = _namespace_opened(toks[start:i])
                if ns is not None:
                    frames.append(ns)
                    start = i + 1
                    i += 1
                    continue
                got = _definition(toks[start:i], roots)
                if got is not None:
                    path = tuple(p for f in frames for p in f if f)  # type: ignore[union-attr]
                    cls, decl = got
                    out.setdefault(path, {}).setdefault(cls, []).append(decl)
            frames.append(None)
        elif t == "}":
            if frames:
                frames.pop()
            start = i + 1
        elif t == ";" and all(f is not None for f in frames):
            start = i + 1
        i += 1
    return out


def _namespace_opened(head: list[str]) -> tuple[str, ...] | None:
    """The names ``namespace a::b {`` opens (``()`` for ``namespace {`` and ``extern "C" {``), else None."""
    if head[:1] == ["extern"] and len(head) == 1:
        return ()
    if head[:1] == ["inline"]:
        head = head[1:]
    if not head or head[0] != "namespace":
        return None
    names = [x for x in head[1:] if x != "::"]
    if any(not re.fullmatch(r"[A-Za-z_]\w*", x) for x in names):
        return None
    return tuple(names)


def _definition(head: list[str], roots: set[str]) -> tuple[tuple[str, ...], str] | None:
    """(class path, member declaration) of a function definition's head ``R Q::A::f(params) quals``
    whose qualifier starts with a name of ``roots``; None for anything else."""
    for q, x in enumerate(head[:-2]):  # the qualifier of the declarator (not one in the return type)
        if x in roots and head[q + 1] == "::" and (q == 0 or head[q - 1] != "::"):
            got = _declarator(head, q)
            if got is not None:
                return got
    return None


def _declarator(head: list[str], q: int) -> tuple[tuple[str, ...], str] | None:
    k, path = q, []
    while k + 1 < len(head) and head[k + 1] == "::" and re.fullmatch(r"[A-Za-z_]\w*", head[k]):
        path.append(head[k])
        k += 2
    if k >= len(head):
        return None
    if head[k] == "~" and k + 1 < len(head):
        name, k = ["~", head[k + 1]], k + 2
    elif re.fullmatch(r"[A-Za-z_]\w*", head[k]) and head[k] != "operator":
        name, k = [head[k]], k + 1
    else:
        return None
    if k >= len(head) or head[k] != "(":
        return None
    close = _matching(head, k)
    if close is None:
        return None
    params = head[k:close + 1]
    after = head[close + 1:]
    if ":" in after:  # a constructor's initializer list
        after = after[:after.index(":")]
    quals, trailing = [], []
    for j, x in enumerate(after):
        if x == "->":
            trailing = after[j:]
            break
        if x not in _AFTER and x != "noexcept":
            return None
        quals.append(x)
    prefix = head[:q]
    special = name[0] == "~" or name[0] == path[-1]  # destructor, constructor
    if not special and not prefix:
        return None  # no return type: not a function definition
    static = "static " if not special and "const" not in quals and "virtual" not in prefix else ""
    decl = " ".join(x for x in (*prefix[:_template_end(prefix)], static.strip(), *prefix[_template_end(prefix):],
                                 *name, *params, *quals, *trailing) if x) + ";"
    return tuple(path), decl


def _template_end(prefix: list[str]) -> int:
    """Where a leading ``template <...>`` of ``prefix`` ends (0 without one)."""
    if prefix[:2] != ["template", "<"]:
        return 0
    depth = 0
    for j, x in enumerate(prefix):
        depth += x == "<"
        depth -= x == ">"
        if x == ">" and depth == 0:
            return j + 1
    return 0


def _matching(toks: list[str], k: int) -> int | None:
    depth = 0
    for j in range(k, len(toks)):
        depth += toks[j] == "("
        depth -= toks[j] == ")"
        if depth == 0:
            return j
    return None
