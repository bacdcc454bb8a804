"""The measured cuBLASLt support table: the sweep's plan and table format, the
three-valued check, the nearest-supported suggestion, FL127 on real parsed programs, table
selection, and `fusionlint calibrate` without a GPU.

No GPU here, so the tables are built by the sweep's own code (``runner.sweep``) from a *toy
library* — a Python stand-in for the driver with known verdicts — over a reduced space. The
table measured on the H200 is a file of the same format.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fusionlint.evidence.sweep import runner, space, stages
from fusionlint.run.support_select import choose, header_version
from fusionlint.model.support_table import OK, SupportTable, TableError

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = ROOT / "fixtures" / "cublaslt" / "support"

TOY_DOMAINS = {**space.DOMAINS,
               "a_type": ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_8F_E4M3"],
               "b_type": ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_8F_E4M3"],
               "c_type": ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_8F_E4M3"],
               "d_type": ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_8F_E4M3"],
               "compute_type": ["CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_64F"],
               "scale_type": ["CUDA_R_16F", "CUDA_R_32F", "CUDA_R_64F"]}
TOY_TYPES = {  # (A, B, C=D, compute, scale) the toy library accepts
    ("CUDA_R_16F", "CUDA_R_16F", "CUDA_R_16F", "CUBLAS_COMPUTE_16F", "CUDA_R_16F"),
    ("CUDA_R_16F", "CUDA_R_16F", "CUDA_R_16F", "CUBLAS_COMPUTE_32F", "CUDA_R_32F"),
    ("CUDA_R_16F", "CUDA_R_16F", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", "CUDA_R_32F"),
    ("CUDA_R_16BF", "CUDA_R_16BF", "CUDA_R_16BF", "CUBLAS_COMPUTE_32F", "CUDA_R_32F"),
    ("CUDA_R_16BF", "CUDA_R_16BF", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", "CUDA_R_32F"),
    ("CUDA_R_32F", "CUDA_R_32F", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", "CUDA_R_32F"),
    ("CUDA_R_64F", "CUDA_R_64F", "CUDA_R_64F", "CUBLAS_COMPUTE_64F", "CUDA_R_64F"),
}
NAMES = {f: {space.ENUM_VALUES[v] if isinstance(v, str) and v in space.ENUM_VALUES else (-1 if v == space.NOT_SET else int(v)): v
             for v in dom} for f, dom in space.DOMAINS.items()}


def decode(line: str) -> dict:
    return {f: NAMES[f][int(x)] for f, x in zip(space.FIELD_NAMES, line.split())}


def toy_library(cfg: dict) -> str:
    """The verdicts of a made-up cuBLASLt, in the driver's words, with interactions inside stages."""
    key = (cfg["a_type"], cfg["b_type"], cfg["c_type"], cfg["compute_type"], cfg["scale_type"])
    if key not in TOY_TYPES or cfg["c_type"] != cfg["d_type"]:
        return "cublasLtMatmulAlgoGetHeuristic -> CUBLAS_STATUS_NOT_SUPPORTED"
    ep = cfg["epilogue"]
    if ep == "CUBLASLT_EPILOGUE_GELU" and cfg["transb"] != "CUBLAS_OP_N":
        return "cublasLtMatmulAlgoGetHeuristic -> CUBLAS_STATUS_NOT_SUPPORTED"
    if ep in space.BIAS_EPILOGUES and cfg["order_d"] == "CUBLASLT_ORDER_ROW":
        return "cublasLtMatmulAlgoGetHeuristic -> CUBLAS_STATUS_NOT_SUPPORTED"
    if cfg["a_scale_mode"] not in (space.NOT_SET, "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F"):
        return "cublasLtMatmulAlgoGetHeuristic -> CUBLAS_STATUS_NOT_SUPPORTED"
    if ep in space.BIAS_EPILOGUES and not cfg["bias_pointer"]:
        return "cublasLtMatmul -> CUBLAS_STATUS_INVALID_VALUE"
    if ep in space.AUX_EPILOGUES and not (cfg["aux_pointer"] and cfg["aux_ld"]):
        return "cublasLtMatmul -> CUBLAS_STATUS_INVALID_VALUE"
    return OK


def toy_measure(lines: list[str]) -> list[str]:
    return [toy_library(decode(ln)) for ln in lines]


