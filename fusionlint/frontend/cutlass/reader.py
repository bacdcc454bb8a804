"""CUTLASS GEMM extraction: every 3.x collective/kernel/adapter and every 2.x device GEMM of a file.

Two modes, recorded per GEMM:

- **syntactic** (always run): the file's own text is read by :mod:`.source.syntax` and evaluated
  by :mod:`.source.evaluator` — aliases, constexprs, config structs, templated wrappers and their
  instantiations. This is what runs when the CUTLASS headers are not available.
- **instantiated** (when the parse included the real CUTLASS headers): libclang has instantiated
  the templates, so each GEMM's arguments are read from the specializations themselves
  (``CollectiveBuilder<...>::CollectiveOp``'s parent, ``GemmUniversal<...>``, 2.x ``device::Gemm``
  with every default filled in by CUTLASS), following the sugared types of the main file's
  declarations; and CUTLASS's ``static_assert`` failures are mapped to the user's line.
  Locations still come from the syntactic reading (where each argument is written).

Only the main file's cursors are visited; the translation unit is never walked as a whole.
"""
from __future__ import annotations

import os
import re
from dataclasses import fields
from pathlib import Path

import clang.cindex as ci

from fusionlint.model.cutlass_facts import (
    CollectiveMmaFacts, CutlassDiagnostic, CutlassGemm, EpilogueBuilder, Gemm2x, KernelFacts, MainloopBuilder,
    OtherEpilogue, Param,
)
from fusionlint.frontend.cutlass.source import model
from fusionlint.frontend.cutlass.source.evaluator import (
    ArgRes, Construct, Evaluator, Res, VClass, VConstruct, VInt, VIntC, VTuple, VType, VUnknown, as_int,
    nested_constructs, render,
)
from fusionlint.frontend.cutlass.source.evaluator import open_extent, shape_list as _shape_list
from fusionlint.frontend.cutlass.source.includes import LINE_STRIDE, ProjectHeaders, relocate, search_dirs
from fusionlint.frontend.cutlass.source.syntax import includes_cutlass, read_program
from fusionlint.frontend.cutlass.source.storage import fill_builder_stages
from fusionlint.frontend.cutlass.source.problem_sizes import literal_problems
from fusionlint.frontend.cutlass.source.left_out_code import read_left_out
from fusionlint.model.values import Loc
from fusionlint.frontend.cutlass.instantiated.ast_reader import AstNode, AstReader
from fusionlint.frontend.clang.parse import has_device_bodies, parse_file
from fusionlint.frontend.cutlass.instantiated.template_bodies import declarations_only

_CUTLASS_HINT = re.compile(r"\bcutlass\b|\bcute\b")
_CUTLASS_ONLY = ("/cutlass/detail/helper_macros.hpp", "/cutlass/cutlass.h", "/cute/config.hpp")


def extract_cutlass(unit, text: str | None = None, header: str | None = None) -> list[CutlassGemm]:
    """All CUTLASS GEMMs of ``unit``'s main file. ``text`` is the file's content (read from disk
    when omitted). With ``header`` (a project header the main file includes): instead, the GEMMs
    declared in that header's templates that the main file instantiates, at the header's lines."""
    path = str(unit.path)
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
    project = ProjectHeaders(path, search_dirs(list(getattr(unit, "args", []) or [])))
    if not _CUTLASS_HINT.search(text) and not project.reach(text, _CUTLASS_HINT):
        return []
    macros = predefined_macros(unit.args, text)
    prog = read_program(text, path, macros, project)
    ev = Evaluator(prog)
    ev.run()
    gemms = _build_gemms(ev, path)
    if prog.inactive_regions:
        gemms = read_left_out(gemms, prog, ev, text, path, macros, project, _build_gemms)
    problems = literal_problems(text, path)
    for g in gemms:
        g.problems = [p for p in problems if p.gemm == g.name]
    headers = cutlass_headers_used(unit)
    device = headers and _device_bodies(unit)
    for g in gemms:
        g.cutlass_headers, g.device_bodies = headers, device
    if headers:
        try:
            ast = AstReader(unit, ev, project.files)
            ast.run()
            _merge_ast(gemms, ast, ev, path)
            _map_diagnostics(gemms, unit, path)
            _through_reduced_bodies(gemms, unit, ev, project, path, text)
            _explain_syntactic(gemms, unit, path)
        except Exception as exc:  # noqa: BLE001 - the syntactic facts stay valid
            for g in gemms:
                g.notes.append(f"reading the instantiated templates failed: {type(exc).__name__}: {exc}")
    for g in gemms:  # what the compiler did not tell (source mode, or not instantiated)
        _builder_stages(g, getattr(g, "_evaluator", ev), path)
    _nearby_errors(gemms, unit, path)
    if prog.skipped:
        for g in gemms:
            lines = _lines_of(g)
            for line, why in prog.skipped:
                if lines and min(lines) - 3 <= line <= max(lines) + 3:
                    where, real = project.where(line)
                    g.notes.append(f"line {real}: statement not read ({why})" if where == path else
                                   f"{where}:{real}: statement not read ({why})")
    if header is not None:
        gemms = _in_header(gemms, project, ev, path, header) if len(project.files) > 1 else []
    elif len(project.files) > 1:
        gemms = _in_this_file(gemms, project, ev, path)
    for g in gemms:
        g.collect_unknowns()
    return gemms


def _through_reduced_bodies(gemms: list[CutlassGemm], unit, ev: Evaluator, project: ProjectHeaders, path: str,
                            text: str) -> None:
    """The GEMMs still read from the text that function templates with errors in their bodies declare
    (template_bodies.py): read from one more parse with those bodies reduced to their declarations."""
    left = [g for g in gemms if g.mode == "syntactic"]
    options = getattr(unit, "options", None)
    if not left or options is None:
        return
    lines: dict[str, set[int]] = {}
    for g in left:
        for line in _lines_of(g) or [g.loc.line]:
            where, real = project.where(line)
            lines.setdefault(where, set()).add(real)
    reduced = declarations_only(unit.tu, project.files, lines, {path: text})
    if not reduced:
        return
    real = os.path.realpath(path)
    main = next((t for name, t in reduced.items() if os.path.realpath(name) == real), text)
    try:
        unit2 = parse_file(path, options, text=main, stand_ins=getattr(unit, "stand_ins", None),
                           overrides={n: t for n, t in reduced.items() if os.path.realpath(n) != real})
    except ci.TranslationUnitLoadError:
        return
    ast = AstReader(unit2, ev, project.files)
    ast.run()
    pool = list(left)  # only these are read again: what the first parse read (or added) stays as it is
    _merge_ast(pool, ast, ev, path)
    dropped = {id(g) for g in left} - {id(g) for g in pool}
    gemms[:] = [g for g in gemms if id(g) not in dropped]
    now = [g for g in left if g.mode == "instantiated" and id(g) not in dropped]
    _map_diagnostics(now, unit2, path)
    where = ", ".join(sorted({os.path.relpath(n) for n in reduced}))
    for g in now:
        g.notes.append(f"instantiated from a second parse with the function templates of {where} reduced to their "
                       "type declarations (their other statements do not compile here: headers missing)")


