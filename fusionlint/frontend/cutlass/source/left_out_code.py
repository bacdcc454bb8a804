"""GEMM templates that this build instantiates nowhere because the preprocessor leaves their
instantiations out (FBGEMM's ``i8i8bf16sm90a_impl<64, 128, 128, 2, 1, 1>`` under ``#ifdef
SMOOTHQUANT_SM90A``, a macro no build of the project defines): the file is read once more with that
region's macro defined, and the instances found there take the place of the template's generic
reading, each saying under which condition it is compiled (``CutlassGemm.condition``).

Only a region opened by a test of one macro (``#ifdef X``, ``#if defined(X)``, ``#if X``) is read
this way, and only when the macro is not already defined: then defining it is the one change that
compiles the region. Anything else (``#ifndef``, ``#else`` arms, compound tests) keeps the generic
reading and its reason (``: it is instantiated only in code this build leaves out, under ...``).
"""
from __future__ import annotations

import re
from collections.abc import Callable

from fusionlint.frontend.cutlass.source.evaluator import Evaluator
from fusionlint.frontend.cutlass.source.includes import ProjectHeaders
from fusionlint.frontend.cutlass.source.lexer import InactiveRegion
from fusionlint.frontend.cutlass.source.syntax import Program, read_program
from fusionlint.model.cutlass_facts import CutlassGemm

MAX_MACROS = 4  # one more read of the file per macro
_ONE_MACRO = re.compile(r"^#(?:ifdef\s+(\w+)|if\s+(?:defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)|(\w+)))\s*$")


def macro_of(region: InactiveRegion) -> str | None:
    """The macro whose definition compiles ``region``: ``X`` of ``#ifdef X``, ``#if defined(X)``, ``#if X``."""
    m = _ONE_MACRO.match(region.directive)
    return next((x for x in m.groups() if x), None) if m else None


def condition_of(macro: str, region: InactiveRegion) -> str:
    return f"`{macro}` is defined: `{region.directive}` at line {region.line}, left out by this build"


def read_left_out(gemms: list[CutlassGemm], prog: Program, ev: Evaluator, text: str, path: str,
                  predefined: dict[str, str], project: ProjectHeaders | None,
                  build: Callable[[Evaluator, str], list[CutlassGemm]]) -> list[CutlassGemm]:
    """``gemms`` with each generic reading of a template instantiated only in left-out code replaced
    by the instances a read with the region's macro defined finds (``build`` makes the GEMMs of an
    evaluated read, as for the first)."""
    open_templates = set(ev.uninstantiated_gemm_templates())
    if not open_templates:
        return gemms
    regions: dict[str, InactiveRegion] = {}
    for r in prog.inactive_regions:
        macro = macro_of(r)
        if macro is not None and macro not in predefined and r.names & open_templates:
            regions.setdefault(macro, r)
    out = list(gemms)
    for macro, region in list(regions.items())[:MAX_MACROS]:
        templates = region.names & open_templates
        prog2 = read_program(text, path, {**predefined, macro: "1"}, project)
        ev2 = Evaluator(prog2)
        ev2.run()
        found = [g for g in build(ev2, path) if g.context and _template_of(g.context) in templates]
        if not found:
            continue
        lines, names = {g.loc.line for g in found}, {_template_of(g.context) for g in found}
        out = [g for g in out if _template_of(g.context) not in names  # the generic reading ``f<TB_M, ...>``
               and (g.context or g.loc.line not in lines or not _open(g))]
        for g in found:
            g.condition = condition_of(macro, region)
            g._evaluator = ev2  # type: ignore[attr-defined]  # what the builder steps read later
        out += found
    out.sort(key=lambda g: (g.loc.line, g.loc.column, g.context))
    return out


def _open(g: CutlassGemm) -> bool:
    g.collect_unknowns()
    return g.template_parameters_open()


def _template_of(context: str) -> str:
    """The outermost template of an instantiation context: ``ns::f<64, 128> / g<...>`` -> ``f``."""
    head = context.split(" / ")[0].split("<")[0]
    return head.rsplit("::", 1)[-1].strip()
