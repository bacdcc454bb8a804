"""One cuBLASLt configuration written in many code shapes: the metamorphic set.

A configuration's verdict must not depend on how it is written. Each configuration here (see the
two sources below) is written in every shape below, each a complete program that builds with
nvcc and runs on the GPU as the mutation programs do (``fusionlint_probe.h``,
``fusionlint_mutation.h``):

- ``plain``       everything in ``main``, values in locals (the mutation set's plain style);
- ``params``      a ``gemm(...)`` function whose every configuration value is a parameter, called
                  from ``main`` with constants;
- ``struct``      a ``GemmConfig`` struct, the optional attributes as ``std::optional`` fields read
                  with ``has_value()``/``value()``/``value_or()``/``*``, passed by const reference;
- ``enum``        the data types as an ``enum class DType`` mapped to ``cudaDataType_t`` by a
                  ``switch`` helper;
- ``traits``      a ``gemm<TA, TB, TC, TD>`` template whose types come from a traits class
                  (``CudaDataType<T>::value``);
- ``class``       a descriptor class in PyTorch's ``CuBlasLtMatmulDescriptor`` style (created in the
                  constructor, a templated ``setAttribute``) held by a GEMM object whose ``configure``
                  and ``run`` members set it up and call the matmul;
- ``header``      a PyTorch-style ``gemm_ex(...)`` helper in a project header that sets an attribute
                  only when its argument asks for it (``if (epilogue != DEFAULT)``, ``if (bias !=
                  nullptr)``) and runs the heuristic and the matmul, called from the ``.cpp`` with
                  constants (the header is also checked on its own);
- ``lambda``      attributes set through a generic setter lambda;
- ``wrapper``     FasterTransformer's cublasMMWrapper: configuration methods store the types and the
                  attributes in members of a wrapper object, whose ``Gemm`` builds the descriptor;
- ``factory``     XLA's: ``MatmulDesc::Create`` returns ``StatusOr<MatmulDesc>`` by value (the handle in
                  a ``unique_ptr``, moved), every attribute set by a templated ``SetAttr`` whose status a
                  ``RETURN_IF_ERROR`` macro checks; the plan runs in ``if (!RunPlan(...).ok())``;
- ``te``          TransformerEngine's: tensors as structs passed by pointer (data, ``DType``, FP8 scale
                  and amax pointers), ``get_cuda_dtype(inputA->data.dtype)``, a scale pointer set only
                  when the tensor has one (``if (inputA->scale_inv != nullptr)``);
- ``builder``     a fluent builder made as a temporary, each attribute a chained setter returning
                  ``*this``, ``build()`` creating the descriptor.

The configurations come from one of two sources (``--source``): the cuBLASLt mutation set of the
same seed (``cNNNN`` is the set's ``mNNNN``), or draws from the measured support table's space
(``space_sample``, ``sNNNN``: FP64, complex, int8, FP8 with scale modes, pointer modes, batching).

``fusionlint`` must give every shape of a configuration the same rule codes::

    python3 -m fusionlint.evidence.shapes_cublaslt generate --seed 1 --count 300 [--source space] --out DIR
    fusionlint check --exit-zero --output-format json --no-system-headers -I fusionlint/evidence/include DIR \\
        > DIR-findings.json
    python3 -m fusionlint.evidence.shapes_cublaslt compare --manifest DIR/manifest.json \\
        --findings DIR-findings.json [--truth kernels_ref/evidence/h200-mutations-cublaslt.json] \\
        [--records OUT/shapes-*.json] [--markdown DIR-report.md]

``--truth``: the mutation set's GPU record scores every shape of its configurations; ``--records``:
the records of the shape programs themselves, built and run on the GPU (``tools/h200_shapes.sh``).

Standard library only, like the mutation set (the programs are built and run on GPU machines; the
space sample reads the support table with ``fusionlint.model.support_table``, itself standard library
only).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from fusionlint.evidence.mutations_cublaslt import (
    CTYPE,
    EPILOGUES as EPILOGUES_,
    FP8 as FP8_TYPES,
    OPS as OPS_,
    ORDERS as ORDERS_,
    POINTER_MODES as POINTER_MODES_,
    Program,
    _pref_heuristic_matmul,
    bias_buffer_type,
    desc_attributes,
    generate as generate_mutations,
    layout_attributes,
    storage,
)

SHAPES = ("plain", "params", "struct", "enum", "traits", "class", "header", "lambda", "wrapper", "factory", "te",
          "builder")
LAYOUTS = (("A", "la"), ("B", "lb"), ("C", "lc"), ("D", "ld"))
I = "  "


def _enum_name(cuda_type: str) -> str:
    """``CUDA_R_16BF`` -> ``kR16BF`` (the enum shape's DType names)."""
    return "k" + cuda_type.removeprefix("CUDA_").replace("_", "")


class ShapeProgram(Program):
    """A mutation program's configuration and buffers, written in one of ``SHAPES``."""

    def __init__(self, entry: dict):
        super().__init__({**entry, "style": "plain" if entry["shape"] == "plain" else "helper"})
        self.shape = entry["shape"]

    def header(self) -> list[str]:
        lines = super().header()
        lines[0] = f"// fusionlint cuBLASLt shape program {self.e['file']} (shape {self.shape}): base {self.e['base']}"
        lines[2] = lines[2].replace("fusionlint.evidence.mutations_cublaslt", "fusionlint.evidence.shapes_cublaslt")
        return lines

    def desc_attrs(self) -> list[dict]:
        return desc_attributes(self.cfg, self.base_cfg)

    def layouts(self, types: dict[str, str] | None = None) -> list[str]:
        """The four layouts created (their types as ``types`` spells them, else the enum names),
        their attributes set from locals."""
        out = [f"{I}cublasLtMatrixLayout_t la, lb, lc, ld;"]
        declared: set[str] = set()
        for which, var in LAYOUTS:
            rows, cols, ld = storage(self.cfg, which)
            t = (types or {}).get(which, self.cfg[f"{which.lower()}_type"])
            out.append(f"{I}PROBE(cublasLtMatrixLayoutCreate(&{var}, {t}, {rows}, {cols}, {ld}));")
            for a in layout_attributes(self.cfg, self.base_cfg, which):
                if a["local"] not in declared:
                    out.append(f"{I}const {a['ctype']} {a['local']} = {a['value']};")
                    declared.add(a["local"])
                out.append(f"{I}PROBE(cublasLtMatrixLayoutSetAttribute({var}, CUBLASLT_MATRIX_LAYOUT_{a['attr']}, "
                           f"&{a['local']}, sizeof({a['local']})));")
        return out

    def set_from_locals(self) -> list[str]:
        """The descriptor's attributes, each from a local of its type (the plain style's way)."""
        out = []
        for a in self.desc_attrs():
            if not a["pointer"]:
                out.append(f"{I}const {a['ctype']} {a['local']} = {a['value']};")
            out.append(f"{I}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, "
                       f"&{a['local']}, sizeof({a['local']})));")
        return out

    def finish(self, destroy_desc: bool = True) -> list[str]:
        """After the matmul: the preference and the layouts destroyed, and the descriptor unless
        ``destroy_desc`` is false (a shape that owns it elsewhere)."""
        out = ["", f"{I}cudaDeviceSynchronize();", f"{I}PROBE(cublasLtMatmulPreferenceDestroy(pref));"]
        out += [f"{I}PROBE(cublasLtMatrixLayoutDestroy({v}));" for _, v in LAYOUTS]
        return out + [f"{I}PROBE(cublasLtMatmulDescDestroy(desc));"] if destroy_desc else out

    def text(self) -> str:
        return "\n".join(WRITERS[self.shape](self)) + "\n"


# ---- shapes ------------------------------------------------------------------------------------
def pointer_type(p: ShapeProgram, local: str) -> str:
    """The C type ``Program.buffers`` declares a pointer buffer with (``__nv_bfloat16 *`` for a BF16
    bias), so that a parameter keeps what the buffer is."""
    if local == "bias":
        return f"{CTYPE[bias_buffer_type(p.cfg)]} *"
    if local == "aux":
        return "void *"
    return "float *" if local == "amax_d" else "const float *"


def _params(p: ShapeProgram) -> list[str]:
    c = p.cfg
    attrs = p.desc_attrs()
    params = ["cublasLtHandle_t lt", "cublasComputeType_t compute", "cudaDataType_t scale_type",
              "cudaDataType_t a_type", "cudaDataType_t b_type", "cudaDataType_t c_type", "cudaDataType_t d_type"]
    args = ["lt", c["compute_type"], c["scale_type"], *(c[f"{x}_type"] for x in "abcd")]
    for a in attrs:
        params.append(f"{pointer_type(p, a['local'])}{a['local']}" if a["pointer"] else f"{a['ctype']} {a['local']}")
        args.append(a["local"] if a["pointer"] else str(a["value"]))
    params += ["const ProbeMatrix &A", "const ProbeMatrix &B", "const ProbeMatrix &C", "const ProbeMatrix &D",
               "void *workspace", "uint64_t workspace_size"]
    args += ["A", "B", "C", "D", "workspace", "workspace_size"]
    out = p.header() + ["// The whole configuration as parameters of one function, called with constants.",
                        f"static void gemm({', '.join(params)}) {{",
                        f"{I}cublasLtMatmulDesc_t desc;",
                        f"{I}PROBE(cublasLtMatmulDescCreate(&desc, compute, scale_type));"]
    for a in attrs:
        out.append(f"{I}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, &{a['local']}, "
                   f"sizeof({a['local']})));")
    out += p.layouts(types={x: f"{x.lower()}_type" for x in "ABCD"})
    out += _pref_heuristic_matmul(p, I, "desc", ("la", "lb", "lc", "ld"))
    out += p.finish() + ["}", "", "int main() {"]
    out += p.buffers(I)
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));",
            f"{I}gemm({', '.join(args)});"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


