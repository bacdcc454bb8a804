"""What fusionlint knows about CUTLASS without its headers: where names live, element widths,
the template parameters (and defaults) of the GEMM templates, the CUTLASS 2.x
``DefaultGemmConfiguration`` table and the configuration macros of ``cutlass/arch/config.h``.

Written from CUTLASS 4.2 (``nvidia-cutlass`` 4.2.0.0): ``gemm/collective/collective_builder_decl.hpp``,
``epilogue/collective/collective_builder.hpp``, ``gemm/dispatch_policy.hpp``,
``gemm/device/{gemm,gemm_universal,gemm_batched,gemm_splitk_parallel}.h`` and
``gemm/device/default_gemm_configuration.h``. Only names and numbers are recorded here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# ----------------------------------------------------------------------------------------------
# Names

BUILTIN_CANON = {
    "signed char": "int8_t", "unsigned char": "uint8_t", "char": "char",
    "short": "int16_t", "short int": "int16_t", "signed short": "int16_t", "unsigned short": "uint16_t",
    "unsigned short int": "uint16_t",
    "int": "int32_t", "signed": "int32_t", "signed int": "int32_t", "unsigned": "uint32_t",
    "unsigned int": "uint32_t",
    "long": "int64_t", "long int": "int64_t", "signed long": "int64_t", "unsigned long": "uint64_t",
    "unsigned long int": "uint64_t",
    "long long": "int64_t", "long long int": "int64_t", "unsigned long long": "uint64_t",
    "unsigned long long int": "uint64_t",
    "float": "float", "double": "double", "bool": "bool", "void": "void", "auto": "auto",
    "long double": "long double",
}
STD_INTS = {"int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t"}
STD_INT_ALIASES = {"size_t": "uint64_t", "ptrdiff_t": "int64_t", "intptr_t": "int64_t", "uintptr_t": "uint64_t",
                   "index_t": "int64_t"}

# Element types, by canonical name -> sizeof_bits.
ELEMENT_BITS = {
    "cutlass::half_t": 16, "cutlass::bfloat16_t": 16, "cutlass::tfloat32_t": 32,
    "cutlass::float_e4m3_t": 8, "cutlass::float_e5m2_t": 8, "cutlass::float_ue8m0_t": 8,
    "cutlass::float_ue4m3_t": 8, "cutlass::float_e2m1_t": 4, "cutlass::float_e2m3_t": 6,
    "cutlass::float_e3m2_t": 6, "cutlass::type_erased_dynamic_float8_t": 8,
    "cutlass::int4b_t": 4, "cutlass::uint4b_t": 4, "cutlass::int2b_t": 2, "cutlass::uint2b_t": 2,
    "cutlass::uint1b_t": 1, "cutlass::bin1_t": 1, "cutlass::int6b_t": 6, "cutlass::uint6b_t": 6,
    "float": 32, "double": 64, "bool": 8, "char": 8, "long double": 128,
    "int8_t": 8, "uint8_t": 8, "int16_t": 16, "uint16_t": 16, "int32_t": 32, "uint32_t": 32,
    "int64_t": 64, "uint64_t": 64,
    "__half": 16, "__nv_bfloat16": 16, "__nv_fp8_e4m3": 8, "__nv_fp8_e5m2": 8,
    "cutlass::complex<float>": 64, "cutlass::complex<double>": 128,
    "cutlass::complex<cutlass::half_t>": 32, "cutlass::complex<cutlass::bfloat16_t>": 32,
    "cutlass::complex<cutlass::tfloat32_t>": 64,
    "void": 0,  # cutlass::sizeof_bits<void>::value == 0
}
CUDA_TYPE_ALIASES = {"half": "__half", "nv_bfloat16": "__nv_bfloat16", "__nv_fp8_e4m3": "__nv_fp8_e4m3"}

_ELEMENT_SHORT = {n.split("::")[-1]: n for n in ELEMENT_BITS if n.startswith("cutlass::") and "<" not in n}

_EXPLICIT = {
    # cute
    **{n: f"cute::{n}" for n in ("Shape", "Stride", "tuple", "Coord", "Step", "Tile", "Int", "C", "Layout",
                                 "conditional_t", "is_same_v", "integral_constant", "identity", "Underscore",
                                 "SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE", "TiledMMA",
                                 "MMA_Atom", "Copy_Atom", "make_tiled_mma", "size", "get", "ceil_div",
                                 "round_up", "max", "min", "shape", "sizeof_bits_v", "true_type", "false_type")},
    # cutlass
    "sizeof_bits": "cutlass::sizeof_bits", "complex": "cutlass::complex", "FloatRoundStyle": "cutlass::FloatRoundStyle",
    "platform": "cutlass::platform", "Status": "cutlass::Status",
    # arch
    **{n: f"cutlass::arch::{n}" for n in ("OpClassSimt", "OpClassTensorOp", "OpClassWmmaTensorOp",
                                          "OpClassSparseTensorOp", "OpClassBlockScaledTensorOp",
                                          "OpClassBlockScaledSparseTensorOp", "OpMultiplyAdd",
                                          "OpMultiplyAddSaturate", "OpMultiplyAddFastF32", "OpMultiplyAddFastF16",
                                          "OpMultiplyAddFastBF16", "OpMultiplyAddComplex", "OpMultiplyAddComplexFastF32",
                                          "OpMultiplyAddGaussianComplex", "OpXorPopc", "OpAndPopc",
                                          "OpMultiplyAddMixedInputUpcast", "OpMultiplyAddFastAccum")},
    # layouts
    **{n: f"cutlass::layout::{n}" for n in ("RowMajor", "ColumnMajor", "RowMajorInterleaved",
                                            "ColumnMajorInterleaved", "NoPermute", "TensorNHWC", "TensorNDHWC",
                                            "LayoutTranspose", "PitchLinear")},
    # 3.x collective level
    **{n: f"cutlass::gemm::collective::{n}" for n in ("CollectiveMma", "StageCount", "StageCountAuto",
                                                      "StageCountAutoCarveout", "StageCountAutoCarveoutEpi",
                                                      "KernelScheduleAuto")},
    **{n: f"cutlass::gemm::{n}" for n in ("PersistentScheduler", "StreamKScheduler", "GroupScheduler",
                                          "DynamicPersistentScheduler", "EpilogueDefault", "EpilogueTransposed",
                                          "GemmShape", "GemmCoord", "GemmUniversalMode", "BatchedGemmCoord",
                                          "TagToStrideA_t", "TagToStrideB_t", "TagToStrideC_t",
                                          "GroupProblemShape", "MoEProblemShape")},
    "GemmUniversalAdapter": "cutlass::gemm::device::GemmUniversalAdapter",
    "DefaultEpilogue": "cutlass::epilogue::collective::DefaultEpilogue",
    "EpilogueScheduleAuto": "cutlass::epilogue::collective::EpilogueScheduleAuto",
    "EpilogueTileAuto": "cutlass::epilogue::collective::EpilogueTileAuto",
    # 2.x
    **{n: f"cutlass::gemm::threadblock::{n}" for n in ("GemmIdentityThreadblockSwizzle",
                                                       "GemmBatchedIdentityThreadblockSwizzle",
                                                       "GemmSplitKHorizontalThreadblockSwizzle",
                                                       "GemmSplitKIdentityThreadblockSwizzle",
                                                       "GemmHorizontalThreadblockSwizzle",
                                                       "ThreadblockSwizzleStreamK")},
    **{n: f"cutlass::epilogue::thread::{n}" for n in ("LinearCombinationClamp", "LinearCombinationRelu",
                                                      "LinearCombinationGELU", "LinearCombinationSilu",
                                                      "LinearCombinationSigmoid", "LinearCombinationHardSwish",
                                                      "LinearCombinationBiasElementwise", "Convert",
                                                      "ScaleType", "ReLu", "GELU", "GELU_taylor", "SiLu",
                                                      "Sigmoid", "Identity", "HardSwish", "Clamp")},
    # 3.x fusion operations
    **{n: f"cutlass::epilogue::fusion::{n}" for n in ("LinCombEltAct", "LinCombPerRowBias",
                                                      "LinCombPerColBias", "LinCombPerRowBiasEltAct",
                                                      "LinCombPerColBiasEltAct", "LinCombPerRowBiasEltActAux",
                                                      "ScaledLinCombPerRowBiasEltAct", "ScaledLinCombPerRowBiasEltActAmaxAux",
                                                      "LinCombDeEltAct", "LinCombEltActAux", "Sm90EVT",
                                                      "Sm90TreeVisitor", "Sm90Compute", "Sm90ScalarBroadcast",
                                                      "Sm90SrcFetch", "Sm90AccFetch", "Sm90RowBroadcast",
                                                      "Sm90ColBroadcast", "FusionOperation")},
}
# Short names that live in more than one CUTLASS namespace: candidates, most likely first.
_AMBIGUOUS = {
    "LinearCombination": ["cutlass::epilogue::thread::LinearCombination", "cutlass::epilogue::fusion::LinearCombination"],
    "Gemm": ["cutlass::gemm::device::Gemm"],
    "GemmUniversal": ["cutlass::gemm::kernel::GemmUniversal", "cutlass::gemm::device::GemmUniversal"],
    "CollectiveBuilder": ["cutlass::gemm::collective::CollectiveBuilder",
                          "cutlass::epilogue::collective::CollectiveBuilder"],
    "GemmBatched": ["cutlass::gemm::device::GemmBatched"],
    "GemmSplitKParallel": ["cutlass::gemm::device::GemmSplitKParallel"],
}
_EPILOGUE_SCHEDULE = re.compile(r"^(NoSmemWarpSpecialized\w*|TmaWarpSpecialized\w*|PtrArray(NoSmem|Tma)\w*|"
                                r"EpilogueSimtVectorized|EpiloguePtrArraySimtVectorized)$")
_ARCH = re.compile(r"^Sm\d+[a-z]?$")
_CUTE_INT = re.compile(r"^_(\d+)$")

# Namespaces a qualified name may start from, with what they expand to.
_NS_PREFIX = {"cute": "cute", "cutlass": "cutlass", "std": "std", "CUTE_STL_NAMESPACE": "cute"}


def qualify(path: list[str], using: list[str]) -> str:
    """Canonical qualified name of a CUTLASS/cute/std name written as ``path`` (e.g. ``["gemm",
    "KernelTma"]`` after ``using namespace cutlass;``)."""
    last = path[-1]
    written = "::".join(path)
    if path[0] in ("cutlass", "cute", "std"):
        return canon(written)
    if len(path) == 1:
        if last in STD_INTS:
            return last
        if last in STD_INT_ALIASES:
            return STD_INT_ALIASES[last]
        if last in CUDA_TYPE_ALIASES:
            return CUDA_TYPE_ALIASES[last]
        if last in _ELEMENT_SHORT:
            return _ELEMENT_SHORT[last]
    # try the using-directives first (most specific)
    for ns in using:
        cand = f"{ns}::{written}"
        if _known(cand):
            return canon(cand)
    hits = _suffix_candidates(path)
    if hits:
        return hits[0]
    if using:
        for ns in using:
            if ns.startswith(("cutlass", "cute")):
                return f"{ns}::{written}"
    return written


_CANON_ALIASES = {
    "cutlass::epilogue::fusion::Sm90EVT": "cutlass::epilogue::fusion::Sm90TreeVisitor",
    "cute::_": "cute::Underscore",
}


def canon(name: str) -> str:
    """Final normalisation of a qualified name: cute's re-exports of CUTLASS/std types, alias templates."""
    if name in _CANON_ALIASES:
        return _CANON_ALIASES[name]
    head, _, last = name.rpartition("::")
    if head in ("std", "cute", "cutlass", "cute::std", "cuda::std", "::std") and last in STD_INTS:
        return last
    if head in ("std", "cute", "cuda::std") and last in STD_INT_ALIASES:
        return STD_INT_ALIASES[last]
    if head == "cute" and last in _ELEMENT_SHORT:
        return _ELEMENT_SHORT[last]
    return name


