"""Partial-parse recovery: declarations for the names that headers found nowhere would have declared.

A header found nowhere is parsed as an empty stand-in (``parse._missing_stand_ins``), and what it
declared is then unknown. Where those names only appear inside function bodies, the bodies still
parse (with errors); but a declarator written with them, e.g.
``at::Tensor f(at::Tensor A, std::optional<at::Tensor> x = std::nullopt) { ... }``, reads as a
variable with a parenthesised initializer once ``at`` is undeclared, and the whole function, its
cuBLASLt calls included, is lost.

``stand_in`` writes, from the diagnostics of a parse with every missing header stood in by an empty
file and the text of the files they are in, a permissive header of declarations (never
definitions, nothing executed) for the unknown names: namespaces; one permissive class
(``fusionlint_partial::any``: constructible from anything, convertible to anything, callable,
with every member name the file uses after ``.`` or ``->``) that every unknown type derives from,
each unknown type a class of its own; function templates for unknown functions; variadic macros for unknown ALL_CAPS macro calls;
the standard headers of unknown ``std::`` names. Names of cuBLASLt, the CUDA runtime, CUTLASS and
CuTe, and every word fusionlint's own stand-in headers declare, are never declared here: they come
from the real headers or fusionlint's model of them. ``parse.parse_file`` puts the text in the
first missing header's stand-in and parses once more (``parse._recover``).

``lost_functions`` finds, in the final parse, the function definitions that were still not read as
functions (a namespace-level variable whose declarator is followed by a ``{...}`` body, a function
declaration without its body), for the ``-v`` note and ``fusionlint facts``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import clang.cindex as ci

from fusionlint.frontend.clang import out_of_line

ANY = "::fusionlint_partial::any"
# the values of the constants the recovery declares for ``case`` labels (one each, from here up):
# made up, so the interpreter reads such a constant as unknown (frontend/interp/interpreter.py)
CONSTANT_BASE = 0x46550000
GUARD = "FUSIONLINT_PARTIAL_RECOVERY"
OUT_OF_LINE = " (out-of-line members)"  # how StandIn.names lists a class declared from out-of-line definitions

# names fusionlint never declares: cuBLASLt / cuBLAS, the CUDA runtime and driver, CUTLASS, CuTe
_RESERVED = re.compile(r"^(?:cublas|CUBLAS|cutlass|CUTLASS|cute$|cute_|CUTE|cuda[A-Z_]|cuda$|CUDA_[RC]_|CUDART|CU_|"
                       r"cu[A-Z]|nvcuda|fusionlint|FUSIONLINT|__|operator$)")
_KEYWORDS = frozenset("""
alignas alignof asm auto bool break case catch char char8_t char16_t char32_t class const consteval constexpr
constinit const_cast continue co_await co_return co_yield decltype default delete do double dynamic_cast else
enum explicit export extern false float for friend goto if inline int long mutable namespace new noexcept
nullptr operator private protected public register reinterpret_cast requires return short signed sizeof
static static_assert static_cast struct switch template this thread_local throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while override final
__device__ __host__ __global__ __forceinline__ __shared__ __constant__ __restrict__
""".split())
_TYPE_WORDS = frozenset("void bool char int long short unsigned signed float double auto const volatile static "
                        "inline extern constexpr class struct typename template virtual explicit friend".split())

# standard names a missing header may have brought in, and the header that declares them
_STD_HEADERS: dict[str, str] = {}
for _header, _names in {
    "optional": "optional nullopt nullopt_t make_optional bad_optional_access",
    "stdexcept": "logic_error runtime_error invalid_argument out_of_range domain_error length_error "
                 "overflow_error underflow_error range_error",
    "exception": "exception terminate",
    "string": "string to_string stoi stol stoll stoul stoull stof stod basic_string",
    "string_view": "string_view",
    "vector": "vector",
    "memory": "unique_ptr shared_ptr weak_ptr make_unique make_shared",
    "functional": "function hash reference_wrapper ref cref",
    "tuple": "tuple make_tuple tie tuple_size tuple_element get",
    "utility": "pair make_pair move forward swap declval exchange",
    "map": "map multimap", "unordered_map": "unordered_map", "set": "set multiset",
    "unordered_set": "unordered_set", "array": "array", "deque": "deque", "list": "list",
    "mutex": "mutex lock_guard unique_lock once_flag call_once", "atomic": "atomic",
    "algorithm": "min max sort find fill copy transform any_of all_of none_of count find_if min_element "
                 "max_element", "numeric": "accumulate iota", "limits": "numeric_limits",
    "iostream": "cout cerr endl", "sstream": "stringstream ostringstream istringstream", "ostream": "ostream",
    "type_traits": "is_same enable_if conditional decay remove_reference is_same_v enable_if_t",
    "variant": "variant visit", "cstdint": "int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t",
    "cstddef": "size_t ptrdiff_t nullptr_t", "complex": "complex", "chrono": "chrono", "thread": "thread",
    "cstdio": "printf fprintf sprintf snprintf puts fflush", "cstring": "memcpy memset strlen strcmp strncmp",
    "cstdlib": "malloc free exit abort getenv",
}.items():
    for _n in _names.split():
        _STD_HEADERS[_n] = _header

_UNDECLARED = re.compile(r"^(?:use of undeclared identifier '(?P<name>\w+)'|no member named '(?P<global>\w+)' in "
                         r"the global namespace)")
_UNKNOWN_TYPE = re.compile(r"^unknown type name '(?P<name>\w+)'")
_NO_TEMPLATE = re.compile(r"^no template named '(?P<name>\w+)'(?: in namespace '(?P<ns>[\w:]+)')?")
_NO_MEMBER = re.compile(r"^no (?:member|type|template) named '(?P<name>\w+)' in namespace '(?P<ns>[\w:]+)'")

_TOKEN = re.compile(r"[A-Za-z_]\w*|::|->|&&|\.\.\.|[^\s\w]")
_CODE_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_API_FUNCTION = re.compile(r"^cublasLt[A-Z]\w*$")
_NESTED_RESERVED = re.compile(r"^(?:cublas|CUBLAS|cutlass|CUTLASS|fusionlint|FUSIONLINT|__)")
_CAPS = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]+[0-9][A-Z0-9]*(?:_[A-Z0-9]+)*")  # TORCH_CHECK, C10_CUDA_CHECK
_DECLARED_IN_TEXT = r"\b(?:namespace|struct|class|union|enum|typedef|using|define)\s+(?:class\s+|struct\s+)?{}\b"


@lru_cache(maxsize=4)
def _model_words(texts: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for t in texts for w in re.findall(r"[A-Za-z_]\w*", code_of(t)))


def code_of(text: str) -> str:
    """``text`` with comments and string literals blanked (newlines kept)."""
    return _CODE_NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(code_of(text))


@dataclass
class _Node:
    uses: set[str] = field(default_factory=set)  # "type" | "template" | "function" | "value"
    children: dict[str, _Node] = field(default_factory=dict)


def _use(tokens: list[str], i: int) -> str:
    """How the name at ``tokens[i]`` is used, from the token after it."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    if nxt == "<":
        return "template"
    if nxt == "(":
        return "function"
    if nxt in ("&", "&&", "*", ">", "...", "{") or nxt in _TYPE_WORDS or \
            (re.match(r"[A-Za-z_]", nxt) and nxt not in _KEYWORDS):
        return "type"
    return "value"


