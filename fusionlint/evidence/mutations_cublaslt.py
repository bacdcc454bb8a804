"""A seeded random-mutation test set of cuBLASLt programs, and its scoring.

Each program is one of the working configurations of ``kernels_ref/cublaslt/*.cpp`` (at
m = n = k = 64) with one or two configuration fields changed at random, written in one of four
code styles. Built with nvcc for sm_90a and run on a Hopper GPU by the evidence harness, the
programs record the truth (does the configuration work?); fusionlint's findings on the same
files are then scored against it::

    python3 -m fusionlint.evidence.mutations_cublaslt generate --seed 1 --count 640 --out DIR
    # on the GPU machine (the programs include fusionlint_probe.h and fusionlint_mutation.h):
    FUSIONLINT_EVIDENCE_INCLUDES=$PWD/fusionlint/evidence/include \\
        python3 -m fusionlint.evidence.harness --host-only --out DIR-h200 DIR/*.cpp
    # anywhere fusionlint is installed:
    fusionlint check --exit-zero --output-format json -I fusionlint/evidence/include DIR > DIR-findings.json
    python3 -m fusionlint.evidence.mutations_cublaslt evaluate --manifest DIR/manifest.json \\
        --truth DIR-h200.json --findings DIR-findings.json --markdown DIR-report.md

``resolve`` runs ``fusionlint facts`` on (a sample of) the programs and reports every field a
program sets that the linter did not recover with the value the manifest says.

Standard library only (it runs on GPU machines where only python3 is installed); ``resolve``
needs fusionlint installed, nothing else does.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

from fusionlint.evidence.mutation import mutate as mutate_fields
from fusionlint.evidence.sweep.space import EPILOGUES, POINTER_MODES

# ---- domains (the epilogues and pointer modes: the support sweep's own lists) -------------------
TYPES = ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_8I", "CUDA_R_32I", "CUDA_R_8F_E4M3",
         "CUDA_R_8F_E5M2", "CUDA_C_32F"]
COMPUTE_TYPES = ["CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_16F_PEDANTIC", "CUBLAS_COMPUTE_32F",
                 "CUBLAS_COMPUTE_32F_PEDANTIC", "CUBLAS_COMPUTE_32F_FAST_16F", "CUBLAS_COMPUTE_32F_FAST_16BF",
                 "CUBLAS_COMPUTE_32F_FAST_TF32", "CUBLAS_COMPUTE_64F", "CUBLAS_COMPUTE_64F_PEDANTIC",
                 "CUBLAS_COMPUTE_32I", "CUBLAS_COMPUTE_32I_PEDANTIC"]
SCALE_TYPES = ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_32I", "CUDA_C_32F"]
OPS = ["CUBLAS_OP_N", "CUBLAS_OP_T"]
ORDERS = ["CUBLASLT_ORDER_COL", "CUBLASLT_ORDER_ROW"]
SCALE_MODES = ["CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F", "CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F",
               "CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F", "CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F",
               "CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3", "CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0"]
BOOLS = [False, True]
BATCHES = [1, 2, 4]

# field -> (domain, weight of being picked for a mutation). The weights keep every group well
# represented: data types ~19%, compute 10%, scale type 8%, epilogue 12%, bias/aux 16%, scale
# pointers/amax 11%, scale modes 6%, pointer mode 5%, transposes/orders/batch 15%, fast accum 3%.
FIELDS: dict[str, tuple[list, float]] = {
    "a_type": (TYPES, 5), "b_type": (TYPES, 5), "c_type": (TYPES, 4), "d_type": (TYPES, 5),
    "compute_type": (COMPUTE_TYPES, 10), "scale_type": (SCALE_TYPES, 8),
    "transa": (OPS, 3), "transb": (OPS, 3),
    "order_a": (ORDERS, 1.5), "order_b": (ORDERS, 1.5), "order_c": (ORDERS, 1.5), "order_d": (ORDERS, 1.5),
    "batch": (BATCHES, 3),
    "epilogue": (EPILOGUES, 12),
    "bias_pointer": (BOOLS, 4), "bias_data_type": ([None, *TYPES], 5),
    "aux_pointer": (BOOLS, 2.5), "aux_ld": (BOOLS, 2), "aux_data_type": ([None, *TYPES], 3),
    "a_scale_pointer": (BOOLS, 2), "b_scale_pointer": (BOOLS, 2), "c_scale_pointer": (BOOLS, 2),
    "d_scale_pointer": (BOOLS, 2.5), "amax_d_pointer": (BOOLS, 2.5),
    "a_scale_mode": ([None, *SCALE_MODES], 3), "b_scale_mode": ([None, *SCALE_MODES], 3),
    "fast_accum": ([None, 0, 1], 3),
    "pointer_mode": ([None, *POINTER_MODES], 5),
}
STYLES = ["plain", "helper", "raii", "macro"]

FP8 = {"CUDA_R_8F_E4M3", "CUDA_R_8F_E5M2"}
COMPLEX = {"CUDA_C_32F"}
BIAS_EPILOGUES = {"CUBLASLT_EPILOGUE_BIAS", "CUBLASLT_EPILOGUE_RELU_BIAS", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS",
                  "CUBLASLT_EPILOGUE_GELU_BIAS", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS"}
RELU_EPILOGUES = {"CUBLASLT_EPILOGUE_RELU", "CUBLASLT_EPILOGUE_RELU_AUX", "CUBLASLT_EPILOGUE_RELU_BIAS",
                  "CUBLASLT_EPILOGUE_RELU_AUX_BIAS"}
GELU_EPILOGUES = {"CUBLASLT_EPILOGUE_GELU", "CUBLASLT_EPILOGUE_GELU_AUX", "CUBLASLT_EPILOGUE_GELU_BIAS",
                  "CUBLASLT_EPILOGUE_GELU_AUX_BIAS"}
BACKWARD_EPILOGUES = {"CUBLASLT_EPILOGUE_DRELU", "CUBLASLT_EPILOGUE_DRELU_BGRAD", "CUBLASLT_EPILOGUE_DGELU",
                      "CUBLASLT_EPILOGUE_DGELU_BGRAD", "CUBLASLT_EPILOGUE_BGRADA", "CUBLASLT_EPILOGUE_BGRADB"}
RELU_MASK_EPILOGUES = {"CUBLASLT_EPILOGUE_RELU_AUX", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS", "CUBLASLT_EPILOGUE_DRELU",
                       "CUBLASLT_EPILOGUE_DRELU_BGRAD"}
VECTOR_POINTER_MODES = {"CUBLASLT_POINTER_MODE_DEVICE_VECTOR", "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO",
                        "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST"}
BLACKWELL_SCALE_MODES = {"CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3", "CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0"}

# C++ element and host-scalar spellings of each cudaDataType_t.
CTYPE = {"CUDA_R_16F": "__half", "CUDA_R_16BF": "__nv_bfloat16", "CUDA_R_32F": "float", "CUDA_R_64F": "double",
         "CUDA_R_8I": "int8_t", "CUDA_R_32I": "int32_t", "CUDA_R_8F_E4M3": "__nv_fp8_e4m3",
         "CUDA_R_8F_E5M2": "__nv_fp8_e5m2", "CUDA_C_32F": "cuComplex"}


def host_scalar(scale_type: str, value: float) -> str:
    """A host constant of the scale type, as a user writes it."""
    return {"CUDA_R_32F": f"{value:.1f}f", "CUDA_R_64F": f"{value:.1f}", "CUDA_R_32I": f"{int(value)}",
            "CUDA_R_16F": f"__float2half({value:.1f}f)", "CUDA_R_16BF": f"__float2bfloat16({value:.1f}f)",
            "CUDA_C_32F": f"{{{value:.1f}f, 0.0f}}"}[scale_type]


# ---- base configurations (kernels_ref/cublaslt/*.cpp, at m = n = k = 64) -------------------------
M = N = K = 64


def _config(ab: str, **kw) -> dict:
    cfg = {
        "a_type": ab, "b_type": ab, "c_type": ab, "d_type": ab,
        "compute_type": "CUBLAS_COMPUTE_32F", "scale_type": "CUDA_R_32F",
        "transa": "CUBLAS_OP_T", "transb": "CUBLAS_OP_N",
        "order_a": "CUBLASLT_ORDER_COL", "order_b": "CUBLASLT_ORDER_COL", "order_c": "CUBLASLT_ORDER_COL",
        "order_d": "CUBLASLT_ORDER_COL",
        "batch": 1,
        "epilogue": "CUBLASLT_EPILOGUE_DEFAULT",
        "bias_pointer": False, "bias_data_type": None,
        "aux_pointer": False, "aux_ld": False, "aux_data_type": None,
        "a_scale_pointer": False, "b_scale_pointer": False, "c_scale_pointer": False, "d_scale_pointer": False,
        "amax_d_pointer": False,
        "a_scale_mode": None, "b_scale_mode": None,
        "fast_accum": None, "pointer_mode": None,
    }
    for key, value in kw.items():
        assert key in cfg, key
        cfg[key] = value
    return cfg


def _trans(t: str) -> dict:
    return {"transa": f"CUBLAS_OP_{t[0].upper()}", "transb": f"CUBLAS_OP_{t[1].upper()}"}


# name -> (configuration, constants). Constants are not mutated: alpha, beta, the values of the
# scales when their pointer is set (the kernels' 2.0 / 0.25 / 0.5; C's only matters with beta != 0),
# and the host-reference tolerance of the base (kernels_ref's, for D of the base's type).
BASES: dict[str, tuple[dict, dict]] = {}


def _add(name: str, cfg: dict, **consts) -> None:
    c = {"alpha": 1.0, "beta": 0.0, "a_scale": 2.0, "b_scale": 0.25, "c_scale": 0.5, "d_scale": 0.5}
    c.update(consts)
    BASES[name] = (cfg, c)


for _t in ("nn", "nt", "tn", "tt"):
    _add(f"bf16_{_t}", _config("CUDA_R_16BF", **_trans(_t)))
for _t in ("nn", "nt", "tn", "tt"):
    _add(f"fp16_{_t}", _config("CUDA_R_16F", **_trans(_t)))
_add("tf32_tn", _config("CUDA_R_32F", compute_type="CUBLAS_COMPUTE_32F_FAST_TF32"))
_add("bf16_tn_bias", _config("CUDA_R_16BF", epilogue="CUBLASLT_EPILOGUE_BIAS", bias_pointer=True,
                             bias_data_type="CUDA_R_16BF"))
_add("bf16_tn_gelu_bias", _config("CUDA_R_16BF", epilogue="CUBLASLT_EPILOGUE_GELU_BIAS", bias_pointer=True,
                                  bias_data_type="CUDA_R_16BF"))
_add("bf16_tn_gelu_aux", _config("CUDA_R_16BF", epilogue="CUBLASLT_EPILOGUE_GELU_AUX", aux_pointer=True, aux_ld=True))
_add("bf16_tn_relu_aux", _config("CUDA_R_16BF", epilogue="CUBLASLT_EPILOGUE_RELU_AUX", aux_pointer=True, aux_ld=True))
_add("bf16_tn_strided_batched", _config("CUDA_R_16BF", batch=4), beta=1.0)
_add("fp8_e4m3_tn_scaled", _config("CUDA_R_8F_E4M3", c_type="CUDA_R_16BF", d_type="CUDA_R_16BF",
                                   a_scale_pointer=True, b_scale_pointer=True))
_add("fp8_e4m3_e5m2_tn_scaled", _config("CUDA_R_8F_E4M3", b_type="CUDA_R_8F_E5M2", c_type="CUDA_R_16BF",
                                        d_type="CUDA_R_16BF", a_scale_pointer=True, b_scale_pointer=True))
_add("fp8_e4m3_tn_e4m3_out", _config("CUDA_R_8F_E4M3", c_type="CUDA_R_16BF", a_scale_pointer=True,
                                     b_scale_pointer=True, d_scale_pointer=True, amax_d_pointer=True))
_add("fp8_e4m3_e5m2_tn_e5m2_out", _config("CUDA_R_8F_E4M3", b_type="CUDA_R_8F_E5M2", c_type="CUDA_R_16BF",
                                          d_type="CUDA_R_8F_E5M2", d_scale_pointer=True, amax_d_pointer=True),
     d_scale=0.25)


# ---- mutation ----------------------------------------------------------------------------------
def mutate(rng: random.Random, cfg: dict) -> tuple[dict, list[dict]]:
    """1 or 2 distinct fields, each given a different value of its domain."""
    return mutate_fields(rng, FIELDS, cfg)


def generate(seed: int, count: int) -> list[dict]:
    """The manifest entries (without the program text) of ``count`` programs for ``seed``."""
    rng = random.Random(seed)
    names = sorted(BASES)
    entries = []
    for i in range(count):
        style = STYLES[i % len(STYLES)]
        base = rng.choice(names)
        cfg, changes = mutate(rng, BASES[base][0])
        variant = rng.randrange(1 << 30)  # small per-program choices of how a style spells things
        entries.append({"file": f"m{i:04d}_{style}.cpp", "index": i, "base": base, "style": style,
                        "mutations": changes, "config": cfg, "constants": dict(BASES[base][1]),
                        "variant": variant})
    return entries


# ---- what a program sets, and its host reference ----------------------------------------------
def default_bias_type(cfg: dict) -> str:
    """The bias type cuBLASLt reads when BIAS_DATA_TYPE is unset: the D type; for FP8 inputs the FP8
    table's (BF16 for an FP32 D, the C type for an FP8 D)."""
    if cfg["a_type"] in FP8 or cfg["b_type"] in FP8:
        if cfg["d_type"] == "CUDA_R_32F":
            return "CUDA_R_16BF"
        if cfg["d_type"] in FP8:
            return cfg["c_type"]
    return cfg["d_type"]


