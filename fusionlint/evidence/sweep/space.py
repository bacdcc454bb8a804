"""The discrete configuration space the cuBLASLt support sweep measures.

Standard library only (it runs on GPU machines where fusionlint's dependencies may be missing).
Field order is the driver's (driver.cpp ``enum Field``). Values are cuBLASLt's own enum
spellings; ``NOT_SET`` means the attribute is not written at all (its default applies), ``True``
/ ``False`` whether a pointer attribute is set. The integer of each name is checked against the
API model generated from cublasLt.h (tests/test_support_table.py).
"""
from __future__ import annotations

from fusionlint.model.support_table import NOT_SET_VALUE as NOT_SET

# cudaDataType_t / cublasComputeType_t / ... values (cublasLt.h, library_types.h of CUDA 13)
ENUM_VALUES: dict[str, int] = {
    "CUDA_R_16F": 2, "CUDA_C_16F": 6, "CUDA_R_16BF": 14, "CUDA_R_32F": 0, "CUDA_C_32F": 4, "CUDA_R_64F": 1,
    "CUDA_C_64F": 5, "CUDA_R_8I": 3, "CUDA_R_8U": 8, "CUDA_R_32I": 10, "CUDA_R_8F_E4M3": 28, "CUDA_R_8F_E5M2": 29,
    "CUDA_R_4F_E2M1": 33,
    "CUBLAS_COMPUTE_16F": 64, "CUBLAS_COMPUTE_16F_PEDANTIC": 65, "CUBLAS_COMPUTE_32F": 68,
    "CUBLAS_COMPUTE_32F_PEDANTIC": 69, "CUBLAS_COMPUTE_32F_FAST_16F": 74, "CUBLAS_COMPUTE_32F_FAST_16BF": 75,
    "CUBLAS_COMPUTE_32F_FAST_TF32": 77, "CUBLAS_COMPUTE_32F_EMULATED_16BFX9": 78, "CUBLAS_COMPUTE_64F": 70,
    "CUBLAS_COMPUTE_64F_PEDANTIC": 71, "CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT": 79, "CUBLAS_COMPUTE_32I": 72,
    "CUBLAS_COMPUTE_32I_PEDANTIC": 73,
    "CUBLAS_OP_N": 0, "CUBLAS_OP_T": 1, "CUBLAS_OP_C": 2,
    "CUBLASLT_ORDER_COL": 0, "CUBLASLT_ORDER_ROW": 1,
    "CUBLASLT_EPILOGUE_DEFAULT": 1, "CUBLASLT_EPILOGUE_RELU": 2, "CUBLASLT_EPILOGUE_RELU_AUX": 130,
    "CUBLASLT_EPILOGUE_BIAS": 4, "CUBLASLT_EPILOGUE_RELU_BIAS": 6, "CUBLASLT_EPILOGUE_RELU_AUX_BIAS": 134,
    "CUBLASLT_EPILOGUE_DRELU": 136, "CUBLASLT_EPILOGUE_DRELU_BGRAD": 152, "CUBLASLT_EPILOGUE_GELU": 32,
    "CUBLASLT_EPILOGUE_GELU_AUX": 160, "CUBLASLT_EPILOGUE_GELU_BIAS": 36, "CUBLASLT_EPILOGUE_GELU_AUX_BIAS": 164,
    "CUBLASLT_EPILOGUE_DGELU": 192, "CUBLASLT_EPILOGUE_DGELU_BGRAD": 208, "CUBLASLT_EPILOGUE_BGRADA": 256,
    "CUBLASLT_EPILOGUE_BGRADB": 512,
    "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F": 0, "CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3": 1,
    "CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0": 2, "CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F": 3,
    "CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F": 4, "CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F": 5,
    "CUBLASLT_POINTER_MODE_HOST": 0, "CUBLASLT_POINTER_MODE_DEVICE": 1, "CUBLASLT_POINTER_MODE_DEVICE_VECTOR": 2,
    "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO": 3, "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST": 4,
}