def _struct(p: ShapeProgram) -> list[str]:
    c = p.cfg
    attrs = p.desc_attrs()
    fields = ["  cublasComputeType_t compute;", "  cudaDataType_t scale_type;",
              "  cudaDataType_t a_type, b_type, c_type, d_type;",
              "  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;"]
    init = [f"cfg.compute = {c['compute_type']};", f"cfg.scale_type = {c['scale_type']};",
            *(f"cfg.{x}_type = {c[x + '_type']};" for x in "abcd")]
    optional = []
    for a in attrs:
        init.append(f"cfg.{a['local']} = {a['local'] if a['pointer'] else a['value']};")
        if a["attr"] in ("TRANSA", "TRANSB"):
            continue
        optional.append(f"  std::optional<const void *> {a['local']};" if a["pointer"]
                        else f"  std::optional<{a['ctype']}> {a['local']};")
    declared = {a["local"] for a in attrs}
    # every optional attribute the shape knows, set or not: the unset ones stay empty
    for name, ctype in (("epilogue", "cublasLtEpilogue_t"), ("bias", None), ("bias_type", "int32_t"),
                        ("aux", None), ("aux_ld", "int64_t"), ("a_scale", None), ("b_scale", None),
                        ("d_scale", None), ("amax_d", None)):
        if name not in declared:
            optional.append(f"  std::optional<const void *> {name};" if ctype is None
                            else f"  std::optional<{ctype}> {name};")
    out = p.header()[:-1] + ["#include <optional>", ""]
    out += ["// The configuration as a struct; what is not always set is a std::optional.",
            "struct GemmConfig {", *fields, *optional, "};", "",
            "static void run_gemm(cublasLtHandle_t lt, const GemmConfig &cfg, const ProbeMatrix &A, const ProbeMatrix &B,",
            "                     const ProbeMatrix &C, const ProbeMatrix &D, void *workspace, uint64_t workspace_size) {",
            f"{I}cublasLtMatmulDesc_t desc;",
            f"{I}PROBE(cublasLtMatmulDescCreate(&desc, cfg.compute, cfg.scale_type));",
            f"{I}const int32_t transa = cfg.transa, transb = cfg.transb;",
            f"{I}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));",
            f"{I}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));"]
    reads = ("value", "star", "value_or")
    for n, a in enumerate(x for x in attrs if x["attr"] not in ("TRANSA", "TRANSB")):
        how = reads[n % len(reads)]
        name = a["local"]
        decl = f"const void *{name}_value" if a["pointer"] else f"const {a['ctype']} {name}_value"
        if how == "value":
            read = f"cfg.{name}.value()"
        elif how == "star":
            read = f"*cfg.{name}"
        else:
            read = f"cfg.{name}.value_or({'nullptr' if a['pointer'] else a['ctype'] + '{}'})"
        test = f"cfg.{name}.has_value()" if how != "star" else f"cfg.{name}"
        out += [f"{I}if ({test}) {{",
                f"{I}{I}{decl} = {read};",
                f"{I}{I}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, &{name}_value, "
                f"sizeof({name}_value)));", f"{I}}}"]
    out += p.layouts(types={x: f"cfg.{x.lower()}_type" for x in "ABCD"})
    out += _pref_heuristic_matmul(p, I, "desc", ("la", "lb", "lc", "ld"))
    out += p.finish() + ["}", "", "int main() {"]
    out += p.buffers(I)
    out += ["", f"{I}GemmConfig cfg;", *(I + s for s in init),
            f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));",
            f"{I}run_gemm(lt, cfg, A, B, C, D, workspace, workspace_size);"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


def _enum(p: ShapeProgram) -> list[str]:
    c = p.cfg
    types = sorted({c[f"{x}_type"] for x in "abcd"} | {c["scale_type"]} | {"CUDA_R_32F"})
    out = p.header() + ["// The data types as the framework's own enum, mapped by a switch.",
                        f"enum class DType {{ {', '.join(_enum_name(t) for t in types)} }};", "",
                        "static cudaDataType_t to_cuda(DType t) {", f"{I}switch (t) {{"]
    out += [f"{I}{I}case DType::{_enum_name(t)}:\n{I}{I}{I}return {t};" for t in types]
    out += [f"{I}}}", f"{I}return CUDA_R_32F;", "}", "", "int main() {"]
    out += [f"{I}const DType {x}_dtype = DType::{_enum_name(c[x + '_type'])};" for x in "abcd"]
    out.append(f"{I}const DType scale_dtype = DType::{_enum_name(c['scale_type'])};")
    out += p.buffers(I)
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));", f"{I}cublasLtMatmulDesc_t desc;",
            f"{I}PROBE(cublasLtMatmulDescCreate(&desc, {c['compute_type']}, to_cuda(scale_dtype)));"]
    out += p.set_from_locals()
    out += p.layouts(types={x: f"to_cuda({x.lower()}_dtype)" for x in "ABCD"})
    out += _pref_heuristic_matmul(p, I, "desc", ("la", "lb", "lc", "ld"))
    out += p.verify(I) + p.finish() + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);",
                                       f"{I}return 0;", "}"]
    return out


