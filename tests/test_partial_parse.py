"""Files that only partly parse: headers found nowhere (ATen, c10...) whose names a function's
declarator uses. fusionlint declares those names (frontend/clang/recovery.py) and parses again, so the
function is read as a function and its cuBLASLt configuration kept; a definition that stays
unreadable is named in a -v note and in ``fusionlint facts``."""
from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import run_cli
from conftest import FIXTURES

from fusionlint.frontend.clang import parse, recovery
from fusionlint.frontend.clang.parse import ParseOptions, parse_file

PARTIAL = FIXTURES / "real_code" / "partial"
TENSOR_GEMM = PARTIAL / "tensor_gemm.cu"  # at::Tensor f(..., std::optional<at::Tensor> = std::nullopt) {...}
UNREADABLE = PARTIAL / "unreadable.cu"  # one function lost to a CUTLASS template (never declared), one recovered


def _facts(path: Path) -> list[dict]:
    rc, out, _ = run_cli("facts", path)
    assert rc == 0
    return json.loads(out)


def test_facts_reads_the_configuration_of_a_function_the_missing_header_broke() -> None:
    configs = _facts(TENSOR_GEMM)
    assert [(c["function"], c["kind"]) for c in configs] == [("tf32_matmul", "matmul")]
    cfg = configs[0]
    desc = cfg["parameters"]["matmul_desc"]
    assert desc["COMPUTE_TYPE"]["name"] == "CUBLAS_COMPUTE_32F_FAST_TF32"
    assert desc["SCALE_TYPE"]["name"] == "CUDA_R_32F"
    assert cfg["layouts"]["A"] is not None and cfg["line"] == 30
    assert cfg["missing_headers"] == ["ATen/ATen.h"]
    assert "functions_not_read" not in cfg


def test_an_illegal_setting_in_such_a_function_is_reported() -> None:
    rc, out, _ = run_cli("--no-cache", "--select", "FL100", TENSOR_GEMM)
    assert rc == 1
    assert "tensor_gemm.cu:24:67: error:" in out and "[FL100]" in out


def test_a_function_that_stays_unreadable_is_noted() -> None:
    rc, _, err = run_cli("--no-cache", "-v", UNREADABLE)
    notes = [line for line in err.splitlines() if "not read" in line]
    assert len(notes) == 1 and notes[0].startswith("fusionlint: note: ")
    # (with the CUTLASS wheel installed, cutlass/numeric_types.h is found but declares no Array)
    assert re.search(r"unreadable\.cu:11: function `half_scale_gemm` at line 11 not read: 11:\d+: "
                     r"(use of undeclared identifier 'cutlass'|no member named 'Array' in namespace 'cutlass')$",
                     notes[0]), notes[0]
    rc, _, quiet = run_cli("--no-cache", UNREADABLE)
    assert "not read" not in quiet  # a -v note
    configs = _facts(UNREADABLE)
    # plain_gemm's descriptor (line 19), which only needed the tensor library's names, is read;
    # half_scale_gemm's (line 13) is not
    assert [(c["kind"], c["line"]) for c in configs] == [("descriptor", 19)]
    assert configs[0]["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"] == "CUBLAS_COMPUTE_32F"
    assert len(configs[0]["functions_not_read"]) == 1
    assert configs[0]["functions_not_read"][0].startswith("function `half_scale_gemm` at line 11 not read: 11:")


def test_the_stand_in_declares_no_cublaslt_or_cutlass_name() -> None:
    text = UNREADABLE.read_text()
    unit = parse_file(UNREADABLE, ParseOptions(), text=text)
    assert unit.recovered is not None and "at::" in unit.recovered
    # the header made from the parse without it
    args, _ = parse.build_args(UNREADABLE, ParseOptions())
    tu, diags, _ = parse._parse_rounds(str(UNREADABLE), args, parse._unsaved_base() + [(str(UNREADABLE), text)])
    header = recovery.stand_in(tu, diags, str(UNREADABLE), text, parse.stand_in_headers())
    assert header is not None
    declared = header.text.replace("#include <cublasLt.h>", "")
    assert "namespace cutlass" not in declared and "struct cutlass" not in declared
    assert "cublas" not in declared.lower().replace("fusionlint", "")
    assert "namespace at" in declared and "struct Tensor : ::fusionlint_partial::any { using any::any; };" in declared


