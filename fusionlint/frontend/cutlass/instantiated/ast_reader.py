"""The CUTLASS reader's instantiated mode: the GEMMs read from libclang's own specializations of
the CUTLASS templates (when the CUTLASS headers are on the include path)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import clang.cindex as ci

from fusionlint.frontend.clang import clangext
from fusionlint.frontend.cutlass.source import model
from fusionlint.frontend.cutlass.source.evaluator import Evaluator, Res, VInt, VTuple, VType, as_int, parse_type_string, render
from fusionlint.frontend.cutlass.source.evaluator import shape_list as _shape_list
from fusionlint.frontend.cutlass.source.includes import LINE_STRIDE
from fusionlint.frontend.cutlass.source.problem_sizes import split_top_level


# ----------------------------------------------------------------------------------------------
# Instantiated mode: read libclang's specializations


_STMT_KINDS = None


def _stmt_kinds():
    global _STMT_KINDS
    if _STMT_KINDS is None:
        K = ci.CursorKind
        _STMT_KINDS = {K.COMPOUND_STMT, K.DECL_STMT, K.IF_STMT, K.FOR_STMT, K.WHILE_STMT, K.DO_STMT,
                       K.SWITCH_STMT, K.CASE_STMT, K.DEFAULT_STMT, K.LABEL_STMT, K.CXX_TRY_STMT,
                       K.CXX_CATCH_STMT, K.CXX_FOR_RANGE_STMT}
    return _STMT_KINDS


@dataclass
class AstNode:
    kind: str  # mainloop_builder | epilogue_builder | collective_mma | kernel | adapter | gemm2x | other
    template: str
    holder: tuple[int, int] | None
    holder_name: str
    ctx: str
    args: list[Res | None]
    written: int  # number of arguments written by the user (-1 when not known)
    children: dict[str, "AstNode"] = field(default_factory=dict)
    built: dict = field(default_factory=dict)


class AstReader:
    """Follows the sugared types of the main file's declarations into CUTLASS specializations."""

    def __init__(self, unit, ev: Evaluator, headers: list[str] | None = None):
        """``headers``: the files the source reader read, the main file first (``ProjectHeaders.files``):
        a template of a project header that the main file instantiates is followed into, and its
        positions are the reader's (``k * LINE_STRIDE + line`` for the k-th file)."""
        self.unit = unit
        self.ev = ev
        self.main = str(unit.path)
        self._files = {os.path.realpath(f): k for k, f in enumerate(headers or [self.main])}
        self._files[os.path.realpath(self.main)] = 0
        self.nodes: dict[tuple, AstNode] = {}  # (kind, holder, ctx) -> node
        self.referenced: set[tuple] = set()
        self._decl_memo: dict[tuple, AstNode | None] = {}
        self._bodies: set[tuple] = set()
        self._type_memo: dict[str, Res] = {}

    def run(self) -> None:
        for c in self.unit.tu.cursor.get_children():
            if not _in_main_file(c):
                continue
            f = c.location.file
            if f is None or f.name != self.main:
                continue
            self._visit(c)

    def roots(self) -> list[AstNode]:
        return [n for k, n in self.nodes.items() if k not in self.referenced]

    # -- walking the main file -------------------------------------------------------------
    def _visit(self, c) -> None:
        K = ci.CursorKind
        k = c.kind
        if k in (K.NAMESPACE, K.LINKAGE_SPEC, K.UNEXPOSED_DECL):
            for ch in c.get_children():
                if ch.location.file is not None and ch.location.file.name == self.main:
                    self._visit(ch)
        elif k in (K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL):
            if c.get_num_template_arguments() > 0:
                return  # explicit instantiation / specialization: members are not visited by libclang
            for ch in c.get_children():
                self._visit(ch)
        elif k in (K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL):
            self._decl(c)
        elif k in (K.VAR_DECL, K.FIELD_DECL):
            self._analyze(c.type, c)
        elif k in (K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR):
            self._body(c)

    def _body(self, fn) -> None:
        """A function body: its declarations, and the instantiated bodies of the main file's templates
        it calls (a member function of ``Runner<Config>``, a function template ``run<Config>()``): the
        only way to the members of a class template specialization through libclang."""
        loc = fn.location
        # the USR too: a function template specialization's context spells a template template argument "?"
        key = (loc.line, loc.column, fn.spelling, self._ctx(fn, include_self=True), fn.get_usr())
        if key in self._bodies or len(self._bodies) > 400:
            return
        self._bodies.add(key)
        for ch in fn.get_children():
            if ch.kind == ci.CursorKind.COMPOUND_STMT:
                self._stmts(ch)
                self._calls(ch)
        self._fields(fn)

    def _fields(self, fn) -> None:
        """The data members of the main file's class template specializations that an instantiated
        body (its constructor's initialisers included) uses: their types are the specialization's
        member aliases (``Gemm gemm;`` of ``Runner<Config>``), which libclang shows nowhere else."""
        K = ci.CursorKind
        for x in fn.walk_preorder():
            if x.kind not in (K.MEMBER_REF_EXPR, K.MEMBER_REF):
                continue
            f = x.referenced
            if f is None or f.kind != K.FIELD_DECL:
                continue
            loc, parent = f.location, f.semantic_parent
            if self._line(loc) is None or parent is None or parent.get_num_template_arguments() <= 0:
                continue
            key = ("field", loc.line, loc.column, self._ctx(f))
            if key in self._bodies:
                continue
            self._bodies.add(key)
            self._analyze(f.type, f)

    def _calls(self, body) -> None:
        K = ci.CursorKind
        for x in body.walk_preorder():
            if x.kind != K.CALL_EXPR:
                continue
            m = x.referenced
            if m is None or m.kind not in (K.CXX_METHOD, K.FUNCTION_DECL, K.CONSTRUCTOR):
                continue
            if self._line(m.location) is None:
                continue
            parent = m.semantic_parent
            if m.get_num_template_arguments() > 0 or (
                    parent is not None and parent.kind in (K.STRUCT_DECL, K.CLASS_DECL)
                    and parent.get_num_template_arguments() > 0):
                self._body(m)

    def _stmts(self, c) -> None:
        K = ci.CursorKind
        for ch in c.get_children():
            if ch.kind in (K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL):
                self._decl(ch)
            elif ch.kind == K.VAR_DECL:
                self._analyze(ch.type, ch)
            elif ch.kind in (K.STRUCT_DECL, K.CLASS_DECL):
                self._visit(ch)
            elif ch.kind in _stmt_kinds():
                self._stmts(ch)

    # -- types -----------------------------------------------------------------------------
    def _key(self, cursor) -> tuple:
        loc = cursor.location
        return (loc.file.name if loc.file else "", loc.line, loc.column, cursor.spelling, self._ctx(cursor))

    def _decl(self, d) -> AstNode | None:
        key = self._key(d)
        if key in self._decl_memo:
            return self._decl_memo[key]
        self._decl_memo[key] = None
        node = self._analyze(d.underlying_typedef_type, d)
        self._decl_memo[key] = node
        return node

    def _analyze(self, t, holder) -> AstNode | None:
        K = ci.TypeKind
        t0 = t
        if t.kind == K.ELABORATED:
            t = t.get_named_type()
        if t.kind == K.TYPEDEF:
            d = t.get_declaration()
            if d.spelling == "CollectiveOp":
                spec = d.semantic_parent
                q = _qualname(spec)
                if q in (model.MAINLOOP_BUILDER, model.EPILOGUE_BUILDER) and spec.get_num_template_arguments() > 0:
                    return self._builder(spec, q, holder, t0)
            if self._line(d.location) is not None:
                return self._decl(d)
            return None
        if t.kind in (K.UNEXPOSED, K.RECORD):
            decl = t.get_declaration()
            if decl.kind not in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL) and t.kind == K.UNEXPOSED \
                    and holder is None:
                # a template argument that is a substituted template parameter naming a member class
                # (`GemmUniversalAdapter<GemmKernel>` with `gemm_3x<...>::GemmKernel`); a declaration of such a
                # type (`Gemm gemm;` in `run<Gemm>()`) only uses a GEMM declared elsewhere
                t = t.get_canonical()
                decl = t.get_declaration()
            if decl.kind not in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL):
                return None
            q = _qualname(decl)
            if q == model.ADAPTER:
                return self._adapter(t, decl, holder)
            if q == model.KERNEL:
                return self._kernel(t, decl, holder)
            if q == model.COLLECTIVE_MMA:
                return self._plain(t, decl, holder, "collective_mma", q)
            if q in model.GEMM2X:
                return self._plain(t, decl, holder, "gemm2x", q)
            return self._custom(t, decl, holder) or self._base(t, decl, holder)
        return None

    def _base(self, t, decl, holder) -> AstNode | None:
        """A class of the user's that only derives from a CUTLASS kernel, directly or through an alias or
        another such class (vLLM's ``struct GemmKernel : public KernelType {}`` with ``KernelType =
        enable_sm90_or_later<GemmUniversal<...>>``): the kernel its first such base is. Through an alias
        of the user's the GEMM is held where that alias is written; else by ``holder``."""
        if _qualname(decl).startswith(("cute::", "std::", "cutlass::")):
            return None
        for base in self._bases(t, decl):
            node = self._analyze(base, holder)
            if node is not None and node.kind in ("kernel", "custom_kernel"):
                return node
        return None

    @staticmethod
    def _bases(t, decl) -> list:
        """The base class types of ``decl`` (of type ``t``, as written). libclang shows no base of an
        implicit class template specialization: there a base written as one of the template's type
        parameters (``template <class Kernel> struct enable_sm90_or_later : Kernel``) is that argument,
        as ``t`` spells it (the aliases it was written with kept: the collectives' CollectiveOp)."""
        K = ci.CursorKind
        bases = [ch.type for ch in decl.get_children() if ch.kind == K.CXX_BASE_SPECIFIER]
        if bases or decl.get_num_template_arguments() <= 0:
            return bases
        pattern = clangext.specialized_template(decl)
        if pattern is None:
            return []
        params = [ch.spelling for ch in pattern.get_children()
                  if ch.kind in clangext.TEMPLATE_PARAMETERS]
        for ch in pattern.get_children():
            name = ch.type.spelling if ch.kind == K.CXX_BASE_SPECIFIER else ""
            if name in params and params.index(name) < decl.get_num_template_arguments():
                i = params.index(name)
                arg = t.get_template_argument_type(i) if i < t.get_num_template_arguments() else None
                if arg is None or arg.kind == ci.TypeKind.INVALID:
                    arg = decl.get_template_argument_type(i)
                if arg.kind != ci.TypeKind.INVALID:
                    bases.append(arg)
        return bases

    def _custom(self, t, decl, holder) -> AstNode | None:
        """A class template of the user's (a custom kernel) whose arguments are CUTLASS collectives."""
        n = t.get_num_template_arguments()
        if n <= 0 or _qualname(decl).startswith(("cute::", "std::", "cutlass::")) and \
                not _qualname(decl).startswith("cutlass::gemm::kernel::"):
            return None
        children: dict[str, AstNode] = {}
        for i in range(n):
            at = t.get_template_argument_type(i)
            if at.kind == ci.TypeKind.INVALID:
                continue
            sub = self._analyze(at, None)
            if sub is None:
                continue
            role = "epilogue" if sub.kind == "epilogue_builder" else "mainloop" \
                if sub.kind in ("mainloop_builder", "collective_mma") else None
            if role and role not in children:
                children[role] = sub
                self._ref(sub)
        if not children:
            return None
        hl, hn, ctx = self._holder_info(holder)
        node = AstNode("custom_kernel", _qualname(decl), hl, hn, ctx, [], n, children)
        return self._register(node)

    def _holder_info(self, holder) -> tuple[tuple[int, int] | None, str, str]:
        if holder is None:
            return None, "", ""
        loc = holder.location
        line = self._line(loc)
        if line is None:
            return None, holder.spelling, self._ctx(holder)
        return (line, loc.column), holder.spelling, self._ctx(holder)

    def _line(self, loc) -> int | None:
        """The reader's line of a position in the main file or a project header it read; None elsewhere."""
        if loc.file is None:
            return None
        name = loc.file.name
        if name == self.main:
            return loc.line
        k = self._files.get(os.path.realpath(name))
        return None if k is None else k * LINE_STRIDE + loc.line

    def _register(self, node: AstNode) -> AstNode:
        if node.holder is not None:
            key = (node.kind, node.holder, node.ctx)
            if key in self.nodes:
                return self.nodes[key]
            self.nodes[key] = node
        return node

    def _ref(self, node: AstNode | None) -> None:
        if node is not None and node.holder is not None:
            self.referenced.add((node.kind, node.holder, node.ctx))

    def _targs(self, decl) -> list[Res | None]:
        out: list[Res | None] = []
        n = decl.get_num_template_arguments()
        for i in range(max(n, 0)):
            k = _arg_kind(decl, i)
            if k == _TYPE:
                out.append(self._type_res(decl.get_template_argument_type(i)))
            elif k == _INTEGRAL:
                out.append(Res(VInt(_int_arg(decl, i))))
            else:
                out.append(None)
        return out

    def _type_res(self, t) -> Res:
        spelling = self._full_spelling(t.get_canonical(), 0)
        if spelling not in self._type_memo:
            self._type_memo[spelling] = parse_type_string(spelling, self.ev)
        return self._type_memo[spelling]

    def _full_spelling(self, ct, depth: int) -> str:
        """The canonical spelling with every template argument, defaulted ones included (clang's
        own printing leaves out arguments equal to their defaults: ``GemmShape<1, 1, 1>`` prints as
        ``GemmShape<>``)."""
        spelling = ct.spelling
        if depth > 8 or "<" not in spelling and ct.kind != ci.TypeKind.RECORD:
            return spelling
        decl = ct.get_declaration()
        if decl.kind not in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL):
            return spelling
        n = decl.get_num_template_arguments()
        if n <= 0:
            return spelling
        args = []
        for i in range(n):
            k = _arg_kind(decl, i)
            if k == _TYPE:
                args.append(self._full_spelling(decl.get_template_argument_type(i).get_canonical(), depth + 1))
            elif k == _INTEGRAL:
                args.append(str(_int_arg(decl, i)))
            else:  # a pack or a template template argument: keep clang's spelling
                return spelling
        base = spelling.split("<", 1)[0] if "<" in spelling else _qualname(decl)
        return f"{base}<{', '.join(args)}>"

    def _builder(self, spec, q, holder, t0) -> AstNode:
        hl, hn, ctx = self._holder_info(holder)
        kind = "mainloop_builder" if q == model.MAINLOOP_BUILDER else "epilogue_builder"
        node = AstNode(kind, q, hl, hn, ctx, self._targs(spec), -1)
        # what the builder built
        built = self._type_res(t0).value
        if isinstance(built, VType) and built.args:
            policy = built.args[0]
            node.built["dispatch_policy"] = render(policy)
            if kind == "mainloop_builder" and isinstance(policy, VType) and policy.args:
                n = as_int(policy.args[0])
                if n is not None:
                    node.built["stages"] = n
                if len(policy.args) > 2 and isinstance(policy.args[2], VType):
                    node.built["kernel_schedule"] = policy.args[2].name
            if kind == "epilogue_builder" and len(built.args) > 2 and isinstance(built.args[2], VTuple):
                node.built["epilogue_tile"] = _shape_list(built.args[2])
        return self._register(node)

    def _adapter(self, t, decl, holder) -> AstNode:
        hl, hn, ctx = self._holder_info(holder)
        node = AstNode("adapter", model.ADAPTER, hl, hn, ctx, self._targs(decl), t.get_num_template_arguments())
        if t.get_num_template_arguments() > 0:
            k = self._analyze(t.get_template_argument_type(0), None)
            if k is not None:
                node.children["kernel"] = k
                self._ref(k)
        return self._register(node)

    def _kernel(self, t, decl, holder) -> AstNode:
        hl, hn, ctx = self._holder_info(holder)
        node = AstNode("kernel", model.KERNEL, hl, hn, ctx, self._targs(decl), t.get_num_template_arguments())
        n = t.get_num_template_arguments()
        for i, role in ((1, "mainloop"), (2, "epilogue")):
            if i < n:
                sub = self._analyze(t.get_template_argument_type(i), None)
                if sub is not None:
                    node.children[role] = sub
                    self._ref(sub)
        return self._register(node)

    def _plain(self, t, decl, holder, kind, q) -> AstNode:
        hl, hn, ctx = self._holder_info(holder)
        return self._register(AstNode(kind, q, hl, hn, ctx, self._targs(decl), t.get_num_template_arguments()))

    # -- contexts (class template specializations the declaration lives in) -----------------
    def _ctx(self, cursor, include_self: bool = False) -> str:
        parts = []
        p = cursor if include_self else cursor.semantic_parent
        K = ci.CursorKind
        while p is not None and p.kind != K.TRANSLATION_UNIT:
            if p.kind in (K.STRUCT_DECL, K.CLASS_DECL, K.FUNCTION_DECL, K.CXX_METHOD) \
                    and p.get_num_template_arguments() > 0:
                args = [render(r.value) if r is not None else "?" for r in self._targs(p)]
                for i, a in enumerate(args):  # a member of a specialization (`gemm_3x<...>::GemmKernel`) with its own
                    if "<" not in a and _arg_kind(p, i) == _TYPE:
                        spelled = p.get_template_argument_type(i).get_canonical().spelling
                        if "<" in spelled:
                            args[i] = spelled
                if "?" in args and p.kind in (K.STRUCT_DECL, K.CLASS_DECL):  # a template template argument
                    spelled = _top_level_args(p.type.spelling)
                    args = [spelled[i] if a == "?" and i < len(spelled) and _arg_kind(p, i) == _TEMPLATE else a
                            for i, a in enumerate(args)]
                name = _qualname(p)
                if p.kind in (K.FUNCTION_DECL, K.CXX_METHOD):
                    name = f"{name}::{p.spelling}" if name else p.spelling
                parts.append(f"{name}<{', '.join(args)}>")
            p = p.semantic_parent
        return " / ".join(reversed(parts))


