"""Extraction of cuBLASLt configurations from real-style sources, one value-flow style each."""
from __future__ import annotations

import pytest

from conftest import FIXTURES, facts_of, params

EXTRACT = FIXTURES / "cublaslt" / "extract"


def matmuls(name: str, system: bool):
    facts = facts_of(str(EXTRACT / name), system)
    return [c for c in facts.configurations if c.kind == "matmul"]


def test_fp8_locals_enums_sizeof(system_headers):
    (cfg,) = matmuls("fp8_locals.cu", system_headers)
    desc = params(cfg, "matmul_desc")
    assert desc["COMPUTE_TYPE"] == "CUBLAS_COMPUTE_32F" and desc["SCALE_TYPE"] == "CUDA_R_32F"
    assert desc["TRANSA"] == "CUBLAS_OP_T" and desc["TRANSB"] == "CUBLAS_OP_N"
    assert desc["FAST_ACCUM"] == 1
    assert desc["A_SCALE_POINTER"] == "runtime" and desc["B_SCALE_POINTER"] == "runtime"
    a, b, d = params(cfg, "layout_A"), params(cfg, "layout_B"), params(cfg, "layout_D")
    assert (a["TYPE"], a["ROWS"], a["COLS"], a["LD"]) == ("CUDA_R_8F_E4M3", 8192, 4096, 8192)
    assert (b["TYPE"], b["ROWS"], b["COLS"]) == ("CUDA_R_8F_E4M3", 8192, 4096)
    assert (d["TYPE"], d["ROWS"], d["COLS"], d["LD"]) == ("CUDA_R_16BF", 4096, 4096, 4096)
    assert params(cfg, "preference") == {"MAX_WORKSPACE_BYTES": 32 * 1024 * 1024}
    assert cfg.heuristic_loc is not None and cfg.heuristic_loc.line == 49
    assert cfg.site.line == 51 and cfg.function == "fp8_gemm"
    # every set call kept its size argument, resolved through sizeof
    sizes = {s.attribute: s.size.value for s in cfg.desc.sets}
    assert sizes["CUBLASLT_MATMUL_DESC_FAST_ACCUM"] == 1
    assert sizes["CUBLASLT_MATMUL_DESC_TRANSA"] == 4
    assert sizes["CUBLASLT_MATMUL_DESC_A_SCALE_POINTER"] == 8
    assert not cfg.unknowns and cfg.desc.complete


def test_bias_aux_epilogue_constexpr_macros(system_headers):
    (cfg,) = matmuls("bias_aux_epilogue.cpp", system_headers)
    desc = params(cfg, "matmul_desc")
    assert desc["EPILOGUE"] == "CUBLASLT_EPILOGUE_GELU_AUX_BIAS"
    assert desc["BIAS_POINTER"] == "runtime" and desc["EPILOGUE_AUX_POINTER"] == "runtime"
    assert desc["BIAS_DATA_TYPE"] == "CUDA_R_16BF"  # static const global
    assert desc["EPILOGUE_AUX_LD"] == 1024  # constexpr from a macro
    assert params(cfg, "layout_B")["COLS"] == 2048  # macro TOKENS
    aux = next(s for s in cfg.desc.sets if s.attribute == "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER")
    assert aux.value.name == "gelu_in" and aux.buffer == "&gelu_in"


def test_batched_globals_arithmetic(system_headers):
    (cfg,) = matmuls("batched_globals.cpp", system_headers)
    for part, stride in (("layout_A", 256 * 64), ("layout_B", 64 * 128), ("layout_C", 256 * 128)):
        p = params(cfg, part)
        assert p["BATCH_COUNT"] == 8 and p["STRIDED_BATCH_OFFSET"] == stride
    batch_sets = [s for s in cfg.layouts["A"].sets if s.attribute == "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT"]
    assert batch_sets[0].size.value == 4 and batch_sets[0].buffer_type == "int32_t"
    assert params(cfg, "layout_A")["ROWS"] == 256  # global int64_t