def test_only_a_file_with_missing_headers_and_errors_gets_the_recovery_parse(monkeypatch, tmp_path: Path) -> None:
    calls = []
    real = parse._recover

    def counted(*a, **k):
        calls.append(a[0].path)
        return real(*a, **k)

    monkeypatch.setattr(parse, "_recover", counted)
    good = FIXTURES / "cublaslt" / "rules" / "FL100_transa_int64_size.cpp"
    unit = parse_file(good, ParseOptions(), text=good.read_text())
    assert unit.recovered is None
    # a missing header, but no error: no extra round either
    src = tmp_path / "clean.cpp"
    src.write_text('#include "not_here.h"\nint f(int a) { return a; }\n')
    unit = parse_file(src, ParseOptions(), text=src.read_text())
    assert unit.missing_headers == ["not_here.h"] and unit.recovered is None
    assert calls == []
    unit = parse_file(TENSOR_GEMM, ParseOptions(), text=TENSOR_GEMM.read_text())
    assert calls == [TENSOR_GEMM] and unit.recovered is not None
    assert not unit.main_file_errors()  # every name the missing header declared, stood in


def test_instantiations_with_types_the_recovery_declared_run_each_its_own_branch() -> None:
    """stand_in_dtypes.cpp: at::Half and at::BFloat16 come from a missing header; the recovery
    declares each as a class of its own, so each explicit instantiation runs its own
    ``if constexpr (std::is_same_v<...>)`` branch (with one shared stand-in class, BFloat16 took
    the Half branch: a false FL105 on PyTorch's CUDABlas.cpp)."""
    configs = _facts(PARTIAL / "stand_in_dtypes.cpp")
    got = {tuple(v["callee"] for v in c.get("via") or []): (
        c["parameters"]["layout_A"]["TYPE"]["name"], c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"])
        for c in configs}
    assert got == {("lt_gemm<float>",): ("CUDA_R_32F", "CUBLAS_COMPUTE_32F"),
                   ("lt_gemm<at::Half>",): ("CUDA_R_16F", "CUBLAS_COMPUTE_16F"),
                   ("lt_gemm<at::BFloat16>",): ("CUDA_R_16BF", "CUBLAS_COMPUTE_32F")}
    rc, out, err = run_cli("--no-cache", "--output-format", "json", PARTIAL / "stand_in_dtypes.cpp")
    assert rc == 0 and json.loads(out) == [], out


def test_a_check_macro_from_a_missing_header_with_a_false_condition_ends_the_path() -> None:
    """check_macro_dead_end.cpp (PyTorch's gemm_and_bias<at::Half, float>): TORCH_CHECK(false, ...)
    under `if (flag)` throws, so FP16 accumulation with an FP32 output is never configured; the
    later `prop->major >= 7 && flag` is decided operand by operand, `flag` as the same choice.
    Before, FL127 was reported on PyTorch's CUDABlas.cpp for that unreachable alternative."""
    path = PARTIAL / "check_macro_dead_end.cpp"
    rc, out, err = run_cli("--no-cache", "--output-format", "json", path)
    assert rc == 0 and json.loads(out) == [], out
    got = sorted((c["via"][0]["callee"], tuple(c["when"]), c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"])
                 for c in _facts(path) if c["kind"] == "matmul")
    flag15 = "`at::globalContext().allowFP16AccumulationCuBLAS()` is {} (line 15)"
    flag24 = "`at::globalContext().allowFP16AccumulationCuBLAS()` is {} (line 24)"
    major = "`prop->major >= 7` is {} (line 24)"
    assert got == sorted([
        ("gemm_and_bias<at::Half, float>", (flag15.format("false"), major.format("true")), "CUBLAS_COMPUTE_32F"),
        ("gemm_and_bias<at::Half, float>", (flag15.format("false"), major.format("false")), "CUBLAS_COMPUTE_32F"),
        ("gemm_and_bias<at::Half, at::Half>", (major.format("true"), flag24.format("true")), "CUBLAS_COMPUTE_16F"),
        ("gemm_and_bias<at::Half, at::Half>", (major.format("true"), flag24.format("false")), "CUBLAS_COMPUTE_32F"),
        ("gemm_and_bias<at::Half, at::Half>", (major.format("false"),), "CUBLAS_COMPUTE_32F"),
    ])


NAMESPACE_LATER = PARTIAL / "namespace_opened_later.cpp"  # at::cuda::f() used before `namespace at::cuda::blas {`


def test_names_of_a_namespace_the_file_opens_later_are_declared() -> None:
    # The constructor's body calls at::cuda:: functions before the file opens at::cuda::blas. Without
    # declarations for them the parser drops both statements, the body is empty, and the workspace
    # size read "member size not set on this path" as if nothing set it.
    unit = parse_file(NAMESPACE_LATER, ParseOptions(), text=NAMESPACE_LATER.read_text())
    errors = [d for d in unit.tu.diagnostics if d.severity >= 3]
    assert errors == [], [str(d) for d in errors]
    (cfg,) = _facts(NAMESPACE_LATER)
    size = cfg["parameters"]["preference"]["MAX_WORKSPACE_BYTES"]
    assert size["unknown"] == "result of `at::cuda::getCUDABlasLtWorkspaceSize()`"
    assert size["runtime"] == "`at::cuda::getCUDABlasLtWorkspaceSize()`"
    assert size["origin"]["line"] == 9
    # the file's own namespace at::cuda::blas stays a namespace: find_algo is read in it
    assert cfg["function"] == "find_algo" and cfg["kind"] == "heuristic"


def test_case_labels_of_a_missing_header_parse_and_only_the_run_time_switch_gives_alternatives() -> None:
    # before, the parser dropped the switch (case value is not a constant expression) and both
    # types were unknown ("no return value from to_cuda()")
    path = PARTIAL / "enum_of_missing_header.cu"
    configs = _facts(path)
    # to_cuda(dtype): a run-time choice, one configuration per case; FRAMEWORK_THROW in the
    # default case throws, so that alternative has no GEMM
    assert sorted((c["when"], c["parameters"]["layout_A"]["TYPE"]["name"]) for c in configs) == [
        (["`element_type` is `framework::DataType::kFloat` (line 11)"], "CUDA_R_32F"),
        (["`element_type` is `framework::DataType::kHalf` (line 11)"], "CUDA_R_16F")]
    # to_cuda(framework::DataType::kFloat): a constant whose value is not known; not a choice
    why = ("to_cuda() returns different values on different paths, decided by `element_type`: "
           "`framework::DataType::kFloat`, declared by a header found nowhere (its value is not known)")
    assert {c["parameters"]["matmul_desc"]["SCALE_TYPE"].get("unknown") for c in configs} == {why}
    rc, out, _ = run_cli("--no-cache", path)
    assert rc == 0 and "FL105" not in out, out


WRAPPER_KERNEL = PARTIAL / "wrapper_namespace_kernel.cu"  # fw::kernels::LinearBiasKernel<Context, T>


def test_a_kernel_template_calling_cublaslt_through_wrappers_of_a_missing_header_is_read() -> None:
    # `platform::dynload::cublasLt...` (the wrappers' header missing) inside namespace fw, which also
    # names fw::platform::half: the recovery declares the wrappers in both platform namespaces as
    # the API functions. The BIAS_POINTER call's argument depends on T: libclang leaves the call
    # unresolved, and the interpreter takes the one function its name finds.
    configs = _facts(WRAPPER_KERNEL)
    got = sorted((c["when"], c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"],
                  c["parameters"]["matmul_desc"]["SCALE_TYPE"]["name"], c["parameters"]["layout_A"]["TYPE"]["name"])
                 for c in configs)
    half = "`std::is_same<T, fw::platform::half>::value` is {} (line 30)"
    dbl = "`std::is_same<T, double>::value` is {} (line 34)"
    # T is one type: half and double are not both true (that combination is not run)
    assert got == sorted([
        ([half.format("true"), dbl.format("false")], "CUBLAS_COMPUTE_32F", "CUDA_R_16F", "CUDA_R_16F"),
        ([half.format("false"), dbl.format("true")], "CUBLAS_COMPUTE_64F", "CUDA_R_64F", "CUDA_R_64F"),
        ([half.format("false"), dbl.format("false")], "CUBLAS_COMPUTE_32F", "CUDA_R_32F", "CUDA_R_32F"),
    ])
    for cfg in configs:
        desc = cfg["parameters"]["matmul_desc"]
        assert desc["EPILOGUE"]["name"] == "CUBLASLT_EPILOGUE_BIAS"
        assert desc["BIAS_POINTER"]["source"] == "set" and desc["BIAS_POINTER"]["at"]["line"] == 46


def test_the_scale_type_of_the_half_instantiation_is_reported_with_its_condition() -> None:
    rc, out, _ = run_cli("--no-cache", WRAPPER_KERNEL)
    assert rc == 1
    errors = [line for line in out.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].endswith("[FL105]")
    assert "wrapper_namespace_kernel.cu:41:68: error: compute type CUBLAS_COMPUTE_32F with scale type CUDA_R_16F" in errors[0]
    assert "when `std::is_same<T, fw::platform::half>::value` is true (line 30) and " \
           "`std::is_same<T, double>::value` is false (line 34)" in errors[0]


def test_a_namespace_written_both_inside_and_outside_the_files_namespace_gets_the_same_declarations() -> None:
    text = WRAPPER_KERNEL.read_text()
    unit = parse_file(WRAPPER_KERNEL, ParseOptions(), text=text)
    assert "platform::" in (unit.recovered or [])
    unreadable = [d for d in unit.tu.diagnostics if d.severity >= 3 and "dynload" in d.spelling]
    assert unreadable == [], [str(d) for d in unreadable]


def test_a_type_alias_of_a_missing_header_names_a_type(tmp_path: Path) -> None:
    # `using Tensor = framework::Tensor;` with framework's header missing: the recovery declares
    # framework::Tensor as a type (it read as a variable, so every `const Tensor* x` lost its type,
    # and x->dims()[0], the tensor's size, was no run-time data but "array element")
    src = tmp_path / "alias_kernel.cu"
    src.write_text(
        '#include "framework/tensor.h"  // found nowhere\n'
        "#include <cublasLt.h>\n"
        "using Tensor = framework::Tensor;\n"
        "void gemm(cublasLtHandle_t lt, const Tensor* x) {\n"
        "  int64_t rows = x->dims()[0];\n"
        "  cublasLtMatrixLayout_t a;\n"
        "  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, rows, rows, rows);\n"
        "  cublasLtMatmulDesc_t d;\n"
        "  cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"
        "  float one = 1, zero = 0;\n"
        "  cublasLtMatmul(lt, d, &one, nullptr, a, nullptr, a, &zero, nullptr, a, nullptr, a, nullptr, nullptr, 0, 0);\n"
        "}\n")
    unit = parse_file(src, ParseOptions(), text=src.read_text())
    assert not [d for d in unit.tu.diagnostics if d.severity >= 3 and "Tensor" in d.spelling]
    (cfg,) = _facts(src)
    rows = cfg["parameters"]["layout_A"]["ROWS"]
    assert rows["unknown"] != "array element" and "x->dims()" in rows["unknown"], rows


def test_a_header_missing_by_a_relative_path_gets_a_stand_in_where_it_is_looked_for(tmp_path: Path) -> None:
    # TVM's cublas.cc includes "../../3rdparty/compiler-rt/builtin_fp16.h", found nowhere: its stand-in
    # in fusionlint's directory of missing headers was never read (a relative include is looked up
    # beside the including file), the parse stayed cut at that line, and the recovery was not tried.
    # A header next to the file that includes one more missing header is stood in as well.
    src_dir = tmp_path / "src" / "runtime" / "contrib" / "blas"
    src_dir.mkdir(parents=True)
    (src_dir / "utils.h").write_text('#include <dlpack/dlpack.h>  // found nowhere\n')
    main = src_dir / "blas.cc"
    main.write_text(
        "#include <fw/a.h>\n#include <fw/b.h>\n#include <fw/c.h>\n"
        '#include "../../3rdparty/half.h"\n#include "utils.h"\n#include <cublasLt.h>\n'
        "void gemm(cublasLtHandle_t lt, int n) {\n"
        "  cublasLtMatmulDesc_t d;\n"
        "  cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"
        "  cublasLtMatrixLayout_t a;\n"
        "  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, n, n, n);\n"
        "  float one = 1, zero = 0;\n"
        "  cublasLtMatmul(lt, d, &one, nullptr, a, nullptr, a, &zero, nullptr, a, nullptr, a, nullptr, nullptr, 0, 0);\n"
        "}\n")
    unit = parse_file(main, ParseOptions(), text=main.read_text())
    assert [d.message for d in unit.diagnostics if d.severity == "fatal"] == []
    assert "../../3rdparty/half.h" in unit.missing_headers and "dlpack/dlpack.h" in unit.missing_headers
    (cfg,) = _facts(main)
    assert cfg["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"] == "CUBLAS_COMPUTE_32F"


REGISTRY_ENTRY = PARTIAL / "registry_entry.cc"  # TVM's shape: tensors from a packed function's args


def test_names_only_an_expression_or_a_first_recovery_round_reveals_are_declared() -> None:
    unit = parse_file(REGISTRY_ENTRY, ParseOptions(), text=REGISTRY_ENTRY.read_text())
    assert {"DLTensor", "kDLInt", "ColumnCount", "TypeMatch", "TVMArgs"} <= set(unit.recovered or [])
    errors = [d for d in unit.main_file_errors() if "DLTensor" in d.message or "ColumnCount" in d.message]
    assert errors == []


def test_sizes_from_a_packed_functions_args_are_run_time_data_of_the_entry_point(tmp_path: Path) -> None:
    configs = [c for c in _facts(REGISTRY_ENTRY) if c["kind"] == "matmul"]
    # (two: the branch on TypeMatch(...) is a choice)
    assert [c["parameters"]["layout_A"]["ROWS"]["unknown"] for c in configs] == ["result of `ColumnCount(A, false)`"] * 2
    # before: "`A` not typed by the parser (an error nearby?)" / "result of ColumnCount() at line 21";
    # the recovery's ColumnCount(A&&...) is not taken to write `transb`: still the argument's value
    assert "passed by reference" not in json.dumps(configs)
    proj = tmp_path / "proj"
    proj.mkdir()
    src = proj / "registry_entry.cc"
    src.write_text(REGISTRY_ENTRY.read_text())
    (proj / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(proj), "file": src.name, "arguments": ["c++", "-c", src.name]}]))
    rc, _, err = run_cli("index", "-p", proj / "compile_commands.json", "-j", "1")
    assert rc == 0, err
    rc, out, err = run_cli("facts", "-p", proj / "compile_commands.json", src)
    assert rc == 0, err
    cfg = [c for c in json.loads(out) if c["kind"] == "matmul"][0]
    rows, cols = cfg["parameters"]["layout_A"]["ROWS"], cfg["parameters"]["layout_A"]["COLS"]
    # (without the index, CallIgemm might be called by another file: its `args` come from that caller)
    assert rows["runtime"] == "`ColumnCount(A, false)`", rows
    assert cols["runtime"] == "`ColumnCount(B, transb)`", cols
    # the branch on TypeMatch(A->dtype, kDLInt, 8) is decided by the tensor's type: run-time data
    c_type = [c["parameters"]["layout_C"]["TYPE"] for c in json.loads(out) if c["kind"] == "matmul"]
    assert {t.get("name") for t in c_type} == {"CUDA_R_8I", "CUDA_R_32I"}, c_type


