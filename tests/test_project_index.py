"""The project index, across translation units: `fusionlint index` records which functions of a project
reach cuBLASLt and the calls of them from other files; `check` and `facts` of the defining file then
evaluate each function once per such call (fixtures/interprocedural/cross_tu: gemm.cu defines
run_gemm, main.cpp calls it twice, the second time with CUBLAS_COMPUTE_16F for BF16 data, FL105)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import FIXTURES

CROSS_TU = FIXTURES / "interprocedural" / "cross_tu"
LEGAL_LINE, ILLEGAL_LINE = 13, 15  # main.cpp's two calls of run_gemm


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """A copy of the fixture project (its compile_commands.json has relative paths)."""
    dest = tmp_path / "proj"
    shutil.copytree(CROSS_TU, dest)
    return dest


def _index(proj: Path) -> str:
    rc, out, err = run_cli("index", "-p", proj / "compile_commands.json", "-j", "2")
    assert rc == 0, err
    line = out.strip()
    assert line.startswith("fusionlint: index: "), out
    return line


def _check(proj: Path, *extra) -> list[dict]:
    rc, out, err = run_cli("check", "--output-format", "json", *extra, proj / "gemm.cu")
    assert rc in (0, 1), err
    return json.loads(out)


def _facts(proj: Path) -> list[dict]:
    rc, out, err = run_cli("facts", proj / "gemm.cu")
    assert rc == 0, err
    return [c for c in json.loads(out) if c["kind"] == "matmul"]


def _vias(finding: dict) -> list[tuple[str, int, str]]:
    return [(Path(r["path"]).name, r["line"], r["message"]) for r in finding["related"]
            if r["message"].startswith("via ")]


def test_check_reports_the_bad_call_from_another_file_only_with_the_index(proj):
    assert _check(proj) == []  # the compute type comes from the caller: unknown, nothing reported
    _index(proj)
    found = _check(proj)
    assert [f["code"] for f in found] == ["FL105"], found
    f = found[0]
    assert (Path(f["path"]).name, f["line"]) == ("gemm.cu", 13)  # the create call of gemm.cu
    assert _vias(f) == [("main.cpp", ILLEGAL_LINE, "via main() -> run_gemm(...)")]
    assert _check(proj, "--no-index") == []  # the index is what made the difference


def test_facts_say_which_call_of_which_file_each_value_comes_from(proj):
    before = _facts(proj)
    assert [c.get("via") for c in before] == [None]
    assert "value" not in before[0]["parameters"]["matmul_desc"]["COMPUTE_TYPE"]
    _index(proj)
    configs = _facts(proj)
    main = str((proj / "main.cpp").resolve())
    assert [c["via"] for c in configs] == [
        [{"caller": "main", "callee": "run_gemm", "path": main, "line": line, "column": 3}]
        for line in (LEGAL_LINE, ILLEGAL_LINE)]
    compute = [c["parameters"]["matmul_desc"]["COMPUTE_TYPE"] for c in configs]
    assert [x["name"] for x in compute] == ["CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_16F"]
    assert [(x["origin"]["path"], x["origin"]["line"]) for x in compute] == [(main, LEGAL_LINE), (main, ILLEGAL_LINE)]
    # what the caller could not hand over (a pointer) is the callee's own symbol, as without a caller
    assert all(c["unknowns"] == [] for c in configs), [c["unknowns"] for c in configs]


def test_a_changed_caller_invalidates_the_callees_result_once_reindexed(proj):
    _index(proj)
    assert [f["code"] for f in _check(proj)] == ["FL105"]
    main = proj / "main.cpp"
    text = main.read_text(encoding="utf-8")
    fixed = text.replace("CUBLAS_COMPUTE_16F, CUDA_R_16F", "CUBLAS_COMPUTE_32F, CUDA_R_32F")
    assert fixed != text
    main.write_text(fixed, encoding="utf-8")
    # before the index is refreshed the changed caller's calls are not used, and a note says so
    rc, out, err = run_cli("check", "--output-format", "json", proj / "gemm.cu")
    assert json.loads(out) == [] and "changed since `fusionlint index`" in err, err
    assert re.search(r"\(1 parsed, 1 cached\)", _index(proj))  # only main.cpp is parsed again
    assert _check(proj) == []  # gemm.cu did not change: its cached FL105 must not come back
    compute = [c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["name"] for c in _facts(proj)]
    assert compute == ["CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_32F"]


def test_the_index_is_reused_and_matches_callers_to_the_definition_by_usr(proj):
    first = _index(proj)
    assert re.search(r"2 files \(2 parsed, 0 cached\), 2 functions reaching cuBLASLt, 2 call sites of them", first), first
    second = _index(proj)
    assert re.search(r"2 files \(0 parsed, 2 cached\)", second), second  # nothing parsed again
    from fusionlint.run.project_index import project_index, forget
    from fusionlint.store import default_dir

    forget()
    index = project_index(default_dir(), proj / "compile_commands.json")
    assert index is not None
    gemm = index._record(str((proj / "gemm.cu").resolve()))
    caller = index._record(str((proj / "main.cpp").resolve()))
    (run_gemm,) = [f for f in gemm["functions"] if f["name"] == "run_gemm"]
    # the USR of run_gemm, declared in gemm.h, is the same in gemm.cu (CUDA) and in main.cpp (C++)
    assert [c["usr"] for c in caller["calls"] if c["context"]["via"][-1]["callee"] == "run_gemm"] == [run_gemm["usr"]] * 2
    reaches = run_gemm["reaches"]
    assert (reaches["compute"], reaches["scale"]) == (["matmul_desc.COMPUTE_TYPE"], ["matmul_desc.SCALE_TYPE"])
    assert set(reaches) == {"compute", "scale", "m", "n", "k"} and "layout_A.COLS" in reaches["m"]
    contexts, key = index.contexts_for(proj / "gemm.cu")
    assert len(contexts.calls[run_gemm["usr"]]) == 2 and key
    # main() is called from nowhere: an entry point of the project, run once without a caller
    from fusionlint.model.call_context import OUTSIDE
    entry, key = index.contexts_for(proj / "main.cpp")
    assert entry.calls == {"c:@F@main#": [OUTSIDE]} and key


def test_a_sample_called_inside_a_lambda_of_a_test_bench_gets_the_benchs_values(tmp_path):
    """fixtures/interprocedural/lambda_runner, the CUDALibrarySamples layout: main.cpp builds a
    Bench (a constructor that delegates to a fuller one deriving the leading dimensions) and hands
    a lambda calling sample.cu's sample_sgemm to Bench::run, which calls it through a std::function."""
    proj = tmp_path / "proj"
    shutil.copytree(CROSS_TU.parent / "lambda_runner", proj)

    def facts() -> list[dict]:
        rc, out, err = run_cli("facts", "-p", proj / "compile_commands.json", proj / "sample.cu")
        assert rc == 0, err
        return [c for c in json.loads(out) if c["kind"] == "matmul"]

    assert all(c["unknowns"] for c in facts())  # alone, every size and transpose comes from the caller
    assert "1 call sites of them" in _index(proj)
    (config,) = facts()
    assert config["unknowns"] == []
    p = config["parameters"]
    assert p["matmul_desc"]["TRANSA"]["value"] == 1 and p["matmul_desc"]["TRANSB"]["value"] == 0
    # transa = T: A is k x m with lda = k (derived in the delegated-to constructor)
    assert [p["layout_A"][f]["value"] for f in ("ROWS", "COLS", "LD")] == [48, 64, 48]
    assert [p["layout_B"][f]["value"] for f in ("ROWS", "COLS", "LD")] == [48, 32, 48]
    assert p["preference"]["MAX_WORKSPACE_BYTES"]["value"] == 1 << 22
    assert [(v["caller"], v["callee"]) for v in config["via"]] == [
        ("main", "Bench::run"), ("Bench::run", "lambda at main.cpp:7"), ("lambda at main.cpp:7", "sample_sgemm")]


