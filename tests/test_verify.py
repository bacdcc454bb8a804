"""`fusionlint verify` without a GPU: probe generation for every configuration kind (each probe,
linted again, has the source configuration's values and findings), the one-line exit 2 when the
machine lacks nvcc or a GPU, and the whole command against a stand-in compiler and GPU (agreement,
exit status, nothing written into the user's tree without --keep). The device side is recorded in
kernels_ref/evidence/h200-verify.*."""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, facts_of, params
from fusionlint.cli import main
from fusionlint.cutlass_facts import CutlassGemm, MainloopBuilder, Param
from fusionlint.evidence import harness, probegen, probegen_cutlass
from fusionlint.frontend.parse import ParseOptions
from fusionlint.frontend.values import Loc
from fusionlint.pipeline import check_file
from fusionlint.rules.loader import load_rules
from fusionlint import verify

STAND_INS = ParseOptions(use_system_headers=False)  # fusionlint's stand-in headers, CUTLASS read syntactically: fast
RULES = FIXTURES / "cublaslt" / "rules"


def units_of(path: Path, system_headers: bool = False) -> list[verify.Unit]:
    """verify's configurations of one file (the facts parsed once per test session)."""
    facts = facts_of(str(path), system_headers)
    assert not facts.internal_errors
    return verify.units_of_facts(facts, path.read_text(), load_rules(), ParseOptions(use_system_headers=system_headers))


def relint(unit: verify.Unit, tmp_path: Path, options: ParseOptions):
    header = probegen.probe_header() if unit.library == "cublaslt" else probegen_cutlass.probe_header()
    shutil.copy(header, tmp_path / header.name)
    path = tmp_path / unit.probe_name
    path.write_text(unit.probe_source)
    return check_file(path, load_rules(), options)


def heuristic_only_program(tmp_path: Path) -> Path:
    """FL117_transc_t.cpp without its cublasLtMatmul call: a heuristic query nobody runs."""
    shutil.copy(probegen.probe_header(), tmp_path / "probe.h")
    (tmp_path / "rules").mkdir()
    text = (RULES / "FL117_transc_t.cpp").read_text()
    text = re.sub(r"\n\s*PROBE\(cublasLtMatmul\(lt,.*?probe_verify\(check\);", "", text, flags=re.S)
    assert "cublasLtMatmul(" not in text and "cublasLtMatmulAlgoGetHeuristic" in text
    path = tmp_path / "rules" / "heuristic_only.cpp"
    path.write_text(text)
    return path


# ---- cuBLASLt: matmul, heuristic-only, descriptor-only -------------------------------------------------

@pytest.mark.parametrize("name", ["FL101_fp8_nn_col.cpp", "FL111_gelu_aux_ld68.cpp", "FL100_transa_int64_size.cpp",
                                  "FL117_transc_n_ok.cpp"])
def test_cublaslt_matmul_probe_round_trips(name: str, tmp_path: Path) -> None:
    (unit,) = units_of(RULES / name)
    assert unit.library == "cublaslt" and unit.kind == "matmul" and unit.probe_source
    source = [c for c in facts_of(str(RULES / name), False).configurations if c.kind == "matmul"][0]
    back = relint(unit, tmp_path, STAND_INS)
    (replayed,) = [c for c in back.facts.configurations if c.kind == "matmul"]
    for part in ("matmul_desc", "layout_A", "layout_B", "layout_C", "layout_D"):
        for field, value in params(source, part).items():
            if value is not None:
                assert params(replayed, part).get(field) == value, f"{part}.{field}"
    assert sorted({f.code for f in back.findings}) == unit.codes
    assert unit.codes == ([] if name.endswith("_ok.cpp") else [name[:5]])


def test_cublaslt_heuristic_only_probe(tmp_path: Path) -> None:
    (unit,) = units_of(heuristic_only_program(tmp_path))
    assert unit.kind == "heuristic" and unit.codes == ["FL117"]
    assert "cublasLtMatmulAlgoGetHeuristic" in unit.probe_source
    out = tmp_path / "probe"
    out.mkdir()
    back = relint(unit, out, STAND_INS)
    assert sorted({f.code for f in back.findings}) == ["FL117"]