@pytest.fixture(scope="module")
def toy_table(tmp_path_factory) -> Path:
    table = runner.sweep(toy_measure, TOY_DOMAINS, log=lambda m: None)
    table["machine"] = {"gpu": "toy library", "compute_capability": "9.0"}
    table["cublaslt_version"] = 130100
    path = tmp_path_factory.mktemp("support") / "cublaslt-13.1.0-toy.json.gz"
    runner.write_table(table, path)
    return path


def lint(path: Path, table: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fusionlint.cli", "--no-cache", "--output-format", "json",
                           "--support-table", str(table), *extra, str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def findings(path: Path, table: Path) -> list[dict]:
    r = lint(path, table)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


# ---- the space and the table format ------------------------------------------------------------

def test_enum_values_are_cublaslt_h_values() -> None:
    """Every name the sweep sends to the driver has the integer cublasLt.h gives it (API model)."""
    from fusionlint.model.cublaslt_api import load_model

    model = load_model()
    values = {}
    for enum in ("cudaDataType_t", "cublasComputeType_t", "cublasOperation_t", "cublasLtOrder_t", "cublasLtEpilogue_t",
                 "cublasLtMatmulMatrixScale_t", "cublasLtPointerMode_t"):
        values.update(model.enum(enum).values)
    for name, value in space.ENUM_VALUES.items():
        assert values[name] == value, name
    for name, number in runner.DESC_ATTRIBUTES.items():
        assert model.attribute(f"CUBLASLT_MATMUL_DESC_{number}").value == name


def test_driver_reads_the_fields_in_the_spaces_order() -> None:
    text = runner.driver_source().read_text()
    enum = text[text.index("enum Field {") + len("enum Field {"):text.index("NFIELDS")]
    driver_fields = [w.strip() for w in enum.split(",") if w.strip()]
    spelled = {"compute_type": "COMPUTE", "scale_type": "SCALE", "bias_data_type": "BIAS_TYPE",
               "aux_data_type": "AUX_TYPE"}
    assert driver_fields == [spelled.get(f, f.upper()) for f in space.FIELD_NAMES]


def test_table_round_trip_and_verdicts(toy_table: Path) -> None:
    t = SupportTable.load(toy_table)
    assert t.description == "cuBLASLt 13.1.0 on toy library (measured)"
    base = {"a_type": "CUDA_R_16BF", "b_type": "CUDA_R_16BF", "c_type": "CUDA_R_16BF", "d_type": "CUDA_R_16BF",
            "compute_type": "CUBLAS_COMPUTE_32F", "scale_type": "CUDA_R_32F"}
    assert t.verdict(base).supported is True
    v = t.verdict({**base, "d_type": "CUDA_R_16F", "c_type": "CUDA_R_16F"})
    assert (v.supported, v.stage, v.failure) == (False, "types",
                                                 "cublasLtMatmulAlgoGetHeuristic -> CUBLAS_STATUS_NOT_SUPPORTED")
    v = t.verdict({**base, "epilogue": "CUBLASLT_EPILOGUE_BIAS"})  # no bias pointer
    assert (v.supported, v.stage, v.failure) == (False, "epilogue_pointers",
                                                 "cublasLtMatmul -> CUBLAS_STATUS_INVALID_VALUE")
    assert t.verdict({**base, "epilogue": "CUBLASLT_EPILOGUE_BIAS", "bias_pointer": True}).supported is True
    v = t.verdict({**base, "epilogue": "CUBLASLT_EPILOGUE_GELU", "transb": "CUBLAS_OP_T"})
    assert (v.supported, v.stage) == (False, "epilogue")
    # a value outside the measured space: no verdict
    assert t.verdict({**base, "order_a": "CUBLASLT_ORDER_COL32"}).supported is None


def test_unknown_fields_are_three_valued(toy_table: Path) -> None:
    t = SupportTable.load(toy_table)
    cands = t.candidates({"a_type": "CUDA_R_16BF", "b_type": "CUDA_R_16BF", "c_type": None, "d_type": None,
                          "compute_type": "CUBLAS_COMPUTE_32F", "scale_type": "CUDA_R_32F"})
    assert t.check(cands).supported is True  # D BF16 or FP32 would do
    cands = t.candidates({"a_type": None, "b_type": "CUDA_R_64F", "c_type": "CUDA_R_16F", "d_type": "CUDA_R_16F",
                          "compute_type": "CUBLAS_COMPUTE_16F", "scale_type": "CUDA_R_16F"})
    assert t.check(cands).supported is False  # no A type helps
    # an unknown epilogue: some epilogue works without pointers
    cands = t.candidates({"a_type": "CUDA_R_16F", "b_type": "CUDA_R_16F", "c_type": "CUDA_R_16F",
                          "d_type": "CUDA_R_16F", "compute_type": "CUBLAS_COMPUTE_16F", "scale_type": "CUDA_R_16F",
                          "epilogue": None})
    assert t.check(cands).supported is True


def test_nearest_supported_changes_fewest_fields(toy_table: Path) -> None:
    t = SupportTable.load(toy_table)
    cfg = {"a_type": "CUDA_R_16BF", "b_type": "CUDA_R_16BF", "c_type": "CUDA_R_32F", "d_type": "CUDA_R_16F",
           "compute_type": "CUBLAS_COMPUTE_32F", "scale_type": "CUDA_R_32F"}
    near = dict(t.nearest(t.candidates(cfg)))
    assert near == {"d_type": ["CUDA_R_32F"]}  # one field suffices; C is already FP32
    cfg["c_type"] = "CUDA_R_16F"
    near = dict(t.nearest(t.candidates(cfg)))  # BF16 in, FP16 out: two fields (C and D) or the inputs
    assert near["c_type+d_type"] == [("CUDA_R_16BF", "CUDA_R_16BF"), ("CUDA_R_32F", "CUDA_R_32F")]
    assert near["a_type+b_type"] == [("CUDA_R_16F", "CUDA_R_16F")]


def test_a_table_that_cannot_be_read_is_one_line(tmp_path: Path, toy_table: Path) -> None:
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'{"format": "something else"}'))
    with pytest.raises(TableError, match="not a cuBLASLt support table"):
        SupportTable.load(bad)
    r = lint(SUPPORT / "bf16_in_fp16_out.cpp", bad)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and "support table" in r.stderr


