"""Probe generation: an extracted configuration becomes a program that, linted again, has the
same configuration and the same findings (the device side is in test_rule_fixtures)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, facts_of, params
from fusionlint.evidence.probegen import generate, write_probes
from fusionlint.frontend.clang.parse import ParseOptions
from fusionlint.run.pipeline import check_file, extract_file
from fusionlint.rules.loader import load_rules

EXTRACT = sorted((FIXTURES / "cublaslt" / "extract").glob("*.c*"))
RULES = FIXTURES / "cublaslt" / "rules"


def regenerated(path: Path, tmp_path: Path) -> list[tuple]:
    facts = facts_of(str(path))
    out = write_probes(facts, tmp_path)
    assert (tmp_path / "fusionlint_probe.h").is_file()
    return [(cfg, p) for cfg, p in zip([c for c in facts.configurations if c.kind == "matmul"], out)]


@pytest.mark.parametrize("path", [p for p in EXTRACT if p.name != "descriptor_only.cpp"], ids=lambda p: p.name)
def test_probe_round_trips_the_configuration(path: Path, tmp_path: Path) -> None:
    pairs = regenerated(path, tmp_path)
    assert pairs
    for cfg, probe_path in pairs:
        (back,) = [c for c in extract_file(probe_path, ParseOptions()).configurations if c.kind == "matmul"]
        for part in ("matmul_desc", "layout_A", "layout_B", "layout_C", "layout_D"):
            original, replayed = params(cfg, part), params(back, part)
            for name, value in original.items():
                if value is not None:  # known in the source: the probe has exactly that value
                    assert replayed.get(name) == value, f"{part}.{name}: {value} -> {replayed.get(name)}"


def test_unknown_values_get_stand_ins_listed_in_the_header(tmp_path: Path) -> None:
    facts = facts_of(str(FIXTURES / "cublaslt" / "extract" / "runtime_unknowns.cpp"))
    (cfg,) = [c for c in facts.configurations if c.kind == "matmul"]
    probe = generate(cfg)
    assert probe is not None and probe.substitutions
    assert "// stand-in: A rows: unknown" in probe.source


@pytest.mark.parametrize("name", ["FL100_transa_int64_size.cpp", "FL101_fp8_nn_col.cpp", "FL110_gelu_aux_no_pointer.cpp",
                                  "FL113_bias_type_32f.cpp", "FL119_device_vector.cpp", "FL101_fp8_tn_ok.cpp",
                                  "FL124_bias_float_buffer.cpp", "FL124_bias_bf16_buffer_ok.cpp"])
def test_probe_gets_the_same_verdict(name: str, tmp_path: Path) -> None:
    rules = load_rules()
    original = check_file(RULES / name, rules, ParseOptions())
    (probe_path,) = write_probes(original.facts, tmp_path)
    replayed = check_file(probe_path, rules, ParseOptions())
    assert sorted({f.code for f in replayed.findings}) == sorted({f.code for f in original.findings})


def test_probe_command(tmp_path: Path, capsys) -> None:
    from fusionlint.cli import main

    assert main(["probe", str(RULES / "FL117_transc_t.cpp"), "--out", str(tmp_path)]) == 0
    written = capsys.readouterr().out.split()
    assert len(written) == 1 and Path(written[0]).read_text().count("CUBLASLT_MATMUL_DESC_TRANSC") == 1


def test_probes_of_gemms_at_one_line_get_a_file_each(tmp_path: Path, capsys) -> None:
    """header_kernel_base/main.cu makes its GEMMs at one line (the header's template, instantiated per tile):
    each probe gets its own file (their names used to repeat, and a later probe overwrote an earlier one)."""
    from fusionlint.cli import main

    assert main(["probe", "--no-system-headers", str(FIXTURES / "cutlass" / "extract" / "header_kernel_base" / "main.cu"),
                 "-o", str(tmp_path)]) == 0
    written = capsys.readouterr().out.split()
    assert len(written) >= 4 and len(set(written)) == len(written)
    assert all(Path(p).is_file() for p in written)


def test_a_null_bias_pointer_is_replayed_as_null_not_as_a_buffer(tmp_path: Path) -> None:
    # llm.c's matmul_forward3 with has_bias false sets BIAS_POINTER to its null `bias`: the probe
    # must pass that null (cuBLASLt's "no bias"), not a bias buffer of its own, or the device sees a
    # bias with the DEFAULT epilogue (INVALID_VALUE) the code never makes.
    facts = facts_of(str(FIXTURES / "interprocedural" / "null_pointer_choice.cu"))
    null_side = [c for c in facts.configurations if c.kind == "matmul" and any("is null" in w for w in c.when)]
    assert null_side
    for cfg in null_side:
        source = generate(cfg).source
        sets = [line for line in source.splitlines() if "CUBLASLT_MATMUL_DESC_BIAS_POINTER" in line]
        assert len(sets) == 1 and "&bias," not in sets[0], sets
        var = sets[0].split("&")[1].split(",")[0]
        assert f"const void *{var} = nullptr;" in source
        extracted = [c for c in extract_file(_write(tmp_path, source), ParseOptions()).configurations
                     if c.kind == "matmul"]
        assert extracted and params(extracted[0], "matmul_desc")["BIAS_POINTER"] == 0


def _write(tmp_path: Path, source: str) -> Path:
    from fusionlint.evidence.probegen import probe_header

    header = probe_header()
    (tmp_path / header.name).write_text(header.read_text())
    path = tmp_path / "probe.cu"
    path.write_text(source)
    return path


def test_a_value_attribute_set_from_an_object_is_a_stand_in_not_a_crash(tmp_path: Path) -> None:
    # PyTorch's SM_COUNT_TARGET = props->multiProcessorCount - carveout.value(), with ATen's headers
    # missing: the value is an object of a stood-in type (a Symbol), which `verify` crashed on
    # ("'Symbol' object has no attribute 'value'") before writing any probe of the file
    src = tmp_path / "sm_count.cu"
    src.write_text(
        '#include "framework/device_props.h"  // found nowhere\n'
        "#include <cublasLt.h>\n"
        "void gemm(cublasLtHandle_t lt, const fw::Props& props, cublasLtMatmulPreference_t p) {\n"
        "  cublasLtMatrixLayout_t a;\n"
        "  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 64, 64, 64);\n"
        "  cublasLtMatmulDesc_t d;\n"
        "  cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);\n"
        "  auto sms = props.count() - props.reserved();\n"
        "  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof(sms));\n"
        "  cublasLtMatmulHeuristicResult_t r;\n"
        "  int n = 0;\n"
        "  cublasLtMatmulAlgoGetHeuristic(lt, d, a, a, a, a, p, 1, &r, &n);\n"
        "}\n")
    (cfg,) = extract_file(src, ParseOptions()).configurations
    probe = generate(cfg)
    assert any("CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: unknown" in s and "not set: the library default" in s
               for s in probe.substitutions), probe.substitutions
