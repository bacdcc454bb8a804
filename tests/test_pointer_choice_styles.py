"""Pointer choices (frontend/interp/nullness.py) in the styles users write them: every way of testing a
bias pointer against null, before or after the pointer is set as BIAS_POINTER, is one choice, and on
its null side no bias is set (no FL127 "BIAS_POINTER set with the DEFAULT epilogue"). The controls
test another pointer: there the bias pointer can be set with the DEFAULT epilogue, and FL127 stays
(as FL002: it holds only on values of inputs no call here passes)."""
from __future__ import annotations

import json

from cli_helpers import run_cli

# (declaration before the descriptor, the test that picks the epilogue); ``@`` is the pointer tested
STYLES = {
    "if_pointer": ("", "if (@) epi = CUBLASLT_EPILOGUE_BIAS;"),
    "if_ne_nullptr": ("", "if (@ != nullptr) epi = CUBLASLT_EPILOGUE_BIAS;"),
    "if_nullptr_ne": ("", "if (nullptr != @) epi = CUBLASLT_EPILOGUE_BIAS;"),
    "if_not_else": ("", "if (!@) {} else { epi = CUBLASLT_EPILOGUE_BIAS; }"),
    "if_eq_null_else": ("", "if (@ == NULL) { epi = CUBLASLT_EPILOGUE_DEFAULT; } else { epi = CUBLASLT_EPILOGUE_BIAS; }"),
    "ternary": ("", "epi = @ ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;"),
    "flag_bool": ("bool has = @;", "if (has) epi = CUBLASLT_EPILOGUE_BIAS;"),
    "flag_int": ("int has = (@ != NULL);", "if (has) epi = CUBLASLT_EPILOGUE_BIAS;"),
    "flag_brace": ("const bool has{@ != nullptr};", "if (has) epi = CUBLASLT_EPILOGUE_BIAS;"),
    "flag_negated": ("const bool no_bias = @ == nullptr;", "if (!no_bias) epi = CUBLASLT_EPILOGUE_BIAS;"),
    "flag_zero": ("const bool has = @ != 0;", "epi = has ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;"),
}
SET_BIAS = "  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));\n"


def _function(name: str, declaration: str, test: str, set_first: bool) -> str:
    return (f"void {name}(cublasLtHandle_t h, const float* A, float* C, const float* bias, const float* other,\n"
            f"    int m, void* ws, cudaStream_t s) {{\n"
            f"  {declaration}\n"
            "  cublasLtMatmulDesc_t d;\n"
            "  cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"
            + (SET_BIAS if set_first else "") +
            "  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;\n"
            f"  {test}\n"
            "  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi));\n"
            + ("" if set_first else SET_BIAS) +
            "  cublasLtMatrixLayout_t a;\n"
            "  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, m, m, m);\n"
            "  float one = 1, zero = 0;\n"
            f"  cublasLtMatmul(h, d, &one, A, a, A, a, &zero, C, a, C, a, nullptr, ws, 0, s);  // {name}\n"
            "}\n")


def test_every_style_of_null_test_is_one_choice_and_a_test_of_another_pointer_is_not(tmp_path):
    parts = ["#include <cublasLt.h>\n#include <cstddef>\n"]
    for style, (declaration, test) in STYLES.items():
        for set_first in (False, True):
            order = "set_first" if set_first else "set_after"
            parts.append(_function(f"{style}_{order}", declaration.replace("@", "bias"), test.replace("@", "bias"),
                                   set_first))
            parts.append(_function(f"control_{style}_{order}", declaration.replace("@", "other"),
                                   test.replace("@", "other"), set_first))
    path = tmp_path / "styles.cu"
    path.write_text("\n".join(parts))
    # the controls' FL127 holds only when `other` is non-null: an input no call passes, so FL002 (selected)
    rc, out, err = run_cli("--no-cache", "--output-format", "json", "--select", "FL127,FL002", path)
    assert rc in (0, 1), err
    lines = path.read_text().splitlines()
    found = json.loads(out)
    assert all(f["code"] == "FL002" and f["message"].startswith("FL127 ") for f in found), found
    flagged = {lines[f["line"] - 1].rsplit("// ", 1)[-1] for f in found}
    expected = {f"control_{style}_{order}" for style in STYLES for order in ("set_first", "set_after")}
    assert flagged == expected
