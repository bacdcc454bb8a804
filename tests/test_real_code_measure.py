"""bench/real_code/ (the real-code bench): fetch.py builds the corpus, measure.py counts what
fusionlint extracted from each file.

No network and no ``.corpus/`` needed: ``fixtures/real_code/`` is a fake corpus of two small programs
written for this test (a cuBLASLt wrapper whose sizes come from its caller, a CUTLASS 3.x GEMM in a
class template), with a manifest shaped like the real one. measure.py runs over it end to end; the
counting, the reason categories and the report are also checked on hand-written data. Only the last
test looks at the real corpus, and only when it has been fetched.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
FAKE = FIXTURES / "real_code"
FAKE_MANIFEST = FAKE / "manifest.json"
FAKE_CORPUS = FAKE / "corpus"
WRAPPER = "example/lt-wrapper/src/gemm_wrapper.cpp"
CUTLASS_APP = "example/cutlass-app/gemm_sm90.cu"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"real_code_{name}", ROOT / "bench" / "real_code" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


measure = _load("measure")
fetch = _load("fetch")


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory) -> tuple[dict, str]:
    """measure.py over the fake corpus, as a user runs it (source mode, the working tree's fusionlint)."""
    out = tmp_path_factory.mktemp("real_code")
    rc = measure.main(["--manifest", str(FAKE_MANIFEST), "--corpus", str(FAKE_CORPUS), "--mode", "source",
                       "--worktree", "--no-undecided", "-j", "2", "--timeout", "240",
                       "--json", str(out / "run.json"), "--markdown", str(out / "RESULTS.md")])
    assert rc == 0
    return json.loads((out / "run.json").read_text()), (out / "RESULTS.md").read_text()


@pytest.fixture(scope="module")
def fake_run_alone(tmp_path_factory) -> tuple[dict, str]:
    """The same with --no-index: each file alone, the wrapper's sizes unknown (they come from caller.cpp)."""
    out = tmp_path_factory.mktemp("real_code_alone")
    rc = measure.main(["--manifest", str(FAKE_MANIFEST), "--corpus", str(FAKE_CORPUS), "--mode", "source",
                       "--worktree", "--no-undecided", "--no-index", "--group", "lt", "-j", "2", "--timeout", "240",
                       "--json", str(out / "run.json"), "--markdown", str(out / "RESULTS.md")])
    assert rc == 0
    return json.loads((out / "run.json").read_text()), (out / "RESULTS.md").read_text()


def _row(run: dict, path: str) -> dict:
    (row,) = [r for r in run["rows"] if r["path"].endswith(path)]
    return row


def test_the_cublaslt_wrapper_is_counted(fake_run_alone):
    run, _ = fake_run_alone
    row = _row(run, WRAPPER)
    assert row["mode"] == "source" and row["group"] == "lt"
    assert row["problems"] == [] and row["tracebacks"] == [] and row["internal_errors"] == []
    assert row["sites"] == {"cublasLtMatmul": 1, "cublasLtMatmulAlgoGetHeuristic": 1}
    f = row["facts"]
    assert f["cublaslt"]["gemms"] == 1 and f["cutlass"]["gemms"] == 0
    # written values, once per object (D is C's layout): desc COMPUTE_TYPE SCALE_TYPE TRANSB; A TYPE COLS
    # (+ROWS, LD from the caller); B TYPE ROWS COLS LD; C/D TYPE COLS (+ROWS, LD = rows); pref (+MAX_WORKSPACE)
    assert f["resolved"] == {"cublaslt": 11, "cutlass": 0}
    assert f["unknown"] == {"cublaslt": 5, "cutlass": 0}
    assert f["reasons"] == [{"library": "cublaslt", "category": "caller parameter", "count": 5}]
    assert f["details"][0]["detail"] == "parameter of bf16_gemm()" and f["details"][0]["count"] == 5
    assert row["check"]["errors"] == 0 and row["check"]["fl000"] == []
    assert row["facts_seconds"] > 0 and row["check_seconds"] > 0 and "undecided" not in row


def test_with_the_project_index_the_wrapper_gets_its_callers_values(fake_run):
    """caller.cpp (another translation unit of the group) calls bf16_gemm with 256 rows, lda 256 and
    a 1 MiB workspace: the corpus index hands them over, and every written value is resolved."""
    run, md = fake_run
    (index,) = run["meta"]["project index"]
    assert index["mode"] == "source" and index["files"] == 3 and index["problems"] == [] and index["rc"] == 0
    assert index["entry_points"] == 0  # bf16_gemm is called from caller.cpp
    # the CUTLASS file names neither cuBLASLt nor bf16_gemm: not parsed for the index
    assert "3 files (2 parsed, 0 cached, 1 without calls of indexed functions)" in index["summary"]
    assert "1 call sites of them" in index["summary"]
    row = _row(run, WRAPPER)
    f = row["facts"]
    assert f["resolved"] == {"cublaslt": 16, "cutlass": 0} and f["unknown"] == {"cublaslt": 0, "cutlass": 0}
    assert row["check"]["errors"] == 0 and row["check"]["fl000"] == []
    caller = _row(run, "src/caller.cpp")
    assert caller["facts"]["cublaslt"]["gemms"] == 0 and caller["problems"] == []
    assert "## Project index" in md and "| source | 3 | 2 |" in md


def test_the_cutlass_gemm_is_counted(fake_run):
    run, _ = fake_run
    row = _row(run, CUTLASS_APP)
    assert row["flags"] == ["-D", "FIXTURE_GEMM=1"]  # source mode: no CUTLASS headers even for a cutlass group
    assert row["sites"] == {"cutlass3": 3}
    f = row["facts"]
    assert f["cutlass"]["gemms"] == 1 and f["cutlass"]["modes"] == {"syntactic": 1}
    assert f["resolved"]["cutlass"] >= 30 and f["unknown"]["cutlass"] == 0  # the explicit instantiation resolves all
    assert row["check"] is not None and row["check"]["fl000"] == [] and row["tracebacks"] == []


def test_the_report_has_the_totals_and_a_row_per_file(fake_run):
    run, md = fake_run
    t = run["totals"]["source"]
    assert t["files"] == 3 and t["with_sites"] == 2 and t["with_configs"] == 2 and t["sites_without_configs"] == []
    assert t["tracebacks"] == 0 and t["timed_out"] == 0
    assert run["meta"]["fusionlint commit measured"].startswith("working tree at ")
    assert "date" in run["meta"]
    assert "### source mode" in md and "instantiated mode (" not in md  # only the mode measured
    assert "- **cuBLASLt attribute values resolved: 16 of 16 (100.0 %)**" in md
    # the matmul that runs the heuristic's algo is one GEMM with its query (counted as the query); it
    # is reached after `if (found == 0) return false;` (the count the heuristic writes is run-time data:
    # before bac45f8 it stayed 0 and the matmul was taken for unreachable, "0 mm")
    assert "| lt | `src/gemm_wrapper.cpp` | src | 30 | 0 | 2 | Lt 1 (1 mm / 1 heur / 0 desc) | " \
           "16/16 (100.0 %) |  | 0 E / 0 W | — | ok |" in md


def test_parameters_of_functions_no_file_calls_are_entry_point_inputs(fake_run_alone):
    """The wrapper's facts counted as if the index had seen no caller of bf16_gemm: its five caller
    parameters are the inputs of an entry point (the run above has caller.cpp, so none are left)."""
    run, _ = fake_run_alone
    rc, out, err = run_cli("facts", FAKE_CORPUS / WRAPPER)
    assert rc == 0, err
    counted = measure.count_facts(json.loads(out), frozenset({"bf16_gemm"}))
    assert counted["reasons"] == [{"library": "cublaslt", "category": measure.ENTRY_POINT, "count": 5}]
    assert measure.count_facts(json.loads(out))["reasons"][0]["category"] == "caller parameter"


def test_without_the_index_the_callers_values_are_unknown_by_reason(fake_run_alone):
    run, md = fake_run_alone
    assert "Not built (`--no-index`)" in md
    assert "- **cuBLASLt attribute values resolved: 11 of 16 (68.8 %)**" in md
    assert "| lt | `src/gemm_wrapper.cpp` | src | 30 | 0 | 2 | Lt 1 (1 mm / 1 heur / 0 desc) | " \
           "11/16 (68.8 %) | caller parameter 5 | 0 E / 0 W | — | ok |" in md
    assert "| caller parameter | 5 | 0 | 5 |" in md


def test_an_earlier_run_is_rendered_again(fake_run, tmp_path):
    run, md = fake_run
    (tmp_path / "run.json").write_text(json.dumps(run))
    out = tmp_path / "again.md"
    out.write_text("old\n<!-- notes:begin -->\nkept\n<!-- notes:end -->\n")
    assert measure.main(["--render", str(tmp_path / "run.json"), "--markdown", str(out)]) == 0
    again = out.read_text()
    assert again.startswith(md.rstrip("\n")) and again.endswith("\n<!-- notes:begin -->\nkept\n<!-- notes:end -->\n")


def test_plan_measures_the_cutlass_groups_twice_when_the_headers_are_there(tmp_path):
    man = json.loads(FAKE_MANIFEST.read_text())
    inc = tmp_path / "cutlass" / "include"
    inc.mkdir(parents=True)
    jobs = measure.plan(man, man["files"], FAKE_CORPUS, [inc], ["source", "instantiated"])
    assert [(f["path"], mode) for f, mode, _ in jobs] == [
        ("src/gemm_wrapper.cpp", "source"), ("src/caller.cpp", "source"), ("gemm_sm90.cu", "source"),
        ("gemm_sm90.cu", "instantiated")]
    assert str(inc) in jobs[3][2] and str(inc) not in jobs[2][2]
    assert len(measure.plan(man, man["files"], FAKE_CORPUS, [], ["source", "instantiated"])) == 3  # no headers
    assert measure.cutlass_dirs(str(tmp_path / "cutlass")) == [inc]


def test_a_file_over_the_time_limit_or_unreadable_is_a_row_not_a_crash(monkeypatch):
    monkeypatch.setattr(measure, "ROOT", FAKE_CORPUS)
    row = measure.measure_file(WRAPPER, flags=[], env={"PATH": "/usr/bin:/bin"}, timeout=0.05)
    assert row["timed_out"] and any("time limit" in p for p in row["problems"])
    assert "time limit" in measure._flags_cell(row)
    row = measure.measure_file("missing.cpp", flags=[], env={})
    assert row["problems"] and "cannot read" in row["problems"][0]
    md = measure.render_markdown([row], {})
    assert "problem" in md and "## Problems" in md


def test_count_facts_cutlass_and_unresolved_attribute_ids():
    loc = {"path": "x.cu", "line": 10, "column": 3}
    gemm = {"library": "cutlass", "api": "3.x", "kind": "GemmUniversalAdapter", "mode": "syntactic", "context": "",
            "line": 12,
            "mainloop": {"loc": loc, "params": {"tile_shape": {"value": [128, 128, 64]},
                                                "stages": {"unknown": "chosen by the collective builder from the "
                                                                      "shared memory left"},
                                                "element_a": {"unknown": "ElementA is a template parameter"},
                                                "cluster_shape": {"value": [None, 1, 1], "written": "ClusterShape"},
                                                "problem_shape": {"value": [None, 128, 64], "open": (
                                                    "extent 0 is not known: template parameter TB_M of "
                                                    "impl is not bound in this file")}}},
            "epilogue": None, "kernel": {"loc": loc, "params": {"tile_scheduler": {"value": "void"}}}, "gemm": None,
            "diagnostics": [], "parse_errors_nearby": []}
    lt = {"library": "cublaslt", "kind": "descriptor", "line": 5,
          "matmul_desc": {"id": 1, "sets": [{"attribute": None, "site": {"line": 7, "column": 3},
                                             "function": "cublasLtMatmulDescSetAttribute",
                                             "attribute_value": {"unknown": "attr is a parameter of f(); its value "
                                                                            "comes from the caller"}}]},
          "layouts": {"A": None, "B": None, "C": None, "D": None}, "preference": None,
          "parameters": {"matmul_desc": {"COMPUTE_TYPE": {"value": 68, "source": "create"},
                                         "EPILOGUE": {"value": 1, "source": "default"}}}}
    f = measure.count_facts([gemm, gemm, lt])  # the same GEMM twice counts once
    assert f["cutlass"]["gemms"] == 2 and f["cutlass"]["modes"] == {"syntactic": 2}
    assert f["resolved"] == {"cublaslt": 1, "cutlass": 2}
    assert f["unknown"] == {"cublaslt": 1, "cutlass": 4}  # a shape with an open extent is not resolved
    cats = {(x["library"], x["category"]): x["count"] for x in f["reasons"]}
    # an open extent is counted by the reason its facts give (``open``), else as its own category
    assert cats == {("cutlass", "chosen by the CUTLASS builder"): 1, ("cutlass", "template / dependent type"): 2,
                    ("cutlass", "shape extent not resolved"): 1,
                    ("cublaslt", "attribute id unknown"): 1}
    assert f["cublaslt"]["descriptor"] == 1


@pytest.mark.parametrize("reason, category", [
    ("k is a parameter of tuned(); its value comes from the caller", "caller parameter"),
    ("result of atoi() at line 22", "opaque call result"),
    ("set differently on paths through the branch at line 12", "branch / condition"),
    ("depends on the condition at line 61", "branch / condition"),
    ("sizeof: CollectiveEpilogue::SharedStorage is a member of the CUTLASS epilogue, only known with the CUTLASS "
     "headers", "CUTLASS headers needed"),
    ("'foo' did not resolve (parse error?)", "parse failure"),
    # without the facts' ``runtime`` (fusionlint did not say which run-time data it is)
    ("dereference of an unknown pointer", "other expression (array element, dereference, operator)"),
    ("A0 is runtime data (a part of inputA->flat_2d_dims(), line 325)",
     "other expression (array element, dereference, operator)"),
    ("`A0` not typed by the parser (an error nearby?)", "parse failure"),
    ("kFoo is not declared in this file", "not visible (other TU, undeclared)"),
    ("something new", "other"),
])
def test_classify(reason, category):
    assert measure.classify(reason) == category


def test_gemm_sites_ignore_comments_and_strings():
    text = ('// cublasLtMatmul(h, ...) in a comment\n/* GemmUniversalAdapter<X> */\n'
            'const char* s = "cublasLtMatmul(";\n'
            'cublasLtMatmulAlgoGetHeuristic(h, d);\ncublasLtMatmul (h);\n'
            'using Gemm = cutlass::gemm::device::GemmUniversalAdapter<K>;\n'
            'using G2 = cutlass::gemm::device::Gemm<float>;\n')
    assert measure.gemm_sites(text) == {"cublasLtMatmul": 1, "cublasLtMatmulAlgoGetHeuristic": 1, "cutlass3": 1,
                                        "cutlass2": 1}


def test_undecided_and_headers_not_found_are_read_from_stderr():
    err = ("fusionlint: a.cu:3:5: undecided: FL101 (x): why\nfusionlint: a.cu:9:1: undecided: FL101 (x): why\n"
           "a.cu:4:2: undecided: FL120 (y): because\n")
    assert measure.count_undecided(err) == {"total": 3, "codes": {"FL101": 2, "FL120": 1}}
    err = ("fusionlint: note: a.cu:5: header 'ATen/ATen.h' not found: checked with an empty stand-in in its place\n"
           "fusionlint: note: a.cu:9: header 'c10/x.h' not found: checked with an empty stand-in\n"
           "fusionlint: note: a.cu:5: header 'ATen/ATen.h' not found: again\n")
    assert measure.headers_not_found(err) == ["ATen/ATen.h", "c10/x.h"]


def test_hand_written_notes_survive_a_rewrite(tmp_path):
    out = tmp_path / "RESULTS.md"
    assert measure.with_notes("# new", out) == "# new"  # no file yet
    out.write_text("# old\n\n<!-- notes:begin -->\nby hand\n<!-- notes:end -->\n")
    assert measure.with_notes("# new", out) == "# new\n<!-- notes:begin -->\nby hand\n<!-- notes:end -->"


@pytest.mark.parametrize("manifest", [fetch.MANIFEST, FAKE_MANIFEST], ids=["real", "fake"])
def test_manifest_is_consistent(manifest):
    man = fetch.load_manifest(manifest)
    groups = man["groups"]
    seen = set()
    for f in man["files"]:
        assert f["group"] in groups and f["source"] in ("git", "index")
        assert len(f["commit"]) == 40 and all(c in "0123456789abcdef" for c in f["commit"])
        assert len(f["sha256"]) == 64 and f["bytes"] > 0
        key = (f["repo"], f["path"])
        assert key not in seen
        seen.add(key)
    for g in groups.values():
        for inc in g.get("include", ()):
            assert ".." not in Path(inc).parts
    if manifest == fetch.MANIFEST:
        assert sum(f["measure"] for f in man["files"]) >= 30
        cutlass_examples = {f["path"].split("/")[1][:2] for f in man["files"]
                            if f["repo"] == "NVIDIA/cutlass" and f["measure"]}
        assert {str(n) for n in range(48, 58)} <= cutlass_examples


def test_fetch_builds_the_fake_corpus_from_a_directory_and_from_pages(tmp_path, capsys):
    dest = tmp_path / "corpus"
    args = ["--manifest", str(FAKE_MANIFEST), "--dest", str(dest), "--offline"]
    assert fetch.main([*args, "--from-dir", str(FAKE_CORPUS)]) == 0
    assert (dest / "example" / "lt-wrapper" / WRAPPER.split("/", 2)[2]).read_bytes() == \
        (FAKE_CORPUS / WRAPPER).read_bytes()
    assert fetch.main(args) == 0  # present: nothing to do
    assert "3 present" in capsys.readouterr().err

    pages = tmp_path / "pages" / "example" / "cutlass-app"
    pages.mkdir(parents=True)
    data = (FAKE_CORPUS / CUTLASS_APP).read_bytes()
    for i in range(0, len(data), 500):
        (pages / f"gemm_sm90.cu.page{i // 500:03d}").write_bytes(data[i:i + 500])
    (dest / CUTLASS_APP).unlink()
    assert fetch.main([*args, "--from-pages", str(tmp_path / "pages"), "--group", "cutlass"]) == 0
    assert (dest / CUTLASS_APP).read_bytes() == data
    (pages / "gemm_sm90.cu.page001").unlink()  # a page missing: the rest is not the file
    (dest / CUTLASS_APP).unlink()
    assert fetch.main([*args, "--from-pages", str(tmp_path / "pages"), "--group", "cutlass"]) == 1
    assert "pages: " in capsys.readouterr().err and not (dest / CUTLASS_APP).exists()


def test_fetch_verifies_sha256_and_refuses_unsafe_paths(tmp_path, capsys):
    data = b"int main() { return 0; }\n"
    entry = {"repo": "o/r", "commit": "0" * 40, "path": "src/a.cpp", "sha256": hashlib.sha256(data).hexdigest(),
             "group": "g"}
    man = tmp_path / "manifest.json"
    man.write_text(json.dumps({"groups": {"g": {}}, "files": [entry]}))
    src = tmp_path / "src"
    (src / "o" / "r" / "src").mkdir(parents=True)
    (src / "o" / "r" / "src" / "a.cpp").write_bytes(b"tampered\n")
    dest = tmp_path / "corpus"
    assert fetch.main(["--manifest", str(man), "--dest", str(dest), "--from-dir", str(src), "--offline"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert any("o/r@000000000000:src/a.cpp: dir: sha256" in line for line in err)
    assert not (dest / "o" / "r" / "src" / "a.cpp").exists()
    bad = dict(entry, path="../escape.cpp")
    man.write_text(json.dumps({"groups": {"g": {}}, "files": [bad]}))
    assert fetch.main(["--manifest", str(man), "--dest", str(dest), "--from-dir", str(src), "--offline"]) == 1
    assert "unsafe path" in capsys.readouterr().err


def test_the_real_corpus_when_fetched():
    """Needs ``python bench/real_code/fetch.py`` first (skipped on a clean checkout): every file is there
    with its sha256, and most files measured have a GEMM site in their own text."""
    man = fetch.load_manifest()
    corpus = fetch.DEFAULT_DEST
    if not corpus.is_dir():
        pytest.skip(".corpus/ not fetched (bench/real_code/fetch.py)")
    bad = [f["path"] for f in man["files"]
           if not (p := fetch.corpus_path(corpus, f)).is_file() or fetch.sha256(p.read_bytes()) != f["sha256"]]
    assert bad == []
    measured = [f for f in man["files"] if f["measure"]]
    with_sites = [f for f in measured if measure.gemm_sites(fetch.corpus_path(corpus, f).read_text(errors="replace"))]
    assert len(with_sites) >= 25  # the others are callers (main.cpp) or instantiate a GEMM written in a header


def test_unknowns_the_facts_call_run_time_data_are_counted_by_what_that_data_is(tmp_path):
    """fixtures/interprocedural/entry_point with its project index: linear_forward's sizes come from a
    tensor, its other parameters are an entry point's input, its bias is set in a loop over them."""
    import shutil

    from conftest import FIXTURES

    proj = tmp_path / "proj"
    shutil.copytree(FIXTURES / "interprocedural" / "entry_point", proj)
    rc, _, err = run_cli("index", "-p", proj / "compile_commands.json", "-j", "2")
    assert rc == 0, err
    rc, out, err = run_cli("facts", proj / "linear.cu")
    assert rc == 0, err
    cats = {x["category"]: x["count"] for x in measure.count_facts(json.loads(out))["reasons"]}
    # counted once per layout object (C and D are one): batch and in_features (input.size(0),
    # input.size(1)) in 6 fields and the SM count; out_features in 3, and transpose; LtWrapper::gemm,
    # no file's call either: m, n, k in its 3 layouts' 9 extents and its object's a_type_;
    # described_gemm's A type, a field of the struct gemm_input() returned
    assert cats == {measure.RUNTIME_OBJECT: 7 + 1, measure.RUNTIME_INPUT: 4 + 10, measure.RUNTIME_BRANCH: 1}, cats
