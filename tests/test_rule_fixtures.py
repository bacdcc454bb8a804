"""Rules against their fixtures and the recorded H200 run.

- semgrep-style: `// ruleid: FLnnn` means the next code line must get that finding, `// ok:`
  that it must not (fusionlint.run.selftest, also `fusionlint test-rules`);
- every rule has failing and passing fixtures, and the device record shows the failing ones
  failing on the H200 and the passing ones working (every call SUCCESS, numerics matched);
- the reference kernels lint clean and are recorded working on the H200, with a TFLOP/s figure.
"""
from __future__ import annotations

import json
import re
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from fusionlint.cli import main
from fusionlint.frontend.clang.parse import ParseOptions
from fusionlint.run.pipeline import check_file
from fusionlint.rules.loader import load_rules
from fusionlint.run.selftest import ANNOTATION, annotated_files, check_fixture

RULE_FIXTURES = annotated_files([FIXTURES / "cublaslt", FIXTURES / "cutlass"])
REFERENCE_KERNELS = sorted((ROOT / "kernels_ref" / "cublaslt").glob("*.cpp")) + \
    sorted((ROOT / "kernels_ref" / "cutlass").glob("*.cu"))
KERNEL_RECORDS = {"cublaslt": "kernels_ref/evidence/h200-kernels.json",
                  "cutlass": "kernels_ref/evidence/h200-cutlass-kernels.json"}


@lru_cache(maxsize=None)
def record(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


@pytest.mark.parametrize("path", RULE_FIXTURES, ids=lambda p: p.name)
def test_rule_fixture(path: Path) -> None:
    result = check_fixture(path, load_rules(), ParseOptions())
    assert result.error is None
    assert result.expected or result.forbidden
    assert not result.missed, f"missing findings: {sorted(result.missed)}"
    assert not result.unexpected, f"unexpected findings: {sorted(result.unexpected)}"


def test_every_rule_has_fixtures_and_device_evidence() -> None:
    fixture_codes = {}
    for f in RULE_FIXTURES:
        text = f.read_text()
        for m in ANNOTATION.finditer(text):
            for code in re.split(r"\s*,\s*", m.group(2)):
                fixture_codes.setdefault((m.group(1), code), []).append(f)
    for rule in load_rules():
        ev = rule.evidence
        assert ev.get("fail") and ev.get("pass"), f"{rule.id} lacks evidence fixtures"
        assert ("ruleid", rule.id) in fixture_codes and ("ok", rule.id) in fixture_codes, rule.id
        programs = record(ev["device_record"])["programs"]
        for f in ev["fail"]:
            assert ROOT / f in fixture_codes[("ruleid", rule.id)], f"{f} does not annotate {rule.id}"
            assert f in programs, f"{rule.id}: {f} was not run on the device"
            assert not programs[f]["works"], f"{rule.id}: {f} worked on the H200"
            if programs[f]["build_rc"] != 0:  # a compile-time rule: the compiler must say why
                log = programs[f]["log"]
                assert ("static assertion failed" in log or "incomplete type" in log
                        or re.search(r'error: class "[^"]+" has no member', log)), \
                    f"{rule.id}: {f} failed to build for another reason"
        for f in ev["pass"]:
            assert f in programs, f"{rule.id}: {f} was not run on the device"
            assert programs[f]["works"], f"{rule.id}: {f} failed on the H200"


def load_rules_codes() -> list[str]:
    return [r.id for r in load_rules()]


@pytest.mark.parametrize("name", ["h200-evidence.json", "h200-kernels.json", "h200-probes.json", "h200-cutlass.json",
                                  "h200-cutlass-kernels.json"])
def test_device_record_describes_the_machine(name: str) -> None:
    machine = record(f"kernels_ref/evidence/{name}")["machine"]
    assert "H200" in machine["gpu"] and machine["compute_capability"] == "9.0"
    assert machine["cublaslt_version"] >= 130100 and "580" in machine["nvidia_smi"]


def test_generated_probes_reproduce_the_fixtures_on_the_device() -> None:
    """`fusionlint probe` turned each fixture's extracted configuration into a program; on the
    H200 each probe works exactly when its fixture works."""
    fixtures = record("kernels_ref/evidence/h200-evidence.json")["programs"]
    probes = record("kernels_ref/evidence/h200-probes.json")["programs"]
    assert len(probes) == len(fixtures)
    disagree = []
    for src, p in probes.items():
        stem = Path(src).name.rsplit("_L", 1)[0]
        if p["works"] != fixtures[f"fixtures/cublaslt/rules/{stem}.cpp"]["works"]:
            disagree.append(stem)
    assert disagree == []


@pytest.mark.parametrize("path", REFERENCE_KERNELS, ids=lambda p: p.name)
def test_reference_kernel_lints_clean_and_ran(path: Path) -> None:
    result = check_file(path, load_rules(), ParseOptions())
    assert result.error is None and result.findings == []
    assert result.facts is not None
    assert any(c.kind == "matmul" for c in result.facts.configurations) or result.facts.cutlass
    rel = str(path.relative_to(ROOT))
    program = record(KERNEL_RECORDS[path.parent.name])["programs"][rel]
    assert program["works"], f"{rel} did not work on the H200"
    assert program["tflops"] and program["tflops"][0]["k"] >= 4096 and program["tflops"][0]["tflops"] > 100


def test_test_rules_command(tmp_path: Path, capsys) -> None:
    shutil.copy(ROOT / "fusionlint" / "evidence" / "include" / "fusionlint_probe.h", tmp_path / "probe.h")
    (tmp_path / "rules").mkdir()
    for name in ("FL100_transa_int64_size.cpp", "FL100_transa_int32_ok.cpp"):
        shutil.copy(FIXTURES / "cublaslt" / "rules" / name, tmp_path / "rules" / name)
    assert main(["test-rules", str(tmp_path)]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out
    bad = tmp_path / "rules" / "FL100_transa_int32_ok.cpp"
    bad.write_text(bad.read_text().replace("// ok: FL100", "// ruleid: FL100"))
    assert main(["test-rules", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "missed: expected FL100 here" in out and "1 passed, 1 failed" in out


@pytest.mark.parametrize("compute, flagged", [("CUBLAS_COMPUTE_32F_FAST_16F", False), ("CUBLAS_COMPUTE_32F_FAST_TF32", False),
                                              ("CUBLAS_COMPUTE_32F_FAST_16BF", False), ("CUBLAS_COMPUTE_64F", True),
                                              ("CUBLAS_COMPUTE_32F_PEDANTIC", True)])
def test_fl104_flags_only_rejected_fp8_compute_types(tmp_path: Path, compute: str, flagged: bool) -> None:
    """The measured table's correction: FL104 flagged FP8 with CUBLAS_COMPUTE_32F_FAST_16F, which cuBLASLt 13.1 accepts on the
    H200. The passing FL104 fixture with only its compute type changed."""
    text = (FIXTURES / "cublaslt" / "rules" / "FL104_fp8_compute_32f_ok.cpp").read_text()
    assert "CUBLAS_COMPUTE_32F, CUDA_R_32F" in text
    src = tmp_path / "fl104.cpp"
    src.write_text(text.replace("CUBLAS_COMPUTE_32F, CUDA_R_32F", f"{compute}, CUDA_R_32F")
                   .replace('"../probe.h"', '"probe.h"'))
    shutil.copy(ROOT / "fusionlint" / "evidence" / "include" / "fusionlint_probe.h", tmp_path / "probe.h")
    codes = [f.code for f in check_file(src, load_rules(), ParseOptions()).findings]
    assert ("FL104" in codes) == flagged, codes
