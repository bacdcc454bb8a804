#!/usr/bin/env python3
"""Generate the cuBLASLt API model (fusionlint/model/cublaslt_api.yaml).

This is developer tooling, run by hand; fusionlint never runs it.  It parses
the cuBLAS headers of a pip wheel with libclang and writes a YAML model of
the API (enums with their values, attribute value types, typedefs, structs,
macros, function prototypes) plus the differences of other header versions.
Nothing in the output is typed in by hand except the small table
ATTRIBUTE_OVERRIDES below, whose entries each say why they exist.

Example (see docs/cublaslt-api-versions.md for the full recipe):

    python tools/gen_cublaslt_model.py \
        --cublas-include /tmp/cublas131/nvidia/cu13/include \
        --cuda-include /tmp/cudart13/nvidia/cu13/include \
        --compare 12.9.3.13=/tmp/cublas12/nvidia/cublas/include:/tmp/cudart12/nvidia/cuda_runtime/include \
        --compare 13.10.0.20=/tmp/cublas13/nvidia/cu13/include:/tmp/cudart13/nvidia/cu13/include
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import clang.cindex as ci
import yaml

CK = ci.CursorKind
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "fusionlint" / "frontend" / "api" / "cublaslt.yaml"

# Headers whose declarations go into the model.  cublasLt.h pulls in
# cublas_api.h, which pulls in library_types.h; cublas_v2.h and cublas.h are
# parsed in their own translation units (they are mutually exclusive).
MAIN_HEADERS = ("cublasLt.h", "cublas_api.h", "library_types.h")
EXTRA_HEADERS = ("cublas_v2.h", "cublas.h")
ALL_HEADERS = MAIN_HEADERS + EXTRA_HEADERS

# Enums whose enumerators are attribute ids of a *Set/GetAttribute call.
ATTRIBUTE_ENUM_RE = re.compile(r"^cublasLt\w*Attributes?_t$")

# ---------------------------------------------------------------------------
# Minimal stand-ins for the compiler resource headers (the PyPI libclang wheel
# has none).  Only what the cuBLAS/CUDA headers and glibc need.
RESOURCE_HEADERS = {
    "stddef.h": """#ifndef FL_GEN_STDDEF_H
#define FL_GEN_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#ifndef __cplusplus
typedef __WCHAR_TYPE__ wchar_t;
#endif
#endif
#undef NULL
#ifdef __cplusplus
#define NULL __null
#else
#define NULL ((void *)0)
#endif
#ifndef offsetof
#define offsetof(t, d) __builtin_offsetof(t, d)
#endif
""",
    "stdarg.h": """#ifndef FL_GEN_STDARG_H
#define FL_GEN_STDARG_H
typedef __builtin_va_list va_list;
typedef __builtin_va_list __gnuc_va_list;
#define va_start(v, l) __builtin_va_start(v, l)
#define va_end(v) __builtin_va_end(v)
#define va_arg(v, l) __builtin_va_arg(v, l)
#define va_copy(d, s) __builtin_va_copy(d, s)
#endif
""",
    "stdbool.h": """#ifndef __cplusplus
#define bool _Bool
#define true 1
#define false 0
#endif
""",
    "limits.h": """#ifndef FL_GEN_LIMITS_H
