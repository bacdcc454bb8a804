"""Random C++ sources for fuzzing fusionlint, shared by ``tests/test_fuzz.py`` (through
hypothesis) and ``fuzz/campaign.py`` (seeded, resumable).

Every generator takes a ``random.Random`` (hypothesis passes its own, shrinkable one) and
returns source text. Kinds:

- ``soup``: random token soup over a C++/cuBLASLt/CUTLASS vocabulary, with preprocessor
  lines, unbalanced brackets, odd literals and line continuations;
- ``cublaslt``: a well-formed cuBLASLt program with random values (types, transposes,
  epilogues, pointers, leading dimensions, batch counts...) spelled in random ways (literal,
  local, macro, constexpr, cast, helper function, struct field), random helper functions,
  branches, loops and opaque calls;
- ``cutlass``: a CUTLASS 3.x builder GEMM or a 2.x device GEMM with random template values;
- ``mutant``: a ``cublaslt`` or ``cutlass`` program with tokens deleted, duplicated,
  swapped, replaced or truncated (near-valid code, where parsers' recovery is exercised).
"""
from __future__ import annotations

import random
import re
from functools import lru_cache

KINDS = ("soup", "cublaslt", "cutlass", "mutant")

INTERESTING_INTS = ["0", "1", "2", "3", "4", "7", "8", "15", "16", "17", "31", "32", "40", "48", "63", "64", "68",
                    "72", "80", "96", "100", "127", "128", "129", "192", "256", "1000", "1024", "4096", "65536",
                    "-1", "-8", "2147483647", "2147483648", "4294967295", "9223372036854775807",
                    "0x7fffffff", "0xFFFFFFFFFFFFFFFF", "1ull << 20", "32ull << 20", "0b1010", "010", "1e3", "'a'",
                    "true", "false", "64u", "64LL", "(1 << 31)", "-(1LL << 62)", "1 / 0", "7 % 0", "1 << 70"]

INT_TYPES = ["int", "int32_t", "int64_t", "uint32_t", "uint64_t", "int8_t", "uint16_t", "size_t", "long", "char",
             "bool", "unsigned", "float", "double"]


@lru_cache(maxsize=1)
def _model():
    from fusionlint.model.cublaslt_api import load_model

    return load_model()


def _enum_values(name: str) -> list[str]:
    spec = _model().enum(name)
    return list(spec.values) if spec else []


def _attributes(enum_type: str) -> list:
    return list(_model().attributes_of(enum_type).values())


# ---------------------------------------------------------------------------------------------
# cuBLASLt programs


