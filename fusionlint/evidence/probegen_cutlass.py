"""Turn an extracted CUTLASS GEMM (:class:`~fusionlint.model.cutlass_facts.CutlassGemm`) into a standalone probe.

The program spells out exactly the extracted template arguments — a CUTLASS 3.x kernel from its
collective builders (or a hand-assembled ``CollectiveMma`` and ``DefaultEpilogue``), wrapped in
``GemmUniversal`` and ``GemmUniversalAdapter``, or a CUTLASS 2.x device GEMM — then runs it once with
the usual user sequence (can_implement, initialize, run) and checks D against a host reference
(``fusionlint_cutlass_probe.h``). Template arguments that the source left at their defaults are left
out here too, so the probe, linted again, has the same facts and the same findings as the source.
Values the front end could not resolve get legal stand-ins, listed in the program's header comment
(``// stand-in: ...``), as in the cuBLASLt generator.
"""
from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from fusionlint.evidence.probe_names import unique_stem
from fusionlint.model.cutlass_facts import CollectiveMmaFacts, CutlassGemm, EpilogueBuilder, MainloopBuilder, OtherEpilogue, Param
from fusionlint.frontend.cutlass.source import model as cm
from fusionlint.frontend.cutlass.source.problem_sizes import split_top_level

HEADER = "fusionlint_cutlass_probe.h"
DEFAULT_PROBLEM = (768, 512, 256)  # divisible by every Hopper tile extent (64, 96, 128, 192, 256) and alignment
LINEAR_COMBINATION_3X = "cutlass::epilogue::fusion::LinearCombination"
REFERENCE_FUNCTORS_2X = {"cutlass::epilogue::thread::LinearCombination", "cutlass::epilogue::thread::LinearCombinationClamp"}
HEADERS_2X = {"device::Gemm": "cutlass/gemm/device/gemm.h",
              "device::GemmUniversal": "cutlass/gemm/device/gemm_universal.h",
              "device::GemmBatched": "cutlass/gemm/device/gemm_batched.h",
              "device::GemmSplitKParallel": "cutlass/gemm/device/gemm_splitk_parallel.h"}
API_2X = {"device::GemmUniversal": "Probe2x::kUniversal", "device::GemmBatched": "Probe2x::kBatched"}


class NotGenerated(Exception):
    """The GEMM cannot be written as a probe (the reason is the message)."""


@dataclass
class CutlassProbe:
    source: str
    substitutions: list[str] = field(default_factory=list)
    problem: tuple[int, int, int] = DEFAULT_PROBLEM
    reference: bool = True  # D is checked against the host reference


# ---- spelling values as C++ ---------------------------------------------------------------------