def _traits(p: ShapeProgram) -> list[str]:
    c = p.cfg
    types = sorted({c[f"{x}_type"] for x in "abcd"})
    out = p.header()
    if "CUDA_C_32F" in types and "#include <cuComplex.h>" not in out:
        out.insert(out.index('#include "fusionlint_probe.h"'), "#include <cuComplex.h>")
    out += ["// The data types from the element types, through a traits class.",
            "template <typename T>", "struct CudaDataType;"]
    for t in types:
        out += ["template <>", f"struct CudaDataType<{CTYPE[t]}> {{",
                f"{I}static constexpr cudaDataType_t value = {t};", "};"]
    out += ["", "template <typename TA, typename TB, typename TC, typename TD>",
            "static void gemm(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, const ProbeMatrix &A, "
            "const ProbeMatrix &B, const ProbeMatrix &C,",
            "                 const ProbeMatrix &D, void *workspace, uint64_t workspace_size) {"]
    out += p.layouts(types={"A": "CudaDataType<TA>::value", "B": "CudaDataType<TB>::value",
                            "C": "CudaDataType<TC>::value", "D": "CudaDataType<TD>::value"})
    out += _pref_heuristic_matmul(p, I, "desc", ("la", "lb", "lc", "ld"))
    out += p.finish(destroy_desc=False) + ["}", "", "int main() {"]
    out += p.buffers(I)
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));", f"{I}cublasLtMatmulDesc_t desc;",
            f"{I}PROBE(cublasLtMatmulDescCreate(&desc, {c['compute_type']}, {c['scale_type']}));"]
    out += p.set_from_locals()
    targs = ", ".join(CTYPE[c[f"{x}_type"]] for x in "abcd")
    out += [f"{I}gemm<{targs}>(lt, desc, A, B, C, D, workspace, workspace_size);"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtMatmulDescDestroy(desc));", f"{I}PROBE(cublasLtDestroy(lt));",
                          f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


def _class(p: ShapeProgram) -> list[str]:
    c = p.cfg
    attrs = p.desc_attrs()
    out = p.header()[:-1] + ["#include <memory>", ""]
    out += ["// PyTorch's CuBlasLtMatmulDescriptor style: the descriptor owned by a class, created in its",
            "// constructor and set through a templated member; a GEMM object configures it in one member",
            "// function and runs the matmul in another.",
            "struct DescriptorDeleter {",
            f"{I}void operator()(cublasLtMatmulDescOpaque_t *d) const {{ cublasLtMatmulDescDestroy(d); }}",
            "};", "",
            "class LtMatmulDescriptor {", " public:",
            f"{I}LtMatmulDescriptor(cublasComputeType_t compute, cudaDataType_t scale) {{",
            f"{I}{I}cublasLtMatmulDesc_t raw = nullptr;",
            f"{I}{I}PROBE(cublasLtMatmulDescCreate(&raw, compute, scale));",
            f"{I}{I}descriptor_.reset(raw);", f"{I}}}",
            f"{I}template <typename T>",
            f"{I}void setAttribute(cublasLtMatmulDescAttributes_t attr, const T value) {{",
            f"{I}{I}PROBE(cublasLtMatmulDescSetAttribute(descriptor(), attr, &value, sizeof(T)));", f"{I}}}",
            f"{I}cublasLtMatmulDesc_t descriptor() const {{ return descriptor_.get(); }}", "",
            " private:", f"{I}std::unique_ptr<cublasLtMatmulDescOpaque_t, DescriptorDeleter> descriptor_;",
            "};", "",
            "class Gemm {", " public:",
            f"{I}Gemm() : desc_({c['compute_type']}, {c['scale_type']}) {{}}",
            f"{I}void configure(const void *bias, const void *aux, const float *a_scale, const float *b_scale,",
            f"{I}               const float *c_scale, const float *d_scale, float *amax_d) {{"]
    for a in attrs:
        if a["pointer"]:
            out.append(f"{I}{I}desc_.setAttribute(CUBLASLT_MATMUL_DESC_{a['attr']}, {a['local']});")
        else:
            ctype = "uint32_t" if a["ctype"] == "cublasLtEpilogue_t" else a["ctype"]
            out.append(f"{I}{I}desc_.setAttribute<{ctype}>(CUBLASLT_MATMUL_DESC_{a['attr']}, {a['value']});")
    out += [f"{I}}}",
            f"{I}void run(cublasLtHandle_t lt, const ProbeMatrix &A, const ProbeMatrix &B, const ProbeMatrix &C,",
            f"{I}         const ProbeMatrix &D, void *workspace, uint64_t workspace_size) {{"]
    body = p.layouts()
    body += _pref_heuristic_matmul(p, I, "desc_.descriptor()", ("la", "lb", "lc", "ld"))
    body += p.finish(destroy_desc=False)
    out += [I + line if line else line for line in body]
    out += [f"{I}}}", "", " private:", f"{I}LtMatmulDescriptor desc_;", "};", "", "int main() {"]
    out += p.buffers(I)
    ptr = {a["local"] for a in attrs if a["pointer"]}
    pass_args = [name if name in ptr else "nullptr"
                 for name in ("bias", "aux", "a_scale", "b_scale", "c_scale", "d_scale", "amax_d")]
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));", f"{I}Gemm gemm;",
            f"{I}gemm.configure({', '.join(pass_args)});",
            f"{I}gemm.run(lt, A, B, C, D, workspace, workspace_size);"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