def bias_buffer_type(cfg: dict) -> str:
    return cfg["bias_data_type"] or default_bias_type(cfg)


def aux_ld_value(cfg: dict) -> int:
    """The aux ld a careful user writes for the epilogue: 128 (bits) for a ReLU bit-mask, else 64."""
    return 128 if cfg["epilogue"] in RELU_MASK_EPILOGUES else M


def storage(cfg: dict, which: str) -> tuple[int, int, int]:
    """(rows, cols, ld) of a layout as created (m = n = k = 64, so every one is 64 x 64, ld 64)."""
    if which == "A":
        rows, cols = (K, M) if cfg["transa"] == "CUBLAS_OP_T" else (M, K)
    elif which == "B":
        rows, cols = (N, K) if cfg["transb"] == "CUBLAS_OP_T" else (K, N)
    else:
        rows, cols = M, N
    ld = cols if cfg[f"order_{which.lower()}"] == "CUBLASLT_ORDER_ROW" else rows
    return rows, cols, ld


def storage_names(cfg: dict, which: str) -> tuple[str, str, str]:
    """:func:`storage` in terms of m, n and k (the plain style's locals)."""
    if which == "A":
        rows, cols = ("k", "m") if cfg["transa"] == "CUBLAS_OP_T" else ("m", "k")
    elif which == "B":
        rows, cols = ("n", "k") if cfg["transb"] == "CUBLAS_OP_T" else ("k", "n")
    else:
        rows, cols = "m", "n"
    return rows, cols, (cols if cfg[f"order_{which.lower()}"] == "CUBLASLT_ORDER_ROW" else rows)


def _epilogue_is_set(cfg: dict, base_cfg: dict) -> bool:
    return cfg["epilogue"] != "CUBLASLT_EPILOGUE_DEFAULT" or base_cfg["epilogue"] != "CUBLASLT_EPILOGUE_DEFAULT"


def _batch_is_set(cfg: dict, base_cfg: dict) -> bool:
    return cfg["batch"] > 1 or base_cfg["batch"] > 1