def test_the_algorithm_count_the_heuristic_writes_is_run_time_data(tmp_path: Path) -> None:
    configs = _facts(PARTIAL / "heuristic_count_check.cu")
    assert sorted(c["kind"] for c in configs) == ["heuristic", "matmul"]
    # what the count is after the call (before: the 0 it was initialised with, which made
    # TransformerEngine's `if (returnedResults == 0) NVTE_ERROR(...)` end every path to its matmul)
    src = tmp_path / "count.cu"
    src.write_text(
        "#include <cublasLt.h>\n"
        "void f(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatmulPreference_t p) {\n"
        "  cublasLtMatmulHeuristicResult_t r = {};\n"
        "  int returned = 0;\n"
        "  const auto status = cublasLtMatmulAlgoGetHeuristic(lt, desc, a, a, a, a, p, 1, &r, &returned);\n"
        "  cublasLtMatrixLayout_t counted;\n"
        "  cublasLtMatrixLayoutCreate(&counted, CUDA_R_32F, returned, 8, 8);\n"
        "  cublasLtMatmulAlgoGetHeuristic(lt, desc, counted, a, a, a, p, 1, &r, &returned);\n"
        "  int32_t epilogue = 0;\n"
        "  size_t written = 4;\n"
        "  cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue), &written);\n"
        "  cublasLtMatrixLayout_t sized;\n"
        "  cublasLtMatrixLayoutCreate(&sized, CUDA_R_32F, written, 8, 8);\n"
        "  cublasLtMatmulAlgoGetHeuristic(lt, desc, sized, a, a, a, p, 1, &r, &returned);\n"
        "}\n")
    heuristics = _facts(src)
    rows = heuristics[1]["parameters"]["layout_A"]["ROWS"]
    assert rows.get("runtime") == "what cublasLtMatmulAlgoGetHeuristic() at line 5 wrote", rows
    # any output parameter of the API model's functions, not only the heuristic's: the size an
    # attribute's read back wrote (it was the 4 it held before)
    rows = heuristics[2]["parameters"]["layout_A"]["ROWS"]
    assert rows.get("runtime") == "what cublasLtMatmulDescGetAttribute() at line 11 wrote", rows


