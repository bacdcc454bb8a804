"""Stand-in cuBLAS headers generated from the cuBLASLt API model.

``stub_headers()`` returns the text of ``cublasLt.h``, ``cublas_api.h``, ``cublas_v2.h``,
``cublas.h`` and ``library_types.h``.  Each stub declares what the real header of that
name declares (enums with their real values, typedefs, semi-opaque structs with their real
sizes, macros, prototypes), and uses the real header's include guard, so a stub and a real
header of the same name never both take effect.  The stubs include, rather than define,
what belongs to other headers: ``cudaStream_t`` comes from ``<cuda_runtime_api.h>``;
``cuComplex``/``__half``/``__nv_bfloat16`` come from ``<cuComplex.h>``/``<cuda_fp16.h>``/
``<cuda_bf16.h>`` when those can be found, with minimal fallbacks otherwise.

Not modelled: the prototypes of the legacy (v1) API that only ``cublas.h`` declares.
"""
from __future__ import annotations

import re
from functools import lru_cache

from fusionlint.model.cublaslt_api import ApiModel, EnumSpec, FunctionSpec, load_model

STUB_NAMES = ("cublasLt.h", "cublas_api.h", "cublas_v2.h", "cublas.h", "library_types.h")


def banner(model: ApiModel) -> str:
    pkg = model.source.get("package", "nvidia-cublas")
    return f"// fusionlint stub header generated from the cuBLASLt API model ({pkg} {model.version})"


# ---------------------------------------------------------------------------------------------
# Declarators.


def declarator(ctype: str, name: str) -> str:
    """Put ``name`` into a clang type spelling: ``int[]`` -> ``int x[]``,
    ``void (*)(int)`` -> ``void (*x)(int)``, ``const void *`` -> ``const void *x``."""
    if not name:
        return ctype
    if "(*)" in ctype:
        return ctype.replace("(*)", f"(*{name})", 1)
    if ctype.endswith("]"):
        i = ctype.index("[")
        return f"{ctype[:i].rstrip()} {name}{ctype[i:]}"
    if ctype.endswith("*"):
        return f"{ctype}{name}"
    return f"{ctype} {name}"


def _params(fn: FunctionSpec) -> str:
    if not fn.params:
        return "..." if fn.variadic else "void"
    ps = ", ".join(declarator(p.type, p.name) for p in fn.params)
    return ps + (", ..." if fn.variadic else "")


def prototype(fn: FunctionSpec) -> str:
    return f"{fn.returns} CUBLASWINAPI {fn.name}({_params(fn)});"


def _inline_body(fn: FunctionSpec, model: ApiModel, primary: FunctionSpec | None) -> str:
    """Body for a static inline function of the header.

    * ``XInit(obj, ...)`` calling ``XInit_internal(obj, size_t, ...)``: forward with
      ``sizeof(*obj)`` (the size of the caller's storage);
    * a C++ overload of an extern "C" function: forward, casting each argument to the
      primary declaration's parameter type;
    * anything else: a placeholder body (the linter never runs these).
    """
    names = [p.name for p in fn.params]
    internal = model.functions.get(f"{fn.name}_internal")
    if internal is not None and names and len(internal.params) == len(fn.params) + 1 \
            and internal.params[1].type == "size_t":
        args = [names[0], f"sizeof(*{names[0]})", *names[1:]]
        return f"  return {internal.name}({', '.join(args)});"
    if primary is not None and len(primary.params) == len(fn.params):
        args = [
            n if p.type == q.type else f"({q.type})({n})"
            for n, p, q in zip(names, fn.params, primary.params)
        ]
        return f"  return {primary.name}({', '.join(args)});"
    voids = "".join(f"  (void){n};\n" for n in names if n)
    return f"{voids}  return CUBLAS_STATUS_NOT_SUPPORTED; /* stub body */"


def inline_definition(fn: FunctionSpec, model: ApiModel, primary: FunctionSpec | None = None) -> str:
    return f"static inline {fn.returns} {fn.name}({_params(fn)}) {{\n{_inline_body(fn, model, primary)}\n}}"