# -- a header's CUTLASS templates, read where the project's files instantiate them ------------------

CUTLASS_HEADER = FIXTURES / "interprocedural" / "cutlass_header"


@pytest.fixture
def cutlass_proj(tmp_path: Path) -> Path:
    dest = tmp_path / "cutlass_proj"
    shutil.copytree(CUTLASS_HEADER, dest)
    return dest


def _header_check(proj: Path, *extra) -> list[dict]:
    rc, out, err = run_cli("check", "--output-format", "json", *extra, proj / "gemm_configs.cuh")
    assert rc in (0, 1), err
    return [f for f in json.loads(out) if f["code"] != "FL300"]


def test_a_header_template_gemm_is_checked_as_its_includer_instantiates_it(cutlass_proj):
    """gemm_configs.cuh binds nothing (TileM is a template parameter): alone, FL303 cannot be decided;
    with the project index, kernels.cu's CoopGemm<64> is checked at the header's line, naming the includer."""
    header_tile_line = 19  # using TileShape = cute::Shape<cute::Int<TileM>, ...>
    assert _header_check(cutlass_proj) == []
    run_cli("index", "-p", cutlass_proj / "compile_commands.json", "-j", "1")
    found = _header_check(cutlass_proj)
    assert [(f["code"], Path(f["path"]).name, f["line"]) for f in found] == [("FL303", "gemm_configs.cuh", header_tile_line)]
    related = [(Path(r["path"]).name, r["line"], r["message"]) for r in found[0]["related"]]
    assert any(name == "kernels.cu" and line == 6 and "instantiated here as proj::CoopGemm<64>" in msg
               for name, line, msg in related), related
    assert _header_check(cutlass_proj, "--no-index") == []

    rc, out, err = run_cli("facts", cutlass_proj / "gemm_configs.cuh")
    assert rc == 0, err
    gemms = sorted(json.loads(out), key=lambda g: g["context"])
    assert [g["context"] for g in gemms] == ["proj::CoopGemm<128>", "proj::CoopGemm<64>"]
    assert [g["mainloop"]["params"]["tile_shape"]["value"] for g in gemms] == [[128, 128, 64], [64, 128, 64]]
    assert [(Path(g["instantiated_at"]["path"]).name, g["instantiated_at"]["line"]) for g in gemms] == [
        ("kernels.cu", 5), ("kernels.cu", 6)]
    assert all(Path(g["path"]).name == "gemm_configs.cuh" and g["line"] == 42 for g in gemms)