# ---- the joint-space check of the factorisation -----------------------------------------------

def test_joint_check_agrees_where_the_stages_are_independent(toy_table: Path) -> None:
    t = SupportTable.load(toy_table)
    rec = runner.joint_check(toy_measure, t, 400, seed=3)
    assert rec["count"] == 400 and rec["accuracy"] == 1.0, rec["disagreements"][:3]
    assert set(runner.JOINT_KINDS) == set(rec["by_kind"])
    assert rec["by_kind"]["predicted to work"]["measured_works"] == 100
    assert 0 < rec["by_kind"]["one field changed"]["measured_works"] < 100


def test_joint_check_finds_an_interaction_the_stages_miss(toy_table: Path) -> None:
    """A library whose verdict depends on fields of two stages at once (A_SCALE_POINTER with a
    bias epilogue): the factorised table cannot know it, and the joint check must say so."""
    t = SupportTable.load(toy_table)

    def coupled(lines: list[str]) -> list[str]:
        out = []
        for ln in lines:
            cfg = decode(ln)
            verdict = toy_library(cfg)
            if verdict == OK and cfg["a_scale_pointer"] and cfg["epilogue"] in space.BIAS_EPILOGUES:
                verdict = "cublasLtMatmulAlgoGetHeuristic -> CUBLAS_STATUS_NOT_SUPPORTED"
            out.append(verdict)
        return out

    rec = runner.joint_check(coupled, t, 400, seed=3)
    assert rec["accuracy"] < 1.0
    assert all(d["measured"] != OK and d["predicted"] == OK for d in rec["disagreements"])


# ---- FL127 on parsed programs ------------------------------------------------------------------

def test_fl127_names_the_failing_call_and_the_nearest_supported(toy_table: Path) -> None:
    got = [f for f in findings(SUPPORT / "bf16_in_fp16_out.cpp", toy_table) if f["code"] == "FL127"]
    assert len(got) == 1
    f = got[0]
    assert f["line"] == 24  # the heuristic query, where cuBLASLt rejects it
    assert "C type CUDA_R_16F, D type CUDA_R_16F" in f["message"]
    assert "cublasLtMatmulAlgoGetHeuristic -> CUBLAS_STATUS_NOT_SUPPORTED" in f["message"]
    assert "toy library" in f["message"]
    assert "C type + D type -> (CUDA_R_16BF, CUDA_R_16BF) | (CUDA_R_32F, CUDA_R_32F)" in f["fix"]


