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
from fusionlint.model.cutlass_facts import CutlassGemm, MainloopBuilder, Param
from fusionlint.evidence import harness, probegen, probegen_cutlass
from fusionlint.frontend.clang.parse import ParseOptions
from fusionlint.model.values import Loc
from fusionlint.run.pipeline import check_file
from fusionlint.rules.loader import load_rules
from fusionlint.run import verify
from fusionlint.run.options import VerifyOptions

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


# A compiler whose programs play a probe's device run: every status a success, and for D what the
# H200 shows. A probe that ends in probe_verify_skipped("<why>") prints its numerics-skipped line; one
# that checks the D of a gradient epilogue (DRELU / DGELU) against the plain GEMM finds it wrong (D is
# the gradient, not the GEMM: what an unmodelled epilogue looked like before verify's numerics-skipped verdict); any other D
# matches the host reference.
DEVICE_NVCC = r"""
out=""; src=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; [ "$prev" = "cu" ] && src="$a"; prev="$a"; done
why=$(sed -n 's/.*probe_verify_skipped("\(.*\)");.*/\1/p' "$src")
if [ -n "$why" ]; then numerics="EVIDENCE numerics skipped $why"
elif grep -q "CUBLASLT_EPILOGUE_D[RG]ELU" "$src"; then numerics="EVIDENCE numerics mismatch max_abs_err=3.5"
else numerics="EVIDENCE numerics ok max_abs_err=0"; fi
printf '#!/bin/sh\necho "EVIDENCE cublasLtMatmul(x) CUBLAS_STATUS_SUCCESS"\necho "EVIDENCE cuda cudaSuccess"\necho "%s"\n' \
  "$numerics" > "$out"
chmod +x "$out"
"""