def _in_this_file(gemms: list[CutlassGemm], headers: ProjectHeaders, ev: Evaluator, path: str) -> list[CutlassGemm]:
    """The GEMMs this file makes: its own, and those of a project header's templates that this file
    instantiates (a header's own GEMMs are its own file's; the header is linted as itself), with the
    header positions mapped to the header's path and lines. Such a GEMM is placed at the last site
    of this file in the chain of instantiations that makes it (where it enters the header)."""
    kept = []
    for g in gemms:
        if not headers.in_main(g.loc.line):
            root = _entry_site(g, headers, ev)
            if root is None:
                continue
            where, line = headers.where(g.loc.line)
            note = f"declared at {where}:{line}, a template this file instantiates"
            if g.instantiated_at is not None and not headers.in_main(g.instantiated_at.line):
                via, via_line = headers.where(g.instantiated_at.line)
                note += f" (through {via}:{via_line})"
            g.notes.append(note)
            g.loc = g.instantiated_at = Loc(path, root[0], root[1])  # the GEMM is this file's where it makes it
        kept.append(relocate(g, headers))
    return kept


def _entry_site(g: CutlassGemm, headers: ProjectHeaders, ev: Evaluator) -> tuple[int, int] | None:
    """(line, column) of the main file's last site in the chain of instantiations that makes ``g``, a
    GEMM of a project header's template (where the chain enters the header); None when the main file
    does not instantiate it."""
    frames = g.context.split(" / ") if g.context else []
    sites = [ev.ctx_sites.get(" / ".join(frames[:i])) for i in range(len(frames), 0, -1)]
    return next((site for site in sites if site is not None and headers.in_main(site[0])), None)


def _site_in(g: CutlassGemm, headers: ProjectHeaders, ev: Evaluator, header: str) -> tuple[int, int] | None:
    """The reader position of the innermost site in ``header`` of the chain of instantiations that makes ``g``."""
    frames = g.context.split(" / ") if g.context else []
    sites = [ev.ctx_sites.get(" / ".join(frames[:i])) for i in range(len(frames), 0, -1)]
    return next((site for site in sites if site is not None and headers.where(site[0])[0] == header), None)


def _in_header(gemms: list[CutlassGemm], headers: ProjectHeaders, ev: Evaluator, path: str,
               header: str) -> list[CutlassGemm]:
    """The GEMMs of ``header``'s templates that this file (``path``) instantiates, at the header's
    lines, each naming the line of this file where the chain of instantiations enters the header."""
    want = os.path.realpath(header)
    for k, f in enumerate(headers.files):  # the header's positions under the name it is checked by
        if k and os.path.realpath(f) == want:
            headers.files[k] = header
    kept = []
    for g in gemms:
        if headers.in_main(g.loc.line):
            continue
        where, _line = headers.where(g.loc.line)
        root = _entry_site(g, headers, ev)
        if root is None:
            continue
        if where != header:
            # a template of another project header that this header instantiates (vLLM's dispatch header
            # naming scaled_mm.cuh's cutlass_3x_gemm): the header's GEMM where its chain leaves the header
            site = _site_in(g, headers, ev, header)
            if site is None:
                continue
            declared, line = headers.where(g.loc.line)
            g.notes.append(f"declared at {declared}:{line}, a template this header instantiates")
            g.loc = Loc(g.loc.path, site[0], site[1])
            where = header
        g = relocate(g, headers)
        g.path = where
        g.instantiated_at = Loc(path, root[0], root[1])
        g.notes.append(f"instantiated by {path}:{root[0]} as {g.context} (a project file that includes this "
                       "header, from the project index)")
        kept.append(g)
    return kept


# ----------------------------------------------------------------------------------------------
# Macros the preprocessor of the syntactic reader starts from


def predefined_macros(args: list[str], text: str) -> dict[str, str]:
    out: dict[str, str] = {"__cplusplus": "201703L", "__clang__": "1"}
    cuda = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-x" and i + 1 < len(args):
            cuda = args[i + 1] == "cuda"
        if a.startswith("-D"):
            d = a[2:] or (args[i + 1] if i + 1 < len(args) else "")
            if not a[2:]:
                i += 1
            name, _, value = d.partition("=")
            out[name] = value if _ else "1"
        elif a.startswith("-U"):
            out.pop(a[2:], None)
        i += 1
    major = minor = None
    if cuda:
        out.update({"__CUDACC__": "1", "__CUDA__": "1"})
        try:
            from fusionlint.frontend.clang.parse import _prelude_text
            for name, value in re.findall(r"#\s*define\s+(__CUDACC_VER_\w+|__CUDA_API_VER_\w+)\s+(\w+)",
                                          _prelude_text()):
                out.setdefault(name, value)
        except Exception:  # noqa: BLE001 - no prelude: no version macros
            pass
    try:
        major = int(out.get("__CUDACC_VER_MAJOR__", "")) if "__CUDACC_VER_MAJOR__" in out else None
        minor = int(out.get("__CUDACC_VER_MINOR__", "0"))
    except ValueError:
        major = None
    if cuda and major is not None:
        # nvcc pre-includes cuda_runtime.h, whose cuda_runtime_api.h defines the runtime's version
        # (`#if CUDART_VERSION >= 12000` around a whole file, as FBGEMM writes it)
        out.setdefault("CUDART_VERSION", str(major * 1000 + minor * 10))
    if includes_cutlass(text):
        for k, v in model.config_macros(major, minor, clang_cuda=cuda).items():
            out.setdefault(k, v)
    return out


def cutlass_headers_used(unit) -> bool:
    """Whether the parse included real CUTLASS headers (not fusionlint's empty stand-ins)."""
    try:
        for inc in unit.tu.get_includes():
            name = inc.include.name if inc.include is not None else ""
            # a header only CUTLASS has (every CUTLASS header reads it), not any path through a
            # directory named cutlass/ (a project's own headers there are not CUTLASS's)
            if name.endswith(_CUTLASS_ONLY) and not name.startswith("/__fusionlint__"):
                return True
    except Exception:  # noqa: BLE001
        return False
    return False


# ----------------------------------------------------------------------------------------------
# Facts from constructs


def _loc(path: str, pos) -> Loc | None:
    return Loc(path, pos[0], pos[1]) if pos else None


def _via(r: Res) -> str:
    return " -> ".join(r.via)