def test_fl127_silent_when_some_completion_of_an_unknown_value_works(toy_table: Path) -> None:
    assert [f for f in findings(SUPPORT / "d_type_from_caller.cpp", toy_table) if f["code"] == "FL127"] == []


def test_fl127_reports_when_no_completion_works(toy_table: Path) -> None:
    got = [f for f in findings(SUPPORT / "no_completion_supported.cpp", toy_table) if f["code"] == "FL127"]
    assert len(got) == 1
    assert "A type unknown" in got[0]["message"] and "whatever the A type" in got[0]["message"]


def test_fl127_checks_stages_through_macros(toy_table: Path) -> None:
    got = [f for f in findings(SUPPORT / "gelu_macro_style.cpp", toy_table) if f["code"] == "FL127"]
    assert len(got) == 1
    assert "epilogue CUBLASLT_EPILOGUE_GELU" in got[0]["message"] and "TRANSB CUBLAS_OP_T" in got[0]["message"]
    assert "TRANSB -> CUBLAS_OP_N" in got[0]["fix"]


def test_fl127_stays_quiet_where_a_rule_explains_the_error(toy_table: Path) -> None:
    got = findings(SUPPORT / "bias_epilogue_row_d.cpp", toy_table)
    assert [f["code"] for f in got] == ["FL115"]  # the toy table rejects it too, but FL115 says it better


def test_fl127_off_with_support_table_none(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "--no-cache", "-v", "--support-table", "none",
                        str(SUPPORT / "bf16_in_fp16_out.cpp")], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stdout
    assert "FL127 checks nothing" in r.stderr


def test_fl127_uses_the_bundled_h200_table_by_default(tmp_path: Path) -> None:
    """No table given, none calibrated: the H200 table in rulesets/ (cuBLASLt 13.1 = the stand-ins'
    version) is used, and BF16 inputs with an FP16 D — which cuBLASLt 13.1 rejects on the H200 —
    are reported with the supported alternatives the sweep measured."""
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "--no-cache", "-v", "--no-system-headers",
                        str(SUPPORT / "bf16_in_fp16_out.cpp")], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cublaslt-13.1.0-nvidia-h200.json.gz" in r.stderr
    assert "[FL127]" in r.stdout and "cuBLASLt 13.1.0 on NVIDIA H200 (measured)" in r.stdout
    assert "CUBLAS_STATUS_NOT_SUPPORTED" in r.stdout and "(CUDA_R_16BF, CUDA_R_16BF)" in r.stdout


def test_reference_kernels_and_passing_fixtures_are_clean_against_the_toy_table(toy_table: Path) -> None:
    """The toy library accepts the BF16/FP16 reference kernels; FL127 must not flag them."""
    for name in ("bf16_tn.cpp", "fp16_tn.cpp", "bf16_tn_bias.cpp", "bf16_tn_gelu_aux.cpp"):
        codes = [f["code"] for f in findings(ROOT / "kernels_ref" / "cublaslt" / name, toy_table)]
        assert codes == [], (name, codes)


# ---- choosing a table ----------------------------------------------------------------------------

def test_table_choice_exact_fallback_none(tmp_path: Path, toy_table: Path) -> None:
    other = tmp_path / "cublaslt-12.9.1-toy.json.gz"
    data = json.loads(gzip.decompress(toy_table.read_bytes()))
    data["cublaslt_version"] = 120901
    other.write_bytes(gzip.compress(json.dumps(data).encode()))
    tables = [str(toy_table), str(other)]
    assert choose(None, 130100, "here", tables).path == str(toy_table)
    assert choose(None, 130100, "here", tables).note == ""
    c = choose(None, 120900, "/usr/local/cuda/include/cublas_api.h", tables)
    assert c.path == str(other) and c.note == ""  # 12.9.x matches 12.9.1
    c = choose(None, 120800, "/opt/cuda/include/cublas_api.h", tables)
    assert c.path == str(other) and "cuBLASLt 12.8.0" in c.note and "12.9.1" in c.note
    assert choose(None, 130100, "here", []).path is None
    assert choose("x.json.gz", 130100, "here", []).path == "x.json.gz"