def test_helper_template_forwards_values_and_sizes(system_headers):
    (cfg,) = matmuls("helper_template.cpp", system_headers)
    desc = params(cfg, "matmul_desc")
    assert desc["COMPUTE_TYPE"] == "CUBLAS_COMPUTE_32F_FAST_TF32"
    assert desc["TRANSA"] == "CUBLAS_OP_T" and desc["EPILOGUE"] == "CUBLASLT_EPILOGUE_RELU"
    assert params(cfg, "layout_C")["ORDER"] == "CUBLASLT_ORDER_ROW"
    # the user wrote the call to the helper: that is where the fact points
    transa = next(s for s in cfg.desc.sets if s.attribute == "CUBLASLT_MATMUL_DESC_TRANSA")
    assert transa.site.line == 24 and transa.loc.line == 13
    assert transa.size.value == 4  # sizeof(T) with T deduced from the enum argument
    # m, n, k are parameters: unknown, with the reason, never guessed
    a = params(cfg, "layout_A")
    assert a["ROWS"] is None and a["LD"] is None
    assert any("parameter of gemm_rowmajor()" in u for u in cfg.unknowns)


def test_raii_class_with_setattribute_method(system_headers):
    (cfg,) = matmuls("raii_class.cpp", system_headers)
    desc = params(cfg, "matmul_desc")
    assert desc["TRANSA"] == "CUBLAS_OP_T" and desc["EPILOGUE"] == "CUBLASLT_EPILOGUE_BIAS"
    assert desc["BIAS_POINTER"] == "runtime"
    assert cfg.desc.create_function == "cublasLtMatmulDescCreate"
    assert cfg.desc.created_at.line == 41  # MatmulDescriptor desc(...) in linear()
    w = params(cfg, "layout_A")
    assert (w["TYPE"], w["ROWS"], w["COLS"], w["LD"]) == ("CUDA_R_16BF", 768, 1024, 768)
    assert params(cfg, "layout_D")["ROWS"] == 1024
    assert not cfg.unknowns


def test_struct_fields_ternary_casts(system_headers):
    (cfg,) = matmuls("struct_fields.cu", system_headers)
    desc = params(cfg, "matmul_desc")
    assert desc["TRANSA"] == "CUBLAS_OP_T"  # field assigned in the function
    assert desc["TRANSB"] == "CUBLAS_OP_N"  # default member initializer
    assert desc["EPILOGUE"] == "CUBLASLT_EPILOGUE_RELU"  # static_cast | 0u
    c = params(cfg, "layout_C")
    assert c["ORDER"] == "CUBLASLT_ORDER_COL"  # constexpr-false ternary
    assert (c["TYPE"], c["ROWS"], c["COLS"], c["LD"]) == ("CUDA_R_16F", 512, 256, 512)
    assert params(cfg, "layout_A")["ROWS"] == 256  # 128 * 2


def test_runtime_values_stay_unknown_with_reason(system_headers):
    (cfg,) = matmuls("runtime_unknowns.cpp", system_headers)
    transa = cfg.effective["matmul_desc"]["TRANSA"]
    assert "pick_op()" in transa.value.reason
    order = cfg.effective["layout_C"]["ORDER"]
    assert "pick_order()" in order.value.reason
    ld = cfg.effective["layout_A"]["LD"]
    assert "atoi()" in ld.value.reason


def test_descriptor_without_matmul_is_reported():
    src = FIXTURES / "cublaslt" / "extract" / "descriptor_only.cpp"
    facts = facts_of(str(src))
    kinds = [c.kind for c in facts.configurations]
    assert kinds == ["descriptor"]
    assert params(facts.configurations[0], "matmul_desc")["TRANSB"] == "CUBLAS_OP_T"