TYPES = ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_8I", "CUDA_R_8U", "CUDA_R_32I",
         "CUDA_R_8F_E4M3", "CUDA_R_8F_E5M2", "CUDA_R_4F_E2M1", "CUDA_C_16F", "CUDA_C_32F", "CUDA_C_64F"]
COMPUTE_TYPES = ["CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_16F_PEDANTIC", "CUBLAS_COMPUTE_32F",
                 "CUBLAS_COMPUTE_32F_PEDANTIC", "CUBLAS_COMPUTE_32F_FAST_16F", "CUBLAS_COMPUTE_32F_FAST_16BF",
                 "CUBLAS_COMPUTE_32F_FAST_TF32", "CUBLAS_COMPUTE_32F_EMULATED_16BFX9", "CUBLAS_COMPUTE_64F",
                 "CUBLAS_COMPUTE_64F_PEDANTIC", "CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT", "CUBLAS_COMPUTE_32I",
                 "CUBLAS_COMPUTE_32I_PEDANTIC"]
SCALE_TYPES = ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_64F", "CUDA_R_32I", "CUDA_C_32F", "CUDA_C_64F"]
EPILOGUES = ["CUBLASLT_EPILOGUE_DEFAULT", "CUBLASLT_EPILOGUE_RELU", "CUBLASLT_EPILOGUE_RELU_AUX",
             "CUBLASLT_EPILOGUE_BIAS", "CUBLASLT_EPILOGUE_RELU_BIAS", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS",
             "CUBLASLT_EPILOGUE_DRELU", "CUBLASLT_EPILOGUE_DRELU_BGRAD", "CUBLASLT_EPILOGUE_GELU",
             "CUBLASLT_EPILOGUE_GELU_AUX", "CUBLASLT_EPILOGUE_GELU_BIAS", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS",
             "CUBLASLT_EPILOGUE_DGELU", "CUBLASLT_EPILOGUE_DGELU_BGRAD", "CUBLASLT_EPILOGUE_BGRADA",
             "CUBLASLT_EPILOGUE_BGRADB"]
SCALE_MODES = ["CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F", "CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3",
               "CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0", "CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F",
               "CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F", "CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F"]
POINTER_MODES = ["CUBLASLT_POINTER_MODE_HOST", "CUBLASLT_POINTER_MODE_DEVICE", "CUBLASLT_POINTER_MODE_DEVICE_VECTOR",
                 "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO",
                 "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST"]
OPS = ["CUBLAS_OP_N", "CUBLAS_OP_T", "CUBLAS_OP_C"]
ORDERS = ["CUBLASLT_ORDER_COL", "CUBLASLT_ORDER_ROW"]
# bias / aux data types tried: every data type (the 2 Dec 2026 table tried 7; a CUDA_C_32F or
# CUDA_R_32I bias then lay outside it, and FL127 could not decide the bias stage)
EXTRA_TYPES = list(TYPES)
BOOL = [False, True]