def test_a_variable_the_parser_left_untyped_is_read_by_name_and_its_elements_are_run_time_data(tmp_path: Path) -> None:
    # Paddle's fused_gemm_epilogue_op.cu: in a class template over headers found nowhere,
    # `auto x_mat_dims = framework::flatten_to_2d(x->dims(), ...)` gets no type, and its use in
    # `x_mat_dims[0]` no cursor of the declaration: it was "not typed by the parser", no run-time data
    src = tmp_path / "untyped.cu"
    src.write_text(
        '#include "paddle/fluid/operators/fused/fused_gemm_epilogue_op.h"\n'
        "#include <cublasLt.h>\n"
        "using Tensor = framework::Tensor;\n"
        "template <typename DeviceContext, typename T>\n"
        "class GemmKernel : public framework::OpKernel<T> {\n"
        " public:\n"
        "  void Compute(const framework::ExecutionContext &ctx) const override {\n"
        '    const Tensor *x = ctx.Input<Tensor>("X");\n'
        '    bool trans_x = ctx.Attr<bool>("trans_x");\n'
        "    auto x_mat_dims = framework::flatten_to_2d(x->dims(), trans_x ? 1 : x->dims().size() - 1);\n"
        "    const int64_t rows = x_mat_dims[0];\n"
        "    cublasLtMatrixLayout_t desc;\n"
        "    cublasLtMatrixLayoutCreate(&desc, CUDA_R_32F, rows, 64, rows);\n"
        "    cublasLtMatmulDesc_t op;\n"
        "    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"
        "    const float alpha = 1.0f, beta = 0.0f;\n"
        "    cublasLtMatmul(nullptr, op, &alpha, nullptr, desc, nullptr, desc, &beta, nullptr, desc, nullptr, desc,\n"
        "                   nullptr, nullptr, 0, 0);\n"
        "  }\n"
        "};\n")
    configs = [c for c in _facts(src) if c["kind"] == "matmul"]
    assert len(configs) == 1
    rows = configs[0]["parameters"]["layout_A"]["ROWS"]
    assert rows["unknown"] == "array element", rows
    # what the missing header's function returned, from a temporary of a type the parser left
    # dependent, named as written (it was named `<dependent type>`)
    assert rows["runtime"].startswith("an element of `framework::flatten_to_2d()`, from `trans_x ? 1 :"), rows