def test_struct_passed_and_returned_by_value(system_headers):
    (cfg,) = matmuls("struct_by_value.cpp", system_headers)
    a, c = params(cfg, "layout_A"), params(cfg, "layout_C")
    assert (a["TYPE"], a["ROWS"], a["COLS"], a["LD"]) == ("CUDA_R_16F", 1024, 2048, 1024)  # via layout_for(prob, true)
    assert (c["ROWS"], c["COLS"], c["LD"]) == (2048, 4096, 2048)  # prob returned by make_problem(2048)
    assert not cfg.unknowns


def test_translation_unit_without_the_api_is_not_walked(tmp_path: Path) -> None:
    """No cuBLASLt name in the file, its headers or its arguments: the interpreter is not run (a
    large file without GEMMs costs nothing to extract); a name in a header or a -D macro is enough
    to walk the file, and then the calls written through them are found."""
    from fusionlint.frontend.cublaslt import handler as cublaslt
    from fusionlint.frontend.interp.interpreter import Interpreter
    from fusionlint.frontend.clang.parse import ParseOptions, parse_file

    plain = tmp_path / "plain.cpp"
    plain.write_text("#include <vector>\nint f(const std::vector<int>& v) { return (int)v.size(); }\n")
    header = tmp_path / "wrap.h"
    header.write_text("#include <cublasLt.h>\n#define SET_TRANSA(d, t) cublasLtMatmulDescSetAttribute(d, "
                      "CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t))\n")
    through_header = tmp_path / "through_header.cpp"
    through_header.write_text('#include "wrap.h"\nvoid g(cublasLtMatmulDesc_t d) { long long t = 1; SET_TRANSA(d, t); }\n')
    runs = []
    original = Interpreter.run

    def counting_run(self, contexts=None) -> None:
        runs.append(self.main_path)
        original(self, contexts)

    Interpreter.run = counting_run  # type: ignore[method-assign]
    try:
        options = ParseOptions(use_system_headers=False)
        unit = parse_file(plain, options)
        assert not cublaslt.may_call_api(unit, plain.read_text())
        assert cublaslt.extract(unit, plain.read_text()).attribute_sets == [] and runs == []
        unit = parse_file(through_header, options)
        assert cublaslt.may_call_api(unit, through_header.read_text())
        facts = cublaslt.extract(unit, through_header.read_text())
        assert runs == [str(through_header)] and [s.size.value for s in facts.attribute_sets] == [8]
        defined = ParseOptions(use_system_headers=False, defines=["SETTER=cublasLtMatmulDescSetAttribute"])
        assert cublaslt.may_call_api(parse_file(plain, defined), plain.read_text())
    finally:
        Interpreter.run = original  # type: ignore[method-assign]


def test_a_structured_binding_of_a_runtime_object_is_runtime_data(system_headers):
    (cfg,) = matmuls("structured_bindings.cpp", system_headers)
    a = cfg.effective["layout_A"]
    assert params(cfg, "layout_A")["TYPE"] == "CUDA_R_16BF"
    assert a["ROWS"].value.reason == "rows is runtime data (a part of a->flat_2d_dims(), line 12)"
    assert a["COLS"].value.reason == "cols is runtime data (a part of a->flat_2d_dims(), line 12)"
    assert a["LD"].value.reason.startswith("rows is runtime data")


def test_returns_in_undecided_branches_merge(system_headers):
    # op_from_char()'s result differs by the switch's case: a runtime choice the GEMM is checked under,
    # one configuration per case (it was one configuration with TRANSA "returns different values on
    # different paths"); never the value of whichever return comes last
    configs = matmuls("returns_in_branches.cpp", system_headers)
    assert sorted((cfg.when, params(cfg, "matmul_desc")["TRANSA"]) for cfg in configs) == [
        (("`op` is `'n'` or `'N'` (line 7)",), "CUBLAS_OP_N"),
        (("`op` is `'t'` or `'T'` (line 7)",), "CUBLAS_OP_T"),
        (("`op` is none of the cases (line 7)",), "CUBLAS_OP_C")]
    for cfg in configs:
        assert params(cfg, "matmul_desc")["TRANSB"] == "CUBLAS_OP_T"  # both paths of always_t() agree
