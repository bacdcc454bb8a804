"""``fusionlint trace``: the cuBLASLt log parser and ``--from-log`` on the logs recorded on
the H200 (fixtures/trace/h200/, cuBLASLt 13.1), compared with the static path on the same programs."""
from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from fusionlint.trace.calls import calls_of
from fusionlint.trace.facts import trace_facts, view_differences
from fusionlint.trace.log_parser import parse_fields, parse_lines, read_log

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "fixtures" / "trace" / "h200"
PROGRAMS = sorted([*(ROOT / "kernels_ref" / "cublaslt").glob("*.cpp"), *(ROOT / "fixtures" / "cublaslt" / "rules").glob("*.cpp")])
TRACED = [p for p in PROGRAMS if (LOGS / f"{p.stem}.log").exists()]

# Facts that differ for a reason, by program: (fact, why).
FACT_EXCEPTIONS = {
    "FL100_transa_int64_size": ("matmul_desc.TRANSA",
                                ("the program writes CUBLAS_OP_T with sizeInBytes=8; cuBLASLt rejects the write "
                                 "(FL100) and keeps CUBLAS_OP_N, which is what the log shows and what ran")),
}
# Rule codes the static path finds and the log alone cannot show, by program (with --static the
# traced configuration takes the buffer's C type from the linked static site, and they agree).
FINDING_EXCEPTIONS = {
    "FL124_bias_float_buffer": ("FL124", ("FL124 compares the C type of the bias pointer variable (float *) with "
                                          "the bias data type; the log has only the pointer's address")),
    "FL124_bias_float_buffer_declared_16bf": ("FL124", "the same: the log does not carry the bias buffer's C type"),
}


def _static(path: str, pch_dir: str):
    from fusionlint.frontend.clang.parse import ParseOptions
    from fusionlint.facts.extract import extract_file

    return extract_file(Path(path), ParseOptions(pch_dir=pch_dir))


@pytest.fixture(scope="module")
def static_facts(tmp_path_factory):
    """The static facts of every traced program, extracted once (precompiled headers shared)."""
    pch = str(tmp_path_factory.mktemp("pch"))
    paths = [str(p) for p in TRACED]
    with ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as ex:
        return dict(zip((Path(p).stem for p in paths), ex.map(_static, paths, [pch] * len(paths))))


@pytest.fixture(scope="module")
def rules_and_table():
    from fusionlint.run import support_select
    from fusionlint.rules.cached import rule_source

    choice = support_select.choose(None, 130100, "test")
    source = rule_source((), False, None, choice.path)
    return list(source.get()), source.support()


def _traced(stem: str, drop_levels: tuple[str, ...] = ()):
    text = (LOGS / f"{stem}.log").read_text(encoding="utf-8").splitlines(keepends=True)
    if drop_levels:
        # blanked, not removed: the other lines keep their numbers
        text = ["\n" if any(f"][{lv}][" in line for lv in drop_levels) else line for line in text]
    return trace_facts(calls_of(parse_lines(text, f"{stem}.log")))


def test_every_log_parses():
    logs = sorted(LOGS.glob("*.log"))
    assert len(logs) == len(TRACED) + 2  # the programs' logs and the two PyTorch logs
    assert len(TRACED) == 108
    configs = 0
    for log in logs:
        parsed = read_log(str(log))
        assert parsed.skipped == 0, (log.name, parsed.skipped_examples)
        assert parsed.version == 130100
        t = trace_facts(calls_of(parsed))
        assert t.configs, log.name
        configs += len(t.configs)
        assert not [u for tc in t.configs for u in tc.unknown_fields], log.name
    assert configs == 166  # distinct configurations over all logs (torch: 20 + 20)


def test_malformed_and_unknown_lines_are_counted_not_fatal():
    lines = ["garbage\n", "\n", "[2026-12-02 00:30:06][cublasLt][1][Api][cublasLtMatmul] A=[unclosed\n",
             "[2026-12-02 00:30:06][cuBLAS][1][Api][cublasGemmEx] m=1\n",
             ("[2026-12-02 00:30:06][cublasLt][1][Api][cublasLtMatmulAlgoGetHeuristic] Adesc=[type=R_16BF rows=8 "
              "cols=8 ld=8] Bdesc=[type=R_16BF rows=8 cols=8 ld=8] Cdesc=[type=R_16BF rows=8 cols=8 ld=8] "
              "Ddesc=[type=R_16BF rows=8 cols=8 ld=8] computeDesc=[computeType=COMPUTE_32F scaleType=R_32F "
              "someNewField=3]\n"),
             "[x][cublasLt][1][Weird][cublasLtFuture] ]]][[\n"]
    log = parse_lines(lines, "t.log")
    assert log.skipped == 3 and [n for n, _ in log.skipped_examples] == [1, 3, 4]
    t = trace_facts(calls_of(log))
    assert len(t.configs) == 1 and t.configs[0].unknown_fields == ["computeDesc.someNewField"]
    assert parse_fields("a=[b=[c=1] d=2] e") == {"a": {"b": {"c": "1"}, "d": "2"}, "": ["e"]}