def desc_attributes(cfg: dict, base_cfg: dict) -> list[dict]:
    """The matmul-descriptor attributes a program sets, in order: attribute (without the
    CUBLASLT_MATMUL_DESC_ prefix), C++ type of the value, the value (an enum name, a number, or
    the name of a pointer variable), the local's name, and whether it is a pointer."""
    out = []

    def add(attr: str, ctype: str, value, local: str, pointer: bool = False) -> None:
        out.append({"attr": attr, "ctype": ctype, "value": value, "local": local, "pointer": pointer})

    add("TRANSA", "int32_t", cfg["transa"], "transa")
    add("TRANSB", "int32_t", cfg["transb"], "transb")
    if _epilogue_is_set(cfg, base_cfg):
        add("EPILOGUE", "cublasLtEpilogue_t", cfg["epilogue"], "epilogue")
    if cfg["bias_pointer"]:
        add("BIAS_POINTER", "ptr", "bias", "bias", True)
    if cfg["bias_data_type"] is not None:
        add("BIAS_DATA_TYPE", "int32_t", cfg["bias_data_type"], "bias_type")
    if cfg["aux_pointer"]:
        add("EPILOGUE_AUX_POINTER", "ptr", "aux", "aux", True)
    if cfg["aux_ld"]:
        add("EPILOGUE_AUX_LD", "int64_t", aux_ld_value(cfg), "aux_ld")
    if cfg["aux_data_type"] is not None:
        add("EPILOGUE_AUX_DATA_TYPE", "int32_t", cfg["aux_data_type"], "aux_type")
    if cfg["a_scale_mode"] is not None:
        add("A_SCALE_MODE", "int32_t", cfg["a_scale_mode"], "a_scale_mode")
    if cfg["b_scale_mode"] is not None:
        add("B_SCALE_MODE", "int32_t", cfg["b_scale_mode"], "b_scale_mode")
    for x in "abcd":
        if cfg[f"{x}_scale_pointer"]:
            add(f"{x.upper()}_SCALE_POINTER", "ptr", f"{x}_scale", f"{x}_scale", True)
    if cfg["amax_d_pointer"]:
        add("AMAX_D_POINTER", "ptr", "amax_d", "amax_d", True)
    if cfg["fast_accum"] is not None:
        add("FAST_ACCUM", "int8_t", cfg["fast_accum"], "fast_accum")
    if cfg["pointer_mode"] is not None:
        add("POINTER_MODE", "int32_t", cfg["pointer_mode"], "pointer_mode")
    return out


def layout_attributes(cfg: dict, base_cfg: dict, which: str) -> list[dict]:
    out = []
    if cfg[f"order_{which.lower()}"] == "CUBLASLT_ORDER_ROW":
        out.append({"attr": "ORDER", "ctype": "int32_t", "value": "CUBLASLT_ORDER_ROW", "local": "order_row"})
    if _batch_is_set(cfg, base_cfg):
        rows, cols, ld = storage(cfg, which)
        stride = ld * (rows if cfg[f"order_{which.lower()}"] == "CUBLASLT_ORDER_ROW" else cols)
        out.append({"attr": "BATCH_COUNT", "ctype": "int32_t", "value": cfg["batch"], "local": "batch"})
        out.append({"attr": "STRIDED_BATCH_OFFSET", "ctype": "int64_t", "value": stride,
                    "local": f"stride_{which.lower()}"})
    return out


def _dtype_tolerance(cfg: dict) -> tuple[float, float]:
    d = cfg["d_type"]
    tol = {"CUDA_R_16BF": 0.1, "CUDA_R_16F": 0.02, "CUDA_R_32F": 0.05, "CUDA_R_8F_E4M3": 1.0,
           "CUDA_R_8F_E5M2": 1.0, "CUDA_R_32I": 0.5}[d]
    rel = 0.125 if d in FP8 else 0.0  # half a step of an FP8 D (E5M2: 2 mantissa bits)
    if cfg["compute_type"] in ("CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_16F_PEDANTIC"):
        tol = max(tol, 0.25)  # FP16 accumulation of 64 products
    if cfg["epilogue"] in GELU_EPILOGUES:
        tol = max(tol, 0.1)  # GELU's tanh approximation on the GPU
    return tol, rel


