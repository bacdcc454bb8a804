"""Derived quantities of the ``configuration`` scope: a cuBLASLt GEMM's configuration (FL101-FL126)."""
from __future__ import annotations

from typing import Any

from fusionlint.rules.derived.registry import View, _get, blame, derived, walk


def _odd_ones(holders: list[tuple[str, Any]]) -> list[str]:
    """The facts whose value differs from the most common one among ``holders`` ((fact, value),
    unknown values left out); every fact when no value is in the majority."""
    known = [(p, v) for p, v in holders if v is not None]
    counts: dict[Any, int] = {}
    for _, v in known:
        counts[v] = counts.get(v, 0) + 1
    if len(counts) < 2:
        return []
    top = max(counts.values())
    majority = [v for v, n in counts.items() if n == top]
    if len(majority) > 1:
        return [p for p, _ in known]
    return [p for p, v in known if v != majority[0]]


FP8_TYPES = {"CUDA_R_8F_E4M3", "CUDA_R_8F_E5M2"}
# The other narrow-precision types (FP6, FP4, the UE8M0 scale type: Blackwell's block-scaled GEMMs). The
# rules that take "not FP8" to mean the wide types' tables (C = D, no scale pointers, the compute/scale
# pairs) were measured with wide types only: for these, whether an input or D "is FP8" is not known, so
# those rules stay undecided (a block-scaled FP4 GEMM sets scale pointers and an FP4 D with a BF16 C, as
# on Blackwell it must). What sm_90 does with these types is FL121's and the support table's to say.
OTHER_NARROW_TYPES = {"CUDA_R_6F_E2M3", "CUDA_R_6F_E3M2", "CUDA_R_4F_E2M1", "CUDA_R_8F_UE8M0"}
TRANSPOSED = {"CUBLAS_OP_T", "CUBLAS_OP_C"}
AUX_GELU = {"CUBLASLT_EPILOGUE_GELU_AUX", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS", "CUBLASLT_EPILOGUE_DGELU",
            "CUBLASLT_EPILOGUE_DGELU_BGRAD"}
AUX_RELU = {"CUBLASLT_EPILOGUE_RELU_AUX", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS", "CUBLASLT_EPILOGUE_DRELU",
            "CUBLASLT_EPILOGUE_DRELU_BGRAD"}
