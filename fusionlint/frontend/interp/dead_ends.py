"""Statements after which a path does not go on: a ``throw``, a call of a function that never
returns, and the check macros of common projects (PyTorch, TransformerEngine, FasterTransformer)
written with a condition that is false, when their header was found nowhere and the recovery
stood them in (frontend/clang/recovery.py): ``TORCH_CHECK(false, "...")`` throws, whatever the header.
The interpreter leaves such a path out where branches merge, so that what an unsupported case
would have configured after its check is not taken for a configuration the code can reach."""
from __future__ import annotations

import re
from collections.abc import Callable

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.clang.cursors import strip
from fusionlint.model.values import Known, Value
from fusionlint.sourcetext import line_text

K = ci.CursorKind

NORETURN_FUNCTIONS = frozenset({"exit", "_Exit", "quick_exit", "abort", "terminate", "__assert_fail",
                                "__builtin_trap", "__builtin_unreachable", "unreachable"})
# macros that throw or abort when their first argument is false (assert is left out: NDEBUG turns it off)
CHECK_MACROS = frozenset({"TORCH_CHECK", "TORCH_CHECK_VALUE", "TORCH_CHECK_INDEX", "TORCH_CHECK_TYPE",
                          "TORCH_CHECK_NOT_IMPLEMENTED", "TORCH_INTERNAL_ASSERT", "AT_ASSERT", "AT_ASSERTM",
                          "NVTE_CHECK", "FT_CHECK", "FT_CHECK_WITH_INFO", "CHECK"})
# macros that always throw
ERROR_MACROS = frozenset({"NVTE_ERROR", "AT_ERROR", "FT_LOG_ERROR_AND_THROW"})
# a project's own throw (ORT_THROW, PADDLE_THROW): always throws too; not CUDA_CALL_THROW(expr),
# ORT_THROW_IF_ERROR(expr), which throw only when their call fails
THROW_MACRO = re.compile(r"^[A-Z][A-Z0-9]*_THROW$")


def never_returns(stmt: ci.Cursor, evaluate: Callable[[ci.Cursor], Value]) -> bool:
    """Whether the expression statement ``stmt`` ends its path (see the module doc); ``evaluate``
    reads a check macro's condition (only one without calls is read)."""
    c = strip(stmt)
    kind = clangext.kind(c)
    if kind == K.CXX_THROW_EXPR:
        return True
    if kind != K.CALL_EXPR:
        return False
    callee = c.referenced
    if callee is not None and callee.spelling in NORETURN_FUNCTIONS and _in_std_or_global(callee):
        return True
    if callee is None or callee.spelling != "call" or "fusionlint_partial" not in (callee.semantic_parent.spelling
                                                                                 if callee.semantic_parent else ""):
        return False
    macro = _word_at(c.extent.start)
    if macro in ERROR_MACROS or THROW_MACRO.search(macro or ""):
        return True
    if macro not in CHECK_MACROS:
        return False
    args = clangext.arguments(c)
    if not args or _has_call(args[0]):
        return False
    value = evaluate(args[0])
    return isinstance(value, Known) and isinstance(value.value, (bool, int)) and not value.value


def is_check_macro(call: ci.Cursor) -> bool:
    """A check or error macro of PyTorch/TransformerEngine/FasterTransformer whose header was found
    nowhere (the recovery's ``call(...)`` written by ``TORCH_CHECK(...)``): it reads its arguments
    and writes none of them."""
    callee = call.referenced
    if callee is None or callee.spelling != "call" or "fusionlint_partial" not in (callee.semantic_parent.spelling
                                                                                 if callee.semantic_parent else ""):
        return False
    return _word_at(call.extent.start) in CHECK_MACROS | ERROR_MACROS


def _in_std_or_global(fn: ci.Cursor) -> bool:
    parent = fn.semantic_parent
    return parent is None or parent.kind == K.TRANSLATION_UNIT or parent.spelling in ("std", "__gnu_cxx")


def _has_call(c: ci.Cursor) -> bool:
    return c.kind == K.CALL_EXPR or any(_has_call(k) for k in c.get_children())


_WORD = re.compile(r"[A-Za-z_]\w*")


def _word_at(loc: ci.SourceLocation) -> str:
    """The identifier written at ``loc`` (a macro's name: libclang gives no tokens for the extent of
    a call a macro expanded to)."""
    if loc.file is None:
        return ""
    m = _WORD.match(line_text(loc.file.name, loc.line), max(loc.column - 1, 0))
    return m.group(0) if m else ""