def test_an_element_at_a_run_time_index_of_a_callers_array_says_the_index_is_the_run_time_data(tmp_path: Path) -> None:
    # TransformerEngine's workspace[i % num_streams], the stream count a library call's: the array
    # is the caller's (no index here), the run-time data is the index (was "an element of" the count)
    src = tmp_path / "element.cu"
    src.write_text(
        "#include <cublasLt.h>\n"
        "struct Device { int stream; };\n"
        "const Device *device();\n"
        "void f(cublasLtHandle_t lt, const int64_t *rows_per_stream) {\n"
        "  const int64_t rows = rows_per_stream[device()->stream];\n"
        "  cublasLtMatrixLayout_t desc;\n"
        "  cublasLtMatrixLayoutCreate(&desc, CUDA_R_32F, rows, 64, rows);\n"
        "  cublasLtMatmulDesc_t op;\n"
        "  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"
        "  const float alpha = 1.0f, beta = 0.0f;\n"
        "  cublasLtMatmul(lt, op, &alpha, nullptr, desc, nullptr, desc, &beta, nullptr, desc, nullptr, desc,\n"
        "                 nullptr, nullptr, 0, 0);\n"
        "}\n")
    rows = [c for c in _facts(src) if c["kind"] == "matmul"][0]["parameters"]["layout_A"]["ROWS"]
    assert rows["unknown"] == "array element", rows
    assert rows["runtime"] == "the element at `device()->stream`", rows