def _known(name: str) -> bool:
    last = name.split("::")[-1]
    if name in _EXPLICIT.values():
        return True
    for cands in _AMBIGUOUS.values():
        if name in cands:
            return True
    return _pattern_name(last) == name


def _pattern_name(last: str) -> str | None:
    if last in _EXPLICIT:
        return _EXPLICIT[last]
    if _CUTE_INT.match(last):
        return f"cute::{last}"
    if _ARCH.match(last):
        return f"cutlass::arch::{last}"
    if last.startswith("Kernel") and last not in ("KernelScheduleAuto", "KernelHardwareInfo"):
        return f"cutlass::gemm::{last}"
    if last.startswith("Mainloop"):
        return f"cutlass::gemm::{last}"
    if _EPILOGUE_SCHEDULE.match(last):
        return f"cutlass::epilogue::{last}"
    if last in _ELEMENT_SHORT:
        return _ELEMENT_SHORT[last]
    return None


def _suffix_candidates(path: list[str]) -> list[str]:
    last = path[-1]
    written = "::".join(path)
    cands: list[str] = []
    if last in _AMBIGUOUS:
        cands += [c for c in _AMBIGUOUS[last] if c.endswith("::" + written)]
    p = _pattern_name(last)
    if p is not None and (p == written or p.endswith("::" + written)) and p not in cands:
        cands.append(p)
    return cands