# ---------------------------------------------------------------------------------------------
# Declarations in header order.


def _enum_text(e: EnumSpec) -> str:
    c_only = set(e.c_only_typedefs)
    plain = [t for t in e.typedefs if t not in c_only]
    fixed = f" : {e.underlying}" if e.underlying != "int" else ""
    body = "\n".join(f"  {n} = {v}," for n, v in e.values.items())
    out: list[str] = []
    if e.tag is None:
        if not plain:
            raise ValueError(f"anonymous enum {e.name} has no typedef")
        out.append(f"typedef enum{fixed} {{\n{body}\n}} {plain[0]};")
        out += [f"typedef {plain[0]} {t};" for t in plain[1:]]
    elif plain:
        out.append(f"typedef enum {e.tag}{fixed} {{\n{body}\n}} {plain[0]};")
        out += [f"typedef enum {e.tag} {t};" for t in plain[1:]]
    else:
        out.append(f"enum {e.tag}{fixed} {{\n{body}\n}};")
    if c_only:
        out.append("#ifndef __cplusplus")
        out += [f"typedef enum {e.tag} {t};" for t in e.c_only_typedefs]
        out.append("#endif")
    return "\n".join(out)


def _typedef_text(name: str, model: ApiModel) -> str:
    value = model.typedefs[name]
    s = model.structs.get(name)
    if value.startswith("struct {") and s is not None and s.fields is not None:
        fields = "\n".join(
            f"  {f.type} {f.name}[{f.array_len}];" if f.array_len is not None else f"  {f.type} {f.name};"
            for f in s.fields
        )
        return f"typedef struct {{\n{fields}\n}} {name};"
    return f"typedef {declarator(value, name)};"


def _struct_text(name: str, model: ApiModel) -> str:
    s = model.structs[name]
    if s.fields is None:
        return f"struct {s.tag or name};"
    fields = "\n".join(
        f"  {f.type} {f.name}[{f.array_len}];" if f.array_len is not None else f"  {f.type} {f.name};"
        for f in s.fields
    )
    return f"struct {s.tag or name} {{\n{fields}\n}};"


def _macro_text(name: str, model: ApiModel) -> str:
    value = model.macros.get(name, "")
    return f"#ifndef {name}\n#define {name}{' ' + value if value else ''}\n#endif"


def declarations(header: str, model: ApiModel) -> list[str]:
    out: list[str] = []
    for entry in model.headers[header].order:
        kind, _, name = entry.partition(":")
        if kind == "enum":
            out.append(_enum_text(model.enums[name]))
        elif kind == "typedef":
            out.append(_typedef_text(name, model))
        elif kind == "struct":
            out.append(_struct_text(name, model))
        elif kind == "macro":
            out.append(_macro_text(name, model))
        else:
            raise ValueError(f"unknown entry {entry!r} in header {header}")
    return out


def function_block(header: str, model: ApiModel) -> list[str]:
    """Prototypes and inline functions of ``header``, wrapped like the real header:
    extern "C" for C++, C++-only declarations under ``#if defined(__cplusplus)``."""
    fns = [f for f in model.functions.values() if f.header == header]
    c_protos = [prototype(f) for f in fns if not f.inline and not f.cplusplus_only]
    cpp_protos = [prototype(f) for f in fns if not f.inline and f.cplusplus_only]
    c_inline = [inline_definition(f, model) for f in fns if f.inline and not f.cplusplus_only]
    cpp_inline = [inline_definition(f, model) for f in fns if f.inline and f.cplusplus_only]
    for f in fns:
        cpp_inline += [inline_definition(o, model, primary=f) for o in f.overloads]
    out = ["#if defined(__cplusplus)", 'extern "C" {', "#endif"]
    out += c_protos
    if cpp_protos:
        out += ["#if defined(__cplusplus)", *cpp_protos, "#endif"]
    out += c_inline
    out += ["#if defined(__cplusplus)", "}", "#endif"]
    if cpp_inline:
        out += ["#if defined(__cplusplus)", *cpp_inline, "#endif"]
    return out