def test_a_changed_includer_is_not_used_until_indexed_again(cutlass_proj):
    run_cli("index", "-p", cutlass_proj / "compile_commands.json", "-j", "1")
    kernels = cutlass_proj / "kernels.cu"
    kernels.write_text(kernels.read_text().replace("CoopGemm<64>", "CoopGemm<256>"))
    rc, out, err = run_cli("check", "--output-format", "json", cutlass_proj / "gemm_configs.cuh")
    assert rc in (0, 1), err
    assert [f for f in json.loads(out) if f["code"] == "FL303"] == []
    assert "changed since `fusionlint index`" in err
    run_cli("index", "-p", cutlass_proj / "compile_commands.json", "-j", "1")
    assert _header_check(cutlass_proj) == []  # CoopGemm<256> is legal


def test_a_header_that_instantiates_another_headers_template_takes_its_includers_bindings(tmp_path: Path):
    """header_kernel_base/dispatch.cuh (vLLM's dispatch header in small) names gemm_configs.cuh's gemm_3x with
    concrete tiles and the epilogue template its caller gives. Alone, the epilogue is a template template
    parameter nobody binds; with the index, main.cu's instantiations are placed at dispatch.cuh's lines."""
    proj = tmp_path / "proj"
    shutil.copytree(FIXTURES / "cutlass" / "extract" / "header_kernel_base", proj)

    def kernels(*extra) -> list[dict]:
        rc, out, err = run_cli("facts", *extra, proj / "dispatch.cuh")
        assert rc == 0, err
        return [g for g in json.loads(out) if g.get("library") == "cutlass" and g.get("mainloop")]

    alone = kernels("--no-index")
    assert sorted(g["line"] for g in alone) == [19, 21]
    assert all(any("template template parameter" in u for u in g["unknowns"]) for g in alone)
    run_cli("index", "-p", proj / "compile_commands.json", "-j", "1")
    indexed = kernels()
    assert sorted((g["line"], "PlainEpilogue" in g["context"]) for g in indexed) == [
        (19, False), (19, True), (21, False), (21, True)]
    for g in indexed:
        assert Path(g["path"]).name == "dispatch.cuh"
        assert (Path(g["instantiated_at"]["path"]).name, g["instantiated_at"]["line"]) == ("main.cu", 6)
        assert not any("template template parameter" in u for u in g["unknowns"])
        assert any("declared at" in n and "gemm_configs.cuh" in n for n in g["notes"])


