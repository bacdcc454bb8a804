"""Source mode's sizes of the sm_90 builders' shared memory against nvcc's own, over the whole sample.

kernels_ref/evidence/nvcc-sm90-storage-sweep.json holds, for a seeded random sample of CUTLASS 4.2 sm_90
builder configurations, ``sizeof(CollectiveEpilogue::SharedStorage)``, the mainloop's builder-chosen
``Stages`` and ``sizeof(GemmKernel::SharedStorage)``, printed by host programs nvcc built
(:mod:`fusionlint.evidence.sweep_sm90_storage`). The very declarations nvcc compiled are parsed here
by fusionlint in source mode (no CUTLASS headers): every carve-out and every stage count must come
out known and equal to nvcc's.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import ROOT
from fusionlint.evidence.sweep_sm90_storage import INCLUDES, declarations, sample
from fusionlint.frontend.cutlass import extract_cutlass
from fusionlint.frontend.parse import ParseOptions, parse_file
from fusionlint.model import sm90_storage

RECORD = ROOT / "kernels_ref" / "evidence" / "nvcc-sm90-storage-sweep.json"


@lru_cache(maxsize=None)
def record() -> dict:
    return json.loads(RECORD.read_text())


def compiled() -> list[dict]:
    return [c for c in record()["configurations"] if c["compiles"]]


@lru_cache(maxsize=None)
def source_mode_gemms(tmp: str) -> dict[int, object]:
    """The sample's declarations in one file, read by fusionlint without the CUTLASS headers: the GEMM of
    each ``cfg<id>`` namespace by its id."""
    path = Path(tmp) / "sweep.cu"
    text = "\n".join(f"#include \"{h}\"" for h in INCLUDES) + "\n\n" + "\n".join(declarations(c) for c in compiled())
    path.write_text(text)
    starts = [(i, int(line.split()[1][3:])) for i, line in enumerate(text.splitlines(), 1)
              if line.startswith("namespace cfg")]
    out = {}
    for g in extract_cutlass(parse_file(path, ParseOptions(use_system_headers=False))):
        ids = [cid for line, cid in starts if line <= g.loc.line]
        out[ids[-1]] = g
    return out


def test_the_record_is_the_seeded_sample():
    rec = record()
    fresh = sample(rec["seed"], rec["count"])
    kept = [{k: v for k, v in c.items() if k in fresh[0]} for c in rec["configurations"]]
    assert kept == fresh
    assert len(compiled()) >= 0.9 * rec["count"]


def test_every_carveout_and_stage_count_equals_nvccs(tmp_path_factory):
    gemms = source_mode_gemms(str(tmp_path_factory.mktemp("sweep")))
    wrong, missing = [], []
    for c in compiled():
        g = gemms.get(c["id"])
        if g is None or g.mainloop is None:
            missing.append(c["id"])
            continue
        ml = g.mainloop
        if c["stage_count"] == "carveout":
            if ml.carveout_bytes.value != c["epilogue_storage_bytes"]:
                wrong.append((c["id"], "carveout", ml.carveout_bytes.value or ml.carveout_bytes.unknown,
                              c["epilogue_storage_bytes"]))
        if ml.stages.value != c["mainloop_stages"]:
            wrong.append((c["id"], "stages", ml.stages.value or ml.stages.unknown, c["mainloop_stages"]))
    assert not missing and not wrong


def test_a_fusion_with_shared_memory_stays_unknown(tmp_path):
    cfg = dict(compiled()[0], id=9999, epilogue_schedule="cutlass::epilogue::TmaWarpSpecializedCooperative"
               if "Cooperative" in compiled()[0]["kernel_schedule"] else "cutlass::epilogue::TmaWarpSpecialized",
               fusion="cutlass::epilogue::fusion::LinCombPerRowBias<{d}, float, {c}, float, float>",
               stage_count="carveout")
    path = tmp_path / "bias.cu"
    path.write_text("\n".join(f"#include \"{h}\"" for h in INCLUDES) + "\n\n" + declarations(cfg))
    (g,) = extract_cutlass(parse_file(path, ParseOptions(use_system_headers=False)))
    assert g.mainloop.carveout_bytes.value is None and "CUTLASS headers" in g.mainloop.carveout_bytes.unknown
    assert g.mainloop.stages.value is None


@pytest.mark.parametrize("m,n,k,bits,carveout,stages", [
    (128, 256, 64, 16, 33792, 4),  # kernels_ref/cutlass/bf16_coop_1x1.cu, nvcc and the instantiated mode
    (128, 128, 64, 16, 0, 7),
])
def test_auto_stage_count(m, n, k, bits, carveout, stages):
    assert sm90_storage.auto_stage_count(carveout, m, n, k, bits, bits) == stages