def test_cublaslt_descriptor_only_probe_gets_stand_in_layouts(tmp_path: Path) -> None:
    path = FIXTURES / "cublaslt" / "extract" / "descriptor_only.cpp"
    (unit,) = units_of(path)
    assert unit.kind == "descriptor" and unit.codes == []
    assert "// stand-in: layout A: not in this configuration, using a 64x64 column-major CUDA_R_32F matrix" \
        in unit.probe_source
    source = facts_of(str(path), False).configurations[0]
    back = relint(unit, tmp_path, STAND_INS)
    (replayed,) = [c for c in back.facts.configurations if c.kind == "matmul"]
    for field, value in params(source, "matmul_desc").items():
        if value is not None:
            assert params(replayed, "matmul_desc").get(field) == value, field
    assert back.findings == []


# ---- CUTLASS: 3.x builders, hand-assembled CollectiveMma, 2.x device GEMMs --------------------------------

CUTLASS_CASES = {  # file, the GEMM kinds in it, which of them to round-trip
    "3.x builder (FL303)": (FIXTURES / "cutlass" / "rules" / "FL303_coop_64x128.cu", ["GemmUniversalAdapter"], [0]),
    "3.x hand-assembled CollectiveMma": (FIXTURES / "cutlass" / "extract" / "hand_assembled_collective_mma.cu",
                                         ["GemmUniversalAdapter"], [0]),
    "3.x CollectiveMma + Sm90TmaWarpSpecializedAdapter epilogue": (
        FIXTURES / "cutlass" / "rules" / "FL327_ws_adapter_ok.cu", ["GemmUniversalAdapter"], [0]),
    "2.x device::Gemm / GemmUniversal": (FIXTURES / "cutlass" / "extract" / "gemm2x_explicit.cu",
                                         ["device::Gemm", "device::GemmUniversal", "device::Gemm"], [0, 1]),
    "2.x GemmBatched / GemmSplitKParallel": (FIXTURES / "cutlass" / "extract" / "gemm2x_defaults.cu",
                                             ["device::Gemm", "device::Gemm", "device::GemmBatched",
                                              "device::GemmSplitKParallel"], [2, 3]),
}


@pytest.mark.parametrize("case", list(CUTLASS_CASES))
def test_cutlass_probe_round_trips(case: str, tmp_path: Path) -> None:
    path, kinds, picked = CUTLASS_CASES[case]
    facts = facts_of(str(path), False)
    assert [g.kind for g in facts.cutlass] == kinds
    units = units_of(path)
    assert len(units) == len(facts.cutlass) and all(u.probe_source for u in units)
    for i in picked:
        g, unit = facts.cutlass[i], units[i]
        assert unit.library == "cutlass" and unit.probe_source, unit.not_generated
        back = relint(unit, tmp_path, STAND_INS)
        (replayed,) = back.facts.cutlass
        assert (replayed.api, replayed.kind) == (g.api, g.kind)
        original = g.values()
        for key, value in original.items():
            if value is not None:  # known in the source: the probe has exactly that value
                assert replayed.values()[key] == value, f"{g.name}: {key}: {value} -> {replayed.values()[key]}"
        assert sorted({f.code for f in back.findings}) == unit.codes


def test_cutlass_probe_spells_the_configuration() -> None:
    (unit,) = units_of(FIXTURES / "cutlass" / "rules" / "FL303_coop_64x128.cu")
    assert unit.codes == ["FL303"]
    src = unit.probe_source
    assert "cute::Shape<cute::Int<64>, cute::Int<128>, cute::Int<64>>" in src
    assert "cutlass::gemm::KernelTmaWarpSpecializedCooperative" in src
    assert "cutlass::epilogue::TmaWarpSpecializedCooperative" in src
    assert "probe_gemm3x<Gemm>(768, 512, 256)" in src  # the fixture's literal problem size
    assert "Gemm::Arguments" not in src  # the source writes no Arguments with a literal size: neither does the probe
    assert '#include "fusionlint_cutlass_probe.h"' in src