#define FL_GEN_LIMITS_H
#define CHAR_BIT __CHAR_BIT__
#define SCHAR_MAX __SCHAR_MAX__
#define SCHAR_MIN (-__SCHAR_MAX__ - 1)
#define UCHAR_MAX (__SCHAR_MAX__ * 2 + 1)
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define SHRT_MAX __SHRT_MAX__
#define SHRT_MIN (-__SHRT_MAX__ - 1)
#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2U + 1U)
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-__LONG_MAX__ - 1L)
#define ULONG_MAX (__LONG_MAX__ * 2UL + 1UL)
#define LLONG_MAX __LONG_LONG_MAX__
#define LLONG_MIN (-__LONG_LONG_MAX__ - 1LL)
#define ULLONG_MAX (__LONG_LONG_MAX__ * 2ULL + 1ULL)
#endif
""",
}

# ---------------------------------------------------------------------------
# Attribute value types that the comment parser cannot derive (or derives
# wrongly).  Each entry was resolved by reading the header comment; the note
# says what the comment says.  `when` is a substring the comment must contain
# for the override to apply (so a changed comment in another version is not
# silently overridden).
ATTRIBUTE_OVERRIDES: dict[str, dict[str, Any]] = {
    "CUBLASLT_MATMUL_DESC_BIAS_POINTER": {
        "when": "Bias gradient case",
        "type": "void *",
        "alternatives": ["const void *", "void *"],
        "note": "from comment: 'const void *' for bias input, 'void *' for bias-gradient output; "
        "either way a device pointer (8 bytes)",
    },
    "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER": {
        "when": "Backward pass",
        "type": "void *",
        "alternatives": ["void *", "const void *"],
        "note": "from comment: 'void *' in the forward pass (aux output), 'const void *' in the "
        "backward pass (aux input); either way a device pointer (8 bytes)",
    },
    # The comment says "see cudaDataType", but the descriptor is created from a
    # cublasComputeType_t (cublasLtMatmulDescCreate/Init take one).
    "CUBLASLT_MATMUL_DESC_COMPUTE_TYPE": {
        "when": "Compute type",
        "enum": "cublasComputeType_t",
        "note": "from comment: 'Compute type, see cudaDataType ... int32_t'; the value is a "
        "cublasComputeType_t (the type cublasLtMatmulDescCreate takes)",
    },
    # The *_SCALE_MODE comments name no enum; the values are cublasLtMatmulMatrixScale_t.
    **{
        f"CUBLASLT_MATMUL_DESC_{m}_SCALE_MODE": {
            "when": "Scaling mode",
            "enum": "cublasLtMatmulMatrixScale_t",
            "note": "from comment: 'Scaling mode that defines how the ... scaling factor is "
            "interpreted'; values are cublasLtMatmulMatrixScale_t",
        }
        for m in ("A", "B", "C", "D", "EPILOGUE_AUX", "D_OUT")
    },
    # "see cublasLtOrder_t" here explains the capability; the value is a flag.
    "CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER": {
        "when": "memory order",
        "enum": None,
        "note": "from comment: 'int32_t 0 means only COL and ROW memory order is allowed, "
        "non-zero means ...' (a flag, not a cublasLtOrder_t)",
    },
}

# ---------------------------------------------------------------------------


@dataclass
class Extracted:
    """Everything taken from one set of headers."""

    cublas_version: str
    library_types_from: str
    enums: dict[str, dict] = field(default_factory=dict)
    attributes: dict[str, dict] = field(default_factory=dict)
    typedefs: dict[str, str] = field(default_factory=dict)
    structs: dict[str, dict] = field(default_factory=dict)
    macros: dict[str, str] = field(default_factory=dict)
    macro_values: dict[str, int] = field(default_factory=dict)
    function_aliases: dict[str, str] = field(default_factory=dict)
    functions: dict[str, dict] = field(default_factory=dict)
    legacy_functions: dict[str, dict] = field(default_factory=dict)
    headers: dict[str, dict] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)
    not_mechanical: list[str] = field(default_factory=list)
    overridden: list[str] = field(default_factory=list)


def _src_text(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _extent_text(cursor: ci.Cursor, cache: dict[str, bytes]) -> str:
    ext = cursor.extent
    fname = ext.start.file.name
    data = cache.setdefault(fname, _src_text(fname))
    return data[ext.start.offset : ext.end.offset].decode("utf-8", "replace")


def _norm_ws(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace("\\\n", " ")).strip()


def _tokens(cursor: ci.Cursor) -> list[str]:
    return [t.spelling for t in cursor.get_tokens()]


class HeaderSet:
    def __init__(self, cublas_dir: str, cuda_dirs: list[str], fallback_dirs: list[str]):
        self.cublas_dir = os.path.realpath(cublas_dir)
        self.cuda_dirs = [os.path.realpath(d) for d in cuda_dirs]
        self.fallback_dirs = [os.path.realpath(d) for d in fallback_dirs]
        self.resdir = tempfile.mkdtemp(prefix="fl_gen_res_")
        for name, text in RESOURCE_HEADERS.items():
            Path(self.resdir, name).write_text(text)
        self.index = ci.Index.create()
        self.src_cache: dict[str, bytes] = {}

    # -- parsing -----------------------------------------------------------
    def args(self, lang: str) -> list[str]:
        a = ["-x", lang, "-std=c++17" if lang == "c++" else "-std=c11", "-fparse-all-comments"]
        a += ["-isystem", self.resdir, "-I", self.cublas_dir]
        for d in self.cuda_dirs + self.fallback_dirs:
            a += ["-I", d]
        return a

    def parse(self, text: str, lang: str = "c++", name: str = "fl_gen_main.cpp") -> ci.TranslationUnit:
        opts = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
        tu = self.index.parse(name, args=self.args(lang), unsaved_files=[(name, text)], options=opts)
        errs = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        if errs:
            for d in errs[:20]:
                print(f"  clang: {d.location}: {d.spelling}", file=sys.stderr)
            raise SystemExit(f"errors parsing {text!r} ({lang}) with {self.cublas_dir}")
        return tu

    def owned_files(self, tu: ci.TranslationUnit, owned: tuple[str, ...]) -> dict[str, str]:
        """Map real paths of the headers we model to their base names."""
        out: dict[str, str] = {}
        for inc in tu.get_includes():
            p = os.path.realpath(inc.include.name)
            base = os.path.basename(p)
            if base not in owned or base in out.values():
                continue
            if base == "library_types.h":
                if any(p.startswith(d + os.sep) for d in self.cuda_dirs + self.fallback_dirs):
                    out[p] = base
            elif os.path.dirname(p) == self.cublas_dir:
                out[p] = base
        return out

    # -- top-level walk ------------------------------------------------------
    @staticmethod
    def top_level(tu: ci.TranslationUnit):
        for c in tu.cursor.get_children():
            if c.kind == CK.LINKAGE_SPEC:
                yield from c.get_children()
            else:
                yield c

    def file_of(self, c: ci.Cursor, files: dict[str, str]) -> str | None:
        f = c.location.file
        if f is None:
            return None
        return files.get(os.path.realpath(f.name))

    # -- main ---------------------------------------------------------------
    def extract(self) -> Extracted:
        tu = self.parse("#include <cublasLt.h>\n")
        tu_c = self.parse("#include <cublasLt.h>\n", lang="c", name="fl_gen_main.c")
        files = self.owned_files(tu, MAIN_HEADERS)
        files_c = self.owned_files(tu_c, MAIN_HEADERS)
        missing = set(MAIN_HEADERS) - set(files.values())
        if missing:
            raise SystemExit(f"headers not found: {sorted(missing)}")
        lt_path = next(p for p, b in files.items() if b == "library_types.h")

        ex = Extracted(cublas_version="", library_types_from=lt_path)
        for h in ALL_HEADERS:
            ex.headers[h] = {"guard": None, "pragma_once": False, "includes": [], "order": [], "pos": {}}

        enum_by_loc: dict[tuple[str, int], str] = {}
        self._walk_main(tu, files, ex, enum_by_loc, lang="c++")
        c_functions = self._walk_c(tu_c, files_c, ex, enum_by_loc)
        for name, fn in ex.functions.items():
            if name not in c_functions:
                fn["cplusplus_only"] = True

        # cublas_v2.h and cublas.h, each in its own TU.
        tu_v2 = self.parse("#include <cublas_v2.h>\n")
        self._walk_extra(tu_v2, self.owned_files(tu_v2, ("cublas_v2.h",)), ex)
        tu_v1 = self.parse("#include <cublas.h>\n")
        self._walk_extra(tu_v1, self.owned_files(tu_v1, ("cublas.h",)), ex)

        # Header guards / include lists straight from the text.
        all_files = dict(files)
        all_files.update(self.owned_files(tu_v2, ("cublas_v2.h",)))
        all_files.update(self.owned_files(tu_v1, ("cublas.h",)))
        for path, base in all_files.items():
            text = _src_text(path).decode("utf-8", "replace")
            ex.headers[base].update(scan_header_text(text))
            guard = ex.headers[base]["guard"]
            if guard:
                ex.macros.pop(guard, None)
                if f"macro:{guard}" in ex.headers[base]["order"]:
                    ex.headers[base]["order"].remove(f"macro:{guard}")

        # Function-like #defines of cublas_v2.h are aliases: cublasX -> cublasX_v2.
        for hname in ("cublas_v2.h", "cublas_api.h", "cublasLt.h"):
            order = ex.headers[hname]["order"]
            for entry in list(order):
                kind, _, mname = entry.partition(":")
                if kind != "macro":
                    continue
                val = ex.macros.get(mname, "")
                if re.fullmatch(r"[A-Za-z_]\w*", val) and (val in ex.functions or hname == "cublas_v2.h"):
                    ex.function_aliases[mname] = val
                    del ex.macros[mname]
                    order.remove(entry)

        for h in ex.headers.values():
            h["order"].sort(key=lambda e: h["pos"][e])

        v = {k: ex.macros.get(f"CUBLAS_VER_{k}") for k in ("MAJOR", "MINOR", "PATCH", "BUILD")}
        ex.cublas_version = ".".join(str(v[k]) for k in ("MAJOR", "MINOR", "PATCH", "BUILD"))

        self._evaluate_macros(ex)
        self._build_attributes(ex)
        return ex

    # -- enums, typedefs, structs, functions, macros -----------------------------
    def _enum_entry(self, c: ci.Cursor, header: str) -> dict:
        toks = _tokens(c)
        # enum [class|struct] [tag] [: type] { ... }
        i = 1
        if i < len(toks) and toks[i] in ("class", "struct"):
            i += 1
        tag = toks[i] if i < len(toks) and re.fullmatch(r"[A-Za-z_]\w*", toks[i]) else None
        brace = toks.index("{") if "{" in toks else len(toks)
        fixed = ":" in toks[:brace]
        values: dict[str, int] = {}
        aliases: dict[str, str] = {}
        first_by_value: dict[int, str] = {}
        for ch in c.get_children():
            if ch.kind != CK.ENUM_CONSTANT_DECL:
                continue
            name, val = ch.spelling, ch.enum_value
            rhs = [t for t in _tokens(ch)[2:] if t not in ("(", ")")]
            if len(rhs) == 1 and rhs[0] in values:
                aliases[name] = rhs[0]
            elif val in first_by_value:
                aliases[name] = first_by_value[val]
            first_by_value.setdefault(val, name)
            values[name] = val
        e: dict[str, Any] = {
            "header": header,
            "tag": tag,
            "typedefs": [],
            "underlying": c.enum_type.spelling if fixed else "int",
            "values": values,
        }
        if aliases:
            e["aliases"] = aliases
        return e

    @staticmethod
    def _loc_key(c: ci.Cursor) -> tuple[str, int]:
        return (os.path.realpath(c.location.file.name), c.location.offset)

    def _record_struct(self, c: ci.Cursor, key: str, tag: str | None, header: str) -> dict:
        fields = None
        if c.is_definition():
            fields = []
            for f in c.get_children():
                if f.kind != CK.FIELD_DECL:
                    continue
                t = f.type
                if t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
                    n = t.get_array_size() if t.kind == ci.TypeKind.CONSTANTARRAY else None
                    fields.append([t.get_array_element_type().spelling, f.spelling, n])
                else:
                    fields.append([t.spelling, f.spelling, None])
        s: dict[str, Any] = {"header": header, "tag": tag, "fields": fields}
        if fields is not None:
            s["size"] = c.type.get_size()
        return s

    def _function_entry(self, c: ci.Cursor, header: str) -> dict:
        params = [[p.type.spelling, p.spelling] for p in c.get_arguments()]
        fn: dict[str, Any] = {"header": header, "returns": c.result_type.spelling, "params": params}
        if c.type.kind == ci.TypeKind.FUNCTIONPROTO and c.type.is_function_variadic():
            fn["variadic"] = True
        if c.storage_class == ci.StorageClass.STATIC:
            fn["inline"] = True
            calls: list[str] = []
            for d in c.walk_preorder():
                if d.kind == CK.CALL_EXPR and d.spelling and d.spelling not in calls:
                    calls.append(d.spelling)
            fn["calls"] = calls
        return fn

    def _walk_main(self, tu, files, ex: Extracted, enum_by_loc, lang: str) -> None:
        seen_struct: set[str] = set()
        for c in self.top_level(tu):
            header = self.file_of(c, files)
            if header is None:
                continue
            order = ex.headers[header]["order"]
            if c.kind == CK.ENUM_DECL:
                key = self._loc_key(c)
                if key in enum_by_loc:
                    continue
                e = self._enum_entry(c, header)
                tmp = f"@{len(enum_by_loc)}"
                enum_by_loc[key] = tmp
                ex.enums[tmp] = e
                self._add(ex, header, f"enum:{tmp}", c)
            elif c.kind == CK.TYPEDEF_DECL:
                u = c.underlying_typedef_type
                decl = u.get_declaration()
                canon = u.get_canonical()
                if canon.kind == ci.TypeKind.ENUM and decl.kind == CK.ENUM_DECL:
                    tmp = enum_by_loc[self._loc_key(decl)]
                    if c.spelling not in ex.enums[tmp]["typedefs"]:
                        ex.enums[tmp]["typedefs"].append(c.spelling)
                    continue
                if decl.kind == CK.STRUCT_DECL and _tokens(decl)[1:2] == ["{"]:
                    s = self._record_struct(decl, c.spelling, None, header)
                    ex.structs[c.spelling] = s
                    body = " ".join(
                        f"{t} {n}[{k}];" if k is not None else f"{t} {n};" for t, n, k in s["fields"]
                    )
                    ex.typedefs[c.spelling] = f"struct {{ {body} }}"
                else:
                    ex.typedefs[c.spelling] = u.spelling
                self._add(ex, header, f"typedef:{c.spelling}", c)
            elif c.kind == CK.STRUCT_DECL:
                toks = _tokens(c)
                if toks[1:2] == ["{"] or not c.spelling:
                    continue  # anonymous: recorded with its typedef
                if c.spelling in seen_struct and not c.is_definition():
                    continue
                seen_struct.add(c.spelling)
                ex.structs[c.spelling] = self._record_struct(c, c.spelling, c.spelling, header)
                if f"struct:{c.spelling}" not in order:
                    self._add(ex, header, f"struct:{c.spelling}", c)
            elif c.kind == CK.FUNCTION_DECL:
                fn = self._function_entry(c, header)
                name = c.spelling
                if name in ex.functions:
                    first = ex.functions[name]
                    sig = [p[0] for p in fn["params"]]
                    known = [[p[0] for p in first["params"]]] + [
                        [p[0] for p in o["params"]] for o in first.get("overloads", [])
                    ]
                    if sig not in known:
                        fn.pop("header")
                        fn["cplusplus_only"] = True
                        first.setdefault("overloads", []).append(fn)
                    continue
                ex.functions[name] = fn
            elif c.kind == CK.MACRO_DEFINITION:
                self._record_macro(c, header, ex)
        # Give enums their names now that all typedefs are known.
        for key, tmp in list(enum_by_loc.items()):
            e = ex.enums.pop(tmp)
            name = e["tag"] or (e["typedefs"][0] if e["typedefs"] else None)
            if name is None:
                raise SystemExit(f"anonymous enum without typedef at {key}")
            enum_by_loc[key] = name
            ex.enums[name] = e
            hdr = ex.headers[e["header"]]
            hdr["order"][hdr["order"].index(f"enum:{tmp}")] = f"enum:{name}"
            hdr["pos"][f"enum:{name}"] = hdr["pos"].pop(f"enum:{tmp}")

    def _walk_c(self, tu, files, ex: Extracted, enum_by_loc) -> set[str]:
        """C-mode pass: extra typedefs that only C sees, and the set of C functions."""
        functions: set[str] = set()
        for c in self.top_level(tu):
            header = self.file_of(c, files)
            if header is None:
                continue
            if c.kind == CK.FUNCTION_DECL:
                functions.add(c.spelling)
            elif c.kind == CK.TYPEDEF_DECL:
                u = c.underlying_typedef_type
                decl = u.get_declaration()
                if u.get_canonical().kind == ci.TypeKind.ENUM and decl.kind == CK.ENUM_DECL:
                    name = enum_by_loc.get(self._loc_key(decl))
                    if name and c.spelling not in ex.enums[name]["typedefs"]:
                        ex.enums[name]["typedefs"].append(c.spelling)
                        ex.enums[name].setdefault("c_only_typedefs", []).append(c.spelling)
        return functions

    def _walk_extra(self, tu, files, ex: Extracted) -> None:
        for c in self.top_level(tu):
            header = self.file_of(c, files)
            if header is None:
                continue
            if c.kind == CK.MACRO_DEFINITION:
                self._record_macro(c, header, ex)
            elif c.kind == CK.FUNCTION_DECL:
                ex.legacy_functions[c.spelling] = self._function_entry(c, header)
            elif c.kind in (CK.ENUM_DECL, CK.TYPEDEF_DECL, CK.STRUCT_DECL):
                raise SystemExit(f"unexpected declaration {c.spelling} in {header}")

    def _record_macro(self, c: ci.Cursor, header: str, ex: Extracted) -> None:
        toks = list(c.get_tokens())
        if len(toks) > 1 and toks[1].spelling == "(" and toks[1].extent.start.offset == toks[0].extent.end.offset:
            return  # function-like macro: none of interest in these headers
        text = _norm_ws(_extent_text(c, self.src_cache))
        name = c.spelling
        value = text[len(name) :].strip() if text.startswith(name) else ""
        if name in ex.macros and ex.macros[name] != value:
            print(f"  note: macro {name} redefined in {header}: {value!r}", file=sys.stderr)
        ex.macros.setdefault(name, value)
        if f"macro:{name}" not in ex.headers[header]["order"]:
            self._add(ex, header, f"macro:{name}", c)

    @staticmethod
    def _add(ex: Extracted, header: str, entry: str, c: ci.Cursor) -> None:
        ex.headers[header]["order"].append(entry)
        ex.headers[header]["pos"][entry] = c.extent.start.offset

    # -- macro evaluation / attribute sizes via clang ----------------------------
    def _evaluate_macros(self, ex: Extracted) -> None:
        cands = [
            n
            for n, v in ex.macros.items()
            if v and re.fullmatch(r"[\w\s()<>|&+*x-]+", v) and not re.fullmatch(r"[A-Za-z_]\w*", v)
        ]
        cands += [n for n, v in ex.macros.items() if re.fullmatch(r"\d+", v or "") and n not in cands]
        if not cands:
            return
        lines = ["#include <cublasLt.h>", "enum fl_gen_macro_values : unsigned long long {"]
        lines += [f"  fl_gen_m_{i} = (unsigned long long)({n})," for i, n in enumerate(cands)]
        lines.append("};")
        tu = self.parse("\n".join(lines) + "\n")
        for c in tu.cursor.get_children():
            if c.kind == CK.ENUM_DECL and c.spelling == "fl_gen_macro_values":
                for i, ch in enumerate(c.get_children()):
                    ex.macro_values[cands[i]] = ch.enum_value

    def type_info(self, types: list[str]) -> dict[str, tuple[int, bool]]:
        """sizeof and is-pointer for each C type spelling, asked of clang."""
        lines = ["#include <cublasLt.h>"]
        lines += [f"{t} fl_gen_sz_{i};" for i, t in enumerate(types)]
        tu = self.parse("\n".join(lines) + "\n")
        out: dict[str, tuple[int, bool]] = {}
        for c in tu.cursor.get_children():
            if c.kind == CK.VAR_DECL and c.spelling.startswith("fl_gen_sz_"):
                t = types[int(c.spelling[len("fl_gen_sz_") :])]
                out[t] = (c.type.get_size(), c.type.get_canonical().kind == ci.TypeKind.POINTER)
        return out

    def _build_attributes(self, ex: Extracted) -> None:
        tu = self.parse("#include <cublasLt.h>\n")
        files = self.owned_files(tu, MAIN_HEADERS)
        comments: dict[str, str | None] = {}
        for c in self.top_level(tu):
            if c.kind != CK.ENUM_DECL or self.file_of(c, files) != "cublasLt.h":
                continue
            prev_end = c.extent.start.offset
            data = self.src_cache.setdefault(
                c.location.file.name, _src_text(c.location.file.name)
            ).decode("utf-8", "replace")
            for ch in c.get_children():
                if ch.kind != CK.ENUM_CONSTANT_DECL:
                    continue
                raw = ch.raw_comment
                region = data[prev_end : ch.extent.start.offset]
                # clang may attach an earlier enumerator's comment; keep only a
                # comment that lies between the previous enumerator and this one.
                if raw and raw.strip() not in region:
                    raw = None
                comments[ch.spelling] = raw
                prev_end = ch.extent.end.offset

        enum_names = set(ex.enums)
        typedef_to_enum = {t: n for n, e in ex.enums.items() for t in e["typedefs"]}
        pending: list[tuple[str, str, dict]] = []
        for ename, e in ex.enums.items():
            if not ATTRIBUTE_ENUM_RE.match(ename):
                continue
            attrs: dict[str, dict] = {}
            for cname, value in e["values"].items():
                parsed = parse_attribute_comment(
                    comments.get(cname) or "", enum_names, typedef_to_enum, cname, set(ex.typedefs)
                )
                spec: dict[str, Any] = {"value": value, "type": parsed.get("type")}
                for k in ("array", "alternatives", "enum", "mask", "see", "readonly", "default", "note"):
                    if parsed.get(k) is not None:
                        spec[k] = parsed[k]
                ov = ATTRIBUTE_OVERRIDES.get(cname)
                if parsed.get("type") is None:
                    why = "several types stated: " + " / ".join(parsed["alternatives"]) if parsed.get(
                        "alternatives") else "no type stated"
                    ex.not_mechanical.append(f"{ename}.{cname}: type: {why}")
                if ov and ov["when"] in (comments.get(cname) or ""):
                    changed = [k for k in ov if k not in ("when", "note") and ov[k] != parsed.get(k)]
                    ex.not_mechanical.append(
                        f"{ename}.{cname}: " + ", ".join(f"{k}: {parsed.get(k)!r} -> {ov[k]!r}" for k in changed)
                    )
                    for k, v in ov.items():
                        if k != "when":
                            if v is None:
                                spec.pop(k, None)
                            else:
                                spec[k] = v
                    ex.overridden.append(cname)
                elif ov:
                    print(f"  warning: override for {cname} not applied (comment changed)", file=sys.stderr)
                if spec["type"] is None:
                    ex.unresolved.append(cname)
                    spec["note"] = "type not stated in the header comment"
                attrs[cname] = spec
                pending.append((ename, cname, spec))
            ex.attributes[ename] = attrs
        types = sorted({s["type"] for _, _, s in pending if s["type"]})
        info = self.type_info(types)
        for ename, cname, spec in pending:
            t = spec["type"]
            size, is_ptr = info[t] if t else (None, False)
            # key order: value, type, size, pointer, enum, then the rest
            final: dict[str, Any] = {"value": spec.pop("value"), "type": spec.pop("type"), "size": size}
            if is_ptr:
                final["pointer"] = True
            if "enum" in spec:
                final["enum"] = spec.pop("enum")
            final.update(spec)
            ex.attributes[ename][cname] = final


# ---------------------------------------------------------------------------
# Attribute comment parser.

_TYPE = r"(?:const\s+)?(?:void|float|double|char|u?int(?:8|16|32|64)_t|size_t|int|cublas\w*|cuda\w*)"
_TYPE_LINE = re.compile(
    rf"^(?:(?P<label>[A-Za-z][\w ]{{0,40}}?):\s*)?(?P<array>array of\s+)?"
    rf"(?P<type>{_TYPE})(?P<ptr>(?:\s*\*)*)(?P<rest>.*)$"
)
_REST_OK = re.compile(r"^(?:\s*$|\s*[,;]|\s+(?:default|based on|see|-|\d))")


def clean_comment(raw: str) -> list[str]:
    text = re.sub(r"^\s*/\*+!?<?|\*+/\s*$", "", raw.strip())
    lines = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:///?<?|\*+)?\s?", "", line).strip()
        lines.append(line)
    return lines


def _canon_type(t: str, ptr: str) -> str:
    t = re.sub(r"\s+", " ", t).strip()
    n = ptr.count("*")
    return t + (" " + "*" * n if n else "")


def parse_attribute_comment(
    raw: str,
    enum_names: set[str],
    typedef_to_enum: dict[str, str],
    cname: str = "",
    typedef_names: set[str] | None = None,
) -> dict:
    """Find the value type an attribute's doc comment states.

    The cuBLASLt headers end each attribute comment with a line such as
    ``int32_t, default: 0`` / ``uint64_t`` / ``void *, default: NULL`` /
    ``array of uint32_t`` / ``int32_t based on cudaDataType, default: -1``.
    Returns type (None when no type, or several different ones, are stated),
    alternatives, array, enum, mask, readonly, default.
    """
    out: dict[str, Any] = {}
    if not raw:
        return out
    lines = clean_comment(raw)
    found: list[tuple[str, re.Match]] = []
    for line in lines:
        m = _TYPE_LINE.match(line)
        if not m or not _REST_OK.match(m.group("rest")):
            continue
        found.append((_canon_type(m.group("type"), m.group("ptr")), m))
    types = list(dict.fromkeys(t for t, _ in found))
    if len(types) == 1:
        out["type"] = types[0]
    elif len(types) > 1:
        out["alternatives"] = types
    if found:
        m = found[0][1]
        if m.group("array"):
            out["array"] = True
            out["note"] = f"array of {types[0]}; size is that of one element"
        d = re.search(r"default:\s*(.+)$", m.group("rest"))
        if d:
            out["default"] = re.split(r"\s+-\s|\s+\(|\s*;|\.\s", d.group(1))[0].strip().rstrip(".")
    full = " ".join(lines)

    def to_enum(name: str) -> str | None:
        return name if name in enum_names else typedef_to_enum.get(name)

    enum = None
    for _, m in found:
        b = re.search(r"based on (\w+)", m.group("rest"))
        if b and to_enum(b.group(1)):
            enum = to_enum(b.group(1))
            break
    if enum is None and types and to_enum(types[0].split()[-1]):
        enum = to_enum(types[0].split()[-1])
    if enum is None:
        for mm in re.finditer(r"\bsee\s+(\w+)", full, re.IGNORECASE):
            if to_enum(mm.group(1)):
                enum = to_enum(mm.group(1))
                break
    if enum:
        out["enum"] = enum
        if "MASK" in cname:
            out["mask"] = True
    elif typedef_names:
        for mm in re.finditer(r"\bsee\s+(\w+)", full, re.IGNORECASE):
            if mm.group(1) in typedef_names:
                out["see"] = mm.group(1)
                break
    if re.search(r"\breadonly\b", full, re.IGNORECASE):
        out["readonly"] = True
    return out


# ---------------------------------------------------------------------------


def scan_header_text(text: str) -> dict:
    """Guard macro, #pragma once and #include list of a header (from its text)."""
    nocom = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    nocom = re.sub(r"//[^\n]*", "", nocom)
    directives = re.findall(r"^[ \t]*#[ \t]*(\w+)(.*)$", nocom, re.M)
    pragma_once = any(d == "pragma" and a.strip() == "once" for d, a in directives)
    guard = None
    if not pragma_once and len(directives) >= 2:
        (d0, a0), (d1, a1) = directives[0], directives[1]
        m = re.fullmatch(r"\s*!\s*defined\s*\(?\s*(\w+)\s*\)?\s*", a0) if d0 == "if" else None
        g = m.group(1) if m else (a0.strip() if d0 == "ifndef" else None)
        if g and d1 == "define" and a1.split()[:1] == [g] and directives[-1][0] == "endif":
            guard = g
    includes = re.findall(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]", nocom, re.M)
    return {"guard": guard, "pragma_once": pragma_once, "includes": includes}