def is_cute_int(name: str) -> int | None:
    m = _CUTE_INT.match(name.split("::")[-1])
    return int(m.group(1)) if m and (name.startswith("cute::") or "::" not in name) else None


def element_bits(name: str) -> int | None:
    return ELEMENT_BITS.get(name)


# ----------------------------------------------------------------------------------------------
# Template parameters of the GEMM templates


@dataclass(frozen=True)
class TP:
    name: str  # fact field name ('' = not reported)
    kind: str  # type | int | bool
    default: str | None = None  # a marker for the default; resolved by the extractor


MAINLOOP_BUILDER = "cutlass::gemm::collective::CollectiveBuilder"
EPILOGUE_BUILDER = "cutlass::epilogue::collective::CollectiveBuilder"
COLLECTIVE_MMA = "cutlass::gemm::collective::CollectiveMma"
KERNEL = "cutlass::gemm::kernel::GemmUniversal"
ADAPTER = "cutlass::gemm::device::GemmUniversalAdapter"
GEMM2X = {
    "cutlass::gemm::device::Gemm": "device::Gemm",
    "cutlass::gemm::device::GemmUniversal": "device::GemmUniversal",
    "cutlass::gemm::device::GemmBatched": "device::GemmBatched",
    "cutlass::gemm::device::GemmSplitKParallel": "device::GemmSplitKParallel",
}