def _case_labels(tokens: list[str]) -> frozenset[str]:
    """The names written as ``case`` labels (``case ONNX_NAMESPACE::TensorProto_DataType_FLOAT:``: the last part)."""
    out = set()
    for i, t in enumerate(tokens):
        if t != "case":
            continue
        j, last = i + 1, ""
        while j < len(tokens) and (tokens[j] == "::" or re.match(r"[A-Za-z_]\w*$", tokens[j])):
            last = tokens[j] if tokens[j] != "::" else last
            j += 1
        if last and j < len(tokens) and tokens[j] == ":":
            out.add(last)
    return frozenset(out)


def _type_argument(tokens: list[str], name: str) -> bool:
    """Whether ``name`` is written as a type inside an expression: a template argument or a cast
    (``args[0].cast<DLTensor*>()``, ``static_cast<Foo&>(x)``, ``(Foo*)p``), where clang reports it
    as an undeclared identifier rather than an unknown type name."""
    n = len(tokens)
    for i, t in enumerate(tokens):
        if t != name or not i or tokens[i - 1] not in ("<", ",", "("):
            continue
        nxt = tokens[i + 1] if i + 1 < n else ""
        after = tokens[i + 2] if i + 2 < n else ""
        if (tokens[i - 1] != "(" and nxt == ">") or (nxt in ("*", "&", "&&") and after in (">", ",", ")", "*")):
            return True
    return False