def _wrapper(p: ShapeProgram) -> list[str]:
    """FasterTransformer's cublasMMWrapper style: the types and attributes are members of a wrapper
    object, set by configuration methods called on it one by one; its Gemm method creates the
    descriptor from the members and sets each attribute a configuration method asked for."""
    c = p.cfg
    attrs = p.desc_attrs()
    out = p.header() + [
        "// FasterTransformer's cublasMMWrapper style: configuration methods store the types and the",
        "// attributes in members; Gemm() builds the descriptor from them.",
        "class GemmWrapper {", " public:",
        f"{I}void setGemmConfig(cudaDataType_t aType, cudaDataType_t bType, cudaDataType_t cType,",
        f"{I}                   cudaDataType_t dType, cublasComputeType_t computeType, cudaDataType_t scaleType) {{",
        f"{I}{I}Atype_ = aType;", f"{I}{I}Btype_ = bType;", f"{I}{I}Ctype_ = cType;", f"{I}{I}Dtype_ = dType;",
        f"{I}{I}computeType_ = computeType;", f"{I}{I}scaleType_ = scaleType;", f"{I}}}"]
    for a in attrs:
        ctype = pointer_type(p, a["local"]) if a["pointer"] else a["ctype"] + " "
        out += [f"{I}void set_{a['local']}({ctype}value) {{", f"{I}{I}{a['local']}_ = value;",
                f"{I}{I}has_{a['local']}_ = true;", f"{I}}}"]
    out += [f"{I}void Gemm(cublasLtHandle_t lt, const ProbeMatrix &A, const ProbeMatrix &B, const ProbeMatrix &C,",
            f"{I}          const ProbeMatrix &D, void *workspace, uint64_t workspace_size) {{",
            f"{I}{I}cublasLtMatmulDesc_t desc;",
            f"{I}{I}PROBE(cublasLtMatmulDescCreate(&desc, computeType_, scaleType_));"]
    for a in attrs:
        out += [f"{I}{I}if (has_{a['local']}_) {{",
                f"{I}{I}{I}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, "
                f"&{a['local']}_, sizeof({a['local']}_)));", f"{I}{I}}}"]
    body = p.layouts(types={x: f"{x}type_" for x in "ABCD"})
    body += _pref_heuristic_matmul(p, I, "desc", ("la", "lb", "lc", "ld"))
    body += p.finish()
    out += [I + line if line else line for line in body]
    out += [f"{I}}}", "", " private:",
            f"{I}cudaDataType_t Atype_ = CUDA_R_32F, Btype_ = CUDA_R_32F, Ctype_ = CUDA_R_32F, Dtype_ = CUDA_R_32F;",
            f"{I}cublasComputeType_t computeType_ = CUBLAS_COMPUTE_32F;", f"{I}cudaDataType_t scaleType_ = CUDA_R_32F;"]
    for a in attrs:
        ctype = pointer_type(p, a["local"]) if a["pointer"] else a["ctype"] + " "
        init = "nullptr" if a["pointer"] else "{}"
        out.append(f"{I}{ctype}{a['local']}_ = {init};")
        out.append(f"{I}bool has_{a['local']}_ = false;")
    out += ["};", "", "int main() {"]
    out += p.buffers(I)
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));", f"{I}GemmWrapper wrapper;",
            f"{I}wrapper.setGemmConfig({', '.join(c[f'{x}_type'] for x in 'abcd')}, {c['compute_type']}, "
            f"{c['scale_type']});"]
    for a in attrs:
        out.append(f"{I}wrapper.set_{a['local']}({a['local'] if a['pointer'] else a['value']});")
    out += [f"{I}wrapper.Gemm(lt, A, B, C, D, workspace, workspace_size);"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


def _builder(p: ShapeProgram) -> list[str]:
    """A fluent builder: each attribute a chained method of a builder made as a temporary
    (``MatmulDescBuilder(compute, scale).transa(...).epilogue(...).build()``), each method storing its
    value in a member and returning ``*this``; ``build()`` creates the descriptor and sets what was asked."""
    c = p.cfg
    attrs = p.desc_attrs()
    out = p.header() + ["// A fluent builder: chained setters on a temporary, then build().",
                        "class MatmulDescBuilder {", " public:",
                        f"{I}MatmulDescBuilder(cublasComputeType_t compute, cudaDataType_t scale_type)",
                        f"{I}    : compute_(compute), scale_type_(scale_type) {{}}"]
    for a in attrs:
        ctype = pointer_type(p, a["local"]) if a["pointer"] else a["ctype"] + " "
        out += [f"{I}MatmulDescBuilder &{a['local']}({ctype}value) {{", f"{I}{I}{a['local']}_ = value;",
                f"{I}{I}has_{a['local']}_ = true;", f"{I}{I}return *this;", f"{I}}}"]
    out += [f"{I}cublasLtMatmulDesc_t build() const {{", f"{I}{I}cublasLtMatmulDesc_t desc;",
            f"{I}{I}PROBE(cublasLtMatmulDescCreate(&desc, compute_, scale_type_));"]
    for a in attrs:
        out += [f"{I}{I}if (has_{a['local']}_) {{",
                f"{I}{I}{I}PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_{a['attr']}, "
                f"&{a['local']}_, sizeof({a['local']}_)));", f"{I}{I}}}"]
    out += [f"{I}{I}return desc;", f"{I}}}", "", " private:",
            f"{I}cublasComputeType_t compute_;", f"{I}cudaDataType_t scale_type_;"]
    for a in attrs:
        ctype = pointer_type(p, a["local"]) if a["pointer"] else a["ctype"] + " "
        out.append(f"{I}{ctype}{a['local']}_ = {'nullptr' if a['pointer'] else '{}'};")
        out.append(f"{I}bool has_{a['local']}_ = false;")
    out += ["};", "", "int main() {"]
    out += p.buffers(I)
    chain = "".join(f".{a['local']}({a['local'] if a['pointer'] else a['value']})" for a in attrs)
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));",
            f"{I}cublasLtMatmulDesc_t desc = MatmulDescBuilder({c['compute_type']}, {c['scale_type']}){chain}.build();"]
    out += p.layouts()
    out += _pref_heuristic_matmul(p, I, "desc", ("la", "lb", "lc", "ld"))
    out += p.verify(I) + p.finish() + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);",
                                       f"{I}return 0;", "}"]
    return out


# TransformerEngine's DType names for the types a program can hold
_TE_DTYPE = {"CUDA_R_16F": "kFloat16", "CUDA_R_16BF": "kBFloat16", "CUDA_R_32F": "kFloat32", "CUDA_R_64F": "kFloat64",
             "CUDA_R_8I": "kInt8", "CUDA_R_32I": "kInt32", "CUDA_R_8F_E4M3": "kFloat8E4M3",
             "CUDA_R_8F_E5M2": "kFloat8E5M2", "CUDA_C_32F": "kComplex64"}
# pointer attributes the TE shape takes from a tensor's member (``None``: a parameter of its own)
_TE_POINTER = {"a_scale": ("inputA", "scale_inv"), "b_scale": ("inputB", "scale_inv"),
               "c_scale": ("inputC", "scale_inv"), "d_scale": ("outputD", "scale"), "amax_d": ("outputD", "amax")}


def _te(p: ShapeProgram) -> list[str]:
    """TransformerEngine's style: tensors passed by pointer as structs holding their data, their
    ``DType`` and their FP8 scale/amax pointers; the GEMM maps each ``inputA->data.dtype`` with a
    switch helper and sets a scale or amax pointer only when the tensor has one
    (``if (inputA->scale_inv != nullptr)``), the bias and aux pointers only when passed."""
    c = p.cfg
    attrs = p.desc_attrs()
    values = [a for a in attrs if not a["pointer"]]
    pointers = {a["local"]: a for a in attrs if a["pointer"]}
    out = p.header() + [
        "// TransformerEngine's style: tensors as structs (data, dtype, scale_inv, amax), passed by pointer.",
        f"enum class DType {{ {', '.join(_TE_DTYPE.values())} }};", "",
        "static cudaDataType_t get_cuda_dtype(DType t) {", f"{I}switch (t) {{"]
    out += [f"{I}{I}case DType::{name}:\n{I}{I}{I}return {t};" for t, name in _TE_DTYPE.items()]
    out += [f"{I}}}", f"{I}return CUDA_R_32F;", "}", "",
            "struct SimpleTensor {", f"{I}const ProbeMatrix *dptr = nullptr;", f"{I}DType dtype = DType::kFloat32;", "};",
            "struct Tensor {", f"{I}SimpleTensor data;", f"{I}const float *scale_inv = nullptr;",
            f"{I}const float *scale = nullptr;", f"{I}float *amax = nullptr;", "};", "",
            "static void cublas_gemm(const Tensor *inputA, const Tensor *inputB, const Tensor *inputC, Tensor *outputD,",
            f"{I}{I}{I}{I}{I}{I}{I}const void *bias_ptr, void *aux_ptr, cublasComputeType_t gemm_compute_type,",
            f"{I}{I}{I}{I}{I}{I}{I}cudaDataType_t scale_type, cublasLtHandle_t lt, void *workspace, uint64_t workspace_size) {{",
            f"{I}const ProbeMatrix &A = *inputA->data.dptr, &B = *inputB->data.dptr, &C = *inputC->data.dptr,",
            f"{I}                  &D = *outputD->data.dptr;",
            f"{I}const cudaDataType_t A_type = get_cuda_dtype(inputA->data.dtype);",
            f"{I}const cudaDataType_t B_type = get_cuda_dtype(inputB->data.dtype);",
            f"{I}const cudaDataType_t C_type = get_cuda_dtype(inputC->data.dtype);",
            f"{I}const cudaDataType_t D_type = get_cuda_dtype(outputD->data.dtype);",
            f"{I}cublasLtMatmulDesc_t operationDesc;",
            f"{I}PROBE(cublasLtMatmulDescCreate(&operationDesc, gemm_compute_type, scale_type));"]
    for a in values:
        out += [f"{I}const {a['ctype']} {a['local']} = {a['value']};",
                f"{I}PROBE(cublasLtMatmulDescSetAttribute(operationDesc, CUBLASLT_MATMUL_DESC_{a['attr']}, "
                f"&{a['local']}, sizeof({a['local']})));"]
    for local, (tensor, member) in _TE_POINTER.items():
        attr = {"a_scale": "A_SCALE_POINTER", "b_scale": "B_SCALE_POINTER", "c_scale": "C_SCALE_POINTER",
                "d_scale": "D_SCALE_POINTER", "amax_d": "AMAX_D_POINTER"}[local]
        out += [f"{I}if ({tensor}->{member} != nullptr) {{",
                f"{I}{I}PROBE(cublasLtMatmulDescSetAttribute(operationDesc, CUBLASLT_MATMUL_DESC_{attr}, "
                f"&{tensor}->{member}, sizeof({tensor}->{member})));", f"{I}}}"]
    for local, attr in (("bias", "BIAS_POINTER"), ("aux", "EPILOGUE_AUX_POINTER")):
        out += [f"{I}if ({local}_ptr) {{",
                f"{I}{I}PROBE(cublasLtMatmulDescSetAttribute(operationDesc, CUBLASLT_MATMUL_DESC_{attr}, "
                f"&{local}_ptr, sizeof({local}_ptr)));", f"{I}}}"]
    out += p.layouts(types={x: f"{x}_type" for x in "ABCD"})
    body = _pref_heuristic_matmul(p, I, "operationDesc", ("la", "lb", "lc", "ld"))
    out += body
    out += [line.replace("(desc)", "(operationDesc)") for line in p.finish()]
    out += ["}", "", "int main() {"]
    out += p.buffers(I)
    out.append("")
    for x in "ABCD":
        name = {"A": "inputA", "B": "inputB", "C": "inputC", "D": "outputD"}[x]
        out.append(f"{I}Tensor {name};")
        out.append(f"{I}{name}.data.dptr = &{x};")
        out.append(f"{I}{name}.data.dtype = DType::{_TE_DTYPE[c[x.lower() + '_type']]};")
    for local, (tensor, member) in _TE_POINTER.items():
        if local in pointers:
            out.append(f"{I}{tensor}.{member} = {local};")
    args = ["&inputA", "&inputB", "&inputC", "&outputD", "bias" if "bias" in pointers else "nullptr",
            "aux" if "aux" in pointers else "nullptr", c["compute_type"], c["scale_type"], "lt", "workspace",
            "workspace_size"]
    out += [f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));", f"{I}cublas_gemm({', '.join(args)});"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


