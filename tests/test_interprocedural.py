"""Interprocedural values: values that come from callers — call-site contexts inside a translation unit (and,
with the project index, from other translation units), each finding naming the call chain."""
from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import run_cli
from conftest import FIXTURES

HERE = FIXTURES / "interprocedural"


def _findings(*argv) -> list[dict]:
    rc, out, err = run_cli("--no-cache", "--output-format", "json", *argv)
    assert rc in (0, 1), err
    return json.loads(out)


_ON_INPUTS = re.compile(r"^(FL\d{3}) \([\w-]+\) only when (.*), values fusionlint does not know "
                        r"\(inputs no call in the checked files passes, or run-time data\): ")


def _on_inputs(path: Path, *argv) -> list[tuple[str, int, str]]:
    """A file's findings that hold only on paths chosen by inputs no caller here passes: none by default
    (each is an undecided check); with FL002 selected, a warning per finding: (its rule's code, its
    line, the condition)."""
    assert not [f for f in _findings(*argv, path) if f["severity"] == "error"]
    out = []
    for f in _findings("--extend-select", "FL002", *argv, path):
        assert f["code"] == "FL002" and f["severity"] == "warning", f
        m = _ON_INPUTS.match(f["message"])
        assert m, f["message"]
        out.append((m.group(1), f["line"], m.group(2)))
    return out


def test_a_helper_is_checked_once_per_call_and_the_finding_names_the_call():
    path = HERE / "call_contexts.cu"
    found = _findings(path)
    fl105 = [f for f in found if f["code"] == "FL105"]
    assert len(fl105) == 1, found
    f = fl105[0]
    # the bad value is written at the second call (line 34), which is where the error points
    assert (f["line"], f["column"]) == (34, 17)
    vias = [r for r in f["related"] if r["message"].startswith("via ")]
    assert [(r["line"], r["message"]) for r in vias] == [(34, "via main() -> bf16_gemm(...)")]
    # the first call (COMPUTE_32F) is legal: nothing at its line
    assert not [x for x in found if x["line"] == 31]


def test_facts_say_which_call_each_configuration_comes_from():
    rc, out, err = run_cli("facts", HERE / "call_contexts.cu")
    assert rc == 0, err
    configs = [c for c in json.loads(out) if c["kind"] == "matmul"]
    assert [[(v["caller"], v["callee"], v["line"]) for v in c["via"]] for c in configs] == [
        [("main", "bf16_gemm", 31)], [("main", "bf16_gemm", 34)]]
    compute = [c["parameters"]["matmul_desc"]["COMPUTE_TYPE"] for c in configs]
    assert [x["name"] for x in compute] == ["CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_16F"]
    assert [x["origin"]["line"] for x in compute] == [31, 34]


def test_each_runtime_alternative_is_checked_and_the_finding_says_when():
    # `dtype` and `fast` are parameters no call passes: the finding is FL002 (off by default), not an error
    assert _on_inputs(HERE / "runtime_alternatives.cu") == [
        ("FL105", 25, "`dtype` is `DType::kBF16` (line 13) and `fast` is true (line 21)")]


