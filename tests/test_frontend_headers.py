"""The front end on a machine with nothing installed: cuBLASLt code still resolves fully."""
from __future__ import annotations

from pathlib import Path

import clang.cindex as ci

from conftest import FIXTURES
from fusionlint.model.cublaslt_api import load_model
from fusionlint.frontend.clang.parse import ParseOptions, is_virtual, parse_file

K = ci.CursorKind


def unresolved_identifiers(unit) -> list[str]:
    return [d.message for d in unit.diagnostics
            if d.severity in ("error", "fatal") and ("undeclared identifier" in d.message
                                                     or "unknown type name" in d.message)]


def test_cublaslt_enum_constants_resolve_without_cuda(tmp_path: Path) -> None:
    model = load_model()
    names = [name for enum in ("cublasLtMatmulDescAttributes_t", "cublasLtMatrixLayoutAttribute_t",
                               "cublasLtMatmulPreferenceAttributes_t", "cublasLtEpilogue_t", "cublasLtOrder_t",
                               "cublasLtPointerMode_t", "cublasComputeType_t", "cudaDataType_t")
             for name in model.enum(enum).values]
    src = tmp_path / "uses_all.cpp"
    body = "\n".join(f"  long long v{i} = {n};" for i, n in enumerate(names))
    src.write_text(f"#include <cublasLt.h>\nvoid f() {{\n{body}\n}}\n")
    unit = parse_file(src, ParseOptions(use_system_headers=False))
    assert unresolved_identifiers(unit) == []
    assert [d for d in unit.diagnostics if d.severity in ("error", "fatal")] == []
    assert unit.header_mode["cublas"].startswith("fusionlint stand-in")
    # every constant is a DeclRefExpr to an enum constant with the model's value
    seen = {}
    for c in unit.tu.cursor.walk_preorder():
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind == K.ENUM_CONSTANT_DECL:
            seen[c.spelling] = c.referenced.enum_value
    assert set(names) <= set(seen)
    assert all(seen[n] == model.enum_value(n) for n in names)


def test_cuda_sources_parse_without_toolkit() -> None:
    unit = parse_file(FIXTURES / "mixed" / "plain_kernel.cu", ParseOptions(use_system_headers=False))
    assert [d for d in unit.diagnostics if d.severity in ("error", "fatal")] == []
    assert unit.header_mode["cuda"] == "fusionlint stand-in"


def test_missing_headers_are_replaced_and_reported(tmp_path: Path) -> None:
    src = tmp_path / "needs_vendor.cpp"
    src.write_text('#include "vendor/not_here.h"\n#include <cublasLt.h>\n'
                   'void f(cublasLtMatmulDesc_t d) { int t = CUBLAS_OP_T;\n'
                   '  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)); }\n')
    unit = parse_file(src, ParseOptions(use_system_headers=False))
    assert unit.missing_headers == ["vendor/not_here.h"]
    assert unresolved_identifiers(unit) == []


def test_parse_errors_are_kept_and_rest_of_file_extracted() -> None:
    from conftest import facts_of

    facts = facts_of(str(FIXTURES / "mixed" / "syntax_error.cpp"))
    errors = [d for d in facts.diagnostics if d.severity == "error"]
    assert errors and all(d.line in (5, 6) for d in errors)
    (cfg,) = [c for c in facts.configurations if c.kind == "matmul"]
    assert cfg.effective["matmul_desc"]["COMPUTE_TYPE"].name == "CUBLAS_COMPUTE_16F"


def test_stand_in_headers_are_virtual() -> None:
    unit = parse_file(FIXTURES / "cublaslt" / "extract" / "bias_aux_epilogue.cpp",
                      ParseOptions(use_system_headers=False))
    files = {inc.include.name for inc in unit.tu.get_includes()}
    assert any(is_virtual(f) and f.endswith("cublasLt.h") for f in files)
