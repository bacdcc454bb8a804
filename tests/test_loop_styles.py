"""Loops in the styles users write them (frontend/interp/loop_runs.py, loops.py): the interpreter runs a
loop's body once, so a value that depends on which iteration returns, or on how many iterations ran,
must come out unknown, in every runtime alternative too; a value every iteration gives stays known."""
from __future__ import annotations

import json

from cli_helpers import run_cli

# the body of ``uint32_t align_NAME(uintptr_t addr)``: the largest power of two (<= 256) dividing addr
VARYING = {
    "while_true": "uint32_t a = 256; while (true) { if (addr % a == 0) return a; a /= 2; }",
    "do_while": "uint32_t a = 256; do { if (addr % a == 0) return a; a >>= 1; } while (a > 1); return 1;",
    "range_for": "for (uint32_t a : {256u, 128u, 64u, 16u}) { if (addr % a == 0) return a; } return 1;",
    "index_loop": "const uint32_t c[] = {256, 128, 64, 16}; for (int i = 0; i < 4; ++i) { if (addr % c[i] == 0) "
                  "return c[i]; } return 1;",
    "nested": "for (uint32_t a = 256; a > 1; a /= 2) { for (int r = 0; r < 1; ++r) { if (addr % a == 0) return a; } } "
              "return 1;",
    "empty_body": "uint32_t a; for (a = 256; addr % a; a >>= 1) {} return a;",
    "empty_condition": "uint32_t a = 256; for (;; a /= 2) { if (!(addr % a)) { return a; } }",
}
# the same constant from every iteration that returns, and after the loop
CONSTANT = "for (int i = 0; i < 4; ++i) { if (addr % 16 == 0) return 16; } return 16;"


def _file(tmp_path):
    parts = ["#include <cublasLt.h>\n#include <cstdint>\n#include <initializer_list>\n"]
    for name, body in [*VARYING.items(), ("constant", CONSTANT)]:
        parts.append(f"""static uint32_t align_{name}(uintptr_t addr) {{ {body} }}
void gemm_{name}(cublasLtHandle_t h, const float* A, int m) {{
  cublasLtMatmulDesc_t d;
  cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatrixLayout_t a;
  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, m, m, m);
  cublasLtMatmulPreference_t p;
  cublasLtMatmulPreferenceCreate(&p);
  uint32_t alignment = align_{name}(reinterpret_cast<uintptr_t>(A));
  cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignment, sizeof(alignment));
  cublasLtMatmulHeuristicResult_t r;
  int n = 0;
  cublasLtMatmulAlgoGetHeuristic(h, d, a, a, a, a, p, 1, &r, &n);
}}
""")
    path = tmp_path / "loops.cu"
    path.write_text("\n".join(parts))
    return path


def test_a_value_that_depends_on_the_iteration_is_unknown_in_every_alternative(tmp_path):
    rc, out, err = run_cli("facts", _file(tmp_path))
    assert rc == 0, err
    values: dict[str, list] = {}
    for c in json.loads(out):
        v = c["parameters"]["preference"]["MIN_ALIGNMENT_A_BYTES"]
        values.setdefault(c["function"].removeprefix("gemm_"), []).append(v.get("value"))
    assert set(values) == {*VARYING, "constant"}
    for name in VARYING:
        assert values[name] and all(v is None for v in values[name]), (name, values[name])
    assert values["constant"] == [16]
