"""Explicit instantiations of function templates (``template bool gemm_and_bias(bool, ..., const
double *mat1, ...);``) as functions the interpreter can run.

libclang does not visit an explicit instantiation, so a function template that only such lines
instantiate (PyTorch's ``gemm_and_bias<Dtype>``) would be read as its pattern only, its
``if constexpr (std::is_same_v<Dtype, ...>)`` branches undecided. ``synthesize`` adds, on the same
line right after each instantiation's ``;`` (no line moves, nothing before it on the line moves),
a small function that takes the instantiated function's address into a pointer of its type:

    static void __fusionlint_explicit_instantiation_3() { bool (*__fusionlint_p)(...) = &gemm_and_bias; ... }

libclang resolves that address to the specialization, whose definition is the instantiated body;
the interpreter runs it as a root (``instantiations_of``), as if the line called it. Only
instantiations written in the file itself are seen; member functions and class templates are left
as they are. Diagnostics inside the added text are the linter's, not the user's: ``synthetic_spans``
says where they are, so that they can be dropped.
"""
from __future__ import annotations

import re

PREFIX = "__fusionlint_explicit_instantiation_"
_POINTER = "__fusionlint_p"

_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_TEMPLATE = re.compile(r"(?<![\w:.>])template\b(?=\s*[^\s<])")
_EXTERN = re.compile(r"\bextern\s*$")
_SPECIFIERS = re.compile(r"\b(?:__\w+__|inline|constexpr|CUTLASS_\w+|C10_\w+|TORCH_API)\b")
_NAME = re.compile(r"([A-Za-z_]\w*)\s*$")


def _blank(text: str) -> str:
    """``text`` with comments and string/character literals replaced by spaces (newlines kept)."""
    return _COMMENT_OR_STRING.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _statement_end(code: str, start: int) -> int | None:
    """The index of the ``;`` that ends the declaration starting at ``start`` (None: a body or
    the end of the file comes first)."""
    depth = 0
    for i in range(start, len(code)):
        ch = code[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "{" or (ch == "}" and depth == 0):
            return None
        elif ch == ";" and depth == 0:
            return i
    return None


def _parameter_list(decl: str) -> tuple[int, int] | None:
    """(open, close) of the declaration's parameter parentheses: the last top-level pair."""
    depth, close = 0, None
    for i in range(len(decl) - 1, -1, -1):
        ch = decl[i]
        if ch == ")":
            if depth == 0:
                close = i
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0 and close is not None:
                return i, close
    return None


def _template_arguments(head: str) -> tuple[str, str]:
    """Split ``name<args>`` at the end of ``head`` into (text before the arguments, ``<args>``)."""
    head = head.rstrip()
    if not head.endswith(">"):
        return head, ""
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        if head[i] == ">":
            depth += 1
        elif head[i] == "<":
            depth -= 1
            if depth == 0:
                return head[:i].rstrip(), head[i:]
    return head, ""


def _one(decl: str) -> tuple[str, str, str, str] | None:
    """(return type, name, template arguments, parameters) of an explicit instantiation of a
    function template (``decl``: the text between ``template`` and ``;``), or None."""
    if re.match(r"\s*(?:class|struct|union|enum)\b", decl):
        return None
    parens = _parameter_list(decl)
    if parens is None or decl[parens[1] + 1:].strip() not in ("", "const", "noexcept"):
        return None
    head, targs = _template_arguments(decl[:parens[0]])
    m = _NAME.search(head)
    if m is None or head[:m.start()].rstrip().endswith("::") or m.group(1) == "operator":
        return None  # a member function (or an operator): not handled
    ret = " ".join(_SPECIFIERS.sub(" ", head[:m.start()]).split())
    params = " ".join(decl[parens[0] + 1:parens[1]].split())
    if not ret or "=" in params:
        return None
    return ret, m.group(1), " ".join(targs.split()), params


def synthesize(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with a function added after each explicit instantiation of a function template,
    and the (line, first column) of each added piece (1-based). Unchanged when there is none."""
    if "template" not in text:
        return text, []
    code = _blank(text)
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    last = 0
    n = 0
    for m in _TEMPLATE.finditer(code):
        if _EXTERN.search(code[max(0, m.start() - 16):m.start()]) or m.start() < last:
            continue
        end = _statement_end(code, m.end())
        if end is None:
            continue
        parts = _one(code[m.end():end])
        if parts is None:
            continue
        ret, name, targs, params = parts
        n += 1
        added = (f" static void {PREFIX}{n}() {{ {ret} (*{_POINTER})({params}) = &{name}{targs}; "
                 f"(void){_POINTER}; }}")
        line = text.count("\n", 0, end + 1) + 1
        column = end + 2 - (text.rfind("\n", 0, end + 1) + 1)
        pieces += [text[last:end + 1], added]
        spans.append((line, column))
        last = end + 1
    if not pieces:
        return text, []
    pieces.append(text[last:])
    return "".join(pieces), spans


def is_synthetic(name: str) -> bool:
    return name.startswith(PREFIX)