OUT_OF_LINE = PARTIAL / "out_of_line_members.cc"  # XLA's cuda_blas_lt.cc shape, its own header missing


def test_a_class_whose_header_is_missing_keeps_the_members_the_file_defines_out_of_line() -> None:
    """``BlasLt::Plan::Run`` and ``BlasLt::Layout::Create`` are defined in ``namespace proj::cuda`` for a
    class of a header found nowhere: the recovery declares the class there, with those members (before,
    it declared a namespace ``BlasLt`` that ``cuda`` cannot define members of, and every such function
    was lost); cuBLASLt's header, included by Bazel's vendored path, is the model's; the matmul whose
    overload resolution failed (``algo`` from a ``std::any_cast`` of a recovered type) is still read."""
    parsed = parse_file(OUT_OF_LINE, ParseOptions(), text=OUT_OF_LINE.read_text())
    assert "proj::cuda::BlasLt:: (out-of-line members)" in (parsed.recovered or [])
    assert not [d.message for d in parsed.diagnostics if "out-of-line definition" in d.message
                or "cannot define or redeclare" in d.message or "unknown type name 'cublas" in d.message]
    configs = _facts(OUT_OF_LINE)
    matmul = OUT_OF_LINE.read_text().splitlines().index(next(
        line for line in OUT_OF_LINE.read_text().splitlines() if "cublasLtMatmul(" in line)) + 1
    assert [(c["kind"], c["line"]) for c in configs] == [("descriptor", matmul - 11), ("matmul", matmul)]
    assert configs[1]["function"] == "Plan::Run"
    # its objects are members this file does not create: said with the argument written
    assert configs[1]["unknowns"][0] == "matmul_desc: the object did not resolve (the argument is `op_desc_.get()`)"
    # Desc::Create's descriptor (no matmul uses it in this file): its compute type is read
    assert configs[0]["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"] == "CUBLAS_COMPUTE_32F"
    _, _, err = run_cli("--no-cache", "-v", OUT_OF_LINE)
    assert "header 'third_party/gpus/cuda/include/cublasLt.h' not found: <cublasLt.h> (the CUDA toolkit's, " \
           "or fusionlint's model of cuBLAS) stands in for it" in err


