"""Typed facts about CUTLASS GEMMs found in a source file (3.x collectives/kernels, 2.x device GEMMs).

Every template argument becomes a :class:`Param`: its normalised value (or why it stayed
unknown), where the argument is written in the user's file (``at``), where the value itself was
written after following aliases, constexprs and config structs (``origin``), and the chain of
names it went through (``via``). ``to_dict`` gives the JSON that ``fusionlint facts`` prints and
that rules read.

Value conventions (identical in both extraction modes):
- types are fully qualified canonical names: ``cutlass::bfloat16_t``, ``cutlass::layout::RowMajor``,
  ``cutlass::gemm::KernelTmaWarpSpecializedCooperative``; fixed-width integers as ``int8_t``,
  ``int32_t``, ``int64_t``; ``float``, ``double``, ``void``;
- shapes (``cute::Shape<_128,_128,_64>``, ``GemmShape<128,128,32>``) are lists ``[128, 128, 64]``;
  a shape of run-time extents (the problem shape ``Shape<int,int,int,int>``) lists the types;
- a templated type that is not a shape (fusion operation, epilogue functor, swizzle) has the
  template's qualified name as value and its arguments, as far as known, in ``args``;
- integers (alignments, stages, carve-out bytes) are ints.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from fusionlint.model.values import Loc

MODES = ("instantiated", "syntactic")


@dataclass
class Param:
    """One template argument of a CUTLASS GEMM, resolved."""

    value: Any = None  # None when unknown
    unknown: str | None = None  # why the value is unknown
    at: Loc | None = None  # where the argument is written (in the user's file)
    origin: Loc | None = None  # where the value was written, after aliases/constexprs/configs
    via: str = ""  # names followed, e.g. "TileShape" or "Config::TileShape -> ConfigLarge::TileShape"
    written: str = ""  # the argument as written ("" for a defaulted argument)
    default: bool = False  # the template's default argument was used
    args: list | None = None  # template arguments of a templated type value (fusion op, functor)
    bits: int | None = None  # for element types: sizeof_bits
    open: str | None = None  # a shape with an extent not known (None in ``value``): why

    @property
    def known(self) -> bool:
        return self.unknown is None and self.value is not None

    def to_dict(self) -> dict:
        d: dict = {"value": self.value} if self.unknown is None else {"unknown": self.unknown}
        if self.args is not None:
            d["args"] = self.args
        if self.bits is not None:
            d["bits"] = self.bits
        if self.open is not None and self.unknown is None:
            d["open"] = self.open
        if self.written:
            d["written"] = self.written
        if self.default:
            d["default"] = True
        if self.via:
            d["via"] = self.via
        if self.at is not None:
            d["at"] = self.at.to_dict()
        if self.origin is not None and self.origin != self.at:
            d["origin"] = self.origin.to_dict()
        return d


def fact_values(part, unknown: Any = None) -> dict[str, Any]:
    """A part's Params by field name (``unknown`` for an unknown one), element widths as
    ``<field>_bits``: the shape of a rule view's part, and what model.sm90_storage's readers take."""
    values: dict[str, Any] = {}
    for f in fields(part):
        p = getattr(part, f.name)
        if isinstance(p, Param):
            values[f.name] = p.value if p.known else unknown
            if p.bits is not None:
                values[f"{f.name}_bits"] = p.bits
    return values


def _params_dict(obj) -> dict:
    return {f.name: getattr(obj, f.name).to_dict() for f in fields(obj) if isinstance(getattr(obj, f.name), Param)}


# the words of the CUTLASS evaluator's reason for a template parameter that nothing in the file binds
UNBOUND_TEMPLATE_PARAMETER = "is not bound in this file"


def _unknowns(prefix: str, obj) -> list[str]:
    out = []
    for f in fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, Param) and v.unknown is not None:
            out.append(f"{prefix}.{f.name}: {v.unknown}")
    return out


@dataclass
class MainloopBuilder:
    """``cutlass::gemm::collective::CollectiveBuilder<...>::CollectiveOp``."""

    arch: Param = field(default_factory=Param)
    op_class: Param = field(default_factory=Param)
    element_a: Param = field(default_factory=Param)
    layout_a: Param = field(default_factory=Param)
    alignment_a: Param = field(default_factory=Param)
    element_b: Param = field(default_factory=Param)
    layout_b: Param = field(default_factory=Param)
    alignment_b: Param = field(default_factory=Param)
    element_accumulator: Param = field(default_factory=Param)
    tile_shape: Param = field(default_factory=Param)
    cluster_shape: Param = field(default_factory=Param)
    stage_count: Param = field(default_factory=Param)  # the StageCountType argument as a type
    stage_count_kind: Param = field(default_factory=Param)  # "fixed" | "auto" | "auto_carveout"
    stages: Param = field(default_factory=Param)  # int for StageCount<N> / Int<N>
    carveout_bytes: Param = field(default_factory=Param)  # for StageCountAutoCarveout<N>
    # what an unknown carve-out is: "epilogue_shared_storage" for StageCountAutoCarveout<sizeof(
    # CollectiveEpilogue::SharedStorage)> and StageCountAutoCarveoutEpi (the rules bound it from the epilogue)
    carveout_of: Param = field(default_factory=Param)
    kernel_schedule: Param = field(default_factory=Param)
    name: str = ""  # the alias that holds it, e.g. CollectiveMainloop
    loc: Loc | None = None  # where the builder is written
    kind: str = "CollectiveBuilder"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "loc": self.loc.to_dict() if self.loc else None,
                "params": _params_dict(self)}


@dataclass
class CollectiveMmaFacts:
    """A hand-assembled ``cutlass::gemm::collective::CollectiveMma<DispatchPolicy, ...>``."""

    dispatch_policy: Param = field(default_factory=Param)  # template name, args in .args
    stages: Param = field(default_factory=Param)  # from the dispatch policy
    cluster_shape: Param = field(default_factory=Param)  # from the dispatch policy
    kernel_schedule: Param = field(default_factory=Param)  # from the dispatch policy
    tile_shape: Param = field(default_factory=Param)
    element_a: Param = field(default_factory=Param)
    stride_a: Param = field(default_factory=Param)
    layout_a: Param = field(default_factory=Param)  # RowMajor/ColumnMajor derived from stride_a
    element_b: Param = field(default_factory=Param)
    stride_b: Param = field(default_factory=Param)
    layout_b: Param = field(default_factory=Param)
    tiled_mma: Param = field(default_factory=Param)
    gmem_tiled_copy_a: Param = field(default_factory=Param)
    smem_layout_atom_a: Param = field(default_factory=Param)
    smem_copy_atom_a: Param = field(default_factory=Param)
    transform_a: Param = field(default_factory=Param)
    gmem_tiled_copy_b: Param = field(default_factory=Param)
    smem_layout_atom_b: Param = field(default_factory=Param)
    smem_copy_atom_b: Param = field(default_factory=Param)
    transform_b: Param = field(default_factory=Param)
    name: str = ""
    loc: Loc | None = None
    kind: str = "CollectiveMma"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "loc": self.loc.to_dict() if self.loc else None,
                "params": _params_dict(self)}


@dataclass
class EpilogueBuilder:
    """``cutlass::epilogue::collective::CollectiveBuilder<...>::CollectiveOp``."""

    arch: Param = field(default_factory=Param)
    op_class: Param = field(default_factory=Param)
    tile_shape: Param = field(default_factory=Param)
    cluster_shape: Param = field(default_factory=Param)
    epilogue_tile: Param = field(default_factory=Param)
    element_accumulator: Param = field(default_factory=Param)
    element_compute: Param = field(default_factory=Param)
    element_c: Param = field(default_factory=Param)
    layout_c: Param = field(default_factory=Param)
    alignment_c: Param = field(default_factory=Param)
    element_d: Param = field(default_factory=Param)
    layout_d: Param = field(default_factory=Param)
    alignment_d: Param = field(default_factory=Param)
    epilogue_schedule: Param = field(default_factory=Param)
    fusion_op: Param = field(default_factory=Param)
    name: str = ""
    loc: Loc | None = None
    kind: str = "CollectiveBuilder"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "loc": self.loc.to_dict() if self.loc else None,
                "params": _params_dict(self)}


@dataclass
class OtherEpilogue:
    """An epilogue given to ``GemmUniversal`` that is not built by the epilogue builder
    (``collective::DefaultEpilogue<...>``, a user type...)."""

    type: Param = field(default_factory=Param)
    name: str = ""
    loc: Loc | None = None
    kind: str = "other"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "loc": self.loc.to_dict() if self.loc else None,
                "params": _params_dict(self)}


@dataclass
class KernelFacts:
    """``cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue, TileScheduler>``."""

    problem_shape: Param = field(default_factory=Param)
    tile_scheduler: Param = field(default_factory=Param)
    name: str = ""
    loc: Loc | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "loc": self.loc.to_dict() if self.loc else None, "params": _params_dict(self)}


@dataclass
class Gemm2x:
    """A CUTLASS 2.x device-level GEMM with every positional template argument, defaults filled
    in as ``DefaultGemmConfiguration`` gives them."""

    element_a: Param = field(default_factory=Param)
    layout_a: Param = field(default_factory=Param)
    element_b: Param = field(default_factory=Param)
    layout_b: Param = field(default_factory=Param)
    element_c: Param = field(default_factory=Param)
    layout_c: Param = field(default_factory=Param)
    element_accumulator: Param = field(default_factory=Param)
    op_class: Param = field(default_factory=Param)
    arch: Param = field(default_factory=Param)
    threadblock_shape: Param = field(default_factory=Param)
    warp_shape: Param = field(default_factory=Param)
    instruction_shape: Param = field(default_factory=Param)
    epilogue_op: Param = field(default_factory=Param)  # template name; args in .args
    alignment_c: Param = field(default_factory=Param)  # the epilogue functor's Count (kAlignmentC)
    swizzle: Param = field(default_factory=Param)
    stages: Param = field(default_factory=Param)
    alignment_a: Param = field(default_factory=Param)
    alignment_b: Param = field(default_factory=Param)
    split_k_serial: Param = field(default_factory=Param)  # device::Gemm only
    operator: Param = field(default_factory=Param)
    default_config: str = ""  # which DefaultGemmConfiguration specialization supplied the defaults
    default_config_problem: str = ""  # why no DefaultGemmConfiguration exists for defaulted arguments
    name: str = ""
    loc: Loc | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "loc": self.loc.to_dict() if self.loc else None,
                "default_config": self.default_config,
                "default_config_problem": self.default_config_problem, "params": _params_dict(self)}


@dataclass(frozen=True)
class CutlassDiagnostic:
    """A CUTLASS ``static_assert`` (or other instantiation error) mapped to the user's line."""

    message: str  # readable: the assertion's own message
    detail: str  # the compiler's full message
    at: Loc  # the user's instantiation line
    header_loc: Loc | None = None  # where in CUTLASS it fired
    kind: str = "static_assert"  # static_assert | error

    def to_dict(self) -> dict:
        d = {"kind": self.kind, "message": self.message, "detail": self.detail, "at": self.at.to_dict()}
        if self.header_loc is not None:
            d["header_loc"] = self.header_loc.to_dict()
        return d


