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

SEED, SAMPLE = 1, 40
KNOWN = FIXTURES / "shapes" / "known-divergences.json"


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("shapes")
    shapes.write_set(SEED, SAMPLE, out)
    rc, stdout, err = run_cli("--exit-zero", "--output-format", "json", "--no-system-headers",
                              "-I", ROOT / "fusionlint" / "evidence" / "include", out)
    assert rc == 0, err
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return shapes.compare(manifest, json.loads(stdout))


@pytest.mark.slow
def test_every_shape_program_is_checked(compared) -> None:
    assert compared["configurations"] == SAMPLE and compared["shapes"] == list(shapes.SHAPES)
    assert compared["fl000"] == []


@pytest.mark.slow
def test_the_shapes_of_a_configuration_get_the_same_codes(compared) -> None:
    known = {int(k): v for k, v in json.loads(KNOWN.read_text(encoding="utf-8"))["differing"].items()}
    got = {int(k): v for k, v in compared["differing"].items()}
    new = {k: v for k, v in got.items() if known.get(k) != v}
    fixed = sorted(set(known) - set(got))
    assert new == {}, f"shapes disagree (not in {KNOWN.name}): {json.dumps(new)[:3000]}"
    assert fixed == [], f"no longer disagree: remove them from {KNOWN.name}: {fixed}"
    assert compared["identical"] >= SAMPLE - len(known)


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
    """The eight writers give eight different programs for one configuration, each naming its shape."""
    entries = shapes.generate(SEED, 1)
    texts = {e["shape"]: shapes.program_text(e) for e in entries}
    assert len(set(texts.values())) == len(shapes.SHAPES)
    assert "std::optional" in texts["struct"] and "switch (t)" in texts["enum"]
    assert "CudaDataType<" in texts["traits"] and "class LtMatmulDescriptor" in texts["class"]
    assert '#include "c0000_header.h"' in texts["header"] and "auto set = [&]" in texts["lambda"]
    assert Path(shapes.__file__).name == "shapes_cublaslt.py"