def _chains(tokens: list[str], root: tuple[str, ...], node: _Node, self_use: bool = False) -> None:
    """Grow ``node`` with the qualified names written after ``root`` (``at::cuda::f(`` under ``("at",)``)."""
    n = len(root)
    for i in range(len(tokens) - 2 * n + 1):
        if tokens[i] != root[0] or (i and tokens[i - 1] in (".", "->")):
            continue
        j = i
        ok = True
        for k, part in enumerate(root):
            if tokens[j] != part or (k + 1 < n and (j + 1 >= len(tokens) or tokens[j + 1] != "::")):
                ok = False
                break
            j += 2 if k + 1 < n else 1
        if not ok:
            continue
        # tokens[j-1] is root's last part; follow "::name" parts
        # (``using Tensor = framework::Tensor;``: what an alias names is a type)
        alias = i >= 3 and tokens[i - 1] == "=" and tokens[i - 3] == "using"

        def use_at(k: int) -> str:
            use = _use(tokens, k)
            return "type" if alias and use == "value" else use

        if self_use and not (j < len(tokens) and tokens[j] == "::"):
            node.uses.add(use_at(j - 1))
        cur = node
        while j + 1 < len(tokens) and tokens[j] == "::" and re.match(r"[A-Za-z_]\w*$", tokens[j + 1]):
            name = tokens[j + 1]
            if name == "template" and j + 2 < len(tokens):
                j += 1
                name = tokens[j + 1]
            cur = cur.children.setdefault(name, _Node())
            j += 2
            if not (j < len(tokens) and tokens[j] == "::"):
                cur.uses.add(use_at(j - 1))


def _opens_namespace(code: str, name: str) -> bool:
    """Whether ``code`` opens namespace ``name`` (``namespace at {``, ``namespace at::cuda::blas {``)."""
    return re.search(rf"\bnamespace\s+{re.escape(name)}\s*(?:\{{|::)", code) is not None


def _prune_declared(node: _Node, declared: set[str]) -> bool:
    """Drop from ``node`` the names the translation unit declares (a leaf) and the namespaces left
    empty (a declared name kept for what is under it stays a namespace); whether anything is left."""
    for name, sub in list(node.children.items()):
        if not sub.children and name in declared or sub.children and not _prune_declared(sub, declared):
            del node.children[name]
        elif name in declared:
            sub.uses.clear()  # a namespace the file opens (``namespace at::cuda::blas {``), not a class
    return bool(node.children)


def _shadowed_roots(roots: dict[str, _Node]) -> None:
    """A namespace declared both at global scope and inside another one (``platform::`` and
    ``paddle::platform::``, both written in a file that opens ``namespace paddle``): ``platform::x``
    written inside ``paddle`` finds ``paddle::platform``, so the inner one declares what the
    outer one does too."""
    def visit(node: _Node, path: tuple[str, ...]) -> None:
        for name, sub in list(node.children.items()):
            if name not in path:  # (``a::a::x`` would grow forever)
                if sub.children and name in roots and roots[name] is not sub:
                    _merge(sub, roots[name])
                visit(sub, (*path, name))
    for name, root in list(roots.items()):
        visit(root, (name,))


def _merge(into: _Node, other: _Node) -> None:
    into.uses |= other.uses
    for name, sub in other.children.items():
        _merge(into.children.setdefault(name, _Node()), sub)


@dataclass
class StandIn:
    """The recovery header and what it declares (for the record)."""

    text: str
    names: list[str]