def test_cutlass_probe_keeps_the_sources_problem_size(tmp_path: Path) -> None:
    """FL318 judges the literal problem size of a GEMM's Arguments: the probe runs that size and writes
    it the same way, so its own lint has the same finding."""
    (unit,) = units_of(FIXTURES / "cutlass" / "rules" / "FL318_fp16_k250.cu")
    assert unit.codes == ["FL318"]
    assert "{cutlass::gemm::GemmUniversalMode::kGemm, {768, 512, 250, 1}}" in unit.probe_source
    assert "probe_gemm3x<Gemm>(768, 512, 250)" in unit.probe_source
    assert sorted({f.code for f in relint(unit, tmp_path, STAND_INS).findings}) == ["FL318"]


def test_cutlass_unknown_values_get_stand_ins() -> None:
    loc = Loc("user.cu", 3, 1)
    g = CutlassGemm("3.x", "CollectiveBuilder", "Mainloop", "user.cu", loc, "syntactic",
                    mainloop=MainloopBuilder(element_a=Param(unknown="a template parameter of f<T>"),
                                             tile_shape=Param(value=[128, 128, 64]),
                                             kernel_schedule=Param(value="cutlass::gemm::KernelTmaWarpSpecialized")))
    probe = probegen_cutlass.generate(g)
    assert "// stand-in: mainloop element_a: unknown (a template parameter of f<T>), using cutlass::half_t" in probe.source
    assert "// stand-in: epilogue: none extracted" in probe.source
    assert "// stand-in: problem size: not literal in the source, using 768x512x256" in probe.source
    (unit,) = units_of(FIXTURES / "cutlass" / "extract" / "hand_assembled_collective_mma.cu")
    assert any(s.startswith("mainloop tiled_mma: unknown") for s in unit.substitutions)


def test_fixture_header_is_the_package_header() -> None:
    """One copy of the CUTLASS probe helpers: the fixtures' header includes the package's."""
    text = (FIXTURES / "cutlass" / "cutlass_probe.h").read_text()
    assert '#include "../../fusionlint/evidence/include/fusionlint_cutlass_probe.h"' in text
    assert "probe_gemm3x" not in text


# ---- outcomes and the rules' recorded evidence ---------------------------------------------------------

def test_recorded_kinds_come_from_the_rules_evidence() -> None:
    kinds = verify.recorded_kinds(load_rules())
    assert kinds["FL101"] == ["status"]
    assert kinds["FL111"] == ["launch error", "status"]
    assert kinds["FL303"] == ["compile error", "numerics"]
    assert kinds["FL305"] == ["status"]


def test_describe_outcomes_in_the_evidence_words() -> None:
    build = harness.Outcome("p.cu", 1, log='x.hpp(3): error: static assertion failed with "Tile_K must be a multiple of 16."')
    assert harness.describe(build) == "compile error: Tile_K must be a multiple of 16."
    status = harness.parse_output("p.cu", 0, 0, "EVIDENCE step can_implement Success\nEVIDENCE step initialize ErrorInternal\n"
                                                "EVIDENCE cuda cudaSuccess\n")
    assert harness.describe(status) == "initialize -> ErrorInternal"
    wrong = harness.parse_output("p.cu", 0, 0, "EVIDENCE step run Success\nEVIDENCE cuda cudaSuccess\n"
                                               "EVIDENCE numerics mismatch max_abs_err=184\n")
    assert harness.describe(wrong) == "all calls SUCCESS but D is wrong (max abs err 184)"
    skipped = harness.parse_output("p.cu", 0, 0, "EVIDENCE step run Success\nEVIDENCE cuda cudaSuccess\n"
                                                 "EVIDENCE numerics skipped no host reference for X\n")
    assert skipped.works and harness.kind_of(harness.describe(skipped)) == "works"
    for text, kind in [("cublasLtMatmul -> CUBLAS_STATUS_NOT_SUPPORTED", "status"),
                       ("all calls SUCCESS, then CUDA error cudaErrorMisalignedAddress", "launch error"),
                       ("compile error: EPI_TILE_M must divide CTA_M", "compile error"),
                       ("works, D matches the host reference", "works")]:
        assert harness.kind_of(text) == kind


