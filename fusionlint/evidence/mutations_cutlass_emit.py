"""The program text of the CUTLASS random-mutation set (:mod:`fusionlint.evidence.mutations_cutlass`).

A program is one GEMM configuration, written in one of three code styles —

- ``plain``: aliases and constants at file scope, as in ``kernels_ref/cutlass/*.cu``;
- ``config``: one ``struct GemmConfig`` holding every tunable, read by the builders (or the 2.x
  ``device::Gemm``) at file scope;
- ``wrapper``: a class template ``MyGemm<Tile, Cluster, ..., Stages>`` (2.x: the threadblock, warp and
  instruction shapes and the stage count) that assembles the GEMM, instantiated once with concrete
  arguments; the element types, layouts and alignments stay at file scope —

and a ``main`` that runs it once at a problem size written in one of five forms (``constexpr``
locals, ``const`` locals, the fields of a problem struct, literals at every use, a
``cutlass::gemm::GemmCoord``), checks D against the host reference of ``fusionlint_cutlass_probe.h``
and prints its ``EVIDENCE`` lines. :func:`expected_facts` says what the linter's front end must read
back for each mutated field. Standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

STYLES = ["plain", "config", "wrapper"]
FORMS = ["constexpr", "const", "struct", "literal", "coord"]
GENERATIONS = ["3.x", "2.x"]
HEADER = "fusionlint_cutlass_probe.h"
EPILOGUE_TILE_AUTO = "cutlass::epilogue::collective::EpilogueTileAuto"
STAGE_COUNT_AUTO = "cutlass::gemm::collective::StageCountAuto"
CARVEOUT = "cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename " \
           "CollectiveEpilogue::SharedStorage))>"
CARVEOUT_EPI = "cutlass::gemm::collective::StageCountAutoCarveoutEpi<CollectiveEpilogue>"
SWIZZLE_2X = "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>"
INCLUDES_3X = ["cute/tensor.hpp", "cutlass/cutlass.h", "cutlass/gemm/dispatch_policy.hpp",
               "cutlass/gemm/collective/collective_builder.hpp", "cutlass/epilogue/collective/collective_builder.hpp",
               "cutlass/gemm/kernel/gemm_universal.hpp", "cutlass/gemm/device/gemm_universal_adapter.h"]
INCLUDES_2X = ["cutlass/cutlass.h", "cutlass/gemm/device/gemm.h", "cutlass/epilogue/thread/linear_combination.h"]
# the cute::_N aliases of CUTLASS 4.2 (cute/numeric/integral_constant.hpp); other extents are Int<N>
CUTE_ALIASES = {*range(11), 12, *range(16, 257, 8), 384, 512, 768, 1024, 2048, 4096, 8192}


def probe_header() -> Path:
    return Path(str(resources.files("fusionlint.evidence") / "include" / HEADER))


# ---- spelling values ---------------------------------------------------------------------------------
def cute_int(v: int, ns: str = "") -> str:
    return f"{ns}_{v}" if v in CUTE_ALIASES else f"{ns}Int<{v}>"


def cute_shape(values: list[int], ns: str = "") -> str:
    return f"{ns}Shape<{', '.join(cute_int(v, ns) for v in values)}>"


def gemm_shape(values: list[int]) -> str:
    return f"cutlass::gemm::GemmShape<{values[0]}, {values[1]}, {values[2]}>"


def epilogue_tile(value, ns: str = "") -> str:
    return EPILOGUE_TILE_AUTO if value == "auto" else cute_shape(value, ns)


def _muts(entry: dict) -> str:
    def short(v) -> str:
        return "x".join(map(str, v)) if isinstance(v, list) else str(v)
    return "; ".join(f"{m['field']} {short(m['old'])} -> {short(m['new'])}" for m in entry["mutations"]) or "none"


# ---- the problem size ----------------------------------------------------------------------------------
@dataclass
class Problem:
    file_scope: list[str]  # declarations before main
    decl: list[str]  # first lines of main
    m: str
    n: str
    k: str
    coord: str = ""  # the GemmCoord variable, if any


def problem(form: str, cfg: dict) -> Problem:
    m, n, k = cfg["m"], cfg["n"], cfg["k"]
    if form == "constexpr":
        return Problem([], [f"  constexpr int M = {m};", f"  constexpr int N = {n};", f"  constexpr int K = {k};"],
                       "M", "N", "K")
    if form == "const":
        return Problem([], [f"  const int m = {m};", f"  const int n = {n};", f"  const int k = {k};"], "m", "n", "k")
    if form == "struct":
        return Problem(["// The problem this application runs.", "struct ProblemSize {", f"  int m = {m};",
                        f"  int n = {n};", f"  int k = {k};", "};", ""],
                       ["  ProblemSize problem;"], "problem.m", "problem.n", "problem.k")
    if form == "literal":
        return Problem([], [], str(m), str(n), str(k))
    assert form == "coord", form
    return Problem([], [f"  cutlass::gemm::GemmCoord problem_size({m}, {n}, {k});"], "problem_size.m()",
                   "problem_size.n()", "problem_size.k()", "problem_size")


def _run_and_check(ind: str = "  ") -> list[str]:
    ok = "cutlass::Status::kSuccess"
    return [f"{ind}Gemm gemm;",
            f"{ind}size_t workspace_size = Gemm::get_workspace_size(arguments);",
            f"{ind}void *workspace = nullptr;",
            f"{ind}if (workspace_size) cudaMalloc(&workspace, workspace_size);",
            f"{ind}bool ok = probe_step(\"can_implement\", gemm.can_implement(arguments)) == {ok} &&",
            f"{ind}          probe_step(\"initialize\", gemm.initialize(arguments, workspace)) == {ok} &&",
            f"{ind}          probe_step(\"run\", gemm.run()) == {ok};",
            f"{ind}ok = probe_sync() == cudaSuccess && ok;",
            f"{ind}if (ok) ok = probe_check(A, B, &C, D, 1.0f, 1.0f);  // D = A * B + C on the host",
            f"{ind}if (workspace) cudaFree(workspace);",
            f"{ind}A.release(), B.release(), C.release(), D.release();",
            f"{ind}return ok ? 0 : 1;", "}"]


def _tensors(p: Problem, t: dict[str, str]) -> list[str]:
    return [f"  auto A = probe_tensor<{t['ElementA']}, {t['LayoutA']}>({p.m}, {p.k}, 1);",
            f"  auto B = probe_tensor<{t['ElementB']}, {t['LayoutB']}>({p.k}, {p.n}, 2);",
            f"  auto C = probe_tensor<{t['ElementC']}, {t['LayoutC']}>({p.m}, {p.n}, 3);",
            f"  auto D = probe_tensor<{t['ElementD']}, {t['LayoutD']}>({p.m}, {p.n}, 4);  // prefilled"]


def _header(entry: dict, what: str) -> list[str]:
    return [f"// fusionlint CUTLASS mutation program {entry['file']}: base kernels_ref/cutlass/{entry['base']}.cu",
            f"// ({what}), code style {entry['style']}, problem size as {entry['problem_form']} "
            f"({entry['config']['m']} x {entry['config']['n']} x {entry['config']['k']}).",
            f"// Mutated: {_muts(entry)}.",
            "// Generated by fusionlint.evidence.mutations_cutlass; runs the GEMM once and checks D on the host."]


# ---- CUTLASS 3.x ---------------------------------------------------------------------------------------
def _operand_aliases(c: dict, prefix: str, ind: str, three: bool) -> list[str]:
    """ElementA/LayoutA/AlignmentA ... ElementD/LayoutD/AlignmentD, ElementAccumulator (and ElementCompute)."""
    out = []
    for x in "ABC":
        lo = x.lower()
        out += [f"{ind}using Element{x} = {c['element_' + lo]};", f"{ind}using Layout{x} = {c['layout_' + lo]};",
                f"{ind}static constexpr int {prefix}Alignment{x} = {c['align_' + lo]};"]
    if three:
        d = "ElementC" if c["element_d"] == c["element_c"] else c["element_d"]
        out += [f"{ind}using ElementD = {d};", f"{ind}using LayoutD = LayoutC;",
                f"{ind}static constexpr int {prefix}AlignmentD = {prefix}AlignmentC;"]
    out.append(f"{ind}using ElementAccumulator = {c['element_acc']};")
    out.append(f"{ind}using ElementCompute = float;" if three else
               f"{ind}using ElementComputeEpilogue = ElementAccumulator;")
    return out


def _builders_3x(ind: str, q: dict[str, str], tile: str, cluster: str, epi_tile: str, stages: str, kernel: str,
                 epilogue: str) -> list[str]:
    """The two collective builders; ``q`` spells the operand aliases, the others are written as given."""
    nl = "\n"
    return [
        f"{ind}using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<",
        f"{ind}    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,",
        f"{ind}    {tile}, {cluster}, {epi_tile},",
        f"{ind}    {q['ElementAccumulator']}, {q['ElementCompute']},",
        f"{ind}    {q['ElementC']}, {q['LayoutC']}, {q['AlignmentC']},",
        f"{ind}    {q['ElementD']}, {q['LayoutD']}, {q['AlignmentD']},",
        f"{ind}    {epilogue}>::CollectiveOp;", "",
        *([f"{ind}using StageCountType = {stages[1:].replace('<static_cast', f'<{nl}{ind}    static_cast')};", ""]
          if stages.startswith("#") else []),
        f"{ind}using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<",
        f"{ind}    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,",
        f"{ind}    {q['ElementA']}, {q['LayoutA']}, {q['AlignmentA']},",
        f"{ind}    {q['ElementB']}, {q['LayoutB']}, {q['AlignmentB']},",
        f"{ind}    {q['ElementAccumulator']},",
        f"{ind}    {tile}, {cluster},",
        f"{ind}    {'StageCountType' if stages.startswith('#') else stages},",
        f"{ind}    {kernel}>::CollectiveOp;", "",
        f"{ind}using GemmKernel = cutlass::gemm::kernel::GemmUniversal<",
        f"{ind}    cute::Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;",
        f"{ind}using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;"]


_OPERANDS = ["ElementA", "LayoutA", "AlignmentA", "ElementB", "LayoutB", "AlignmentB", "ElementC", "LayoutC",
             "AlignmentC", "ElementD", "LayoutD", "AlignmentD", "ElementAccumulator", "ElementCompute"]


def _stage_3x(value, explicit: str) -> str:
    """How the builder's stage argument is written: ``#<type>`` for a StageCountType alias after the
    epilogue (the carve-outs read CollectiveEpilogue), else the argument itself."""
    if value == "auto":
        return STAGE_COUNT_AUTO
    if value == "carveout":
        return "#" + CARVEOUT
    if value == "carveout_epi":
        return "#" + CARVEOUT_EPI
    return f"cutlass::gemm::collective::StageCount<{explicit}>"


def _plain_3x(c: dict) -> list[str]:
    out = ["using namespace cute;", ""] + _operand_aliases(c, "", "", True) + [""]
    out += [f"using TileShape = {cute_shape([c['tile_m'], c['tile_n'], c['tile_k']])};",
            f"using ClusterShape = {cute_shape(c['cluster'])};",
            f"using KernelSchedule = {c['kernel_schedule']};",
            f"using EpilogueSchedule = {c['epilogue_schedule']};",
            f"using EpilogueTile = {epilogue_tile(c['epilogue_tile'])};"]
    if isinstance(c["stages"], int):
        out.append(f"static constexpr int Stages = {c['stages']};")
    out.append("")
    q = {n: n for n in _OPERANDS}
    out += _builders_3x("", q, "TileShape", "ClusterShape", "EpilogueTile", _stage_3x(c["stages"], "Stages"),
                        "KernelSchedule", "EpilogueSchedule")
    return out


def _config_3x(c: dict) -> list[str]:
    out = ["// Every tunable of the GEMM in one place.", "struct GemmConfig {"]
    out += _operand_aliases(c, "k", "  ", True)
    out += [f"  using TileShape = {cute_shape([c['tile_m'], c['tile_n'], c['tile_k']], 'cute::')};",
            f"  using ClusterShape = {cute_shape(c['cluster'], 'cute::')};",
            f"  using KernelSchedule = {c['kernel_schedule']};",
            f"  using EpilogueSchedule = {c['epilogue_schedule']};",
            f"  using EpilogueTile = {epilogue_tile(c['epilogue_tile'], 'cute::')};"]
    stages = c["stages"]
    if isinstance(stages, int):
        out.append(f"  static constexpr int kStages = {stages};")
        stage_arg = "cutlass::gemm::collective::StageCount<GemmConfig::kStages>"
    elif stages == "auto":
        out.append(f"  using StageCountType = {STAGE_COUNT_AUTO};")
        stage_arg = "GemmConfig::StageCountType"
    else:
        stage_arg = _stage_3x(stages, "")
    out += ["};", ""]
    q = {n: ("GemmConfig::k" + n if n.startswith("Alignment") else "GemmConfig::" + n) for n in _OPERANDS}
    out += _builders_3x("", q, "GemmConfig::TileShape", "GemmConfig::ClusterShape", "GemmConfig::EpilogueTile",
                        stage_arg, "GemmConfig::KernelSchedule", "GemmConfig::EpilogueSchedule")
    return out


def _wrapper_3x(c: dict) -> list[str]:
    out = ["using namespace cute;", ""] + _operand_aliases(c, "", "", True) + [""]
    stages = c["stages"]
    params = ["class TileShape", "class ClusterShape", "class KernelSchedule", "class EpilogueSchedule"]
    args = [cute_shape([c["tile_m"], c["tile_n"], c["tile_k"]]), cute_shape(c["cluster"]), c["kernel_schedule"],
            c["epilogue_schedule"]]
    if isinstance(stages, int):
        params.append("int Stages")
        args.append(str(stages))
        stage_arg = "cutlass::gemm::collective::StageCount<Stages>"
    elif stages == "auto":
        params.append("class StageCountType")
        args.append(STAGE_COUNT_AUTO)
        stage_arg = "StageCountType"
    else:
        stage_arg = _stage_3x(stages, "")
    out += ["// One GEMM type per tile / cluster / schedule / stage choice.", f"template <{', '.join(params)}>",
            "struct MyGemm {"]
    q = {n: n for n in _OPERANDS}
    out += _builders_3x("  ", q, "TileShape", "ClusterShape", epilogue_tile(c["epilogue_tile"]), stage_arg,
                        "KernelSchedule", "EpilogueSchedule")
    out += ["};", "", "using Gemm = MyGemm<", "    " + ",\n    ".join(args) + ">::Gemm;"]
    return out


def _main_3x(p: Problem, t: dict[str, str]) -> list[str]:
    out = ["int main() {", *p.decl, *_tensors(p, t)]
    for x, dims in (("A", (p.m, p.k)), ("B", (p.n, p.k)), ("C", (p.m, p.n)), ("D", (p.m, p.n))):
        out.append(f"  auto stride_{x} = cutlass::make_cute_packed_stride(typename Gemm::GemmKernel::Stride{x}{{}}, "
                   f"{{{dims[0]}, {dims[1]}, 1}});")
    out += ["  cutlass::KernelHardwareInfo hw_info;", "  hw_info.device_id = 0;",
            "  hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hw_info.device_id);",
            "  typename Gemm::Arguments arguments{cutlass::gemm::GemmUniversalMode::kGemm,",
            f"                                     {{{p.m}, {p.n}, {p.k}, 1}},",
            "                                     {A.dev, stride_A, B.dev, stride_B},",
            "                                     {{1.0f, 1.0f}, C.dev, stride_C, D.dev, stride_D},",
            "                                     hw_info};"]
    return out + _run_and_check()


# ---- CUTLASS 2.x ---------------------------------------------------------------------------------------
def _device_gemm_2x(ind: str, q: dict[str, str], arch: str, tb: str, warp: str, inst: str, epilogue: str,
                    stages: str) -> list[str]:
    return [f"{ind}using Gemm = cutlass::gemm::device::Gemm<",
            f"{ind}    {q['ElementA']}, {q['LayoutA']}, {q['ElementB']}, {q['LayoutB']}, "
            f"{q['ElementC']}, {q['LayoutC']},",
            f"{ind}    {q['ElementAccumulator']}, cutlass::arch::OpClassTensorOp, {arch},",
            f"{ind}    {tb}, {warp}, {inst},",
            f"{ind}    {epilogue}, {SWIZZLE_2X}, {stages}, {q['AlignmentA']}, {q['AlignmentB']}>;"]


def _epilogue_op_2x(ind: str, q: dict[str, str]) -> str:
    return (f"{ind}using EpilogueOp = cutlass::epilogue::thread::LinearCombination<\n"
            f"{ind}    {q['ElementC']}, {q['AlignmentC']}, {q['ElementAccumulator']}, {q['ElementComputeEpilogue']}>;")


_OPERANDS_2X = ["ElementA", "LayoutA", "AlignmentA", "ElementB", "LayoutB", "AlignmentB", "ElementC", "LayoutC",
                "AlignmentC", "ElementAccumulator", "ElementComputeEpilogue"]


def _plain_2x(c: dict) -> list[str]:
    q = {n: n for n in _OPERANDS_2X}
    return [*_operand_aliases(c, "", "", False), "",
            f"using ThreadblockShape = {gemm_shape(c['threadblock_shape'])};",
            f"using WarpShape = {gemm_shape(c['warp_shape'])};",
            f"using InstructionShape = {gemm_shape(c['instruction_shape'])};",
            f"static constexpr int Stages = {c['stages']};",
            _epilogue_op_2x("", q), "",
            *_device_gemm_2x("", q, c["arch"], "ThreadblockShape", "WarpShape", "InstructionShape", "EpilogueOp",
                             "Stages")]


def _config_2x(c: dict) -> list[str]:
    q = {n: ("GemmConfig::k" + n if n.startswith("Alignment") else "GemmConfig::" + n) for n in _OPERANDS_2X}
    return ["// Every tunable of the GEMM in one place.", "struct GemmConfig {",
            *_operand_aliases(c, "k", "  ", False),
            f"  using ArchTag = {c['arch']};",
            f"  using ThreadblockShape = {gemm_shape(c['threadblock_shape'])};",
            f"  using WarpShape = {gemm_shape(c['warp_shape'])};",
            f"  using InstructionShape = {gemm_shape(c['instruction_shape'])};",
            f"  static constexpr int kStages = {c['stages']};", "};", "",
            _epilogue_op_2x("", q), "",
            *_device_gemm_2x("", q, "GemmConfig::ArchTag", "GemmConfig::ThreadblockShape", "GemmConfig::WarpShape",
                             "GemmConfig::InstructionShape", "EpilogueOp", "GemmConfig::kStages")]


def _wrapper_2x(c: dict) -> list[str]:
    q = {n: n for n in _OPERANDS_2X}
    return [*_operand_aliases(c, "", "", False), "",
            "// One GEMM type per tile shape and stage count.",
            "template <class ThreadblockShape, class WarpShape, class InstructionShape, int Stages>",
            "struct MyGemm {", _epilogue_op_2x("  ", q),
            *_device_gemm_2x("  ", q, c["arch"], "ThreadblockShape", "WarpShape", "InstructionShape", "EpilogueOp",
                             "Stages"),
            "};", "",
            f"using Gemm = MyGemm<{gemm_shape(c['threadblock_shape'])}, {gemm_shape(c['warp_shape'])},",
            f"                    {gemm_shape(c['instruction_shape'])}, {c['stages']}>::Gemm;"]


def _main_2x(p: Problem, t: dict[str, str], scalar: str) -> list[str]:
    size = p.coord or f"{{{p.m}, {p.n}, {p.k}}}"
    la, lb, lc = t["LayoutA"], t["LayoutB"], t["LayoutC"]
    return ["int main() {", *p.decl, *_tensors(p, t),
            f"  {scalar} alpha = {scalar}(1), beta = {scalar}(1);",
            "  Gemm::Arguments arguments{" + size + ",",
            f"                           {{A.dev, {la}::packed({{{p.m}, {p.k}}})}},",
            f"                           {{B.dev, {lb}::packed({{{p.k}, {p.n}}})}},",
            f"                           {{C.dev, {lc}::packed({{{p.m}, {p.n}}})}},",
            f"                           {{D.dev, {lc}::packed({{{p.m}, {p.n}}})}},",
            "                           {alpha, beta}};", *_run_and_check()]


# ---- the program ---------------------------------------------------------------------------------------
WRITERS = {("3.x", "plain"): _plain_3x, ("3.x", "config"): _config_3x, ("3.x", "wrapper"): _wrapper_3x,
           ("2.x", "plain"): _plain_2x, ("2.x", "config"): _config_2x, ("2.x", "wrapper"): _wrapper_2x}


def program_text(entry: dict) -> str:
    c, gen, style = entry["config"], entry["generation"], entry["style"]
    p = problem(entry["problem_form"], c)
    names = ["ElementA", "LayoutA", "ElementB", "LayoutB", "ElementC", "LayoutC", "ElementD", "LayoutD"]
    t = {n: ("GemmConfig::" + n if style == "config" else n) for n in names}
    if gen == "2.x":
        t["ElementD"], t["LayoutD"] = t["ElementC"], t["LayoutC"]
    what = "CUTLASS 3.x collective builders, sm_90" if gen == "3.x" else "CUTLASS 2.x device::Gemm"
    lines = _header(entry, what) + [f'#include "{i}"' for i in (INCLUDES_3X if gen == "3.x" else INCLUDES_2X)]
    lines += [f'#include "{HEADER}"', ""]
    lines += WRITERS[(gen, style)](c) + [""] + p.file_scope
    if gen == "3.x":
        lines += _main_3x(p, t)
    else:
        lines += _main_2x(p, t, "GemmConfig::ElementComputeEpilogue" if style == "config" else "ElementComputeEpilogue")
    return "\n".join(lines) + "\n"


# ---- what the front end must read back ---------------------------------------------------------------
def expected_facts(generation: str, field: str, cfg: dict) -> dict[str, object]:
    """``{fact: value}`` that shows ``field``'s value of ``cfg`` in an extracted GEMM: keys of
    ``CutlassGemm.values()`` (``mainloop.tile_shape``, ``gemm.stages``, ...) or ``problem.m|n|k`` (the
    literal problem size of the GEMM's Arguments)."""
    v = cfg.get(field)
    if field in ("m", "n", "k"):
        return {f"problem.{field}": v}
    if generation == "2.x":
        two = {"align_a": "alignment_a", "align_b": "alignment_b", "align_c": "alignment_c",
               "element_acc": "element_accumulator"}
        return {f"gemm.{two.get(field, field)}": v}
    if field in ("tile_m", "tile_n", "tile_k"):
        tile = [cfg["tile_m"], cfg["tile_n"], cfg["tile_k"]]
        return {"mainloop.tile_shape": tile, "epilogue.tile_shape": tile}
    if field == "cluster":
        return {"mainloop.cluster_shape": v, "epilogue.cluster_shape": v}
    if field == "stages":
        if isinstance(v, int):
            return {"mainloop.stage_count_kind": "fixed", "mainloop.stages": v}
        return {"mainloop.stage_count_kind": "auto" if v == "auto" else "auto_carveout"}
    if field == "epilogue_tile":
        return {"epilogue.epilogue_tile": EPILOGUE_TILE_AUTO if v == "auto" else v}
    simple = {"kernel_schedule": ["mainloop.kernel_schedule"], "epilogue_schedule": ["epilogue.epilogue_schedule"],
              "element_a": ["mainloop.element_a"], "element_b": ["mainloop.element_b"],
              "element_c": ["epilogue.element_c"] + (["epilogue.element_d"] if cfg["element_d"] == v else []),
              "element_d": ["epilogue.element_d"],
              "element_acc": ["mainloop.element_accumulator", "epilogue.element_accumulator"],
              "layout_a": ["mainloop.layout_a"], "layout_b": ["mainloop.layout_b"],
              "layout_c": ["epilogue.layout_c", "epilogue.layout_d"],
              "align_a": ["mainloop.alignment_a"], "align_b": ["mainloop.alignment_b"],
              "align_c": ["epilogue.alignment_c", "epilogue.alignment_d"]}
    return {key: v for key in simple[field]}