def spell(value, *, shape: bool = True) -> str:
    """A fact value as a C++ template argument: type names as they are, ints as ints, lists as cute
    tuples of ``cute::Int<n>`` and types (``Shape`` for all-int lists, else ``Stride``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        items = ", ".join(f"cute::Int<{v}>" if isinstance(v, int) and not isinstance(v, bool) else spell(v)
                          for v in value)
        kind = "Shape" if shape and all(isinstance(v, int) for v in value) else "Stride"
        return f"cute::{kind}<{items}>"
    if value is None:
        raise NotGenerated("a template argument is unknown")
    return str(value)


def _templated(p: Param) -> str:
    """A templated-type value (``StageCount`` [3], ``Layout_K_SW128_Atom`` [half_t]) with its arguments."""
    if not p.args:
        return spell(p.value)
    if any(a is None for a in p.args):
        raise NotGenerated(f"{p.value}: a template argument is unknown")
    return f"{p.value}<{', '.join(spell(a) for a in p.args)}>"


SCALE_KINDS = ("Default", "NoBetaScaling", "OnlyAlphaScaling", "PerChannelScaling", "OnlyAlphaPerChannelScaling",
               "Nothing")  # cutlass::epilogue::thread::ScaleType::Kind, in order
ROUND_STYLES = ("round_indeterminate", "round_toward_zero", "round_to_nearest", "round_to_nearest_satfinite",
                "round_toward_infinity", "round_toward_neg_infinity", "round_half_ulp_truncate",
                "round_half_ulp_trunc_dntz")  # cutlass::FloatRoundStyle, in order


def _enum(names: tuple[str, ...], prefix: str, value) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return f"{prefix}::{names[value]}"
    return spell(value)


def _functor_2x(name: str, args: list) -> str:
    """A 2.x epilogue functor (``LinearCombination<float, 4, float, float>``). Instantiated facts list
    every argument, enums as ints: trailing defaults are left out, the others spelled by name."""
    args = list(args)
    if name.startswith("cutlass::epilogue::thread::LinearCombination") and len(args) > 4:
        defaults = {4: 0, 5: 2, 6: args[0]}
        while len(args) > 4 and args[-1] == defaults.get(len(args) - 1):
            args.pop()
        rendered = [spell(a) for a in args[:4]]
        if len(args) > 4:
            rendered.append(_enum(SCALE_KINDS, "cutlass::epilogue::thread::ScaleType", args[4]))
        if len(args) > 5:
            rendered.append(_enum(ROUND_STYLES, "cutlass::FloatRoundStyle", args[5]))
        rendered += [spell(a) for a in args[6:]]
    else:
        rendered = [spell(a) for a in args]
    return f"{name}<{', '.join(rendered)}>"


def _compiler_spelling(value) -> bool:
    """A resolved cute type as libclang prints it (``cute::tuple<8, 64>`` for ``Shape<_8,_64>``):
    integral constants as bare numbers, which is not valid C++."""
    return isinstance(value, str) and re.search(r"cute::tuple<\s*\d", value) is not None


def _gemm_shape(v) -> str:
    return f"cutlass::gemm::GemmShape<{v[0]}, {v[1]}, {v[2]}>"


class _Args:
    """Collects one template's arguments with stand-ins for unknown values."""

    def __init__(self, what: str, subs: list[str]):
        self.what, self.subs = what, subs

    def value(self, p: Param | None, name: str, stand_in, render=spell):
        if p is not None and p.known:
            return p.value
        reason = p.unknown if p is not None and p.unknown else "not extracted"
        self.subs.append(f"{self.what} {name}: unknown ({reason}), using {render(stand_in)}")
        return stand_in


def _bits(element: str) -> int:
    return cm.element_bits(element) or 16


def _trim_defaults(items: list[tuple[str, bool]]) -> list[str]:
    """Positional arguments without the trailing ones the source left at their defaults."""
    while items and items[-1][1]:
        items.pop()
    return [text for text, _ in items]


# ---- CUTLASS 3.x ----------------------------------------------------------------------------------