def _type_value(v) -> tuple[object, list | None, str | None]:
    """(value, args, unknown reason) of a type-like value."""
    if isinstance(v, VUnknown):
        return None, None, v.reason
    if isinstance(v, VType):
        name = v.name + (" " + v.ptr if v.ptr else "")
        if v.args and not model.element_bits(render(VType(v.name, v.args))):
            return name, [_plain(a) for a in v.args], None
        if v.args:
            return render(VType(v.name, v.args)) + (" " + v.ptr if v.ptr else ""), None, None
        return name, None, None
    if isinstance(v, VIntC):
        return f"cute::C<{v.value}>", None, None
    if isinstance(v, VInt):
        return v.value, None, None
    if isinstance(v, VTuple):
        return _shape_list(v), None, None
    if isinstance(v, VClass):
        return render(v), None, None
    if isinstance(v, VConstruct):
        return None, None, "a CUTLASS collective/kernel, not a plain type"
    return None, None, f"{render(v)} is not a type"


def _plain(v):
    if isinstance(v, VInt):
        return v.value
    if isinstance(v, VIntC):
        return v.value
    if isinstance(v, VTuple):
        return _shape_list(v)
    if isinstance(v, VUnknown):
        return None
    return render(v)


def _make_param(path: str, a: ArgRes | None, kind: str, operand: str = "", default_value=None,
                default_reason: str | None = None) -> Param:
    if a is None:
        if default_reason is not None:
            return Param(None, default_reason, default=True)
        p = Param(default=True)
        _set_value(p, default_value, kind, operand)
        return p
    r = a.res
    p = Param(at=_loc(path, (a.term.line, a.term.col)) if a.term is not None else None,
              origin=_loc(path, r.origin), via=_via(r), written=a.written)
    _set_value(p, r.value, kind, operand)
    return p


def _set_value(p: Param, v, kind: str, operand: str = "") -> None:
    if isinstance(v, Res):
        v = v.value
    if v is None:
        p.unknown = p.unknown or "no value"
        return
    if isinstance(v, VUnknown):
        p.value, p.unknown = None, v.reason
        return
    if kind == "int":
        n = as_int(v)
        if n is None and isinstance(v, VInt) and isinstance(v.value, float) and v.value.is_integer():
            n = int(v.value)
        if n is None:
            p.unknown = f"{render(v)} is not an integer constant"
        else:
            p.value = int(n)
        return
    if kind == "bool":
        n = as_int(v)
        if n is None:
            p.unknown = f"{render(v)} is not a constant"
        else:
            p.value = bool(n)
        return
    if kind == "shape" or kind == "problem_shape":
        if isinstance(v, VTuple):
            p.value, p.open = _shape_list(v), open_extent(v)
        elif kind == "problem_shape" and isinstance(v, VType):  # GroupProblemShape<Shape<int,int,int>>
            p.value, p.args = v.name, [_plain(a) for a in v.args]
        else:
            p.unknown = f"{render(v)} is not a shape"
        return
    if kind == "layout" and isinstance(v, VTuple):
        items = _shape_list(v)
        tag = model.stride_to_layout(items, operand)
        p.value = tag if tag else render(v)
        p.args = items
        return
    value, args, why = _type_value(v)
    if why is not None:
        p.unknown = why
        return
    p.value, p.args = value, args
    if kind == "element" and isinstance(value, str):
        p.bits = model.element_bits(value)


def _arg(c: Construct, i: int) -> ArgRes | None:
    return c.args[i] if i < len(c.args) else None


_ML_KINDS = {"arch": "type", "op_class": "type", "element_a": "element", "layout_a": "layout",
             "alignment_a": "int", "element_b": "element", "layout_b": "layout", "alignment_b": "int",
             "element_accumulator": "element", "tile_shape": "shape", "cluster_shape": "shape",
             "stage_count": "type", "kernel_schedule": "type"}
_EPI_KINDS = {"arch": "type", "op_class": "type", "tile_shape": "shape", "cluster_shape": "shape",
              "epilogue_tile": "type", "element_accumulator": "element", "element_compute": "element",
              "element_c": "element", "layout_c": "layout", "alignment_c": "int", "element_d": "element",
              "layout_d": "layout", "alignment_d": "int", "epilogue_schedule": "type", "fusion_op": "type"}
_OPERAND = {"layout_a": "A", "layout_b": "B", "layout_c": "C", "layout_d": "C"}


def mainloop_facts(path: str, c: Construct) -> MainloopBuilder:
    f = MainloopBuilder(name=c.holder.name if c.holder else "", loc=_loc(path, c.site))
    for i, tp in enumerate(model.MAINLOOP_BUILDER_PARAMS):
        if not tp.name:
            continue
        setattr(f, tp.name, _make_param(path, _arg(c, i), _ML_KINDS[tp.name], _OPERAND.get(tp.name, "")))
    _stage_facts(f, _arg(c, 11))
    return f


def _stage_facts(f: MainloopBuilder, a: ArgRes | None) -> None:
    base = f.stage_count

    def derived(value=None, unknown=None) -> Param:
        return Param(value, unknown, at=base.at, origin=base.origin, via=base.via, written=base.written)

    v = a.res.value if a is not None else None
    if v is None or isinstance(v, VUnknown):
        why = v.reason if isinstance(v, VUnknown) else "no stage count argument"
        f.stage_count_kind, f.stages, f.carveout_bytes = derived(None, why), derived(None, why), derived(None, why)
        return
    name = v.name if isinstance(v, VType) else ""
    if isinstance(v, VIntC) or name == "cutlass::gemm::collective::StageCount":
        n = v.value if isinstance(v, VIntC) else (as_int(v.args[0]) if v.args else None)
        f.stage_count_kind = derived("fixed")
        f.stages = derived(n) if n is not None else derived(None, _why(v.args[0] if v.args else None,
                                                                       "stage count not constant"))
        f.carveout_bytes = derived(None)  # not applicable: value None, nothing unknown
        f.stage_count.value = "cutlass::gemm::collective::StageCount"
        f.stage_count.args = [n]
        return
    if name == "cutlass::gemm::collective::StageCountAutoCarveout":
        n = as_int(v.args[0]) if v.args else None
        if n == 0:  # StageCountAuto is StageCountAutoCarveout<0>
            f.stage_count.value, f.stage_count.args = "cutlass::gemm::collective::StageCountAuto", None
            f.stage_count_kind = derived("auto")
            f.carveout_bytes = derived(0)
        else:
            f.stage_count_kind = derived("auto_carveout")
            f.carveout_bytes = derived(n) if n is not None else derived(None, _why(v.args[0] if v.args else None,
                                                                                  "carve-out not constant"))
            if n is None and v.args and isinstance(v.args[0], VUnknown) and v.args[0].tag:
                f.carveout_of = derived(v.args[0].tag)
                f._carveout_key = v.args[0].of  # type: ignore[attr-defined]  # the epilogue it is the storage of
        f.stages = derived(None, "chosen by the collective builder from the shared memory left"
                           + (" after the carve-out" if n else ""))
        return
    if name == "cutlass::gemm::collective::StageCountAutoCarveoutEpi":
        f.stage_count_kind = derived("auto_carveout")
        f.carveout_bytes = derived(None, "the epilogue's shared storage size is only known with the CUTLASS headers")
        f.carveout_of = derived("epilogue_shared_storage")
        f.stages = derived(None, "chosen by the collective builder from the shared memory left after the carve-out")
        return
    why = f"stage count type {render(v)} not recognised"
    f.stage_count_kind, f.stages, f.carveout_bytes = derived(None, why), derived(None, why), derived(None, why)


