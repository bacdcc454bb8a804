"""Issue 19: values that come from callers — call-site contexts inside a translation unit (and,
with the project index, from other translation units), each finding naming the call chain."""
from __future__ import annotations

import json

from cli_helpers import run_cli
from conftest import FIXTURES

HERE = FIXTURES / "interprocedural"


def _findings(*argv) -> list[dict]:
    rc, out, err = run_cli("--no-cache", "--output-format", "json", *argv)
    assert rc in (0, 1), err
    return json.loads(out)


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