def dist_info_of(path: str) -> str:
    """'package version' of the wheel (or toolkit) an unpacked header came from."""
    p = Path(path).resolve().parent
    for _ in range(6):
        for meta in sorted(glob.glob(str(p / "*.dist-info" / "METADATA"))):
            txt = Path(meta).read_text(errors="replace")
            n = re.search(r"^Name:\s*(\S+)", txt, re.M)
            v = re.search(r"^Version:\s*(\S+)", txt, re.M)
            if n and v:
                return f"{n.group(1)} {v.group(1)}"
        vj = p / "version.json"
        if vj.exists():
            m = re.search(r'"cuda"\s*:\s*\{[^}]*"version"\s*:\s*"([^"]+)"', vj.read_text())
            if m:
                return f"CUDA toolkit {m.group(1)} ({p})"
        p = p.parent
    return path


# ---------------------------------------------------------------------------
# YAML output: flow style for leaf collections, block style above.


class FlowList(list):
    pass


class FlowMap(dict):
    pass


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


_Dumper.add_representer(FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
_Dumper.add_representer(FlowMap, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))


def flowify(x: Any) -> Any:
    if isinstance(x, list):
        return FlowList(flowify(i) for i in x)
    if isinstance(x, dict):
        return FlowMap({k: flowify(v) for k, v in x.items()})
    return x


