"""The seeded random-mutation cuBLASLt set: deterministic generation, every program read
back by fusionlint with every field it sets, and the scoring of findings against a device record."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from fusionlint.evidence import mutations_cublaslt as mut
from fusionlint.evidence.harness import Toolchain

SEED, COUNT = 7, 24


@pytest.fixture(scope="module")
def small_set(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mutations")
    mut.write_set(SEED, COUNT, out)
    return out


def test_generation_is_deterministic(tmp_path):
    a, b = mut.generate(SEED, COUNT), mut.generate(SEED, COUNT)
    assert a == b
    assert [mut.program_text(e) for e in a] == [mut.program_text(e) for e in b]
    assert mut.generate(SEED + 1, COUNT) != a
    # written twice: byte-identical files and manifest
    mut.write_set(SEED, COUNT, tmp_path / "x")
    mut.write_set(SEED, COUNT, tmp_path / "y")
    for f in sorted((tmp_path / "x").iterdir()):
        assert f.read_bytes() == (tmp_path / "y" / f.name).read_bytes(), f.name


def test_mutations_are_one_or_two_real_changes():
    for e in mut.generate(1, 200):
        base = mut.BASES[e["base"]][0]
        assert 1 <= len(e["mutations"]) <= 2
        changed = {k for k in base if base[k] != e["config"][k]}
        assert changed == {m["field"] for m in e["mutations"]}
        for m in e["mutations"]:
            assert m["old"] == base[m["field"]] and m["new"] != m["old"]
            assert m["new"] in mut.FIELDS[m["field"]][0]
        assert e["file"] == f"m{e['index']:04d}_{e['style']}.cpp"


def test_styles_rotate_and_fields_are_all_used():
    entries = mut.generate(1, 640)
    d = mut.distribution(entries)
    assert all(d["styles"][s] >= 0.2 * 640 for s in mut.STYLES)
    assert set(d["fields"]) == set(mut.FIELDS)
    assert set(d["bases"]) == set(mut.BASES)


def test_bases_are_the_reference_kernels():
    names = {p.stem for p in (Path(__file__).resolve().parents[1] / "kernels_ref" / "cublaslt").glob("*.cpp")}
    assert set(mut.BASES) == names
    fp8 = mut.BASES["fp8_e4m3_tn_e4m3_out"][0]
    assert (fp8["c_type"], fp8["d_type"], fp8["amax_d_pointer"]) == ("CUDA_R_16BF", "CUDA_R_8F_E4M3", True)
    # every base is modelled by the host reference (the kernels check D)
    for cfg, consts in mut.BASES.values():
        assert "skip" not in mut.reference(cfg, consts)


def test_reference_skips_what_it_cannot_model():
    cfg, consts = copy.deepcopy(mut.BASES["bf16_tn"])
    assert "skip" not in mut.reference(cfg, consts)
    for field, value in [("epilogue", "CUBLASLT_EPILOGUE_DGELU"), ("scale_type", "CUDA_C_32F"),
                         ("d_type", "CUDA_R_64F"), ("pointer_mode", "CUBLASLT_POINTER_MODE_DEVICE_VECTOR"),
                         ("a_scale_mode", "CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0")]:
        assert "skip" in mut.reference({**cfg, field: value}, consts), field
    fp8, c8 = mut.BASES["fp8_e4m3_tn_e4m3_out"]
    assert mut.reference(fp8, c8)["scale"] == 2.0 * 0.25 * 0.5


def test_every_program_is_read_with_every_field(small_set):
    """The real `fusionlint facts` on each program: exactly one cublasLtMatmul, no parse errors, and
    every attribute, layout field and the preference the program sets known with its value."""
    problems = mut.resolve(small_set / "manifest.json", jobs=2)
    assert len(problems) == COUNT
    assert {f: p for f, p in problems.items() if p} == {}
    manifest = json.loads((small_set / "manifest.json").read_text())
    assert {e["style"] for e in manifest["programs"]} == set(mut.STYLES)


def test_resolve_notices_a_wrong_value(small_set, tmp_path):
    """The check is not vacuous: a manifest that disagrees with the program is reported."""
    manifest = json.loads((small_set / "manifest.json").read_text())
    entry = manifest["programs"][0]
    entry["config"]["transa"] = "CUBLAS_OP_N" if entry["config"]["transa"] == "CUBLAS_OP_T" else "CUBLAS_OP_T"
    for f in small_set.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    problems = mut.resolve(tmp_path / "manifest.json", files=[entry["file"]], jobs=1)
    assert any("TRANSA" in p for p in problems[entry["file"]])


def _outcome(works: bool, build_rc: int = 0) -> dict:
    calls = [{"function": "cublasLtMatmul", "call": "cublasLtMatmul(...)",
              "status": "CUBLAS_STATUS_SUCCESS" if works else "CUBLAS_STATUS_NOT_SUPPORTED"}]
    return {"works": works, "build_rc": build_rc, "run_rc": 0, "calls": calls, "cuda_errors": ["cudaSuccess"],
            "numerics": [{"ok": True, "max_abs_err": 0.0}], "numerics_skipped": ""}


def test_evaluate_counts_recall_and_false_errors(tmp_path):
    entries = mut.generate(3, 6)
    manifest = {"programs": entries}
    names = [e["file"] for e in entries]
    # 0, 1, 2 fail; 3, 4 work; 5 did not build (a generator problem: not scored)
    truth = {"machine": {}, "programs": {
        f"/gpu/box/set/{names[0]}": _outcome(False), f"set/{names[1]}": _outcome(False), names[2]: _outcome(False),
        names[3]: _outcome(True), names[4]: _outcome(True), names[5]: _outcome(False, build_rc=1)}}
    findings = [
        {"path": f"set/{names[0]}", "line": 30, "severity": "error", "code": "FL105", "message": "pairing"},
        {"path": f"set/{names[0]}", "line": 31, "severity": "error", "code": "FL106", "message": "c/d"},
        {"path": f"set/{names[1]}", "line": 3, "severity": "warning", "code": "FL001", "message": "unused"},
        {"path": f"set/{names[3]}", "line": 40, "severity": "error", "code": "FL113", "message": "bias type"},
    ]
    s = mut.evaluate(manifest, truth, findings)
    assert (s["scored"], s["failing"], s["working"], s["caught"]) == (5, 3, 2, 1)
    assert s["recall"] == pytest.approx(1 / 3)
    assert s["not_built"] == [names[5]] and s["not_run"] == []
    assert [fe["file"] for fe in s["false_errors"]] == [names[3]]
    assert s["false_errors"][0]["findings"][0]["code"] == "FL113"
    assert s["false_error_rate"] == pytest.approx(0.5)
    assert sorted(m["file"] for m in s["misses"]) == sorted(names[1:3])  # a warning is not a catch
    assert s["per_rule"] == {"FL105": {"failing": 1}, "FL106": {"failing": 1}, "FL113": {"working": 1}}
    fields = [m["field"] for m in entries[0]["mutations"]]
    assert all(s["per_field"][f]["caught"] >= 1 for f in fields)
    assert sum(c.get("missed", 0) for c in s["per_field"].values()) == sum(
        len(entries[i]["mutations"]) for i in (1, 2))
    styles = s["per_style"]
    assert sum(c["programs"] for c in styles.values()) == 5
    # the command line: exit 0, a summary, the markdown report
    for name, data in (("m.json", manifest), ("t.json", truth), ("f.json", findings)):
        (tmp_path / name).write_text(json.dumps(data))
    md = tmp_path / "report.md"
    rc = mut.main(["evaluate", "--manifest", str(tmp_path / "m.json"), "--truth", str(tmp_path / "t.json"),
                   "--findings", str(tmp_path / "f.json"), "--markdown", str(md)])
    assert rc == 0
    text = md.read_text()
    assert "33.3%" in text and names[3] in text and "FL113" in text
    assert mut.main(["evaluate", "--manifest", str(tmp_path / "missing.json"), "--truth", str(tmp_path / "t.json"),
                     "--findings", str(tmp_path / "f.json")]) == 0


def test_host_only_toolchain_builds_without_device_code():
    default = Toolchain().command(Path("p.cpp"), Path("p.bin"))
    assert default[1:3] == ["-x", "cu"] and "-arch=sm_90a" in default
    host = Toolchain(host_only=True).command(Path("p.cpp"), Path("p.bin"))
    assert "cu" not in host and not any(a.startswith("-arch") for a in host)
    assert host[1:3] == ["-x", "c++"] and "-lcublasLt" in host


H200_TRUTH = Path(__file__).resolve().parent.parent / "kernels_ref" / "evidence" / "h200-mutations-cublaslt.json"
# failing programs of seed 1 fusionlint does not catch: none since the bias/aux stages try every
# data type (the three it missed before, kept in the sample, had a bias type the first sweep of
# 2 Dec 2026 did not try); a new miss fails the test
KNOWN_MISSES: set[str] = set()
ONCE_MISSED = {"m0192_plain.cpp", "m0284_plain.cpp", "m0399_macro.cpp"}


def test_a_sample_of_seed_1_against_what_the_h200_did(tmp_path):
    """Every 8th program of the 640 that ran on the H200 (seed 1), linted as a user would: every
    failing one gets an error (but the known misses), no working one does. The whole set's figures
    are in kernels_ref/evidence/h200-mutations-cublaslt.md."""
    import subprocess
    import sys

    entries = mut.write_set(1, 640, tmp_path)
    truth = json.loads(H200_TRUTH.read_text())
    sample = [e for i, e in enumerate(entries) if i % 8 == 0 or e["file"] in KNOWN_MISSES | ONCE_MISSED]
    include = Path(mut.__file__).resolve().parent / "include"
    r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "--no-cache", "--exit-zero", "--output-format",
                        "json", "-I", str(include), *(str(tmp_path / e["file"]) for e in sample)],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr
    s = mut.evaluate({"programs": sample}, truth, json.loads(r.stdout))
    assert s["scored"] == len(sample) and s["working"] > 5 and s["failing"] > 50
    assert s["false_errors"] == [], s["false_errors"]
    assert {m["file"] for m in s["misses"]} == {e["file"] for e in sample if e["file"] in KNOWN_MISSES}