@dataclass
class CutlassGemm:
    """One CUTLASS GEMM instantiation: a 3.x kernel (with its collectives) or a 2.x device GEMM."""

    api: str  # "3.x" | "2.x"
    kind: str  # GemmUniversalAdapter | GemmUniversal | CollectiveBuilder | CollectiveMma |
    # device::Gemm | device::GemmUniversal | device::GemmBatched | device::GemmSplitKParallel
    name: str  # the alias or variable that holds it
    path: str
    loc: Loc  # where it is declared (the alias/variable, or the instantiation of a wrapper)
    mode: str  # "instantiated" (values read from libclang's template instantiation) | "syntactic"
    context: str = ""  # the wrapper instantiation it lives in, e.g. "mylib::gemm_wrapper<mylib::ConfigLarge>"
    instantiated_at: Loc | None = None  # where that wrapper is instantiated in the file
    condition: str = ""  # compiled only under it (an instance in code this build leaves out: left_out_code.py)
    mainloop: MainloopBuilder | CollectiveMmaFacts | None = None
    epilogue: EpilogueBuilder | OtherEpilogue | None = None
    kernel: KernelFacts | None = None
    gemm2x: Gemm2x | None = None
    cutlass_headers: bool = False  # the real CUTLASS headers were part of the parse
    device_bodies: bool = False  # and the kernels' and collectives' device bodies were instantiated
    built: dict = field(default_factory=dict)  # instantiated mode: what the builders chose (stages...)
    diagnostics: list[CutlassDiagnostic] = field(default_factory=list)
    problems: list = field(default_factory=list)  # literal problem sizes in its Arguments (frontend/cutlass/source/problem_sizes.Problem)
    unknowns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    parse_errors_nearby: list[str] = field(default_factory=list)

    def collect_unknowns(self) -> None:
        out: list[str] = []
        for prefix, part in (("mainloop", self.mainloop), ("epilogue", self.epilogue), ("kernel", self.kernel),
                             ("gemm", self.gemm2x)):
            if part is not None:
                out += _unknowns(prefix, part)
        self.unknowns = out

    def template_parameters_open(self) -> bool:
        """Whether an unknown value is a template parameter left unbound (``template parameter X of f ...``,
        ``template template parameter E``: the source evaluator's reasons), not one that only the CUTLASS headers give."""
        return any("template parameter" in u for u in self.unknowns)

    def open_values(self) -> bool:
        """Whether a value is unknown, or a shape has an unknown extent (``Shape<Int<TileM>, _128, _64>``
        of a template read without its arguments): a header's template GEMM that the files including
        it may instantiate."""
        if self.unknowns:
            return True
        for part in (self.mainloop, self.epilogue, self.kernel, self.gemm2x):
            if part is None:
                continue
            for f in fields(part):
                v = getattr(part, f.name)
                if isinstance(v, Param) and isinstance(v.value, list) and any(x is None for x in v.value):
                    return True
        return False

    def to_dict(self) -> dict:
        return {
            "api": self.api, "kind": self.kind, "name": self.name, "path": self.path,
            "line": self.loc.line, "column": self.loc.column, "mode": self.mode,
            "cutlass_headers": self.cutlass_headers, "device_bodies": self.device_bodies,
            "context": self.context,
            **({"condition": self.condition} if self.condition else {}),
            "instantiated_at": self.instantiated_at.to_dict() if self.instantiated_at else None,
            "mainloop": self.mainloop.to_dict() if self.mainloop else None,
            "epilogue": self.epilogue.to_dict() if self.epilogue else None,
            "kernel": self.kernel.to_dict() if self.kernel else None,
            "gemm": self.gemm2x.to_dict() if self.gemm2x else None,
            "built": self.built,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "problems": [p.to_dict() for p in self.problems],
            "unknowns": self.unknowns,
            "notes": self.notes,
            "parse_errors_nearby": self.parse_errors_nearby,
        }

    def values(self) -> dict[str, Any]:
        """``{"mainloop.tile_shape": [128, 128, 64], ...}``; None for unknown values (for tests/rules)."""
        out: dict[str, Any] = {}
        for prefix, part in (("mainloop", self.mainloop), ("epilogue", self.epilogue), ("kernel", self.kernel),
                             ("gemm", self.gemm2x)):
            if part is None:
                continue
            for f in fields(part):
                v = getattr(part, f.name)
                if isinstance(v, Param):
                    out[f"{prefix}.{f.name}"] = v.value if v.unknown is None else None
        return out
