"""Instantiated mode: a function template whose body does not compile here keeps its GEMMs' types.

Production code declares its CUTLASS GEMMs inside function templates whose other statements use a
framework the linter has no headers of (FBGEMM's ``f8f8bf16_impl<TB_M, ...>(at::Tensor XQ, ...)``:
``size_to_dim_(XQ.dim() - 1, XQ.sizes())``, ``reinterpret_cast<T *>(XQ.data_ptr())``). Such a body
has errors even with the recovery's stand-in declarations, and clang then instantiates no
specialization of it, so libclang shows none of the types it declares.

``declarations_only`` writes the files of such function templates again with only their type
declarations kept (aliases, typedefs, ``constexpr`` variables, classes, ``static_assert``s) and every
other statement of the body blanked with spaces: each remaining token keeps its line and column.
The caller parses once more with these texts and reads the GEMMs from that parse (nothing of the
reduced parse is executed, and only the CUTLASS reader uses it).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import clang.cindex as ci

K = ci.CursorKind
_KEPT_DECLS = {K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL, K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.ENUM_DECL,
               K.STATIC_ASSERT, K.TYPE_ALIAS_TEMPLATE_DECL, K.USING_DIRECTIVE, K.USING_DECLARATION}
_SCOPES = {K.NAMESPACE, K.LINKAGE_SPEC, K.UNEXPOSED_DECL}


def declarations_only(tu: ci.TranslationUnit, files: Iterable[str], gemm_lines: Mapping[str, set[int]],
                      texts: Mapping[str, str] | None = None) -> dict[str, str]:
    """path -> text, for each of ``files`` that holds a function template whose body declares a GEMM
    (a line of ``gemm_lines[path]`` inside it) and has an error in ``tu``: the file with the other
    statements of those bodies blanked, under the name ``tu`` opened it by. ``texts``: a file's
    content where it is not the one on disk (the main file's unsaved text)."""
    lines = {os.path.realpath(f): gemm_lines[f] for f in files if gemm_lines.get(f)}
    texts = {os.path.realpath(f): t for f, t in (texts or {}).items()}
    errors: dict[str, list[int]] = {}
    for d in tu.diagnostics:
        loc = d.location
        if d.severity >= ci.Diagnostic.Error and loc.file is not None:
            errors.setdefault(os.path.realpath(loc.file.name), []).append(loc.line)
    spans: dict[str, list[tuple[int, int, int, int]]] = {}  # path -> (line, col, end line, end col) to blank
    names: dict[str, str] = {}  # real path -> the name libclang opened it by (the name to give its new text)
    for fn in _function_templates(tu.cursor, set(lines)):
        name = fn.location.file.name
        real = os.path.realpath(name)
        body = next((c for c in fn.get_children() if c.kind == K.COMPOUND_STMT), None)
        if body is None:
            continue
        first, last = body.extent.start.line, body.extent.end.line
        if not any(first <= line <= last for line in lines[real]) or \
                not any(first <= line <= last for line in errors.get(real, ())):
            continue
        names[real] = name
        for stmt in body.get_children():
            if not _declares_types(stmt):
                e = stmt.extent
                spans.setdefault(real, []).append((e.start.line, e.start.column, e.end.line, e.end.column))
    out: dict[str, str] = {}
    for real, blanks in spans.items():
        text = texts.get(real)
        if text is None:
            try:
                text = Path(real).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
        out[names[real]] = _blanked(text, blanks)
    return out


def _function_templates(c: ci.Cursor, files: set[str]) -> Iterable[ci.Cursor]:
    for ch in c.get_children():
        f = ch.location.file
        if f is None or os.path.realpath(f.name) not in files:
            continue
        if ch.kind == K.FUNCTION_TEMPLATE:
            yield ch
        elif ch.kind in _SCOPES:
            yield from _function_templates(ch, files)


def _declares_types(stmt: ci.Cursor) -> bool:
    """A statement that only declares types or compile-time constants (kept in a reduced body)."""
    if stmt.kind in _KEPT_DECLS:
        return True
    if stmt.kind != K.DECL_STMT:
        return False
    for d in stmt.get_children():
        if d.kind in _KEPT_DECLS:
            continue
        if d.kind == K.VAR_DECL and any(t.spelling == "constexpr" for t in d.get_tokens()):
            continue
        return False
    return True


def _blanked(text: str, spans: list[tuple[int, int, int, int]]) -> str:
    """``text`` with each (line, column, end line, end column) span (libclang's: 1-based, columns in
    bytes, end exclusive) replaced by spaces, line breaks kept."""
    lines = text.encode("utf-8").split(b"\n")
    rows = [bytearray(line) for line in lines]
    for line, col, end_line, end_col in spans:
        for i in range(line - 1, min(end_line, len(rows))):
            row = rows[i]
            start = col - 1 if i == line - 1 else 0
            stop = end_col - 1 if i == end_line - 1 else len(row)
            for j in range(max(start, 0), min(stop, len(row))):
                if row[j] not in (9, 13):
                    row[j] = 32
    return b"\n".join(bytes(r) for r in rows).decode("utf-8", errors="replace")