def test_the_size_of_a_value_whose_type_was_declared_nowhere_is_not_its_stand_ins() -> None:
    """``SetAttr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epi)`` with ``epi`` declared only by the recovery
    (its declaration is inside a macro found nowhere) runs ``SetAttr<T>`` with T the stand-in, whose
    ``sizeof(decltype(value))`` libclang folds to 1: unknown, not an FL100 (it was two false errors)."""
    rc, out, err = run_cli("--no-cache", OUT_OF_LINE)
    assert rc == 0 and "FL100" not in out
    assert "checked without the" not in err  # (the vendored toolkit header's note is no library summary)


def test_constructors_destructors_member_templates_and_trailing_returns_defined_out_of_line_parse(tmp_path: Path) -> None:
    src = tmp_path / "runner.cc"
    src.write_text(
        '#include "proj/runner.h"\n#include <cublasLt.h>\n'
        "namespace proj {\n"
        "Runner::Runner(int device) : device_(device) { cublasLtCreate(&handle_); }\n"
        "Runner::~Runner() { cublasLtDestroy(handle_); }\n"
        "template <typename T>\nint Runner::Set(cublasLtMatmulDesc_t d, T v) {\n"
        "  return cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &v, sizeof(v));\n}\n"
        "auto Runner::Make(const cfg::Config& c) const -> int {\n"
        "  cublasLtMatmulDesc_t d;\n  cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"
        "  cublasOperation_t t = CUBLAS_OP_T;\n  return Set(d, t);\n}\n"
        "}  // namespace proj\n")
    parsed = parse_file(src, ParseOptions(), text=src.read_text())
    assert "proj::Runner:: (out-of-line members)" in (parsed.recovered or [])
    # (the members it does not define stay unknown: ``device_`` is not one, ``handle_`` a stand-in)
    assert [d.message for d in parsed.diagnostics if d.severity in ("error", "fatal") and (
        "out-of-line" in d.message or "redeclare" in d.message or "constructor" in d.message
        or "destructor" in d.message)] == []
    (cfg,) = _facts(src)
    assert cfg["parameters"]["matmul_desc"]["TRANSA"]["name"] == "CUBLAS_OP_T"


def test_sizes_in_a_template_instantiated_with_a_stand_in_type_are_still_known_where_they_do_not_depend_on_it(
        tmp_path: Path) -> None:
    """PyTorch's ``gemm_and_bias<at::Half>`` with ATen missing: ``sizeof(transa)`` and ``sizeof(Dtype*)`` do not
    depend on the stand-in ``at::Half``, so a wrong size there is still FL100 (the stand-in's own size is
    not used: the test above)."""
    src = tmp_path / "bias.cpp"
    src.write_text(
        "#include <ATen/ATen.h>\n#include <cublasLt.h>\n"
        "template <typename Dtype>\nvoid gemm(cublasLtMatmulDesc_t d, Dtype* bias) {\n"
        "  cublasOperation_t t = CUBLAS_OP_T;\n"
        "  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t) / 2);\n"
        "  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(Dtype*) / 2);\n}\n"
        "template void gemm<at::Half>(cublasLtMatmulDesc_t, at::Half*);\n")
    rc, out, _ = run_cli("--no-cache", "--select", "FL100", src)
    assert rc == 1 and re.findall(r"bias\.cpp:(\d+):\d+: error: .*\[FL100\]", out) == ["6", "7"]