def fake_machine(tmp_path: Path, monkeypatch, gpu: str = "NVIDIA H200, 9.0", nvcc: str = FAKE_NVCC) -> None:
    """A compiler whose programs all 'work' (or play `nvcc`), and a GPU; no cuBLAS or CUTLASS needed."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    _script(bin_dir / "nvcc", nvcc)
    _script(bin_dir / "nvidia-smi", f"echo '{gpu}'")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(verify, "find_cublas", lambda extra: ([], [], []))
    monkeypatch.setattr(verify, "find_cutlass", lambda include_dirs: [])


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
    assert "lint:     clean -> expected to work" in out and "agree:    yes" in out and "stand-in:" not in out
    assert "1 configurations: 1 agree, 0 agree with stand-ins, 0 numerics not checked, 0 disagree, 0 not verified" in out
    # the failing one also 'works' here: the lint's claim is not proved, exit 1
    assert main(["verify", "rules", "-j", "1", "--no-system-headers", "--json", str(tmp_path / "v.json")]) == 1
    out = capsys.readouterr().out
    assert "error FL117 -> expected to fail (status)" in out and "agree:    NO" in out
    assert "2 configurations: 1 agree, 0 agree with stand-ins, 0 numerics not checked, 1 disagree, 0 not verified" in out
    record = json.loads((tmp_path / "v.json").read_text())
    assert record["summary"] == {"configurations": 2, "agree": 1, "agree_with_stand_ins": 0, "numerics_not_checked": 0,
                                 "disagree": 1, "not_verified": 0}
    assert [c["codes"] for c in record["configurations"]] == [[], ["FL117"]]
    assert [c["verdict"] for c in record["configurations"]] == ["agree", "disagree"]
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
    assert "2 configurations: 0 agree, 0 agree with stand-ins, 0 numerics not checked, 0 disagree, 2 not verified" in out
    assert main(["verify", "rules", "-j", "1", "--no-system-headers", "--config", "7"]) == 2
    assert "--config 7: there are 2 configurations" in capsys.readouterr().err


def _epilogue_program(root: Path, epilogue: str) -> Path:
    """FL117_transc_n_ok.cpp (a clean BF16 TN GEMM) with ``epilogue`` and its aux input (and, for a
    _BGRAD form, the bias-gradient output) set: lint-clean, and cuBLASLt computes D correctly."""
    text = (RULES / "FL117_transc_n_ok.cpp").read_text()
    transc = ("  const int32_t transc = CUBLAS_OP_N;\n  // ok: FL117\n"
              "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSC, &transc, sizeof(transc)));\n")
    assert transc in text
    setup = (f"  const uint32_t epilogue = CUBLASLT_EPILOGUE_{epilogue};\n"
             "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));\n"
             "  void *aux = probe_workspace(1 << 20);\n"
             "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));\n"
             "  const int64_t aux_ld = 128;\n"
             "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld)));\n")
    if epilogue.endswith("_BGRAD"):
        setup += ("  void *bias_grad = probe_workspace(1 << 12);\n"
                  "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_grad, "
                  "sizeof(bias_grad)));\n")
    path = root / "rules" / f"{epilogue.lower()}_ok.cpp"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(transc, setup))
    return path


@pytest.mark.parametrize("epilogue", ["DGELU", "DRELU_BGRAD", "DRELU", "DGELU_BGRAD"])
def test_gradient_epilogue_probe_skips_d(epilogue: str, tmp_path: Path) -> None:
    """The host reference has no model of a gradient epilogue's D (it depends on the aux input): the probe
    checks every status and the CUDA error state, then says D is not checked, instead of comparing D with
    the plain GEMM."""
    shutil.copy(probegen.probe_header(), tmp_path / "probe.h")
    (unit,) = units_of(_epilogue_program(tmp_path, epilogue))
    assert unit.codes == [] and unit.substitutions == []
    src = unit.probe_source
    why = (f"no host reference for CUBLASLT_EPILOGUE_{epilogue}: a gradient epilogue, its D depends on the "
           "EPILOGUE_AUX input of the forward pass")
    assert f'probe_verify_skipped("{why}");' in src and f"// numerics: not checked ({why})" in src
    assert "probe_verify(check)" not in src and "ProbeCheck" not in src
    assert src.index("PROBE(cublasLtMatmul(lt,") < src.index("probe_verify_skipped(")
    header = probegen.probe_header().read_text()
    assert "static void probe_verify_skipped(const char *why)" in header
    assert 'std::printf("EVIDENCE numerics skipped %s\\n", why);' in header
    # the probe's own lint has the source's (clean) verdict
    out = tmp_path / "relint"
    out.mkdir()
    assert relint(unit, out, STAND_INS).findings == []


@pytest.mark.parametrize("epilogue, bias, activation", [
    ("BGRADA", False, None), ("BGRADB", False, None), ("GELU_AUX", False, "PROBE_GELU"),
    ("RELU_AUX_BIAS", True, "PROBE_RELU"), ("GELU_AUX_BIAS", True, "PROBE_GELU")])
def test_modelled_epilogues_keep_the_d_check(epilogue: str, bias: bool, activation: str | None,
                                             tmp_path: Path) -> None:
    """BGRADA / BGRADB leave D the plain GEMM (the bias gradient goes to BIAS_POINTER); the *_AUX forms
    write their extra output to the aux buffer of its own: D is checked, with the bias and activation
    the epilogue applies."""
    shutil.copy(probegen.probe_header(), tmp_path / "probe.h")
    (unit,) = units_of(_epilogue_program(tmp_path, epilogue))
    src = unit.probe_source
    assert "probe_verify(check);" in src and "probe_verify_skipped" not in src
    assert ("check.bias = &bias_values;" in src) == bias
    assert (f"check.activation = {activation};" in src) if activation else "check.activation" not in src
    assert "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)" in src  # its own buffer, not D's


def test_verify_reports_numerics_not_checked(tmp_path: Path, monkeypatch, capsys) -> None:
    """A DGELU and a DRELU_BGRAD configuration that cuBLASLt computes correctly: 'numerics not checked'
    in the text and the JSON, counted apart, exit 3: neither agreement on D nor 'D is wrong'."""
    fake_machine(tmp_path, monkeypatch, nvcc=DEVICE_NVCC)
    user = tmp_path / "user"
    user.mkdir()
    shutil.copy(probegen.probe_header(), user / "probe.h")
    for epilogue in ("DGELU", "DRELU_BGRAD"):
        _epilogue_program(user, epilogue)
    shutil.copy(RULES / "FL117_transc_n_ok.cpp", user / "rules" / "FL117_transc_n_ok.cpp")
    monkeypatch.chdir(user)
    assert main(["verify", "rules", "-j", "1", "--no-system-headers", "--json", str(tmp_path / "v.json")]) == 3
    out = capsys.readouterr().out
    assert "D is wrong" not in out and "agree:    NO" not in out
    assert out.count("observed: works (D not checked: no host reference for CUBLASLT_EPILOGUE_D") == 2
    assert out.count("agree:    numerics not checked (every status and the CUDA error state as expected; "
                     "D has no host reference)") == 2
    assert out.count("agree:    yes") == 1  # FL117_transc_n_ok: D checked and right
    assert "3 configurations: 1 agree, 0 agree with stand-ins, 2 numerics not checked, 0 disagree, 0 not verified" \
        in out
    record = json.loads((tmp_path / "v.json").read_text())
    assert record["summary"] == {"configurations": 3, "agree": 1, "agree_with_stand_ins": 0, "numerics_not_checked": 2,
                                 "disagree": 0, "not_verified": 0}
    by_path = {Path(c["path"]).name: c for c in record["configurations"]}
    for name in ("dgelu_ok.cpp", "drelu_bgrad_ok.cpp"):
        c = by_path[name]
        assert c["verdict"] == "numerics not checked" and c["agree"] is None
        assert c["outcome"]["numerics_skipped"].startswith("no host reference for CUBLASLT_EPILOGUE_D")
    assert by_path["FL117_transc_n_ok.cpp"]["verdict"] == "agree"


def test_judge_numerics_not_checked() -> None:
    """D not checked: no verdict on D either way; but a lint that expects only a failing status is
    contradicted by a run whose statuses all succeeded."""
    skipped = {"numerics_skipped": "no host reference for X"}
    clean = verify.Unit("a.cpp", 1, "cublaslt", "matmul", "x")
    clean.outcome, clean.observed_kind = skipped, "works"
    verify.judge(clean, {})
    assert (clean.verdict, clean.agree) == ("numerics not checked", None)
    wrong_d = verify.Unit("b.cpp", 1, "cublaslt", "matmul", "y", findings=[{"code": "FL303"}])
    wrong_d.outcome, wrong_d.observed_kind = skipped, "works"
    verify.judge(wrong_d, {"FL303": ["compile error", "numerics"]})
    assert wrong_d.verdict == "numerics not checked"
    status = verify.Unit("c.cpp", 1, "cublaslt", "matmul", "z", findings=[{"code": "FL101"}])
    status.outcome, status.observed_kind = skipped, "works"
    verify.judge(status, {"FL101": ["status"]})
    assert (status.verdict, status.agree) == ("disagree", False)
    assert verify.exit_status([clean]) == 3 and verify.exit_status([clean, status]) == 1


def test_verify_reports_agreement_with_stand_ins_apart(tmp_path: Path, monkeypatch, capsys) -> None:
    """Agreement reached only through stand-ins (a descriptor-only configuration's layouts, a CUTLASS
    GEMM's problem size) is no agreement about the user's code: 'agrees with stand-ins: <what>' in the
    text, its own verdict and count in the JSON, exit 3."""
    fake_machine(tmp_path, monkeypatch)
    user = tmp_path / "user"
    (user / "src").mkdir(parents=True)
    shutil.copy(probegen.probe_header(), user / "probe.h")
    shutil.copy(RULES / "FL117_transc_n_ok.cpp", user / "src" / "FL117_transc_n_ok.cpp")
    shutil.copy(FIXTURES / "cublaslt" / "extract" / "descriptor_only.cpp", user / "src" / "descriptor_only.cpp")
    shutil.copy(FIXTURES / "cutlass" / "extract" / "hopper_bf16_cooperative.cu", user / "src" / "hopper_bf16_cooperative.cu")
    monkeypatch.chdir(user)
    assert main(["verify", "src", "-j", "1", "--no-system-headers", "--json", str(tmp_path / "v.json")]) == 3
    out = capsys.readouterr().out
    assert "agree:    agrees with stand-ins: layout A, layout B, layout C, layout D" in out
    assert "stand-in: problem size: not literal in the source, using 768x512x256" in out
    # (read without the CUTLASS headers, the mainloop's carve-out sizeof(CollectiveEpilogue::SharedStorage)
    # is computed as the builders do, so the probe writes the user's expression and it is no stand-in)
    assert "agree:    agrees with stand-ins: problem size" in out
    assert out.count("agree:    yes") == 1  # FL117_transc_n_ok only
    assert "3 configurations: 1 agree, 2 agree with stand-ins, 0 numerics not checked, 0 disagree, 0 not verified" \
        in out
    record = json.loads((tmp_path / "v.json").read_text())
    assert record["summary"] == {"configurations": 3, "agree": 1, "agree_with_stand_ins": 2, "numerics_not_checked": 0,
                                 "disagree": 0, "not_verified": 0}
    by_path = {Path(c["path"]).name: c for c in record["configurations"]}
    assert by_path["descriptor_only.cpp"]["verdict"] == "agree with stand-ins"
    assert by_path["descriptor_only.cpp"]["stand_ins"] == ["layout A", "layout B", "layout C", "layout D"]
    assert by_path["hopper_bf16_cooperative.cu"]["verdict"] == "agree with stand-ins"
    assert by_path["hopper_bf16_cooperative.cu"]["stand_ins"] == ["problem size"]
    assert by_path["FL117_transc_n_ok.cpp"]["verdict"] == "agree" and by_path["FL117_transc_n_ok.cpp"]["stand_ins"] == []
    # the plain agreement alone still exits 0; a disagreement next to a stand-in agreement exits 1
    assert main(["verify", "src/FL117_transc_n_ok.cpp", "-j", "1", "--no-system-headers"]) == 0
    capsys.readouterr()
    shutil.copy(RULES / "FL117_transc_t.cpp", user / "src" / "FL117_transc_t.cpp")
    assert main(["verify", "src/FL117_transc_t.cpp", "src/descriptor_only.cpp", "-j", "1", "--no-system-headers"]) == 1
    assert "2 configurations: 0 agree, 1 agree with stand-ins, 0 numerics not checked, 1 disagree, 0 not verified" \
        in capsys.readouterr().out


def test_verify_lints_several_files_in_checks_workers(tmp_path: Path, monkeypatch, capsys) -> None:
    """With -j N and several files the lint side runs in check's worker processes (workers.run_tasks):
    the same report as -j 1; a file whose worker crashes is a note, and the other files go on."""
    fake_machine(tmp_path, monkeypatch)
    user = tmp_path / "user"
    (user / "rules").mkdir(parents=True)
    shutil.copy(probegen.probe_header(), user / "probe.h")
    for name in ("FL117_transc_n_ok.cpp", "FL117_transc_t.cpp"):
        shutil.copy(RULES / name, user / "rules" / name)
    monkeypatch.chdir(user)
    assert main(["verify", "rules", "-j", "1", "--no-system-headers"]) == 1
    one = capsys.readouterr().out
    assert main(["verify", "rules", "-j", "2", "--no-system-headers"]) == 1
    assert capsys.readouterr().out == one and "2 configurations:" in one
    real = verify.analyse_file
    monkeypatch.setattr(verify, "analyse_file", lambda path, *rest: os.abort() if "_t.cpp" in path else real(path, *rest))
    assert main(["verify", "rules", "-j", "2", "--no-system-headers"]) == 0  # the clean one agrees
    out = capsys.readouterr().out
    assert "note: rules/FL117_transc_t.cpp: not checked: the parser crashed (SIGABRT)" in out
    assert "1 configurations: 1 agree" in out


def test_unresolved_attribute_writes_are_named_stand_ins() -> None:
    """An attribute write whose value did not resolve is not replayed (the probe runs the library
    default): a stand-in, named, not a silent difference."""
    (unit,) = units_of(FIXTURES / "cublaslt" / "extract" / "runtime_unknowns.cpp")
    line = next(s for s in unit.substitutions if s.startswith("CUBLASLT_MATRIX_LAYOUT_ORDER"))
    assert line.startswith("CUBLASLT_MATRIX_LAYOUT_ORDER: unknown (result of pick_order() at line 16), not set")
    assert f"// stand-in: {line}" in unit.probe_source


def test_recorded_device_run() -> None:
    """The H200 runs of `fusionlint verify`: kernels_ref/evidence/h200-verify.* (fixtures and
    kernels_ref), h200-verify-awaiting.* (the 38 rule fixtures added after it: FL128's, the
    CUTLASS rules FL329-FL341's and the new FL305/FL312/FL330 ones) and h200-verify-awaiting-2.* (the 16 added
    on 2026-12-04: FL342, FL343, FL315's RS neighbour, FL305/FL312's exact-storage cases, FL304's
    TileM 64 ones, and FL332's TileN 100 again), h200-verify-awaiting-3.* (FL333's stage-layout
    fixtures), h200-verify-awaiting-4.* and -6.* (FL336's 512- and 1024-thread fixtures) and
    h200-verify-awaiting-5.* (FL344's); every configuration verified and agreeing."""
    evidence = ROOT / "kernels_ref" / "evidence"
    record = json.loads((evidence / "h200-verify.json").read_text())
    assert "H200" in record["machine"]["gpu"] and record["machine"]["compute_capability"] == "9.0"
    configurations = record["configurations"]
    assert {c["library"] for c in configurations} == {"cublaslt", "cutlass"}
    assert record["summary"]["configurations"] == len(configurations) > 200
    assert record["summary"]["not_verified"] == 0
    assert [c["path"] for c in configurations if not c["agree"]] == []
    later = []
    records = [("h200-verify.txt", record)]
    for name, n in (("h200-verify-awaiting", 38), ("h200-verify-awaiting-2", 16), ("h200-verify-awaiting-3", 3),
                    ("h200-verify-awaiting-4", 3), ("h200-verify-awaiting-5", 2),
                    ("h200-verify-awaiting-6", 2)):
        awaiting = json.loads((evidence / f"{name}.json").read_text())
        assert "H200" in awaiting["machine"]["gpu"] and awaiting["machine"]["compute_capability"] == "9.0"
        assert awaiting["summary"]["configurations"] == len(awaiting["configurations"]) == n
        assert awaiting["summary"]["not_verified"] == awaiting["summary"]["disagree"] == 0
        assert [c["path"] for c in awaiting["configurations"] if not c["agree"]] == []
        later += awaiting["configurations"]
        records.append((f"{name}.txt", awaiting))
    # every rule fixture of both libraries is among them, each agreeing
    fixtures = {str(p.relative_to(ROOT)) for p in (FIXTURES / "cublaslt" / "rules").glob("*.cpp")}
    fixtures |= {str(p.relative_to(ROOT)) for p in (FIXTURES / "cutlass" / "rules").glob("*.cu")}
    # The one configuration that agrees only with a stand-in (in both later runs): the probe could
    # not know the mainloop carve-out (sizeof(CollectiveEpilogue::SharedStorage) of an epilogue that
    # does not build with TileN 100) and used that same expression; nvcc then failed as FL332 says
    # ("CopyAtomC can't be void, divisiblity check for EpilogueTile_MN failed"). Not counted as a
    # plain agreement: listed here, with what the record shows, until a run agrees without stand-ins.
    agrees_only_with_stand_ins = {"fixtures/cutlass/rules/FL332_pingpong_tile_n100.cu": ["mainloop carve-out"]}
    assert {c["path"]: c["stand_ins"] for c in later if c["verdict"] != "agree"} == agrees_only_with_stand_ins
    assert all(c["observed_kind"] in c["expected_kinds"] for c in later if c["path"] in agrees_only_with_stand_ins)
    agreeing = {c["path"] for c in configurations if c["agree"]}
    agreeing |= {c["path"] for c in later if c["verdict"] == "agree" and not c["stand_ins"]}
    assert fixtures - set(agrees_only_with_stand_ins) <= agreeing
    for name, rec in records:
        text = (evidence / name).read_text()
        s = rec["summary"]
        if "agree_with_stand_ins" in s:  # recorded since the stand-in verdicts: the summary line has every verdict
            assert f"{s['configurations']} configurations: {s['agree']} agree, {s['agree_with_stand_ins']} agree " \
                   f"with stand-ins, {s['numerics_not_checked']} numerics not checked, {s['disagree']} disagree" in text
        else:
            assert f"{s['configurations']} configurations: {s['agree']} agree, {s['disagree']} disagree" in text


def test_cutlass_probe_refuses_an_evt_epilogue() -> None:
    """A visitor-tree (EVT) fusion has nested arguments the probe cannot fill: no probe (not
    verified) rather than a probe that fails to compile and reads as a disagreement."""
    from fusionlint.model.cutlass_facts import EpilogueBuilder

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
    opts = VerifyOptions(include=(str(inc),), arch="sm_90a", timeout=60)
    builder = verify._Builder(opts, "nvcc", 1, tmp_path / "p", tmp_path / "b")
    command = builder.toolchain("cutlass").command(Path("x.cu"), Path("x"))
    assert "-lcuda" in command and f"-I{inc}" in command


def test_verify_judges_fl127_against_the_support_table_check_uses() -> None:
    # verify's lint side used to run the rules without the measured support table: a configuration
    # check reports under FL127 read "clean -> expected to work" there (bitsandbytes' igemmlt<8, 1>
    # on the H100: "disagree" although cuBLASLt failed exactly as FL127 says)
    path = FIXTURES / "cublaslt" / "support" / "no_completion_supported.cpp"
    units, note = verify.analyse_file(str(path), ParseOptions(use_system_headers=False), "sm_90a", [])
    assert note == ""
    assert [[f["code"] for f in u["findings"]] for u in units] == [["FL127"]]


def test_an_alternative_that_fails_only_on_unknown_inputs_is_still_the_probes_claim() -> None:
    """entry_point_inputs.cpp: check reports "DEFAULT epilogue with a bias pointer" as FL002 (inputs no
    call passes), but verify lints each runtime alternative alone and its probe builds exactly that one:
    the alternative carries the rule's own FL127, the three others nothing."""
    from fusionlint.frontend.clang.parse import ParseOptions
    from fusionlint.run.verify import analyse_file

    units, note = analyse_file(str(FIXTURES / "interprocedural" / "entry_point_inputs.cpp"), ParseOptions(),
                               "sm_90", [])
    assert note == "" and len(units) == 4
    claimed = {u["name"]: [f["code"] for f in u["findings"]] for u in units}
    bad = [name for name, codes in claimed.items() if codes]
    assert len(bad) == 1 and claimed[bad[0]] == ["FL127"]
    assert "`epilogue != CUBLASLT_EPILOGUE_DEFAULT` is false" in bad[0] and "`bias` is non-null" in bad[0]