def _why(v, default: str) -> str:
    return v.reason if isinstance(v, VUnknown) else default


def epilogue_facts(path: str, c: Construct) -> EpilogueBuilder:
    f = EpilogueBuilder(name=c.holder.name if c.holder else "", loc=_loc(path, c.site))
    for i, tp in enumerate(model.EPILOGUE_BUILDER_PARAMS):
        if not tp.name:
            continue
        a = _arg(c, i)
        if a is None and tp.name == "fusion_op":
            d, comp, cc = (_arg(c, 10), _arg(c, 6), _arg(c, 7))
            args = [_plain(x.res.value) if x else None for x in (d, comp, cc, comp)]
            p = Param("cutlass::epilogue::fusion::LinearCombination", default=True, args=args)
            setattr(f, tp.name, p)
            continue
        setattr(f, tp.name, _make_param(path, a, _EPI_KINDS[tp.name], _OPERAND.get(tp.name, "")))
    return f


def collective_mma_facts(path: str, c: Construct) -> CollectiveMmaFacts:
    f = CollectiveMmaFacts(name=c.holder.name if c.holder else "", loc=_loc(path, c.site))
    kinds = {"dispatch_policy": "type", "tile_shape": "shape", "element_a": "element", "stride_a": "shape",
             "element_b": "element", "stride_b": "shape"}
    for i, tp in enumerate(model.COLLECTIVE_MMA_PARAMS):
        setattr(f, tp.name, _make_param(path, _arg(c, i), kinds.get(tp.name, "type")))
    _policy_facts(f, _arg(c, 0))
    for op, stride_field, layout_field in (("A", "stride_a", "layout_a"), ("B", "stride_b", "layout_b")):
        sp: Param = getattr(f, stride_field)
        lp = Param(at=sp.at, origin=sp.origin, via=sp.via, written=sp.written)
        if sp.known and isinstance(sp.value, list):
            tag = model.stride_to_layout(sp.value, op)
            lp.value = tag
            if tag is None:
                lp.unknown = f"stride {sp.value} is not a row/column-major stride"
        else:
            lp.unknown = sp.unknown or "stride unknown"
        setattr(f, layout_field, lp)
    return f


def _policy_facts(f: CollectiveMmaFacts, a: ArgRes | None) -> None:
    base = f.dispatch_policy

    def derived(value=None, unknown=None) -> Param:
        return Param(value, unknown, at=base.at, origin=base.origin, via=base.via, written=base.written)

    v = a.res.value if a is not None else None
    if not isinstance(v, VType):
        why = v.reason if isinstance(v, VUnknown) else "dispatch policy not understood"
        f.stages, f.cluster_shape, f.kernel_schedule = derived(None, why), derived(None, why), derived(None, why)
        return
    args = list(v.args)
    n = as_int(args[0]) if args else None
    f.stages = derived(n) if n is not None else derived(None, "stage count of the dispatch policy not constant")
    if len(args) > 1 and isinstance(args[1], VTuple):
        f.cluster_shape = derived(_shape_list(args[1]))
    elif len(args) > 1:
        f.cluster_shape = derived(None, _why(args[1], "cluster shape not understood"))
    else:
        f.cluster_shape = derived([1, 1, 1])
        f.cluster_shape.default = True
    if v.name in model.DISPATCH_POLICY_INT_THIRD:
        f.kernel_schedule = derived("cutlass::gemm::KernelTma")
    elif len(args) > 2 and isinstance(args[2], VType):
        f.kernel_schedule = derived(args[2].name)
    elif len(args) > 2:
        f.kernel_schedule = derived(None, _why(args[2], "kernel schedule not understood"))
    elif v.name in model.DISPATCH_POLICY_SCHEDULE_DEFAULT:
        f.kernel_schedule = derived(model.DISPATCH_POLICY_SCHEDULE_DEFAULT[v.name])
        f.kernel_schedule.default = True
    else:
        f.kernel_schedule = derived(None, f"default kernel schedule of {v.name} not known to fusionlint")


def kernel_facts(path: str, c: Construct) -> KernelFacts:
    f = KernelFacts(name=c.holder.name if c.holder else "", loc=_loc(path, c.site))
    f.problem_shape = _make_param(path, _arg(c, 0), "problem_shape")
    a = _arg(c, 3)
    f.tile_scheduler = _make_param(path, a, "type", default_value=VType("void")) if a else \
        _make_param(path, None, "type", default_value=VType("void"))
    return f


