"""Derived quantities that rules may name (``derived: NAME``): one small function each.

A function takes the fact view of the rule's scope and returns a value, or ``None`` when the
facts it needs are unknown (the rule then stays silent). The engine traces which facts a
function reads to tell an undecided check (a fact it read is unknown) from one that does not
apply: read what decides applicability first, and return before reading the rest.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any, Callable

View = dict[str, Any]
REGISTRY: dict[str, Callable[[View], Any]] = {}
SCOPES: dict[str, str] = {}  # name -> the rule scope whose fact view the function reads
SCOPE_NAMES = ("attribute_set", "configuration", "cutlass")

# For quantities that read many facts of which few are at fault: the facts to blame when the
# quantity decides a rule (most telling first); the finding is reported at the write of the first
# one the user wrote. A quantity without one is blamed on every fact it reads.
BLAME: dict[str, Callable[[View], list[str]]] = {}


def derived(name: str, scope: str) -> Callable[[Callable[[View], Any]], Callable[[View], Any]]:
    """Register ``fn`` as the derived quantity ``name`` of rules of ``scope`` (the loader refuses it
    in a rule of another scope: it would read a view without its facts and never fire)."""
    assert scope in SCOPE_NAMES, scope

    def register(fn: Callable[[View], Any]) -> Callable[[View], Any]:
        REGISTRY[name] = fn
        SCOPES[name] = scope
        return fn

    return register


def blame(name: str) -> Callable[[Callable[[View], list[str]]], Callable[[View], list[str]]]:
    def register(fn: Callable[[View], list[str]]) -> Callable[[View], list[str]]:
        BLAME[name] = fn
        return fn

    return register


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


@derived("size_matches_attribute", "attribute_set")
def size_matches_attribute(view: View) -> bool | None:
    """Does the ``sizeInBytes`` argument equal the byte size of the attribute's type?"""
    size, expected = view.get("size"), view.get("attribute_size")
    if not isinstance(size, int) or not isinstance(expected, int):
        return None
    return size == expected


@blame("size_matches_attribute")
def _size_blame(view: View) -> list[str]:
    """The buffer when its type is what is wrong (the size is the buffer's), else the size."""
    size, buffer_size = view.get("size"), view.get("buffer_size")
    return ["buffer", "size"] if isinstance(buffer_size, int) and buffer_size == size else ["size", "buffer"]


def _a(word: str) -> str:
    """``an int32_t``, ``a uint64_t``, ``a void *``."""
    return f"an {word}" if word[:1].lower() in "aeio" or word.startswith("un") else f"a {word}"


def _sizeof_of(buffer: str) -> str:
    """``sizeof(x)`` for a buffer argument spelt ``&x``; '' when it is not that simple."""
    import re

    m = re.fullmatch(r"&\s*([A-Za-z_][\w.\->\[\]]*)", buffer or "")
    return f"sizeof({m.group(1)})" if m else ""


@derived("size_fix", "attribute_set")
def size_fix(view: View) -> str | None:
    """The fix of a SetAttribute size mismatch, from what is wrong: the size, the buffer's type, or both."""
    size, expected, attr_type = view.get("size"), view.get("attribute_size"), view.get("attribute_type")
    buf, buf_type, buf_size = view.get("buffer") or "", view.get("buffer_type"), view.get("buffer_size")
    if not isinstance(size, int) or not isinstance(expected, int) or not isinstance(attr_type, str):
        return None
    is_pointer = attr_type.rstrip().endswith("*")
    target = "the pointer itself" if is_pointer else attr_type
    if not isinstance(buf_size, int) or not isinstance(buf_type, str):  # a void * or unknown buffer
        return (f"pass sizeInBytes = {expected} (sizeof({attr_type.strip()})) with a buffer that holds "
                f"{'a pointer' if is_pointer else _a(attr_type)}")
    if buf_size == expected:  # the buffer is right: only the size is wrong
        sizeof = _sizeof_of(buf)
        what = f"{buf} ({buf_type}) is the right buffer for {target}" if not is_pointer else \
            f"{buf} holds the pointer ({buf_type})"
        return (f"{what}: pass {sizeof + ' = ' if sizeof else ''}{expected} as sizeInBytes, not {size}"
                + (" (the size of the pointer, not of what it points to)" if is_pointer else ""))
    if buf_size == size:  # the size is the buffer's: the buffer's type is wrong
        return (f"the buffer {buf} is {buf_type} ({buf_size} bytes) but the attribute holds {attr_type} "
                f"({expected} bytes): {'pass the address of a pointer variable' if is_pointer else 'declare it as ' + attr_type}"
                f", and sizeof of it is then {expected}")
    return (f"both are wrong: the buffer {buf} is {buf_type} ({buf_size} bytes) and sizeInBytes is {size}; use "
            f"{_a(attr_type)} variable and pass sizeof of it ({expected})")


# ---- cuBLASLt configuration quantities --------------------------------------------------------
FP8_TYPES = {"CUDA_R_8F_E4M3", "CUDA_R_8F_E5M2"}
TRANSPOSED = {"CUBLAS_OP_T", "CUBLAS_OP_C"}
AUX_GELU = {"CUBLASLT_EPILOGUE_GELU_AUX", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS", "CUBLASLT_EPILOGUE_DGELU",
            "CUBLASLT_EPILOGUE_DGELU_BGRAD"}
AUX_RELU = {"CUBLASLT_EPILOGUE_RELU_AUX", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS", "CUBLASLT_EPILOGUE_DRELU",
            "CUBLASLT_EPILOGUE_DRELU_BGRAD"}