class _Writer:
    def __init__(self, reserved: frozenset[str], case_labels: frozenset[str] = frozenset()) -> None:
        self.reserved = reserved
        # names written as ``case`` labels: constants (an enumerator each, a value of its own, so
        # that the switch parses; the interpreter does not take that value, see CONSTANT_BASE)
        self.case_labels = sorted(case_labels)
        self.forwards_api = False  # a namespace of wrappers names cuBLASLt functions (see node)
        # class path -> member declarations from the main file's out-of-line definitions (out_of_line.py)
        self.members: dict[tuple[str, ...], list[str]] = {}

    def _defines(self, path: tuple[str, ...]) -> bool:
        """Whether the class at ``path`` or one nested in it gets out-of-line members."""
        return any(p[:len(path)] == path for p in self.members)

    def ok(self, name: str) -> bool:
        """A name that may be declared at global scope."""
        return bool(name) and name not in _KEYWORDS and name not in self.reserved and not _RESERVED.match(name)

    def node(self, name: str, node: _Node, indent: str, in_struct: bool, nested: bool = False,
             path: tuple[str, ...] = ()) -> list[str]:
        if nested and not in_struct and not node.children and node.uses == {"function"} and _API_FUNCTION.match(name):
            # a cuBLASLt function called through a namespace of wrappers whose header is missing
            # (Paddle's ``platform::dynload::cublasLtMatmul(...)``, which forwards its arguments):
            # the wrapper is the API function itself
            self.forwards_api = True
            return [f"{indent}using ::{name};"]
        if not (self.ok(name) if not nested else name not in _KEYWORDS and not _NESTED_RESERVED.match(name)):
            return []
        static = "static " if in_struct else ""
        path = (*path, name)
        declared = self.members.get(path, [])
        if (node.children and (node.uses or in_struct)) or declared:
            # a name written both as a qualifier and as a type (or inside such a struct), or a class whose
            # members the file defines out of line: a permissive struct
            body = [f"{indent}struct {name} : {ANY} {{", f"{indent}  using any::any;"]
            # the classes with out-of-line members last: their members' signatures may name the others
            for child, sub in sorted(node.children.items(), key=lambda kv: (self._defines((*path, kv[0])), kv[0])):
                body += self.node(child, sub, indent + "  ", True, True, path)
            return body + [f"{indent}  {d}" for d in declared] + [f"{indent}}};"]
        if node.children:
            body = [f"{indent}namespace {name} {{"]
            for child, sub in sorted(node.children.items()):
                body += self.node(child, sub, indent + "  ", False, True, path)
            return body + [f"{indent}}}"]
        if "template" in node.uses:
            return [f"{indent}template <class... T> using {name} = {ANY};"]
        if "type" in node.uses:
            # a class of its own (not an alias of the one permissive class), so that two unknown
            # types stay two types: std::is_same<at::Half, at::BFloat16> is false, overloads on them
            # are two functions, and an instantiation for each runs its own branch
            return [f"{indent}struct {name} : {ANY} {{ using any::any; }};"]
        if "function" in node.uses:
            return [f"{indent}template <class... T, class... A> {static}{ANY} {name}(A&&...);",
                    f"{indent}template <class... T, class E, class... A> {static}{ANY} {name}("
                    "std::initializer_list<E>, A&&...);"]
        if name in self.case_labels:
            return [f"{indent}enum : long long {{ {name} = {CONSTANT_BASE + self.case_labels.index(name)}LL }};"]
        return [f"{indent}{'static' if in_struct else 'extern'} {ANY} {name};"]


_PRELUDE = """\
namespace fusionlint_partial {
struct any {
  using fusionlint_any_tag = void;
  template <class... A> any(A&&...);
  template <class T> operator T() const;
  template <class... A> any operator()(A&&...) const;
  template <class I> any operator[](I&&) const;
  any* operator->() const;
  any& operator*() const;
  any& operator++(); any operator++(int); any& operator--(); any operator--(int);
  any operator!() const; any operator-() const; any operator~() const; any operator+() const;
  template <class R> any& operator+=(R&&); template <class R> any& operator-=(R&&);
  template <class R> any& operator*=(R&&); template <class R> any& operator/=(R&&);
  template <class R> any& operator|=(R&&); template <class R> any& operator&=(R&&);
  template <class R> any& operator%=(R&&); template <class R> any& operator^=(R&&);
  template <class R> any& operator<<=(R&&); template <class R> any& operator>>=(R&&);
  any* begin() const; any* end() const;
"""