# ---------------------------------------------------------------------------------------------
# The five headers.


def _guarded(model: ApiModel, header: str, body: list[str]) -> str:
    h = model.headers.get(header)
    guard = h.guard if h is not None and h.guard else "FUSIONLINT_STUB_" + re.sub(r"\W", "_", header).upper()
    lines = [banner(model)]
    if h is not None and h.pragma_once:
        lines.append("#pragma once")
    lines += [f"#if !defined({guard})", f"#define {guard}", "", *body, "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


_EXTERNAL_TYPES = """\
/* Types cublas_api.h takes from other CUDA headers: use those headers when they can be
   found, else declare just enough for the prototypes below. */
#if defined(__has_include)
#if __has_include(<cuComplex.h>)
#include <cuComplex.h>
#endif
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#endif
#if __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
#endif
#endif
#if !defined(CU_COMPLEX_H_)
typedef struct __attribute__((aligned(8))) { float x, y; } cuFloatComplex;
typedef struct __attribute__((aligned(16))) { double x, y; } cuDoubleComplex;
typedef cuFloatComplex cuComplex;
#endif
#if defined(__cplusplus)
struct __half;
struct __nv_bfloat16;
#endif"""


def _library_types_h(model: ApiModel) -> str:
    return _guarded(model, "library_types.h", declarations("library_types.h", model))


def _cublas_api_h(model: ApiModel) -> str:
    body = [
        "#include <stdint.h>",
        "#include <stddef.h>",
        "#include <library_types.h>",
        "#include <cuda_runtime_api.h> /* cudaStream_t */",
        "",
        _EXTERNAL_TYPES,
        "",
        *declarations("cublas_api.h", model),
        "",
        *function_block("cublas_api.h", model),
    ]
    return _guarded(model, "cublas_api.h", body)


def _cublaslt_h(model: ApiModel) -> str:
    includes = [f"#include <{i}>" for i in model.headers["cublasLt.h"].includes]
    body = [*includes, "", *declarations("cublasLt.h", model), "", *function_block("cublasLt.h", model)]
    return _guarded(model, "cublasLt.h", body)


def _both_error(model: ApiModel, other_header: str) -> list[str]:
    g = model.headers[other_header].guard
    return [f"#if defined({g})", '#error "cublas.h (legacy API) and cublas_v2.h cannot be used together"', "#endif"]


def _cublas_v2_h(model: ApiModel) -> str:
    body = [
        *_both_error(model, "cublas.h"),
        *declarations("cublas_v2.h", model),
        "#include <cublas_api.h>",
        "",
        *(f"#define {a} {t}" for a, t in model.function_aliases.items()),
    ]
    return _guarded(model, "cublas_v2.h", body)


def _cublas_h(model: ApiModel) -> str:
    body = [
        *_both_error(model, "cublas_v2.h"),
        "#if defined(__has_include)",
        "#if __has_include(<cuda_runtime.h>)",
        "#include <cuda_runtime.h>",
        "#endif",
        "#endif",
        *declarations("cublas.h", model),
        "#include <cublas_api.h>",
        "/* The legacy (v1) prototypes of cublas.h are not part of the model. */",
    ]
    return _guarded(model, "cublas.h", body)


@lru_cache(maxsize=1)
def _stub_headers() -> tuple[tuple[str, str], ...]:
    model = load_model()
    return (
        ("cublasLt.h", _cublaslt_h(model)),
        ("cublas_api.h", _cublas_api_h(model)),
        ("cublas_v2.h", _cublas_v2_h(model)),
        ("cublas.h", _cublas_h(model)),
        ("library_types.h", _library_types_h(model)),
    )


def stub_headers() -> dict[str, str]:
    """Header name -> generated text (cached; a fresh dict each call)."""
    return dict(_stub_headers())