def test_judge() -> None:
    kinds = {"FL101": ["status"]}
    u = verify.Unit("a.cpp", 1, "cublaslt", "matmul", "x", findings=[{"code": "FL101"}])
    u.outcome, u.observed_kind = {}, "status"
    verify.judge(u, kinds)
    assert (u.expected, u.agree, u.kind_agrees) == ("fails", True, True)
    u.observed_kind = "works"
    verify.judge(u, kinds)
    assert u.agree is False
    clean = verify.Unit("b.cpp", 1, "cublaslt", "matmul", "y")
    clean.outcome, clean.observed_kind = {}, "numerics"
    verify.judge(clean, kinds)
    assert (clean.expected, clean.agree) == ("works", False)


# ---- the machine: no GPU, no toolchain ------------------------------------------------------------------

def test_no_nvcc_and_no_gpu_is_one_line_and_exit_2(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither nvcc nor nvidia-smi
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(verify, "CUDA_ROOTS", ())
    assert main(["verify", str(RULES / "FL117_transc_t.cpp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "nvcc" in err and "NVIDIA GPU (nvidia-smi not found)" in err


def test_no_gpu_from_the_command_line(tmp_path: Path) -> None:
    """A real process with nvcc on PATH but no nvidia-smi: one line on stderr, exit 2, nothing on stdout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "nvcc", "exit 0")
    env = dict(os.environ, PATH=f"{bin_dir}:{Path(sys.executable).parent}")
    r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "verify", str(RULES / "FL117_transc_t.cpp")],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "fusionlint: error: cannot verify on this machine: it needs an NVIDIA GPU (nvidia-smi not found)\n"


def test_a_gpu_other_than_hopper_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    fake_machine(tmp_path, monkeypatch, gpu="NVIDIA A100-SXM4-80GB, 8.0")
    assert main(["verify", str(RULES / "FL117_transc_t.cpp")]) == 2
    assert "a Hopper GPU (compute capability 9.x" in capsys.readouterr().err


# ---- the whole command on a stand-in machine -------------------------------------------------------------

def _script(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


FAKE_NVCC = r"""
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
printf '#!/bin/sh\necho "EVIDENCE cublasLtMatmul(x) CUBLAS_STATUS_SUCCESS"\necho "EVIDENCE cuda cudaSuccess"\necho "EVIDENCE numerics ok max_abs_err=0"\n' > "$out"
chmod +x "$out"
"""


def fake_machine(tmp_path: Path, monkeypatch, gpu: str = "NVIDIA H200, 9.0") -> None:
    """A compiler whose programs all 'work', and a GPU; no cuBLAS needed."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    _script(bin_dir / "nvcc", FAKE_NVCC)
    _script(bin_dir / "nvidia-smi", f"echo '{gpu}'")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(verify, "find_cublas", lambda extra: ([], [], []))


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_verify_reports_agreement_and_writes_nothing_without_keep(tmp_path: Path, monkeypatch, capsys) -> None:
    fake_machine(tmp_path, monkeypatch)
    user = tmp_path / "user"
    (user / "rules").mkdir(parents=True)
    shutil.copy(probegen.probe_header(), user / "probe.h")
    for name in ("FL117_transc_n_ok.cpp", "FL117_transc_t.cpp"):
        shutil.copy(RULES / name, user / "rules" / name)
    before = _tree(user)
    monkeypatch.chdir(user)
    # the clean configuration works on the 'device': agreement, exit 0
    assert main(["verify", "rules/FL117_transc_n_ok.cpp", "-j", "1", "--no-system-headers"]) == 0
    out = capsys.readouterr().out
    assert "lint:     clean -> expected to work" in out and "agree:    yes" in out
    assert "1 configurations: 1 agree, 0 disagree, 0 not verified" in out
    # the failing one also 'works' here: the lint's claim is not proved, exit 1
    assert main(["verify", "rules", "-j", "1", "--no-system-headers", "--json", str(tmp_path / "v.json")]) == 1
    out = capsys.readouterr().out
    assert "error FL117 -> expected to fail (status)" in out and "agree:    NO" in out
    assert "2 configurations: 1 agree, 1 disagree, 0 not verified" in out
    record = json.loads((tmp_path / "v.json").read_text())
    assert record["summary"] == {"configurations": 2, "agree": 1, "disagree": 1, "not_verified": 0}
    assert [c["codes"] for c in record["configurations"]] == [[], ["FL117"]]
    assert _tree(user) == before  # nothing written into the user's tree
    # --config N picks one; --keep DIR keeps the probes and executables
    keep = tmp_path / "kept"
    assert main(["verify", "rules", "-j", "1", "--no-system-headers", "--config", "1", "--keep", str(keep)]) == 0
    assert "[1] rules/FL117_transc_n_ok.cpp" in capsys.readouterr().out
    probes = sorted(p.name for p in (keep / "probes").glob("*.cu"))
    assert len(probes) == 1 and probes[0].endswith("FL117_transc_n_ok_L42.cu")
    assert (keep / "probes" / "fusionlint_probe.h").is_file() and any((keep / "bin").iterdir())
    # past the run's time limit nothing is built: not verified, which is no disagreement
    assert main(["verify", "rules", "-j", "1", "--no-system-headers", "--time-limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "observed: not verified: not built: the run's time limit" in out
    assert "2 configurations: 0 agree, 0 disagree, 2 not verified" in out
    assert main(["verify", "rules", "-j", "1", "--no-system-headers", "--config", "7"]) == 2
    assert "--config 7: there are 2 configurations" in capsys.readouterr().err


def test_recorded_device_run() -> None:
    """The H200 run of `fusionlint verify fixtures kernels_ref` (kernels_ref/evidence/h200-verify.*):
    every configuration verified and agreeing."""
    record = json.loads((ROOT / "kernels_ref" / "evidence" / "h200-verify.json").read_text())
    assert "H200" in record["machine"]["gpu"] and record["machine"]["compute_capability"] == "9.0"
    configurations = record["configurations"]
    assert {c["library"] for c in configurations} == {"cublaslt", "cutlass"}
    assert record["summary"]["configurations"] == len(configurations) > 200
    assert record["summary"]["not_verified"] == 0
    assert [c["path"] for c in configurations if not c["agree"]] == []
    # every rule fixture of both libraries is among them, each agreeing
    fixtures = {str(p.relative_to(ROOT)) for p in (FIXTURES / "cublaslt" / "rules").glob("*.cpp")}
    fixtures |= {str(p.relative_to(ROOT)) for p in (FIXTURES / "cutlass" / "rules").glob("*.cu")}
    assert fixtures <= {c["path"] for c in configurations if c["agree"]}
    text = (ROOT / "kernels_ref" / "evidence" / "h200-verify.txt").read_text()
    s = record["summary"]
    assert f"{s['configurations']} configurations: {s['agree']} agree, {s['disagree']} disagree" in text


def test_cutlass_probe_refuses_an_evt_epilogue() -> None:
    """A visitor-tree (EVT) fusion has nested arguments the probe cannot fill: no probe (not
    verified) rather than a probe that fails to compile and reads as a disagreement."""
    from fusionlint.cutlass_facts import EpilogueBuilder

    loc = Loc("user.cu", 3, 1)
    evt = "cutlass::epilogue::fusion::Sm90EVT"
    g = CutlassGemm("3.x", "CollectiveBuilder", "Gemm", "user.cu", loc, "syntactic",
                    mainloop=MainloopBuilder(tile_shape=Param(value=[128, 128, 64])),
                    epilogue=EpilogueBuilder(fusion_op=Param(value=evt, args=["cutlass::epilogue::fusion::Sm90Compute"])))
    with pytest.raises(probegen_cutlass.NotGenerated, match="visitor tree"):
        probegen_cutlass.generate(g)


def test_cutlass_probes_link_the_driver_api(tmp_path: Path) -> None:
    """CUTLASS's host adapter calls cuMemsetD32Async / cuGetErrorString (seen with CUTLASS example
    54 on the H200: an undefined reference without -lcuda)."""
    inc = tmp_path / "include"
    for header in ("cutlass/cutlass.h", "cutlass/util/packed_stride.hpp"):
        (inc / header).parent.mkdir(parents=True, exist_ok=True)
        (inc / header).write_text("")
    args = type("Args", (), {"include": [str(inc)], "arch": "sm_90a", "timeout": 60})()
    builder = verify._Builder(args, "nvcc", 1, tmp_path / "p", tmp_path / "b")
    command = builder.toolchain("cutlass").command(Path("x.cu"), Path("x"))
    assert "-lcuda" in command and f"-I{inc}" in command