def _epilogue_builder(e: EpilogueBuilder | None, ml: dict, subs: list[str]) -> tuple[str, bool, str | None]:
    """``using CollectiveEpilogue = ...`` from an epilogue builder; (declaration, has a TMA epilogue, why no reference)."""
    a = _Args("epilogue", subs)
    if e is None:
        subs.append("epilogue: none extracted, using an epilogue CollectiveBuilder with stand-ins")
        e = EpilogueBuilder()
    acc = a.value(e.element_accumulator, "element_accumulator", ml["acc"])
    element_d = a.value(e.element_d, "element_d", ml["element_d"])
    element_c = a.value(e.element_c, "element_c", element_d)
    items = [
        (spell(a.value(e.arch, "arch", "cutlass::arch::Sm90")), False),
        (spell(a.value(e.op_class, "op_class", "cutlass::arch::OpClassTensorOp")), False),
        (spell(a.value(e.tile_shape, "tile_shape", ml["tile"])), False),
        (spell(a.value(e.cluster_shape, "cluster_shape", ml["cluster"])), False),
        (spell(a.value(e.epilogue_tile, "epilogue_tile", "cutlass::epilogue::collective::EpilogueTileAuto")), False),
        (spell(acc), False),
        (spell(a.value(e.element_compute, "element_compute", acc)), False),
        (spell(element_c), False),
        (spell(a.value(e.layout_c, "layout_c", "cutlass::layout::RowMajor")), False),
        (spell(a.value(e.alignment_c, "alignment_c", 128 // max(_bits(element_c), 1) if element_c != "void" else 1)),
         False),
        (spell(element_d), False),
        (spell(a.value(e.layout_d, "layout_d", "cutlass::layout::RowMajor")), False),
        (spell(a.value(e.alignment_d, "alignment_d", 128 // _bits(element_d))), False),
        (spell(a.value(e.epilogue_schedule, "epilogue_schedule", "cutlass::epilogue::collective::EpilogueScheduleAuto")),
         False),
    ]
    no_reference = None
    fusion = e.fusion_op
    if fusion is not None and fusion.known and not fusion.default:
        if str(fusion.value).rsplit("::", 1)[-1].startswith("Sm90"):
            # an EVT tree (Sm90EVT, Sm90TreeVisitor, ...): its arguments nest one struct per node
            raise NotGenerated(f"epilogue fusion {str(fusion.value).rsplit('::', 1)[-1]} is a visitor tree (EVT): "
                               "the probe fills the arguments of cutlass::epilogue::fusion operations only")
        if fusion.value != LINEAR_COMBINATION_3X:
            no_reference = f"the host reference knows only LinearCombination, not {fusion.value}"
        args = list(fusion.args or [])
        if fusion.value == LINEAR_COMBINATION_3X and len(args) == 5 and args[4] in (2, "cutlass::FloatRoundStyle::round_to_nearest"):
            args = args[:4]  # the default round style
        if any(x is None for x in args):
            raise NotGenerated(f"epilogue fusion operation {fusion.value}: a template argument is unknown")
        rendered = [_enum(ROUND_STYLES, "cutlass::FloatRoundStyle", x) if i == 4 else spell(x)
                    for i, x in enumerate(args)]
        items.append((f"{fusion.value}<{', '.join(rendered)}>" if rendered else str(fusion.value), False))
    elif fusion is not None and fusion.unknown:
        raise NotGenerated(f"epilogue fusion operation unknown ({fusion.unknown})")
    decl = ("using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<\n    "
            + ",\n    ".join(_trim_defaults(items)) + ">::CollectiveOp;")
    return decl, True, no_reference


DEFAULT_EPILOGUE = "cutlass::epilogue::collective::DefaultEpilogue"
WS_ADAPTER = "cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter"


def _template_parts(text: str) -> tuple[str, list[str]]:
    """``N<a, b<c, d>>`` -> ``("N", ["a", "b<c, d>"])`` (top-level template arguments)."""
    text = text.strip()
    if "<" not in text or not text.endswith(">"):
        return text, []
    name, inner = text[:text.index("<")].strip(), text[text.index("<") + 1:-1]
    return name, split_top_level(inner, "<([{", ">)]}")


def _arg_value(text: str):
    """A template argument spelled as text, in the facts' form: ``7`` -> 7,
    ``cute::tuple<1, int64_t, int64_t>`` -> ``[1, "int64_t", "int64_t"]``."""
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    name, items = _template_parts(text)
    if name in ("cute::tuple", "cute::Shape", "cute::Stride") and items:
        return [_arg_value(x) for x in items]
    return text


def operator_epilogue_args(e: OtherEpilogue) -> tuple[list, bool] | None:
    """The DefaultEpilogue template arguments of ``e`` and whether it is wrapped in
    Sm90TmaWarpSpecializedAdapter; None for another epilogue type."""
    p = e.type
    if not p.known:
        return None
    if p.value == DEFAULT_EPILOGUE:
        return list(p.args or []), False
    if p.value == WS_ADAPTER and p.args and isinstance(p.args[0], str):
        name, items = _template_parts(p.args[0])
        if name == DEFAULT_EPILOGUE:
            return [_arg_value(x) for x in items], True
    return None


def _default_epilogue(e: OtherEpilogue, subs: list[str]) -> tuple[str, str | None]:
    p = e.type
    if not p.known:
        raise NotGenerated(f"epilogue type unknown ({p.unknown})")
    found = operator_epilogue_args(e)
    if found is None:
        raise NotGenerated(f"epilogue {p.value} is not one the probe generator can write "
                           "(DefaultEpilogue, bare or in Sm90TmaWarpSpecializedAdapter, or a builder)")
    args, wrapped = found
    if len(args) < 4 or any(x is None for x in args[:4]):
        raise NotGenerated("DefaultEpilogue: a template argument is unknown")
    rendered = [spell(args[0])]
    for stride in args[1:3]:
        layout = cm.stride_to_layout(stride, "C") if isinstance(stride, list) else None
        rendered.append(f"cutlass::gemm::TagToStrideC_t<{layout}>" if layout else spell(stride, shape=False))
    rendered += [spell(x) for x in args[3:] if x is not None]
    functor = str(args[3])
    no_reference = None if functor.split("<")[0] in REFERENCE_FUNCTORS_2X else f"no host reference for {functor}"
    inner = f"{DEFAULT_EPILOGUE}<\n    " + ",\n    ".join(rendered) + ">"
    decl = f"using CollectiveEpilogue = {f'{WS_ADAPTER}<{inner}>' if wrapped else inner};"
    return decl, no_reference


def _mainloop_builder(m: MainloopBuilder, subs: list[str]) -> tuple[str, dict]:
    a = _Args("mainloop", subs)
    element_a = a.value(m.element_a, "element_a", "cutlass::half_t")
    element_b = a.value(m.element_b, "element_b", element_a)
    acc = a.value(m.element_accumulator, "element_accumulator", "float")
    tile = a.value(m.tile_shape, "tile_shape", [128, 128, 64])
    cluster = a.value(m.cluster_shape, "cluster_shape", [1, 1, 1])
    kind = m.stage_count_kind.value if m.stage_count_kind.known else None
    if kind == "fixed" and m.stages.known:
        stage = f"cutlass::gemm::collective::StageCount<{m.stages.value}>"
    elif kind == "auto_carveout":
        if m.carveout_of.known and m.carveout_of.value == "epilogue_shared_storage" and m.carveout_bytes.known:
            # the user's sizeof(CollectiveEpilogue::SharedStorage), whose value source mode computes
            stage = ("cutlass::gemm::collective::StageCountAutoCarveout<"
                     "static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>")
        elif m.carveout_bytes.known:
            stage = f"cutlass::gemm::collective::StageCountAutoCarveout<{m.carveout_bytes.value}>"
        else:
            stage = ("cutlass::gemm::collective::StageCountAutoCarveout<"
                     "static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>")
            subs.append(f"mainloop carve-out: unknown ({m.carveout_bytes.unknown or 'not extracted'}), using "
                        "sizeof(CollectiveEpilogue::SharedStorage)")
    elif kind == "auto":
        stage = "cutlass::gemm::collective::StageCountAuto"
    elif m.stage_count.known:
        stage = _templated(m.stage_count)
    else:
        stage = "cutlass::gemm::collective::StageCountAuto"
        subs.append(f"mainloop stage_count: unknown ({m.stage_count.unknown or 'not extracted'}), using StageCountAuto")
    items = [
        (spell(a.value(m.arch, "arch", "cutlass::arch::Sm90")), False),
        (spell(a.value(m.op_class, "op_class", "cutlass::arch::OpClassTensorOp")), False),
        (spell(element_a), False),
        (spell(a.value(m.layout_a, "layout_a", "cutlass::layout::RowMajor")), False),
        (spell(a.value(m.alignment_a, "alignment_a", 128 // _bits(element_a))), False),
        (spell(element_b), False),
        (spell(a.value(m.layout_b, "layout_b", "cutlass::layout::ColumnMajor")), False),
        (spell(a.value(m.alignment_b, "alignment_b", 128 // _bits(element_b))), False),
        (spell(acc), False),
        (spell(tile), False),
        (spell(cluster), False),
        (stage, False),
        (spell(a.value(m.kernel_schedule, "kernel_schedule", "cutlass::gemm::collective::KernelScheduleAuto")), False),
    ]
    decl = ("using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<\n    "
            + ",\n    ".join(_trim_defaults(items)) + ">::CollectiveOp;")
    element_d = element_a if _bits(element_a) == 16 else ("float" if _bits(element_a) == 32 else "cutlass::bfloat16_t")
    return decl, {"acc": acc, "tile": tile, "cluster": cluster, "element_d": element_d}


def _collective_mma(m: CollectiveMmaFacts, acc: str, subs: list[str]) -> tuple[str, dict]:
    a = _Args("mainloop", subs)
    if not m.dispatch_policy.known:
        raise NotGenerated(f"CollectiveMma dispatch policy unknown ({m.dispatch_policy.unknown})")
    policy = _templated(m.dispatch_policy)
    tile = a.value(m.tile_shape, "tile_shape", [128, 128, 64])
    element_a = a.value(m.element_a, "element_a", "cutlass::half_t")
    element_b = a.value(m.element_b, "element_b", element_a)
    layout_a = a.value(m.layout_a, "layout_a", "cutlass::layout::RowMajor")
    layout_b = a.value(m.layout_b, "layout_b", "cutlass::layout::ColumnMajor")
    schedule = m.kernel_schedule.value if m.kernel_schedule.known else ""
    major_a = "cute::GMMA::Major::K" if layout_a.endswith("RowMajor") else "cute::GMMA::Major::MN"
    major_b = "cute::GMMA::Major::K" if layout_b.endswith("ColumnMajor") else "cute::GMMA::Major::MN"
    atoms = "cute::Layout<cute::Shape<cute::_2, cute::_1, cute::_1>>{}" if "Cooperative" in schedule else \
        "cute::Layout<cute::Shape<cute::_1, cute::_1, cute::_1>>{}"
    tiled_mma = (f"decltype(cute::make_tiled_mma(cute::GMMA::ss_op_selector<{element_a}, {element_b}, {acc}, "
                 f"{spell(tile)}, {major_a}, {major_b}>(), {atoms}))")
    seen = m.tiled_mma.written or (str(m.tiled_mma.value) if m.tiled_mma.known else "")
    subs.append(f"mainloop tiled_mma: {'unknown (' + m.tiled_mma.unknown + ')' if m.tiled_mma.unknown else seen}, "
                "using the GMMA atom cute::GMMA::ss_op_selector picks for the tile")

    def operand(copy: Param, atom: Param, smem_copy: Param, transform: Param, op: str, element: str, major: str):
        out = []
        out.append(spell(a.value(copy, f"gmem_tiled_copy_{op}", "cute::SM90_TMA_LOAD")))
        rendered = _templated(atom) if atom.known else ""
        if atom.known and not _compiler_spelling(rendered):
            out.append(rendered)
        else:
            sw = "cute::GMMA::Layout_K_SW128_Atom" if major.endswith("K") else "cute::GMMA::Layout_MN_SW128_Atom"
            if atom.known:  # the resolved layout type, as the compiler prints it: not valid C++
                subs.append(f"mainloop smem_layout_atom_{op}: {rendered}, using {sw}<{element}> "
                            f"(the 128-byte swizzle atom for that layout)")
                out.append(f"{sw}<{element}>")
            else:
                out.append(spell(a.value(atom, f"smem_layout_atom_{op}", f"{sw}<{element}>")))
        out.append(spell(a.value(smem_copy, f"smem_copy_atom_{op}", "void")))
        out.append(spell(a.value(transform, f"transform_{op}", "cute::identity")))
        return out

    items = [policy, spell(tile), spell(element_a), f"cutlass::gemm::TagToStrideA_t<{layout_a}>", spell(element_b),
             f"cutlass::gemm::TagToStrideB_t<{layout_b}>", "TiledMma",
             *operand(m.gmem_tiled_copy_a, m.smem_layout_atom_a, m.smem_copy_atom_a, m.transform_a, "a", element_a,
                      major_a),
             *operand(m.gmem_tiled_copy_b, m.smem_layout_atom_b, m.smem_copy_atom_b, m.transform_b, "b", element_b,
                      major_b)]
    decl = (f"using TiledMma = {tiled_mma};\n\n"
            "using CollectiveMainloop = cutlass::gemm::collective::CollectiveMma<\n    " + ",\n    ".join(items) + ">;")
    cluster = m.cluster_shape.value if m.cluster_shape.known else [1, 1, 1]
    return decl, {"acc": acc, "tile": tile, "cluster": cluster, "element_d": "float"}


def _generate_3x(g: CutlassGemm, subs: list[str]) -> tuple[list[str], str, str | None]:
    includes = ["cute/tensor.hpp", "cutlass/cutlass.h", "cutlass/gemm/dispatch_policy.hpp",
                "cutlass/gemm/collective/collective_builder.hpp",
                "cutlass/epilogue/collective/collective_builder.hpp"]
    blocks: list[str] = []
    ml, ep = g.mainloop, g.epilogue
    no_reference = None
    if isinstance(ml, CollectiveMmaFacts):
        includes += ["cute/atom/mma_atom.hpp", "cutlass/gemm/collective/collective_mma.hpp"]
        acc = "float"
        operator_args = operator_epilogue_args(ep) if isinstance(ep, OtherEpilogue) else None
        if operator_args and len(operator_args[0]) > 3:
            m = re.search(r"<\s*[^,]+,\s*[^,]+,\s*([^,>]+)", str(operator_args[0][3]))
            acc = m.group(1).strip() if m else acc
        elif isinstance(ep, EpilogueBuilder) and ep.element_accumulator.known:
            acc = ep.element_accumulator.value
        mainloop_decl, info = _collective_mma(ml, acc, subs)
    else:
        if ml is None:
            subs.append("mainloop: none extracted, using a mainloop CollectiveBuilder with stand-ins")
            ml = MainloopBuilder()
        mainloop_decl, info = _mainloop_builder(ml, subs)
    if isinstance(ep, OtherEpilogue):
        includes += ["cutlass/epilogue/collective/default_epilogue.hpp", "cutlass/epilogue/collective/detail.hpp",
                     "cutlass/epilogue/thread/linear_combination.h"]
        epilogue_decl, no_reference = _default_epilogue(ep, subs)
    else:
        epilogue_decl, _, no_reference = _epilogue_builder(ep, info, subs)
    includes += ["cutlass/gemm/kernel/gemm_universal.hpp", "cutlass/gemm/device/gemm_universal_adapter.h"]
    blocks += [epilogue_decl, mainloop_decl]
    k = g.kernel
    extents = k.problem_shape.value if k is not None and k.problem_shape.known else None
    if isinstance(extents, list) and len(extents) in (3, 4) and all(isinstance(x, str) for x in extents):
        problem_shape = f"cute::Shape<{', '.join(extents)}>"
    else:
        problem_shape = "cute::Shape<int, int, int, int>"
        subs.append(f"kernel problem_shape: {extents if extents is not None else 'unknown'}, using {problem_shape}")
    kernel_args = [problem_shape, "CollectiveMainloop", "CollectiveEpilogue"]
    if k is not None and k.tile_scheduler.known and not k.tile_scheduler.default:
        kernel_args.append(_templated(k.tile_scheduler))
    elif k is not None and k.tile_scheduler.unknown:
        subs.append(f"kernel tile_scheduler: unknown ({k.tile_scheduler.unknown}), using the default")
    blocks.append("using GemmKernel = cutlass::gemm::kernel::GemmUniversal<\n    " + ",\n    ".join(kernel_args) + ">;")
    blocks.append("using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;")
    return includes, "\n\n".join(blocks), no_reference


# ---- CUTLASS 2.x ----------------------------------------------------------------------------------

def _generate_2x(g: CutlassGemm, subs: list[str]) -> tuple[list[str], str, str | None]:
    x = g.gemm2x
    if x is None:
        raise NotGenerated("no CUTLASS 2.x template arguments extracted")
    if g.kind not in cm.GEMM2X_PARAMS:
        raise NotGenerated(f"{g.kind} is not a device GEMM the probe generator can write")
    a = _Args("gemm", subs)
    element_a = a.value(x.element_a, "element_a", "float")
    element_b = a.value(x.element_b, "element_b", element_a)
    element_c = a.value(x.element_c, "element_c", "float")
    acc = a.value(x.element_accumulator, "element_accumulator", element_c)
    op_class = a.value(x.op_class, "op_class", "cutlass::arch::OpClassSimt")
    arch = a.value(x.arch, "arch", "cutlass::arch::Sm80")
    config = cm.default_gemm_configuration(op_class, arch, element_a, element_b, element_c, acc)
    config = config if isinstance(config, cm.DefaultConfig) else None
    epilogue_functor = x.epilogue_op.value if x.epilogue_op.known else None
    no_reference = None
    if x.epilogue_op.known and x.epilogue_op.args and all(v is not None for v in x.epilogue_op.args):
        epilogue = _functor_2x(x.epilogue_op.value, x.epilogue_op.args)
    else:
        functor = epilogue_functor or (config.epilogue if config else "cutlass::epilogue::thread::LinearCombination")
        count = x.alignment_c.value if x.alignment_c.known else (
            config.epilogue_count if config and config.epilogue_count else 1)
        epilogue = f"{functor}<{element_c}, {count}, {acc}, {acc}>"
        if not x.epilogue_op.known:
            subs.append(f"gemm epilogue_op: unknown ({x.epilogue_op.unknown}), using {epilogue}")
        epilogue_functor = functor
    if epilogue_functor not in REFERENCE_FUNCTORS_2X:
        no_reference = f"no host reference for {epilogue_functor}"

    def shape(p: Param, name: str, fallback) -> str:
        return _gemm_shape(a.value(p, name, list(fallback or (128, 128, 8))))

    by_name: dict[str, tuple[str, bool]] = {
        "element_a": (spell(element_a), False), "layout_a": (spell(a.value(x.layout_a, "layout_a", "cutlass::layout::RowMajor")), False),
        "element_b": (spell(element_b), False), "layout_b": (spell(a.value(x.layout_b, "layout_b", "cutlass::layout::ColumnMajor")), False),
        "element_c": (spell(element_c), False), "layout_c": (spell(a.value(x.layout_c, "layout_c", "cutlass::layout::RowMajor")), False),
        "element_accumulator": (spell(acc), x.element_accumulator.default),
        "op_class": (spell(op_class), x.op_class.default), "arch": (spell(arch), x.arch.default),
        "threadblock_shape": (shape(x.threadblock_shape, "threadblock_shape", config and config.threadblock),
                              x.threadblock_shape.default),
        "warp_shape": (shape(x.warp_shape, "warp_shape", config and config.warp), x.warp_shape.default),
        "instruction_shape": (shape(x.instruction_shape, "instruction_shape", config and config.instruction),
                              x.instruction_shape.default),
        "epilogue_op": ("EpilogueOp", x.epilogue_op.default),
        "convert_scaled_op": (f"cutlass::epilogue::thread::Convert<{acc}, EpilogueOp::kCount, {acc}>", True),
        "reduction_op": (f"cutlass::reduction::thread::ReduceAdd<{acc}, typename EpilogueOp::ElementAccumulator, "
                         "EpilogueOp::kCount>", True),
        "swizzle": (_templated(x.swizzle) if x.swizzle.known else spell(a.value(
            x.swizzle, "swizzle", "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>")), x.swizzle.default),
        "stages": (spell(a.value(x.stages, "stages", config.stages if config else 2)), x.stages.default),
        "alignment_a": (spell(a.value(x.alignment_a, "alignment_a", (config and config.alignment_a) or 1)),
                        x.alignment_a.default),
        "alignment_b": (spell(a.value(x.alignment_b, "alignment_b", (config and config.alignment_b) or 1)),
                        x.alignment_b.default),
        "split_k_serial": (spell(bool(x.split_k_serial.value)) if x.split_k_serial.known else "false",
                           x.split_k_serial.default or not x.split_k_serial.known),
        "operator": (spell(a.value(x.operator, "operator", config.operator if config else cm.OMA)), x.operator.default),
    }
    items = [by_name[tp.name] for tp in cm.GEMM2X_PARAMS[g.kind] if tp.name in by_name]
    includes = ["cutlass/cutlass.h", HEADERS_2X[g.kind], "cutlass/epilogue/thread/linear_combination.h",
                "cutlass/epilogue/thread/linear_combination_clamp.h"]
    if g.kind == "device::GemmSplitKParallel":
        includes += ["cutlass/epilogue/thread/conversion_op.h", "cutlass/reduction/thread/reduction_operators.h"]
    body = (f"using EpilogueOp = {epilogue};\n\n"
            f"using Gemm = cutlass::gemm::{g.kind}<\n    " + ",\n    ".join(_trim_defaults(items)) + ">;")
    return includes, body, no_reference


# ---- the program ----------------------------------------------------------------------------------

_CALL = re.compile(r"probe_gemm[23]x\s*<\s*(?P<name>[\w:]+)[^>]*>\s*\(\s*(?P<m>\d+)\s*,\s*(?P<n>\d+)\s*,\s*(?P<k>\d+)\s*[,)]")


def literal_problem(text: str, name: str) -> tuple[int, int, int] | None:
    """The first M x N x K with literal extents that the source runs ``name`` at (the fixtures' and
    reference kernels' ``probe_gemm3x<Gemm>(768, 512, 256)``), else None."""
    for m in _CALL.finditer(text):
        if m["name"].split("::")[-1] == name.split("::")[-1]:
            return int(m["m"]), int(m["n"]), int(m["k"])
    return None


def problem_of(g: CutlassGemm, text: str = "") -> tuple[int, int, int] | None:
    """The problem size the source gives ``g``: the literal M, N, K of its ``Arguments`` (the front
    end's ``problems``), else of a probe helper call in the text, else None."""
    for p in getattr(g, "problems", None) or []:
        if None not in (p.m, p.n, p.k):
            return p.m, p.n, p.k
    return literal_problem(text, g.name) if text else None


def generate(g: CutlassGemm, problem: tuple[int, int, int] | None = None) -> CutlassProbe:
    """A probe program for ``g``; raises :class:`NotGenerated` when it cannot be written."""
    subs: list[str] = []
    if g.api == "3.x":
        includes, body, no_reference = _generate_3x(g, subs)
        call = "probe_gemm3x<Gemm>"
    elif g.api == "2.x":
        includes, body, no_reference = _generate_2x(g, subs)
        api = API_2X.get(g.kind)
        call = f"probe_gemm2x<Gemm, {api}>" if api else "probe_gemm2x<Gemm>"
    else:
        raise NotGenerated(f"CUTLASS API {g.api!r}")
    if problem is None:
        problem = DEFAULT_PROBLEM
        subs.append(f"problem size: not literal in the source, using {problem[0]}x{problem[1]}x{problem[2]}")
    where = f"{g.path}:{g.loc.line}" + (f" (in {g.context})" if g.context else "")
    header = [f"// fusionlint probe for the CUTLASS {g.api} {g.kind} `{g.name}` at {where}",
              f"// (generated from the {g.mode} facts: the template arguments, run once at "
              f"{problem[0]}x{problem[1]}x{problem[2]} and checked against a host reference)"]
    header += [f"// stand-in: {s}" for s in subs]
    written = any((q.m, q.n, q.k) == tuple(problem) for q in getattr(g, "problems", None) or [])
    if not written:
        size_line = ""  # (an Arguments brace-initialised this way does not compile for every kernel)
    elif g.api == "3.x":
        rank = 3 if "cute::Shape<int32_t, int32_t, int32_t>" in body or "Shape<int, int, int>" in body else 4
        extents = ", ".join(str(x) for x in problem) + (", 1" if rank == 4 else "")
        size_line = (f"  typename Gemm::Arguments arguments{{cutlass::gemm::GemmUniversalMode::kGemm, {{{extents}}}}};"
                     "  // the problem size, as the GEMM's Arguments")
    else:
        size_line = f"  cutlass::gemm::GemmCoord problem_size({problem[0]}, {problem[1]}, {problem[2]});"
    if size_line:
        size_line += "\n  (void)" + ("arguments;" if g.api == "3.x" else "problem_size;")
    options = ""
    if no_reference:
        header.append(f"// numerics: not checked ({no_reference})")
        options = f", false, [] {{ ProbeOptions o; o.no_reference = \"{no_reference}\"; return o; }}()"
    lines = header + [""] + [f'#include "{i}"' for i in includes] + [f'#include "{HEADER}"', "", body, "",
                                                                      "int main() {", *([size_line] if size_line else []),
                                                                      f"  bool ok = {call}({problem[0]}, {problem[1]}, "
                                                                      f"{problem[2]}{options});",
                                                                      "  return ok ? 0 : 1;", "}", ""]
    return CutlassProbe("\n".join(lines), subs, problem, no_reference is None)


def probe_header() -> Path:
    return Path(str(resources.files("fusionlint.evidence") / "include" / HEADER))


def probe_name(g: CutlassGemm) -> str:
    """A file stem for the probe of ``g``: source stem, line, and the wrapper instance if any."""
    stem = f"{Path(g.path).stem}_L{g.loc.line}"
    if g.context:
        stem += "_" + re.sub(r"\W+", "_", g.context).strip("_")[:60]
    return stem


def probe_targets(gemms: list[CutlassGemm]) -> list[CutlassGemm]:
    """The GEMMs that get a probe of their own: not an epilogue collective read on its own (the
    instantiated mode, when the mainloop's builder did not instantiate) that is also the epilogue
    of a complete GEMM of the file: that is that GEMM's part."""
    parts = {g.epilogue.loc.line for g in gemms
             if g.mainloop is not None and g.epilogue is not None and g.epilogue.loc is not None}
    return [g for g in gemms if not (g.mainloop is None and g.epilogue is not None and (
        g.loc.line in parts or (g.epilogue.loc is not None and g.epilogue.loc.line in parts)))]


def write_probes(gemms: list[CutlassGemm], out: Path, text: str = "",
                 on_skip: Callable[[CutlassGemm, str], None] | None = None) -> list[Path]:
    """One probe per CUTLASS GEMM in ``out`` (made when the first is written), from the source
    ``text`` the GEMMs were read from (``probe_targets`` of them). A GEMM that cannot get a probe
    is given to ``on_skip`` with the reason."""
    written = []
    seen: dict[str, int] = {}  # a header's template makes several GEMMs at one line
    for g in probe_targets(gemms):
        try:
            probe = generate(g, problem_of(g, text))
        except NotGenerated as exc:
            if on_skip is not None:
                on_skip(g, str(exc))
            continue
        out.mkdir(parents=True, exist_ok=True)
        if not (out / HEADER).exists():
            shutil.copy(probe_header(), out / HEADER)
        path = out / f"{unique_stem(probe_name(g), seen)}.cu"
        path.write_text(probe.source, encoding="utf-8")
        written.append(path)
    return written