def reference(cfg: dict, consts: dict) -> dict:
    """How the program checks D: ``{"skip": why}`` when the host reference does not model the
    configuration, else the ProbeCheck settings (the scales a user set are applied as they asked,
    whatever the types: a scale cuBLASLt ignored makes D differ from what the program wanted)."""
    why = []
    mats = [cfg[f"{x}_type"] for x in "abcd"]
    if any(t in COMPLEX for t in mats) or cfg["scale_type"] in COMPLEX:
        why.append("complex data or scale type")
    if "CUDA_R_64F" in mats:
        why.append("64-bit floating-point data")
    if cfg["d_type"] == "CUDA_R_8I":
        why.append("int8 D (saturation not modelled)")
    if cfg["epilogue"] in BACKWARD_EPILOGUES:
        why.append(f"epilogue {cfg['epilogue']} has no host reference")
    if cfg["pointer_mode"] in VECTOR_POINTER_MODES:
        why.append(f"pointer mode {cfg['pointer_mode']}")
    for x in "ab":
        mode = cfg[f"{x}_scale_mode"]
        if mode in BLACKWELL_SCALE_MODES:
            why.append(f"{x.upper()} scale mode {mode} (non-float scales)")
        elif mode not in (None, "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F") and not cfg[f"{x}_scale_pointer"]:
            why.append(f"{x.upper()} scale mode {mode} without a scale pointer")
    bias = cfg["epilogue"] in BIAS_EPILOGUES and cfg["bias_pointer"]
    if bias and bias_buffer_type(cfg) in ("CUDA_C_32F", "CUDA_R_64F"):
        why.append(f"bias of type {bias_buffer_type(cfg)}")
    activation = ("PROBE_RELU" if cfg["epilogue"] in RELU_EPILOGUES else
                  "PROBE_GELU" if cfg["epilogue"] in GELU_EPILOGUES else "PROBE_NONE")
    if cfg["d_scale_pointer"] and (bias or activation != "PROBE_NONE"):
        why.append("D scale with an epilogue")
    if cfg["c_scale_pointer"] and consts["beta"] != 0:
        why.append("C scale with beta != 0")
    if why:
        return {"skip": "; ".join(why)}
    scale = 1.0
    for x in "abd":
        if cfg[f"{x}_scale_pointer"]:
            scale *= consts[f"{x}_scale"]
    beta = consts["beta"] * (consts["d_scale"] if cfg["d_scale_pointer"] else 1.0)
    tol, rel = _dtype_tolerance(cfg)
    check = {"transa": cfg["transa"] == "CUBLAS_OP_T", "transb": cfg["transb"] == "CUBLAS_OP_T",
             "alpha": consts["alpha"], "beta": beta, "scale": scale, "bias": bias, "activation": activation,
             "tolerance": tol, "rel_tolerance": rel}
    # The GELU_AUX forms also write the pre-activation values to aux (kernels_ref checks them): in
    # the D type, column-major, where that is certain.
    check["aux"] = (cfg["epilogue"] in ("CUBLASLT_EPILOGUE_GELU_AUX", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS")
                    and cfg["aux_pointer"] and cfg["aux_ld"] and cfg["batch"] == 1
                    and cfg["aux_data_type"] in (None, cfg["d_type"])
                    and cfg["order_d"] == "CUBLASLT_ORDER_COL" and cfg["a_type"] not in FP8
                    and cfg["b_type"] not in FP8 and cfg["d_type"] not in FP8 | {"CUDA_R_32I"})
    return check


# ---- program text ------------------------------------------------------------------------------
def _f(x: float) -> str:
    return f"{x:g}f" if "." in f"{x:g}" or "e" in f"{x:g}" else f"{x:g}.0f"


class Program:
    """The pieces every style shares; the styles differ in how the descriptor, its attributes and
    the layouts are written (and where the types come from)."""

    def __init__(self, entry: dict):
        self.e = entry
        self.cfg = entry["config"]
        self.consts = entry["constants"]
        self.base_cfg = BASES[entry["base"]][0]
        self.rng = random.Random(entry["variant"])
        self.ref = reference(self.cfg, self.consts)
        self.style = entry["style"]
        self.macro = self.style == "macro"

    # type spellings: literal enum names, or the macro style's constexpr constants
    def t(self, which: str) -> str:
        return f"kType{which}" if self.macro else self.cfg[f"{which.lower()}_type"]

    def header(self) -> list[str]:
        e = self.e
        muts = "; ".join(f"{m['field']} {m['old']} -> {m['new']}" for m in e["mutations"])
        numerics = "skipped: " + self.ref["skip"] if "skip" in self.ref else "checked against the host reference"
        lines = [f"// fusionlint cuBLASLt mutation program {e['file']} (style {e['style']}): base {e['base']}",
                 f"// (kernels_ref/cublaslt/{e['base']}.cpp at m = n = k = 64), mutated: {muts}.",
                 f"// D numerics: {numerics}. Generated by fusionlint.evidence.mutations_cublaslt.",
                 "#include <cstdint>", "#include <vector>"]
        if self.needs_complex():
            lines.append("#include <cuComplex.h>")
        lines += ['#include "fusionlint_probe.h"', '#include "fusionlint_mutation.h"', ""]
        return lines

    def needs_complex(self) -> bool:
        return self.cfg["scale_type"] in COMPLEX or (self.cfg["bias_pointer"] and bias_buffer_type(self.cfg) in COMPLEX)

    def buffers(self, ind: str) -> list[str]:
        c = self.cfg
        out = []
        batch = c["batch"]
        for which, seed in (("A", 1), ("B", 2), ("C", 3), ("D", 4)):
            rows, cols, ld = storage(c, which)
            row_major = c[f"order_{which.lower()}"] == "CUBLASLT_ORDER_ROW"
            dims = self.dims(which)
            args = f"{self.t(which)}, {', '.join(dims)}, {seed}"
            if row_major or batch > 1:
                args += f", {'true' if row_major else 'false'}"
            if batch > 1:
                args += f", {batch}, {ld * (rows if row_major else cols)}"
            out.append(f"{ind}ProbeMatrix {which} = mut_matrix({args});")
        if c["bias_pointer"]:
            bt = bias_buffer_type(c)
            out.append(f"{ind}std::vector<float> bias_values;")
            out.append(f"{ind}{CTYPE[bt]} *bias = static_cast<{CTYPE[bt]} *>(mut_vector({bt}, {self.dim(M)}, 5, "
                       f"&bias_values));")
        if c["aux_pointer"]:
            if self.ref.get("aux"):
                out.append(f"{ind}ProbeMatrix Aux = mut_matrix({self.t('D')}, {self.dim(M)}, {self.dim(N, 'n')}, "
                           f"{aux_ld_value(c)}, 6);")
                out.append(f"{ind}void *aux = Aux.dev;")
            else:
                out.append(f"{ind}void *aux = mut_buffer({aux_ld_value(c) * N * 8 * batch});"
                           "  // generous for any aux type")
        for x in "abcd":
            if c[f"{x}_scale_pointer"]:
                out.append(f"{ind}const float {x}_scale_value = {_f(self.consts[x + '_scale'])};")
                out.append(f"{ind}const float *{x}_scale = "
                           f"static_cast<const float *>(mut_scale_buffer({x}_scale_value));")
        if c["amax_d_pointer"]:
            out.append(f"{ind}float *amax_d = static_cast<float *>(mut_scale_buffer(0.0f));")
        out.append(f"{ind}const uint64_t workspace_size = 32ull << 20;  // 32 MiB, the recommended size on Hopper")
        out.append(f"{ind}void *workspace = probe_workspace(workspace_size);")
        return out

    def dim(self, v: int, role: str = "m") -> str:
        """A dimension as the style writes it: the plain style's m/n/k locals, the macro style's
        kM, or the number (every dimension is 64)."""
        if self.macro:
            return "kM" if v == M else str(v)
        return role if self.style == "plain" else str(v)

    def dims(self, which: str) -> list[str]:
        rows, cols, ld = storage(self.cfg, which)
        if self.style != "plain":
            return [self.dim(rows), self.dim(cols), self.dim(ld)]
        return list(storage_names(self.cfg, which))

    def scalars(self, ind: str) -> tuple[list[str], str, str]:
        """alpha/beta declarations for the pointer mode, and the two matmul arguments."""
        c, st = self.cfg, self.cfg["scale_type"]
        ct = CTYPE[st]
        alpha, beta = self.consts["alpha"], self.consts["beta"]
        mode = c["pointer_mode"]
        sv = "kScale" if self.macro else st
        if mode in (None, "CUBLASLT_POINTER_MODE_HOST"):
            return ([f"{ind}const {ct} alpha = {host_scalar(st, alpha)}, beta = {host_scalar(st, beta)};"],
                    "&alpha", "&beta")
        if mode == "CUBLASLT_POINTER_MODE_DEVICE":
            return ([f"{ind}const {ct} *alpha = static_cast<const {ct} *>(mut_device_values({sv}, 1, {_f(alpha)}));",
                     f"{ind}const {ct} *beta = static_cast<const {ct} *>(mut_device_values({sv}, 1, {_f(beta)}));"],
                    "alpha", "beta")
        lines = [f"{ind}// alpha: one value per row of D, in device memory",
                 f"{ind}const {ct} *alpha = static_cast<const {ct} *>(mut_device_values({sv}, {self.dim(M)}, "
                 f"{_f(alpha)}));"]
        if mode == "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST":
            lines.append(f"{ind}const {ct} beta = {host_scalar(st, beta)};")
            return lines, "alpha", "&beta"
        value = 0.0 if mode == "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO" else beta
        lines.append(f"{ind}const {ct} *beta = static_cast<const {ct} *>(mut_device_values({sv}, {self.dim(M)}, "
                     f"{_f(value)}));")
        return lines, "alpha", "beta"

    def verify(self, ind: str) -> list[str]:
        r = self.ref
        if "skip" in r:
            return [f'{ind}mut_skip("{r["skip"]}");']
        out = [f"{ind}ProbeCheck check;",
               f"{ind}check.transa = {str(r['transa']).lower()}, check.transb = {str(r['transb']).lower()};",
               f"{ind}check.A = &A, check.B = &B, check.C = &C, check.D = &D;"]
        if r["alpha"] != 1.0:
            out.append(f"{ind}check.alpha = {_f(r['alpha'])};")
        if r["beta"] != 0.0:
            out.append(f"{ind}check.beta = {_f(r['beta'])};")
        scales = [f"{x}_scale_value" for x in "abd" if self.cfg[f"{x}_scale_pointer"]]
        if scales:
            out.append(f"{ind}check.scale = {' * '.join(scales)};")
        if r["bias"]:
            out.append(f"{ind}check.bias = &bias_values;")
        if r["activation"] != "PROBE_NONE":
            out.append(f"{ind}check.activation = {r['activation']};")
        out.append(f"{ind}check.tolerance = {r['tolerance']:g};")
        if r["rel_tolerance"]:
            out.append(f"{ind}check.rel_tolerance = {r['rel_tolerance']:g};  // the rounding of an FP8 D")
        out.append(f"{ind}probe_verify(check);")
        if r.get("aux"):
            out += [f"{ind}ProbeCheck aux_check = check;  // aux holds the values before GELU",
                    f"{ind}aux_check.D = &Aux;", f"{ind}aux_check.activation = PROBE_NONE;",
                    f"{ind}probe_verify(aux_check);"]
        return out

    # -- attribute value spellings
    def value_expr(self, a: dict) -> str:
        return str(a["value"])

    def text(self) -> str:
        return "\n".join(STYLE_WRITERS[self.style](self)) + "\n"


def _plain(p: Program) -> list[str]:
    c = p.cfg
    i = "  "
    out = p.header() + ["int main() {", f"{i}const int m = {M}, n = {N}, k = {K};  // square: every layout is 64 x 64"]
    out += p.buffers(i)
    out += ["", f"{i}cublasLtHandle_t lt;", f"{i}PROBE(cublasLtCreate(&lt));", f"{i}cublasLtMatmulDesc_t desc;",
            f"{i}PROBE(cublasLtMatmulDescCreate(&desc, {c['compute_type']}, {c['scale_type']}));"]
    attrs = desc_attributes(c, p.base_cfg)
    pending_trans = [a for a in attrs if a["attr"] in ("TRANSA", "TRANSB")]
    out.append(f"{i}const int32_t transa = {pending_trans[0]['value']}, transb = {pending_trans[1]['value']};")
    for a in attrs:
        if not a["pointer"] and a["attr"] not in ("TRANSA", "TRANSB"):
            out.append(f"{i}const {a['ctype']} {a['local']} = {a['value']};")
        out.append(f"{i}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, &{a['local']}, "
                   f"sizeof({a['local']})));")
    out += ["", f"{i}cublasLtMatrixLayout_t la, lb, lc, ld;"]
    declared: set[str] = set()
    for which, var in (("A", "la"), ("B", "lb"), ("C", "lc"), ("D", "ld")):
        rows, cols, ld = storage(c, which)
        out.append(f"{i}PROBE(cublasLtMatrixLayoutCreate(&{var}, {c[which.lower() + '_type']}, "
                   f"{', '.join(p.dims(which))}));")
        for a in layout_attributes(c, p.base_cfg, which):
            if a["local"] not in declared:
                out.append(f"{i}const {a['ctype']} {a['local']} = {a['value']};")
                declared.add(a["local"])
            out.append(f"{i}PROBE(cublasLtMatrixLayoutSetAttribute({var}, CUBLASLT_MATRIX_LAYOUT_{a['attr']}, "
                       f"&{a['local']}, sizeof({a['local']})));")
    out += _pref_heuristic_matmul(p, i, "desc", ("la", "lb", "lc", "ld"))
    out += p.verify(i)
    out += ["", f"{i}cudaDeviceSynchronize();", f"{i}PROBE(cublasLtMatmulPreferenceDestroy(pref));"]
    out += [f"{i}PROBE(cublasLtMatrixLayoutDestroy({v}));" for v in ("la", "lb", "lc", "ld")]
    out += [f"{i}PROBE(cublasLtMatmulDescDestroy(desc));", f"{i}PROBE(cublasLtDestroy(lt));",
            f"{i}cudaFree(workspace);", f"{i}return 0;", "}"]
    return out


def _pref_heuristic_matmul(p: Program, i: str, desc: str, lays: tuple[str, ...]) -> list[str]:
    la, lb, lc, ld = lays
    scal, alpha, beta = p.scalars(i)
    return ["", f"{i}cublasLtMatmulPreference_t pref;", f"{i}PROBE(cublasLtMatmulPreferenceCreate(&pref));",
            f"{i}PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, "
            f"&workspace_size, sizeof(workspace_size)));",
            f"{i}cublasLtMatmulHeuristicResult_t result = {{}};", f"{i}int count = 0;",
            f"{i}PROBE(cublasLtMatmulAlgoGetHeuristic(lt, {desc}, {la}, {lb}, {lc}, {ld}, pref, 1, &result, &count));",
            *scal,
            f"{i}PROBE(cublasLtMatmul(lt, {desc}, {alpha}, A.dev, {la}, B.dev, {lb}, {beta}, C.dev, {lc}, D.dev, {ld},",
            f"{i}                     count > 0 ? &result.algo : nullptr, workspace, workspace_size, 0));", ""]


def _helper(p: Program) -> list[str]:
    c = p.cfg
    i = "  "
    out = p.header() + [
        "// Attribute setters and a layout maker, the way many codebases wrap cuBLASLt.",
        "template <typename T>",
        "void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const T &v) {",
        "  PROBE(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof(v)));",
        "}", "",
        "template <typename T>",
        "void set_layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, const T &v) {",
        "  PROBE(cublasLtMatrixLayoutSetAttribute(l, a, &v, sizeof(v)));",
        "}", "",
        "static cublasLtMatrixLayout_t make_layout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {",
        "  cublasLtMatrixLayout_t layout;",
        "  PROBE(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld));",
        "  return layout;",
        "}", "",
        "int main() {"]
    out += p.buffers(i)
    out += ["", f"{i}cublasLtHandle_t lt;", f"{i}PROBE(cublasLtCreate(&lt));", f"{i}cublasLtMatmulDesc_t desc;",
            f"{i}PROBE(cublasLtMatmulDescCreate(&desc, {c['compute_type']}, {c['scale_type']}));"]
    for a in desc_attributes(c, p.base_cfg):
        if a["pointer"]:
            out.append(f"{i}set_attr(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, {a['local']});")
        elif a["ctype"] in ("int32_t", "cublasLtEpilogue_t") and isinstance(a["value"], str) and p.rng.random() < 0.5:
            # a 4-byte enum passed as itself: sizeof(T) is 4 either way
            out.append(f"{i}set_attr(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, {a['value']});")
        else:
            ctype = "uint32_t" if a["ctype"] == "cublasLtEpilogue_t" else a["ctype"]
            out.append(f"{i}set_attr<{ctype}>(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, {a['value']});")
    out.append("")
    for which, var in (("A", "la"), ("B", "lb"), ("C", "lc"), ("D", "ld")):
        rows, cols, ld = storage(c, which)
        out.append(f"{i}cublasLtMatrixLayout_t {var} = make_layout({c[which.lower() + '_type']}, {rows}, {cols}, "
                   f"{ld});")
        for a in layout_attributes(c, p.base_cfg, which):
            out.append(f"{i}set_layout_attr<{a['ctype']}>({var}, CUBLASLT_MATRIX_LAYOUT_{a['attr']}, {a['value']});")
    out += _pref_heuristic_matmul(p, i, "desc", ("la", "lb", "lc", "ld"))
    out += p.verify(i)
    out += ["", f"{i}cudaDeviceSynchronize();", f"{i}PROBE(cublasLtMatmulPreferenceDestroy(pref));"]
    out += [f"{i}PROBE(cublasLtMatrixLayoutDestroy({v}));" for v in ("la", "lb", "lc", "ld")]
    out += [f"{i}PROBE(cublasLtMatmulDescDestroy(desc));", f"{i}PROBE(cublasLtDestroy(lt));",
            f"{i}cudaFree(workspace);", f"{i}return 0;", "}"]
    return out


def _raii(p: Program) -> list[str]:
    c = p.cfg
    i = "  "
    out = p.header() + [
        "// RAII owners of the descriptor and the layouts, with setter methods.",
        "class MatmulDesc {",
        " public:",
        "  MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {",
        "    PROBE(cublasLtMatmulDescCreate(&desc_, compute, scale));",
        "  }",
        "  ~MatmulDesc() { PROBE(cublasLtMatmulDescDestroy(desc_)); }",
        "  MatmulDesc(const MatmulDesc &) = delete;",
        "  MatmulDesc &operator=(const MatmulDesc &) = delete;",
        "  template <typename T>",
        "  void set(cublasLtMatmulDescAttributes_t attr, const T value) {",
        "    PROBE(cublasLtMatmulDescSetAttribute(desc_, attr, &value, sizeof(T)));",
        "  }",
        "  cublasLtMatmulDesc_t get() const { return desc_; }",
        "",
        " private:",
        "  cublasLtMatmulDesc_t desc_ = nullptr;",
        "};", "",
        "class Layout {",
        " public:",
        "  Layout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {",
        "    PROBE(cublasLtMatrixLayoutCreate(&layout_, type, rows, cols, ld));",
        "  }",
        "  ~Layout() { PROBE(cublasLtMatrixLayoutDestroy(layout_)); }",
        "  Layout(const Layout &) = delete;",
        "  Layout &operator=(const Layout &) = delete;",
        "  template <typename T>",
        "  void set(cublasLtMatrixLayoutAttribute_t attr, const T value) {",
        "    PROBE(cublasLtMatrixLayoutSetAttribute(layout_, attr, &value, sizeof(T)));",
        "  }",
        "  cublasLtMatrixLayout_t get() const { return layout_; }",
        "",
        " private:",
        "  cublasLtMatrixLayout_t layout_ = nullptr;",
        "};", "",
        "static void run(cublasLtHandle_t lt) {"]
    out += p.buffers(i)
    out += ["", f"{i}MatmulDesc desc({c['compute_type']}, {c['scale_type']});"]
    for a in desc_attributes(c, p.base_cfg):
        if a["pointer"]:
            out.append(f"{i}desc.set(CUBLASLT_MATMUL_DESC_{a['attr']}, {a['local']});")
        elif a["ctype"] in ("int32_t", "cublasLtEpilogue_t") and isinstance(a["value"], str) and p.rng.random() < 0.5:
            out.append(f"{i}desc.set(CUBLASLT_MATMUL_DESC_{a['attr']}, {a['value']});")
        else:
            ctype = "uint32_t" if a["ctype"] == "cublasLtEpilogue_t" else a["ctype"]
            out.append(f"{i}desc.set<{ctype}>(CUBLASLT_MATMUL_DESC_{a['attr']}, {a['value']});")
    out.append("")
    for which, var in (("A", "la"), ("B", "lb"), ("C", "lc"), ("D", "ld")):
        rows, cols, ld = storage(c, which)
        out.append(f"{i}Layout {var}({c[which.lower() + '_type']}, {rows}, {cols}, {ld});")
        for a in layout_attributes(c, p.base_cfg, which):
            out.append(f"{i}{var}.set<{a['ctype']}>(CUBLASLT_MATRIX_LAYOUT_{a['attr']}, {a['value']});")
    out += _pref_heuristic_matmul(p, i, "desc.get()", ("la.get()", "lb.get()", "lc.get()", "ld.get()"))
    out += p.verify(i)
    out += ["", f"{i}cudaDeviceSynchronize();", f"{i}PROBE(cublasLtMatmulPreferenceDestroy(pref));",
            f"{i}cudaFree(workspace);", "}", "",
            "int main() {", f"{i}cublasLtHandle_t lt;", f"{i}PROBE(cublasLtCreate(&lt));", f"{i}run(lt);",
            f"{i}PROBE(cublasLtDestroy(lt));", f"{i}return 0;", "}"]
    return out


def _macro(p: Program) -> list[str]:
    c = p.cfg
    i = "  "
    attrs = desc_attributes(c, p.base_cfg)
    consts = ["// The configuration as compile-time constants, set through macros.",
              f"constexpr cudaDataType_t kTypeA = {c['a_type']};", f"constexpr cudaDataType_t kTypeB = {c['b_type']};",
              f"constexpr cudaDataType_t kTypeC = {c['c_type']};", f"constexpr cudaDataType_t kTypeD = {c['d_type']};",
              f"constexpr cublasComputeType_t kCompute = {c['compute_type']};",
              f"constexpr cudaDataType_t kScale = {c['scale_type']};",
              f"constexpr int64_t kM = {M};"]
    names = {}
    for a in attrs:
        if a["pointer"]:
            continue
        name = "k" + "".join(w.capitalize() for w in a["local"].split("_"))
        names[a["attr"]] = name
        consts.append(f"constexpr {a['ctype']} {name} = {a['value']};")
    lay_names = {}
    for which in "ABCD":
        for a in layout_attributes(c, p.base_cfg, which):
            name = "k" + "".join(w.capitalize() for w in a["local"].split("_"))
            if name not in lay_names.values():
                consts.append(f"constexpr {a['ctype']} {name} = {a['value']};")
            lay_names[(which, a["attr"])] = name
    consts += ["",
               "#define SET_DESC(attr, val)                                                  \\",
               "  do {                                                                     \\",
               "    const auto value_ = (val);                                             \\",
               "    PROBE(cublasLtMatmulDescSetAttribute(desc, attr, &value_, sizeof(value_))); \\",
               "  } while (0)",
               "#define SET_LAYOUT(layout, attr, val)                                        \\",
               "  do {                                                                     \\",
               "    const auto value_ = (val);                                             \\",
               "    PROBE(cublasLtMatrixLayoutSetAttribute(layout, attr, &value_, sizeof(value_))); \\",
               "  } while (0)", ""]
    out = p.header() + consts + ["int main() {"]
    out += p.buffers(i)
    out += ["", f"{i}cublasLtHandle_t lt;", f"{i}PROBE(cublasLtCreate(&lt));", f"{i}cublasLtMatmulDesc_t desc;",
            f"{i}PROBE(cublasLtMatmulDescCreate(&desc, kCompute, kScale));"]
    for a in attrs:
        val = a["local"] if a["pointer"] else names[a["attr"]]
        out.append(f"{i}SET_DESC(CUBLASLT_MATMUL_DESC_{a['attr']}, {val});")
    out += ["", f"{i}cublasLtMatrixLayout_t la, lb, lc, ld;"]
    for which, var in (("A", "la"), ("B", "lb"), ("C", "lc"), ("D", "ld")):
        rows, cols, ld = storage(c, which)
        out.append(f"{i}PROBE(cublasLtMatrixLayoutCreate(&{var}, kType{which}, kM, kM, kM));")
        for a in layout_attributes(c, p.base_cfg, which):
            out.append(f"{i}SET_LAYOUT({var}, CUBLASLT_MATRIX_LAYOUT_{a['attr']}, {lay_names[(which, a['attr'])]});")
    out += _pref_heuristic_matmul(p, i, "desc", ("la", "lb", "lc", "ld"))
    out += p.verify(i)
    out += ["", f"{i}cudaDeviceSynchronize();", f"{i}PROBE(cublasLtMatmulPreferenceDestroy(pref));"]
    out += [f"{i}PROBE(cublasLtMatrixLayoutDestroy({v}));" for v in ("la", "lb", "lc", "ld")]
    out += [f"{i}PROBE(cublasLtMatmulDescDestroy(desc));", f"{i}PROBE(cublasLtDestroy(lt));",
            f"{i}cudaFree(workspace);", f"{i}return 0;", "}"]
    return out


STYLE_WRITERS = {"plain": _plain, "helper": _helper, "raii": _raii, "macro": _macro}


def program_text(entry: dict) -> str:
    return Program(entry).text()


def write_set(seed: int, count: int, out: Path) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    entries = generate(seed, count)
    for e in entries:
        p = Program(e)
        (out / e["file"]).write_text(p.text(), encoding="utf-8")
        e["numerics"] = "skipped: " + p.ref["skip"] if "skip" in p.ref else "checked"
        # what the program derives from the configuration (the buffers follow it)
        e["derived"] = {"bias_buffer_type": bias_buffer_type(e["config"]) if e["config"]["bias_pointer"] else None,
                        "aux_ld_value": aux_ld_value(e["config"]) if e["config"]["aux_ld"] else None}
    manifest = {"generator": "fusionlint.evidence.mutations_cublaslt", "format": 1, "seed": seed, "count": count,
                "m": M, "n": N, "k": K, "styles": STYLES,
                "include_dir": "fusionlint/evidence/include (fusionlint_probe.h, fusionlint_mutation.h)",
                "programs": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return entries


# ---- what `fusionlint facts` must recover ------------------------------------------------------
def expected_facts(entry: dict) -> dict[str, object]:
    """``{"matmul_desc.TRANSA": "CUBLAS_OP_T", "layout_A.TYPE": "CUDA_R_16BF", ...}``: every field the
    program sets, with its value (an enum name, a number, or None for a pointer: resolved to a
    symbol or an address, not unknown)."""
    cfg, base_cfg = entry["config"], BASES[entry["base"]][0]
    want: dict[str, object] = {"matmul_desc.COMPUTE_TYPE": cfg["compute_type"],
                               "matmul_desc.SCALE_TYPE": cfg["scale_type"]}
    for a in desc_attributes(cfg, base_cfg):
        want[f"matmul_desc.{a['attr']}"] = None if a["pointer"] else a["value"]
    for which in "ABCD":
        rows, cols, ld = storage(cfg, which)
        want[f"layout_{which}.TYPE"] = cfg[f"{which.lower()}_type"]
        want[f"layout_{which}.ROWS"], want[f"layout_{which}.COLS"], want[f"layout_{which}.LD"] = rows, cols, ld
        for a in layout_attributes(cfg, base_cfg, which):
            want[f"layout_{which}.{a['attr']}"] = a["value"]
    want["preference.MAX_WORKSPACE_BYTES"] = 32 << 20
    return want


def unresolved(entry: dict, facts: list[dict]) -> list[str]:
    """The expected facts of ``entry`` that the cublasLtMatmul configuration in ``facts`` (the JSON of
    ``fusionlint facts FILE``) lacks or has with another value."""
    matmuls = [f for f in facts if f.get("kind") == "matmul"]
    if len(matmuls) != 1:
        return [f"{len(matmuls)} cublasLtMatmul configurations (expected 1)"]
    params = matmuls[0].get("parameters", {})
    bad = [f"parse error: {p}" for p in matmuls[0].get("parse_errors_nearby") or []]
    bad += [f"unknown: {json.dumps(u)[:160]}" for u in matmuls[0].get("unknowns") or []]
    for key, want in expected_facts(entry).items():
        part, name = key.split(".", 1)
        got = params.get(part, {}).get(name)
        if not isinstance(got, dict) or "unknown" in got or got.get("source") not in ("set", "create"):
            bad.append(f"{key}: {json.dumps(got)[:160] if got is not None else 'missing'}")
            continue
        if want is None:
            if not any(k in got for k in ("symbol", "address_of", "value")):
                bad.append(f"{key}: pointer not resolved: {json.dumps(got)[:160]}")
            continue
        value = got.get("name") if isinstance(want, str) else got.get("value")
        if value != want:
            bad.append(f"{key}: {value!r} != {want!r}")
    return bad


# Run in a subprocess (this module imports nothing of fusionlint): fusionlint's own pipeline, as
# `fusionlint facts` runs it, plus a precompiled preamble (the programs share their includes; the
# facts command parses the CUDA headers again for every file, ~7x slower).
_FACTS_SCRIPT = r"""
import json, sys, tempfile
from pathlib import Path
from fusionlint.frontend.clang.parse import ParseOptions
from fusionlint.facts.extract import extract_file
include, files = sys.argv[1], sys.argv[2:]
with tempfile.TemporaryDirectory(prefix="fusionlint-mutations-pch-") as pch:
    options = ParseOptions(include_dirs=[include], pch_dir=pch)
    out = {}
    for f in files:
        try:
            out[f] = [c.to_dict() for c in extract_file(Path(f), options).configurations]
        except Exception as exc:  # reported per file
            out[f] = {"error": f"{type(exc).__name__}: {exc}"}
json.dump(out, sys.stdout, default=str)
"""


def _facts(files: list[str], include: str) -> dict[str, list[dict] | dict]:
    """``{file: the configurations fusionlint extracts (as `fusionlint facts` prints them)}``; the
    pipeline script first, the `fusionlint facts` command line if that fails."""
    r = subprocess.run([sys.executable, "-c", _FACTS_SCRIPT, include, *files], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        pass
    r = subprocess.run([sys.executable, "-m", "fusionlint.cli", "facts", "-I", include, *files],
                       capture_output=True, text=True)
    try:
        facts = json.loads(r.stdout)
    except ValueError:
        return {f: {"error": f"fusionlint facts failed: {r.stderr.strip()[-300:]}"} for f in files}
    out: dict[str, list] = {f: [] for f in files}
    names = {Path(f).name: f for f in files}
    for d in facts:
        key = names.get(Path(d.get("path", "")).name)
        if key is not None:
            out[key].append(d)
    return out


def resolve(manifest: Path, files: list[str] | None = None, include: str | None = None,
            jobs: int = 2) -> dict[str, list[str]]:
    """Extract the manifest's programs (or ``files`` of them) with fusionlint; ``{file: problems}``
    (empty when every field the program sets is recovered with the manifest's value)."""
    import concurrent.futures as cf

    data = json.loads(manifest.read_text(encoding="utf-8"))
    root = manifest.parent
    entries = [e for e in data["programs"] if files is None or e["file"] in files]
    include = include or str(Path(__file__).resolve().parent / "include")
    chunks = [c for c in (entries[i::max(1, jobs)] for i in range(max(1, jobs))) if c]
    result: dict[str, list[str]] = {}
    with cf.ThreadPoolExecutor(len(chunks) or 1) as pool:
        done = pool.map(lambda chunk: (chunk, _facts([str(root / e["file"]) for e in chunk], include)), chunks)
        for chunk, facts in done:
            for e in chunk:
                got = facts.get(str(root / e["file"]), {"error": "no result"})
                result[e["file"]] = [got["error"]] if isinstance(got, dict) else unresolved(e, got)
    return result


# ---- scoring -----------------------------------------------------------------------------------
def _by_name(mapping: dict) -> dict:
    return {Path(k).name: v for k, v in mapping.items()}


def evaluate(manifest: dict, truth: dict, findings: list[dict]) -> dict:
    """Score the findings against the truth: recall on the failing programs, false errors on the
    working ones, misses per mutated field, counts per rule and per style."""
    record = _by_name(truth.get("programs", {}))
    errors: dict[str, list[dict]] = defaultdict(list)
    others: dict[str, list[dict]] = defaultdict(list)
    for f in findings:
        (errors if f.get("severity") == "error" else others)[Path(f.get("path", "")).name].append(f)
    rows = []
    not_run, not_built = [], []
    for e in manifest["programs"]:
        name = e["file"]
        o = record.get(name)
        if o is None:
            not_run.append(name)
            continue
        if o.get("build_rc", 0) != 0:
            not_built.append(name)
            continue
        errs = errors.get(name, [])
        rows.append({"file": name, "base": e["base"], "style": e["style"], "mutations": e["mutations"],
                     "works": bool(o.get("works")), "outcome": _describe(o), "errors": errs,
                     "codes": sorted({f.get("code", "?") for f in errs})})
    failing = [r for r in rows if not r["works"]]
    working = [r for r in rows if r["works"]]
    caught = [r for r in failing if r["errors"]]
    missed = [r for r in failing if not r["errors"]]
    false_err = [r for r in working if r["errors"]]
    per_field: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        for m in r["mutations"]:
            c = per_field[m["field"]]
            c["programs"] += 1
            c["failing" if not r["works"] else "working"] += 1
            if not r["works"]:
                c["caught" if r["errors"] else "missed"] += 1
            elif r["errors"]:
                c["false_errors"] += 1
    per_rule: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        for code in r["codes"]:
            per_rule[code]["failing" if not r["works"] else "working"] += 1
    per_style: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        c = per_style[r["style"]]
        c["programs"] += 1
        if r["works"]:
            c["working"] += 1
            c["false_errors"] += bool(r["errors"])
        else:
            c["failing"] += 1
            c["caught"] += bool(r["errors"])
    return {
        "programs": len(manifest["programs"]), "scored": len(rows), "not_run": not_run, "not_built": not_built,
        "working": len(working), "failing": len(failing), "caught": len(caught),
        "recall": len(caught) / len(failing) if failing else None,
        "false_errors": [{"file": r["file"], "base": r["base"], "mutations": r["mutations"], "outcome": r["outcome"],
                          "findings": [{"code": f.get("code"), "line": f.get("line"), "message": f.get("message")}
                                       for f in r["errors"]]} for r in false_err],
        "false_error_rate": len(false_err) / len(working) if working else None,
        "misses": [{"file": r["file"], "base": r["base"], "mutations": r["mutations"], "outcome": r["outcome"]}
                   for r in missed],
        "per_field": {k: dict(v) for k, v in sorted(per_field.items())},
        "per_rule": {k: dict(v) for k, v in sorted(per_rule.items())},
        "per_style": {k: dict(v) for k, v in sorted(per_style.items())},
        "non_error_findings": sum(len(v) for v in others.values()),
    }


def _describe(o: dict) -> str:
    """A short outcome line from a harness record entry (its own words where it has them)."""
    if o.get("works"):
        return "works" + (f" (D not checked: {o['numerics_skipped']})" if o.get("numerics_skipped") else "")
    bad = next((c for c in o.get("calls", []) if c.get("status") not in
                ("CUBLAS_STATUS_SUCCESS", "Success", "kSuccess", "cudaSuccess")), None)
    if bad:
        return f"{bad.get('function')} -> {bad.get('status')}"
    cuda = [e for e in o.get("cuda_errors", []) if e != "cudaSuccess"]
    if cuda:
        return f"all calls SUCCESS, then CUDA error {cuda[0]}"
    nums = o.get("numerics", [])
    if nums and not all(n.get("ok") for n in nums):
        return f"all calls SUCCESS but D is wrong (max abs err {max(n.get('max_abs_err', 0) for n in nums):g})"
    if o.get("run_rc") is None:
        return "run timed out or not run"
    return f"crashed or printed no checks (exit status {o.get('run_rc')})"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _muts(ms: list[dict]) -> str:
    return "; ".join(f"{m['field']} {m['old']} -> {m['new']}" for m in ms)


def summary_text(s: dict) -> str:
    lines = [f"programs {s['programs']} (scored {s['scored']}, not run {len(s['not_run'])}, "
             f"not built {len(s['not_built'])}): {s['working']} work, {s['failing']} fail",
             f"recall {_pct(s['recall'])} ({s['caught']}/{s['failing']} failing programs with an error finding)",
             f"false errors {len(s['false_errors'])}/{s['working']} working programs ({_pct(s['false_error_rate'])})"]
    for fe in s["false_errors"]:
        lines.append(f"  false error {fe['file']} [{_muts(fe['mutations'])}]: "
                     + "; ".join(f"{f['code']} {f['message']}" for f in fe["findings"]))
    lines.append("misses per mutated field (failing programs without an error finding):")
    for field, c in s["per_field"].items():
        if c.get("failing"):
            lines.append(f"  {field}: {c.get('missed', 0)} missed of {c['failing']} failing")
    lines.append("per style: " + ", ".join(
        f"{k} {v.get('programs', 0)} programs, recall {v.get('caught', 0)}/{v.get('failing', 0)}, "
        f"false errors {v.get('false_errors', 0)}/{v.get('working', 0)}" for k, v in s["per_style"].items()))
    lines.append("per rule (programs with the error): " + ", ".join(
        f"{k} {v.get('failing', 0)} failing/{v.get('working', 0)} working" for k, v in s["per_rule"].items()))
    return "\n".join(lines)


def markdown(s: dict) -> str:
    md = ["# cuBLASLt random-mutation evaluation", "",
          f"- programs: {s['programs']} (scored {s['scored']}; not in the record: {len(s['not_run'])}; "
          f"build failures: {len(s['not_built'])})",
          f"- working: {s['working']}, failing: {s['failing']}",
          f"- **recall**: {_pct(s['recall'])} ({s['caught']} of {s['failing']} failing programs get an error)",
          f"- **false errors**: {len(s['false_errors'])} of {s['working']} working programs "
          f"({_pct(s['false_error_rate'])})", ""]
    if s["not_built"]:
        md += ["Build failures (a generator problem, not scored): " + ", ".join(s["not_built"]), ""]
    md += ["## False errors", ""]
    if s["false_errors"]:
        md += ["| program | mutations | outcome | findings |", "|---|---|---|---|"]
        for fe in s["false_errors"]:
            md.append(f"| {fe['file']} | {_muts(fe['mutations'])} | {fe['outcome']} | "
                      + "<br>".join(f"{f['code']}: {f['message']}" for f in fe["findings"]).replace("|", "\\|") + " |")
    else:
        md.append("None.")
    md += ["", "## Per mutated field", "", "| field | programs | failing | caught | missed | false errors |",
           "|---|---|---|---|---|---|"]
    for field, c in s["per_field"].items():
        md.append(f"| {field} | {c.get('programs', 0)} | {c.get('failing', 0)} | {c.get('caught', 0)} | "
                  f"{c.get('missed', 0)} | {c.get('false_errors', 0)} |")
    md += ["", "## Per rule", "", "| rule | on failing programs | on working programs |", "|---|---|---|"]
    for code, c in s["per_rule"].items():
        md.append(f"| {code} | {c.get('failing', 0)} | {c.get('working', 0)} |")
    md += ["", "## Per style", "", "| style | programs | failing | caught | working | false errors |",
           "|---|---|---|---|---|---|"]
    for style, c in s["per_style"].items():
        md.append(f"| {style} | {c.get('programs', 0)} | {c.get('failing', 0)} | {c.get('caught', 0)} | "
                  f"{c.get('working', 0)} | {c.get('false_errors', 0)} |")
    md += ["", "## Misses", ""]
    if s["misses"]:
        md += ["| program | base | mutations | outcome |", "|---|---|---|---|"]
        for m in s["misses"]:
            md.append(f"| {m['file']} | {m['base']} | {_muts(m['mutations'])} | {m['outcome']} |")
    else:
        md.append("None.")
    return "\n".join(md) + "\n"


def distribution(entries: list[dict]) -> dict:
    """Counts of styles, bases, mutated fields (and groups of them), and numerics checked/skipped."""
    groups = {"types": {"a_type", "b_type", "c_type", "d_type"}, "compute": {"compute_type"},
              "scale_type": {"scale_type"}, "epilogue": {"epilogue"},
              "bias/aux": {"bias_pointer", "bias_data_type", "aux_pointer", "aux_ld", "aux_data_type"},
              "scale pointers/amax": {"a_scale_pointer", "b_scale_pointer", "c_scale_pointer", "d_scale_pointer",
                                      "amax_d_pointer"},
              "scale modes": {"a_scale_mode", "b_scale_mode"}, "pointer mode": {"pointer_mode"},
              "trans/order/batch": {"transa", "transb", "order_a", "order_b", "order_c", "order_d", "batch"},
              "fast accum": {"fast_accum"}}
    fields = Counter(m["field"] for e in entries for m in e["mutations"])
    return {"programs": len(entries), "styles": dict(Counter(e["style"] for e in entries)),
            "bases": dict(sorted(Counter(e["base"] for e in entries).items())),
            "mutations_per_program": dict(Counter(len(e["mutations"]) for e in entries)),
            "fields": dict(sorted(fields.items())),
            "field_groups": {g: sum(fields[f] for f in fs) for g, fs in groups.items()},
            "numerics": dict(Counter("checked" if e.get("numerics", "checked") == "checked" else "skipped"
                                     for e in entries))}


# ---- command line ------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m fusionlint.evidence.mutations_cublaslt",
                                 description="Seeded random-mutation cuBLASLt programs and their scoring.")
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write DIR/mNNNN_<style>.cpp and DIR/manifest.json")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--out", required=True, type=Path)
    ev = sub.add_parser("evaluate", help="score fusionlint's findings against the device record")
    ev.add_argument("--manifest", required=True, type=Path)
    ev.add_argument("--truth", required=True, type=Path, help="the harness record (<out>.json)")
    ev.add_argument("--findings", required=True, type=Path,
                    help="fusionlint check --output-format json output on the programs")
    ev.add_argument("--markdown", type=Path, help="also write the report as markdown")
    ev.add_argument("--json", type=Path, help="also write the scores as JSON")
    r = sub.add_parser("resolve", help="check that fusionlint facts recovers every field the programs set")
    r.add_argument("--manifest", required=True, type=Path)
    r.add_argument("--sample", type=int, default=0, help="only the first N programs of each style (0: all)")
    r.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args(argv)

    if args.command == "generate":
        entries = write_set(args.seed, args.count, args.out)
        print(json.dumps(distribution(entries), indent=1))
        print(f"wrote {len(entries)} programs and {args.out / 'manifest.json'}")
        return 0
    if args.command == "evaluate":
        try:
            manifest = json.loads(args.manifest.read_text(encoding="utf-8"))
            truth = json.loads(args.truth.read_text(encoding="utf-8"))
            findings = json.loads(args.findings.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"evaluate: cannot read the inputs: {exc}", file=sys.stderr)
            return 0
        s = evaluate(manifest, truth, findings)
        print(summary_text(s))
        if args.markdown:
            args.markdown.write_text(markdown(s), encoding="utf-8")
        if args.json:
            args.json.write_text(json.dumps(s, indent=1) + "\n", encoding="utf-8")
        return 0
    data = json.loads(args.manifest.read_text(encoding="utf-8"))
    files = None
    if args.sample:
        seen: Counter = Counter()
        files = []
        for e in data["programs"]:
            if seen[e["style"]] < args.sample:
                seen[e["style"]] += 1
                files.append(e["file"])
    res = resolve(args.manifest, files, jobs=args.jobs)
    style_of = {e["file"]: e["style"] for e in data["programs"]}
    per_style: dict[str, Counter] = defaultdict(Counter)
    for f, problems in sorted(res.items()):
        per_style[style_of[f]]["resolved" if not problems else "unresolved"] += 1
        for p in problems:
            print(f"{f}: {p}")
    for style, c in sorted(per_style.items()):
        print(f"{style}: {c['resolved']} fully resolved, {c['unresolved']} with unresolved fields")
    return 0 if all(not p for p in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