def gemm2x_facts(path: str, c: Construct, variant: str) -> Gemm2x:
    f = Gemm2x(name=c.holder.name if c.holder else "", loc=_loc(path, c.site))
    specs = model.GEMM2X_PARAMS[variant]
    idx = {tp.name: i for i, tp in enumerate(specs)}

    def arg(name):
        return _arg(c, idx[name]) if name in idx else None

    def val(name):
        a = arg(name)
        return a.res.value if a is not None else None

    kinds = {"element_a": "element", "layout_a": "layout", "element_b": "element", "layout_b": "layout",
             "element_c": "element", "layout_c": "layout", "element_accumulator": "element", "op_class": "type",
             "arch": "type", "threadblock_shape": "shape", "warp_shape": "shape", "instruction_shape": "shape",
             "epilogue_op": "type", "swizzle": "type", "stages": "int", "alignment_a": "int", "alignment_b": "int",
             "split_k_serial": "bool", "operator": "type"}
    for name in ("element_a", "layout_a", "element_b", "layout_b", "element_c", "layout_c"):
        setattr(f, name, _make_param(path, arg(name), kinds[name], {"layout_a": "A", "layout_b": "B"}.get(name, "C")))
    # defaults in order
    acc_a = arg("element_accumulator")
    f.element_accumulator = _make_param(path, acc_a, "element") if acc_a else _copy_default(f.element_c)
    f.op_class = _make_param(path, arg("op_class"), "type") if arg("op_class") else \
        _make_param(path, None, "type", default_value=VType("cutlass::arch::OpClassSimt"))
    f.arch = _make_param(path, arg("arch"), "type") if arg("arch") else \
        _make_param(path, None, "type", default_value=VType("cutlass::arch::Sm70"))
    names = [p.value if p.known else None for p in (f.op_class, f.arch, f.element_a, f.element_b, f.element_c,
                                                    f.element_accumulator)]
    cfg = None
    cfg_why = None
    if all(isinstance(n, str) for n in names):
        got = model.default_gemm_configuration(*names)
        if isinstance(got, str):
            cfg_why = got
        else:
            cfg = got
            f.default_config = got.name
    else:
        cfg_why = "the DefaultGemmConfiguration depends on an unknown argument"

    def from_cfg(name, kind, value_fn):
        a = arg(name)
        if a is not None:
            return _make_param(path, a, kind)
        if cfg is None:
            if all(isinstance(n, str) for n in names):  # the defaults do not exist (not merely unknown)
                f.default_config_problem = f.default_config_problem or cfg_why
            return Param(None, cfg_why, default=True)
        v = value_fn(cfg)
        if v is None:
            return Param(None, f"{cfg.name} has no {name}: it must be given explicitly", default=True)
        p = Param(default=True)
        p.value = v
        if kind == "element":
            p.bits = model.element_bits(v)
        return p

    f.threadblock_shape = from_cfg("threadblock_shape", "shape", lambda g: list(g.threadblock) if g.threadblock else None)
    f.warp_shape = from_cfg("warp_shape", "shape", lambda g: list(g.warp) if g.warp else None)
    f.instruction_shape = from_cfg("instruction_shape", "shape", lambda g: list(g.instruction) if g.instruction else None)
    ep = arg("epilogue_op")
    if ep is not None:
        f.epilogue_op = _make_param(path, ep, "type")
        ev = ep.res.value
        count = as_int(ev.args[1]) if isinstance(ev, VType) and len(ev.args) > 1 else None
        f.alignment_c = Param(count, None if count is not None else "the epilogue functor's Count is not known",
                              at=f.epilogue_op.at, origin=f.epilogue_op.origin, via=f.epilogue_op.via,
                              written=f.epilogue_op.written)
    elif cfg is not None:
        args = [f.element_c.value, cfg.epilogue_count, cfg.epilogue_acc, cfg.epilogue_compute]
        f.epilogue_op = Param(cfg.epilogue, default=True, args=args)
        f.alignment_c = Param(cfg.epilogue_count, None if cfg.epilogue_count else "unknown Count", default=True)
    else:
        f.epilogue_op = Param(None, cfg_why, default=True)
        f.alignment_c = Param(None, cfg_why, default=True)
    sw = arg("swizzle")
    if sw is not None:
        f.swizzle = _make_param(path, sw, "type")
    else:
        spec = next(tp for tp in specs if tp.name == "swizzle")
        f.swizzle = Param(model.SWIZZLE_DEFAULT[spec.default], default=True)
    if f.swizzle.known and f.swizzle.value == "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle" \
            and not f.swizzle.args:
        f.swizzle.args = [1]
    f.stages = from_cfg("stages", "int", lambda g: g.stages)
    f.alignment_a = from_cfg("alignment_a", "int", lambda g: g.alignment_a)
    f.alignment_b = from_cfg("alignment_b", "int", lambda g: g.alignment_b)
    if "split_k_serial" in idx:
        a = arg("split_k_serial")
        f.split_k_serial = _make_param(path, a, "bool") if a else Param(False, default=True)
    else:
        f.split_k_serial = Param(None, f"{variant} has no SplitKSerial parameter")
    f.operator = from_cfg("operator", "type", lambda g: g.operator)
    return f


def _copy_default(p: Param) -> Param:
    q = Param(p.value, p.unknown, default=True, bits=p.bits)
    return q


def _lines_of(g: CutlassGemm) -> list[int]:
    lines = [g.loc.line]
    for part in (g.mainloop, g.epilogue, g.kernel, g.gemm2x):
        if part is None:
            continue
        if getattr(part, "loc", None) is not None:
            lines.append(part.loc.line)
        for f in fields(part):
            v = getattr(part, f.name)
            if isinstance(v, Param):
                for loc in (v.at, v.origin):
                    if loc is not None:
                        lines.append(loc.line)
    return lines


def _build_gemms(ev: Evaluator, path: str) -> list[CutlassGemm]:
    cons = ev.constructs
    referenced = {k for c in cons.values() for k in c.refs}
    gemms: list[CutlassGemm] = []
    orphans: dict[str, list[Construct]] = {}
    for key, c in cons.items():
        if key in referenced:
            continue
        if c.kind in ("mainloop_builder", "epilogue_builder"):
            orphans.setdefault(c.ctx, []).append(c)
            continue
        g = _gemm_from_root(ev, c, path)
        if g is not None:
            gemms.append(g)
    for ctx, group in orphans.items():
        mls = [c for c in group if c.kind == "mainloop_builder"]
        eps = [c for c in group if c.kind == "epilogue_builder"]
        if len(mls) == 1 and len(eps) == 1:
            pairs = [(mls[0], eps[0])]
        else:
            pairs = [(m, None) for m in mls] + [(None, e) for e in eps]
        for m, e in pairs:
            first = m or e
            g = CutlassGemm("3.x", "CollectiveBuilder", first.holder.name if first.holder else "", path,
                            _holder_loc(first, path), "syntactic", context=ctx,
                            instantiated_at=_loc(path, ev.ctx_sites.get(ctx)))
            g.mainloop = mainloop_facts(path, m) if m else None
            g.epilogue = epilogue_facts(path, e) if e else None
            g.notes.append("collective(s) not used by a GemmUniversal kernel in this file")
            g._roots = [x for x in (m, e) if x is not None]  # type: ignore[attr-defined]
            gemms.append(g)
    gemms.sort(key=lambda g: (g.loc.line, g.loc.column, g.context))
    return gemms


def _builder_stages(g: CutlassGemm, ev: Evaluator, path: str) -> None:
    """An automatic stage count's carve-out and stages as the sm_90 builders compute them (source mode)."""
    ml = g.mainloop
    if not isinstance(ml, MainloopBuilder):
        return
    epi = ev.constructs.get(getattr(ml, "_carveout_key", ()))
    fill_builder_stages(ml, epilogue_facts(path, epi) if epi is not None and epi.kind == "epilogue_builder" else None)


def _holder_loc(c: Construct, path: str) -> Loc:
    if c.holder is not None:
        return Loc(path, c.holder.tok.line, c.holder.tok.col)
    return Loc(path, c.site[0], c.site[1])