_TYPE, _INTEGRAL, _TEMPLATE = 1, 4, 5  # CXTemplateArgumentKind


def _top_level_args(spelling: str) -> list[str]:
    """The template arguments of a type's spelling (``a::b<X, c<Y, Z>, W>``: ``X``, ``c<Y, Z>``, ``W``)."""
    start = spelling.find("<")
    if start < 0 or not spelling.endswith(">"):
        return []
    return split_top_level(spelling[start + 1:-1], "<([", ">)]")


_MAIN_FILE = None


def _in_main_file(c) -> bool:
    """clang_Location_isFromMainFile: a cheap test that skips the headers' top-level declarations."""
    global _MAIN_FILE
    if _MAIN_FILE is None:
        import ctypes
        fn = ci.conf.lib["clang_Location_isFromMainFile"]
        fn.argtypes = [ci.SourceLocation]
        fn.restype = ctypes.c_int
        _MAIN_FILE = fn
    return bool(_MAIN_FILE(c.location))


_RAW_KIND = None


def _int_arg(decl, i: int) -> int:
    """An integral template argument; a bool 'true' (a 1-bit value) reads as -1 signed."""
    v = decl.get_template_argument_value(i)
    if v == -1 and decl.get_template_argument_unsigned_value(i) == 1:
        return 1
    return v


def _arg_kind(decl, i: int) -> int:
    """The raw CXTemplateArgumentKind (the Python bindings reject kinds they do not name, e.g. packs)."""
    global _RAW_KIND
    if _RAW_KIND is None:
        import ctypes
        fn = ci.conf.lib["clang_Cursor_getTemplateArgumentKind"]  # a fresh function object
        fn.argtypes = [ci.Cursor, ctypes.c_uint]
        fn.restype = ctypes.c_int
        _RAW_KIND = fn
    return int(_RAW_KIND(decl, i))


def _qualname(c) -> str:
    parts = []
    while c is not None and c.kind != ci.CursorKind.TRANSLATION_UNIT:
        if c.spelling and c.kind in (ci.CursorKind.NAMESPACE, ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL,
                                     ci.CursorKind.CLASS_TEMPLATE, ci.CursorKind.UNION_DECL,
                                     ci.CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION):
            parts.append(c.spelling)
        c = c.semantic_parent
    return "::".join(reversed(parts))