def _factory(p: ShapeProgram) -> list[str]:
    """XLA's style: a descriptor object made by a static factory that returns a status-or-value by
    value (the handle moves in a unique_ptr), every attribute set through a templated SetAttr that
    returns a status checked by a RETURN_IF_ERROR macro; the plan's Run builds the layouts."""
    c = p.cfg
    attrs = p.desc_attrs()
    ptr = [a for a in attrs if a["pointer"]]
    out = p.header()[:-1] + ["#include <memory>", "#include <utility>", ""]
    out += ["// XLA's style: MatmulDesc::Create returns StatusOr<MatmulDesc>; SetAttr returns a Status.",
            "struct Status {", f"{I}int code = 0;", f"{I}bool ok() const {{ return code == 0; }}", "};",
            "template <typename T>", "struct StatusOr {", f"{I}Status status;", f"{I}T value;",
            f"{I}bool ok() const {{ return status.ok(); }}", "};",
            "#define RETURN_IF_ERROR(expr) \\",
            f"{I}do {{ \\", f"{I}{I}Status _s = (expr); \\", f"{I}{I}if (!_s.ok()) return {{_s}}; \\",
            f"{I}}} while (0)", "",
            "template <typename T>",
            "Status SetAttr(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, T value) {",
            f"{I}return Status{{static_cast<int>(PROBE(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value))))}};",
            "}", "",
            "struct DescDeleter {",
            f"{I}void operator()(cublasLtMatmulDescOpaque_t *d) const {{ cublasLtMatmulDescDestroy(d); }}", "};", "",
            "class MatmulDesc {", " public:",
            f"{I}static StatusOr<MatmulDesc> Create(cublasComputeType_t compute, cudaDataType_t scale_type"
            + "".join(f", {pointer_type(p, a['local'])}{a['local']}" for a in ptr) + ") {",
            f"{I}{I}cublasLtMatmulDesc_t raw = nullptr;",
            f"{I}{I}PROBE(cublasLtMatmulDescCreate(&raw, compute, scale_type));",
            f"{I}{I}MatmulDesc desc(raw);"]
    for a in attrs:
        value = a["local"] if a["pointer"] else f"static_cast<{a['ctype']}>({a['value']})"
        out.append(f"{I}{I}RETURN_IF_ERROR(SetAttr(desc.get(), CUBLASLT_MATMUL_DESC_{a['attr']}, {value}));")
    out += [f"{I}{I}return {{Status{{}}, std::move(desc)}};", f"{I}}}",
            f"{I}MatmulDesc() = default;",
            f"{I}cublasLtMatmulDesc_t get() const {{ return handle_.get(); }}", "",
            " private:", f"{I}explicit MatmulDesc(cublasLtMatmulDesc_t raw) : handle_(raw) {{}}",
            f"{I}std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter> handle_;", "};", "",
            "static Status RunPlan(cublasLtHandle_t lt, const MatmulDesc &desc, const ProbeMatrix &A, const ProbeMatrix &B,",
            "                      const ProbeMatrix &C, const ProbeMatrix &D, void *workspace, uint64_t workspace_size) {"]
    out += p.layouts()
    out += _pref_heuristic_matmul(p, I, "desc.get()", ("la", "lb", "lc", "ld"))
    out += p.finish(destroy_desc=False)
    out += [f"{I}return Status{{}};", "}", "", "int main() {"]
    out += p.buffers(I)
    args = ", ".join([c["compute_type"], c["scale_type"], *(a["local"] for a in ptr)])
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));",
            f"{I}StatusOr<MatmulDesc> desc = MatmulDesc::Create({args});",
            f"{I}if (!desc.ok()) return 1;",
            f"{I}if (!RunPlan(lt, desc.value, A, B, C, D, workspace, workspace_size).ok()) return 1;"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