def _gemm_from_root(ev: Evaluator, root: Construct, path: str) -> CutlassGemm | None:
    cons = ev.constructs
    ctx = root.ctx
    g = CutlassGemm("3.x", "", root.holder.name if root.holder else "", path, _holder_loc(root, path), "syntactic",
                    context=ctx, instantiated_at=_loc(path, ev.ctx_sites.get(ctx)))
    g._roots = [root]  # type: ignore[attr-defined]
    if root.kind == "gemm2x":
        variant = model.GEMM2X[root.template]
        g.api, g.kind = "2.x", variant
        g.gemm2x = gemm2x_facts(path, root, variant)
        return g
    kernel = None
    if root.kind == "adapter":
        g.kind = "GemmUniversalAdapter"
        a = _arg(root, 0)
        if a is not None and isinstance(a.res.value, VConstruct):
            kernel = cons.get(a.res.value.key)
            if kernel is not None and kernel.kind == "gemm2x":
                g.notes.append("GemmUniversalAdapter of a 2.x kernel")
                kernel = None
        elif a is not None and isinstance(a.res.value, VType) and nested_constructs(a.res.value):
            # a kernel of the user's own (e.g. GemmGather<ProblemShape, Mainloop, Epilogue, ...>)
            g.notes.append(f"kernel {a.res.value.name} is not GemmUniversal; its collectives are read")
            for key in nested_constructs(a.res.value):
                sub = cons.get(key)
                if sub is None:
                    continue
                if sub.kind == "mainloop_builder" and g.mainloop is None:
                    g.mainloop = mainloop_facts(path, sub)
                elif sub.kind == "collective_mma" and g.mainloop is None:
                    g.mainloop = collective_mma_facts(path, sub)
                elif sub.kind == "epilogue_builder" and g.epilogue is None:
                    g.epilogue = epilogue_facts(path, sub)
        else:
            g.notes.append("the adapter's kernel was not resolved: "
                           + (a.res.value.reason if a and isinstance(a.res.value, VUnknown) else "unknown type"))
    elif root.kind == "kernel":
        g.kind = "GemmUniversal"
        kernel = root
    elif root.kind == "collective_mma":
        g.kind = "CollectiveMma"
        g.mainloop = collective_mma_facts(path, root)
        g.notes.append("collective not used by a GemmUniversal kernel in this file")
        return g
    else:
        return None
    if kernel is not None:
        g.kernel = kernel_facts(path, kernel)
        for idx, role in ((1, "mainloop"), (2, "epilogue")):
            a = _arg(kernel, idx)
            sub = cons.get(a.res.value.key) if a is not None and isinstance(a.res.value, VConstruct) else None
            if sub is None:
                if a is None:
                    continue
                if role == "epilogue":
                    g.epilogue = OtherEpilogue(_make_param(path, a, "type"), name=a.written,
                                               loc=_loc(path, (a.term.line, a.term.col)) if a.term else None)
                else:
                    g.notes.append(f"mainloop not resolved: "
                                   + (a.res.value.reason if isinstance(a.res.value, VUnknown) else render(a.res.value)))
                continue
            if sub.kind == "mainloop_builder":
                g.mainloop = mainloop_facts(path, sub)
            elif sub.kind == "collective_mma":
                g.mainloop = collective_mma_facts(path, sub)
            elif sub.kind == "epilogue_builder":
                g.epilogue = epilogue_facts(path, sub)
    return g


# ----------------------------------------------------------------------------------------------
# Merging the instantiated reading into the syntactic facts


def _ast_construct(node: AstNode) -> Construct:
    args = [ArgRes(r if r is not None else Res(VUnknown("non-type/template argument")), None, "", i)
            for i, r in enumerate(node.args)]
    return Construct(node.kind, node.template, node.holder or (0, 0), node.ctx, args)


def _facts_from_node(path: str, node: AstNode, role: str):
    c = _ast_construct(node)
    if node.kind == "mainloop_builder":
        return mainloop_facts(path, c)
    if node.kind == "epilogue_builder":
        return epilogue_facts(path, c)
    if node.kind == "collective_mma":
        return collective_mma_facts(path, c)
    if node.kind == "kernel":
        return kernel_facts(path, c)
    if node.kind == "gemm2x":
        variant = model.GEMM2X[node.template]
        # every argument is there (clang filled in the defaults): keep only the written ones as
        # 'written' and mark the rest as defaults
        return gemm2x_facts(path, c, variant)
    return None


_STRUCTURAL = {"tiled_mma", "smem_layout_atom_a", "smem_layout_atom_b"}  # cute alias templates: spelled differently
# how a value was written, which the instantiation (seeing only the result) does not say: what a
# carve-out is made of (sizeof(CollectiveEpilogue::SharedStorage)), kept from the source reading
_WRITTEN_ONLY = {"carveout_of"}


def _overlay(path: str, syn, ast, notes: list[str], prefix: str) -> bool:
    """Replace the syntactic values of ``syn`` by the instantiated ones of ``ast`` (same type)."""
    if syn is None or ast is None or type(syn) is not type(ast):
        return False
    for f in fields(syn):
        s, a = getattr(syn, f.name), getattr(ast, f.name)
        if not isinstance(s, Param) or not isinstance(a, Param):
            continue
        if a.unknown is not None or (f.name in _WRITTEN_ONLY and a.value is None):
            continue  # clang did not tell more
        if s.known and s.value != a.value and f.name not in _STRUCTURAL:
            notes.append(f"{prefix}.{f.name}: the syntactic reading gave {s.value!r}, the instantiation {a.value!r}")
        s.value, s.unknown = a.value, None
        if a.args is not None or s.args is not None:
            s.args = a.args if a.args is not None else s.args
        if a.bits is not None:
            s.bits = a.bits
    if isinstance(syn, Gemm2x) and getattr(ast, "default_config", ""):
        syn.default_config = syn.default_config or ast.default_config
        syn.default_config_problem = ""  # the instantiation found the defaults
    return True


def _merge_ast(gemms: list[CutlassGemm], ast: AstReader, ev: Evaluator, path: str) -> None:
    by_key: dict[tuple, CutlassGemm] = {}
    by_loc: dict[tuple, list[CutlassGemm]] = {}
    by_last: dict[tuple, list[CutlassGemm]] = {}
    for g in gemms:
        for root in getattr(g, "_roots", []):
            # a kernel held by no alias of its own (``struct GemmKernel : KernelType {}``): the GEMM's place
            where = (root.holder.tok.line, root.holder.tok.col) if root.holder is not None else \
                (g.loc.line, g.loc.column) if root.kind == "kernel" else None
            if where is None:
                continue
            k = (root.kind, where)
            by_key[k + (root.ctx,)] = g
            by_loc.setdefault(k, []).append(g)
            # by line: the source reader places a kernel held by no alias at the template's name
            by_last.setdefault((root.kind, where[0], _last_frame(root.ctx)), []).append(g)
    wrapped: set[tuple[int, int]] = set()  # holders of header adapters whose kernels were matched
    for root in ast.roots():
        node, g = root, None
        # an adapter a header's helper makes of a kernel that a class of the header holds: the kernel's GEMM
        kernel = root.children.get("kernel") if root.kind == "adapter" and root.holder is not None \
            and root.holder[0] >= LINE_STRIDE else None
        for cand in ([kernel] if kernel is not None else []) + [root]:
            g = _matching(cand, by_key, by_last, by_loc)
            if g is not None:
                node = cand
                break
        if node is kernel and kernel is not None:
            wrapped.add(root.holder)
        if g is None:
            if node.holder is not None and node.holder[0] >= LINE_STRIDE:
                continue  # a project header's GEMM the source reader did not see: not placed in this file
            g = _gemm_from_ast(node, path)
            if g is None:
                continue
            gemms.append(g)
            continue
        if _apply_node(g, node, path):
            g.mode = "instantiated"
    # the source reader's view of such an adapter, its kernel not followed (a member class of a
    # specialization): the same GEMMs as the kernels just read, with nothing of their own
    gemms[:] = [g for g in gemms if not (g.mode == "syntactic" and g.mainloop is None and g.epilogue is None
                                         and g.gemm2x is None and _held_at(g) in wrapped)]