class _Prog:
    """Accumulates the pieces of one generated program."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.top: list[str] = []  # macros, constexpr globals, helpers (before the GEMM function)
        self.body: list[str] = []
        self.n = 0

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def spell(self, ctype: str, text: str) -> str:
        """``text`` (a C++ expression of type ``ctype``) written in one of several equivalent ways."""
        r = self.rng.random()
        if r < 0.35:
            return text
        if r < 0.5:
            v = self.fresh("v")
            self.body.append(f"  const {ctype} {v} = {text};")
            return v
        if r < 0.6:
            m = self.fresh("M_")
            self.top.append(f"#define {m} ({text})")
            return m
        if r < 0.7:
            c = self.fresh("k")
            self.top.append(f"static constexpr {ctype} {c} = {text};")
            return c
        if r < 0.78:
            return f"static_cast<{ctype}>({text})"
        if r < 0.86:
            f = self.fresh("get")
            self.top.append(f"static {ctype} {f}() {{ return {text}; }}")
            return f"{f}()"
        if r < 0.93:
            s = self.fresh("Cfg")
            self.top.append(f"struct {s} {{ {ctype} value = {text}; }};")
            inst = self.fresh("cfg")
            self.body.append(f"  {s} {inst};")
            return f"{inst}.value"
        return f"(({ctype})({text}))"

    def int_value(self) -> str:
        rng = self.rng
        if rng.random() < 0.8:
            return rng.choice(INTERESTING_INTS)
        return str(rng.randint(-(2 ** 40), 2 ** 40))

    def attr_value(self, spec) -> str:
        rng = self.rng
        if spec.pointer:
            return rng.choice(["nullptr", "ptr", "ptr2", "(void *)0", "scale_ptr", "&host_scalar", "(void *)16"])
        if spec.enum and rng.random() < 0.85:
            values = _enum_values(spec.enum)
            if values:
                return rng.choice(values)
        return self.int_value()

    def buffer_type(self, spec) -> str:
        if self.rng.random() < 0.8 and spec.type:
            return spec.type.replace("const void *", "const void*")
        return self.rng.choice(INT_TYPES + ["void *", "cublasOperation_t", "cublasLtEpilogue_t", "cudaDataType_t"])

    def set_attribute(self, fn: str, obj: str, spec, indent: str = "  ") -> None:
        rng = self.rng
        ctype = self.buffer_type(spec)
        value = self.attr_value(spec)
        buf = self.fresh("a")
        if ctype.endswith("*") or spec.pointer:
            self.body.append(f"{indent}{ctype} {buf} = ({ctype})({value});")
        else:
            self.body.append(f"{indent}{ctype} {buf} = {self.spell(ctype, value) if rng.random() < 0.7 else value};")
        size = rng.choice([f"sizeof({buf})", f"sizeof({buf})", f"sizeof({ctype})", "4", "8", "1", "0", "sizeof(int)",
                           "sizeof " + buf])
        attr = spec.name if rng.random() < 0.9 else f"({spec.enum_type}){spec.value}"
        self.body.append(f"{indent}{fn}({obj}, {attr}, &{buf}, {size});")


def cublaslt_program(rng: random.Random) -> str:
    p = _Prog(rng)
    types = _enum_values("cudaDataType_t")
    common = ["CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_32F", "CUDA_R_8F_E4M3", "CUDA_R_8F_E5M2", "CUDA_R_8I", "CUDA_R_32I",
              "CUDA_R_64F"]

    def dtype() -> str:
        return rng.choice(common) if rng.random() < 0.85 else rng.choice(types)

    compute = rng.choice(_enum_values("cublasComputeType_t"))
    scale = dtype()
    p.body.append("  cublasLtMatmulDesc_t desc;")
    create = rng.choice(["create", "create", "create", "none", "twice"])
    if create != "none":
        p.body.append(f"  cublasLtMatmulDescCreate(&desc, {p.spell('cublasComputeType_t', compute)}, "
                      f"{p.spell('cudaDataType_t', scale)});")
    if create == "twice":
        p.body.append(f"  cublasLtMatmulDescCreate(&desc, {rng.choice(_enum_values('cublasComputeType_t'))}, {dtype()});")
    desc_attrs = _attributes("cublasLtMatmulDescAttributes_t")
    helper = rng.random() < 0.3
    if helper:
        p.top.append("template <typename T>\nstatic void set_desc(cublasLtMatmulDesc_t d, "
                     "cublasLtMatmulDescAttributes_t a, T v) {\n"
                     "  cublasLtMatmulDescSetAttribute(d, a, &v, sizeof(v));\n}")
    for _ in range(rng.randint(0, 8)):
        spec = rng.choice(desc_attrs)
        r = rng.random()
        if helper and r < 0.3 and not spec.pointer:
            ctype = p.buffer_type(spec)
            p.body.append(f"  set_desc<{ctype}>(desc, {spec.name}, {p.attr_value(spec)});")
        elif r < 0.4:
            cond = rng.choice(["flag", "argc > 1", "1", "0", "true", "n > 0"])
            p.body.append(f"  if ({cond}) {{")
            p.set_attribute("cublasLtMatmulDescSetAttribute", "desc", spec, "    ")
            if rng.random() < 0.5:
                p.body.append("  } else {")
                p.set_attribute("cublasLtMatmulDescSetAttribute", "desc", rng.choice(desc_attrs), "    ")
            p.body.append("  }")
        elif r < 0.5:
            p.body.append(f"  for (int i = 0; i < {rng.choice(['0', '1', '3', 'n'])}; ++i) {{")
            p.set_attribute("cublasLtMatmulDescSetAttribute", "desc", spec, "    ")
            p.body.append("  }")
        else:
            p.set_attribute("cublasLtMatmulDescSetAttribute", "desc", spec)
    layout_attrs = _attributes("cublasLtMatrixLayoutAttribute_t")
    names = ["la", "lb", "lc", "ld"]
    p.body.append(f"  cublasLtMatrixLayout_t {', '.join(names)};")
    for name in names:
        if rng.random() < 0.95:
            dims = [p.spell("uint64_t", p.int_value()) if rng.random() < 0.5 else rng.choice(["64", "128", "m", "n", "k"])
                    for _ in range(2)]
            ld = p.spell("int64_t", p.int_value()) if rng.random() < 0.5 else rng.choice(["64", "128", "m", "k", "ldx"])
            p.body.append(f"  cublasLtMatrixLayoutCreate(&{name}, {p.spell('cudaDataType_t', dtype())}, "
                          f"{dims[0]}, {dims[1]}, {ld});")
        for _ in range(rng.choice([0, 0, 1, 2])):
            p.set_attribute("cublasLtMatrixLayoutSetAttribute", name, rng.choice(layout_attrs))
    if rng.random() < 0.15:
        p.body.append(rng.choice(["  opaque(&desc);", "  opaque(&la);", "  opaque(desc);", "  opaque(nullptr);"]))
    tail = rng.choice(["matmul", "heuristic", "both", "none", "both"])
    if tail in ("heuristic", "both"):
        p.body.append("  cublasLtMatmulPreference_t pref;")
        p.body.append("  cublasLtMatmulPreferenceCreate(&pref);")
        for _ in range(rng.choice([0, 1, 2])):
            p.set_attribute("cublasLtMatmulPreferenceSetAttribute", "pref",
                            rng.choice(_attributes("cublasLtMatmulPreferenceAttributes_t")))
        p.body.append("  cublasLtMatmulHeuristicResult_t result = {};")
        p.body.append("  int count = 0;")
        p.body.append(f"  cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, {rng.choice(['1', '4', '0'])}, "
                      "&result, &count);")
    if tail in ("matmul", "both"):
        algo = "&result.algo" if tail == "both" and rng.random() < 0.7 else "nullptr"
        c = rng.choice(["lc", "ld"])
        p.body.append("  const float alpha = 1.0f, beta = 0.0f;")
        p.body.append(f"  cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, C, {c}, D, ld, {algo}, ws, 0, 0);")
        if rng.random() < 0.2:  # the same descriptor used again after a change
            p.set_attribute("cublasLtMatmulDescSetAttribute", "desc", rng.choice(desc_attrs))
            p.body.append(f"  cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, C, {c}, D, ld, nullptr, ws, 0, 0);")
    if rng.random() < 0.3:
        p.body.append("  cublasLtMatmulDescDestroy(desc);")
    head = ["#include <cstdint>", "#include <cstddef>", "#include <cublasLt.h>", "",
            "void opaque(void *);" if rng.random() < 0.5 else "template <class T> void opaque(T);",
            "static float host_scalar = 1.0f;"]
    params = ("cublasLtHandle_t lt, void *A, void *B, void *C, void *D, void *ws, void *ptr, void *ptr2, "
              "const float *scale_ptr, bool flag, int argc, int n, int m, int k, int64_t ldx")
    entry = rng.choice(["gemm", "main_like", "Runner::run"])
    if entry == "Runner::run":
        fn = [f"struct Runner {{\n  void run({params});\n}};", f"void Runner::run({params}) {{"]
    else:
        fn = [f"void {entry}({params}) {{"]
    caller = []
    if rng.random() < 0.3:  # called from a function with known arguments
        caller = ["int main() {", "  cublasLtHandle_t lt;", "  cublasLtCreate(&lt);",
                  f"  {'Runner().run' if entry == 'Runner::run' else entry}(lt, nullptr, nullptr, nullptr, nullptr, "
                  f"nullptr, nullptr, nullptr, nullptr, {rng.choice(['true', 'false'])}, 1, 64, 64, 64, 64);",
                  "  return 0;", "}"]
    return "\n".join(head + p.top + fn + p.body + ["}"] + caller) + "\n"


# ---------------------------------------------------------------------------------------------
# CUTLASS programs

ELEMENTS = ["cutlass::half_t", "cutlass::bfloat16_t", "float", "cutlass::tfloat32_t", "cutlass::float_e4m3_t",
            "cutlass::float_e5m2_t", "int8_t", "int32_t", "double", "uint8_t", "void", "cutlass::int4b_t"]
LAYOUTS = ["cutlass::layout::RowMajor", "cutlass::layout::ColumnMajor", "cutlass::layout::ColumnMajorInterleaved<32>"]
KERNEL_SCHEDULES = ["cutlass::gemm::KernelTmaWarpSpecialized", "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
                    "cutlass::gemm::KernelTmaWarpSpecializedPingpong",
                    "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum",
                    "cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum",
                    "cutlass::gemm::collective::KernelScheduleAuto", "cutlass::gemm::KernelCpAsyncWarpSpecialized"]
EPI_SCHEDULES = ["cutlass::epilogue::TmaWarpSpecialized", "cutlass::epilogue::TmaWarpSpecializedCooperative",
                 "cutlass::epilogue::NoSmemWarpSpecialized", "cutlass::epilogue::collective::EpilogueScheduleAuto"]
DIMS = ["1", "2", "4", "8", "16", "32", "48", "64", "96", "128", "192", "256", "512", "0", "3"]


def _cute_int(rng: random.Random) -> str:
    return "_" + rng.choice(DIMS) if rng.random() < 0.9 else f"Int<{rng.choice(DIMS)}>"


def cutlass_program(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return _cutlass_2x(rng)
    ea, eb, ec, ed = (rng.choice(ELEMENTS[:8]) if rng.random() < 0.9 else rng.choice(ELEMENTS) for _ in range(4))
    la, lb, lc = (rng.choice(LAYOUTS[:2]) if rng.random() < 0.95 else LAYOUTS[2] for _ in range(3))
    align = [rng.choice(["1", "2", "4", "8", "16", "32", "0", "128 / cutlass::sizeof_bits<ElementA>::value",
                         "16 / sizeof(ElementA)"]) for _ in range(3)]
    tile = ", ".join(_cute_int(rng) for _ in range(3))
    cluster = ", ".join("_" + rng.choice(["1", "2", "4", "8", "3"]) for _ in range(3))
    stages = rng.choice(["cutlass::gemm::collective::StageCountAutoCarveout<"
                         "static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>",
                         "cutlass::gemm::collective::StageCountAuto",
                         f"cutlass::gemm::collective::StageCount<{rng.choice(['1', '2', '3', '4', '7', '12', '0'])}>"])
    sched = rng.choice(KERNEL_SCHEDULES)
    epi = rng.choice(EPI_SCHEDULES)
    arch = rng.choice(["cutlass::arch::Sm90"] * 4 + ["cutlass::arch::Sm80", "cutlass::arch::Sm100"])
    scheduler = rng.choice(["", "", ", cutlass::gemm::PersistentScheduler", ", cutlass::gemm::StreamKScheduler"])
    wrap = rng.random() < 0.3
    lines = ["#include \"cutlass/cutlass.h\"", "#include \"cutlass/gemm/collective/collective_builder.hpp\"",
             "#include \"cutlass/epilogue/collective/collective_builder.hpp\"",
             "#include \"cutlass/gemm/device/gemm_universal_adapter.h\"", "using namespace cute;", ""]
    decl = [f"using ElementA = {ea};", f"using LayoutA = {la};", f"static constexpr int AlignmentA = {align[0]};",
            f"using ElementB = {eb};", f"using LayoutB = {lb};", f"static constexpr int AlignmentB = {align[1]};",
            f"using ElementC = {ec};", f"using LayoutC = {lc};", f"static constexpr int AlignmentC = {align[2]};",
            f"using ElementD = {ed if rng.random() < 0.5 else 'ElementC'};",
            f"using ElementAccumulator = {rng.choice(['float', 'float', 'int32_t', 'cutlass::half_t', 'double'])};",
            f"using TileShape = Shape<{tile}>;", f"using ClusterShape = Shape<{cluster}>;",
            f"using KernelSchedule = {sched};", f"using EpilogueSchedule = {epi};"]
    body = [
        "using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<",
        f"    {arch}, cutlass::arch::OpClassTensorOp,",
        "    TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,",
        "    ElementAccumulator, ElementAccumulator,",
        "    ElementC, LayoutC, AlignmentC,",
        "    ElementD, LayoutC, AlignmentC,",
        "    EpilogueSchedule>::CollectiveOp;",
        "using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<",
        f"    {arch}, cutlass::arch::OpClassTensorOp,",
        "    ElementA, LayoutA, AlignmentA,",
        "    ElementB, LayoutB, AlignmentB,",
        "    ElementAccumulator,",
        "    TileShape, ClusterShape,",
        f"    {stages},",
        "    KernelSchedule>::CollectiveOp;",
        "using GemmKernel = cutlass::gemm::kernel::GemmUniversal<",
        f"    Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue{scheduler}>;",
        "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;",
    ]
    if wrap:
        out = lines + ["struct Config {"] + ["  " + d for d in decl] + ["};", "template <class Cfg>", "struct Wrapper {"]
        out += ["  using " + d.split("using ", 1)[1].split(" =")[0] + " = typename Cfg::" +
                d.split("using ", 1)[1].split(" =")[0] + ";" for d in decl if d.startswith("using ")]
        out += ["  static constexpr int " + n + " = Cfg::" + n + ";" for n in ("AlignmentA", "AlignmentB", "AlignmentC")]
        out += ["  " + b for b in body] + ["};", "using G = Wrapper<Config>::Gemm;"]
    else:
        out = lines + decl + body
    out += ["int run_it() {", "  Gemm gemm;", "  typename Gemm::Arguments args{};", "  return (int)gemm.can_implement(args);",
            "}"]
    return "\n".join(out) + "\n"


def _cutlass_2x(rng: random.Random) -> str:
    def shape() -> str:
        return f"cutlass::gemm::GemmShape<{rng.choice(DIMS)}, {rng.choice(DIMS)}, {rng.choice(DIMS)}>"

    e = [rng.choice(ELEMENTS[:8]) for _ in range(4)]
    return "\n".join([
        "#include \"cutlass/gemm/device/gemm.h\"",
        f"using Gemm = cutlass::gemm::device::{rng.choice(['Gemm', 'GemmUniversal', 'GemmSplitKParallel'])}<",
        f"    {e[0]}, {rng.choice(LAYOUTS)}, {e[1]}, {rng.choice(LAYOUTS)}, {e[2]}, {rng.choice(LAYOUTS)}, {e[3]},",
        f"    cutlass::arch::{rng.choice(['OpClassTensorOp', 'OpClassSimt'])}, "
        f"cutlass::arch::{rng.choice(['Sm80', 'Sm90', 'Sm75', 'Sm70'])},",
        f"    {shape()}, {shape()}, {shape()},",
        f"    cutlass::epilogue::thread::LinearCombination<{e[2]}, {rng.choice(DIMS)}, {e[3]}, {e[3]}>,",
        f"    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<{rng.choice(['1', '4', '8'])}>,",
        f"    {rng.choice(['2', '3', '4', '10', '0'])}>;",
        "Gemm g;", ""])


# ---------------------------------------------------------------------------------------------
# Token soup and mutants

VOCAB = (["int", "void", "const", "constexpr", "static", "struct", "class", "template", "typename", "using", "namespace",
          "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break", "sizeof", "decltype",
          "auto", "nullptr", "true", "false", "operator", "new", "delete", "this", "enum", "union", "typedef",
          "static_cast", "reinterpret_cast", "static_assert", "goto", "try", "catch", "throw", "inline", "extern",
          "__global__", "__device__", "__host__", "<<<", ">>>", "__launch_bounds__", "alignas", "[[", "]]", "co_await",
          "{", "}", "(", ")", "[", "]", "<", ">", ";", ",", ".", "->", "::", "=", "==", "&", "&&", "*", "+", "-",
          "/", "%", "!", "~", "^", "|", "?", ":", "...", "#", "##", "\\\n", "\n", "\n", "\n", "\t", "  ",
          "'x'", "'\\0'", "\"str\"", "\"unterminated", "R\"(raw)\"", "u8\"ü\"", "L'w'", "0", "1", "64", "-1",
          "0x10", "1e308", "1e-400", "18446744073709551616", "0b", "1.5f", "1'000'000", "ident", "x", "y", "T",
          "désc", "\u00e9t\u00e9", "$dollar", "@", "`", "/*", "*/", "//", "/* unterminated comment"]
         + ["cublasLtMatmulDescCreate", "cublasLtMatmulDescSetAttribute", "cublasLtMatrixLayoutCreate",
            "cublasLtMatrixLayoutSetAttribute", "cublasLtMatmul", "cublasLtMatmulAlgoGetHeuristic",
            "cublasLtMatmulPreferenceCreate", "cublasLtMatmulPreferenceSetAttribute", "cublasLtCreate",
            "cublasLtMatmulDesc_t", "cublasLtMatrixLayout_t", "cublasLtHandle_t", "cublasLtMatmulPreference_t",
            "CUBLASLT_MATMUL_DESC_TRANSA", "CUBLASLT_MATMUL_DESC_EPILOGUE", "CUBLASLT_MATMUL_DESC_BIAS_POINTER",
            "CUBLASLT_MATRIX_LAYOUT_ORDER", "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT", "CUBLASLT_EPILOGUE_GELU_AUX",
            "CUDA_R_8F_E4M3", "CUDA_R_16BF", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", "CUBLAS_OP_T", "CUBLAS_OP_N",
            "CUBLASLT_ORDER_ROW", "desc", "la", "lb", "ld", "&desc", "&la", "&t", "sizeof(t)", "int32_t", "int64_t",
            "cutlass", "cute", "Shape", "_128", "_64", "_1", "CollectiveBuilder", "GemmUniversal",
            "GemmUniversalAdapter", "cutlass::half_t", "cutlass::arch::Sm90", "KernelTmaWarpSpecializedCooperative",
            "cutlass::gemm::collective::CollectiveBuilder<", "StageCount<", "::CollectiveOp"])
DIRECTIVES = ["#include <cublasLt.h>", "#include <cstdint>", "#include \"missing_header.h\"", "#include <nonexistent>",
              "#define X", "#define F(a, b) a ## b", "#define CALL cublasLtMatmulDescSetAttribute(", "#undef X",
              "#if 1", "#if 0", "#ifdef X", "#else", "#elif", "#endif", "#pragma once", "#error boom", "#line 0",
              "#line 99999999999", "#include __FILE__", "#pragma GCC diagnostic push", "#warning w",
              "#define CUBLASLT_MATMUL_DESC_TRANSA 999", "#include", "#", "??=define TRI 1"]


def soup(rng: random.Random) -> str:
    parts: list[str] = []
    if rng.random() < 0.6:
        parts.append("#include <cublasLt.h>\n")
    for _ in range(rng.randint(0, 400)):
        r = rng.random()
        if r < 0.05:
            parts.append("\n" + rng.choice(DIRECTIVES) + "\n")
        elif r < 0.07:
            parts.append(rng.choice(["\r\n", "\r", "\f", "\v", "\u2028", "\ufeff", "\u00a0"]))
        elif r < 0.1:
            parts.append(rng.choice(INTERESTING_INTS))
        elif r < 0.11:
            parts.append("(" * rng.randint(1, 300))
        elif r < 0.12:
            parts.append("{" * rng.randint(1, 300))
        else:
            parts.append(rng.choice(VOCAB))
        parts.append(rng.choice([" ", " ", "", "\n"]))
    return "".join(parts)


_TOKEN = re.compile(r"\s+|//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|[A-Za-z_]\w*|\d[\w.']*"
                    r"|::|->|<<|>>|&&|\|\||[^\s]", re.S)


def mutant(rng: random.Random) -> str:
    base = cublaslt_program(rng) if rng.random() < 0.65 else cutlass_program(rng)
    tokens = _TOKEN.findall(base)
    for _ in range(rng.randint(1, 6)):
        if not tokens:
            break
        i = rng.randrange(len(tokens))
        j = min(len(tokens), i + rng.randint(1, 30))
        op = rng.random()
        if op < 0.25:
            del tokens[i:j]
        elif op < 0.4:
            tokens[i:i] = tokens[i:j]
        elif op < 0.55:
            k = rng.randrange(len(tokens))
            tokens[i], tokens[k] = tokens[k], tokens[i]
        elif op < 0.8:
            tokens[i] = rng.choice(VOCAB + INTERESTING_INTS)
        elif op < 0.9:
            tokens.insert(i, soup(rng)[:rng.randint(1, 200)])
        else:
            del tokens[i:]
    return "".join(tokens)


GENERATORS = {"soup": soup, "cublaslt": cublaslt_program, "cutlass": cutlass_program, "mutant": mutant}


def generate(rng: random.Random, kind: str | None = None) -> tuple[str, str]:
    """(kind, source); the kind is random unless given."""
    kind = kind or rng.choice(KINDS)
    return kind, GENERATORS[kind](rng)