BIAS_INPUT = {"CUBLASLT_EPILOGUE_BIAS", "CUBLASLT_EPILOGUE_RELU_BIAS", "CUBLASLT_EPILOGUE_RELU_AUX_BIAS",
              "CUBLASLT_EPILOGUE_GELU_BIAS", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS"}
ELEMENT_BYTES = {"CUDA_R_64F": 8, "CUDA_R_32F": 4, "CUDA_R_32I": 4, "CUDA_R_16F": 2, "CUDA_R_16BF": 2,
                 "CUDA_R_8F_E4M3": 1, "CUDA_R_8F_E5M2": 1, "CUDA_R_8I": 1, "CUDA_R_8U": 1}


def walk(view: View, path: str, missing: Any = None, not_a_dict: Any = None) -> Any:
    """The value at a dotted fact path (``matmul_desc.EPILOGUE``): ``missing`` when a step is
    absent, ``not_a_dict`` when the path runs into a value. The engine's ``lookup`` uses it too."""
    cur: Any = view
    for step in path.split("."):
        if not isinstance(cur, dict):
            return not_a_dict
        if step not in cur:
            return missing
        cur = cur[step]
    return cur


def _get(view: View, path: str) -> Any:
    """A scalar fact (str, int, float) at ``path``; None for anything else."""
    cur = walk(view, path)
    return cur if isinstance(cur, (str, int, float)) and not isinstance(cur, bool) else None


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
    if a is None or b is None:
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
    return None if d is None else d in FP8_TYPES


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


# ---- CUTLASS 3.x (sm_90) quantities ------------------------------------------------------------
SM90_SMEM_CAPACITY = 232448  # bytes per block with opt-in, measured on the H200 (= CUTLASS sm90_smem_capacity_bytes)


def _short(name: Any) -> str | None:
    return name.rsplit("::", 1)[-1] if isinstance(name, str) else None


def _part(view: View, name: str) -> dict:
    """A part of a CUTLASS view (mainloop, epilogue, kernel, gemm, problem); {} when absent."""
    part = view.get(name)
    return part if isinstance(part, dict) else {}


def _tile(view: View, i: int) -> int | None:
    tile = _part(view, "mainloop").get("tile_shape")
    if isinstance(tile, list) and len(tile) > i and isinstance(tile[i], int):
        return tile[i]
    return None


@derived("tile_m", "cutlass")
def tile_m(view: View) -> int | None:
    return _tile(view, 0)


@derived("kernel_schedule", "cutlass")
def kernel_schedule(view: View) -> str | None:
    """The mainloop's kernel schedule without namespace, e.g. KernelTmaWarpSpecializedCooperative."""
    return _short(_get(view, "mainloop.kernel_schedule"))


@derived("epilogue_schedule", "cutlass")
def epilogue_schedule(view: View) -> str | None:
    return _short(_get(view, "epilogue.epilogue_schedule"))


@derived("tma_kernel_schedule", "cutlass")
def tma_kernel_schedule(view: View) -> bool | None:
    """A TMA mainloop schedule (the builder asserts TMA alignment for these; Auto falls back silently)."""
    s = kernel_schedule(view)
    return None if s is None else s.startswith("KernelTma")


@derived("cooperative_schedule", "cutlass")
def cooperative_schedule(view: View) -> bool | None:
    s = kernel_schedule(view)
    return None if s is None else "Cooperative" in s


def _alignment_bits(view: View, part: str, operand: str) -> int | None:
    values = view.get(part)
    if not isinstance(values, dict):
        return None
    alignment, bits = values.get(f"alignment_{operand}"), values.get(f"element_{operand}_bits")
    if isinstance(alignment, int) and isinstance(bits, int):
        return alignment * bits
    return None


@derived("ab_alignment_128_bits", "cutlass")
def ab_alignment_128_bits(view: View) -> bool | None:
    """AlignmentA x bits(A) and AlignmentB x bits(B) are multiples of 128 bits (16 bytes, TMA)."""
    a, b = _alignment_bits(view, "mainloop", "a"), _alignment_bits(view, "mainloop", "b")
    if (a is not None and a % 128) or (b is not None and b % 128):
        return False
    return None if a is None or b is None else True


@derived("cd_alignment_128_bits", "cutlass")
def cd_alignment_128_bits(view: View) -> bool | None:
    """AlignmentC x bits(C) and AlignmentD x bits(D) are multiples of 128 bits (C void excepted)."""
    values = _part(view, "epilogue")
    c = None if values.get("element_c") == "void" else _alignment_bits(view, "epilogue", "c")
    d = _alignment_bits(view, "epilogue", "d")
    if (c is not None and c % 128) or (d is not None and d % 128):
        return False
    return None if d is None else True


@derived("mainloop_smem_bytes", "cutlass")
def mainloop_smem_bytes(view: View) -> int | None:
    """Shared memory of an explicit StageCount<N> mainloop: N x (A tile + B tile + 16 B of barriers).
    A lower bound of the kernel's total (the epilogue and scheduler come on top)."""
    values = _part(view, "mainloop")
    if values.get("stage_count_kind") != "fixed":  # checked first: what it reads is what the value depends on
        return None
    stages, m, n, k = values.get("stages"), _tile(view, 0), _tile(view, 1), _tile(view, 2)
    bits_a, bits_b = values.get("element_a_bits"), values.get("element_b_bits")
    if not all(isinstance(x, int) for x in (stages, m, n, k, bits_a, bits_b)):
        return None
    per_stage = -(-bits_a * m * k // 8) + -(-bits_b * n * k // 8)
    return stages * (per_stage + 16)


@derived("smem_fits_sm90", "cutlass")
def smem_fits_sm90(view: View) -> bool | None:
    need = mainloop_smem_bytes(view)
    return None if need is None else need <= SM90_SMEM_CAPACITY


@derived("sm90_smem_capacity", "cutlass")
def sm90_smem_capacity(view: View) -> int:
    return SM90_SMEM_CAPACITY


def _is(view: View, path: str, short: str) -> bool | None:
    v = _short(_get(view, path))
    return None if v is None else v == short


@derived("narrow_nt_operands", "cutlass")
def narrow_nt_operands(view: View) -> bool | None:
    """8-bit A/B with A ColumnMajor and B RowMajor (the RS 'TransposeB' path)."""
    values = _part(view, "mainloop")
    bits = values.get("element_a_bits")
    a_col, b_row = _is(view, "mainloop.layout_a", "ColumnMajor"), _is(view, "mainloop.layout_b", "RowMajor")
    if bits is None or a_col is None or b_row is None:
        return None
    return bits == 8 and a_col and b_row


@derived("non16_tt_operands", "cutlass")
def non16_tt_operands(view: View) -> bool | None:
    """Non-16-bit A/B (tf32/float, fp8, int8) with A RowMajor and B RowMajor (the RS 'SwapAB' path)."""
    values = _part(view, "mainloop")
    bits = values.get("element_a_bits")
    a_row, b_row = _is(view, "mainloop.layout_a", "RowMajor"), _is(view, "mainloop.layout_b", "RowMajor")
    if bits is None or a_row is None or b_row is None:
        return None
    return bits != 16 and a_row and b_row


@derived("tile_k", "cutlass")
def tile_k(view: View) -> int | None:
    return _tile(view, 2)


@derived("tile_k_multiple", "cutlass")
def tile_k_multiple(view: View) -> int | None:
    """TileK granularity of an sm_90 GMMA: 32 bytes of A (16 for 16-bit, 8 for tf32, 32 for 8-bit)."""
    values = _part(view, "mainloop")
    bits = values.get("element_a_bits")
    return 256 // bits if isinstance(bits, int) and bits in (8, 16, 32) else None


@derived("tile_k_aligned", "cutlass")
def tile_k_aligned(view: View) -> bool | None:
    k, multiple = tile_k(view), tile_k_multiple(view)
    return None if k is None or multiple is None else k % multiple == 0


_FP8 = {"cutlass::float_e4m3_t", "cutlass::float_e5m2_t"}
_TF32 = {"float", "cutlass::tfloat32_t"}
_INT8 = {"int8_t", "uint8_t"}


@derived("gmma_type_supported", "cutlass")
def gmma_type_supported(view: View) -> bool | None:
    """(ElementA, ElementB, accumulator) is a combination the sm_90 GMMA selector accepts
    (same-width operands; mixed widths take CUTLASS's mixed-input path and are not judged)."""
    values = _part(view, "mainloop")
    a, b, acc = values.get("element_a"), values.get("element_b"), values.get("element_accumulator")
    if not all(isinstance(x, str) for x in (a, b, acc)):
        return None
    if values.get("element_a_bits") != values.get("element_b_bits"):
        return None
    if acc == "cutlass::half_t":
        return (a == b == "cutlass::half_t") or (a in _FP8 and b in _FP8)
    if acc == "float":
        return (a == b and a in ("cutlass::half_t", "cutlass::bfloat16_t")) or (a in _TF32 and b in _TF32) or \
            (a in _FP8 and b in _FP8)
    if acc == "int32_t":
        return a in _INT8 and b in _INT8
    return False


def _ints(values: Any, n: int) -> list[int] | None:
    if isinstance(values, list) and len(values) >= n and all(isinstance(v, int) for v in values[:n]):
        return values[:n]
    return None


@derived("auto_stage_count", "cutlass")
def auto_stage_count(view: View) -> int | None:
    """What StageCountAuto / StageCountAutoCarveout<B> gives: (232448 - B rounded up to 128) divided by
    (A tile + B tile rounded up to 128, + 16 bytes of pipeline barriers), as CUTLASS's
    compute_stage_count_or_override computes it (sm90_gmma_builder.inl)."""
    ml = _part(view, "mainloop")
    kind, carveout = ml.get("stage_count_kind"), ml.get("carveout_bytes")
    if kind == "auto":
        carveout = 0
    if kind not in ("auto", "auto_carveout") or not isinstance(carveout, int):
        return None
    stage = _auto_stage_bytes(view)
    if stage is None:
        return None
    return (SM90_SMEM_CAPACITY // 128 * 128 - -(-carveout // 128) * 128) // stage


def _auto_stage_bytes(view: View) -> int | None:
    """One stage as the automatic stage count sizes it: A tile + B tile rounded up to 128 bytes,
    plus 16 bytes of pipeline barriers."""
    ml = _part(view, "mainloop")
    m, n, k, bits_a, bits_b = _tile(view, 0), _tile(view, 1), _tile(view, 2), ml.get("element_a_bits"), ml.get("element_b_bits")
    if not all(isinstance(x, int) for x in (m, n, k, bits_a, bits_b)):
        return None
    return -(-(-(-bits_a * m * k // 8) + -(-bits_b * n * k // 8)) // 128) * 128 + 16


@derived("auto_stage_bytes", "cutlass")
def auto_stage_bytes(view: View) -> int | None:
    """One mainloop stage as compute_stage_count_or_override sizes it (see _auto_stage_bytes)."""
    return _auto_stage_bytes(view)


@derived("auto_stage_count_max", "cutlass")
def auto_stage_count_max(view: View, carveout_min: int | None = None) -> int | None:
    """The most stages StageCountAuto / StageCountAutoCarveout<B> can give in an sm_90 builder:
    compute_stage_count_or_override (gemm/collective/builders/sm90_gmma_builder.inl:69-84),
    (232448 / align * align - round_up(B, align)) / (round_up(A tile + B tile, align) + 16), with the
    smallest alignment (128; the RS and mixed-input builders use the smem swizzle's, up to 1024, :463)
    and B = 0 when the carve-out is not known (the epilogue's SharedStorage in source mode). Each of
    these only lowers the count, so this is an upper bound of the builder's PipelineStages; for A
    and B of different widths the larger of both operand orders (the mixed-input builder may swap)."""
    ml = _part(view, "mainloop")
    kind = ml.get("stage_count_kind")
    if kind not in ("auto", "auto_carveout"):
        return None
    carveout = ml.get("carveout_bytes") if kind == "auto_carveout" else 0
    carveout = carveout if isinstance(carveout, int) and not isinstance(carveout, bool) else (carveout_min or 0)
    m, n, k, bits_a, bits_b = _tile(view, 0), _tile(view, 1), _tile(view, 2), ml.get("element_a_bits"), \
        ml.get("element_b_bits")
    if not all(isinstance(x, int) for x in (m, n, k, bits_a, bits_b)):
        return None
    capacity = SM90_SMEM_CAPACITY // 128 * 128 - -(-carveout // 128) * 128
    best = 0
    for ba, bb in {(bits_a, bits_b), (bits_b, bits_a)}:
        stage = -(-(-(-ba * m * k // 8) + -(-bb * n * k // 8)) // 128) * 128 + 16
        best = max(best, capacity // stage)
    return best


@derived("auto_stage_leftover_bytes", "cutlass")
def auto_stage_leftover_bytes(view: View) -> int | None:
    """Shared memory an automatic stage count leaves for everything else (the epilogue)."""
    stages, stage = auto_stage_count(view), _auto_stage_bytes(view)
    return None if stages is None or stage is None else SM90_SMEM_CAPACITY - stages * stage


@derived("tma_epilogue", "cutlass")
def tma_epilogue(view: View) -> bool | None:
    s = epilogue_schedule(view)
    return None if s is None else s in ("TmaWarpSpecialized", "TmaWarpSpecializedCooperative")


@derived("epilogue_tile_min_bytes", "cutlass")
def epilogue_tile_min_bytes(view: View) -> int | None:
    """A lower bound of a TMA epilogue's shared memory: one automatic epilogue tile of D
    (cooperative: min(128, TileM) x gcd(min(32, TileN), TileN); otherwise min(64, TileM) x
    gcd(min(32 or 64, TileN), TileN) — sm90_compute_tile_shape_or_override in the epilogue builder)."""
    ep = _part(view, "epilogue")
    m, n, bits = _tile(view, 0), _tile(view, 1), ep.get("element_d_bits")
    sched = epilogue_schedule(view)
    if not all(isinstance(x, int) for x in (m, n, bits)) or sched is None or \
            _short(ep.get("epilogue_tile")) != "EpilogueTileAuto":
        return None
    if sched == "TmaWarpSpecializedCooperative":
        tm, tn = min(128, m), math.gcd(min(32, n), n)
    else:
        tm, tn = min(64, m), math.gcd(min(64 if bits == 8 and n % 64 == 0 else 32, n), n)
    return tm * tn * bits // 8


@derived("builder_kernel_schedule", "cutlass")
def builder_kernel_schedule(view: View) -> str | None:
    """The kernel schedule the sm_90 mainloop builder builds with: KernelScheduleAuto resolved as
    gemm/collective/builders/sm90_gmma_builder.inl:1002-1020 does it (CUDA >= 12.1): TMA when A and B
    are 16-byte aligned (sizeof x Alignment % 16), then Pingpong for TileM 64 and Cooperative for any
    other TileM; KernelCpAsyncWarpSpecialized when they are not. Other schedules are returned as written."""
    s = kernel_schedule(view)
    if s != "KernelScheduleAuto":
        return s
    a, b = _alignment_bits(view, "mainloop", "a"), _alignment_bits(view, "mainloop", "b")
    if a is None or b is None:
        return None
    if a % 128 or b % 128:
        return "KernelCpAsyncWarpSpecialized"
    m = tile_m(view)
    if m is None:
        return None
    return "KernelTmaWarpSpecializedPingpong" if m == 64 else "KernelTmaWarpSpecializedCooperative"


# sm_90 kernel schedules whose builder lays two consumer warpgroups along M (AtomLayoutMNK 2x1x1:
# sm90_gmma_builder.inl:245-249, :428-432, :559-563) and those with one (1x1x1)
_COOPERATIVE_MMA = {"KernelTmaWarpSpecializedCooperative", "KernelTmaWarpSpecializedCooperativeFP8FastAccum"}
_SINGLE_WARPGROUP_MMA = {"KernelTmaWarpSpecialized", "KernelTmaWarpSpecializedPingpong",
                         "KernelTmaWarpSpecializedFP8FastAccum", "KernelTmaWarpSpecializedPingpongFP8FastAccum",
                         "KernelCpAsyncWarpSpecialized", "KernelCpAsyncWarpSpecializedPingpong"}


@derived("mma_tile_m", "cutlass")
def mma_tile_m(view: View) -> int | None:
    """Rows of the builder's TiledMma: 64 (one GMMA warpgroup) x AtomLayoutMNK's M, which is 2 for the
    cooperative schedules (sm90_gmma_builder.inl:245-249; cp.async cooperative only for TileM >= 128,
    :802-803). The epilogue's mma_tile_m (sm90_epilogue_tma_warpspecialized.hpp:613) is this value."""
    s = builder_kernel_schedule(view)
    if s is None:
        return None
    if s in _COOPERATIVE_MMA:
        return 128
    if s == "KernelCpAsyncWarpSpecializedCooperative":
        m = tile_m(view)
        return None if m is None else (64 if m < 128 else 128)
    return 64 if s in _SINGLE_WARPGROUP_MMA else None


def _explicit_epilogue_tile(view: View) -> list[int] | None:
    return _ints(_part(view, "epilogue").get("epilogue_tile"), 2)


@derived("explicit_epilogue_tile_supported", "cutlass")
def explicit_epilogue_tile_supported(view: View) -> bool | None:
    """An explicit EpilogueTile (a cute::Shape) passes the TMA epilogue builder's checks,
    epilogue/collective/builders/sm90_builder.inl:160-162: M == 64 with TmaWarpSpecialized, M == 128
    with TmaWarpSpecializedCooperative, and N % 16 == 0. None for EpilogueTileAuto."""
    sched = epilogue_schedule(view)
    if sched is None or tma_epilogue(view) is not True:
        return None
    tile = _explicit_epilogue_tile(view)
    if tile is None:
        return None
    need_m = 128 if sched == "TmaWarpSpecializedCooperative" else 64
    return tile[0] == need_m and tile[1] % 16 == 0


@derived("epilogue_tile_m", "cutlass")
def epilogue_tile_m(view: View) -> int | None:
    """M of the TMA epilogue's tile: an explicit EpilogueTile's M, or the automatic one of
    sm90_compute_tile_shape_or_override (sm90_builder.inl:117-126): min(128, TileM) for
    TmaWarpSpecializedCooperative, min(64, TileM) for TmaWarpSpecialized."""
    sched = epilogue_schedule(view)
    if sched is None or tma_epilogue(view) is not True:
        return None
    tile = _part(view, "epilogue").get("epilogue_tile")
    if _short(tile) == "EpilogueTileAuto":
        m = tile_m(view)
        return None if m is None else min(128 if sched == "TmaWarpSpecializedCooperative" else 64, m)
    explicit = _explicit_epilogue_tile(view)
    return None if explicit is None else explicit[0]


@derived("mma_tile_m_divides_epilogue_tile_m", "cutlass")
def mma_tile_m_divides_epilogue_tile_m(view: View) -> bool | None:
    """CUTE_STATIC_ASSERT(epi_tile_m % mma_tile_m == 0) of the TMA epilogue's store
    (sm90_epilogue_tma_warpspecialized.hpp:671). An explicit tile the builder already rejects
    (sm90_builder.inl:160), or a TileM the MMA tile does not divide (the cooperative kernel's
    "Tile Size to be greater than or equal to 128": FL303), never gets there and counts as dividing."""
    if explicit_epilogue_tile_supported(view) is False:
        return True
    epi, mma, m = epilogue_tile_m(view), mma_tile_m(view), tile_m(view)
    if epi is None or mma is None or m is None:
        return None
    if m % mma:  # a TileM the MMA does not tile fails before (FL303, FL308)
        return True
    return epi % mma == 0


@derived("epilogue_tile_text", "cutlass")
def epilogue_tile_text(view: View) -> str | None:
    tile = _explicit_epilogue_tile(view)
    return None if tile is None else "x".join(map(str, tile))


@derived("tile_n", "cutlass")
def tile_n(view: View) -> int | None:
    return _tile(view, 1)


# ---- the sm_90 mainloop's shared-memory layouts (gemm/collective/builders/sm90_common.inl) ---------
def _smem_swizzle_bits(major: str, bits: int, extent: int, rs: bool = False, transpose_b: bool = False) -> int | None:
    """B of the Swizzle<B,4,3> of the GMMA smem layout atom that ss_smem_selector (sm90_common.inl:270)
    or rs_smem_selector (:175) picks for an operand: SW128 (3), SW64 (2), SW32 (1) or INTER (0), the
    largest whose width (1024, 512, 256, 128 bits) divides ``extent`` (K for a K-major operand, M or N
    for an MN-major one). None where the selector asserts (the extent is not a multiple of 8 elements
    or of the INTER atom)."""
    widths = [(3, 1024), (2, 512), (1, 256), (0, 128)]
    if rs and major == "MN":
        if bits == 32:  # whole-word types: SW32 (only SW32 for the transposed-B path), else INTER
            widths = [(1, 256)] if transpose_b else [(1, 256), (0, 128)]
        elif bits == 8 and transpose_b:
            widths = [(3, 1024)]
    for swizzle, width in widths:
        if width % bits == 0 and extent % (width // bits) == 0:
            return swizzle
    return None


def _coalesce_x(shape: list[int], stride: list[int]) -> tuple[list[int], list[int]]:
    """cute::detail::coalesce_x (cute/layout.hpp:826): a last mode of size 1 counts as size 2; modes
    are merged from the right where shape_i * stride_i == the next mode's stride."""
    new_shape, new_stride = [2 if shape[-1] == 1 else shape[-1]], [stride[-1]]
    for s, d in zip(reversed(shape[:-1]), reversed(stride[:-1])):
        if s == 1:
            continue
        if new_shape[0] == 1:
            new_shape[0], new_stride[0] = s, d
        elif s * d == new_stride[0]:
            new_shape[0], new_stride[0] = s * new_shape[0], d
        else:
            new_shape.insert(0, s)
            new_stride.insert(0, d)
    return new_shape, new_stride


def _compose_divisible(lshape: list[int], rshape: int, rstride: int) -> bool | None:
    """The static divisibility checks of cute::detail::composition_impl (cute/layout.hpp:1053-1111) for
    a rank-1 right-hand layout rshape:rstride: "Stride Divisibility Condition" and "Shape Divisibility
    Condition". None where a check needs an unknown rshape."""
    if rstride == 0 or len(lshape) < 2:
        return True
    rest_shape, rest_stride = rshape, rstride
    for curr in lshape[:-1]:
        if not (rest_stride % curr == 0 or rest_stride < curr):
            return False
        next_shape, next_stride = -(-curr // rest_stride), -(-rest_stride // curr)
        if next_shape != 1 and rest_shape != 1:
            if rest_shape is None:
                return None
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape:
                return False
            rest_shape //= new_shape
        rest_stride = next_stride
    return True


def _stage_slice_divisible(swizzle: int, stage_stride: int, stages: int | None) -> bool | None:
    """Does ``SmemLayout{}(_, _, Int<0>{})`` compile for an smem layout of Swizzle<swizzle,4,3> whose
    stages are ``stage_stride`` elements apart? The slice (cute/swizzle_layout.hpp:230-260,
    slice_and_offset) composes the swizzle's projections swizzle_anti_zy and swizzle_only_zy with the
    stage mode stages:stage_stride, and composition asserts divisibility."""
    if swizzle == 0:  # composition(Swizzle<0,M,S>, ...) is the identity (swizzle_layout.hpp:310)
        return True
    b, m, s = swizzle, 4, 3
    shape = [1 << m, 1 << b, 1 << (s - b), 1 << b, 1]
    compact = [1, 1 << m, 1 << (m + b), 1 << (m + s), 1 << (m + s + b)]
    anti = [compact[0], 0, compact[2], 0, compact[4]]
    only = [0, compact[1], 0, compact[3], 0]
    result: bool | None = True
    for strides in (anti, only):
        lshape, _ = _coalesce_x(shape, strides)
        ok = _compose_divisible(lshape, stages, stage_stride)
        if ok is False:
            return False
        if ok is None:
            result = None
    return result


def _operand_k_major(layout: Any, operand: str) -> bool | None:
    short = _short(layout)
    if short not in ("RowMajor", "ColumnMajor"):
        return None
    return short == ("RowMajor" if operand == "a" else "ColumnMajor")


@derived("smem_stage_slice_problem", "cutlass")
def smem_stage_slice_problem(view: View) -> str | None:
    """The operand whose mainloop smem layout cannot be sliced at its first stage: the TMA mainloops'
    to_underlying_arguments call make_tma_copy with SmemLayoutA{}(_,_,Int<0>{}) and
    SmemLayoutB{}(_,_,Int<0>{}) (sm90_mma_tma_gmma_ss_warpspecialized.hpp:181-188,
    sm90_mma_tma_gmma_rs_warpspecialized_mixed_input.hpp:327-349), and with a 128-byte swizzle a
    stage stride (TileN x TileK elements) such as 136 x 64 breaks CuTe's "Stride Divisibility
    Condition". "" when both slices compile; None when not known (an unknown stage count, a
    layout the selector rejects, an MN-major operand of the register-A path)."""
    s = builder_kernel_schedule(view)
    if s is None:
        return None
    if not s.startswith("KernelTma") or not s.endswith(("Cooperative", "Pingpong", "WarpSpecialized",
                                                         "FP8FastAccum")):
        return ""  # cp.async and other mainloops make no TMA copy from the smem layout
    ml = _part(view, "mainloop")
    m, n, k = _tile(view, 0), _tile(view, 1), _tile(view, 2)
    bits_a, bits_b = ml.get("element_a_bits"), ml.get("element_b_bits")
    ka, kb = _operand_k_major(ml.get("layout_a"), "a"), _operand_k_major(ml.get("layout_b"), "b")
    if not all(isinstance(x, int) for x in (m, n, k, bits_a, bits_b)) or ka is None or kb is None:
        return None
    if m % 64 or n % 8:  # the GMMA selector fails first (FL308, FL332)
        return ""
    rs = bits_a != bits_b or (not (bits_a == 16 and bits_b == 16) and not (ka and kb))  # is_use_rmem_A
    if rs and (not (ka and kb) or bits_b < bits_a):  # MN-major or swapped (B narrower) register-A paths
        return None
    stages = ml.get("stages") if ml.get("stage_count_kind") == "fixed" else None
    if not isinstance(stages, int):
        stages = None
    unknown = False
    for name, bits, mn, kmaj in (("A", bits_a, m, ka), ("B", bits_b, n, kb)):
        # the ss selector maps MN-major tf32 and 8-bit operands to K-major (gmma_ss_tag_to_major_A/B)
        major = "K" if kmaj or (not rs and bits in (8, 32)) else "MN"
        swizzle = _smem_swizzle_bits(major, bits, k if major == "K" else mn, rs=rs)
        if swizzle is None:
            unknown = True
            continue
        ok = _stage_slice_divisible(swizzle, mn * k, stages)
        if ok is False:
            return (f"the {name} tile's stages are {mn} x {k} = {mn * k} elements apart, which the "
                    f"{ {1: 32, 2: 64, 3: 128}[swizzle]}-byte swizzle of its shared-memory "
                    f"layout does not divide")
        if ok is None:
            unknown = True
    return None if unknown else ""


@derived("auto_stages_leave_no_epilogue_room", "cutlass")
def auto_stages_leave_no_epilogue_room(view: View) -> bool | None:
    if tma_epilogue(view) is not True:
        return None if tma_epilogue(view) is None else False
    left, need = auto_stage_leftover_bytes(view), epilogue_tile_min_bytes(view)
    return None if left is None or need is None else left < need


@derived("tile_scheduler", "cutlass")
def tile_scheduler(view: View) -> str | None:
    return _short(_get(view, "kernel.tile_scheduler"))


@derived("fp8_fast_accum_schedule", "cutlass")
def fp8_fast_accum_schedule(view: View) -> bool | None:
    s = kernel_schedule(view)
    return None if s is None else s.endswith("FP8FastAccum")


@derived("ab_both_fp8", "cutlass")
def ab_both_fp8(view: View) -> bool | None:
    ml = _part(view, "mainloop")
    a, b = ml.get("element_a"), ml.get("element_b")
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return a in _FP8 and b in _FP8


@derived("fp8_promotion_steps", "cutlass")
def fp8_promotion_steps(view: View) -> int | None:
    """MMAs per K tile of the FP8 (non-fast-accumulation) mainloop: TileK / 32."""
    k = tile_k(view)
    return None if k is None or k <= 0 or k % 32 else k // 32


@derived("fp8_promotion_interval_ok", "cutlass")
def fp8_promotion_interval_ok(view: View) -> bool | None:
    """can_implement of the FP8 TMA mainloop: mma_promotion_interval (default 4) % (TileK / 32) == 0."""
    steps = fp8_promotion_steps(view)
    return None if steps is None else 4 % steps == 0


@derived("cluster_size", "cutlass")
def cluster_size(view: View) -> int | None:
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    return None if c is None else c[0] * c[1] * c[2]


@derived("cluster_k", "cutlass")
def cluster_k(view: View) -> int | None:
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    return None if c is None else c[2]


@derived("cluster_shape_text", "cutlass")
def cluster_shape_text(view: View) -> str | None:
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    return None if c is None else "x".join(map(str, c))


@derived("cluster_divides_tile", "cutlass")
def cluster_divides_tile(view: View) -> bool | None:
    """Do the cluster's M and N extents divide the tile's? The TMA mainloops split the tile across the
    cluster with cute::shape_div(TileShape, ClusterShape), whose "Divisibility Condition" needs one of
    each pair to divide the other (a cluster extent of at most 16 never is a multiple of a tile extent)."""
    c = _ints(_part(view, "mainloop").get("cluster_shape"), 3)
    t = _ints(_part(view, "mainloop").get("tile_shape"), 3)
    if c is None or t is None or 0 in c[:2] or 0 in t[:2]:
        return None
    return all(ti % ci == 0 or ci % ti == 0 for ti, ci in zip(t[:2], c[:2]))


@derived("tile_shape_text", "cutlass")
def tile_shape_text(view: View) -> str | None:
    t = _ints(_part(view, "mainloop").get("tile_shape"), 3)
    return None if t is None else "x".join(map(str, t))


@derived("operator_style_epilogue", "cutlass")
def operator_style_epilogue(view: View) -> bool | None:
    """Is the epilogue a bare cutlass::epilogue::collective::DefaultEpilogue (called as an operator,
    without the load/store pipeline interface), not wrapped in Sm90TmaWarpSpecializedAdapter?"""
    ep = _part(view, "epilogue")
    if "type" not in ep:  # an epilogue from the CollectiveBuilder (or none read)
        return False if ep else None
    name = ep["type"]
    return _short(name) == "DefaultEpilogue" if isinstance(name, str) else None


@derived("sm90_warp_specialized_schedule", "cutlass")
def sm90_warp_specialized_schedule(view: View) -> bool | None:
    """An sm_90 warp-specialized kernel schedule (TMA or cp.async; ping-pong and cooperative included)."""
    s = kernel_schedule(view)
    if s is None:
        return None
    return "WarpSpecialized" in s and s.startswith(("KernelTma", "KernelCpAsync")) and not s.endswith(("Sm100", "Sm103", "Sm120"))


@derived("builder_arch", "cutlass")
def builder_arch(view: View) -> str | None:
    return _short(_get(view, "mainloop.arch")) or _short(_get(view, "epilogue.arch"))


# ---- CUTLASS 2.x ------------------------------------------------------------------------------
def _shape2x(view: View, name: str) -> list[int] | None:
    return _ints(_part(view, "gemm").get(name), 3)


@derived("warp_divides_threadblock", "cutlass")
def warp_divides_threadblock(view: View) -> bool | None:
    tb, warp = _shape2x(view, "threadblock_shape"), _shape2x(view, "warp_shape")
    if tb is None or warp is None or 0 in warp:
        return None
    return all(t % w == 0 for t, w in zip(tb, warp))


@derived("warp_k_mmas", "cutlass")
def warp_k_mmas(view: View) -> int | None:
    """Warp-level MMAs per K step of a 2.x warp tile: WarpShape::kK / InstructionShape::kK."""
    warp, inst = _shape2x(view, "warp_shape"), _shape2x(view, "instruction_shape")
    if warp is None or inst is None or inst[2] == 0 or warp[2] % inst[2]:
        return None
    return warp[2] // inst[2]


@derived("warp_k_mmas_valid", "cutlass")
def warp_k_mmas_valid(view: View) -> bool | None:
    n = warp_k_mmas(view)
    return None if n is None else n >= 2 and n % 2 == 0


# mma.sync shapes of arch::Mma for tensor ops (arch/mma_sm75.h, arch/mma_sm80.h), by A/B element
_MMA_SYNC_SHAPES = {
    "cutlass::half_t": {(16, 8, 16), (16, 8, 8)},
    "cutlass::bfloat16_t": {(16, 8, 16), (16, 8, 8)},
    "cutlass::tfloat32_t": {(16, 8, 8), (16, 8, 4)},
    "int8_t": {(16, 8, 32), (16, 8, 16), (8, 8, 16)},
    "uint8_t": {(16, 8, 32), (16, 8, 16), (8, 8, 16)},
}


@derived("instruction_shape_supported", "cutlass")
def instruction_shape_supported(view: View) -> bool | None:
    """A 2.x tensor-op InstructionShape that arch::Mma defines for these element types."""
    g = _part(view, "gemm")
    inst, a, b = _shape2x(view, "instruction_shape"), g.get("element_a"), g.get("element_b")
    if _short(g.get("op_class")) != "OpClassTensorOp" or inst is None or a != b or a not in _MMA_SYNC_SHAPES:
        return None
    return tuple(inst) in _MMA_SYNC_SHAPES[a]


# ---- 2.x template specializations, read from the CUTLASS headers by tools/gen_cutlass2x_tables.py ----
@functools.lru_cache(maxsize=1)
def _cutlass2x_tables() -> dict:
    path = Path(__file__).with_name("cutlass2x_specializations.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _spec_name(v: Any) -> Any:
    """A template argument as the table writes it: no cutlass::/arch::/layout:: prefix, int as int32_t."""
    if not isinstance(v, str):
        return v
    v = v.removeprefix("cutlass::")
    v = v.removeprefix("arch::").removeprefix("layout::")
    return {"int": "int32_t"}.get(v, v)


def _spec_matches(row: dict, values: dict) -> bool:
    return all(row.get(k) == "*" or row.get(k) == v for k, v in values.items())


def _gemm2x_kernel_args(view: View) -> dict | None:
    """The template arguments device::Gemm hands to kernel::DefaultGemm: for a ColumnMajor C, the
    partial specialization of device::Gemm (gemm/device/gemm.h:572-630) swaps A and B, transposes
    their layouts and uses a RowMajor C. None when one of them is unknown."""
    g = _part(view, "gemm")
    keys = ("op_class", "arch", "element_a", "layout_a", "element_b", "layout_b", "layout_c", "element_accumulator",
            "instruction_shape", "stages", "operator")
    values = {k: g.get(k) for k in keys}
    if any(v is None or not isinstance(v, (str, int, list)) or isinstance(v, bool) for v in values.values()):
        return None
    values = {k: _spec_name(v) for k, v in values.items()}
    if values["layout_c"] == "ColumnMajor":
        flip = {"RowMajor": "ColumnMajor", "ColumnMajor": "RowMajor"}
        values.update(element_a=values["element_b"], element_b=values["element_a"], layout_c="RowMajor",
                      layout_a=flip.get(values["layout_b"], values["layout_b"]),
                      layout_b=flip.get(values["layout_a"], values["layout_a"]))
    return values


@derived("default_gemm_problem", "cutlass")
def default_gemm_problem(view: View) -> str | None:
    """Why no cutlass::gemm::kernel::DefaultGemm specialization (gemm/kernel/default_gemm.h) serves a
    2.x tensor-op GEMM; "" when one does, None when an argument is unknown."""
    args = _gemm2x_kernel_args(view)
    if args is None:
        return None
    if args["op_class"] != "OpClassTensorOp":
        return ""
    keys = ("op_class", "arch", "element_a", "layout_a", "element_b", "layout_b", "layout_c", "element_accumulator",
            "instruction_shape", "stages", "operator")
    rows = _cutlass2x_tables()["default_gemm"]
    if any(_spec_matches(r, {k: args[k] for k in keys}) for r in rows):
        return ""
    same_arch = [r for r in rows if r["op_class"] == "OpClassTensorOp" and r["arch"] == args["arch"]
                 and not str(r["layout_a"]).endswith(">")]
    if not same_arch:
        return f"DefaultGemm has no tensor-op specialization for arch::{args['arch']}"
    wants = []
    for r in same_arch:
        need = []
        if r["instruction_shape"] != "*":
            need.append("InstructionShape GemmShape<" + ", ".join(map(str, r["instruction_shape"])) + ">")
        if r["stages"] != "*":
            need.append(f"Stages = {r['stages']}")
        wants.append(" and ".join(need) or "other arguments")
    shape = "x".join(map(str, args["instruction_shape"])) if isinstance(args["instruction_shape"], list) else "?"
    return (f"DefaultGemm for arch::{args['arch']} needs {' or '.join(wants)}, not InstructionShape {shape} with "
            f"Stages = {args['stages']}")


@derived("arch_mma_problem", "cutlass")
def arch_mma_problem(view: View) -> str | None:
    """Why the warp-level tensor-op MMA of a 2.x GEMM finds no cutlass::arch::Mma specialization
    (arch/mma_sm75.h, mma_sm80.h, mma_sm89.h, ...): DefaultMmaTensorOp (gemm/warp/default_mma_tensor_op.h:99-104)
    asks for arch::Mma<InstructionShape, 32, ElementA, RowMajor, ElementB, ColumnMajor, ElementAccumulator,
    RowMajor, Operator>, except for its specializations (default_mma_tensor_op_sm80.h: float A and B run
    as tfloat32_t, ...). Judged for the DefaultGemm paths that use it (Sm75, Sm80); "" when the MMA
    exists or when only the instruction shape is wrong (FL322), None when an argument is unknown."""
    args = _gemm2x_kernel_args(view)
    if args is None:
        return None
    if args["op_class"] != "OpClassTensorOp" or args["arch"] not in ("Sm75", "Sm80") or default_gemm_problem(view):
        return ""
    if instruction_shape_supported(view) is False:
        return ""
    tables = _cutlass2x_tables()
    elements = {"element_a": args["element_a"], "element_b": args["element_b"],
                "element_c": args["element_accumulator"], "operator": args["operator"]}
    for r in tables["default_mma_tensor_op"]:
        if _spec_matches({k: r[k] for k in elements}, elements):
            uses = r.get("arch_mma")
            if uses is None or any(not isinstance(v, str) or v[:1].isupper() for v in uses.values()):
                return None  # a dependent type (the mixed-input upcast): not judged
            elements = dict(uses)
            break
    want = {"shape": args["instruction_shape"], "threads": 32, "element_a": elements["element_a"],
            "layout_a": "RowMajor", "element_b": elements["element_b"], "layout_b": "ColumnMajor",
            "element_c": elements["element_c"], "layout_c": "RowMajor", "operator": elements["operator"]}
    if any(_spec_matches(r, want) for r in tables["arch_mma"]):
        return ""
    shape = "x".join(map(str, args["instruction_shape"]))
    return (f"no arch::Mma<GemmShape<{shape.replace('x', ', ')}>, 32, {want['element_a']}, {want['element_b']}, "
            f"{want['element_c']}, {want['operator']}> exists (mma.sync has no {shape} instruction for "
            f"{want['element_a']} x {want['element_b']} accumulating in {want['element_c']})")


SM90_MAX_THREADS_PER_BLOCK = 1024
SM90_REGISTERS_PER_BLOCK = 65536  # 32-bit registers a block may use (the register file of an SM)


@derived("threads_2x", "cutlass")
def threads_2x(view: View) -> int | None:
    """kThreadCount of a 2.x GEMM kernel: 32 x the warps of the threadblock tile
    (gemm/kernel/gemm.h: WarpCount = ThreadblockShape / WarpShape; device/gemm.h:478 launches
    dim3 block(GemmKernel::kThreadCount))."""
    tb, warp = _shape2x(view, "threadblock_shape"), _shape2x(view, "warp_shape")
    if tb is None or warp is None or 0 in warp or any(t % w for t, w in zip(tb, warp)):
        return None
    return 32 * (tb[0] // warp[0]) * (tb[1] // warp[1]) * (tb[2] // warp[2])


@derived("registers_min_2x", "cutlass")
def registers_min_2x(view: View) -> int | None:
    """A lower bound of the 32-bit registers a thread of the 2.x tensor-op mainloop keeps live: its share
    of the warp's accumulator tile (WarpM x WarpN accumulators over 32 lanes), the two warp-fragment
    buffers for A and B that the mainloop double-buffers (WarpM x InstK and InstK x WarpN elements each,
    gemm/threadblock/mma_multistage.h warp_loaded_frag_A/B[2], mma_pipelined.h warp_frag_A/B[2]) and one
    64-bit global address; ptxas allocates at least this many (device_kernel.h:74 Kernel has no
    __launch_bounds__, so it does not trade registers for threads)."""
    g = _part(view, "gemm")
    warp, inst = _shape2x(view, "warp_shape"), _shape2x(view, "instruction_shape")
    bits_a, bits_b, bits_c = g.get("element_a_bits"), g.get("element_b_bits"), g.get("element_accumulator_bits")
    if _short(g.get("op_class")) != "OpClassTensorOp" or warp is None or inst is None or \
            not all(isinstance(b, int) for b in (bits_a, bits_b, bits_c)):
        return None
    acc = warp[0] * warp[1] * bits_c // 1024
    frag_a, frag_b = warp[0] * inst[2] * bits_a // 1024, inst[2] * warp[1] * bits_b // 1024
    return acc + 2 * (frag_a + frag_b) + 2


@derived("threadblock_resource_problem", "cutlass")
def threadblock_resource_problem(view: View) -> str | None:
    """Why a 2.x GEMM's threadblock cannot be launched on sm_90: more than 1024 threads, or more
    registers than the 65536 of an SM (registers_min_2x per thread, allocated in units of 8); "" when it
    fits, None when unknown. Stages < 2 is FL325's case and not judged."""
    stages = _part(view, "gemm").get("stages")
    threads = threads_2x(view)
    if threads is None or not isinstance(stages, int):
        return None
    if stages < 2:
        return ""
    if threads > SM90_MAX_THREADS_PER_BLOCK:
        return (f"{threads // 32} warps make a {threads}-thread block, more than the {SM90_MAX_THREADS_PER_BLOCK} "
                "threads a block may have (the thread maps of small warp tiles also run out of iterations)")
    regs = registers_min_2x(view)
    if regs is None:
        return None
    if min(-(-regs // 8) * 8, 256) * threads > SM90_REGISTERS_PER_BLOCK:  # at most 255 per thread (ptxas spills)
        return (f"{threads // 32} warps make a {threads}-thread block, and each thread keeps at least {regs} "
                f"registers live (accumulators and double-buffered A/B fragments of the warp tile): more than "
                f"the {SM90_REGISTERS_PER_BLOCK} registers of an SM")
    return ""


@derived("default_config_problem", "cutlass")
def default_config_problem(view: View) -> str | None:
    """Why CUTLASS has no DefaultGemmConfiguration for a 2.x GEMM that relies on the defaults."""
    value = _part(view, "gemm").get("default_config_problem")
    return value if isinstance(value, str) and value else None


@derived("defaults_missing", "cutlass")
def defaults_missing(view: View) -> bool | None:
    if _part(view, "gemm") == {}:
        return None
    return default_config_problem(view) is not None


@derived("access_bits_a", "cutlass")
def access_bits_a(view: View) -> int | None:
    return _alignment_bits(view, "gemm", "a")


@derived("access_bits_b", "cutlass")
def access_bits_b(view: View) -> int | None:
    return _alignment_bits(view, "gemm", "b")


@derived("cp_async_access_ok", "cutlass")
def cp_async_access_ok(view: View) -> bool | None:
    """A multistage (Stages >= 3, cp.async) 2.x mainloop copies 4, 8 or 16 bytes per access:
    AlignmentA x bits(A) and AlignmentB x bits(B) must be 32, 64 or 128."""
    stages = _part(view, "gemm").get("stages")
    a, b = access_bits_a(view), access_bits_b(view)
    if not isinstance(stages, int):
        return None
    if stages < 3:
        return True
    if (a is not None and a not in (32, 64, 128)) or (b is not None and b not in (32, 64, 128)):
        return False
    return None if a is None or b is None else True


@derived("smem_bytes_2x", "cutlass")
def smem_bytes_2x(view: View) -> int | None:
    """Shared memory of a 2.x multistage mainloop: Stages x (TB_M x TB_K x bits(A) + TB_N x TB_K x bits(B)) / 8."""
    g = _part(view, "gemm")
    tb, stages, bits_a, bits_b = _shape2x(view, "threadblock_shape"), g.get("stages"), g.get("element_a_bits"), \
        g.get("element_b_bits")
    if tb is None or not all(isinstance(x, int) for x in (stages, bits_a, bits_b)):
        return None
    return stages * (tb[0] * tb[2] * bits_a + tb[1] * tb[2] * bits_b) // 8


@derived("smem_fits_sm90_2x", "cutlass")
def smem_fits_sm90_2x(view: View) -> bool | None:
    need = smem_bytes_2x(view)
    return None if need is None else need <= SM90_SMEM_CAPACITY


# ---- literal problem sizes (can_implement) ------------------------------------------------------
def _contiguous(layout: Any, operand: str) -> str | None:
    """The extent that is contiguous in memory for an operand's layout: A is MxK, B is NxK
    (CUTLASS 3.x), C and D are MxN."""
    short = _short(layout)
    if short not in ("RowMajor", "ColumnMajor"):
        return None
    return {("a", "RowMajor"): "k", ("a", "ColumnMajor"): "m", ("b", "ColumnMajor"): "k", ("b", "RowMajor"): "n",
            ("c", "RowMajor"): "n", ("c", "ColumnMajor"): "m", ("d", "RowMajor"): "n", ("d", "ColumnMajor"): "m"}[
        (operand, short)]


@derived("tma_misaligned_extent", "cutlass")
def tma_misaligned_extent(view: View) -> str | None:
    """The first operand whose contiguous extent is not a multiple of 16 bytes of its elements, as
    the sm_90 TMA collectives' can_implement checks it ("" when all are; None when unknown)."""
    problem, ml, ep = _part(view, "problem"), _part(view, "mainloop"), _part(view, "epilogue")
    checks = [("A", "a", ml.get("layout_a"), ml.get("element_a_bits"))] * (tma_kernel_schedule(view) is True) + \
             [("B", "b", ml.get("layout_b"), ml.get("element_b_bits"))] * (tma_kernel_schedule(view) is True)
    if tma_epilogue(view) is True:
        if ep.get("element_c") != "void":
            checks.append(("C", "c", ep.get("layout_c"), ep.get("element_c_bits")))
        checks.append(("D", "d", ep.get("layout_d"), ep.get("element_d_bits")))
    unknown = False
    for name, operand, layout, bits in checks:
        extent = _contiguous(layout, operand)
        value = problem.get(extent) if extent else None
        if not isinstance(value, int) or not isinstance(bits, int) or bits <= 0 or 128 % bits:
            unknown = True
            continue
        need = 128 // bits
        if value % need:
            return (f"{extent.upper()} = {value}, the contiguous extent of {_short(layout)} {name}, is not a "
                    f"multiple of {need} {bits}-bit elements (16 bytes)")
    return None if unknown or not checks else ""


@derived("misaligned_2x_operand", "cutlass")
def misaligned_2x_operand(view: View) -> str | None:
    """The first TensorRef of a 2.x GEMM's Arguments whose leading dimension is not a multiple of
    its operand's alignment, as ``kernel::Gemm::can_implement`` checks it with
    ``TensorRef_aligned`` (A: AlignmentA, B: AlignmentB, C and D: the epilogue's access width);
    "" when all are, None when a leading dimension or an alignment is unknown."""
    problem, gemm = _part(view, "problem"), _part(view, "gemm")
    checks = [("A", "ld_a", gemm.get("alignment_a")), ("B", "ld_b", gemm.get("alignment_b")),
              ("C", "ld_c", gemm.get("alignment_c")), ("D", "ld_d", gemm.get("alignment_c"))]
    unknown = False
    for name, key, alignment in checks:
        ld = problem.get(key)
        if not isinstance(ld, int) or not isinstance(alignment, int) or alignment <= 0:
            unknown = True
            continue
        if ld % alignment:
            return (f"the leading dimension of {name} is {ld}, not a multiple of its {alignment}-element "
                    f"alignment")
    return None if unknown else ""


# the TMA epilogue's shared memory (registers its quantities; it reads this module's helpers)
from fusionlint.rules import derived_epilogue_storage  # noqa: E402,F401