def test_header_version_reads_cublas_api_h(tmp_path: Path) -> None:
    (tmp_path / "cublas_api.h").write_text("#define CUBLAS_VER_MAJOR 12\n#define CUBLAS_VER_MINOR 9\n"
                                           "#define CUBLAS_VER_PATCH 1\n")
    assert header_version([str(tmp_path)], use_system=False) == (120901, str(tmp_path / "cublas_api.h"))
    assert header_version([], use_system=False)[0] == 130100  # the stand-ins model 13.1


def test_check_uses_a_calibrated_table_from_the_user_directory(tmp_path: Path, toy_table: Path) -> None:
    tables = tmp_path / "fusionlint" / "support"
    tables.mkdir(parents=True)
    (tables / toy_table.name).write_bytes(toy_table.read_bytes())
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "--no-cache", "--no-system-headers",
                        "--output-format", "json", str(SUPPORT / "bf16_in_fp16_out.cpp")],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert [f["code"] for f in json.loads(r.stdout)] == ["FL127"], r.stderr


# ---- calibrate ---------------------------------------------------------------------------------------

def test_calibrate_without_a_gpu_is_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ.get('PATH', '')}")
    (tmp_path / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed: no devices' >&2\nexit 9\n")
    (tmp_path / "nvidia-smi").chmod(0o755)
    (tmp_path / "nvcc").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "nvcc").chmod(0o755)
    r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "calibrate"], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=60)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fusionlint: error: calibrate needs an NVIDIA GPU")


# ---- the rules held against a table (tools/rules_vs_table.py) --------------------------------------