def _held_at(g: CutlassGemm) -> tuple[int, int] | None:
    root = next(iter(getattr(g, "_roots", [])), None)
    return (root.holder.tok.line, root.holder.tok.col) if root is not None and root.holder is not None else None


def _matching(node: AstNode, by_key: dict, by_last: dict, by_loc: dict) -> CutlassGemm | None:
    """The source reader's GEMM that ``node`` is: held at the same place in the same instantiation, or
    in the same innermost template (libclang names the template the GEMM is declared in; the source
    reader the chain of instantiations from this file), or the only one held there."""
    k = (node.kind, node.holder)
    g = by_key.get(k + (node.ctx,))
    last = (node.kind, node.holder[0] if node.holder else None, _last_frame(node.ctx))
    if g is None and len(by_last.get(last, [])) == 1:
        g = by_last[last][0]
    if g is None and len(by_loc.get(k, [])) == 1:
        g = by_loc[k][0]
        g.notes.append(f"instantiation context read as {node.ctx!r} by libclang")
    return g


def _last_frame(ctx: str) -> str:
    """The innermost template of an instantiation context (``A<..> / B<..>``: ``B<..>``), spaces taken out."""
    return ctx.rsplit(" / ", 1)[-1].replace(" ", "")


def _apply_node(g: CutlassGemm, node: AstNode, path: str) -> bool:
    """Overlay the instantiated values of ``node`` on ``g``; whether anything was read."""
    notes = g.notes
    kernel = node if node.kind in ("kernel", "custom_kernel") else node.children.get("kernel")
    if node.kind == "gemm2x":
        return _overlay(path, g.gemm2x, _facts_from_node(path, node, "gemm"), notes, "gemm")
    if node.kind in ("mainloop_builder", "collective_mma"):
        _built(g, node, "mainloop")
        return _overlay(path, g.mainloop, _facts_from_node(path, node, "mainloop"), notes, "mainloop")
    if node.kind == "epilogue_builder":
        _built(g, node, "epilogue")
        return _overlay(path, g.epilogue, _facts_from_node(path, node, "epilogue"), notes, "epilogue")
    if kernel is None:
        return False
    done = False
    if kernel.kind == "kernel":
        done = _overlay(path, g.kernel, _facts_from_node(path, kernel, "kernel"), notes, "kernel")
    for role in ("mainloop", "epilogue"):
        sub = kernel.children.get(role)
        if sub is not None:
            done = _overlay(path, getattr(g, role), _facts_from_node(path, sub, role), notes, role) or done
            _built(g, sub, role)
    return done


def _built(g: CutlassGemm, node: AstNode, role: str) -> None:
    for k, v in node.built.items():
        g.built[f"{role}.{k}"] = v
    # an automatic stage count is the builder's: the instantiated CollectiveOp's dispatch policy says it
    stages, ml = node.built.get("stages"), g.mainloop
    if role == "mainloop" and isinstance(stages, int) and ml is not None and getattr(ml, "stages", None) is not None \
            and ml.stages.value is None:
        p = ml.stages
        ml.stages = Param(stages, None, at=p.at, origin=p.origin, written=p.written,
                          via="chosen by the collective builder (its CollectiveOp's dispatch policy, instantiated)")


def _gemm_from_ast(node: AstNode, path: str) -> CutlassGemm | None:
    loc = Loc(path, *(node.holder or (1, 1)))
    g = CutlassGemm("3.x", "", node.holder_name, path, loc, "instantiated", context=node.ctx)
    g.notes.append("found only in the instantiated templates (not in the file's text as read by fusionlint)")
    if node.kind == "gemm2x":
        g.api, g.kind = "2.x", model.GEMM2X[node.template]
        g.gemm2x = _facts_from_node(path, node, "gemm")
        return g
    kernel = None
    if node.kind == "adapter":
        g.kind = "GemmUniversalAdapter"
        kernel = node.children.get("kernel")
    elif node.kind == "kernel":
        g.kind, kernel = "GemmUniversal", node
    elif node.kind == "collective_mma":
        g.kind = "CollectiveMma"
        g.mainloop = _facts_from_node(path, node, "mainloop")
        return g
    elif node.kind in ("mainloop_builder", "epilogue_builder"):
        g.kind = "CollectiveBuilder"
        setattr(g, "mainloop" if node.kind == "mainloop_builder" else "epilogue",
                _facts_from_node(path, node, ""))
        _built(g, node, "mainloop" if node.kind == "mainloop_builder" else "epilogue")
        return g
    if kernel is not None:
        g.kernel = _facts_from_node(path, kernel, "kernel")
        for role in ("mainloop", "epilogue"):
            sub = kernel.children.get(role)
            if sub is not None:
                setattr(g, role, _facts_from_node(path, sub, role))
                _built(g, sub, role)
    for part in (g.mainloop, g.epilogue, g.kernel, g.gemm2x):
        if part is None:
            continue
        for f in fields(part):
            v = getattr(part, f.name)
            if isinstance(v, Param) and v.at is None:
                v.at = loc
    return g


def _explain_syntactic(gemms: list[CutlassGemm], unit, path: str) -> None:
    """Why a GEMM kept its syntactic values although the CUTLASS headers were there."""
    errors = sorted({d.line for d in getattr(unit, "diagnostics", [])
                     if d.severity in ("error", "fatal") and d.path == path})
    missing = [m for m in (getattr(unit, "missing_headers", []) or [])
               if m.startswith(("cutlass/", "cute/", "cuda/", "nv/", "cub/", "thrust/"))]
    for g in gemms:
        if g.mode != "syntactic":
            continue
        if g.condition:
            g.notes.append("values read from the text as a build would compile it when " + g.condition.split(":")[0]
                           + ": this parse leaves the instantiation out, so libclang did not instantiate it "
                           "(CUTLASS's own static_asserts did not run for it; the rules did)")
        elif missing:
            hint = " (CUDA 13 keeps them under <cuda>/include/cccl: add it with -I)" \
                if any(m.startswith(("cuda/std", "cuda/", "nv/")) for m in missing) else ""
            g.notes.append("values read from the text: the CUTLASS headers did not parse, headers not found: "
                           + ", ".join(missing[:4]) + ("..." if len(missing) > 4 else "") + hint)
        elif errors:
            g.notes.append("values read from the text: libclang did not resolve this GEMM (errors in this file at "
                           f"line{'s' if len(errors) > 1 else ''} {', '.join(map(str, errors[:8]))})")
        else:
            g.notes.append("values read from the text: libclang shows no declaration or call outside templates that "
                           "leads to this instantiation (e.g. an explicit instantiation); CUTLASS's own checks "
                           "still ran")