def test_an_includer_that_leaves_the_gemm_open_gives_way_to_one_that_binds_it(tmp_path: Path):
    """gemm_configs.cuh is included by dispatch.cuh (which leaves the epilogue open) and, through it, by
    main.cu (which binds it). With both in the compilation database, the header's GEMMs are main.cu's four
    instantiations only; dispatch.cuh's two partial ones (the same GEMMs, epilogue unknown) are left out."""
    proj = tmp_path / "proj"
    shutil.copytree(FIXTURES / "cutlass" / "extract" / "header_kernel_base", proj)
    (proj / "compile_commands.json").write_text(json.dumps([
        {"directory": ".", "file": name, "arguments": ["nvcc", "-std=c++17", "-I.", "-c", name]}
        for name in ("dispatch.cuh", "main.cu")]), encoding="utf-8")
    run_cli("index", "-p", proj / "compile_commands.json", "-j", "1")
    rc, out, err = run_cli("facts", proj / "gemm_configs.cuh")
    assert rc == 0, err
    kernels = [g for g in json.loads(out) if g.get("library") == "cutlass" and g.get("mainloop")]
    assert len(kernels) == 4
    assert sorted(Path(g["instantiated_at"]["path"]).name for g in kernels) == ["main.cu"] * 4
    assert not any("template template parameter" in u for g in kernels for u in g["unknowns"])