def _rules_vs_table():
    import importlib.util

    spec = importlib.util.spec_from_file_location("rules_vs_table", ROOT / "tools" / "rules_vs_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rules_vs_table_lists_rules_that_flag_what_the_table_accepts(toy_table: Path) -> None:
    """The toy library accepts FAST_ACCUM on FP16 (the real one does not: FL107's evidence); the
    tool must name FL107 with such a configuration, and must not name FL105 (the toy's type
    combinations all pair compute and scale type as cuBLASLt's table does)."""
    from fusionlint.rules.loader import load_rules

    tool = _rules_vs_table()
    table = SupportTable.load(toy_table)
    found = tool.contradictions(table, load_rules())
    assert "FL107" in found and any(cfg["fast_accum"] == 1 for _, cfg in found["FL107"])
    assert "FL105" not in found and "FL102" not in found
    missed = tool.gaps(table, load_rules())
    assert missed["epilogue"] > 0  # GELU with a transposed B: only FL127 knows
    assert tool.main([str(toy_table)]) == 1


def test_sweep_cut_short_resumes_from_its_checkpoint(tmp_path):
    """A sweep stopped by its time limit keeps what it measured; run again it measures only the
    rest and builds the same table as one uninterrupted run."""
    whole = runner.sweep(toy_measure, TOY_DOMAINS, log=lambda m: None)
    asked: list[int] = []

    def counting(lines: list[str]) -> list[str]:
        asked.append(len(lines))
        return toy_measure(lines)

    path = tmp_path / "checkpoint.json.gz"
    cut = runner.Checkpoint(path, deadline=0.0 + 1e18, block=7)
    calls = 0

    def stop_after_three_blocks(lines: list[str]) -> list[str]:
        nonlocal calls
        calls += 1
        if calls == 3:
            cut.deadline = 0.0  # the clock has run out after this block
        return counting(lines)

    with pytest.raises(runner.TimeLimit, match="--resume"):
        runner.sweep(cut.wrap(stop_after_three_blocks), TOY_DOMAINS, log=lambda m: None)
    first = sum(asked)
    assert first == 3 * 7 and path.exists()
    asked.clear()
    resumed = runner.sweep(runner.Checkpoint(path).wrap(counting), TOY_DOMAINS, log=lambda m: None)
    assert resumed == whole
    assert first + sum(asked) == sum(len(r) for r in [whole["types"]["rows"]]) + sum(
        len(rows) for st in whole["stages"] for rows in st["rows"].values())


BUNDLED = ROOT / "rulesets" / "hopper-sm90" / "support" / "cublaslt-13.1.0-nvidia-h200.json.gz"


def test_no_rule_flags_a_configuration_the_h200_table_says_works():
    """Where the measured table contradicts a rule, the table wins. Every working row of
    the bundled H200 table, as the fact view a program setting it would give, through every
    configuration rule: none may report an error (FL104 and FL113 did before)."""
    import importlib.util

    from fusionlint.rules.loader import load_rules

    spec = importlib.util.spec_from_file_location("rules_vs_table", ROOT / "tools" / "rules_vs_table.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    table = SupportTable.load(BUNDLED)
    assert len(table._ok_types) == 213
    found = tool.contradictions(table, load_rules())
    assert found == {}, {rid: cases[:2] for rid, cases in found.items()}


def test_a_row_the_driver_died_on_is_not_a_measured_failure(tmp_path):
    """A killed driver's blame was unreliable (answers lost with the process): such rows never make
    FL127 report, and a resumed sweep measures them again."""
    def dying(lines: list[str]) -> list[str]:
        out = toy_measure(lines)
        return [runner.DIED + " (exit status -6): " if decode(ln)["pointer_mode"] == "CUBLASLT_POINTER_MODE_DEVICE"
                else o for ln, o in zip(lines, out)]

    table = runner.sweep(dying, TOY_DOMAINS, log=lambda m: None)
    path = tmp_path / "t.json.gz"
    runner.write_table(table, path)
    t = SupportTable.load(path)
    bf16 = {"a_type": "CUDA_R_16BF", "b_type": "CUDA_R_16BF", "c_type": "CUDA_R_16BF", "d_type": "CUDA_R_16BF",
            "compute_type": "CUBLAS_COMPUTE_32F", "scale_type": "CUDA_R_32F"}
    assert t.verdict({**t.base, **bf16, "pointer_mode": "CUBLASLT_POINTER_MODE_DEVICE"}).supported is True

    lines = [space.encode({**space.BASE, **bf16, "pointer_mode": pm})
             for pm in ("CUBLASLT_POINTER_MODE_HOST", "CUBLASLT_POINTER_MODE_DEVICE")]
    cp = tmp_path / "cp.json.gz"
    assert runner.Checkpoint(cp).wrap(dying)(lines)[1].startswith(runner.DIED)
    asked: list[str] = []

    def fixed(batch: list[str]) -> list[str]:
        asked.extend(batch)
        return toy_measure(batch)

    got = runner.Checkpoint(cp).wrap(fixed)(lines)
    assert asked == lines[1:] and got == toy_measure(lines)


def test_a_row_measured_at_a_base_another_stage_rejects_decides_nothing(tmp_path: Path) -> None:
    """The sweep measured CUBLASLT_EPILOGUE_BGRADB's bias-pointer rows at the base TRANSB=N, which
    BGRADB itself rejects (the epilogue stage), so every such row failed and FL127 flagged apex's
    gemm_bgradb_lt with TRANSB=T, which works on the H200 (kernels_ref/evidence/h200-bgrad-transposes.txt).
    Such a row now decides nothing; TRANSB=N is still an error (the YAML rule), and the table's
    verdicts on the 8,000 H200 joint-check configurations still agree, but for 3 missed failures."""
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))

    def check(name: str) -> list[dict]:
        r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "--no-cache", "--no-system-headers",
                            "--output-format", "json", str(SUPPORT / name)], capture_output=True, text=True,
                           cwd=ROOT, env=env, timeout=300)
        assert r.returncode in (0, 1), r.stderr
        return json.loads(r.stdout)

    assert check("bgradb_transb_t.cpp") == []
    assert [f["code"] for f in check("bgradb_transb_n.cpp") if f["severity"] == "error"] == ["FL114"]
    table = SupportTable.load(BUNDLED)
    assert table.verdict({"a_type": "CUDA_R_16F", "b_type": "CUDA_R_16F", "c_type": "CUDA_R_16F",
                          "d_type": "CUDA_R_16F", "compute_type": "CUBLAS_COMPUTE_32F", "scale_type": "CUDA_R_32F",
                          "transa": "CUBLAS_OP_N", "transb": "CUBLAS_OP_T", "epilogue": "CUBLASLT_EPILOGUE_BGRADB",
                          "bias_pointer": True}).supported is not False
    agree = total = 0
    for record in ("h200-cublaslt-13.1.0-joint-check.json", "h200-cublaslt-13.1.0-joint-check-seed16.json.gz"):
        raw = (ROOT / "kernels_ref" / "evidence" / record).read_bytes()
        data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        for c in data["configs"]:
            works = c["measured"] == "ok"
            predicted = table.verdict(c["config"]).supported is not False
            assert predicted or not works, c  # never a failure where the H200 measured success
            agree += predicted == works
            total += 1
    assert total == 8000 and agree >= 7997
