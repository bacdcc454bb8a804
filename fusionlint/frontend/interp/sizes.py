"""The interpreter's ``sizeof``: folded by libclang where the type is complete, else the size of
the argument type a template parameter has at the inlined call."""
from __future__ import annotations

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.clang.cursors import is_stand_in_type, strip
from fusionlint.frontend.interp.frames import Frame
from fusionlint.model.values import Known, Loc, Unknown, Value

K = ci.CursorKind


def sizeof_value(cursor: ci.Cursor, origin: Loc, frames: list[Frame]) -> Value:
    """``sizeof(...)`` / ``alignof(...)``, in the calls now running (``frames``, innermost last): a
    template parameter's size is its argument's at the inlined call."""
    tokens = [t.spelling for t in cursor.get_tokens()]
    word = tokens[0] if tokens else "sizeof"
    if any(is_stand_in_type(strip(k).type) for k in clangext.children(cursor)) or _stand_in_operand(tokens, frames):
        return Unknown(f"{word} of a type whose header was found nowhere (declared only to read the file)",
                       origin)
    # sizeof(param) / sizeof(T) inside an inlined template: use the caller's argument type.
    if frames and word == "sizeof":
        kids = list(clangext.children(cursor))
        for k in kids:
            target = strip(k)
            if target.kind == K.DECL_REF_EXPR and target.referenced is not None \
                    and target.referenced.kind == K.PARM_DECL:
                pusr = target.referenced.get_usr() or target.referenced.spelling
                t = frames[-1].arg_types.get(pusr)
                if t is not None and t.get_size() > 0 and target.type.get_size() <= 0:
                    return Known(t.get_size(), origin, via=f"sizeof({t.spelling})")
        if len(tokens) >= 3 and tokens[1] == "(" and tokens[-1] == ")":
            inner = " ".join(tokens[2:-1])
            size = _template_type_size(inner, frames)
            if size is not None:
                return Known(size[0], origin, via=f"sizeof({size[1]})")
    folded = clangext.evaluate(cursor)
    if isinstance(folded, int):
        return Known(folded, origin, via=" ".join(tokens) if len(tokens) < 12 else word)
    return Unknown(f"{word} of a dependent type", origin)


def _template_type_size(spelling: str, frames: list[Frame]) -> tuple[int, str] | None:
    """Size of a template parameter ``T`` deduced from the inlined call's arguments."""
    for f in reversed(frames):
        params = [p for p in clangext.children(f.function) if p.kind == K.PARM_DECL]
        for p in params:
            pusr = p.get_usr() or p.spelling
            if pusr not in f.arg_types:
                continue
            declared = p.type.spelling.replace("const ", "").replace("&", "").replace("*", "").strip()
            if declared == spelling:
                t = f.arg_types[pusr]
                canon = t.get_canonical()
                if p.type.kind == ci.TypeKind.POINTER and canon.kind == ci.TypeKind.POINTER:
                    t = canon.get_pointee()
                if t.get_size() > 0:
                    return t.get_size(), t.spelling
        if f.function.kind != K.FUNCTION_TEMPLATE and f.function.semantic_parent is not None \
                and f.function.semantic_parent.kind != K.CLASS_TEMPLATE:
            break
    return None


def _stand_in_operand(tokens: list[str], frames: list[Frame]) -> bool:
    """Whether the operand of a ``sizeof`` in the running function names one of its parameters, or
    one of its template parameters, whose type (argument) the recovery declared: XLA's ``SetAttr<T>(h, attr, T value)``
    run as ``SetAttr<fusionlint_partial::any>`` writes ``sizeof(decltype(value))``, which libclang
    folds to 1, the stand-in's size, not the real type's."""
    if not frames or tokens[-2:-1] == ["*"]:  # (a pointer's size is not its pointee's: sizeof(Dtype*))
        return False
    fn = frames[-1].function
    words = set(tokens[1:])
    for p in clangext.children(fn):
        if p.kind == K.PARM_DECL and p.spelling in words:
            t = frames[-1].arg_types.get(p.get_usr() or p.spelling)
            if is_stand_in_type(p.type) or (t is not None and is_stand_in_type(t)):
                return True
    pattern = clangext.specialized_template(fn)
    if pattern is None:
        return False
    names = [c.spelling for c in clangext.children(pattern) if c.kind in (K.TEMPLATE_TYPE_PARAMETER,
                                                                          K.TEMPLATE_NON_TYPE_PARAMETER,
                                                                          K.TEMPLATE_TEMPLATE_PARAMETER)]
    count = fn.get_num_template_arguments()  # (a specialization: specialized_template found its pattern)
    return any(i < len(names) and names[i] in words and fn.get_template_argument_kind(i) == ci.TemplateArgumentKind.TYPE
               and is_stand_in_type(fn.get_template_argument_type(i)) for i in range(max(count, 0)))