MAINLOOP_BUILDER_PARAMS = [TP("arch", "type"), TP("op_class", "type"), TP("element_a", "type"),
                           TP("layout_a", "type"), TP("alignment_a", "int"), TP("element_b", "type"),
                           TP("layout_b", "type"), TP("alignment_b", "int"), TP("element_accumulator", "type"),
                           TP("tile_shape", "type"), TP("cluster_shape", "type"), TP("stage_count", "type"),
                           TP("kernel_schedule", "type"), TP("", "type", "void")]
EPILOGUE_BUILDER_PARAMS = [TP("arch", "type"), TP("op_class", "type"), TP("tile_shape", "type"),
                           TP("cluster_shape", "type"), TP("epilogue_tile", "type"),
                           TP("element_accumulator", "type"), TP("element_compute", "type"),
                           TP("element_c", "type"), TP("layout_c", "type"), TP("alignment_c", "int"),
                           TP("element_d", "type"), TP("layout_d", "type"), TP("alignment_d", "int"),
                           TP("epilogue_schedule", "type"), TP("fusion_op", "type", "linear_combination"),
                           TP("", "type", "void")]
COLLECTIVE_MMA_PARAMS = [TP("dispatch_policy", "type"), TP("tile_shape", "type"), TP("element_a", "type"),
                         TP("stride_a", "type"), TP("element_b", "type"), TP("stride_b", "type"),
                         TP("tiled_mma", "type"), TP("gmem_tiled_copy_a", "type"), TP("smem_layout_atom_a", "type"),
                         TP("smem_copy_atom_a", "type"), TP("transform_a", "type"), TP("gmem_tiled_copy_b", "type"),
                         TP("smem_layout_atom_b", "type"), TP("smem_copy_atom_b", "type"),
                         TP("transform_b", "type")]
KERNEL_PARAMS = [TP("problem_shape", "type"), TP("mainloop", "type"), TP("epilogue", "type"),
                 TP("tile_scheduler", "type", "void"), TP("", "type", "void")]