_OPERATORS = """\
template <class T> struct strip { using type = T; };
template <class T> struct strip<T&> : strip<T> {};
template <class T> struct strip<T&&> : strip<T> {};
template <class T> struct strip<const T> : strip<T> {};
template <class T> struct strip<volatile T> : strip<T> {};
template <class T, class = void> struct is_any { static constexpr bool value = false; };
template <class T> struct is_any<T, typename T::fusionlint_any_tag> { static constexpr bool value = true; };
template <bool B> struct when {};
template <> struct when<true> { using type = int; };
#define FUSIONLINT_PARTIAL_OP(op) template <class L, class R, typename when<is_any<typename strip<L>::type>::value \
|| is_any<typename strip<R>::type>::value>::type = 0> any operator op(L&&, R&&);
FUSIONLINT_PARTIAL_OP(+) FUSIONLINT_PARTIAL_OP(-) FUSIONLINT_PARTIAL_OP(*) FUSIONLINT_PARTIAL_OP(/)
FUSIONLINT_PARTIAL_OP(%) FUSIONLINT_PARTIAL_OP(==) FUSIONLINT_PARTIAL_OP(!=) FUSIONLINT_PARTIAL_OP(<)
FUSIONLINT_PARTIAL_OP(>) FUSIONLINT_PARTIAL_OP(<=) FUSIONLINT_PARTIAL_OP(>=) FUSIONLINT_PARTIAL_OP(&&)
FUSIONLINT_PARTIAL_OP(||) FUSIONLINT_PARTIAL_OP(&) FUSIONLINT_PARTIAL_OP(|) FUSIONLINT_PARTIAL_OP(^)
FUSIONLINT_PARTIAL_OP(<<) FUSIONLINT_PARTIAL_OP(>>)
#undef FUSIONLINT_PARTIAL_OP
template <class... A> any call(A&&...);
}  // namespace fusionlint_partial
"""


def _declared_names(tu: ci.TranslationUnit, main_path: str) -> set[str]:
    """Names the translation unit declares at namespace level (any file), and every name the main
    file declares at namespace or class level (a function lost to the errors is still a VAR_DECL
    by its name): these are never stood in."""
    out: set[str] = set()
    K = ci.CursorKind

    def walk(cursor: ci.Cursor, depth: int) -> None:
        for c in cursor.get_children():
            name = c.spelling
            if name:
                out.add(name)
            if c.kind in (K.NAMESPACE, K.LINKAGE_SPEC, K.UNEXPOSED_DECL) or \
                    (depth < 4 and c.kind in (K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE) and c.location.file
                     and c.location.file.name == main_path):
                walk(c, depth + 1)

    walk(tu.cursor, 0)
    return out