def _distinct(configs: list) -> list:
    """The static configurations with the same content counted once, as a log's are (a log has no
    source lines): probe_tflops's `launch` lambda repeats the program's matmul with the same objects
    and values, once and then in its timing loop; in the log that is the same configuration."""
    out: list = []
    for c in configs:
        if not any(k.kind == c.kind and not view_differences(c, k)[0] for k in out):
            out.append(c)
    return out


def test_facts_from_each_log_equal_the_static_facts(static_facts):
    """Compared: every field of the matmul descriptor (compute and scale type, transposes, epilogue,
    bias/aux pointers present and their data types, aux ld, scale pointers present, scale modes,
    fast accumulation, pointer and fill mode, attributes written or not), of the four layouts
    (type, rows, cols, ld, order, batch count and stride) and of the preference, as the rules see
    them (``configuration_view``), for each static heuristic and matmul configuration against the
    traced configuration of the same kind. Not compared: fields the static path does not know (a
    function parameter, counted), the C types of pointer variables and the operands (addresses in
    the log, variables statically)."""
    equal, skipped = 0, 0
    for stem, facts in static_facts.items():
        t = _traced(stem)
        statics = _distinct([c for c in facts.configurations if c.kind in ("heuristic", "matmul")])
        traced = t.file_facts.configurations
        assert len(statics) == len(traced), stem
        bad = []
        for s in statics:
            results = [view_differences(s, c) for c in traced if c.kind == s.kind]
            diffs, n = min(results, key=lambda r: len(r[0]))
            skipped += n
            bad += [d for d in diffs if not (stem in FACT_EXCEPTIONS and d[0] == FACT_EXCEPTIONS[stem][0])]
            if diffs and not bad and stem not in FACT_EXCEPTIONS:
                bad = diffs
        assert not bad, (stem, bad)
        equal += stem not in FACT_EXCEPTIONS
    assert equal == len(TRACED) - len(FACT_EXCEPTIONS) == 107
    # every compared value is known statically: bf16_tn_gelu_aux's EPILOGUE_AUX_POINTER (`Aux.dev`
    # after `Aux = probe_matrix(...)`, the struct's implicit operator=) was the one that was not, a
    # struct member "not set on this path", until the assignment copied the returned struct's members
    assert skipped == 0


def test_findings_from_each_log_equal_the_static_findings(static_facts, rules_and_table):
    from fusionlint.rules.engine import run_rules

    rules, table = rules_and_table
    agree = 0
    for stem, facts in static_facts.items():
        static_codes = {f.code for f in run_rules(rules, facts, "sm_90", support=table)}
        traced_codes = {f.code for f in run_rules(rules, _traced(stem).file_facts, "sm_90", support=table)}
        if stem in FINDING_EXCEPTIONS:
            code, _why = FINDING_EXCEPTIONS[stem]
            assert static_codes - traced_codes == {code} and traced_codes <= static_codes, stem
            continue
        assert static_codes == traced_codes, stem
        agree += 1
    assert agree == len(TRACED) - len(FINDING_EXCEPTIONS) == 106


def test_findings_with_static_equal_the_static_findings(static_facts, rules_and_table):
    """With ``--static <the program>`` every traced configuration linked to a static site takes the
    facts only the source has (the C types of its pointer variables), so the two FL124 exceptions
    above agree too: every program with a log agrees."""
    from fusionlint.rules.engine import run_rules
    from fusionlint.trace.command import log_findings

    rules, table = rules_and_table
    agree, noted = 0, {}
    for stem, facts in static_facts.items():
        static_codes = {f.code for f in run_rules(rules, facts, "sm_90", support=table)}
        statics = [c for c in facts.configurations if c.kind in ("heuristic", "matmul")]
        t = _traced(stem)
        found, links = log_findings(t, rules, "sm_90", table, statics)
        assert {f.code for f in found} == static_codes, stem
        assert all(f.path == f"{stem}.log" for f in found), stem  # the findings stay at the log lines
        # every configuration is linked to its static site, except where the facts differ (FL100's
        # rejected write: what ran is not what the source writes; its findings agree all the same)
        assert all(links[id(tc)] for tc in t.configs) == (stem not in FACT_EXCEPTIONS), stem
        for f in found:
            notes = [r for r in f.related if r.message.startswith("buffer type from ")]
            if notes:
                noted[stem] = (f.code, notes)
        agree += 1
    assert agree == len(TRACED) == 108
    # only the findings that the source's buffer types made say where those came from
    assert sorted(noted) == sorted(FINDING_EXCEPTIONS)
    for stem, (code, notes) in noted.items():
        line = 27 if stem == "FL124_bias_float_buffer" else 29  # the SetAttribute of BIAS_POINTER
        assert code == "FL124" and [(Path(r.path).name, r.line) for r in notes] == [(f"{stem}.cpp", line)]
        assert notes[0].message == (f"buffer type from {notes[0].path}:{line} (const float *, written as "
                                    "CUBLASLT_MATMUL_DESC_BIAS_POINTER)")