def test_what_a_function_of_another_file_returns_reaches_the_gemm_through_the_index(tmp_path):
    """fixtures/interprocedural/returns: gemm.cu's BF16 GEMM takes its compute type, its workspace size
    and a version check from functions settings.cpp defines. The index keeps what each returns when
    that does not depend on the caller: a constant, or run-time data (cublasLtGetVersion())."""
    proj = tmp_path / "proj"
    shutil.copytree(CROSS_TU.parent / "returns", proj)

    def facts() -> list[dict]:
        rc, out, err = run_cli("facts", proj / "gemm.cu")
        assert rc == 0, err
        return [c for c in json.loads(out) if c["kind"] == "matmul"]

    alone = facts()[0]
    assert alone["parameters"]["matmul_desc"]["COMPUTE_TYPE"]["unknown"] == "result of default_compute() at line 12"
    assert _check(proj) == []
    # settings.cpp names no cuBLASLt GEMM function: it is indexed because gemm.cu calls what it defines
    assert "2 files (2 parsed, 0 cached)" in _index(proj)
    found = _check(proj)
    assert [(f["code"], f["line"]) for f in found] == [("FL105", 12)], found
    settings = str((proj / "settings.cpp").resolve())
    assert {"path": settings, "line": 9, "column": 48,
            "message": "CUBLAS_COMPUTE_16F comes from here (returned by default_compute())"} in found[0]["related"]
    configs = facts()
    assert [c["when"] for c in configs] == [["`lt_version() >= 120800` is true (line 13)"],
                                            ["`lt_version() >= 120800` is false (line 13)"]]
    for c in configs:
        compute = c["parameters"]["matmul_desc"]["COMPUTE_TYPE"]
        assert (compute["name"], compute["via"], compute["origin"]["path"]) == (
            "CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_16F, returned by default_compute()", settings)
        assert c["operands"]["workspace_size"]["value"] == 32 * 1024 * 1024
        # a global a setter changes and a counter are state, not constants: still unknown
        assert c["parameters"]["matmul_desc"]["SM_COUNT_TARGET"]["unknown"] == "result of mode() at line 17"
    from fusionlint.run.project_index import forget, project_index
    from fusionlint.store import default_dir

    forget()
    index = project_index(default_dir(), proj / "compile_commands.json")
    summaries = {r["label"]: r["value"] for r in index._record(settings)["returns"]}
    # not dtype_of, mode, calls, tile, nor alignment_of (which iteration of its loop returns is not known)
    assert set(summaries) == {"lt_version", "default_compute", "workspace_mib"}
    assert summaries["lt_version"]["runtime"] == \
        "`cublasLtGetVersion()`, which the cuBLASLt library loaded at run time returns"
    returns = index.contexts_for(proj / "gemm.cu")[0].returns
    version = next(v for usr, v in returns.items() if "lt_version" in usr)
    assert version.runtime.endswith(", returned by lt_version() (settings.cpp:4)")


def test_the_index_reads_a_file_that_calls_cublaslt_through_its_headers_and_skips_a_mere_mention(tmp_path):
    """bitsandbytes' ops.cu calls cuBLASLt only through macros of a header it includes (its own text
    never names it): it is indexed in the first pass. A file that merely mentions the name of an
    indexed function (``int make_desc = 0;``, as every CUTLASS example writes ``using Gemm = ...``
    where FasterTransformer has a method Gemm) is not parsed for it; nor is a system header
    (/usr/include/limits.h) or a computed include taken for a header that names cuBLASLt."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "compat.h").write_text(
        "#pragma once\n#include <limits.h>\n#include <cublasLt.h>\n"
        "typedef cublasLtMatmulDesc_t desc_t;\n#define lt_desc_create cublasLtMatmulDescCreate\n")
    (proj / "lib.cu").write_text(
        '#include "compat.h"\n'
        "void make_desc(desc_t* d, cublasComputeType_t c) { lt_desc_create(d, c, CUDA_R_32F); }\n")
    (proj / "other.cu").write_text("#include <limits.h>\nint make_desc = 0;\nint other() { return make_desc; }\n")
    # a project header with a computed include (CuTe's `#include CUDA_STD_HEADER(utility)`): not
    # taken for one that names cuBLASLt (with the CUTLASS headers every CUTLASS file was parsed: minutes)
    (proj / "traits.h").write_text("#define STD_HEADER(x) <x>\n#include STD_HEADER(utility)\n")
    (proj / "kernel.cu").write_text('#include "traits.h"\nint kernel_size() { return 1; }\n')
    (proj / "compile_commands.json").write_text(json.dumps([
        {"directory": str(proj), "file": name, "arguments": ["nvcc", "-I.", "-c", name]}
        for name in ("lib.cu", "other.cu", "kernel.cu")]), encoding="utf-8")
    rc, out, err = run_cli("index", "-p", proj / "compile_commands.json", "-j", "1")
    assert rc == 0, err
    assert re.search(r"3 files \(1 parsed, 0 cached, 2 without calls of indexed functions\), "
                     r"1 functions reaching cuBLASLt", err + out), err + out