HEADER_HELPER = """\
// fusionlint cuBLASLt shape programs: a PyTorch-style gemm_ex helper (a project header).
#pragma once
#include <cstdint>
#include "fusionlint_probe.h"

struct GemmExtras {
  int32_t bias_type = -1;  // -1: BIAS_DATA_TYPE not set
  int32_t aux_type = -1;   // -1: EPILOGUE_AUX_DATA_TYPE not set
  int64_t aux_ld = 0;      // 0: EPILOGUE_AUX_LD not set
  int32_t a_scale_mode = -1, b_scale_mode = -1;  // -1: not set
  int fast_accum = -1;     // -1: FAST_ACCUM not set
  int32_t pointer_mode = -1;  // -1: POINTER_MODE not set
  bool set_epilogue = false;  // also set a DEFAULT epilogue explicitly
};

inline void gemm_ex(cublasLtHandle_t lt, cublasComputeType_t compute, cudaDataType_t scale_type,
                    cudaDataType_t a_type, cudaDataType_t b_type, cudaDataType_t c_type, cudaDataType_t d_type,
                    cublasOperation_t transa, cublasOperation_t transb, cublasLtEpilogue_t epilogue,
                    const void *bias, const void *aux, const float *a_scale, const float *b_scale,
                    const float *c_scale, const float *d_scale, float *amax_d, const GemmExtras &x,
                    cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc,
                    cublasLtMatrixLayout_t ld, const void *alpha, const void *beta, const void *A, const void *B,
                    const void *C, void *D, void *workspace, uint64_t workspace_size) {
  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, compute, scale_type));
  const int32_t ta = transa, tb = transb;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT || x.set_epilogue) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  }
  if (bias != nullptr) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  if (x.bias_type >= 0) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &x.bias_type, sizeof(x.bias_type)));
  }
  if (aux != nullptr) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));
  }
  if (x.aux_ld > 0) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &x.aux_ld, sizeof(x.aux_ld)));
  }
  if (x.aux_type >= 0) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &x.aux_type,
                                         sizeof(x.aux_type)));
  }
  if (x.a_scale_mode >= 0) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &x.a_scale_mode,
                                         sizeof(x.a_scale_mode)));
  }
  if (x.b_scale_mode >= 0) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &x.b_scale_mode,
                                         sizeof(x.b_scale_mode)));
  }
  if (a_scale) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale)));
  }
  if (b_scale) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale)));
  }
  if (c_scale) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, &c_scale, sizeof(c_scale)));
  }
  if (d_scale) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &d_scale, sizeof(d_scale)));
  }
  if (amax_d) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax_d, sizeof(amax_d)));
  }
  if (x.fast_accum >= 0) {
    const int8_t fast = static_cast<int8_t>(x.fast_accum);
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
  }
  if (x.pointer_mode >= 0) {
    PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &x.pointer_mode,
                                         sizeof(x.pointer_mode)));
  }
  cublasLtMatmulPreference_t pref;
  PROBE(cublasLtMatmulPreferenceCreate(&pref));
  PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
                                             sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t result = {};
  int count = 0;
  PROBE(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 1, &result, &count));
  PROBE(cublasLtMatmul(lt, desc, alpha, A, la, B, lb, beta, C, lc, D, ld, count > 0 ? &result.algo : nullptr,
                       workspace, workspace_size, 0));
  cudaDeviceSynchronize();
  PROBE(cublasLtMatmulPreferenceDestroy(pref));
  PROBE(cublasLtMatmulDescDestroy(desc));
}
"""
def header_name(entry: dict) -> str:
    """The header shape's project header: one per program (``c0007_header.h`` beside ``c0007_header.cpp``),
    so that findings fusionlint places in the helper belong to one configuration."""
    return entry["file"].removesuffix(".cpp") + ".h"


def _header(p: ShapeProgram) -> list[str]:
    c = p.cfg
    attrs = {a["attr"]: a for a in p.desc_attrs()}
    out = p.header()[:-1] + [f'#include "{header_name(p.e)}"', ""]
    extras = []
    for attr, field in (("BIAS_DATA_TYPE", "bias_type"), ("EPILOGUE_AUX_DATA_TYPE", "aux_type"),
                        ("EPILOGUE_AUX_LD", "aux_ld"), ("A_SCALE_MODE", "a_scale_mode"),
                        ("B_SCALE_MODE", "b_scale_mode"), ("FAST_ACCUM", "fast_accum"),
                        ("POINTER_MODE", "pointer_mode")):
        if attr in attrs:
            extras.append(f"{I}x.{field} = {attrs[attr]['value']};")
    epilogue = attrs["EPILOGUE"]["value"] if "EPILOGUE" in attrs else "CUBLASLT_EPILOGUE_DEFAULT"
    if "EPILOGUE" in attrs and epilogue == "CUBLASLT_EPILOGUE_DEFAULT":
        extras.append(f"{I}x.set_epilogue = true;")
    ptr = [n if (n in {a['local'] for a in attrs.values() if a["pointer"]}) else "nullptr"
           for n in ("bias", "aux", "a_scale", "b_scale", "c_scale", "d_scale", "amax_d")]
    scalars, alpha, beta = p.scalars(I)
    out += ["int main() {"] + p.buffers(I)
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));", f"{I}GemmExtras x;", *extras]
    out += p.layouts() + scalars
    out += [f"{I}gemm_ex(lt, {c['compute_type']}, {c['scale_type']}, {c['a_type']}, {c['b_type']}, {c['c_type']}, "
            f"{c['d_type']},",
            f"{I}        {c['transa']}, {c['transb']}, {epilogue}, {', '.join(ptr)}, x,",
            f"{I}        la, lb, lc, ld, {alpha}, {beta}, A.dev, B.dev, C.dev, D.dev, workspace, workspace_size);"]
    out += p.verify(I) + [f"{I}PROBE(cublasLtMatrixLayoutDestroy({v}));" for _, v in LAYOUTS]
    out += [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);", f"{I}return 0;", "}"]
    return out


def _lambda(p: ShapeProgram) -> list[str]:
    c = p.cfg
    out = p.header() + ["int main() {"] + p.buffers(I)
    out += ["", f"{I}cublasLtHandle_t lt;", f"{I}PROBE(cublasLtCreate(&lt));", f"{I}cublasLtMatmulDesc_t desc;",
            f"{I}PROBE(cublasLtMatmulDescCreate(&desc, {c['compute_type']}, {c['scale_type']}));",
            f"{I}auto set = [&](cublasLtMatmulDescAttributes_t attr, const auto &value) {{",
            f"{I}{I}PROBE(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));", f"{I}}};"]
    for a in p.desc_attrs():
        if a["pointer"]:
            out.append(f"{I}set(CUBLASLT_MATMUL_DESC_{a['attr']}, {a['local']});")
        else:
            out.append(f"{I}set(CUBLASLT_MATMUL_DESC_{a['attr']}, static_cast<{a['ctype']}>({a['value']}));")
    out += p.layouts()
    out += _pref_heuristic_matmul(p, I, "desc", ("la", "lb", "lc", "ld"))
    out += p.verify(I) + p.finish() + [f"{I}PROBE(cublasLtDestroy(lt));", f"{I}cudaFree(workspace);",
                                       f"{I}return 0;", "}"]
    return out


def _plain(p: ShapeProgram) -> list[str]:
    from fusionlint.evidence.mutations_cublaslt import STYLE_WRITERS

    return STYLE_WRITERS["plain"](p)


WRITERS = {"plain": _plain, "params": _params, "struct": _struct, "enum": _enum, "traits": _traits,
           "class": _class, "header": _header, "lambda": _lambda, "wrapper": _wrapper, "factory": _factory,
           "te": _te, "builder": _builder}
assert tuple(WRITERS) == SHAPES


# ---- the set -----------------------------------------------------------------------------------
def generate(seed: int, count: int, shapes: tuple[str, ...] = SHAPES, source: str = "mutations") -> list[dict]:
    """``count`` configurations, each in every one of ``shapes``: the manifest entries (without
    program text), configuration-major. ``source``: ``mutations`` (the mutation set of ``seed``,
    files ``cNNNN_<shape>.cpp``) or ``space`` (``space_sample``, files ``sNNNN_<shape>.cpp``)."""
    configs = generate_mutations(seed, count) if source == "mutations" else space_sample(seed, count)
    prefix = "c" if source == "mutations" else "s"
    entries = []
    for m in configs:
        for shape in shapes:
            entries.append({**m, "file": f"{prefix}{m['index']:04d}_{shape}.cpp", "config_id": m["index"],
                            "shape": shape, "style": shape})
    return entries


# ---- configurations drawn from the measured space ---------------------------------------------
# The data types a program can hold (CTYPE) and the scale types it can write (host_scalar).
_RENDERABLE = set(CTYPE)
_SCALES = {"CUDA_R_32F", "CUDA_R_64F", "CUDA_R_32I", "CUDA_R_16F", "CUDA_R_16BF", "CUDA_C_32F"}
_VECTOR_SCALE_MODES = ("CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F", "CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F",
                       "CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F")


