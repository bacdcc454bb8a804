"""The metamorphic shape set (fusionlint/evidence/shapes_cublaslt.py): one cuBLASLt configuration
written in eight code shapes gets the same rule codes in every shape.

A seeded sample (``SAMPLE`` configurations x 8 shapes) is generated, checked by one ``fusionlint``
run (the stand-in cuBLAS headers, the evidence include directory) and compared. The configurations
whose shapes still disagree are listed in ``fixtures/shapes/known-divergences.json`` with the codes
each shape gets: the test fails on any other disagreement, and on a listed one that no longer
disagrees (then the list is shortened), so the list is always the current state.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import FIXTURES, ROOT
from fusionlint.evidence import shapes_cublaslt as shapes

SEED = 1
SAMPLES = {"mutations": 24, "space": 16}  # configurations of each source, each in every shape
KNOWN = FIXTURES / "shapes" / "known-divergences.json"


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def compared(request, tmp_path_factory) -> dict:
    """The sample of one source (the mutation set's configurations, or draws from the measured space)
    in every shape, checked by one run and compared."""
    source = request.param
    out = tmp_path_factory.mktemp(f"shapes-{source}")
    shapes.write_set(SEED, SAMPLES[source], out, source=source)
    rc, stdout, err = run_cli("--exit-zero", "--output-format", "json", "--no-system-headers",
                              "-I", ROOT / "fusionlint" / "evidence" / "include", out)
    assert rc == 0, err
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return {**shapes.compare(manifest, json.loads(stdout)), "source": source}


@pytest.mark.slow
def test_every_shape_program_is_checked(compared) -> None:
    assert compared["configurations"] == SAMPLES[compared["source"]] and compared["shapes"] == list(shapes.SHAPES)
    assert compared["fl000"] == []


@pytest.mark.slow
def test_the_shapes_of_a_configuration_get_the_same_codes(compared) -> None:
    known = {int(k): v for k, v in json.loads(KNOWN.read_text(encoding="utf-8"))[compared["source"]].items()}
    got = {int(k): v for k, v in compared["differing"].items()}
    new = {k: v for k, v in got.items() if known.get(k) != v}
    fixed = sorted(set(known) - set(got))
    assert new == {}, f"shapes disagree (not in {KNOWN.name}): {json.dumps(new)[:3000]}"
    assert fixed == [], f"no longer disagree: remove them from {KNOWN.name}: {fixed}"
    assert compared["identical"] >= SAMPLES[compared["source"]] - len(known)


def test_the_comparison_sees_a_disagreement() -> None:
    """compare() on made-up findings: a code one shape lacks is a disagreement, a repeated one is not."""
    manifest = {"shapes": ["plain", "header"], "programs": [
        {"file": "c0000_plain.cpp", "config_id": 0, "shape": "plain"},
        {"file": "c0000_header.cpp", "config_id": 0, "shape": "header"},
        {"file": "c0001_plain.cpp", "config_id": 1, "shape": "plain"},
        {"file": "c0001_header.cpp", "config_id": 1, "shape": "header"}]}
    findings = [{"path": "/x/c0000_plain.cpp", "code": "FL105", "severity": "error"},
                {"path": "/x/c0000_header.h", "code": "FL105", "severity": "error"},
                {"path": "/x/c0000_header.cpp", "code": "FL105", "severity": "error"},
                {"path": "/x/c0001_plain.cpp", "code": "FL112", "severity": "error"},
                {"path": "/x/c0001_header.h", "code": "FL127", "severity": "error"}]
    report = shapes.compare(manifest, findings)
    assert report["identical"] == 1 and list(report["differing"]) == [1]
    assert report["differing"][1] == {"plain": ["FL112"], "header": ["FL127"]}
    assert report["per_shape"]["header"] == {"differs": 1, "misses": 1, "adds": 1}


def test_the_score_reads_the_mutation_sets_record() -> None:
    """score(): configuration cNNNN is the mutation set's mNNNN, whose GPU verdict scores every shape."""
    manifest = {"seed": 1, "count": 2, "shapes": ["plain", "class"], "programs": [
        {"file": f"c000{i}_{s}.cpp", "config_id": i, "shape": s} for i in (0, 1) for s in ("plain", "class")]}
    names = [m["file"] for m in shapes.generate_mutations(1, 2)]
    truth = {"programs": {f"/gpu/{names[0]}": {"works": False}, f"/gpu/{names[1]}": {"works": True}}}
    findings = [{"path": "c0000_plain.cpp", "code": "FL105", "severity": "error"},
                {"path": "c0001_class.cpp", "code": "FL127", "severity": "error"}]
    got = shapes.score(manifest, findings, truth)
    assert got["plain"] == {"failing": 1, "caught": 1, "working": 1, "false_errors": 0, "no_truth": 0}
    assert got["class"] == {"failing": 1, "caught": 0, "working": 1, "false_errors": 1, "no_truth": 0}


def test_each_shape_is_its_own_code() -> None:
    """The twelve writers give twelve different programs for one configuration, each naming its shape."""
    entries = shapes.generate(SEED, 1)
    texts = {e["shape"]: shapes.program_text(e) for e in entries}
    assert len(set(texts.values())) == len(shapes.SHAPES) == 12
    assert "std::optional" in texts["struct"] and "switch (t)" in texts["enum"]
    assert "CudaDataType<" in texts["traits"] and "class LtMatmulDescriptor" in texts["class"]
    assert '#include "c0000_header.h"' in texts["header"] and "auto set = [&]" in texts["lambda"]
    assert "class GemmWrapper" in texts["wrapper"] and "wrapper.setGemmConfig(" in texts["wrapper"]
    assert "static StatusOr<MatmulDesc> Create(" in texts["factory"] and "RETURN_IF_ERROR(SetAttr(" in texts["factory"]
    assert "get_cuda_dtype(inputA->data.dtype)" in texts["te"] and "if (inputA->scale_inv != nullptr)" in texts["te"]
    assert "MatmulDescBuilder(CUBLAS_COMPUTE_" in texts["builder"] and ".build();" in texts["builder"]


def test_the_space_sample_draws_every_data_family_and_both_verdicts() -> None:
    """space_sample(): configurations of the measured table's space, not of a few bases: FP64, complex,
    int8 and FP8 types, FP8 scale modes and pointer modes occur, and the table supports some and
    rejects others; the same seed gives the same configurations."""
    drawn = shapes.space_sample(SEED, 120)
    assert drawn == shapes.space_sample(SEED, 120)
    types = {d["config"]["a_type"] for d in drawn}
    assert {"CUDA_R_64F", "CUDA_C_32F", "CUDA_R_8I", "CUDA_R_8F_E4M3", "CUDA_R_16BF"} <= types
    assert any(d["config"]["a_scale_mode"] for d in drawn) and any(d["config"]["pointer_mode"] for d in drawn)
    verdicts = [d["table_supported"] for d in drawn]
    assert 0.3 < verdicts.count(True) / len(drawn) < 0.8 and verdicts.count(False) > 0
    assert [d["file"] for d in shapes.generate(SEED, 1, ("plain",), "space")] == ["s0000_plain.cpp"]
    assert Path(shapes.__file__).name == "shapes_cublaslt.py"


def test_the_score_reads_the_shape_programs_own_records() -> None:
    """score_records(): a program's truth is its own GPU run; one not run takes the verdict its
    configuration's run shapes agree on; shapes of one configuration the GPU judged differently are
    listed (the generator's bug, not the linter's)."""
    manifest = {"shapes": ["plain", "class"], "programs": [
        {"file": f"s000{i}_{s}.cpp", "config_id": i, "shape": s} for i in (0, 1, 2) for s in ("plain", "class")]}
    records = [{"programs": {"/gpu/s0000_plain.cpp": {"works": False}, "/gpu/s0000_class.cpp": {"works": False},
                             "/gpu/s0001_plain.cpp": {"works": True}}},
               {"programs": {"/gpu/s0002_plain.cpp": {"works": True}, "/gpu/s0002_class.cpp": {"works": False}}}]
    findings = [{"path": "s0000_plain.cpp", "code": "FL105", "severity": "error"},
                {"path": "s0001_class.cpp", "code": "FL127", "severity": "error"},
                {"path": "s0001_plain.cpp", "code": "FL002", "severity": "warning"}]
    got = shapes.score_records(manifest, findings, records)
    assert got["gpu_disagree"] == [2] and got["programs_run"] == 5
    assert got["per_shape"]["plain"] == {"failing": 1, "caught": 1, "working": 2, "false_errors": 0,
                                         "by_other_shape": 0, "no_truth": 0}
    assert got["per_shape"]["class"] == {"failing": 2, "caught": 0, "working": 1, "false_errors": 1,
                                         "by_other_shape": 1, "no_truth": 0}