def test_facts_list_one_configuration_per_alternative_with_its_conditions():
    rc, out, err = run_cli("facts", HERE / "runtime_alternatives.cu")
    assert rc == 0, err
    got = sorted((tuple(c["when"]), c["parameters"]["layout_A"]["TYPE"]["name"],
                  c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"]) for c in json.loads(out))
    # an enum class switch whose cases name every enumerator has no "none of the cases" alternative;
    # `fast` is one choice although it is read twice (lines 21 and 22)
    assert got == sorted([
        (("`dtype` is `DType::kHalf` (line 13)", "`fast` is true (line 21)"), "CUDA_R_16F", "CUBLAS_COMPUTE_16F"),
        (("`dtype` is `DType::kHalf` (line 13)", "`fast` is false (line 21)"), "CUDA_R_16F", "CUBLAS_COMPUTE_32F"),
        (("`dtype` is `DType::kBF16` (line 13)", "`fast` is true (line 21)"), "CUDA_R_16BF", "CUBLAS_COMPUTE_16F"),
        (("`dtype` is `DType::kBF16` (line 13)", "`fast` is false (line 21)"), "CUDA_R_16BF", "CUBLAS_COMPUTE_32F"),
    ])


def test_a_finding_that_holds_in_every_alternative_has_no_condition_and_a_known_switch_picks_its_case():
    path = HERE / "runtime_alternatives_every.cu"
    found = _findings(path)
    assert [(f["code"], f["line"]) for f in found] == [("FL105", 19)]
    assert "(when" not in found[0]["message"]
    rc, out, err = run_cli("facts", path)
    configs = json.loads(out)
    assert [(c["when"], c["parameters"]["matmul_desc"]["TRANSA"]["name"]) for c in configs] == [
        (["`transposed` is true (line 16)"], "CUBLAS_OP_T"), (["`transposed` is false (line 16)"], "CUBLAS_OP_N")]
    # `switch (kind)` with kind == 2 ran only `case 2` (before, every case was merged: TYPE unknown)
    assert {c["parameters"]["layout_A"]["TYPE"]["name"] for c in configs} == {"CUDA_R_16BF"}


def test_an_attribute_set_under_a_runtime_condition_is_checked_with_and_without_it():
    """conditional_set.cu: TRANSC set to CUBLAS_OP_T inside `if (transpose_c)` and FAST_ACCUM
    inside `if (version >= 11 && fast_accum)`: each is a choice (the `&&` one per operand), so each
    finding holds under its condition; before, both fields were unknown ("set conditionally")."""
    path = HERE / "conditional_set.cu"
    assert _on_inputs(path) == [("FL117", 19, "`transpose_c` is true (line 16)"),
                                ("FL107", 24, "`version >= 11` is true (line 21) and `fast_accum` is true (line 21)")]
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    got = sorted((tuple(c["when"]), c["parameters"]["matmul_desc"]["TRANSC"].get("name"),
                  c["parameters"]["matmul_desc"]["FAST_ACCUM"]["value"]) for c in json.loads(out))
    assert got == sorted([
        ((t, v, f), "CUBLAS_OP_T" if t.endswith("true (line 16)") else "CUBLAS_OP_N", 1 if f.endswith("true (line 21)") else 0)
        for t in ("`transpose_c` is true (line 16)", "`transpose_c` is false (line 16)")
        for v, f in (("`version >= 11` is true (line 21)", "`fast_accum` is true (line 21)"),
                     ("`version >= 11` is true (line 21)", "`fast_accum` is false (line 21)"))
    ] + [((t, "`version >= 11` is false (line 21)"), "CUBLAS_OP_T" if t.endswith("true (line 16)") else "CUBLAS_OP_N", 0)
         for t in ("`transpose_c` is true (line 16)", "`transpose_c` is false (line 16)")])
    assert not any("set conditionally" in json.dumps(c) for c in json.loads(out))


def test_a_helper_that_returns_from_each_case_is_a_choice_and_its_throwing_alternative_has_no_gemm():
    """choice_in_helper.cpp: `data_type_from_char(dtype)` returns from each case of a switch and
    throws after it. Before, its result was unknown ("returns different values on different
    paths") and nothing was checked; now each case is an alternative of the caller's GEMM."""
    path = HERE / "choice_in_helper.cpp"
    assert _on_inputs(path) == [("FL105", 25, "`dtype` is `'b'` or `'B'` (line 10)")]
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    configs = json.loads(out)
    # the alternative where no case matches throws: no configuration, and no unused descriptor either
    assert [(c["kind"], c["when"], c["parameters"]["layout_A"]["TYPE"]["name"]) for c in configs] == [
        ("matmul", ["`dtype` is `'h'` or `'H'` (line 10)"], "CUDA_R_16F"),
        ("matmul", ["`dtype` is `'b'` or `'B'` (line 10)"], "CUDA_R_16BF")]


def test_a_function_template_is_checked_per_instantiation_with_its_traits_and_if_constexpr():
    path = HERE / "template_dtypes.cpp"
    found = _findings(path)
    assert [(f["code"], f["line"]) for f in found] == [("FL105", 25)]
    assert [r["line"] for r in found[0]["related"] if r["message"].startswith("via ")] == [42]  # the BF16 call
    rc, out, err = run_cli("facts", path)
    configs = json.loads(out)
    # one configuration per instantiation (the pattern itself is not run as if it had no caller)
    assert [(c["via"][0]["line"], c["parameters"]["layout_A"]["TYPE"]["name"],
             c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"]) for c in configs] == [
        (40, "CUDA_R_32F", "CUBLAS_COMPUTE_32F"), (41, "CUDA_R_16F", "CUBLAS_COMPUTE_16F"),
        (42, "CUDA_R_16BF", "CUBLAS_COMPUTE_16F")]


def test_lambdas_run_where_they_are_called_with_their_captures_read_where_they_were_made():
    """lambdas.cu: a lambda variable, a std::function parameter's call, a lambda called where it
    is written with one inside, one handed to a function without a body here, and a lambda that
    captures a parameter; the good calls stay clean."""
    found = [f for f in _findings(HERE / "lambdas.cu") if f["code"] == "FL105"]
    assert sorted(f["line"] for f in found) == [56, 69, 76, 80], found
    chains = {f["line"]: [r["message"] for r in f["related"] if r["message"].startswith("via ")] for f in found}
    assert chains[56] == ["via main() -> run_timed(...)", "via run_timed() -> lambda at lambdas.cu:57(...)",
                          "via lambda at lambdas.cu:57() -> gemm(...)"]
    assert chains[69][-2:] == ["via lambda at lambdas.cu:66() -> lambda at lambdas.cu:67(...)",
                               "via lambda at lambdas.cu:67() -> gemm(...)"]
    assert chains[80] == ["via main() -> run_problem(...)", "via run_problem() -> lambda at lambdas.cu:41(...)",
                          "via lambda at lambdas.cu:41() -> gemm(...)"]


def test_facts_of_lambdas_resolve_captured_values_and_mark_a_lambda_that_may_run():
    rc, out, err = run_cli("facts", HERE / "lambdas.cu")
    assert rc == 0, err
    configs = [c for c in json.loads(out) if c["kind"] == "matmul"]
    assert len(configs) == 7
    by_lambda = {c["via"][-2]["callee"]: c for c in configs}
    sized = by_lambda["lambda at lambdas.cu:61"]  # std::function<void(int)> called with 128
    assert sized["parameters"]["layout_B"]["COLS"]["value"] == 128 and not sized["conditional"]
    # handed to for_each_stream(), whose body is not here: it may run, so its configuration is conditional
    assert by_lambda["lambda at lambdas.cu:74"]["conditional"] is True
    # run_problem's lambda reads p (a parameter of run_problem) and its own parameter k
    problem = [c for c in configs if c["via"][0]["callee"] == "run_problem"]
    assert [c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"] for c in problem] == [
        "CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_32F"]
    assert all(c["parameters"]["layout_A"]["ROWS"]["value"] == 128 for c in problem)
    assert all(not c["unknowns"] for c in configs if not c["conditional"]), configs


def test_explicit_instantiations_are_checked_one_by_one_through_raii_descriptors():
    """explicit_instantiations.cpp (PyTorch's gemm_and_bias layout): std::unique_ptr members hold
    the cuBLASLt objects, a member template sets the attributes, and only `template bool ...;` lines
    instantiate the function template; the BFloat16 instantiation is the bad one."""
    path = HERE / "explicit_instantiations.cpp"
    found = [f for f in _findings(path) if f["code"] == "FL105"]
    assert [(f["line"], f["column"]) for f in found] == [(64, 20)], found
    assert [r["message"] for r in found[0]["related"] if r["message"].startswith("via ")] == [
        "via the explicit instantiation gemm_and_bias<blas::BFloat16>"]
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    configs = [c for c in json.loads(out) if c["kind"] == "matmul"]
    types = {}
    for c in configs:
        (step,) = c["via"]
        p = c["parameters"]
        types.setdefault(step["callee"], set()).add(
            (p["matmul_desc"]["COMPUTE_TYPE"]["name"], p["matmul_desc"]["SCALE_TYPE"]["name"], p["layout_A"]["TYPE"]["name"]))
        assert p["matmul_desc"]["TRANSB"]["name"] == "CUBLAS_OP_N"  # through setAttribute<T> and descriptor()
    assert types == {
        "gemm_and_bias<double>": {("CUBLAS_COMPUTE_64F", "CUDA_R_64F", "CUDA_R_64F")},
        "gemm_and_bias<float>": {("CUBLAS_COMPUTE_32F", "CUDA_R_32F", "CUDA_R_32F")},
        "gemm_and_bias<blas::BFloat16>": {("CUBLAS_COMPUTE_16F", "CUDA_R_16F", "CUDA_R_16BF")}}
    assert [s["line"] for c in configs for s in c["via"]].count(80) == len(configs) // 3


def test_overloads_called_from_instantiations_run_with_their_callers_values_only():
    rc, out, err = run_cli("facts", HERE / "overloads_from_instantiations.cpp")
    assert rc == 0, err
    configs = [c for c in json.loads(out) if c["kind"] == "matmul"]
    assert [[(v["caller"], v["callee"]) for v in c["via"]] for c in configs] == [
        [("explicit instantiation", "forward<float>"), ("forward", "gemm_lt")],
        [("explicit instantiation", "forward<double>"), ("forward", "gemm_lt")]]
    assert [c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"] for c in configs] == [
        "CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_64F"]
    assert all(c["unknowns"] == [] and c["parameters"]["layout_A"]["ROWS"]["value"] == 64 for c in configs)


def test_each_entry_point_is_expanded_over_its_own_choices_and_a_choice_that_does_not_matter_is_not_said():
    path = HERE / "alternatives_per_function.cu"
    # bf16_gemm's `fast` is the sixth flag of the file: over the product of all six it stayed merged;
    # reached with `trans_a` true and false alike: only `fast` is said
    assert _on_inputs(path) == [("FL105", 43, "`fast` is true (line 40)")]
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    configs = json.loads(out)
    per_function = {}
    for c in configs:
        per_function.setdefault(c["via"][0]["caller"], []).append(c)
    # four runs per function (two flags each), every value known in each
    assert {k: len(v) for k, v in per_function.items()} == {"half_gemm": 4, "float_gemm": 4, "bf16_gemm": 4}
    for c in configs:
        assert all("unknown" not in v for v in c["parameters"]["matmul_desc"].values()), c["parameters"]


def test_a_path_that_throws_does_not_go_on_and_a_parameter_is_one_choice_in_every_function():
    path = HERE / "dead_ends.cpp"
    # only gemm_unchecked() reaches FP16 accumulation with an FP32 output; gemm() throws first
    # (its `fp16_accum && out_fp32` and run()'s `fp16_accum ? ...` are the same two choices)
    assert _on_inputs(path) == [("FL127", 22, "`fp16_accum` is true (line 9) and `out_fp32` is true (line 11)")]
    found = _findings("--extend-select", "FL002", path)
    vias = [r["message"] for r in found[0]["related"] if r["message"].startswith("via ")]
    assert vias == ["via gemm_unchecked() -> run(...)"]
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    gemm = [c for c in json.loads(out) if c["kind"] == "heuristic" and c["via"][0]["caller"] == "gemm"]
    assert len(gemm) == 3  # four alternatives, one of which throws


def test_an_attribute_set_on_the_path_to_the_call_is_known_there_and_one_set_off_it_is_not():
    rc, out, err = run_cli("facts", HERE / "loop_body_gemm.cpp")
    assert rc == 0, err
    matmuls = [c for c in json.loads(out) if c["kind"] == "matmul"]
    for md in (c["parameters"]["matmul_desc"] for c in matmuls):
        # set in the loop body, as the call is: known (it read "set conditionally" before)
        assert (md["TRANSA"]["name"], md["EPILOGUE"]["name"]) == ("CUBLAS_OP_T", "CUBLASLT_EPILOGUE_RELU")
    # set under `if (use_bias)` before the loop: on some paths to the call only, so the call is
    # checked once with it and once without (the loop is not a choice: its trip count is run-time data)
    assert sorted((c["when"], "BIAS_POINTER" in c["parameters"]["matmul_desc"]) for c in matmuls) == [
        (["`use_bias` is false (line 11)"], False), (["`use_bias` is true (line 11)"], True)]


def test_a_struct_assigned_as_a_whole_takes_its_sources_members_or_forgets_them():
    """fixtures/interprocedural/struct_assignment.cpp: `c = *reinterpret_cast<Config *>(p)` (the
    implicit operator=, whose body libclang does not show) replaces the defaults; `c = preset`
    copies the preset's members."""
    rc, out, err = run_cli("facts", HERE / "struct_assignment.cpp")
    assert rc == 0, err
    by_root = {c["via"][0]["caller"]: c["parameters"]["matmul_desc"] for c in json.loads(out) if c["kind"] == "matmul"}
    opaque, preset = by_root["from_opaque"], by_root["from_preset"]
    assert opaque["TRANSA"]["unknown"] == opaque["TRANSB"]["unknown"] == "assigned at line 23"
    assert (preset["TRANSA"]["name"], preset["TRANSB"]["name"]) == ("CUBLAS_OP_T", "CUBLAS_OP_N")


def test_an_argument_left_to_its_default_has_the_default_value():
    # CUDALibrarySamples' TestBench: main passes the sizes only; the workspace size is the
    # constructor's default, forwarded by a delegating constructor. libclang gives such an argument
    # as an expression with no text, which read "`` not typed by the parser".
    rc, out, err = run_cli("facts", HERE / "default_arguments.cpp")
    assert rc == 0, err
    configs = [c for c in json.loads(out) if c["kind"] == "heuristic"]
    sizes = [c["parameters"]["preference"]["MAX_WORKSPACE_BYTES"] for c in configs]
    assert [(s.get("value"), s["origin"]["line"]) for s in sizes] == [(4 * 1024 * 1024, 9), (64 * 1024, 25)]
    assert [[v["line"] for v in c["via"]] for c in configs] == [[29], [30]]


def test_a_variable_a_lambda_captures_is_one_choice_with_the_functions_reads_of_it():
    # PyTorch's gemm_and_bias: `[&] { return bias ? EPILOGUE_BIAS : DEFAULT; }()` and `if (bias)`.
    # Keyed by the function a condition is read in, the lambda's `bias` and the function's were two
    # choices, and the run with one true and the other false was two false errors (FL112, FL127).
    path = HERE / "lambda_captured_choice.cpp"
    assert _findings(path) == []
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    got = sorted((c["when"], c["parameters"]["matmul_desc"]["EPILOGUE"]["name"],
                  "BIAS_POINTER" in c["parameters"]["matmul_desc"]) for c in json.loads(out))
    # a pointer's test: its sides are "non-null" and "null"
    assert got == [(["`bias` is non-null (line 12)"], "CUBLASLT_EPILOGUE_BIAS", True),
                   (["`bias` is null (line 12)"], "CUBLASLT_EPILOGUE_DEFAULT", False)]


def test_a_value_returned_inside_a_loop_is_known_only_when_every_iteration_gives_it():
    rc, out, err = run_cli("facts", HERE / "loop_returns.cpp")
    assert rc == 0, err
    gemm = next(c for c in json.loads(out) if c["parameters"]["matmul_desc"]["SCALE_TYPE"].get("name")
                and c["parameters"].get("preference"))
    pref = gemm["parameters"]["preference"]
    # TransformerEngine's alignment probe: not 256 (the first iteration's) nor 128 (the second's)
    assert "value" not in pref["MIN_ALIGNMENT_A_BYTES"]
    assert pref["MIN_ALIGNMENT_A_BYTES"]["unknown"] == \
        "which iteration of the loop at line 11 returns is not known (alignment changes in it)"
    # a constant from whichever iteration returns, and an unconditional return on the first iteration
    assert gemm["parameters"]["matmul_desc"]["SCALE_TYPE"]["name"] == "CUDA_R_32F"
    assert pref["MAX_WORKSPACE_BYTES"]["value"] == 16 << 20


def test_a_for_loop_body_runs_with_the_start_value_not_the_incremented_one():
    found = _findings(HERE / "loop_returns.cpp")
    # computes[0] (COMPUTE_16F on FP32 data) is the first iteration's; the increment runs after the body
    assert [(f["code"], f["line"]) for f in found] == [("FL105", 63)]
    assert "CUBLAS_COMPUTE_16F" in found[0]["message"]


def test_whether_a_pointer_is_null_is_one_choice_and_its_null_side_sets_no_bias():
    rc, out, err = run_cli("facts", HERE / "null_pointer_choice.cu")
    assert rc == 0, err
    got = [(tuple(c["when"]), c["parameters"]["matmul_desc"]["BIAS_POINTER"].get("value", "set"),
            c["parameters"]["matmul_desc"]["EPILOGUE"]["name"]) for c in json.loads(out)]
    # `has_bias = (bias != NULL)` and `bias != nullptr ? ...` are the choice on `bias`; on its null
    # side the pointer set as BIAS_POINTER is null (set before the test, too)
    assert got[:4] == [
        (("`bias` is non-null (line 20)",), "set", "CUBLASLT_EPILOGUE_BIAS"),
        (("`bias` is null (line 20)",), 0, "CUBLASLT_EPILOGUE_DEFAULT"),
        (("`bias` is non-null (line 37)",), "set", "CUBLASLT_EPILOGUE_BIAS"),
        (("`bias` is null (line 37)",), 0, "CUBLASLT_EPILOGUE_DEFAULT"),
    ]


def test_a_bias_pointer_without_a_bias_epilogue_is_reported_only_where_it_can_be_non_null():
    path = HERE / "null_pointer_choice.cu"
    # not in flag_from_pointer nor pointer_set_before_the_test (their DEFAULT epilogue goes with a
    # null bias); in flag_changed_later, whose flag no longer says whether the pointer is null: there
    # only on paths its inputs choose (FL002)
    on_inputs = [x for x in _on_inputs(path) if x[0] == "FL127"]
    assert len(on_inputs) == 1 and "`fuse` is false (line 46)" in on_inputs[0][2], on_inputs
    found = [f for f in _findings("--extend-select", "FL002", path) if f["message"].startswith("FL127 ")]
    assert [r["line"] for r in found[0]["related"] if r["message"].startswith("via ")] == [52]


def test_an_allocated_pointer_is_not_null_and_a_helper_follows_what_its_callers_pass():
    """allocated_pointers.cu (a PyTorch-style gemm_ex helper: ``if (bias != nullptr)`` sets
    the bias pointer): a pointer cudaMalloc / cudaMallocAsync wrote, also through a helper or into a
    struct field, and a new-expression's result are not null, so the callers that pass them get no
    "(when `bias` is null)" error; nullptr passed with the DEFAULT epilogue is no error either. The
    one call that asks for a bias and passes none keeps its FL112, with no condition."""
    found = _findings("--select", "FL110,FL112", HERE / "allocated_pointers.cu")
    lines = (HERE / "allocated_pointers.cu").read_text().splitlines()
    assert [(f["code"], lines[f["related"][-1]["line"] - 1].split("// ")[-1]) for f in found] == \
        [("FL112", "error: a bias epilogue, no bias")]
    assert "(when" not in found[0]["message"]
    rc, out, err = run_cli("facts", HERE / "allocated_pointers.cu")
    matmuls = [c for c in json.loads(out) if c["kind"] == "matmul"]
    assert rc == 0 and len(matmuls) == 5 and not any(c.get("when") for c in matmuls)


def test_optional_fields_of_a_config_struct_are_followed():
    """optional_config.cpp (a GemmConfig with std::optional fields, passed by const reference):
    has_value(), value(), operator bool, *opt and value_or() read what main() assigned, a copy keeps
    it and reset() empties it; the two configurations that are wrong are the two errors, at the calls
    that made them."""
    path = HERE / "optional_config.cpp"
    found = _findings("--no-system-headers", path)
    lines = path.read_text().splitlines()
    assert sorted((f["code"], lines[f["related"][-1]["line"] - 1].split("// ")[-1]) for f in found) == [
        ("FL107", "error: FAST_ACCUM on an FP32 GEMM (FL107)"),
        ("FL112", "error: a bias epilogue, no bias (FL112)")]
    rc, out, err = run_cli("facts", "--no-system-headers", path)
    matmuls = [c for c in json.loads(out) if c["kind"] == "matmul"]
    first = matmuls[0]["parameters"]["matmul_desc"]
    assert rc == 0 and len(matmuls) == 5 and not any(c.get("when") for c in matmuls)
    assert (first["TRANSA"]["name"], first["EPILOGUE"]["name"], first["BIAS_POINTER"]["source"]) == \
        ("CUBLAS_OP_T", "CUBLASLT_EPILOGUE_BIAS", "set")


def test_a_descriptor_class_held_by_a_gemm_object_resolves():
    """descriptor_class.cpp (PyTorch's CuBlasLtMatmulDescriptor style): the descriptor member built by
    a member initializer, its unique_ptr set in the constructor, attributes set through a templated
    member in configure() and the matmul in run(): each GEMM object's configuration resolves, and the
    one that sets FAST_ACCUM on FP32 gets FL107, the other nothing."""
    path = HERE / "descriptor_class.cpp"
    found = _findings("--no-system-headers", path)
    lines = path.read_text().splitlines()
    assert [(f["code"], lines[f["related"][-1]["line"] - 1].split("// ")[-1]) for f in found] == \
        [("FL107", "error: FAST_ACCUM on an FP32 GEMM (FL107)")]
    rc, out, err = run_cli("facts", "--no-system-headers", path)
    matmuls = [c for c in json.loads(out) if c["kind"] == "matmul"]
    assert rc == 0 and len(matmuls) == 2 and not any(c["unknowns"] for c in matmuls)
    assert {c["parameters"]["matmul_desc"]["TRANSA"]["name"] for c in matmuls} == {"CUBLAS_OP_T"}


def test_a_header_checked_on_its_own_makes_no_error_of_a_condition_on_its_callers_values():
    """header_helper/: gemm_ex.h checked on its own runs gemm_ex() without callers; the configuration
    "DEFAULT epilogue with a bias pointer", which cuBLASLt rejects, needs two of its inputs to take
    values no call passes: an undecided check that says the condition (-v), not an error. What is
    wrong whatever the inputs (fast_fp32: FAST_ACCUM on FP32) stays an error in the header, and
    main.cu's call that asks for a bias and passes none keeps its FL112."""
    folder = HERE / "header_helper"
    found = _findings("--no-system-headers", folder)
    assert sorted((Path(f["path"]).name, f["code"]) for f in found) == [("gemm_ex.h", "FL107"), ("main.cu", "FL112")]
    assert not any("(when" in f["message"] for f in found)
    rc, out, err = run_cli("-v", "--no-cache", "--no-system-headers", folder / "gemm_ex.h")
    undecided = [line for line in err.splitlines() if "undecided: FL127" in line]
    assert rc == 1 and len(undecided) == 1 and "only when `epilogue != CUBLASLT_EPILOGUE_DEFAULT` is false" in undecided[0]
    assert "the header has no callers" in undecided[0]


def test_a_condition_on_an_entry_points_inputs_makes_no_error_and_one_on_template_parameters_does():
    """entry_point_inputs.cpp: gemm_ex() has no caller here, and "DEFAULT epilogue with a bias pointer"
    needs two of its inputs to take values no call passes: FL002 (off by default: an undecided check
    stating the condition). template_conditions.cu: conditions on `std::is_same<T, __half>` (through
    a constexpr local), `sizeof(T)` and a non-type parameter N are decided by the instantiation: their
    errors stay errors, saying when."""
    assert _on_inputs(HERE / "entry_point_inputs.cpp") == [
        ("FL127", 20, "`epilogue != CUBLASLT_EPILOGUE_DEFAULT` is false (line 11) and `bias` is non-null (line 13)")]
    rc, out, err = run_cli("-v", "--no-cache", HERE / "entry_point_inputs.cpp")
    assert rc == 0 and "undecided: FL127 (cublaslt-unsupported-configuration): only when `epilogue != " \
                       "CUBLASLT_EPILOGUE_DEFAULT` is false (line 11) and `bias` is non-null (line 13)" in err
    found = _findings(HERE / "template_conditions.cu")
    assert [(f["code"], f["severity"], f["line"], f["message"][f["message"].index("(when"):]) for f in found] == [
        ("FL105", "error", 18, "(when `sizeof(T) == 2` is false (line 15) and `N>2` is true (line 16); or when "
                               "`sizeof(T) == 2` is true (line 15) and `N>2` is false (line 16))"),
        ("FL127", "error", 25, "(when `kHalf` is false (line 14) and `sizeof(T) == 2` is true (line 15) and "
                               "`N>2` is true (line 16))")]


def test_objects_returned_by_value_and_called_where_they_are_made_keep_their_descriptor():
    """returned_objects.cpp (XLA's style): a factory returns the descriptor object by value, or in a
    status-or-value struct built by `return {status, std::move(desc)};`; the plan runs in a call
    tested where it is made (`if (!RunPlan(...).ok())`). Before, that call never ran (no matmul at
    all) and std::move() made the moved object unknown (its descriptor did not resolve)."""
    path = HERE / "returned_objects.cpp"
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    got = [(c["kind"], c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"], c["via"][0]["line"], c["unknowns"])
           for c in json.loads(out)]
    assert got == [("matmul", "CUBLAS_COMPUTE_32F", 56, []), ("matmul", "CUBLAS_COMPUTE_64F", 58, [])]
    found = _findings(path)
    assert [(f["code"], f["line"], [r["line"] for r in f["related"] if r["message"].startswith("via ")])
            for f in found] == [("FL127", 45, [58])]


def test_an_object_that_owns_its_descriptor_resolves_however_it_is_held():
    """object_holders.cpp: a GEMM object owning its descriptor, held by value, by reference, through a
    raw pointer, `new`, std::make_unique, std::make_shared and a unique_ptr assigned later: every
    matmul gets its object's descriptor (before, every one behind a pointer did not resolve), and the
    five that set FAST_ACCUM on FP32 are the FL107, reached through their run() calls."""
    path = HERE / "object_holders.cpp"
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    got = [(c["via"][0]["line"], c["parameters"]["matmul_desc"]["FAST_ACCUM"]["value"], c["unknowns"])
           for c in json.loads(out)]
    assert got == [(50, 1, []), (53, 0, []), (56, 1, []), (59, 1, []), (62, 1, []), (65, 0, []), (69, 1, [])]
    (found,) = _findings(path)
    assert (found["code"], found["line"]) == ("FL107", 32)
    assert [r["line"] for r in found["related"] if r["message"].startswith("via ")] == [50, 56, 59, 62, 69]


def test_a_fluent_builder_on_a_temporary_keeps_its_members():
    """fluent_builder.cpp: `DescBuilder(...).transa(...).fast_accum(1).build()`: the temporary the chain
    starts from is built with its constructor and default member initializers and every setter returns
    it (`return *this;`); before, its members were unknown ("member compute_ not set on this path") and
    the GEMM split into two alternatives."""
    path = HERE / "fluent_builder.cpp"
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    got = [(c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"], c["parameters"]["matmul_desc"]["EPILOGUE"]["name"],
            c["parameters"]["matmul_desc"]["FAST_ACCUM"]["value"], c["unknowns"]) for c in json.loads(out)]
    assert got == [("CUBLAS_COMPUTE_32F", "CUBLASLT_EPILOGUE_DEFAULT", 1, []),
                   ("CUBLAS_COMPUTE_32F", "CUBLASLT_EPILOGUE_RELU", 0, [])]
    assert [(f["code"], f["severity"]) for f in _findings(path)] == [("FL107", "error")]


def test_a_table_of_configurations_run_by_a_loop_is_checked_row_by_row():
    """config_table.cpp: a static array of config structs, run by `for (const Cfg &c : kConfigs)` and by
    `for (int i = 0; i < 3; ++i) gemm(kConfigs[i])`: a loop whose every iteration is known (at most 16)
    runs each of them, and a global table's rows are read from its initializer. Before, the loop ran
    once with its values unknown ("member compute not set on this path") and the bad row was missed."""
    path = HERE / "config_table.cpp"
    rc, out, err = run_cli("facts", path)
    assert rc == 0, err
    got = [(c["via"][0]["line"], c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"], c["conditional"],
            c["unknowns"]) for c in json.loads(out)]
    rows = ["CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_32F"]
    assert got == [(22, r, False, []) for r in rows] + [(23, r, False, []) for r in rows]
    found = _findings(path)
    assert [(f["code"], f["line"], [r["line"] for r in f["related"] if r["message"].startswith("via ")])
            for f in found] == [("FL105", 16, [22, 23])]  # at the row that holds the bad value