def _table_config(cfg: dict) -> dict:
    """A configuration in the support table's terms (``unset`` for an attribute not set; a batch of
    more than one as the table's 2)."""
    out = {k: ("unset" if v is None else v) for k, v in cfg.items()}
    out["batch"] = min(cfg["batch"], 2)
    return out


# the measured table the space is drawn from (the H200's, cuBLASLt 13.1.0)
SPACE_TABLE = Path(__file__).resolve().parents[2] / "rulesets" / "hopper-sm90" / "support" / \
    "cublaslt-13.1.0-nvidia-h200.json.gz"


def _supported_types(table) -> list[dict]:
    """The type rows (A, B, C, D, compute, scale) the table measured as supported, among those a
    program can write."""
    rows = []
    for cfg in table.supported_type_rows():
        if all(cfg[f"{x}_type"] in _RENDERABLE for x in "abcd") and cfg["scale_type"] in _SCALES:
            rows.append(cfg)
    return rows


def space_sample(seed: int, count: int, table=None) -> list[dict]:
    """``count`` configurations drawn from the measured support table's space (not from a few bases):
    a supported type row, its data family chosen first so that FP64, complex, int8 and FP8 are as
    likely as BF16; then transposes, orders, batching, an epilogue with (usually) the pointers it
    needs, bias and aux types, FP8 scale pointers and scale modes (scalar, outer vector, 128-element
    vector, 128x128 blocks), amax, fast accumulation, pointer modes; then, for about half of them,
    one or two fields of the whole domain changed at random (``mutate``), so that failing and working
    configurations both occur. Entries as ``generate_mutations`` gives them (base ``space``); each
    records the table's verdict (``table_supported``: true, false, or null outside the table)."""
    import random

    from fusionlint.evidence.mutations_cublaslt import BASES, mutate as mutate_config
    from fusionlint.model.support_table import SupportTable

    table = table or SupportTable.load(SPACE_TABLE)
    rows = _supported_types(table)
    families: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        families[r["a_type"] if r["a_type"] == r["b_type"] else "mixed"].append(r)
    names = sorted(families)
    rng = random.Random(seed)
    base_cfg, base_consts = BASES["bf16_tn"]
    needs = table.needs
    out = []
    for i in range(count):
        types = rng.choice(families[rng.choice(names)])
        for _ in range(8):  # the features drawn again (at most 8 times) until the table supports them
            cfg = _features(rng, base_cfg, types, needs)
            if table.verdict(_table_config(cfg)).supported:
                break
        mutations: list[dict] = []
        if rng.random() < 0.5:
            cfg, mutations = mutate_config(rng, cfg)
        verdict = table.verdict(_table_config(cfg))
        consts = {**base_consts, "beta": rng.choice((0.0, 0.0, 1.0))}
        out.append({"file": f"s{i:04d}.cpp", "index": i, "base": "bf16_tn", "style": "plain",
                    "mutations": mutations, "config": cfg, "constants": consts,
                    "variant": rng.randrange(1 << 30), "source": "space", "table_supported": verdict.supported})
    return out


def _features(rng, base_cfg: dict, types: dict, needs: dict) -> dict:
    """One draw of everything but the types (see ``space_sample``)."""
    cfg = {**base_cfg, **{k: types[k] for k in ("a_type", "b_type", "c_type", "d_type", "compute_type",
                                                 "scale_type")}}
    fp8 = cfg["a_type"] in FP8_TYPES or cfg["b_type"] in FP8_TYPES
    if not fp8:
        cfg["transa"], cfg["transb"] = rng.choice(OPS_), rng.choice(OPS_)
        if rng.random() < 0.15:
            for x in "abcd":
                cfg[f"order_{x}"] = rng.choice(ORDERS_)
    cfg["batch"] = rng.choice((1, 1, 1, 2, 4))
    if rng.random() < 0.5:
        cfg["epilogue"] = rng.choice(EPILOGUES_)
        for f, v in needs.get(cfg["epilogue"], {}).items():
            if rng.random() < 0.9:
                cfg[f] = v
        if cfg["bias_pointer"] and rng.random() < 0.3:
            cfg["bias_data_type"] = rng.choice(sorted(_RENDERABLE))
        if cfg["aux_pointer"] and rng.random() < 0.3:
            cfg["aux_data_type"] = rng.choice(sorted(_RENDERABLE))
    if fp8:
        cfg["a_scale_pointer"] = rng.random() < 0.8
        cfg["b_scale_pointer"] = rng.random() < 0.8
        if cfg["d_type"] in FP8_TYPES:
            cfg["d_scale_pointer"] = rng.random() < 0.8
            cfg["amax_d_pointer"] = rng.random() < 0.5
        if rng.random() < 0.35:
            mode = rng.choice(_VECTOR_SCALE_MODES)
            cfg["a_scale_mode"] = cfg["b_scale_mode"] = mode
            cfg["a_scale_pointer"] = cfg["b_scale_pointer"] = True
        if rng.random() < 0.3:
            cfg["fast_accum"] = 1
    if rng.random() < 0.2:
        cfg["pointer_mode"] = rng.choice(POINTER_MODES_)
    return cfg


def program_text(entry: dict) -> str:
    return ShapeProgram(entry).text()