# (field, domain, value of the base configuration) in the driver's order
FIELDS: list[tuple[str, list, object]] = [
    ("a_type", TYPES, None), ("b_type", TYPES, None), ("c_type", TYPES, None), ("d_type", TYPES, None),
    ("compute_type", COMPUTE_TYPES, None), ("scale_type", SCALE_TYPES, None),
    ("transa", OPS, "CUBLAS_OP_T"), ("transb", OPS, "CUBLAS_OP_N"),
    ("order_a", ORDERS, "CUBLASLT_ORDER_COL"), ("order_b", ORDERS, "CUBLASLT_ORDER_COL"),
    ("order_c", ORDERS, "CUBLASLT_ORDER_COL"), ("order_d", ORDERS, "CUBLASLT_ORDER_COL"),
    ("batch", [1, 2], 1),
    ("epilogue", EPILOGUES, "CUBLASLT_EPILOGUE_DEFAULT"),
    ("bias_pointer", BOOL, False), ("bias_data_type", [NOT_SET, *EXTRA_TYPES], NOT_SET),
    ("aux_pointer", BOOL, False), ("aux_ld", BOOL, False), ("aux_data_type", [NOT_SET, *EXTRA_TYPES], NOT_SET),
    ("a_scale_pointer", BOOL, False), ("b_scale_pointer", BOOL, False), ("c_scale_pointer", BOOL, False),
    ("d_scale_pointer", BOOL, False), ("amax_d_pointer", BOOL, False),
    ("a_scale_mode", [NOT_SET, *SCALE_MODES], NOT_SET), ("b_scale_mode", [NOT_SET, *SCALE_MODES], NOT_SET),
    ("fast_accum", [NOT_SET, 0, 1], NOT_SET),
    ("pointer_mode", [NOT_SET, *POINTER_MODES], NOT_SET),
]
FIELD_NAMES = [f[0] for f in FIELDS]
DOMAINS: dict[str, list] = {name: dom for name, dom, _ in FIELDS}
BASE: dict[str, object] = {name: base for name, _, base in FIELDS if base is not None}
TYPE_FIELDS = ["a_type", "b_type", "c_type", "d_type", "compute_type", "scale_type"]

# Epilogue needs, for stages that sweep something else: the pointers a bias / aux epilogue reads
BIAS_EPILOGUES = {"CUBLASLT_EPILOGUE_BIAS", "CUBLASLT_EPILOGUE_RELU_BIAS", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS",
                  "CUBLASLT_EPILOGUE_GELU_BIAS", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS", "CUBLASLT_EPILOGUE_DRELU_BGRAD",
                  "CUBLASLT_EPILOGUE_DGELU_BGRAD", "CUBLASLT_EPILOGUE_BGRADA", "CUBLASLT_EPILOGUE_BGRADB"}
AUX_EPILOGUES = {"CUBLASLT_EPILOGUE_RELU_AUX", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS", "CUBLASLT_EPILOGUE_GELU_AUX",
                 "CUBLASLT_EPILOGUE_GELU_AUX_BIAS", "CUBLASLT_EPILOGUE_DRELU", "CUBLASLT_EPILOGUE_DRELU_BGRAD",
                 "CUBLASLT_EPILOGUE_DGELU", "CUBLASLT_EPILOGUE_DGELU_BGRAD"}


def needs(epilogue: str) -> dict[str, object]:
    """The pointer attributes an epilogue reads, set (a configuration that lacks none of them)."""
    out: dict[str, object] = {}
    if epilogue in BIAS_EPILOGUES:
        out["bias_pointer"] = True
    if epilogue in AUX_EPILOGUES:
        out["aux_pointer"] = True
        out["aux_ld"] = True
    return out


# Scale-mode needs, likewise: a block or vector scale mode is measured with its scale pointer set
# (the scalar mode is not: without a pointer its scale is 1, and types other than FP8 reject a
# scale pointer, so a stage completing it would reject the scalar mode for them: H200, 2 Dec 2026)
SCALE_POINTERS: dict[str, str] = {"a_scale_mode": "a_scale_pointer", "b_scale_mode": "b_scale_pointer"}
UNSCALED_MODES = ("unset", "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F")


def mode_needs(values: dict) -> dict[str, object]:
    """The scale pointers the scale modes in ``values`` read, set."""
    return {ptr: True for mode, ptr in SCALE_POINTERS.items() if values.get(mode, "unset") not in UNSCALED_MODES}


def encode(cfg: dict) -> str:
    """The driver's input line for a full configuration."""
    out = []
    for name, _, _ in FIELDS:
        v = cfg[name]
        if v == NOT_SET:
            out.append(-1)
        elif isinstance(v, bool):
            out.append(int(v))
        elif isinstance(v, int):
            out.append(v)
        else:
            out.append(ENUM_VALUES[v])
    return " ".join(map(str, out))
