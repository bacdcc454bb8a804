"""Turn an extracted cuBLASLt configuration into a standalone probe program.

The program replays the configuration — descriptor creation, every resolved attribute write
in program order (with the buffer type and size the user wrote, so a wrong size is replayed
too), the four layouts, the preference — then runs the heuristic and the matmul on small
random data and checks D against a host reference (``fusionlint_probe.h``). Values the front
end could not resolve get small legal stand-ins, listed in the program's header comment; so do
the layouts of a descriptor-only configuration (a descriptor set up in a file that never runs
the GEMM), which get square matrices of the scale type; an attribute write whose value did not
resolve is not replayed (the library default stands in), and is listed too. D is checked only for
the epilogues the host reference models (:data:`REFERENCE_EPILOGUES`); for the others (the DRELU /
DGELU gradients) the program checks every status and the CUDA error state and then prints why D is
not checked (``EVIDENCE numerics skipped <why>``, ``probe_verify_skipped``).
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from fusionlint.evidence.probe_names import unique_stem
from fusionlint.model.cublaslt_facts import AttrSet, Configuration, Field, FileFacts
from fusionlint.model.cublaslt_api import ApiModel, load_model
from fusionlint.model.values import Known, Unknown, describe
from fusionlint.rules.derived import pointee_data_type

DEFAULT_DIM = 64
SCALAR_TYPES = {"CUDA_R_32F": "float", "CUDA_R_64F": "double", "CUDA_R_16F": "__half",
                "CUDA_R_16BF": "__nv_bfloat16", "CUDA_R_32I": "int32_t", "CUDA_C_32F": "float2"}
ELEMENT_C_TYPES = {"CUDA_R_32F": "float", "CUDA_R_64F": "double", "CUDA_R_16F": "__half",
                   "CUDA_R_16BF": "__nv_bfloat16", "CUDA_R_8F_E4M3": "__nv_fp8_e4m3", "CUDA_R_8F_E5M2": "__nv_fp8_e5m2",
                   "CUDA_R_8I": "int8_t", "CUDA_R_32I": "int32_t"}
CONVERT = {"__half": "__float2half", "__nv_bfloat16": "__float2bfloat16"}
BYTES = {"CUDA_R_64F": 8, "CUDA_R_32F": 4, "CUDA_R_32I": 4, "CUDA_R_16F": 2, "CUDA_R_16BF": 2}
POINTER_SIZES = {  # bytes to allocate for pointer attributes other than bias/aux
    "SCALE_POINTER": 4096, "AMAX": 256,
}
# The epilogues whose D the host reference (fusionlint_probe.h probe_verify) computes: whether D adds
# the bias vector, and the activation applied last. The *_AUX forms also write the activation's input
# (or ReLU mask) to EPILOGUE_AUX_POINTER, a buffer of its own that D does not depend on; BGRADA /
# BGRADB write the bias gradient to BIAS_POINTER and leave D the plain GEMM (cublasLt.h: "Stores Bias
# gradient in the auxiliary output"; the H200 evidence of FL114_bgrad*_ok: D = alpha AB + beta C).
# Those outputs themselves are not checked.
REFERENCE_EPILOGUES = {
    "CUBLASLT_EPILOGUE_DEFAULT": (False, None),
    "CUBLASLT_EPILOGUE_RELU": (False, "PROBE_RELU"), "CUBLASLT_EPILOGUE_RELU_AUX": (False, "PROBE_RELU"),
    "CUBLASLT_EPILOGUE_BIAS": (True, None),
    "CUBLASLT_EPILOGUE_RELU_BIAS": (True, "PROBE_RELU"), "CUBLASLT_EPILOGUE_RELU_AUX_BIAS": (True, "PROBE_RELU"),
    "CUBLASLT_EPILOGUE_GELU": (False, "PROBE_GELU"), "CUBLASLT_EPILOGUE_GELU_AUX": (False, "PROBE_GELU"),
    "CUBLASLT_EPILOGUE_GELU_BIAS": (True, "PROBE_GELU"), "CUBLASLT_EPILOGUE_GELU_AUX_BIAS": (True, "PROBE_GELU"),
    "CUBLASLT_EPILOGUE_BGRADA": (False, None), "CUBLASLT_EPILOGUE_BGRADB": (False, None),
}
# Gradient epilogues: D is the GEMM combined with the EPILOGUE_AUX input (a ReLU bit mask, a GELU
# input) of the forward pass, which the reference does not model: D is not checked.
GRADIENT_EPILOGUES = ("CUBLASLT_EPILOGUE_DRELU", "CUBLASLT_EPILOGUE_DRELU_BGRAD", "CUBLASLT_EPILOGUE_DGELU",
                      "CUBLASLT_EPILOGUE_DGELU_BGRAD")


@dataclass
class Probe:
    source: str
    substitutions: list[str] = field(default_factory=list)
    no_reference: str | None = None  # why D is not checked (the probe prints "EVIDENCE numerics skipped")


def _known(f: Field | None) -> int | str | None:
    if f is None or not isinstance(f.value, Known):
        return None
    return f.name or f.value.value


def _int(f: Field | None, default: int, what: str, subs: list[str]) -> int:
    if f is not None and isinstance(f.value, Known) and isinstance(f.value.value, int):
        return f.value.value
    subs.append(f"{what}: unknown ({f.value.reason if f and isinstance(f.value, Unknown) else 'not set'}), using {default}")
    return default


class _Writer:
    def __init__(self, model: ApiModel):
        self.model = model
        self.lines: list[str] = []
        self.n = 0

    def emit(self, line: str = "") -> None:
        self.lines.append(("  " + line) if line else "")

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"


def _literal(value: int | str) -> str:
    return str(value) if isinstance(value, str) else f"{value}"


def no_reference(epilogue: str) -> str | None:
    """Why the host reference cannot compute D for ``epilogue`` (None: it can)."""
    if epilogue in REFERENCE_EPILOGUES:
        return None
    if epilogue in GRADIENT_EPILOGUES:
        return (f"no host reference for {epilogue}: a gradient epilogue, its D depends on the EPILOGUE_AUX input "
                "of the forward pass")
    return f"no host reference for epilogue {epilogue}"


def _dropped(s: AttrSet) -> str:
    """A stand-in line for an attribute write the probe does not replay."""
    where = f" at line {s.site.line}" if s.site is not None else ""
    if not s.attribute:
        return f"an attribute write{where}: attribute unknown, not replayed"
    if isinstance(s.value, Unknown):
        why = s.value.reason
    elif isinstance(s.value, Known):
        why = f"value {s.value.value!r} not a constant"
    else:  # an object or address (a run-time pointer written to a value attribute)
        why = f"`{describe(s.value)}` is no value"
    return f"{s.attribute}: unknown ({why}), not set: the library default"


def _replay_set(w: _Writer, handle: str, s: AttrSet, pointer_buffers: dict[str, str],
                subs: list[str] | None = None) -> None:
    spec = w.model.attribute(s.attribute) if s.attribute else None
    if spec is None:
        if subs is not None:
            subs.append(_dropped(s))
        return
    name = w.var()
    if spec.pointer:
        if isinstance(s.value, Known) and s.value.value == 0:
            target = "nullptr"  # the user's null pointer (a bias pointer left null: no bias), not a buffer
        else:
            target = pointer_buffers.get(s.attribute) or f"probe_workspace({4096})"
        if target.isidentifier() and target != "nullptr":  # a buffer variable of the probe: its address, as the user passed
            w.emit(f"PROBE({s.function}({handle}, {s.attribute}, &{target}, sizeof({target})));")
            return
        w.emit(f"const void *{name} = {target};")
        w.emit(f"PROBE({s.function}({handle}, {s.attribute}, &{name}, sizeof({name})));")
        return
    if not isinstance(s.value, Known) or isinstance(s.value.value, str) and not s.value_name:
        if subs is not None:
            subs.append(_dropped(s))
        return
    ctype = s.buffer_type if s.buffer_type and s.buffer_type not in ("void", "const void") else spec.type
    ctype = ctype.replace("const ", "")
    value = s.value_name or _literal(s.value.value)
    size = s.size.value if isinstance(s.size, Known) else None
    size_expr = f"sizeof({name})" if size is None else str(size)
    w.emit(f"const {ctype} {name} = ({ctype}){value};")
    w.emit(f"PROBE({s.function}({handle}, {s.attribute}, &{name}, {size_expr}));")


def _scalar(scale_type: str, value: float) -> str:
    ctype = SCALAR_TYPES.get(scale_type, "float")
    if ctype in CONVERT:
        return f"{CONVERT[ctype]}({value}f)"
    if ctype == "float2":
        return f"float2{{{value}f, 0.0f}}"
    return f"({ctype}){value}"


def generate(cfg: Configuration, model: ApiModel | None = None) -> Probe | None:
    """A probe program for ``cfg``, or None when its descriptor or (outside a descriptor-only
    configuration) its layouts did not resolve."""
    model = model or load_model()
    if cfg.desc is None or (cfg.kind != "descriptor" and any(cfg.layouts.get(m) is None for m in "ABD")):
        return None
    subs: list[str] = []
    all_subs = subs
    w = _Writer(model)
    desc_f = cfg.effective.get("matmul_desc", {})
    lay = {m: cfg.effective.get(f"layout_{m}") or cfg.effective.get("layout_D", {}) for m in "ABCD"}
    compute = _known(desc_f.get("COMPUTE_TYPE")) or "CUBLAS_COMPUTE_32F"
    scale = _known(desc_f.get("SCALE_TYPE")) or "CUDA_R_32F"
    stand_in_type = scale if scale in ("CUDA_R_32F", "CUDA_R_16F", "CUDA_R_64F") else "CUDA_R_32F"
    for m in "ABCD":
        if cfg.layouts.get(m) is None and (m != "C" or cfg.layouts.get("D") is None):
            subs.append(f"layout {m}: not in this configuration, using a {DEFAULT_DIM}x{DEFAULT_DIM} "
                        f"column-major {stand_in_type} matrix")
    transa = _known(desc_f.get("TRANSA")) in ("CUBLAS_OP_T", "CUBLAS_OP_C")
    transb = _known(desc_f.get("TRANSB")) in ("CUBLAS_OP_T", "CUBLAS_OP_C")
    epilogue = _known(desc_f.get("EPILOGUE")) or "CUBLASLT_EPILOGUE_DEFAULT"
    if isinstance(epilogue, int):
        epilogue = model.enum_name("cublasLtEpilogue_t", epilogue) or str(epilogue)
    why_unchecked = no_reference(epilogue)

    w.emit("cublasLtHandle_t lt;")
    w.emit("PROBE(cublasLtCreate(&lt));")
    mats: dict[str, dict] = {}
    for i, m in enumerate("ABCD"):
        f = lay[m]
        missing = cfg.layouts.get(m) is None and cfg.layouts.get("D") is None
        subs, all_subs = ([] if missing else all_subs), all_subs
        t = _known(f.get("TYPE")) or stand_in_type
        rows = _int(f.get("ROWS"), DEFAULT_DIM, f"{m} rows", subs)
        cols = _int(f.get("COLS"), DEFAULT_DIM, f"{m} cols", subs)
        row_major = _known(f.get("ORDER")) == "CUBLASLT_ORDER_ROW"
        ld = _int(f.get("LD"), cols if row_major else rows, f"{m} ld", subs)
        batch = _int(f.get("BATCH_COUNT"), 1, f"{m} batch count", subs)
        stride = _int(f.get("STRIDED_BATCH_OFFSET"), 0, f"{m} batch stride", subs)
        mats[m] = {"type": t, "rows": rows, "cols": cols, "ld": ld, "batch": batch, "row_major": row_major}
        stride_arg = stride if batch > 1 else -1
        w.emit(f"ProbeMatrix {m} = probe_matrix({t}, {rows}, {cols}, {max(ld, 1)}, {i + 1}, "
               f"{'true' if row_major else 'false'}, {batch}, {stride_arg});")
    subs = all_subs
    d = mats["D"]
    bias_len = d["cols"] if epilogue == "CUBLASLT_EPILOGUE_BGRADB" else d["rows"]
    bias_type = _known(desc_f.get("BIAS_DATA_TYPE"))
    buffer_type = pointee_data_type(desc_f["BIAS_POINTER"].buffer_type) if "BIAS_POINTER" in desc_f else None
    if buffer_type is not None:
        bias_type = buffer_type  # replay the user's buffer, whatever cuBLASLt will read it as
    elif not isinstance(bias_type, str):
        bias_type = "CUDA_R_16BF" if d["type"] == "CUDA_R_32F" and mats["A"]["type"].startswith("CUDA_R_8F") else d["type"]
        if d["type"].startswith("CUDA_R_8F"):
            bias_type = mats["C"]["type"]
    w.emit("std::vector<float> bias_values;")
    bias_c = ELEMENT_C_TYPES.get(str(bias_type), "void")
    w.emit(f"const {bias_c} *bias = (const {bias_c} *)probe_vector({bias_type}, {bias_len}, 7, &bias_values);")
    aux_ld = _int(desc_f.get("EPILOGUE_AUX_LD"), d["rows"], "aux ld", []) if "EPILOGUE_AUX_LD" in desc_f else d["rows"]
    aux_stride = _int(desc_f.get("EPILOGUE_AUX_BATCH_STRIDE"), 0, "aux batch stride", []) \
        if "EPILOGUE_AUX_BATCH_STRIDE" in desc_f else 0
    aux_elements = max(max(aux_ld, 1) * d["cols"], aux_stride) * max(d["batch"], 1)
    w.emit(f"void *aux = probe_workspace({aux_elements * 8 + 4096});")
    w.emit("float one = 1.0f;")
    pointer_buffers = {"CUBLASLT_MATMUL_DESC_BIAS_POINTER": "bias",
                       "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER": "aux"}
    for ptr in ("A_SCALE_POINTER", "B_SCALE_POINTER", "C_SCALE_POINTER", "D_SCALE_POINTER", "AMAX_D_POINTER",
                "EPILOGUE_AUX_SCALE_POINTER", "EPILOGUE_AUX_AMAX_POINTER", "D_OUT_SCALE_POINTER"):
        pointer_buffers[f"CUBLASLT_MATMUL_DESC_{ptr}"] = "probe_device_copy(&one, sizeof(one))"

    w.emit("cublasLtMatmulDesc_t desc;")
    w.emit(f"PROBE(cublasLtMatmulDescCreate(&desc, {compute}, {scale}));")
    for s in cfg.desc.sets:
        _replay_set(w, "desc", s, pointer_buffers, subs)
    handles = {}
    for m in "ABCD":
        layout_obj = cfg.layouts.get(m) or cfg.layouts.get("D")
        handles[m] = f"l{m}"
        mm = mats[m]
        w.emit(f"cublasLtMatrixLayout_t l{m};")
        w.emit(f"PROBE(cublasLtMatrixLayoutCreate(&l{m}, {mm['type']}, {mm['rows']}, {mm['cols']}, {mm['ld']}));")
        for s in (layout_obj.sets if layout_obj is not None else []):
            _replay_set(w, f"l{m}", s, {}, subs)
    w.emit("const size_t workspace_size = 32u << 20;")
    w.emit("void *workspace = probe_workspace(workspace_size);")
    w.emit("cublasLtMatmulPreference_t pref;")
    w.emit("PROBE(cublasLtMatmulPreferenceCreate(&pref));")
    w.emit("PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, "
           "&workspace_size, sizeof(workspace_size)));")
    if cfg.preference is not None:
        for s in cfg.preference.sets:
            if s.attribute != "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES":
                _replay_set(w, "pref", s, {}, subs)
    w.emit("cublasLtMatmulHeuristicResult_t result = {};")
    w.emit("int count = 0;")
    w.emit("PROBE(cublasLtMatmulAlgoGetHeuristic(lt, desc, lA, lB, lC, lD, pref, 1, &result, &count));")
    w.emit(f"const auto alpha_value = {_scalar(str(scale), 1.0)};")
    w.emit(f"const auto beta_value = {_scalar(str(scale), 0.0)};")
    mode = _known(desc_f.get("POINTER_MODE")) or "CUBLASLT_POINTER_MODE_HOST"
    vector = mode in ("CUBLASLT_POINTER_MODE_DEVICE_VECTOR", "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO",
                      "CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST")
    if vector:  # alpha (and for DEVICE_VECTOR beta) is one value per row of D, in device memory
        w.emit(f"std::vector<std::remove_const_t<decltype(alpha_value)>> alpha_rows({d['rows']}, alpha_value), "
               f"beta_rows({d['rows']}, beta_value);")
        w.emit("const void *alpha = probe_device_copy(alpha_rows.data(), alpha_rows.size() * sizeof(alpha_value));")
        beta_expr = ("probe_device_copy(beta_rows.data(), beta_rows.size() * sizeof(beta_value))"
                     if mode == "CUBLASLT_POINTER_MODE_DEVICE_VECTOR" else "&beta_value")
        w.emit(f"const void *beta = {beta_expr};")
    elif mode == "CUBLASLT_POINTER_MODE_DEVICE":
        w.emit("const void *alpha = probe_device_copy(&alpha_value, sizeof(alpha_value));")
        w.emit("const void *beta = probe_device_copy(&beta_value, sizeof(beta_value));")
    else:
        w.emit("const void *alpha = &alpha_value;")
        w.emit("const void *beta = &beta_value;")
    w.emit("PROBE(cublasLtMatmul(lt, desc, alpha, A.dev, lA, B.dev, lB, beta, C.dev, lC, D.dev, lD, "
           "count > 0 ? &result.algo : nullptr, workspace, workspace_size, 0));")
    if why_unchecked:  # the statuses and the CUDA error state are still checked; D is not
        w.emit(f"probe_verify_skipped({_c_string(why_unchecked)});")
        w.emit("return 0;")
        return _program(cfg, subs, w, why_unchecked)
    w.emit("ProbeCheck check;")
    w.emit(f"check.transa = {'true' if transa else 'false'};")
    w.emit(f"check.transb = {'true' if transb else 'false'};")
    w.emit("check.A = &A, check.B = &B, check.C = &C, check.D = &D;")
    adds_bias, activation = REFERENCE_EPILOGUES[epilogue]
    if adds_bias:
        w.emit("check.bias = &bias_values;")
    if activation:
        w.emit(f"check.activation = {activation};")
    k = mats["A"]["rows"] if transa else mats["A"]["cols"]
    tol = 1.0 if d["type"].startswith("CUDA_R_8F") else 1e-3 * max(k, 64) / 64 if d["type"] == "CUDA_R_32F" \
        and compute == "CUBLAS_COMPUTE_32F" and mats["A"]["type"] == "CUDA_R_32F" else 0.1 * max(k, 64) / 64
    w.emit(f"check.tolerance = {tol};")
    if d["type"].startswith("CUDA_R_8F"):  # D rounded to 3 (E4M3) or 2 (E5M2) mantissa bits
        w.emit(f"check.rel_tolerance = {0.125 if d['type'] == 'CUDA_R_8F_E5M2' else 0.0625};")
    w.emit("probe_verify(check);")
    w.emit("return 0;")
    return _program(cfg, subs, w, None)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _program(cfg: Configuration, subs: list[str], w: _Writer, why_unchecked: str | None) -> Probe:
    header = [f"// fusionlint probe for the {cfg.kind} configuration at {cfg.path}:{cfg.site.line}",
              "// (generated: the descriptor, layouts and attribute writes replayed on small random data)"]
    header += [f"// stand-in: {s}" for s in subs]
    if why_unchecked:
        header.append(f"// numerics: not checked ({why_unchecked})")
    body = "\n".join(w.lines)
    source = "\n".join(header) + "\n#include <cstdint>\n#include \"fusionlint_probe.h\"\n\nint main() {\n" + body + "\n}\n"
    return Probe(source, subs, why_unchecked)


def probe_header() -> Path:
    return Path(str(resources.files("fusionlint.evidence") / "include" / "fusionlint_probe.h"))


def probe_name(source: str, cfg: Configuration) -> str:
    """A file stem for the probe of ``cfg``: source stem and the GEMM call's line."""
    return f"{Path(source).stem}_L{cfg.site.line}"


def write_probes(facts: FileFacts, out: Path) -> list[Path]:
    """One probe per GEMM of ``facts`` (its matmul call, else its heuristic query) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(probe_header(), out / "fusionlint_probe.h")
    judged = {c.heuristic_loc for c in facts.configurations if c.kind == "matmul"}
    written = []
    seen: dict[str, int] = {}
    for cfg in facts.configurations:
        if cfg.kind == "descriptor" or (cfg.kind == "heuristic" and cfg.loc in judged):
            continue
        probe = generate(cfg)
        if probe is None:
            continue
        path = out / f"{unique_stem(probe_name(facts.path, cfg), seen)}.cu"
        path.write_text(probe.source, encoding="utf-8")
        written.append(path)
    return written
