"""Findings on GEMMs shaped like the CUDALibrarySamples cuBLASLt samples that are not in the real-code
corpus (run as a held-out set: fixtures/cublaslt/held_out). A block-scaled NVFP4 GEMM is FL121 on
sm_90 and nothing else: the rules written for the wide types do not judge FP4 data. A planar complex
layout is outside the support table's measured space: FL127 only for the interleaved GEMM."""
from __future__ import annotations

import json

from cli_helpers import run_cli
from conftest import FIXTURES

HELD_OUT = FIXTURES / "cublaslt" / "held_out"


def _check(path) -> list[dict]:
    rc, out, err = run_cli("check", "--no-cache", "--output-format", "json", path)
    assert rc in (0, 1), err
    return json.loads(out)


def test_a_block_scaled_fp4_gemm_is_the_blackwell_scale_mode_only():
    found = _check(HELD_OUT / "nvfp4_block_scaled.cpp")
    # FL108 (scale pointers "not FP8") and FL106 (C BF16, D FP4) judged FP4 as a wide type before
    assert [(f["code"], f["line"]) for f in found] == [("FL121", 17)], found


def test_the_support_table_says_nothing_about_a_planar_complex_layout():
    (found,) = _check(HELD_OUT / "planar_complex.cpp")
    assert (found["code"], found["line"]) == ("FL127", 22)
    vias = [r["message"] for r in found["related"] if r["message"].startswith("via ")]
    assert vias == ["via interleaved_c16f() -> c16f_gemm(...)"], vias  # not planar_c16f's call


def test_whether_an_fp4_or_fp6_input_is_fp8_is_not_known():
    from fusionlint.rules.derived.cublaslt import any_fp8_input, d_is_fp8

    def view(a: str, b: str, d: str) -> dict:
        return {"layout_A": {"TYPE": a}, "layout_B": {"TYPE": b}, "layout_D": {"TYPE": d}}

    assert any_fp8_input(view("CUDA_R_4F_E2M1", "CUDA_R_4F_E2M1", "CUDA_R_16BF")) is None
    assert any_fp8_input(view("CUDA_R_6F_E2M3", "CUDA_R_16BF", "CUDA_R_16BF")) is None
    assert any_fp8_input(view("CUDA_R_8F_E4M3", "CUDA_R_4F_E2M1", "CUDA_R_16BF")) is True
    assert any_fp8_input(view("CUDA_R_16BF", "CUDA_R_16BF", "CUDA_R_16BF")) is False
    assert d_is_fp8(view("CUDA_R_16BF", "CUDA_R_16BF", "CUDA_R_4F_E2M1")) is None
    assert d_is_fp8(view("CUDA_R_16BF", "CUDA_R_16BF", "CUDA_R_16BF")) is False
