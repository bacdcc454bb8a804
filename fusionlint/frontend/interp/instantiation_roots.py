"""Explicit instantiations of function templates as roots of the interpreter's run (mixed into
``Interpreter``); ``explicit_instantiations.py`` makes them visible to libclang."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.clang import clangext, explicit_instantiations
from fusionlint.frontend.clang.cursors import function_label, is_shared_stand_in_type, loc_of
from fusionlint.model.values import Loc

K = ci.CursorKind


class InstantiationsMixin:
    """The instantiated definitions the main file's explicit instantiations name."""

    def _explicit_instantiations(self, functions: list[ci.Cursor]) -> list[tuple[Loc, ci.Cursor]]:
        """(the line, the instantiated definition) of each explicit instantiation of a function
        template in the main file that reaches the API (frontend/clang/explicit_instantiations.py)."""
        out = []
        for f in functions:
            if not explicit_instantiations.is_synthetic(f.spelling):
                continue
            for c in f.walk_preorder():
                ref = c.referenced if c.kind == K.DECL_REF_EXPR else None
                if ref is not None and ref.kind == K.FUNCTION_DECL and not explicit_instantiations.is_synthetic(ref.spelling):
                    definition = ref.get_definition()
                    if definition is not None and definition.is_definition() and self.relevant(definition):
                        site = Loc(loc_of(f).path, loc_of(f).line, 1)
                        if has_stand_in_arguments(definition):  # its types' traits would be guesses
                            self._skipped_instantiations.append((site, definition))
                        else:
                            out.append((site, definition))
                    break
        return out


def has_stand_in_arguments(fn: ci.Cursor) -> bool:
    """A function template specialization with a type argument that is the partial-parse recovery's
    one permissive class (an unknown template's specialization, ``c10::complex<float>``): it stands
    for every type there, so its ``std::is_same`` tests and traits would answer for a type that is
    not the real one. A named unknown type (``at::Half``) is a class of its own and is run."""
    n = fn.get_num_template_arguments()
    for i in range(max(n, 0)):
        try:
            if fn.get_template_argument_kind(i) == ci.TemplateArgumentKind.TYPE and \
                    is_shared_stand_in_type(fn.get_template_argument_type(i)):
                return True
        except (ValueError, AttributeError):
            continue
    return False


def instantiation_label(fn: ci.Cursor) -> str:
    """``name<args>`` of a function template's specialization (``gemm_and_bias<double, double>``,
    ``igemmlt<8, true>``)."""
    n = fn.get_num_template_arguments()
    if n <= 0:
        return function_label(fn)
    pattern = clangext.specialized_template(fn)
    params = [c for c in pattern.get_children() if c.kind in clangext.TEMPLATE_PARAMETERS] if pattern is not None else []
    return f"{function_label(fn)}<{', '.join(_argument(fn, i, params) for i in range(n))}>"


def _argument(fn: ci.Cursor, i: int, params: list[ci.Cursor]) -> str:
    """A specialization's ``i``-th template argument as written: a type, or an integral value
    (``params``: the template's parameters, which say whether it is a ``bool``)."""
    try:
        if fn.get_template_argument_kind(i) == ci.TemplateArgumentKind.INTEGRAL:
            if i < len(params) and params[i].type.get_canonical().kind == ci.TypeKind.BOOL:
                return "true" if fn.get_template_argument_value(i) else "false"
            return str(fn.get_template_argument_value(i))
    except (ValueError, AttributeError):
        return "?"
    return fn.get_template_argument_type(i).spelling