ADAPTER_PARAMS = [TP("kernel", "type")]

_G2X_HEAD = [TP("element_a", "type"), TP("layout_a", "type"), TP("element_b", "type"), TP("layout_b", "type"),
             TP("element_c", "type"), TP("layout_c", "type"), TP("element_accumulator", "type", "element_c"),
             TP("op_class", "type", "simt"), TP("arch", "type", "sm70"), TP("threadblock_shape", "type", "config"),
             TP("warp_shape", "type", "config"), TP("instruction_shape", "type", "config"),
             TP("epilogue_op", "type", "config")]
GEMM2X_PARAMS = {
    "device::Gemm": _G2X_HEAD + [TP("swizzle", "type", "identity"), TP("stages", "int", "config"),
                                 TP("alignment_a", "int", "config"), TP("alignment_b", "int", "config"),
                                 TP("split_k_serial", "bool", "false"), TP("operator", "type", "config"),
                                 TP("gather_a", "bool", "false"), TP("gather_b", "bool", "false"),
                                 TP("scatter_d", "bool", "false"), TP("permute_d", "type", "nopermute")],
    "device::GemmUniversal": _G2X_HEAD + [TP("swizzle", "type", "identity"), TP("stages", "int", "config"),
                                          TP("alignment_a", "int", "config"), TP("alignment_b", "int", "config"),
                                          TP("operator", "type", "config"), TP("transform_a", "int", "none"),
                                          TP("transform_b", "int", "none"), TP("gather_a", "bool", "false"),
                                          TP("gather_b", "bool", "false"), TP("scatter_d", "bool", "false"),
                                          TP("permute_d", "type", "nopermute"), TP("permute_a", "type", "nopermute"),
                                          TP("permute_b", "type", "nopermute")],
    "device::GemmBatched": _G2X_HEAD + [TP("swizzle", "type", "batched"), TP("stages", "int", "config"),
                                        TP("alignment_a", "int", "config"), TP("alignment_b", "int", "config"),
                                        TP("operator", "type", "config")],
    "device::GemmSplitKParallel": _G2X_HEAD + [TP("convert_scaled_op", "type", "convert"),
                                               TP("reduction_op", "type", "reduce"),
                                               TP("swizzle", "type", "splitk"), TP("stages", "int", "config"),
                                               TP("alignment_a", "int", "config"), TP("alignment_b", "int", "config"),
                                               TP("operator", "type", "config")],
}
SWIZZLE_DEFAULT = {
    "identity": "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle",
    "batched": "cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle",
    "splitk": "cutlass::gemm::threadblock::GemmSplitKHorizontalThreadblockSwizzle",
}

# Dispatch policies of hand-assembled 3.x collectives: (stage arg, cluster default, schedule default)
DISPATCH_POLICY_SCHEDULE_DEFAULT = {
    "cutlass::gemm::MainloopSm90CpAsyncGmmaWarpSpecialized": "cutlass::gemm::KernelCpAsyncWarpSpecialized",
    "cutlass::gemm::MainloopSm90CpAsyncGmmaRmemAWarpSpecialized": "cutlass::gemm::KernelCpAsyncWarpSpecialized",
    "cutlass::gemm::MainloopSm90TmaGmma": "cutlass::gemm::KernelTma",
    "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized": "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    "cutlass::gemm::MainloopSm90TmaGmmaRmemAWarpSpecialized": "cutlass::gemm::KernelTmaWarpSpecialized",
    "cutlass::gemm::MainloopSm90TmaGmmaRmemAWarpSpecializedMixedInput": "cutlass::gemm::KernelTmaWarpSpecialized",
    "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8": "cutlass::gemm::KernelTmaWarpSpecialized",
    "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedBlockwiseFP8":
        "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8Blockwise",
    "cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecialized": "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative",
    "cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecializedFP8":
        "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative",
    "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedSparse": "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedSparseFP8": "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    "cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecializedMixedInput":
        "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative",
    "cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecializedBlockwise":
        "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeFP8Blockwise",
    "cutlass::gemm::MainloopSm80CpAsync": "cutlass::gemm::KernelMultistage",
    "cutlass::gemm::MainloopSm80CpAsyncUnpredicated": "cutlass::gemm::KernelMultistage",
}
# MainloopSm90TmaGmma's third parameter is an int (PipelineAsyncMmaStages), not a schedule.
DISPATCH_POLICY_INT_THIRD = {"cutlass::gemm::MainloopSm90TmaGmma"}


