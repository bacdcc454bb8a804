"""Precompiled preambles: a file parsed with its PCH gives the same facts, findings, diagnostics and
include closure as a plain parse; a changed header is never served from an old PCH."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import FIXTURES
from fusionlint.rules.loader import load_rules
from fusionlint.frontend.clang import parse, toolchain
from fusionlint.frontend.clang.parse import ParseOptions, parse_file, split_preamble
from fusionlint.run.pipeline import check_file


def aged(*paths: Path) -> None:
    """Written a while ago: a header modified in the second before a parse is never trusted to a PCH."""
    past = time.time() - 30
    for p in paths:
        os.utime(p, (past, past))


def facts_json(facts) -> str:
    return json.dumps([c.to_dict() for c in facts.configurations] + [g.to_dict() for g in facts.cutlass],
                      sort_keys=True, default=str)


def three_runs(path: Path, system: bool, pch_dir: Path):
    """Plain parse, then three with a PCH directory: noted, built and used, used."""
    rules = load_rules([])
    plain = check_file(path, rules, ParseOptions(use_system_headers=system))
    plain_record = plain.unit  # the parse's record: include closure, headers found nowhere, PCH
    runs = []
    for _ in range(3):
        r = check_file(path, rules, ParseOptions(use_system_headers=system, pch_dir=str(pch_dir)))
        runs.append((r, r.unit))
    return plain, plain_record, runs


@pytest.mark.parametrize("fixture, system", [
    ("cublaslt/rules/FL100_transa_int64_size.cpp", False),  # C++, fixture header through a relative include
    ("cublaslt/extract/fp8_locals.cu", False),  # CUDA: the prelude is inside the PCH
    ("cublaslt/extract/bias_aux_epilogue.cpp", True),  # the machine's CUDA headers, when there are any
])
def test_same_results_with_and_without_pch(fixture: str, system: bool, tmp_path: Path) -> None:
    path = FIXTURES / fixture
    plain, plain_record, runs = three_runs(path, system, tmp_path)
    assert plain.error is None and plain.facts is not None and plain.facts.configurations
    assert [rec.pch for _, rec in runs] == [None, "used", "used"]
    for r, rec in runs:
        assert r.error is None
        assert r.findings == plain.findings
        assert facts_json(r.facts) == facts_json(plain.facts)
        assert r.facts.missing_headers == plain.facts.missing_headers
        assert sorted(rec.includes) == sorted(plain_record.includes)
    assert len(list(tmp_path.glob("*.pch"))) == 1


SYNTAX_ERROR = (FIXTURES / "mixed" / "syntax_error.cpp").read_text()


@pytest.mark.parametrize("text, missing, pch", [
    (SYNTAX_ERROR.replace("#include <cublasLt.h>\n", '#include <cublasLt.h>\n#include "nowhere.h"\n'), ["nowhere.h"],
     "used"),
    # one header found nowhere in the include block, two more further down: the body's parse gets
    # the re-parse rounds a plain parse would have left
    (SYNTAX_ERROR.replace("#include <cublasLt.h>\n", '#include <cublasLt.h>\n#include "no1.h"\n')
     .replace("void still_checked", '#include "no2.h"\nint a;\n#include "no3.h"\nvoid still_checked'),
     ["no1.h", "no2.h", "no3.h"], "used"),
    # five: the re-parse rounds give up after four (a fatal error), and the partial-parse recovery
    # (frontend/clang/recovery.py) stands in the fifth too; no PCH is tried for such a file
    (SYNTAX_ERROR.replace("#include <cublasLt.h>\n", '#include <cublasLt.h>\n#include "no1.h"\n#include "no2.h"\n')
     .replace("void still_checked", '#include "no3.h"\nint a;\n#include "no4.h"\n#include "no5.h"\nvoid still_checked'),
     ["no1.h", "no2.h", "no3.h", "no4.h", "no5.h"], None),
])
def test_diagnostics_and_missing_headers_match(tmp_path: Path, text: str, missing: list[str], pch: str | None) -> None:
    """Errors in the body keep their lines; headers found nowhere are empty stand-ins either way."""
    src = tmp_path / "broken.cpp"
    src.write_text(text)
    aged(src)

    def diags(unit):
        return [(d.severity, d.path, d.line, d.column, d.message) for d in unit.diagnostics]

    plain = parse_file(src, ParseOptions(use_system_headers=False), text=text)
    units = [parse_file(src, ParseOptions(use_system_headers=False, pch_dir=str(tmp_path / "pch")), text=text)
             for _ in range(3)]
    assert [u.pch for u in units] == [None, pch, pch]
    assert plain.missing_headers == missing and plain.main_file_errors()
    for u in units:
        assert diags(u) == diags(plain)
        assert u.missing_headers == plain.missing_headers


def test_cuda_prelude_alone_is_shared(tmp_path: Path) -> None:
    """A CUDA file without a leading include block still gets the CUDA prelude (cuda_runtime.h) from
    a PCH shared by every CUDA file with the same arguments."""
    path = tmp_path / "no_preamble.cu"
    path.write_text("static int first_declaration;\n" + (FIXTURES / "cublaslt" / "extract" / "fp8_locals.cu").read_text())
    aged(path)
    plain, plain_record, runs = three_runs(path, False, tmp_path / "pch")
    assert plain.facts.configurations
    assert [rec.pch for _, rec in runs] == [None, "prelude", "prelude"]
    for r, rec in runs:
        assert r.findings == plain.findings and facts_json(r.facts) == facts_json(plain.facts)
        assert sorted(rec.includes) == sorted(plain_record.includes)


def test_changed_header_rebuilds_the_pch(tmp_path: Path) -> None:
    src = tmp_path / "lt.cpp"
    (tmp_path / "types.h").write_text("typedef long long transa_t;\n")
    src.write_text("#include <cublasLt.h>\n#include \"types.h\"\n\nvoid f(cublasLtMatmulDesc_t d) {\n"
                   "  transa_t t = CUBLAS_OP_T;\n"
                   "  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));\n}\n")
    aged(src, tmp_path / "types.h")
    rules = load_rules([])
    opts = ParseOptions(use_system_headers=False, pch_dir=str(tmp_path / "pch"))
    codes = []
    for _ in range(2):
        r = check_file(src, rules, opts)
        codes.append(([f.code for f in r.findings], r.unit.pch))
    (tmp_path / "types.h").write_text("typedef int transa_t;\n")
    aged(tmp_path / "types.h")
    r = check_file(src, rules, opts)
    codes.append(([f.code for f in r.findings], r.unit.pch))
    assert codes == [(["FL100"], None), (["FL100"], "used"), ([], "used")]
    assert r.facts.attribute_sets[0].buffer_type == "transa_t"


def test_pch_shared_between_files_through_the_cli(tmp_path: Path, monkeypatch) -> None:
    """Two files with the same includes: the second builds the PCH, the output is the one without."""
    src = tmp_path / "rules"
    src.mkdir()
    for name in ("FL100_transa_int64_size.cpp", "FL100_transa_int32_ok.cpp"):
        shutil.copy(FIXTURES / "cublaslt" / "rules" / name, src / name)
    probe = (FIXTURES / "cublaslt" / "probe.h").read_text().replace(
        '"../../fusionlint/evidence/include/fusionlint_probe.h"',
        f'"{FIXTURES.parent / "fusionlint" / "evidence" / "include" / "fusionlint_probe.h"}"')
    (tmp_path / "probe.h").write_text(probe)
    aged(*src.iterdir(), tmp_path / "probe.h")
    stats = tmp_path / "stats.json"
    monkeypatch.setenv("FUSIONLINT_STATS", str(stats))
    with_pch = run_cli("--no-system-headers", "-j", "1", "--cache-dir", tmp_path / "c1", src)
    assert [o["pch"] for o in json.loads(stats.read_text())["outcomes"]] == [None, "used"]
    without = run_cli("--no-system-headers", "-j", "1", "--no-pch", "--cache-dir", tmp_path / "c2", src)
    assert [o["pch"] for o in json.loads(stats.read_text())["outcomes"]] == [None, None]
    assert with_pch == without and with_pch[0] == 1 and "[FL100]" in with_pch[1]


def test_preamble_split() -> None:
    text = ("// header comment\n/* block\n   comment */\n#pragma once\n#include <a.h>  // why\n\n"
            "#  include \"b.h\"\n#define X 1\n#include <c.h>\nint x;\n")
    pre = split_preamble(text)
    assert pre is not None and pre.lines == (4, 6)
    assert pre.header == "#include <a.h>  // why\n#  include \"b.h\"\n"
    assert pre.body.count("\n") == text.count("\n")  # every line keeps its number
    assert pre.body.splitlines()[4] == "" and pre.body.splitlines()[8] == "#include <c.h>"  # after #define: stays
    assert split_preamble("int x;\n#include <a.h>\n") is None
    assert split_preamble("#include MACRO\n") is None
    assert split_preamble("#include <a.h> \\\n  more\n") is None  # a continued line: not moved


CUTLASS = [toolchain.discover(True).cutlass, os.environ.get("FUSIONLINT_SLOW_TESTS") == "1"]


@pytest.mark.skipif(not all(CUTLASS), reason="needs the CUTLASS headers and FUSIONLINT_SLOW_TESTS=1 (minutes)")
def test_cutlass_instantiated_mode_same_with_pch(tmp_path: Path) -> None:
    path = FIXTURES.parent / "kernels_ref" / "cutlass" / "fp16_pingpong_1x1.cu"
    plain, _, runs = three_runs(path, True, tmp_path)
    assert plain.facts.cutlass and plain.facts.cutlass[0].mode == "instantiated"
    assert [rec.pch for _, rec in runs][1:] == ["used", "used"]
    for r, _ in runs:
        assert r.findings == plain.findings and facts_json(r.facts) == facts_json(plain.facts)


def test_header_bodies_skipped_only_where_cublaslt_cannot_be_called(tmp_path: Path) -> None:
    """A PCH is compiled without the headers' function bodies only for a file that cannot call
    cuBLASLt (the interpreter follows calls into headers); the file's own bodies are always parsed,
    and a header after the include block that names cuBLASLt means a plain parse."""
    helper = tmp_path / "helper.h"
    helper.write_text("".join(f"#include <h{i}.h>\n" for i in range(PCH_WIDTH)) +
                      "template <class T> int helper(T t) { static_assert(sizeof(T) == 0, \"in a body\"); return 0; }\n"
                      "template <class T> constexpr auto kept(T t) { static_assert(sizeof(T) == 0, \"constexpr\"); return t; }\n")
    for i in range(PCH_WIDTH):
        (tmp_path / f"h{i}.h").write_text(f"inline int h{i}() {{ return {i}; }}\n")
    aged(helper, *tmp_path.glob("h*.h"))
    body = "\nint main() { helper(1); return kept(2); }\n"
    plain_src = tmp_path / "plain.cpp"
    plain_src.write_text('#include "helper.h"\n' + body)
    lt_src = tmp_path / "lt.cpp"
    lt_src.write_text('#include "helper.h"\n#include <cublasLt.h>\n' + body)
    late_src = tmp_path / "late.cpp"
    late_src.write_text('#include "helper.h"\nint x;\n#include "wrap.h"\n' + body)
    (tmp_path / "wrap.h").write_text("#include <cublasLt.h>\n")
    aged(plain_src, lt_src, late_src, tmp_path / "wrap.h")
    opts = ParseOptions(use_system_headers=False, extra_args=[f"-I{tmp_path}"], pch_dir=str(tmp_path / "pch"))

    for src, pch, asserted in [(plain_src, "used", ["constexpr"]), (lt_src, "used", ["constexpr", "in a body"]),
                               (late_src, None, ["constexpr", "in a body"])]:
        units = [parse_file(src, opts, text=src.read_text()) for _ in range(2)]
        assert [u.pch for u in units] == [None, pch], src.name
        # the assertions are reported at the header's lines; their instantiation notes point into the file
        found = sorted(d.message.rsplit(": ", 1)[-1] for d in units[1].diagnostics if "static assertion" in d.message)
        assert found == asserted, src.name
    records = [json.loads(p.read_text()) for p in (tmp_path / "pch").glob("*.json")]
    assert sorted(r.get("bodies") for r in records if r.get("pch")) == ["parsed", "skipped"]


PCH_WIDTH = parse.PCH_MIN_INCLUDES


def test_cutlass_file_gets_its_pch_at_first_sight(tmp_path: Path, monkeypatch) -> None:
    """With the CUTLASS headers found, a CUDA file that includes CUTLASS keeps the headers' function
    bodies in its PCH: the prelude instantiates the kernels' device bodies, whose static_asserts are
    inside function bodies (so no PCH at first sight; the next sighting builds one with every body).
    With the device bodies turned off (-DFUSIONLINT_NO_DEVICE_BODIES) such a file that cannot call
    cuBLASLt has its include block compiled without the bodies the first time it is seen: building
    and using that PCH costs less than the plain parse it replaces. Every other file, and every file
    without the CUTLASS headers, is parsed plainly at first sight (the next sighting builds)."""
    fake = tmp_path / "cutlass_include"
    (fake / "cutlass").mkdir(parents=True)
    (fake / "cutlass" / "cutlass.h").write_text("".join(f'#include "cutlass/h{i}.h"\n' for i in range(PCH_WIDTH)) +
                                                "template <class T> int helper(T t) { static_assert(sizeof(T) == 0, \"in a body\"); return 0; }\n"
                                                "template <class T> constexpr auto kept(T t) { static_assert(sizeof(T) == 0, \"constexpr\"); return t; }\n")
    for i in range(PCH_WIDTH):
        (fake / "cutlass" / f"h{i}.h").write_text(f"inline int h{i}() {{ return {i}; }}\n")
    aged(*fake.rglob("*.h"))
    monkeypatch.setattr(parse.toolchain, "discover", lambda use_system=True: toolchain.HeaderDirs(cutlass=(fake,)))
    body = "\nint main() { helper(1); return kept(2); }\n"
    kernel = tmp_path / "kernel.cu"
    kernel.write_text("#include <cutlass/cutlass.h>\n" + body)
    mixed = tmp_path / "mixed.cu"
    mixed.write_text("#include <cutlass/cutlass.h>\n#include <cublasLt.h>\n" + body)
    aged(kernel, mixed)

    def asserted(unit) -> list[str]:
        return sorted(d.message.rsplit(": ", 1)[-1] for d in unit.diagnostics if "static assertion" in d.message)

    opts = ParseOptions(use_system_headers=True, pch_dir=str(tmp_path / "pch"))
    units = [parse_file(kernel, opts, text=kernel.read_text()) for _ in range(3)]
    assert [u.pch for u in units] == [None, "used", "used"]
    assert [asserted(u) for u in units] == [["constexpr", "in a body"]] * 3

    no_device = ParseOptions(use_system_headers=True, pch_dir=str(tmp_path / "pch-no-device"),
                             defines=["FUSIONLINT_NO_DEVICE_BODIES"])
    plain = parse_file(kernel, ParseOptions(use_system_headers=True, defines=["FUSIONLINT_NO_DEVICE_BODIES"]),
                       text=kernel.read_text())
    first = parse_file(kernel, no_device, text=kernel.read_text())
    assert plain.pch is None and first.pch == "used"
    assert plain.header_mode["cutlass"] == str(fake)
    records = [json.loads(p.read_text()) for p in (tmp_path / "pch-no-device").glob("*.json")]
    assert [r.get("bodies") for r in records if r.get("pch")] == ["skipped"]
    assert sorted(first.includes) == sorted(plain.includes)
    assert asserted(first) == ["constexpr"]  # the headers' ordinary bodies were skipped; constexpr ones are kept
    assert parse_file(kernel, no_device, text=kernel.read_text()).pch == "used"  # and reused
    # a file that names cuBLASLt keeps every body: no PCH of its own at first sight (the CUDA prelude's,
    # which kernel.cu's parses built, is used), one with bodies at the next
    assert [parse_file(mixed, opts, text=mixed.read_text()).pch for _ in range(2)] == ["prelude", "used"]