def write_set(seed: int, count: int, out: Path, shapes: tuple[str, ...] = SHAPES,
              source: str = "mutations") -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    entries = generate(seed, count, shapes, source)
    for e in entries:
        (out / e["file"]).write_text(program_text(e), encoding="utf-8")
        if e["shape"] == "header":
            (out / header_name(e)).write_text(HEADER_HELPER, encoding="utf-8")
    manifest = {"generator": "fusionlint.evidence.shapes_cublaslt", "format": 1, "seed": seed, "count": count,
                "source": source, "shapes": list(shapes),
                "include_dir": "fusionlint/evidence/include (fusionlint_probe.h, fusionlint_mutation.h)",
                "programs": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return entries


# ---- comparison --------------------------------------------------------------------------------
def codes_by_file(findings: list[dict]) -> dict[str, list[str]]:
    """Program file name -> the rule codes of its error findings, each once (warnings left out); a
    finding in a header shape's ``cNNNN_header.h`` belongs to ``cNNNN_header.cpp``."""
    out: dict[str, set[str]] = defaultdict(set)
    for f in findings:
        if f.get("severity", "error") == "error":
            name = Path(f["path"]).name
            out[name.removesuffix(".h") + ".cpp" if name.endswith("_header.h") else name].add(f["code"])
    return {k: sorted(v) for k, v in out.items()}


def compare(manifest: dict, findings: list[dict]) -> dict:
    """Per configuration, the codes of each shape; the configurations whose shapes disagree, and per
    shape how often it differs from the plain shape (a missed code or an added one)."""
    codes = codes_by_file(findings)
    by_config: dict[int, dict[str, list[str]]] = defaultdict(dict)
    for e in manifest["programs"]:
        by_config[e["config_id"]][e["shape"]] = codes.get(e["file"], [])
    shapes = manifest["shapes"]
    differing = {}
    per_shape = {s: Counter() for s in shapes}
    for cid, got in sorted(by_config.items()):
        if len({tuple(v) for v in got.values()}) > 1:
            differing[cid] = got
        plain = Counter(got.get("plain", []))
        for s in shapes:
            mine = Counter(got.get(s, []))
            if s != "plain" and mine != plain:
                per_shape[s]["differs"] += 1
                per_shape[s]["misses"] += sum((plain - mine).values())
                per_shape[s]["adds"] += sum((mine - plain).values())
    return {"configurations": len(by_config), "shapes": shapes, "identical": len(by_config) - len(differing),
            "prefix": "s" if manifest.get("source") == "space" else "c",
            "differing": differing, "per_shape": {s: dict(c) for s, c in per_shape.items()},
            "fl000": sorted(f for f, c in codes.items() if "FL000" in c)}


def score(manifest: dict, findings: list[dict], truth: dict) -> dict[str, dict[str, int]]:
    """Per shape, recall and false errors against the GPU's verdicts. The configurations are the
    mutation set's of the same seed (``cNNNN`` is ``mNNNN``), so the record of that set run on the GPU
    (``kernels_ref/evidence/h200-mutations-cublaslt.json`` for seed 1) says whether each works."""
    record = {Path(k).name: v for k, v in truth.get("programs", {}).items()}
    works: dict[int, bool | None] = {}
    for m in generate_mutations(manifest["seed"], manifest["count"]):
        o = record.get(m["file"])
        works[m["index"]] = None if o is None else bool(o.get("works"))
    codes = codes_by_file(findings)
    out: dict[str, dict[str, int]] = {}
    for s in manifest["shapes"]:
        mine = [e for e in manifest["programs"] if e["shape"] == s]
        failing = [e for e in mine if works.get(e["config_id"]) is False]
        working = [e for e in mine if works.get(e["config_id"])]
        out[s] = {"failing": len(failing), "caught": sum(1 for e in failing if codes.get(e["file"])),
                  "working": len(working), "false_errors": sum(1 for e in working if codes.get(e["file"])),
                  "no_truth": sum(1 for e in mine if works.get(e["config_id"]) is None)}
    return out


def score_records(manifest: dict, findings: list[dict], records: list[dict]) -> dict:
    """Per shape, recall and false errors against the GPU's verdicts (the harness records of the
    programs built and run by ``tools/h200_shapes.sh``). A program's truth is its own run; a program not
    run takes its configuration's verdict when the shapes of it that ran all got the same one
    (``by_other_shape`` counts those); one with neither is left out (``no_truth``). Also the
    configurations whose shape programs the GPU judged differently (a generator bug: the shapes are
    to be one configuration)."""
    works: dict[str, bool] = {}
    for record in records:
        for path, o in record.get("programs", {}).items():
            works[Path(path).name] = bool(o.get("works"))
    verdicts: dict[int, set[bool]] = defaultdict(set)
    for e in manifest["programs"]:
        if e["file"] in works:
            verdicts[e["config_id"]].add(works[e["file"]])
    codes = codes_by_file(findings)
    out: dict[str, dict[str, int]] = {}
    for s in manifest["shapes"]:
        row = Counter()
        for e in (e for e in manifest["programs"] if e["shape"] == s):
            seen = verdicts.get(e["config_id"], set())
            truth = works.get(e["file"], next(iter(seen)) if len(seen) == 1 else None)
            if truth is None:
                row["no_truth"] += 1
                continue
            row["by_other_shape"] += e["file"] not in works
            row["working" if truth else "failing"] += 1
            if codes.get(e["file"]):
                row["false_errors" if truth else "caught"] += 1
        out[s] = {k: row[k] for k in ("failing", "caught", "working", "false_errors", "by_other_shape", "no_truth")}
    return {"per_shape": out, "programs_run": len(works),
            "gpu_disagree": sorted(c for c, v in verdicts.items() if len(v) > 1)}


def markdown(report: dict) -> str:
    lines = [f"# cuBLASLt configurations in {len(report['shapes'])} code shapes",
             "",
             f"{report['configurations']} configurations x {len(report['shapes'])} shapes: "
             f"**{report['identical']} with the same codes in every shape**, {len(report['differing'])} differ.",
             "", "| shape | differs from plain | codes missed | codes added |", "|---|---|---|---|"]
    for s in report["shapes"]:
        c = report["per_shape"][s]
        lines.append(f"| {s} | {c.get('differs', 0)} | {c.get('misses', 0)} | {c.get('adds', 0)} |")
    if report.get("score"):
        lines += ["", "Against the GPU's verdict on each configuration (the mutation set's record):", "",
                  "| shape | recall | false errors |", "|---|---|---|"]
        for s, c in report["score"].items():
            lines.append(f"| {s} | {c['caught']}/{c['failing']} | {c['false_errors']}/{c['working']} |")
    if report.get("records"):
        r = report["records"]
        lines += ["", f"Against the GPU's verdicts ({r['programs_run']} shape programs built and run; a program not "
                  "run takes the verdict the shapes of its configuration that ran agree on):", "",
                  "| shape | recall | false errors | verdict from another shape | no verdict |", "|---|---|---|---|---|"]
        for s, c in r["per_shape"].items():
            lines.append(f"| {s} | {c['caught']}/{c['failing']} | {c['false_errors']}/{c['working']} | "
                         f"{c['by_other_shape']} | {c['no_truth']} |")
        lines += ["", f"Configurations whose shape programs the GPU judged differently: {len(r['gpu_disagree'])}"
                  + (f" ({', '.join(str(c) for c in r['gpu_disagree'][:20])})" if r["gpu_disagree"] else "")]
    if report["differing"]:
        lines += ["", "## Configurations whose shapes disagree", ""]
        for cid, got in list(report["differing"].items())[:200]:
            groups: dict[tuple, list[str]] = defaultdict(list)
            for s, v in got.items():
                groups[tuple(v)].append(s)
            lines.append(f"- {report.get('prefix', 'c')}{int(cid):04d}: " + "; ".join(f"{' '.join(v) or 'clean'} ({', '.join(ss)})"
                                                             for v, ss in groups.items()))
    return "\n".join(lines) + "\n"


def _read_record(path: Path) -> dict:
    """A harness record, plain or gzip-compressed (``kernels_ref/evidence/h100-shapes-cublaslt.json.gz``)."""
    import gzip

    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the programs and manifest.json")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--count", type=int, default=300, help="configurations (each in every shape)")
    g.add_argument("--shapes", default=",".join(SHAPES))
    g.add_argument("--source", choices=("mutations", "space"), default="mutations",
                   help="the mutation set's configurations (cNNNN), or draws from the measured table's space (sNNNN)")
    g.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare", help="compare the codes of each configuration's shapes")
    c.add_argument("--manifest", type=Path, required=True)
    c.add_argument("--findings", type=Path, required=True, help="fusionlint check --output-format json")
    c.add_argument("--truth", type=Path, help="the mutation set's GPU record (h200-mutations-cublaslt.json)")
    c.add_argument("--records", type=Path, nargs="+",
                   help="GPU records of the shape programs themselves (tools/h200_shapes.sh)")
    c.add_argument("--markdown", type=Path)
    c.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "generate":
        shapes = tuple(s for s in a.shapes.split(",") if s)
        unknown = [s for s in shapes if s not in SHAPES]
        if unknown:
            ap.error(f"unknown shape(s): {', '.join(unknown)} (known: {', '.join(SHAPES)})")
        entries = write_set(a.seed, a.count, a.out, shapes, a.source)
        print(f"wrote {len(entries)} programs ({a.count} configurations x {len(shapes)} shapes) to {a.out}")
        return 0
    manifest = json.loads(a.manifest.read_text(encoding="utf-8"))
    findings = json.loads(a.findings.read_text(encoding="utf-8"))
    report = compare(manifest, findings)
    if a.truth:
        report["score"] = score(manifest, findings, json.loads(a.truth.read_text(encoding="utf-8")))
    if a.records:
        report["records"] = score_records(manifest, findings, [_read_record(r) for r in a.records])
    text = markdown(report)
    if a.markdown:
        a.markdown.write_text(text, encoding="utf-8")
    if a.json:
        a.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(text.split("\n\n## ")[0])
    return 0 if not report["differing"] else 1


if __name__ == "__main__":
    sys.exit(main())