# ----------------------------------------------------------------------------------------------
# CUTLASS 2.x DefaultGemmConfiguration (device/default_gemm_configuration.h)

_INT_TYPES_8 = {"int8_t", "uint8_t"}
_INT4 = {"cutlass::int4b_t", "cutlass::uint4b_t"}
_SAT_A = {"int8_t", "cutlass::int4b_t", "uint8_t", "cutlass::uint4b_t"}


@dataclass(frozen=True)
class DefaultConfig:
    name: str  # the specialization, as written in CUTLASS
    threadblock: tuple[int, int, int] | None
    warp: tuple[int, int, int] | None
    instruction: tuple[int, int, int] | None
    stages: int
    alignment_a: int | None
    alignment_b: int | None
    epilogue: str  # functor template
    epilogue_count: int | None  # its Count (kAlignmentC)
    epilogue_acc: str | None  # ElementAccumulator argument of the functor
    epilogue_compute: str | None
    operator: str


def _bits(name: str) -> int | None:
    return ELEMENT_BITS.get(name)


def _div128(name: str) -> int | None:
    b = _bits(name)
    return 128 // b if b else None


LC = "cutlass::epilogue::thread::LinearCombination"
LCC = "cutlass::epilogue::thread::LinearCombinationClamp"
OMA = "cutlass::arch::OpMultiplyAdd"
OMAS = "cutlass::arch::OpMultiplyAddSaturate"