def test_cublaslt_error_and_info_lines_do_not_change_findings(rules_and_table):
    from fusionlint.rules.engine import run_rules

    rules, table = rules_and_table
    for log in sorted(LOGS.glob("*.log")):
        full = run_rules(rules, _traced(log.stem).file_facts, "sm_90", support=table)
        bare = run_rules(rules, _traced(log.stem, ("Error", "Info")).file_facts, "sm_90", support=table)
        assert sorted((f.code, f.line) for f in full) == sorted((f.code, f.line) for f in bare), log.name


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fusionlint.cli", *args], check=False, capture_output=True,
                          text=True, cwd=ROOT, input=stdin, timeout=300)


def test_torch_summary_names_the_bias_epilogue_gemms_as_fused():
    logs = [str(LOGS / "torch_gemms-default.log"), str(LOGS / "torch_gemms-cublaslt.log")]
    r = _run("trace", "--from-log", *logs, "--output-format", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    # every GEMM PyTorch ran on the H200 is clean, against the bundled H200 support table too
    # (row-wise _scaled_mm was once flagged by FL127 from a sweep row the driver died on)
    assert report["findings"] == []
    bias = [g for g in report["gemms"] if g["epilogue"] == "BIAS"]
    # F.linear+bias in bf16, fp16 and fp32 and _scaled_mm +bias, in both logs
    assert len(bias) == 8 and all(g["fused"] and g["status"] == "ok" for g in bias)
    assert {g["types"]["A"] for g in bias} == {"R_16BF", "R_16F", "R_32F", "R_8F_E4M3"}
    assert all(g["m"] == 1024 and g["n"] == 256 and g["k"] == 512 for g in bias)
    assert all(g["algorithms"] and "algoId" in g["algorithms"][0] for g in bias)
    plain = [g for g in report["gemms"] if g["epilogue"] == "DEFAULT"]
    assert plain and not any(g["fused"] for g in plain)
    text = _run("trace", "--from-log", logs[0], "--summary", "--support-table", "none")
    assert text.returncode == 0
    assert "epilogue BIAS (fused: yes)" in text.stdout and "epilogue DEFAULT (fused: no)" in text.stdout


def test_from_log_text_json_sarif_and_errors():
    log = str(LOGS / "FL113_bias_type_32f.log")
    r = _run("trace", "--from-log", log)
    assert r.returncode == 1
    assert f"{log}:16:1: error: " in r.stdout and "[FL113]" in r.stdout
    assert "cuBLASLt said: Unsupported config of bias pointer type" in r.stdout
    j = json.loads(_run("trace", "--from-log", log, "--output-format", "json").stdout)
    assert [f["code"] for f in j["findings"]] == ["FL113"]
    assert j["gemms"][0]["status"] == "rejected at the heuristic query"
    sarif = json.loads(_run("trace", "--from-log", log, "--output-format", "sarif").stdout)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "FL113"
    stdin = _run("trace", "--from-log", "-", stdin=(LOGS / "FL113_bias_type_32f.log").read_text())
    assert stdin.returncode == 1 and "-:16:1: error:" in stdin.stdout
    missing = _run("trace", "--from-log", "no/such.log")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().count("\n") == 0 and "no/such.log" in missing.stderr
    assert _run("trace").returncode == 2


def test_static_site_link():
    log = str(LOGS / "FL113_bias_type_32f.log")
    src = "fixtures/cublaslt/rules/FL113_bias_type_32f.cpp"
    r = _run("trace", "--from-log", log, "--static", src, "--summary")
    assert r.returncode == 1
    assert f"static site: {src}:46" in r.stdout  # the heuristic query of the program
    assert f"{src}:" in r.stdout and "the same configuration is written here" in r.stdout


def test_static_buffer_type_at_the_log_line():
    log = str(LOGS / "FL124_bias_float_buffer.log")
    src = "fixtures/cublaslt/rules/FL124_bias_float_buffer.cpp"
    assert _run("trace", "--from-log", log).returncode == 0  # the log alone cannot show the buffer's type
    r = _run("trace", "--from-log", log, "--static", src, "--output-format", "json")
    assert r.returncode == 1, r.stderr
    (f,) = json.loads(r.stdout)["findings"]
    assert f["code"] == "FL124" and f["path"] == log and f["line"] == 15
    assert {"path": src, "line": 27, "message": f"buffer type from {src}:27 (const float *, written as "
            "CUBLASLT_MATMUL_DESC_BIAS_POINTER)"}.items() <= next(
        r for r in f["related"] if r["message"].startswith("buffer type")).items()


def test_trace_command_without_gpu_says_nothing_was_logged(tmp_path):
    r = _run("trace", "--log-dir", str(tmp_path), "--", sys.executable, "-c", "print(1)")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1\n"
    assert "no cuBLASLt call was logged" in r.stderr and "exited with status 0" in r.stderr
    r = _run("trace", "--", sys.executable, "-c", "import sys; sys.exit(3)")
    assert r.returncode == 0 and "exited with status 3" in r.stderr
    r = _run("trace", "--", "no-such-command-fusionlint")
    assert r.returncode == 2 and "command not found" in r.stderr and "Traceback" not in r.stderr