def stand_in(tu: ci.TranslationUnit, diagnostics: Iterable, main_path: str, main_text: str,
             model_texts: Mapping[str, str] | None = None) -> StandIn | None:
    """The recovery header for the unknown names of a parse (None: nothing to declare).
    ``diagnostics``: the parse's (``parse.Diagnostic``), from a parse that did not stop at a fatal
    error; ``model_texts``: fusionlint's stand-in headers, whose every word is left alone."""
    texts: dict[str, str] = {main_path: main_text}
    undeclared: dict[str, set[str]] = {}  # name -> files it is reported in
    types: set[str] = set()
    templates: set[str] = set()
    members: dict[tuple[str, ...], set[str]] = {}  # namespace path -> members reported missing there
    std: set[str] = set()
    for d in diagnostics:
        if not names_unknown(d):
            continue
        m = _UNDECLARED.match(d.message)
        if m:
            undeclared.setdefault(m.group("name") or m.group("global"), set()).add(d.path)
        elif (m := _UNKNOWN_TYPE.match(d.message)):
            types.add(m.group("name"))
        elif (m := _NO_TEMPLATE.match(d.message)) and not m.group("ns"):
            templates.add(m.group("name"))
        elif (m := _NO_MEMBER.match(d.message)) or (m := _NO_TEMPLATE.match(d.message)):
            ns = tuple(m.group("ns").split("::"))
            if ns == ("std",):
                std.add(m.group("name"))
            else:
                members.setdefault(ns, set()).add(m.group("name"))
        else:
            continue
        if d.path not in texts:
            try:
                with open(d.path, encoding="utf-8", errors="replace") as f:
                    texts[d.path] = f.read()
            except OSError:
                texts[d.path] = ""
    reserved = _model_words(tuple(model_texts.values())) if model_texts else frozenset()
    declared = _declared_names(tu, main_path)
    code = {p: code_of(t) for p, t in texts.items()}
    tokens = {p: _TOKEN.findall(c) for p, c in code.items()}
    all_tokens = [t for ts in tokens.values() for t in ts]
    writer = _Writer(reserved, _case_labels(all_tokens))

    def defined_in_text(name: str) -> bool:
        return any(re.search(_DECLARED_IN_TEXT.format(re.escape(name)), c) for c in code.values())

    # what the diagnostics cannot show: the names inside a body that an error before it swallowed
    # (a lost declarator takes its body with it): qualified roots and ALL_CAPS calls the parse does
    # not declare, standard names of std:: it does not declare
    main_tokens = tokens[main_path]
    for i, t in enumerate(main_tokens[:-1]):
        global_qualified = i and main_tokens[i - 1] == "::" and (
            i < 2 or not re.match(r"[\w>]", main_tokens[i - 2]))  # ::c10::cuda
        if i and main_tokens[i - 1] in (".", "->", "::") and not global_qualified:
            if main_tokens[i - 1] == "::" and i >= 2 and main_tokens[i - 2] == "std" and t not in declared:
                std.add(t)
            continue
        nxt = main_tokens[i + 1]
        if nxt == "::" and t not in declared and t != "std" and re.match(r"[A-Za-z_]\w*$", t):
            undeclared.setdefault(t, set()).add(main_path)
        elif nxt == "(" and _CAPS.fullmatch(t) and t not in declared:
            undeclared.setdefault(t, set()).add(main_path)
    if "cublasLt" in code[main_path] and "cublasLtMatmul" not in declared:
        std.add("<cublasLt.h>")  # cuBLASLt's names came with a missing header: the real or the model's header
    if not (undeclared or types or templates or members or std):
        return None
    headers: set[str] = set()
    roots: dict[str, _Node] = {}
    globals_: dict[str, str] = {}  # name -> "type" | "template" | "function" | "value" | "macro" | "attribute"
    for name in std:
        if name in _STD_HEADERS:
            headers.add(_STD_HEADERS[name])
        elif name.startswith("<"):
            headers.add(name[1:-1])
    for name in sorted(set(undeclared) | types | templates):
        if name in _STD_HEADERS and not re.match(r"^[A-Z]", name):
            headers.add(_STD_HEADERS[name])
            continue
        if name in declared and name in undeclared and writer.ok(name) and _opens_namespace(code[main_path], name):
            # a namespace the file opens only after using it (PyTorch's ``at::cuda::f()`` inside an
            # anonymous namespace above ``namespace at::cuda::blas {``): the names used in it that
            # nothing declares
            later = _Node()
            for ts in tokens.values():
                _chains(ts, (name,), later)
            if _prune_declared(later, declared):
                _merge(roots.setdefault(name, _Node()), later)
            continue
        if not writer.ok(name) or name in declared or defined_in_text(name):
            continue
        uses = {_use(all_tokens, i) if (i + 1 >= len(all_tokens) or all_tokens[i + 1] != "::") else "qualifier"
                for i, t in enumerate(all_tokens) if t == name and not (i and all_tokens[i - 1] in (".", "->"))
                and not (i >= 2 and all_tokens[i - 1] == "::" and re.match(r"[\w>]", all_tokens[i - 2]))}
        caps = re.fullmatch(r"[A-Z][A-Z0-9_]*", name) is not None
        if "qualifier" in uses:
            node = roots.setdefault(name, _Node())
            node.uses |= uses - {"qualifier"} if name in types or name in templates else set()
            for ts in tokens.values():
                _chains(ts, (name,), node)
            continue
        if name in templates or "template" in uses:
            globals_[name] = "template"
        elif name in types or _type_argument(all_tokens, name):
            nexts = {all_tokens[i + 1] for i, t in enumerate(all_tokens[:-1]) if t == name}
            globals_[name] = "attribute" if caps and nexts & _TYPE_WORDS else "type"
        elif "function" in uses:
            globals_[name] = "macro" if caps else "function"
        else:
            # clang looked for a value there (an undeclared identifier, not an unknown type name):
            # a constant of the missing header (kDLFloat, CUDNN_DATA_HALF) or a global of it
            globals_[name] = "value"
    for ns, names_there in members.items():
        if not writer.ok(ns[0]) or any(p in _KEYWORDS or _NESTED_RESERVED.match(p) for p in ns[1:]) or "std" in ns:
            continue
        node = roots.setdefault(ns[0], _Node())
        sub = node
        for p in ns[1:]:
            sub = sub.children.setdefault(p, _Node())
        for name in names_there:  # only the members reported missing (the namespace is real)
            leaf = sub.children.setdefault(name, _Node())
            for ts in tokens.values():
                _chains(ts, (*ns, name), leaf, self_use=True)
    _shadowed_roots(roots)
    # classes of a header found nowhere whose members the file defines out of line: declared in the
    # namespace the definitions are written in, with those members (out_of_line.py)
    in_namespaces: dict[tuple[str, ...], dict[str, _Node]] = {}
    for ns, classes in out_of_line.members(code[main_path], set(roots), _TOKEN).items():
        for cls, decls in classes.items():
            node = in_namespaces.setdefault(ns, {}).setdefault(cls[0], roots.pop(cls[0], None) or _Node())
            for part in cls[1:]:
                node = node.children.setdefault(part, _Node())
            node.children.pop(cls[-1], None)  # ``X::X(`` read as a member named X: the constructor, declared below
            writer.members.setdefault(cls, []).extend(decls)
            for decl in decls:  # the headers their signatures need (the file may include them only later)
                words = set(re.findall(r"\b\w+\b", decl))
                headers.update(_STD_HEADERS[n] for n in re.findall(r"\bstd :: (\w+)", decl) if n in _STD_HEADERS)
                headers.update(_STD_HEADERS[n] for n in words if _STD_HEADERS.get(n) in ("cstddef", "cstdint"))
                if any(re.match(r"cu[A-Z]|cublas|cuda[A-Z]|CU[a-z]", w) for w in words):
                    headers.add("cublasLt.h")  # the toolkit's types (or fusionlint's model of them)
    # every member name written after '.' or '->' in these files: members of the permissive class
    member_uses: dict[str, str] = {}
    for ts in tokens.values():
        for i in range(1, len(ts) - 1):
            if ts[i - 1] in (".", "->") and re.match(r"[A-Za-z_]\w*$", ts[i]):
                name, k = ts[i], i
                if name == "template" and i + 1 < len(ts):
                    name, k = ts[i + 1], i + 1
                if name in _KEYWORDS or name == "any" or name.startswith("operator") or not re.match(r"\w+$", name):
                    continue
                kind = "template" if k + 1 < len(ts) and ts[k + 1] == "<" else "data"
                if member_uses.get(name) != "template":
                    member_uses[name] = kind
    member_uses = {n: k for n, k in member_uses.items()
                   if n not in ("begin", "end", "fusionlint_any_tag") and not n.startswith("__")}

    root_lines = {name: writer.node(name, root, "", False) for name, root in sorted(roots.items())}
    if writer.forwards_api:
        headers.add("cublasLt.h")
    out = ["/* fusionlint: declarations (only) for names the headers found nowhere would have declared */",
           f"#ifndef {GUARD}", f"#define {GUARD}", "#include <initializer_list>"]
    for h in sorted(headers):  # a standard header this machine lacks is left out, not a fatal error
        out += [f"#if __has_include(<{h}>)", f"#include <{h}>", "#endif"]
    out.append(_PRELUDE.rstrip("\n"))
    for name, kind in sorted(member_uses.items()):
        if kind == "template":
            out.append(f"  template <class... T, class... A> any {name}(A&&...) const;")
        else:
            out.append(f"  static any {name};")
    out.append("};")
    out.append(_OPERATORS.rstrip("\n"))
    names: list[str] = sorted(headers and [f"<{h}>" for h in headers] or [])
    for name, lines in root_lines.items():
        if lines:
            out += lines
            names.append(f"{name}::")
    for name, kind in sorted(globals_.items()):
        if kind == "macro":
            out += [f"#ifndef {name}", f"#define {name}(...) ::fusionlint_partial::call(__VA_ARGS__)", "#endif"]
        elif kind == "attribute":
            out += [f"#ifndef {name}", f"#define {name}", "#endif"]
        else:
            out += writer.node(name, _Node(uses={kind}), "", False)
        names.append(name)
    for ns, classes in in_namespaces.items():  # last: their members' signatures name the globals above
        out += [f"namespace {n} {{" for n in ns]
        for name, node in sorted(classes.items()):
            out += writer.node(name, node, "", False)
            names.append(f"{'::'.join((*ns, name))}::{OUT_OF_LINE}")
        out += ["}" for _ in ns]
    if not names:
        return None
    out.append(f"#endif  // {GUARD}")
    return StandIn("\n".join(out) + "\n", names)