# ----------------------------------------------------------------------------------------------
# Diagnostics

_SA = re.compile(r"^static(?:_assert| assertion) failed(?: due to requirement '(?P<req>.*)')?(?:: (?P<msg>.*))?$",
                 re.S)
_KEEP = re.compile(r"implicit instantiation of undefined template|incomplete type|no type named '\w+' in|"
                   r"no matching (?:specialization|constructor)|Could not build|no member named|ambiguous")
_HEADER_NOISE = re.compile(r"^(use of undeclared identifier|unknown type name|expected )")
# a header of CUTLASS's include trees (include/cutlass/..., include/cute/...), not a file that only
# lives below a folder named cutlass (a checkout's examples/)
_CUTLASS_HEADER = re.compile(r"[/\\]include[/\\](?:cutlass|cute)[/\\]")
_CUTLASS_UTILITIES = re.compile(r"[/\\]cutlass[/\\]util[/\\]")


def _kept_error(msg: str, loc, device_bodies: bool, main_path: str = "") -> bool:
    """An error worth reporting as the GEMM's: one of the kinds above; and, when the prelude's
    device declarations were in force (so that a known-good GEMM instantiates without errors),
    any error inside a CUTLASS/CuTe header that is not a name the parse lacks. Not the main file
    or a header of the project (CUTLASS's own examples/ included), and not CUTLASS's utilities
    (``cutlass/util/``: host tensors, reference kernels, random fills over cuRAND), which are no
    part of a GEMM's configuration and which libclang's CUDA mode reads differently from nvcc (a
    cuRAND state without a default constructor in CUTLASS's own examples 52, 53 and 55)."""
    if _KEEP.search(msg):
        return True
    name = loc.file.name if loc.file is not None else ""
    return device_bodies and bool(name) and name != main_path and bool(_CUTLASS_HEADER.search(name)) \
        and not _CUTLASS_UTILITIES.search(name) and not _HEADER_NOISE.match(msg)


def _device_bodies(unit) -> bool:
    """Whether the prelude instantiated device bodies (its marker namespace is in the unit)."""
    return has_device_bodies(unit.tu)


def _map_diagnostics(gemms: list[CutlassGemm], unit, path: str) -> None:
    if not gemms:
        return
    spans = [(g, _lines_of(g)) for g in gemms]
    seen: set[tuple] = set()
    device_bodies: bool | None = None
    for d in unit.tu.diagnostics:
        if d.severity < ci.Diagnostic.Error:
            continue
        msg = d.spelling
        m = _SA.match(msg)
        if m is None and not _KEEP.search(msg):
            if device_bodies is None:
                device_bodies = _device_bodies(unit)
            if not _kept_error(msg, d.location, device_bodies, path):
                continue
        loc = d.location
        in_main = loc.file is not None and loc.file.name == path
        main_lines: list[int] = [loc.line] if in_main else []
        for n in d.children:
            nl = n.location
            if nl.file is not None and nl.file.name == path and ("requested here" in n.spelling
                                                                  or "instantiation" in n.spelling):
                main_lines.append(nl.line)
        if not main_lines:
            continue
        at_line = main_lines[0]
        if m is not None:
            readable = (m.group("msg") or "").strip() or f"requirement {m.group('req')} failed"
            kind = "static_assert"
        else:
            readable = msg
            kind = "error"
        header = None if in_main else Loc(loc.file.name if loc.file else "", loc.line, loc.column)
        col = 1
        for n in d.children:
            if n.location.file is not None and n.location.file.name == path and n.location.line == at_line:
                col = n.location.column
                break
        if in_main:
            col = loc.column
        diag = CutlassDiagnostic(readable, msg, Loc(path, at_line, col), header, kind)
        targets = [g for g, lines in spans if at_line in lines]
        if len(targets) > 1:
            narrowed = [g for g in targets if g.instantiated_at is not None and g.instantiated_at.line in main_lines]
            targets = narrowed or targets[:1]
        if not targets:
            targets = [g for g, lines in spans if lines and min(lines) <= at_line <= max(lines)][:1]
        if not targets:  # asked for at a use of the GEMM (``Gemm::Arguments``, ``Gemm gemm;``, ``gemm.run()``)
            targets = _used_at(gemms, main_lines, unit, path)
        for g in targets:
            k = (id(g), readable, at_line)
            if k in seen:
                continue
            seen.add(k)
            g.diagnostics.append(diag)


def _line_words(unit, path: str, line: int) -> set[str]:
    """The identifiers of one line of the main file (from libclang's tokens: the buffer parsed,
    which in the editor is not the file on disk)."""
    try:
        tu = unit.tu
        f = tu.get_file(path)
        rng = ci.SourceRange.from_locations(ci.SourceLocation.from_position(tu, f, line, 1),
                                            ci.SourceLocation.from_position(tu, f, line + 1, 1))
        return {t.spelling for t in tu.get_tokens(extent=rng) if t.kind == ci.TokenKind.IDENTIFIER}
    except Exception:  # noqa: BLE001 -- a line libclang cannot tokenize names nothing
        return set()


def _used_at(gemms: list[CutlassGemm], main_lines: list[int], unit, path: str) -> list[CutlassGemm]:
    """The GEMM whose name a line of the instantiation chain spells (innermost first); the only
    GEMM of the file when there is one."""
    for line in main_lines:
        words = _line_words(unit, path, line)
        named = [g for g in gemms if g.name and g.name.split("::")[-1] in words]
        if len(named) == 1:
            return named
    return gemms[:1] if len(gemms) == 1 else []


_SYNTAX = re.compile(r"^(expected|extraneous|unterminated|missing terminating|invalid token|stray|"
                     r"unknown type name|use of undeclared identifier)")


def _nearby_errors(gemms: list[CutlassGemm], unit, path: str) -> None:
    errs = [d for d in getattr(unit, "diagnostics", []) if d.severity in ("error", "fatal") and d.path == path
            and _SYNTAX.match(d.message)]
    if not errs:
        return
    for g in gemms:
        lines = _lines_of(g)
        if not lines:
            continue
        lo, hi = min(lines) - 2, max(lines) + 2
        for d in errs:
            if lo <= d.line <= hi and not _missing_cutlass(d.message):
                g.parse_errors_nearby.append(f"{d.line}:{d.column}: {d.message}")


def _missing_cutlass(message: str) -> bool:
    """Errors that only say that CUTLASS (or CUDA) names are unknown: expected without the headers."""
    return bool(re.search(r"'(cutlass|cute|Shape|Int|_\d+|Stride|cudaStream_t)'", message)) or \
        message.startswith(("use of undeclared identifier", "unknown type name"))
