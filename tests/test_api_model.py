"""The cuBLASLt API model (model/cublaslt_api.yaml) and the stub headers generated from it."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci
import pytest

from fusionlint.model.cublaslt_api import ApiModel, AttributeSpec, load_model
from fusionlint.frontend.clang.cublas_stubs import STUB_NAMES, declarator, stub_headers

VIRTUAL = "/__virtual__"
VIRTUAL_RES = "/__virtual_res__"
CUDA_INCLUDE = Path(os.environ.get("FUSIONLINT_CUDA_INCLUDE", "/usr/local/cuda/include"))
# Optional: real cuBLAS 13.1 headers (e.g. unpacked from the nvidia-cublas 13.1.0.3 wheel).
REAL_CUBLAS = Path(os.environ.get("FUSIONLINT_CUBLAS_INCLUDE", "/tmp/cublas131/nvidia/cu13/include"))

# Minimal compiler resource headers, used when fusionlint.frontend.resource_headers is absent
# (the PyPI libclang wheel ships none).
_FALLBACK_RESOURCE = {
    "stddef.h": """#ifndef FL_TEST_STDDEF_H
#define FL_TEST_STDDEF_H
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
    "stdarg.h": """#ifndef FL_TEST_STDARG_H
#define FL_TEST_STDARG_H
typedef __builtin_va_list va_list;
typedef __builtin_va_list __gnuc_va_list;
#define va_start(v, l) __builtin_va_start(v, l)
#define va_end(v) __builtin_va_end(v)
#define va_arg(v, l) __builtin_va_arg(v, l)
#define va_copy(d, s) __builtin_va_copy(d, s)
#endif
""",
    "stdbool.h": "#ifndef __cplusplus\n#define bool _Bool\n#define true 1\n#define false 0\n#endif\n",
    "limits.h": """#ifndef FL_TEST_LIMITS_H
#define FL_TEST_LIMITS_H
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
_FALLBACK_STDINT = """#ifndef FL_TEST_STDINT_H
#define FL_TEST_STDINT_H
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
#endif
"""
_FALLBACK_STDIO = "#ifndef FL_TEST_STDIO_H\n#define FL_TEST_STDIO_H\ntypedef struct _IO_FILE FILE;\n#endif\n"
# Stands in for the CUDA runtime header when no toolkit is used: what the stubs need from it.
_FALLBACK_CUDA_RUNTIME_API = """#ifndef FL_TEST_CUDA_RUNTIME_API_H
#define FL_TEST_CUDA_RUNTIME_API_H
typedef struct CUstream_st *cudaStream_t;
#endif
"""


def resource_headers() -> dict[str, str]:
    try:
        from fusionlint.frontend.resource_headers import resource_headers as rh  # type: ignore
    except ImportError:
        headers = dict(_FALLBACK_RESOURCE)
        if not Path("/usr/include/stdint.h").exists():
            headers["stdint.h"] = _FALLBACK_STDINT
        if not Path("/usr/include/stdio.h").exists():
            headers["stdio.h"] = _FALLBACK_STDIO
        return headers
    return dict(rh())


@pytest.fixture(scope="module")
def model() -> ApiModel:
    return load_model()


# ---------------------------------------------------------------------------------------------
# (a) facts (checked against the nvidia-cublas 13.1.0.3 / nvidia-cuda-runtime 13.0.96 headers)


def test_source(model: ApiModel) -> None:
    assert model.version == "13.1.0.3"
    assert model.source["package"] == "nvidia-cublas"
    assert model.source["headers"] == ["cublasLt.h", "cublas_api.h", "library_types.h"]
    assert model.macro_value("CUBLAS_VERSION") == 130100
    assert model.macro("CUBLAS_VER_BUILD") == "3"


@pytest.mark.parametrize(
    "name, ctype, size",
    [
        ("CUBLASLT_MATMUL_DESC_EPILOGUE", "uint32_t", 4),
        ("CUBLASLT_MATMUL_DESC_FAST_ACCUM", "int8_t", 1),
        ("CUBLASLT_MATMUL_DESC_COMPUTE_TYPE", "int32_t", 4),
        ("CUBLASLT_MATMUL_DESC_SCALE_TYPE", "int32_t", 4),
        ("CUBLASLT_MATMUL_DESC_TRANSA", "int32_t", 4),
        ("CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE", "int64_t", 8),
        ("CUBLASLT_MATMUL_DESC_A_SCALE_POINTER", "const void *", 8),
        ("CUBLASLT_MATMUL_DESC_AMAX_D_POINTER", "void *", 8),
        ("CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR", "cublasLtEmulationDesc_t", 8),
        ("CUBLASLT_MATRIX_LAYOUT_TYPE", "uint32_t", 4),
        ("CUBLASLT_MATRIX_LAYOUT_ORDER", "int32_t", 4),
        ("CUBLASLT_MATRIX_LAYOUT_ROWS", "uint64_t", 8),
        ("CUBLASLT_MATRIX_LAYOUT_COLS", "uint64_t", 8),
        ("CUBLASLT_MATRIX_LAYOUT_LD", "int64_t", 8),
        ("CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT", "int32_t", 4),
        ("CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET", "int64_t", 8),
        ("CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES", "uint64_t", 8),
        ("CUBLASLT_MATMUL_PREF_SEARCH_MODE", "uint32_t", 4),
        ("CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES", "uint32_t", 4),
        ("CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT", "float", 4),
        ("CUBLASLT_MATMUL_PREF_IMPL_MASK", "uint64_t", 8),
        ("CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID", "uint16_t", 2),
        ("CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID", "uint16_t", 2),
        ("CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER", "int32_t *", 8),
    ],
)
def test_attribute_types(model: ApiModel, name: str, ctype: str, size: int) -> None:
    a = model.attribute(name)
    assert isinstance(a, AttributeSpec)
    assert (a.type, a.size) == (ctype, size)
    assert a.pointer == (size == 8 and ("*" in ctype or ctype.endswith("Desc_t")))


def test_attribute_details(model: ApiModel) -> None:
    epi = model.attribute("CUBLASLT_MATMUL_DESC_EPILOGUE")
    assert epi.enum_type == "cublasLtMatmulDescAttributes_t" and epi.value == 7
    assert epi.enum == "cublasLtEpilogue_t" and epi.default == "CUBLASLT_EPILOGUE_DEFAULT"
    assert model.attribute("CUBLASLT_MATMUL_DESC_COMPUTE_TYPE").enum == "cublasComputeType_t"
    assert model.attribute("CUBLASLT_MATMUL_DESC_TRANSB").enum == "cublasOperation_t"
    assert model.attribute("CUBLASLT_MATMUL_DESC_A_SCALE_MODE").enum == "cublasLtMatmulMatrixScale_t"
    assert model.attribute("CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE").enum == "cudaDataType_t"
    assert model.attribute("CUBLASLT_MATRIX_LAYOUT_ORDER").enum == "cublasLtOrder_t"
    bias = model.attribute("CUBLASLT_MATMUL_DESC_BIAS_POINTER")
    assert bias.pointer and bias.size == 8 and set(bias.alternatives) == {"void *", "const void *"}
    assert bias.note and bias.note.startswith("from comment:")
    assert model.attribute("CUBLASLT_ALGO_CAP_TILE_IDS").array
    assert model.attribute("CUBLASLT_ALGO_CONFIG_ID").readonly
    assert model.attribute("CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK").mask
    assert model.attribute("CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES").default == "256"
    # values 9 and 16 are unused in the matmul descriptor enum
    assert model.attribute_by_value("cublasLtMatmulDescAttributes_t", 9) is None
    assert model.attribute_by_value("cublasLtMatmulDescAttributes_t", 25).name == "CUBLASLT_MATMUL_DESC_FAST_ACCUM"
    assert model.attribute_by_value("cublasLtMatrixLayoutAttribute_t", 4).name == "CUBLASLT_MATRIX_LAYOUT_LD"
    assert model.attribute("CUBLAS_OP_N") is None
    every = [a for attrs in model.attributes.values() for a in attrs.values()]
    assert len(every) > 80
    assert all(a.type and a.size in (1, 2, 4, 8) for a in every)


def test_enum_values(model: ApiModel) -> None:
    assert model.enum_value("CUDA_R_8F_E4M3") == 28
    assert model.enum_value("CUDA_R_8F_E5M2") == 29
    assert model.enum_value("CUDA_R_16BF") == 14
    assert model.enum_value("CUDA_R_32F") == 0
    assert model.enum_value("CUBLAS_COMPUTE_32F") == 68
    assert model.enum_value("CUBLAS_COMPUTE_32F_FAST_TF32") == 77
    assert model.enum_value("CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT") == 79
    assert model.enum_value("CUBLAS_STATUS_NOT_SUPPORTED") == 15
    assert model.enum_value("CUBLAS_STATUS_INVALID_VALUE") == 7
    assert model.enum_value("CUBLASLT_EPILOGUE_RELU_AUX_BIAS") == 134
    assert model.enum_value("CUBLASLT_EPILOGUE_DGELU_BGRAD") == 208
    assert model.enum_value("CUBLASLT_EPILOGUE_BGRADB") == 512
    assert model.enum_value("CUBLASLT_ORDER_COL32_2R_4R4") == 4
    assert model.enum_value("CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST") == 4
    assert model.enum_value("CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F") == 5
    assert model.enum_value("CUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F") is None  # 13.10 only
    assert model.enum_value("CUBLAS_GEMM_DEFAULT") == -1
    assert model.enum_value("NOT_AN_ENUMERATOR") is None
    assert model.enum_of_constant("CUBLASLT_ORDER_ROW") == "cublasLtOrder_t"
    assert model.enum_of_constant("CUDA_R_8F_E4M3") == "cudaDataType_t"


def test_enum_names_and_aliases(model: ApiModel) -> None:
    assert model.enum_name("cudaDataType_t", 28) == "CUDA_R_8F_E4M3"  # not the alias CUDA_R_8F_UE4M3
    assert model.enum_name("cudaDataType", 28) == "CUDA_R_8F_E4M3"  # typedef name works too
    assert model.enum_name("cublasOperation_t", 2) == "CUBLAS_OP_C"  # not CUBLAS_OP_HERMITAN
    assert model.enum_name("cublasLtEpilogue_t", 36) == "CUBLASLT_EPILOGUE_GELU_BIAS"
    assert model.enum_name("cublasLtEpilogue_t", 3) is None
    assert model.enum_name("noSuchEnum_t", 0) is None
    dt = model.enum("cudaDataType")
    assert dt is not None and dt.tag == "cudaDataType_t"
    assert set(dt.typedefs) == {"cudaDataType", "cudaDataType_t"} and dt.header == "library_types.h"
    assert dt.aliases["CUDA_R_8F_UE4M3"] == "CUDA_R_8F_E4M3"
    order = model.enums["cublasLtOrder_t"]
    assert order.tag is None and order.typedefs == ("cublasLtOrder_t",) and order.underlying == "int"
    assert list(order.values) == ["CUBLASLT_ORDER_COL", "CUBLASLT_ORDER_ROW", "CUBLASLT_ORDER_COL32",
                                  "CUBLASLT_ORDER_COL4_4R2_8C", "CUBLASLT_ORDER_COL32_2R_4R4"]
    required = """cublasLtMatmulDescAttributes_t cublasLtMatrixLayoutAttribute_t cublasLtMatmulPreferenceAttributes_t
        cublasLtEpilogue_t cublasLtOrder_t cublasLtPointerMode_t cublasLtPointerModeMask_t cublasLtMatmulMatrixScale_t
        cublasLtReductionScheme_t cublasLtMatmulSearch_t cublasLtMatmulTile_t cublasLtMatmulStages_t cublasLtClusterShape_t
        cublasLtMatmulInnerShape_t cublasLtMatmulAlgoCapAttributes_t cublasLtMatmulAlgoConfigAttributes_t
        cublasLtMatrixTransformDescAttributes_t cublasLtBatchMode_t cudaDataType_t libraryPropertyType_t cublasComputeType_t
        cublasOperation_t cublasFillMode_t cublasStatus_t cublasDiagType_t cublasSideMode_t cublasPointerMode_t
        cublasAtomicsMode_t cublasGemmAlgo_t cublasMath_t""".split()
    assert [e for e in required if e not in model.enums] == []


def test_structs_typedefs_macros(model: ApiModel) -> None:
    desc = model.struct("cublasLtMatmulDescOpaque_t")
    assert desc.fields[0].type == "uint64_t" and desc.fields[0].array_len == 32 and desc.size == 256
    assert model.struct("cublasLtMatmulAlgo_t").size == 64
    assert [f.name for f in model.struct("cublasLtMatmulHeuristicResult_t").fields] == [
        "algo", "workspaceSize", "state", "wavesCount", "reserved"]
    assert model.typedef("cublasLtMatmulDesc_t") == "cublasLtMatmulDescOpaque_t *"
    assert model.typedef("cublasLtHandle_t") == "struct cublasLtContext *"
    assert model.typedef("cublasLtNumericalImplFlags_t") == "uint64_t"
    assert model.typedef("cublasLtLoggerCallback_t").startswith("void (*)(int")
    assert model.macro("CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA") == "(0x01ull << 0)"
    assert model.macro_value("CUBLASLT_NUMERICAL_IMPL_FLAGS_GAUSSIAN") == 1 << 32
    assert model.function_aliases["cublasCreate"] == "cublasCreate_v2"
    assert model.headers["cublas_api.h"].guard == "CUBLAS_API_H_"
    assert model.headers["cublasLt.h"].pragma_once


def test_functions(model: ApiModel) -> None:
    f = model.function("cublasLtMatmulDescSetAttribute")
    assert f.returns == "cublasStatus_t" and f.header == "cublasLt.h"
    assert [(p.type, p.name) for p in f.params] == [
        ("cublasLtMatmulDesc_t", "matmulDesc"), ("cublasLtMatmulDescAttributes_t", "attr"),
        ("const void *", "buf"), ("size_t", "sizeInBytes")]
    assert len(model.function("cublasLtMatmul").params) == 16
    assert model.function("cublasLtMatrixLayoutInit").inline
    assert model.function("cublasCreate").name == "cublasCreate_v2"  # through the cublas_v2.h alias
    gemm_ex = model.function("cublasGemmEx")
    assert gemm_ex.param_types[-2] == "cublasComputeType_t"
    assert gemm_ex.overloads and gemm_ex.overloads[0].param_types[-2] == "cudaDataType"
    assert model.function("cublasHgemm").cplusplus_only
    required = """cublasCreate_v2 cublasDestroy_v2 cublasSetStream_v2 cublasGetStream_v2 cublasSetWorkspace_v2
        cublasSetMathMode cublasGemmEx cublasGemmStridedBatchedEx cublasGemmBatchedEx cublasSgemm_v2 cublasHgemm
        cublasGetVersion_v2 cublasGetStatusString cublasSgemmStridedBatched cublasLtGetStatusName
        cublasLtMatmulAlgoGetHeuristic cublasLtMatmulPreferenceSetAttribute cublasLtLoggerSetCallback""".split()
    assert [n for n in required if model.function(n) is None] == []
    assert model.function("cublasLtMatmulAlgoGetHeuristicForStream") is None  # 13.10 only


def test_version_notes(model: ApiModel) -> None:
    v12, v1310 = model.version_notes["12.9.3.13"], model.version_notes["13.10.0.20"]
    assert "CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_NUM_CHUNKS_D_ROWS" in v12["values_changed"][
        "cublasLtMatmulDescAttributes_t"]["added"]
    assert "cublasLtEmulationDescAttributes_t" in v12["enums_removed"]
    assert "cublasLtMatmulBatchInvarianceFlags_t" in v1310["enums_added"]
    assert v1310["structs_changed"]["cublasLtMatrixLayoutOpaque_t"]["other"] == [["uint64_t", "data", 14]]
    assert "cublasLtMatmulAlgoGetHeuristicForStream" in v1310["functions_added"]
    for notes in (v12, v1310):
        for key in ("enums_added", "enums_removed", "values_changed", "attributes_type_changed",
                    "functions_added", "functions_removed"):
            assert key in notes


def test_declarator() -> None:
    assert declarator("const void *", "buf") == "const void *buf"
    assert declarator("int[]", "ids") == "int ids[]"
    assert declarator("const void *const[]", "A") == "const void *const A[]"
    assert declarator("void (*)(int, const char *)", "cb") == "void (*cb)(int, const char *)"
    assert declarator("size_t", "n") == "size_t n"


def test_stub_text() -> None:
    h = stub_headers()
    assert set(h) == set(STUB_NAMES)
    for name, text in h.items():
        assert text.splitlines()[0] == (
            "// fusionlint stub header generated from the cuBLASLt API model (nvidia-cublas 13.1.0.3)"), name
    assert "#if !defined(CUBLAS_API_H_)" in h["cublas_api.h"]
    assert "#if !defined(__LIBRARY_TYPES_H__)" in h["library_types.h"]
    assert "#include <cublas_api.h>" in h["cublasLt.h"]
    assert "#include <cuda_runtime_api.h>" in h["cublas_api.h"]
    assert not re.search(r"typedef[^;]*\bcudaStream_t\s*;", h["cublas_api.h"])
    assert "#define cublasCreate cublasCreate_v2" in h["cublas_v2.h"]
    assert stub_headers() is not stub_headers() and stub_headers() == h  # cached, fresh dict


# ---------------------------------------------------------------------------------------------
# (b) the stubs compile, and every enumerator / attribute / size / prototype of the model holds


def _function_checks(model: ApiModel, lang: str) -> list[str]:
    out = []
    i = 0
    for f in model.functions.values():
        if lang == "c" and f.cplusplus_only:
            continue
        variants = [f] + (list(f.overloads) if lang == "c++" else [])
        for v in variants:
            ps = ", ".join(p.type for p in v.params) or "void"
            ftype = f"{v.returns} (*)({ps})"
            i += 1
            if lang == "c++":
                out.append(f"{declarator(ftype, f'fl_fp_{i}')} = &{f.name};")
            else:
                out.append(f'_Static_assert(__builtin_types_compatible_p(__typeof__(&{f.name}), {ftype}), "{f.name}");')
    return out


def check_source(model: ApiModel, lang: str = "c++", skip_constants: set[str] = frozenset(),
                 with_v2: bool = True) -> str:
    sa = "static_assert" if lang == "c++" else "_Static_assert"
    lines = ["#include <cublasLt.h>"]
    if with_v2:
        lines.append("#include <cublas_v2.h>")
    for e in model.enums.values():
        for n, v in e.values.items():
            if n not in skip_constants:
                lines.append(f'{sa}({n} == {v}, "{n}");')
        for t in e.typedefs:
            lines.append(f'{sa}(sizeof({t}) == sizeof(int), "{t}");')
    for et, attrs in model.attributes.items():
        for n, a in attrs.items():
            lines.append(f'{sa}({n} == {a.value}, "{n}");')
            if a.type:
                lines.append(f'{sa}(sizeof({a.type}) == {a.size}, "{n} size");')
    for n, s in model.structs.items():
        if s.size is not None:
            lines.append(f'{sa}(sizeof({n}) == {s.size}, "sizeof {n}");')
    for n, v in model.macro_values.items():
        lines.append(f'{sa}(({n}) == {v}ULL, "{n}");')
    lines += _function_checks(model, lang)
    if with_v2:
        for alias, target in model.function_aliases.items():
            if target in model.functions and not model.functions[target].overloads:
                if lang == "c++":
                    lines.append(f'static_assert(__is_same(decltype(&{alias}), decltype(&{target})), "{alias}");')
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Diag:
    severity: int
    file: str
    line: int
    spelling: str


def compile_tu(source: str, lang: str, include_dirs: list[str], files: dict[str, str]) -> list[Diag]:
    """Parse with libclang; the diagnostics are copied out before the TU is freed."""
    name = "/__test__/fl_api_model_check." + ("cpp" if lang == "c++" else "c")
    args = ["-x", lang, "-std=c++17" if lang == "c++" else "-std=c11", "-ferror-limit=0"]
    for d in include_dirs:
        args += ["-I", d]
    args += ["-isystem", VIRTUAL_RES]
    unsaved = [(name, source)] + list(files.items())
    tu = ci.Index.create().parse(name, args=args, unsaved_files=unsaved)
    return [Diag(d.severity, str(d.location.file or ""), d.location.line, d.spelling) for d in tu.diagnostics]


def _errors(diags: list[Diag]) -> list[str]:
    return [f"{d.file}:{d.line}: {d.spelling}" for d in diags if d.severity >= ci.Diagnostic.Error]


def _stub_files(extra: dict[str, str] | None = None) -> dict[str, str]:
    files = {f"{VIRTUAL}/{n}": t for n, t in stub_headers().items()}
    files.update({f"{VIRTUAL_RES}/{n}": t for n, t in resource_headers().items()})
    for n, t in (extra or {}).items():
        files[f"{VIRTUAL}/{n}"] = t
    return files


@pytest.mark.parametrize("lang", ["c++", "c"])
def test_stubs_compile_standalone(model: ApiModel, lang: str) -> None:
    """Stubs alone (no CUDA toolkit): only cuda_runtime_api.h is stood in for."""
    files = _stub_files({"cuda_runtime_api.h": _FALLBACK_CUDA_RUNTIME_API})
    diags = compile_tu(check_source(model, lang), lang, [VIRTUAL], files)
    assert _errors(diags) == []
    stub_warnings = [f"{d.file}:{d.line}: {d.spelling}" for d in diags
                     if d.file.startswith(VIRTUAL + "/") and d.severity >= ci.Diagnostic.Warning]
    assert stub_warnings == []


@pytest.mark.skipif(not (CUDA_INCLUDE / "cuda_runtime_api.h").exists(), reason="no CUDA toolkit headers")
@pytest.mark.parametrize("lang", ["c++", "c"])
def test_stubs_compile_with_cuda_toolkit(model: ApiModel, lang: str) -> None:
    """A real toolkit first on the path (its library_types.h wins), the stubs for cuBLAS."""
    real_lt = (CUDA_INCLUDE / "library_types.h").read_text(errors="replace")
    missing = {n for n in model.enums["cudaDataType_t"].values if not re.search(rf"\b{n}\b", real_lt)}
    for e in model.enums.values():
        if e.header == "library_types.h":
            missing |= {n for n in e.values if not re.search(rf"\b{n}\b", real_lt)}
    diags = compile_tu(check_source(model, lang, skip_constants=missing), lang, [str(CUDA_INCLUDE), VIRTUAL],
                       _stub_files())
    assert _errors(diags) == []


def test_stubs_compile_with_fusionlint_stand_ins(model: ApiModel) -> None:
    """With the CUDA stand-ins fusionlint ships (if that part of the frontend is present)."""
    try:
        from fusionlint.frontend.clang.parse import stand_in_headers  # type: ignore
    except ImportError:
        pytest.skip("fusionlint.frontend.clang.parse.stand_in_headers not available")
    files = {f"{VIRTUAL}/{n}": t for n, t in stand_in_headers().items()}
    files.update({f"{VIRTUAL_RES}/{n}": t for n, t in resource_headers().items()})
    for n, t in stub_headers().items():
        assert files[f"{VIRTUAL}/{n}"] == t
    diags = compile_tu(check_source(model, "c++"), "c++", [VIRTUAL], files)
    assert _errors(diags) == []


@pytest.mark.skipif(not (REAL_CUBLAS / "cublasLt.h").exists() or not (CUDA_INCLUDE / "cuda_runtime_api.h").exists(),
                    reason="real cuBLAS 13.1 headers not available (set FUSIONLINT_CUBLAS_INCLUDE)")
def test_model_matches_real_headers(model: ApiModel) -> None:
    """The same checks against the real headers the model was generated from."""
    text = (REAL_CUBLAS / "cublas_api.h").read_text(errors="replace")
    if "#define CUBLAS_VER_MINOR 1\n" not in text:
        pytest.skip("headers at FUSIONLINT_CUBLAS_INCLUDE are not cuBLAS 13.1")
    real_lt = (CUDA_INCLUDE / "library_types.h").read_text(errors="replace")
    missing = {n for e in model.enums.values() if e.header == "library_types.h"
               for n in e.values if not re.search(rf"\b{n}\b", real_lt)}
    files = {f"{VIRTUAL_RES}/{n}": t for n, t in resource_headers().items()}
    diags = compile_tu(check_source(model, "c++", skip_constants=missing), "c++",
                       [str(REAL_CUBLAS), str(CUDA_INCLUDE)], files)
    assert _errors(diags) == []