BIAS_INPUT = {"CUBLASLT_EPILOGUE_BIAS", "CUBLASLT_EPILOGUE_RELU_BIAS", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS",
              "CUBLASLT_EPILOGUE_GELU_BIAS", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS"}
ELEMENT_BYTES = {"CUDA_R_64F": 8, "CUDA_R_32F": 4, "CUDA_R_32I": 4, "CUDA_R_16F": 2, "CUDA_R_16BF": 2,
                 "CUDA_R_8F_E4M3": 1, "CUDA_R_8F_E5M2": 1, "CUDA_R_8I": 1, "CUDA_R_8U": 1}


def _layout(view: View, m: str, name: str) -> Any:
    return _get(view, f"layout_{m}.{name}")


@derived("fp8_inputs", "configuration")
def fp8_inputs(view: View) -> bool | None:
    """Are A and B both FP8 (E4M3/E5M2)?"""
    a, b = _layout(view, "A", "TYPE"), _layout(view, "B", "TYPE")
    if a is None or b is None:
        return None
    return a in FP8_TYPES and b in FP8_TYPES


@derived("any_fp8_input", "configuration")
def any_fp8_input(view: View) -> bool | None:
    a, b = _layout(view, "A", "TYPE"), _layout(view, "B", "TYPE")
    if a in FP8_TYPES or b in FP8_TYPES:
        return True
    if a is None or b is None or a in OTHER_NARROW_TYPES or b in OTHER_NARROW_TYPES:
        return None
    return False


def _k_major(order: Any, trans: Any, transposed_means_k_major: bool) -> bool | None:
    if order is None or trans is None:
        return None
    if order not in ("CUBLASLT_ORDER_COL", "CUBLASLT_ORDER_ROW"):
        return None
    flipped = (trans in TRANSPOSED) == transposed_means_k_major
    return flipped if order == "CUBLASLT_ORDER_COL" else not flipped


@derived("a_k_major", "configuration")
def a_k_major(view: View) -> bool | None:
    """Is K the contiguous dimension of A in memory (column-major A transposed, or row-major A)?"""
    return _k_major(_layout(view, "A", "ORDER"), _get(view, "matmul_desc.TRANSA"), True)


@derived("b_k_major", "configuration")
def b_k_major(view: View) -> bool | None:
    """Is K the contiguous dimension of B (column-major B not transposed, or row-major B transposed)?"""
    return _k_major(_layout(view, "B", "ORDER"), _get(view, "matmul_desc.TRANSB"), False)


@derived("fp8_ab_pair_supported", "configuration")
def fp8_ab_pair_supported(view: View) -> bool | None:
    """A x B is one of E4M3xE4M3, E4M3xE5M2, E5M2xE4M3 (cuBLASLt's FP8 table)."""
    a, b = _layout(view, "A", "TYPE"), _layout(view, "B", "TYPE")
    if a is None or b is None:
        return None
    return (a, b) in {("CUDA_R_8F_E4M3", "CUDA_R_8F_E4M3"), ("CUDA_R_8F_E4M3", "CUDA_R_8F_E5M2"),
                      ("CUDA_R_8F_E5M2", "CUDA_R_8F_E4M3")}


@blame("fp8_ab_pair_supported")
def _fp8_pair_blame(view: View) -> list[str]:
    """The non-FP8 operand of a mixed pair, else B (E5M2 x E5M2: either could change)."""
    a, b = _layout(view, "A", "TYPE"), _layout(view, "B", "TYPE")
    if (a in FP8_TYPES) != (b in FP8_TYPES):
        return ["layout_B.TYPE" if a in FP8_TYPES else "layout_A.TYPE"]
    return ["layout_B.TYPE", "layout_A.TYPE"]


@derived("fp8_cd_supported", "configuration")
def fp8_cd_supported(view: View) -> bool | None:
    """C/D types allowed for an FP8 GEMM (cuBLASLt's FP8 table, checked on the H200)."""
    a, b = _layout(view, "A", "TYPE"), _layout(view, "B", "TYPE")
    c, d = _layout(view, "C", "TYPE"), _layout(view, "D", "TYPE")
    if None in (a, b, c, d):
        return None
    if d in ("CUDA_R_16BF", "CUDA_R_16F", "CUDA_R_32F"):
        return c == d
    if d == "CUDA_R_8F_E4M3":
        return c in ("CUDA_R_16BF", "CUDA_R_16F")
    if d == "CUDA_R_8F_E5M2":
        return c in ("CUDA_R_16BF", "CUDA_R_16F") and "CUDA_R_8F_E5M2" in (a, b)
    return False


@blame("fp8_cd_supported")
def _fp8_cd_blame(view: View) -> list[str]:
    """C when it is FP8 (never allowed), else D's type, then C's."""
    return ["layout_C.TYPE", "layout_D.TYPE"] if _layout(view, "C", "TYPE") in FP8_TYPES else \
        ["layout_D.TYPE", "layout_C.TYPE"]


_SCALE_FOR_COMPUTE = {
    "CUBLAS_COMPUTE_16F": {"CUDA_R_16F"}, "CUBLAS_COMPUTE_16F_PEDANTIC": {"CUDA_R_16F"},
    "CUBLAS_COMPUTE_32F": {"CUDA_R_32F", "CUDA_C_32F"}, "CUBLAS_COMPUTE_32F_PEDANTIC": {"CUDA_R_32F", "CUDA_C_32F"},
    "CUBLAS_COMPUTE_32F_FAST_16F": {"CUDA_R_32F", "CUDA_C_32F"},
    "CUBLAS_COMPUTE_32F_FAST_16BF": {"CUDA_R_32F", "CUDA_C_32F"},
    "CUBLAS_COMPUTE_32F_FAST_TF32": {"CUDA_R_32F", "CUDA_C_32F"},
    "CUBLAS_COMPUTE_64F": {"CUDA_R_64F", "CUDA_C_64F"}, "CUBLAS_COMPUTE_64F_PEDANTIC": {"CUDA_R_64F", "CUDA_C_64F"},
    "CUBLAS_COMPUTE_32I": {"CUDA_R_32I", "CUDA_R_32F"}, "CUBLAS_COMPUTE_32I_PEDANTIC": {"CUDA_R_32I", "CUDA_R_32F"},
}


@derived("scale_type_matches_compute", "configuration")
def scale_type_matches_compute(view: View) -> bool | None:
    """Is the scale type one that cuBLASLt's type table pairs with this compute type?"""
    compute, scale = _get(view, "matmul_desc.COMPUTE_TYPE"), _get(view, "matmul_desc.SCALE_TYPE")
    if compute is None or scale is None or compute not in _SCALE_FOR_COMPUTE:
        return None
    return scale in _SCALE_FOR_COMPUTE[compute]


@derived("expected_scale_types", "configuration")
def expected_scale_types(view: View) -> str | None:
    compute = _get(view, "matmul_desc.COMPUTE_TYPE")
    allowed = _SCALE_FOR_COMPUTE.get(compute or "")
    return " or ".join(sorted(t for t in allowed if t.startswith("CUDA_R"))) if allowed else None


@derived("c_d_same_type", "configuration")
def c_d_same_type(view: View) -> bool | None:
    c, d = _layout(view, "C", "TYPE"), _layout(view, "D", "TYPE")
    return None if c is None or d is None else c == d


@derived("c_d_same_order", "configuration")
def c_d_same_order(view: View) -> bool | None:
    c, d = _layout(view, "C", "ORDER"), _layout(view, "D", "ORDER")
    return None if c is None or d is None else c == d


@derived("d_is_fp8", "configuration")
def d_is_fp8(view: View) -> bool | None:
    d = _layout(view, "D", "TYPE")
    return None if d is None or d in OTHER_NARROW_TYPES else d in FP8_TYPES


@derived("aux_epilogue_family", "configuration")
def aux_epilogue_family(view: View) -> str | None:
    """'gelu' or 'relu' for epilogues that read or write the aux buffer, 'none' otherwise."""
    epi = _get(view, "matmul_desc.EPILOGUE")
    if epi is None:
        return None
    return "gelu" if epi in AUX_GELU else "relu" if epi in AUX_RELU else "none"


@derived("aux_ld_multiple", "configuration")
def aux_ld_multiple(view: View) -> int | None:
    """The multiple EPILOGUE_AUX_LD must have: 8 elements (GELU input) or 128 (ReLU bit-mask)."""
    family = aux_epilogue_family(view)
    return {"gelu": 8, "relu": 128}.get(family or "")


@derived("aux_ld_valid", "configuration")
def aux_ld_valid(view: View) -> bool | None:
    """EPILOGUE_AUX_LD >= rows(D) and a multiple of 8 (GELU) / 128 (ReLU)."""
    ld, rows, multiple = _get(view, "matmul_desc.EPILOGUE_AUX_LD"), _layout(view, "D", "ROWS"), aux_ld_multiple(view)
    if ld is None or rows is None or multiple is None:
        return None
    return ld >= rows and ld % multiple == 0


@derived("bias_epilogue", "configuration")
def bias_epilogue(view: View) -> bool | None:
    """Does the epilogue read a bias vector?"""
    epi = _get(view, "matmul_desc.EPILOGUE")
    return None if epi is None else epi in BIAS_INPUT


@derived("expected_bias_type", "configuration")
def expected_bias_type(view: View) -> str | None:
    """Bias type cuBLASLt accepts: the D type; for an INT8 GEMM with an INT8 D the FP32 scale
    type (measured: the H200 support table accepts only CUDA_R_32F there); for FP8 GEMMs the FP8 table's bias column."""
    d, c = _layout(view, "D", "TYPE"), _layout(view, "C", "TYPE")
    fp8 = fp8_inputs(view)
    if d is None or fp8 is None:
        return None
    if not fp8:
        return "CUDA_R_32F" if d == "CUDA_R_8I" and _layout(view, "A", "TYPE") == "CUDA_R_8I" else d
    if d in ("CUDA_R_16BF", "CUDA_R_16F"):
        return d
    if d == "CUDA_R_32F":
        return "CUDA_R_16BF"
    return c  # FP8 output: the C type


@derived("bias_type_valid", "configuration")
def bias_type_valid(view: View) -> bool | None:
    bias, expected = _get(view, "matmul_desc.BIAS_DATA_TYPE"), expected_bias_type(view)
    if bias is None or expected is None:
        return None
    return bias == expected


@derived("batch_counts_equal", "configuration")
def batch_counts_equal(view: View) -> bool | None:
    counts = [_layout(view, m, "BATCH_COUNT") for m in "ABCD"]
    if any(c is None for c in counts):
        return None
    return len(set(counts)) == 1


@blame("batch_counts_equal")
def _batch_blame(view: View) -> list[str]:
    """The layouts whose batch count differs from the others'."""
    return _odd_ones([(f"layout_{m}.BATCH_COUNT", _layout(view, m, "BATCH_COUNT")) for m in "ABCD"])


@derived("batch_counts", "configuration")
def batch_counts(view: View) -> str:
    return ", ".join(f"{m}={_layout(view, m, 'BATCH_COUNT')}" for m in "ABCD")


@derived("fp8_16_byte_aligned", "configuration")
def fp8_16_byte_aligned(view: View) -> bool | None:
    """FP8: lda, ldb and the K extent multiples of 16 elements; ldc/ldd multiples of 16 bytes."""
    values = []
    for m in "AB":
        values.append(_layout(view, m, "LD"))
    a_order, transa = _layout(view, "A", "ORDER"), _get(view, "matmul_desc.TRANSA")
    if a_order == "CUBLASLT_ORDER_COL" and transa is not None:
        values.append(_layout(view, "A", "ROWS" if transa in TRANSPOSED else "COLS"))
    for m in "CD":
        ld, t = _layout(view, m, "LD"), _layout(view, m, "TYPE")
        values.append(ld * ELEMENT_BYTES[t] if isinstance(ld, int) and t in ELEMENT_BYTES else None)
    known = [v for v in values if isinstance(v, int)]
    if any(v % 16 for v in known):
        return False
    return True if len(known) == len(values) else None


@blame("fp8_16_byte_aligned")
def _fp8_alignment_blame(view: View) -> list[str]:
    """The leading dimensions (and A's K extent) that are not 16-byte multiples."""
    out = [f"layout_{m}.LD" for m in "AB" if isinstance(_layout(view, m, "LD"), int) and _layout(view, m, "LD") % 16]
    if _layout(view, "A", "ORDER") == "CUBLASLT_ORDER_COL" and _get(view, "matmul_desc.TRANSA") is not None:
        k_name = "ROWS" if _get(view, "matmul_desc.TRANSA") in TRANSPOSED else "COLS"
        k = _layout(view, "A", k_name)
        if isinstance(k, int) and k % 16:
            out.append(f"layout_A.{k_name}")
    for m in "CD":
        ld, t = _layout(view, m, "LD"), _layout(view, m, "TYPE")
        if isinstance(ld, int) and t in ELEMENT_BYTES and (ld * ELEMENT_BYTES[t]) % 16:
            out.append(f"layout_{m}.LD")
    return out


@derived("k_extent", "configuration")
def k_extent(view: View) -> int | None:
    order, transa = _layout(view, "A", "ORDER"), _get(view, "matmul_desc.TRANSA")
    if order != "CUBLASLT_ORDER_COL" or transa is None:
        return None
    return _layout(view, "A", "ROWS" if transa in TRANSPOSED else "COLS")


def _shape(view: View, m: str) -> tuple[int, int] | None:
    """(rows, cols) of layout ``m`` as created; None unless both are known."""
    rows, cols = _layout(view, m, "ROWS"), _layout(view, m, "COLS")
    return (rows, cols) if isinstance(rows, int) and isinstance(cols, int) else None


def _op_shape(view: View, m: str) -> tuple[int, int] | None:
    """(rows, cols) of op(A) or op(B): the layout's shape, swapped when TRANSA/TRANSB transposes it."""
    shape, trans = _shape(view, m), _get(view, f"matmul_desc.TRANS{m}")
    if shape is None or trans is None:
        return None
    return (shape[1], shape[0]) if trans in TRANSPOSED else shape


def _shape_conflicts(view: View) -> list[str]:
    """How the layouts break D = op(A) op(B) + C: op(A) m x k, op(B) k x n, C and D m x n."""
    a, b, c, d = _op_shape(view, "A"), _op_shape(view, "B"), _shape(view, "C"), _shape(view, "D")
    out = []
    if a and b and a[1] != b[0]:
        out.append(f"op(A) is {a[0]}x{a[1]} and op(B) is {b[0]}x{b[1]}: their inner dimensions (k) differ")
    if a and d and a[0] != d[0]:
        out.append(f"op(A) has {a[0]} rows but D has {d[0]} (m)")
    if b and d and b[1] != d[1]:
        out.append(f"op(B) has {b[1]} columns but D has {d[1]} (n)")
    if c and d and c != d:
        out.append(f"C is {c[0]}x{c[1]} but D is {d[0]}x{d[1]}")
    return out


@derived("matmul_shapes_agree", "configuration")
def matmul_shapes_agree(view: View) -> bool | None:
    """Do op(A), op(B), C and D have the extents m x k, k x n, m x n, m x n? None while one is unknown
    and the known ones agree."""
    if _shape_conflicts(view):
        return False
    shapes = (_op_shape(view, "A"), _op_shape(view, "B"), _shape(view, "C"), _shape(view, "D"))
    return True if all(shapes) else None


@derived("matmul_shape_conflicts", "configuration")
def matmul_shape_conflicts(view: View) -> str:
    return "; ".join(_shape_conflicts(view))


def _extent_fact(view: View, m: str, dim: int) -> str:
    """The layout field that holds row (0) or column (1) ``dim`` of op(m) (op() only for A and B)."""
    trans = _get(view, f"matmul_desc.TRANS{m}") if m in "AB" else None
    if trans in TRANSPOSED:
        dim = 1 - dim
    return f"layout_{m}.{'ROWS' if dim == 0 else 'COLS'}"


@blame("matmul_shapes_agree")
def _shape_blame(view: View) -> list[str]:
    """The operands define the problem (m and k from op(A), n from op(B)); the layout checked
    against them is at fault: D's rows or columns, op(B)'s k, and C where it is not D's shape."""
    a, b, c, d = _op_shape(view, "A"), _op_shape(view, "B"), _shape(view, "C"), _shape(view, "D")
    out = []
    if a and d and a[0] != d[0]:
        out.append("layout_D.ROWS")
    if b and d and b[1] != d[1]:
        out.append("layout_D.COLS")
    if a and b and a[1] != b[0]:
        out.append(_extent_fact(view, "B", 0))
    if c and d and c[0] != d[0]:
        out.append("layout_C.ROWS")
    if c and d and c[1] != d[1]:
        out.append("layout_C.COLS")
    return out


def _ld_conflicts(view: View) -> list[str]:
    """Layouts whose leading dimension is below the rows (CUBLASLT_ORDER_COL) or the columns
    (CUBLASLT_ORDER_ROW) of the matrix, so that columns (rows) would overlap."""
    out = []
    for m in "ABCD":
        shape, ld, order = _shape(view, m), _layout(view, m, "LD"), _layout(view, m, "ORDER")
        if shape is None or not isinstance(ld, int):
            continue
        if order == "CUBLASLT_ORDER_COL" and ld < shape[0]:
            out.append(f"{m} ({shape[0]}x{shape[1]}, column-major) has ld {ld} < {shape[0]} rows")
        elif order == "CUBLASLT_ORDER_ROW" and ld < shape[1]:
            out.append(f"{m} ({shape[0]}x{shape[1]}, row-major) has ld {ld} < {shape[1]} columns")
    return out


@derived("leading_dimensions_cover", "configuration")
def leading_dimensions_cover(view: View) -> bool | None:
    """Is every A/B/C/D leading dimension at least the rows (column-major) or columns (row-major)?"""
    if _ld_conflicts(view):
        return False
    known = all(_shape(view, m) and isinstance(_layout(view, m, "LD"), int)
                and _layout(view, m, "ORDER") in ("CUBLASLT_ORDER_COL", "CUBLASLT_ORDER_ROW") for m in "ABCD")
    return True if known else None


@derived("leading_dimension_conflicts", "configuration")
def leading_dimension_conflicts(view: View) -> str:
    return "; ".join(_ld_conflicts(view))


@blame("leading_dimensions_cover")
def _ld_blame(view: View) -> list[str]:
    """The leading dimensions that are too small."""
    return [f"layout_{c.split(' ')[0]}.LD" for c in _ld_conflicts(view)]


@derived("aux_type_is_d_type", "configuration")
def aux_type_is_d_type(view: View) -> bool | None:
    """Is EPILOGUE_AUX_DATA_TYPE unset (-1 or never written) or equal to the D type?"""
    aux = view.get("matmul_desc", {}).get("EPILOGUE_AUX_DATA_TYPE") if isinstance(view.get("matmul_desc"), dict) else None
    if aux is None or not isinstance(aux, (str, int)) or isinstance(aux, bool):
        return None  # never written, or not statically known: nothing to say
    d = _layout(view, "D", "TYPE")
    if aux == -1:
        return True
    return None if d is None else aux == d


# C element types of device buffers -> the cudaDataType they hold.
C_ELEMENT_TYPES = {
    "float": "CUDA_R_32F", "double": "CUDA_R_64F", "__half": "CUDA_R_16F", "half": "CUDA_R_16F",
    "__nv_bfloat16": "CUDA_R_16BF", "nv_bfloat16": "CUDA_R_16BF", "__nv_fp8_e4m3": "CUDA_R_8F_E4M3",
    "__nv_fp8_e5m2": "CUDA_R_8F_E5M2", "int8_t": "CUDA_R_8I", "signed char": "CUDA_R_8I", "int32_t": "CUDA_R_32I",
    "int": "CUDA_R_32I",
}


def pointee_data_type(pointer_ctype: str | None) -> str | None:
    """``const float *`` -> CUDA_R_32F; None for void pointers or unknown element types."""
    if not pointer_ctype:
        return None
    base = pointer_ctype.replace("const", "").replace("volatile", "").replace("*", "").strip()
    base = base.split("::")[-1].strip()
    return C_ELEMENT_TYPES.get(base)


@derived("bias_buffer_type", "configuration")
def bias_buffer_type(view: View) -> str | None:
    """The data type of the buffer the user passed as CUBLASLT_MATMUL_DESC_BIAS_POINTER."""
    types = view.get("pointer_types")
    return pointee_data_type(types.get("BIAS_POINTER")) if isinstance(types, dict) else None


@derived("bias_read_type", "configuration")
def bias_read_type(view: View) -> str | None:
    """The type cuBLASLt reads the bias as: BIAS_DATA_TYPE when set, else this GEMM's default."""
    declared = _get(view, "matmul_desc.BIAS_DATA_TYPE")
    return declared if isinstance(declared, str) else expected_bias_type(view)


@derived("bias_buffer_matches_bias_type", "configuration")
def bias_buffer_matches_bias_type(view: View) -> bool | None:
    """Does the bias buffer's element type equal the type cuBLASLt reads the bias as?"""
    buffer, reads = bias_buffer_type(view), bias_read_type(view)
    if buffer is None or reads is None:
        return None
    return buffer == reads
