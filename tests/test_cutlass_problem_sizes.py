"""Problem sizes of CUTLASS Arguments, read from a real parsed fixture: struct
fields, GemmCoord accessors, declarator lists, the literal arguments of a helper's only caller,
and a size read at run time, which stays unknown; and FL340, the 2.x leading-dimension check
those sizes feed."""
from __future__ import annotations

from conftest import FIXTURES
from fusionlint.frontend.cutlass.reader import extract_cutlass
from fusionlint.frontend.clang.parse import ParseOptions, parse_file
from fusionlint.facts.extract import extract_file
from fusionlint.rules.engine import run_rules
from fusionlint.rules.loader import load_rules

FIXTURE = FIXTURES / "cutlass" / "extract" / "problem_sizes.cu"


def line_of(snippet: str) -> int:
    return next(i for i, line in enumerate(FIXTURE.read_text().splitlines(), 1) if snippet in line)


def problems() -> dict[int, tuple]:
    unit = parse_file(FIXTURE, ParseOptions(use_system_headers=False))
    (g,) = extract_cutlass(unit)
    return {p.at.line: (p.m, p.n, p.k, p.lds) for p in g.problems}


def test_problem_sizes_resolve_through_the_forms_applications_use():
    got = problems()
    args = [i for i, line in enumerate(FIXTURE.read_text().splitlines(), 1) if "Gemm::Arguments args" in line]
    assert len(got) == len(args) == 5
    struct, coord, constants, caller, runtime = (got[i] for i in args)
    assert struct == (512, 256, 128, {"a": 128, "b": 128, "c": 256, "d": 256})  # struct defaults, `int n{256}` too
    assert coord == (768, 384, 200, {"a": 200, "b": 200, "c": 384, "d": 384})  # size.m() / .n() / .k()
    assert constants == (512, 512, 100, {"a": 100, "b": 100, "c": 512, "d": 512})  # const int M = .., N = .., K = ..
    assert caller == (256, 128, 72, {"a": 72, "b": 72, "c": 128, "d": 128})  # from_caller(256, 128, 72, ...)
    assert runtime == (256, 256, None, {"a": None, "b": None, "c": 256, "d": 256})  # atoi(argv[1]): runtime data


def test_two_callers_with_different_sizes_leave_the_parameter_unknown(tmp_path):
    text = FIXTURE.read_text().replace("from_caller(256, 128, 72, nullptr, nullptr, nullptr);",
                                       "from_caller(256, 128, 72, nullptr, nullptr, nullptr);\n"
                                       "  from_caller(256, 128, 96, nullptr, nullptr, nullptr);")
    path = tmp_path / "two_callers.cu"
    path.write_text(text)
    unit = parse_file(path, ParseOptions(use_system_headers=False))
    (g,) = extract_cutlass(unit)
    caller = next(p for p in g.problems if p.at.line == line_of("void from_caller") + 1)
    assert (caller.m, caller.n, caller.k) == (256, 128, None)


def test_fl340_flags_the_misaligned_leading_dimension_only():
    facts = extract_file(FIXTURE, ParseOptions(use_system_headers=False))
    found = [f for f in run_rules(load_rules(), facts) if f.code == "FL340"]
    # K = 100 is the leading dimension of row-major A and column-major B (alignment 8); 128, 200 and 72
    # are multiples of 8, and the run-time K is not judged
    assert [(f.line, "leading dimension of A is 100" in f.message) for f in found] == [
        (line_of("Gemm::Arguments args{{M, N, K}"), True)]