def default_gemm_configuration(op_class: str, arch: str, a: str, b: str, c: str, acc: str) -> DefaultConfig | str:
    """The ``DefaultGemmConfiguration<op_class, arch, a, b, c, acc>`` specialization CUTLASS picks,
    or a string saying why there is none (a compile error: incomplete type)."""
    simt = "cutlass::arch::OpClassSimt"
    tensor = "cutlass::arch::OpClassTensorOp"
    wmma = "cutlass::arch::OpClassWmmaTensorOp"
    sm = arch.split("::")[-1]
    if op_class == simt:
        if a == "int8_t" and b == "int8_t" and acc == "int32_t":
            return DefaultConfig("DefaultGemmConfiguration<OpClassSimt, ArchTag, int8_t, int8_t, ElementC, int32_t>",
                                 (128, 128, 32), (32, 64, 32), (1, 1, 4), 2, 4, 4, LCC, 1, "int32_t", "float", OMA)
        return DefaultConfig("DefaultGemmConfiguration<OpClassSimt, ArchTag, ...>", (128, 128, 8), (32, 64, 8),
                             (1, 1, 1), 2, 1, 1, LC, 1, acc, acc, OMA)
    if op_class == wmma:
        return DefaultConfig("DefaultGemmConfiguration<OpClassWmmaTensorOp, ArchTag, ...>", None, None, None, 2,
                             _div128(a), _div128(b), LC, _div128(c), acc, acc, OMA)
    if op_class != tensor:
        return f"no DefaultGemmConfiguration for operator class {op_class}"
    int_pair = {("int8_t", "int8_t"), ("int8_t", "uint8_t"), ("uint8_t", "int8_t"), ("uint8_t", "uint8_t")}
    int4_pair = {("cutlass::int4b_t", "cutlass::int4b_t"), ("cutlass::int4b_t", "cutlass::uint4b_t"),
                 ("cutlass::uint4b_t", "cutlass::int4b_t"), ("cutlass::uint4b_t", "cutlass::uint4b_t")}
    if sm == "Sm70":
        return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm70, ...>", (128, 256, 32), (64, 64, 32),
                             (8, 8, 4), 2, _div128(a), _div128(b), LC, _div128(c), acc, acc, OMA)
    if sm == "Sm75":
        if (a, b) in int_pair and acc == "int32_t":
            return DefaultConfig(f"DefaultGemmConfiguration<OpClassTensorOp, Sm75, {a}, {b}, ElementC, int32_t>",
                                 (128, 256, 64), (64, 64, 64), (8, 8, 16), 2, _div128(a), _div128(b), LCC,
                                 _div128(c), "int32_t", "float", OMAS)
        if (a, b) in int4_pair and acc == "int32_t":
            return DefaultConfig(f"DefaultGemmConfiguration<OpClassTensorOp, Sm75, {a}, {b}, ElementC, int32_t>",
                                 (128, 256, 128), (64, 64, 128), (8, 8, 32), 2, _div128(a), _div128(b), LCC,
                                 _div128(c), "int32_t", "float", OMAS)
        if a == b == "cutlass::uint1b_t" and acc == "int32_t":
            return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm75, uint1b_t, uint1b_t, ElementC, int32_t>",
                                 (128, 256, 512), (64, 64, 512), (8, 8, 128), 2, 128, 128, LCC, _div128(c),
                                 "int32_t", "float", "cutlass::arch::OpXorPopc")
        # note: CUTLASS computes kAlignmentB from ElementA here
        return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm75, ...>", (128, 256, 32), (64, 64, 32),
                             (16, 8, 8), 2, _div128(a), _div128(a), LC, _div128(c), acc, acc,
                             OMAS if a in _SAT_A else OMA)
    if sm in ("Sm80", "Sm86", "Sm89", "Sm90"):
        # Sm86 and friends have no specialization of their own: incomplete type
        if sm == "Sm86":
            return "no DefaultGemmConfiguration<OpClassTensorOp, Sm86, ...> in CUTLASS (use arch::Sm80)"
        if sm == "Sm89":
            f8 = {"cutlass::float_e4m3_t", "cutlass::float_e5m2_t"}
            if a in f8 and b in f8:
                return DefaultConfig(f"DefaultGemmConfiguration<OpClassTensorOp, Sm89, {a}, {b}, ElementC, ElementAccumulator>",
                                     (128, 256, 64), (64, 64, 64), (16, 8, 32), 3, _div128(a), _div128(b), LC,
                                     _div128(c), acc, acc, OMA)
            return f"no DefaultGemmConfiguration<OpClassTensorOp, Sm89, {a}, {b}, ...> in CUTLASS (only FP8 A/B)"
        if sm == "Sm90":
            if a == b == "double":
                return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm90, double, double, ElementC, ElementAccumulator>",
                                     (128, 256, 64), (64, 64, 64), (16, 8, 4), 3, 1, 1, LC, 1, acc, acc, OMA)
            if a == b == c == acc == "cutlass::complex<double>":
                return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm90, complex<double>, ...>",
                                     (64, 64, 16), (32, 32, 16), (16, 8, 4), 3, 1, 1, LC, 1, acc, acc,
                                     "cutlass::arch::OpMultiplyAddComplex")
            return (f"no DefaultGemmConfiguration<OpClassTensorOp, Sm90, {a}, {b}, ...> in CUTLASS: 2.x defaults "
                    "exist for Sm90 only for double and complex<double> (use arch::Sm80, or set every parameter)")
        # Sm80
        if (a, b) in int_pair and acc == "int32_t":
            return DefaultConfig(f"DefaultGemmConfiguration<OpClassTensorOp, Sm80, {a}, {b}, ElementC, int32_t>",
                                 (128, 256, 64), (64, 64, 64), (16, 8, 32), 3, _div128(a), _div128(b), LCC,
                                 _div128(c), "int32_t", "float", OMAS)
        if (a, b) in int4_pair and acc == "int32_t":
            return DefaultConfig(f"DefaultGemmConfiguration<OpClassTensorOp, Sm80, {a}, {b}, ElementC, int32_t>",
                                 (128, 256, 128), (64, 64, 128), (16, 8, 64), 3, _div128(a), _div128(b), LCC,
                                 _div128(c), "int32_t", "float", OMAS)
        if {(a, b)} & {("cutlass::int4b_t", "int8_t"), ("int8_t", "cutlass::int4b_t")} and acc == "int32_t":
            return DefaultConfig(f"DefaultGemmConfiguration<OpClassTensorOp, Sm80, {a}, {b}, ElementC, int32_t>",
                                 (128, 256, 64), (64, 64, 64), (16, 8, 32), 3, _div128(a), _div128(b), LCC,
                                 _div128(c), "int32_t", "float", OMAS)
        if a == b == "cutlass::uint1b_t" and acc == "int32_t":
            return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm80, uint1b_t, uint1b_t, ElementC, int32_t>",
                                 (128, 256, 512), (64, 64, 512), (16, 8, 256), 3, 128, 128, LCC, _div128(c),
                                 "int32_t", "float", OMA)
        if a == b == "double":
            return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm80, double, double, ElementC, ElementAccumulator>",
                                 (128, 128, 16), (32, 64, 16), (8, 8, 4), 3, 1, 1, LC, 1, acc, acc, OMA)
        if a == b == c == acc == "cutlass::complex<double>":
            return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm80, complex<double>, ...>",
                                 (64, 64, 16), (32, 32, 16), (8, 8, 4), 3, 1, 1, LC, 1, acc, acc,
                                 "cutlass::arch::OpMultiplyAddComplex")
        # note: CUTLASS computes kAlignmentB from ElementA here
        return DefaultConfig("DefaultGemmConfiguration<OpClassTensorOp, Sm80, ...>", (128, 256, 64), (64, 64, 64),
                             (16, 8, 16), 3, _div128(a), _div128(a), LC, _div128(c), acc, acc,
                             OMAS if a in _SAT_A else OMA)
    return f"no DefaultGemmConfiguration<OpClassTensorOp, {sm}, ...> in CUTLASS"


