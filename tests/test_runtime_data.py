"""Run-time data: a value that stays unknown says when it is run-time data, and which
(fixtures/interprocedural/entry_point: linear.cu defines linear_forward, an entry point nothing in
the project calls, whose sizes come from a tensor, and linear_gemm, which bench.cpp calls)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import FIXTURES

PROJECT = FIXTURES / "interprocedural" / "entry_point"
ENTRY = "input of linear_forward(), which no file of the project calls"


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    dest = tmp_path / "proj"
    shutil.copytree(PROJECT, dest)
    return dest


def _configs(proj: Path, *extra) -> dict[str, dict]:
    rc, out, err = run_cli("facts", *extra, proj / "linear.cu")
    assert rc == 0, err
    return {c["function"]: c for c in json.loads(out) if c["kind"] == "matmul"}


def _index(proj: Path) -> None:
    rc, out, err = run_cli("index", "-p", proj / "compile_commands.json", "-j", "2")
    assert rc == 0, err


def test_without_the_index_only_what_a_library_call_returned_is_run_time_data(proj):
    forward = _configs(proj)["linear_forward"]["parameters"]
    # device_info()->sm_count - 8: a field of what a function without a body here returned
    sms = forward["matmul_desc"]["SM_COUNT_TARGET"]
    assert sms["unknown"] == "member sm_count not set on this path"
    assert sms["runtime"] == "`device_info()->sm_count`"
    # a parameter of a function no function of this file calls, and what is computed from one (the
    # tensor's size()): without the index nobody knows who calls it, maybe with constants
    transa, batch = forward["matmul_desc"]["TRANSA"], forward["layout_B"]["COLS"]
    assert transa["unknown"].endswith("its value comes from the caller") and "runtime" not in transa
    assert batch["unknown"] == "result of `input.size(0)`" and "runtime" not in batch
    # the state of the object a method is called on (FasterTransformer's wrapper: a setter chose it)
    a_type = _configs(proj)["LtWrapper::gemm"]["parameters"]["layout_A"]["TYPE"]
    assert a_type["unknown"] == ("this->a_type_ comes from the caller (the state of the LtWrapper object gemm() "
                                 "is called on, set by the methods that ran before)")
    assert "runtime" not in a_type and a_type["origin"]["line"] == 54
    # a field of a struct a library call returned, handed on by reference twice (TransformerEngine's
    # is_fp8_dtype(A.type) on the `A` bound to `*inputA`)
    described = _configs(proj)["described_gemm"]["parameters"]["layout_A"]["TYPE"]
    assert described["runtime"] == "`type` of what `gemm_input()` points to"


def test_with_the_index_an_entry_points_parameters_and_what_they_decide_are_run_time_input(proj):
    _index(proj)
    configs = _configs(proj)
    forward = configs["linear_forward"]["parameters"]
    assert forward["matmul_desc"]["TRANSA"]["runtime"] == f"`transpose`, {ENTRY}"
    assert forward["layout_B"]["COLS"]["runtime"] == "`input.size(0)`"  # batch, of the entry's tensor
    assert forward["layout_A"]["ROWS"]["runtime"] == "`input.size(1)`"  # in_features
    assert forward["layout_A"]["COLS"]["runtime"] == f"`out_features`, {ENTRY}"
    # set in a loop over the layers: whether it runs is decided by the loop's condition
    bias = forward["matmul_desc"]["BIAS_POINTER"]
    assert bias["unknown"] == "set conditionally at line 35"
    assert bias["runtime"] == f"the condition `layer<layers` at line 33, on `layers`, {ENTRY}"
    # the helper bench.cpp calls gets that call's values: nothing unknown there
    gemm = configs["linear_gemm"]
    assert gemm["via"][0]["caller"] == "main" and gemm["unknowns"] == []
    assert gemm["parameters"]["layout_A"]["ROWS"]["value"] == 256
    # no file calls LtWrapper::gemm either: its object's state is input from outside the project
    wrapper = configs["LtWrapper::gemm"]["parameters"]
    assert wrapper["layout_A"]["TYPE"]["runtime"] == \
        "`this->a_type_`, input of LtWrapper::gemm(), which no file of the project calls"
    assert wrapper["layout_A"]["ROWS"]["runtime"] == \
        "`m`, input of LtWrapper::gemm(), which no file of the project calls"


def test_check_v_names_the_run_time_data_an_undecided_check_waits_for(proj):
    _index(proj)
    rc, out, err = run_cli("check", "-v", proj / "linear.cu")
    assert rc == 0, err
    undecided = [line for line in err.splitlines() if "undecided: FL125" in line]
    assert len(undecided) == 2, err  # linear_forward's matmul (line 46) and LtWrapper::gemm's (line 58)
    assert "linear.cu:58:3: undecided: FL125" in undecided[1]
    undecided = [line for line in undecided if "linear.cu:46:10:" in line]
    assert "layout_B.COLS: result of `input.size(0)` (run-time data: `input.size(0)`)" in undecided[0]
    assert f"matmul_desc.TRANSA: transpose is a parameter of linear_forward(); its value comes from the caller " \
           f"(run-time data: `transpose`, {ENTRY})" in undecided[0]


def test_a_call_too_deep_to_follow_is_a_function_of_its_run_time_inputs_and_an_address_is_not_null(proj):
    """grouped.cu, TransformerEngine's grouped GEMM: entry point -> lambda -> loop -> gemm_v2(void *config)
    -> run_gemm -> canonicalize -> helpers about the tensor, seven calls deep."""
    _index(proj)
    rc, out, err = run_cli("facts", proj / "grouped.cu")
    assert rc == 0, err
    configs = [c for c in json.loads(out) if c["kind"] == "matmul"]
    # `config != nullptr` on the address of the caller's settings is true: no alternative where it is
    # null (which would run with the default sm_count 0 and no bias: configurations no run makes)
    assert len(configs) == 4, [c["when"] for c in configs]
    assert all("`config`" not in w for c in configs for w in c["when"])
    assert {c["parameters"]["matmul_desc"]["SM_COUNT_TARGET"]["value"] for c in configs} == {100}
    # storage_type(A), a call past the depth the run follows: like a call of a function without a
    # body here, its result is computed from its argument, the tensor the library call returned
    a_type = configs[0]["parameters"]["layout_A"]["TYPE"]
    assert a_type["unknown"] == "call depth limit at storage_type()"
    assert a_type["runtime"] == "`storage_type(A)`, from what `convert_tensor(A)` points to"