# ---------------------------------------------------------------------------
# Differences between two extractions (for version_notes).


def _sig(fn: dict) -> list:
    return [fn["returns"]] + [p[0] for p in fn["params"]]


def _attr_key(a: dict) -> dict:
    return {k: a.get(k) for k in ("type", "size", "enum")}


def _pairs(a: dict, b: dict) -> dict:
    return {k: FlowList([a.get(k), b.get(k)]) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


def diff(model: Extracted, other: Extracted) -> dict:
    """What `other` has different from `model` (pairs are [model, other])."""
    n: dict[str, Any] = {}
    n["enums_added"] = {k: FlowMap(v["values"]) for k, v in other.enums.items() if k not in model.enums}
    n["enums_removed"] = {k: v["header"] for k, v in model.enums.items() if k not in other.enums}
    vc: dict[str, Any] = {}
    for k in sorted(model.enums.keys() & other.enums.keys()):
        a, b = model.enums[k]["values"], other.enums[k]["values"]
        d: dict[str, Any] = {}
        added = {x: b[x] for x in b if x not in a}
        removed = {x: a[x] for x in a if x not in b}
        changed = {x: FlowList([a[x], b[x]]) for x in a if x in b and a[x] != b[x]}
        if added:
            d["added"] = FlowMap(added)
        if removed:
            d["removed"] = FlowMap(removed)
        if changed:
            d["changed"] = FlowMap(changed)
        if d:
            vc[k] = d
    n["values_changed"] = vc
    atc: dict[str, Any] = {}
    for k in sorted(model.attributes.keys() & other.attributes.keys()):
        for name in model.attributes[k]:
            if name not in other.attributes[k]:
                continue
            a, b = _attr_key(model.attributes[k][name]), _attr_key(other.attributes[k][name])
            if a != b:
                atc.setdefault(k, {})[name] = {"model": FlowMap(a), "other": FlowMap(b)}
    n["attributes_type_changed"] = atc
    added_attrs: dict[str, Any] = {}
    for k, attrs in other.attributes.items():
        for name, spec in attrs.items():
            if name not in model.attributes.get(k, {}):
                added_attrs.setdefault(k, {})[name] = FlowMap(
                    {x: spec[x] for x in ("value", "type", "size", "pointer", "enum") if x in spec}
                )
    n["attributes_added"] = added_attrs
    n["attributes_removed"] = {
        k: FlowList(x for x in attrs if x not in other.attributes.get(k, {}))
        for k, attrs in model.attributes.items()
        if any(x not in other.attributes.get(k, {}) for x in attrs)
    }
    n["functions_added"] = FlowList(sorted(other.functions.keys() - model.functions.keys()))
    n["functions_removed"] = FlowList(sorted(model.functions.keys() - other.functions.keys()))
    n["functions_signature_changed"] = {
        k: {"model": FlowList(_sig(model.functions[k])), "other": FlowList(_sig(other.functions[k]))}
        for k in sorted(model.functions.keys() & other.functions.keys())
        if _sig(model.functions[k]) != _sig(other.functions[k])
    }
    n["legacy_functions_added"] = FlowList(sorted(other.legacy_functions.keys() - model.legacy_functions.keys()))
    n["legacy_functions_removed"] = FlowList(sorted(model.legacy_functions.keys() - other.legacy_functions.keys()))
    n["typedefs_changed"] = _pairs(model.typedefs, other.typedefs)
    st = {}
    for k in sorted(model.structs.keys() | other.structs.keys()):
        fa = (model.structs.get(k) or {}).get("fields")
        fb = (other.structs.get(k) or {}).get("fields")
        if fa != fb:
            st[k] = {"model": flowify(fa), "other": flowify(fb)}
    n["structs_changed"] = st
    n["macros_changed"] = _pairs(model.macros, other.macros)
    n["function_aliases_changed"] = _pairs(model.function_aliases, other.function_aliases)
    return n


def build_document(ex: Extracted, package: str, notes: dict[str, dict]) -> dict:
    def fn_block(fns: dict[str, dict]) -> dict:
        out = {}
        for name, fn in fns.items():
            f = {k: (flowify(v) if k in ("params", "calls") else v) for k, v in fn.items() if k != "overloads"}
            if "overloads" in fn:
                f["overloads"] = [flowify(o) for o in fn["overloads"]]
            out[name] = f
        return out

    enums = {n: {k: (flowify(v) if isinstance(v, (list, dict)) else v) for k, v in e.items()} for n, e in ex.enums.items()}
    return {
        "source": flowify(
            {
                "package": package,
                "version": ex.cublas_version,
                "headers": list(MAIN_HEADERS),
                "also_parsed": list(EXTRA_HEADERS),
                "library_types_from": dist_info_of(ex.library_types_from),
                "generator": "tools/gen_cublaslt_model.py",
            }
        ),
        "enums": enums,
        "attributes": {k: {n: flowify(s) for n, s in v.items()} for k, v in ex.attributes.items()},
        "typedefs": ex.typedefs,
        "structs": {k: flowify(v) for k, v in ex.structs.items()},
        "macros": ex.macros,
        "macro_values": ex.macro_values,
        "function_aliases": ex.function_aliases,
        "functions": fn_block(ex.functions),
        "legacy_functions": FlowList(ex.legacy_functions),
        "headers": {
            h: {
                "guard": v["guard"],
                "pragma_once": v["pragma_once"],
                "includes": FlowList(v["includes"]),
                "order": FlowList(v["order"]),
            }
            for h, v in ex.headers.items()
        },
        "version_notes": notes,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cublas-include", required=True, help="include dir with cublasLt.h of the modelled version")
    ap.add_argument("--cuda-include", action="append", default=[], help="dir with library_types.h (repeatable)")
    ap.add_argument(
        "--fallback-include",
        action="append",
        default=None,
        help="searched last, for headers the wheels lack (crt/host_defines.h); default /usr/local/cuda/include",
    )
    ap.add_argument("--package", default="nvidia-cublas")
    ap.add_argument("--expect-version", default=None, help="fail unless CUBLAS_VER_* give this version")
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="VERSION=CUBLAS_DIR[:CUDA_DIR]",
        help="another header version to describe in version_notes",
    )
    ap.add_argument("-o", "--output", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    fallback = a.fallback_include
    if fallback is None:
        fallback = [d for d in ["/usr/local/cuda/include"] if os.path.isdir(d)]

    print(f"parsing {a.cublas_include}", file=sys.stderr)
    model = HeaderSet(a.cublas_include, a.cuda_include, fallback).extract()
    if a.expect_version and model.cublas_version != a.expect_version:
        raise SystemExit(f"headers are cuBLAS {model.cublas_version}, expected {a.expect_version}")

    notes: dict[str, dict] = {}
    for spec in a.compare:
        ver, _, dirs = spec.partition("=")
        cub, _, cuda = dirs.partition(":")
        print(f"parsing {cub} for {ver}", file=sys.stderr)
        other = HeaderSet(cub, [cuda] if cuda else a.cuda_include, fallback).extract()
        if other.cublas_version != ver:
            raise SystemExit(f"{cub} is cuBLAS {other.cublas_version}, not {ver}")
        n: dict[str, Any] = {"library_types_from": dist_info_of(other.library_types_from)}
        n.update(diff(model, other))
        notes[ver] = n

    print("\nattributes not derived mechanically from the header comment (resolved by ATTRIBUTE_OVERRIDES):",
          file=sys.stderr)
    for line in model.not_mechanical:
        print(f"  {line}", file=sys.stderr)
    if model.unresolved:
        print(f"UNRESOLVED (no type): {model.unresolved}", file=sys.stderr)

    doc = build_document(model, a.package, notes)
    text = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=False)
    header = (
        "# cuBLASLt API model, generated by tools/gen_cublaslt_model.py from the headers of\n"
        f"# {a.package} {model.cublas_version}. Do not edit by hand; re-run the generator.\n"
    )
    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    Path(a.output).write_text(header + text)
    print(f"wrote {a.output} ({len(header + text) // 1024} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