# ----------------------------------------------------------------------------------------------
# Strides of 3.x collectives -> layout tags (cutlass/detail/layout.hpp TagToStride*)

def stride_to_layout(items: list, operand: str) -> str | None:
    """``Stride<int64_t, _1, int64_t>`` etc. to the layout tag of operand A, B or C/D."""
    if len(items) < 2:
        return None
    unit = [i for i, x in enumerate(items[:2]) if x == 1]
    if len(unit) != 1:
        return None
    k_major = unit[0] == 1  # the second mode (K for A/B, N for C) is contiguous
    if operand == "A":
        return "cutlass::layout::RowMajor" if k_major else "cutlass::layout::ColumnMajor"
    if operand == "B":
        return "cutlass::layout::ColumnMajor" if k_major else "cutlass::layout::RowMajor"
    return "cutlass::layout::RowMajor" if k_major else "cutlass::layout::ColumnMajor"


# ----------------------------------------------------------------------------------------------
# Configuration macros the CUTLASS headers define (cutlass/arch/config.h, arch/mma_sm*.h)

def config_macros(cuda_major: int | None, cuda_minor: int | None, clang_cuda: bool) -> dict[str, str]:
    if cuda_major is None:
        return {}
    v = (cuda_major, cuda_minor or 0)
    out: dict[str, str] = {}
    if clang_cuda:
        out["CUTLASS_CLANG_CUDA"] = "1"
    if v >= (10, 1):
        out["CUTLASS_ARCH_MMA_SM70_SUPPORTED"] = ""
    if v >= (10, 2):
        out["CUTLASS_ARCH_MMA_SM75_SUPPORTED"] = "1"
    if v >= (11, 0):
        out["CUTLASS_ARCH_MMA_SM80_SUPPORTED"] = "1"
    if v >= (11, 8):
        out["CUTLASS_ARCH_MMA_SM90_F64_MMA_SUPPORTED"] = "1"
    if v >= (12, 0):
        out["CUTLASS_ARCH_MMA_SM90_SUPPORTED"] = "1"
    if v >= (12, 2):
        out["CUTLASS_ARCH_MMA_SPARSE_SM90_SUPPORTED"] = ""
    if v >= (12, 3):
        out["CUTLASS_ARCH_MMA_MODIFIABLE_TMA_SM90_SUPPORTED"] = "1"
    if not clang_cuda:
        if v >= (12, 8):
            out["CUTLASS_ARCH_MMA_SM100_SUPPORTED"] = "1"
            out["CUTLASS_ARCH_MMA_SM120_SUPPORTED"] = "1"
        if v >= (12, 9):
            out["CUTLASS_ARCH_MMA_SM103_SUPPORTED"] = "1"
            out["CUTLASS_ARCH_MMA_SM121_SUPPORTED"] = "1"
        if v >= (13, 0):
            out["CUTLASS_ARCH_MMA_SM110_SUPPORTED"] = "1"
    return out