# ----------------------------------------------------------------------------------------------
# Functions the parse did not read as functions

_AFTER_DECLARATOR = re.compile(r"\s*(?:(?:const|noexcept|override|final|volatile|&&?|throw\s*\(\s*\)|"
                               r"->\s*[\w:<>,\s*&]+?)\s*)*\{")


def _close(code: str, start: int) -> int:
    """The index after the parenthesis closing the one at ``code[start]``; -1 when unbalanced."""
    depth = 0
    for i in range(start, min(len(code), start + 20000)):
        ch = code[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif ch == ";":
            return -1
    return -1


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for m in re.finditer("\n", text):
        offsets.append(m.end())
    return offsets


@dataclass(frozen=True)
class LostFunction:
    name: str
    line: int
    reason: str

    def message(self) -> str:
        return f"function `{self.name}` at line {self.line} not read: {self.reason}"


def lost_functions(tu: ci.TranslationUnit, main_path: str, text: str, diagnostics: Iterable) -> list[LostFunction]:
    """The function definitions of the main file that the parse did not read as functions: a
    namespace- or class-level variable whose name is followed by a parenthesised declarator and a
    ``{`` body, or a function declaration followed by a body it does not have."""
    K = ci.CursorKind
    code = code_of(text)
    offsets = _line_offsets(code)
    errors = sorted((d.line, d.column, d.message) for d in diagnostics
                    if d.severity in ("error", "fatal") and d.path == main_path)
    out: list[LostFunction] = []
    seen: set[tuple[str, int]] = set()

    def body_follows(line: int, column: int, name: str) -> int | None:
        """The line of the ``{`` when the name at (line, column) is followed by ``(...)`` and a body."""
        if line - 1 >= len(offsets):
            return None
        start = offsets[line - 1] + len(code[offsets[line - 1]:].encode("utf-8")[:column - 1].decode("utf-8", "ignore"))
        if not code.startswith(name, start):
            return None
        i = start + len(name)
        while i < len(code) and code[i] in " \t\r\n":
            i += 1
        if i >= len(code) or code[i] != "(":
            return None
        end = _close(code, i)
        if end < 0:
            return None
        m = _AFTER_DECLARATOR.match(code, end)
        if m is None:
            return None
        return code.count("\n", 0, m.end()) + 1

    def reason(first: int, last: int) -> str:
        inside = [e for e in errors if first <= e[0] <= last]
        if inside:
            line, column, message = inside[0]
            return f"{line}:{column}: {message}"
        return "the parse did not read it as a function"

    def walk(cursor: ci.Cursor, depth: int) -> None:
        for c in cursor.get_children():
            loc = c.location
            if loc.file is None or loc.file.name != main_path:
                continue
            if c.kind in (K.NAMESPACE, K.LINKAGE_SPEC, K.UNEXPOSED_DECL) or \
                    (depth < 4 and c.kind in (K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE)):
                walk(c, depth + 1)
                continue
            lost = False
            if c.kind in (K.VAR_DECL, K.FIELD_DECL):
                lost = True
            elif c.kind in (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONSTRUCTOR) and \
                    not c.is_definition():
                lost = True
            if not lost or not c.spelling:
                continue
            brace = body_follows(loc.line, loc.column, c.spelling)
            if brace is None or (c.spelling, loc.line) in seen:
                continue
            if c.kind not in (K.VAR_DECL, K.FIELD_DECL) and any(
                    ch.kind == K.COMPOUND_STMT for ch in c.get_children()):
                continue
            seen.add((c.spelling, loc.line))
            first = c.extent.start.line if c.extent.start.file else loc.line
            out.append(LostFunction(c.spelling, loc.line, reason(first, brace)))

    walk(tu.cursor, 0)
    return out


# ----------------------------------------------------------------------------------------------
# The recovery parse

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


def _code_keeping_includes(text: str) -> str:
    """``text`` with comments blanked (include names are string-like, so kept)."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def includes_written(text: str) -> list[str]:
    """The headers ``text`` includes, as written (``#include`` lines out of comments)."""
    return _INCLUDE.findall(_code_keeping_includes(text))


def _score(tu: ci.TranslationUnit, diags: list, main_path: str, text: str) -> tuple[int, int]:
    """(functions lost, errors in the main file): lower is better."""
    return (len(lost_functions(tu, main_path, text, diags)),
            sum(1 for d in diags if d.severity in ("error", "fatal") and d.path == main_path))


def names_unknown(d) -> bool:
    """Whether diagnostic ``d`` reports a name that ``stand_in`` declares (of a file, not of a stand-in)."""
    return d.severity in ("error", "fatal") and bool(d.path) and not d.path.startswith("/__fusionlint__") and any(
        pat.match(d.message) for pat in (_UNDECLARED, _UNKNOWN_TYPE, _NO_TEMPLATE, _NO_MEMBER))


def wants_recovery(unit) -> bool:
    """A parse with headers found nowhere that has errors in the main file, or stopped at a fatal error."""
    return bool(unit.missing_headers) and any(
        d.severity == "fatal" or (d.severity == "error" and d.path == str(unit.path)) for d in unit.diagnostics)
