"""What a new user trips over: rules about something absent decided per attribute and the
checks unknown values leave undecided counted; a suppression after the last line of a
multi-line call; findings at the write that made the configuration wrong, the caret on the
argument; FL100's fix from what is actually wrong; no placeholders in SARIF's rule help;
`facts` naming where a value comes from and what a descriptor escaped to.

Each test runs the real command line (or the pipeline) on C++ programs written here, with the
stand-in cuBLASLt headers."""
from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import RULES, project, run_cli
from fusionlint.frontend.clang.parse import ParseOptions
from fusionlint.facts.extract import extract_file

HEAD = "#include <cstdint>\n#include <cublasLt.h>\n\n"

# GELU_AUX without EPILOGUE_AUX_POINTER, in the shape of NVIDIA's samples: the transpose comes from a
# parameter and the aux leading dimension is m (neither is known statically).
GELU_AUX = HEAD + """\
void gemm(cublasLtHandle_t lt, int32_t transa, int64_t m, const void *A, const void *B, void *D, void *ws) {
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_AUX;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
  int64_t aux_ld = m;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld));
  /*EXTRA*/
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, 64, m, 64);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, 64, 64, 64);
  cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, 64, m);
  const float alpha = 1.0f, beta = 0.0f;
  cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, D, ld, D, ld, nullptr, ws, 0, 0);
}
"""
EPILOGUE_LINE = 9  # the EPILOGUE set in GELU_AUX
MATMUL_LINE = 18


def _write(tmp_path: Path, text: str, name: str = "gemm.cpp") -> Path:
    src = tmp_path / name
    src.write_text(text, encoding="utf-8")
    return src


def _json(*argv) -> tuple[int, list[dict], str]:
    rc, out, err = run_cli("--no-system-headers", "--output-format", "json", *argv)
    return rc, json.loads(out), err


def _undecided(err: str) -> list[tuple[int, str, str]]:
    """(line, code, reasons) of the ``-v`` list of undecided checks."""
    return [(int(line), code, why) for line, code, why in
            re.findall(r"^fusionlint: .+?:(\d+):\d+: undecided: (FL\d{3}) \([a-z0-9-]+\): (.*)$", err, re.M)]


# ---- item 1: absence per attribute, undecided checks counted --------------------------------------

def test_gelu_aux_without_aux_pointer_is_found_although_transa_and_aux_ld_are_unknown(tmp_path: Path) -> None:
    src = _write(tmp_path, GELU_AUX)
    rc, found, _ = _json(src)
    assert rc == 1 and [(d["code"], d["line"]) for d in found] == [("FL110", EPILOGUE_LINE)]
    assert "EPILOGUE_AUX_POINTER is never set" in found[0]["message"]
    # FL111 is decided too: no aux pointer, so no aux LD check (its "present" test is false)
    assert "FL111" not in {d["code"] for d in found}


def test_bias_epilogue_without_bias_pointer_with_unknown_values(tmp_path: Path) -> None:
    src = _write(tmp_path, GELU_AUX.replace("CUBLASLT_EPILOGUE_GELU_AUX;", "CUBLASLT_EPILOGUE_GELU_AUX_BIAS;")
                 .replace("/*EXTRA*/", "void *aux = D;\n  cublasLtMatmulDescSetAttribute(desc, "
                                       "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux));"))
    rc, found, _ = _json(src)
    assert rc == 1 and [d["code"] for d in found] == ["FL112"]


def test_unknown_attribute_id_keeps_absence_undecided_and_it_is_counted(tmp_path: Path) -> None:
    src = _write(tmp_path, GELU_AUX.replace("int64_t m,", "int64_t m, cublasLtMatmulDescAttributes_t attr,")
                 .replace("/*EXTRA*/", "void *p = D;\n  cublasLtMatmulDescSetAttribute(desc, attr, &p, sizeof(p));"))
    rc, found, _ = _json(src)
    assert rc == 0 and found == []  # the unknown attribute may be the aux pointer
    rc, out, err = run_cli("--no-system-headers", "-v", src)
    assert rc == 0 and out == ""
    fl110 = [u for u in _undecided(err) if u[1] == "FL110"]
    assert [(line, code) for line, code, _ in fl110] == [(MATMUL_LINE + 1, "FL110")]  # at the matmul
    assert "whether matmul_desc.EPILOGUE_AUX_POINTER is set is not known" in fl110[0][2]
    assert "names an attribute that is not known (attr is a parameter of gemm()" in fl110[0][2]
    n = len(set(_undecided(err)))
    assert f"fusionlint: 1 file checked, 0 findings, {n} checks undecided (unknown values; listed above)\n" in err


def test_a_write_of_the_attribute_under_a_flag_is_checked_with_and_without_it(tmp_path: Path) -> None:
    """`if (with_aux) set(AUX_POINTER)`: the flag is a runtime choice, so the GEMM is checked
    both ways and FL110 holds only where the pointer is not set (it was undecided before)."""
    src = _write(tmp_path, GELU_AUX.replace("int64_t m,", "int64_t m, bool with_aux,")
                 .replace("/*EXTRA*/", "void *aux = D;\n  if (with_aux)\n    cublasLtMatmulDescSetAttribute(desc, "
                                       "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux));"))
    # `with_aux` is a parameter no call here passes: no error; FL110 is undecided, saying the condition,
    # or with FL002 selected a warning that names it
    rc, found, _ = _json(src)
    assert rc == 0 and found == []
    rc, out, err = run_cli("--no-system-headers", "-v", src)
    assert [(line, code) for line, code, _ in _undecided(err) if code == "FL110"] == [(9, "FL110")]
    assert any(why.startswith("only when `with_aux` is false (line 13), values fusionlint does not know")
               for _, code, why in _undecided(err) if code == "FL110")
    rc, found, _ = _json("--extend-select", "FL002", src)
    assert rc == 1 and [(f["code"], f["severity"]) for f in found] == [("FL002", "warning")]
    assert found[0]["message"].startswith("FL110 (aux-epilogue-without-pointer) only when `with_aux` is false (line 13)")
    assert found[0]["message"].endswith("is never set: cublasLtMatmul returns CUBLAS_STATUS_NOT_SUPPORTED")


def test_a_write_of_the_attribute_in_a_loop_keeps_that_attribute_undecided(tmp_path: Path) -> None:
    """A loop's trip count is run-time data, not a choice: whether the set ran stays undecided."""
    src = _write(tmp_path, GELU_AUX.replace("/*EXTRA*/", "void *aux = D;\n  for (int64_t i = 0; i < m; ++i)\n    "
                                            "cublasLtMatmulDescSetAttribute(desc, "
                                            "CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux));"))
    rc, found, _ = _json(src)
    assert rc == 0 and found == []
    _, _, err = run_cli("--no-system-headers", "-v", src)
    (fl110,) = [u for u in _undecided(err) if u[1] == "FL110"]
    assert "matmul_desc.EPILOGUE_AUX_POINTER is set only under a condition" in fl110[2]


def test_an_escaped_descriptor_keeps_absence_undecided(tmp_path: Path) -> None:
    src = _write(tmp_path, GELU_AUX.replace(HEAD, HEAD + "void configure(cublasLtMatmulDesc_t desc);\n")
                 .replace("/*EXTRA*/", "configure(desc);"))
    rc, found, _ = _json(src)
    assert rc == 0 and found == []
    _, _, err = run_cli("--no-system-headers", "-v", src)
    (fl110,) = [u for u in _undecided(err) if u[1] == "FL110"]
    assert "desc is passed to configure(), which fusionlint does not see" in fl110[2]


def test_summary_on_stderr_with_v_and_machine_formats_unchanged(tmp_path: Path) -> None:
    src = _write(tmp_path, GELU_AUX)
    rc, out, err = run_cli("--no-system-headers", "-v", src)
    assert rc == 1 and out.count("[FL110]") == 1
    listed = set(_undecided(err))
    assert {code for _, code, _ in listed} == {"FL125", "FL126"}  # the shapes depend on m
    assert all("m is a parameter of gemm(); its value comes from the caller" in why for _, _, why in listed)
    assert err.endswith(f"fusionlint: 1 file checked, 1 finding, {len(listed)} checks undecided "
                        "(unknown values; listed above)\n")
    rc, out, err = run_cli("--no-system-headers", src)  # not a terminal, no -v: no summary
    assert rc == 1 and "checked" not in err and "undecided" not in err
    for fmt in ("json", "sarif", "github", "junit"):
        rc, out, err = run_cli("--no-system-headers", "-v", "--output-format", fmt, src)
        assert rc == 1 and "undecided" not in out + err and "files checked" not in err and "file checked" not in err
    # an ignored rule's undecided checks are not counted
    rc, out, err = run_cli("--no-system-headers", "-v", "--ignore", "FL125,FL126", src)
    assert err.endswith("fusionlint: 1 file checked, 1 finding\n") and "undecided" not in err


def test_fully_known_reference_programs_leave_nothing_undecided() -> None:
    """Not noise: programs whose every value is known (NVIDIA-style reference kernels with literal
    sizes) have no undecided check, and neither do rules that cannot apply to them."""
    from conftest import ROOT

    kernels = [ROOT / "kernels_ref" / "cublaslt" / name for name in ("bf16_tn_gelu_aux.cpp", "fp8_e4m3_tn_scaled.cpp")]
    rc, out, err = run_cli("--no-system-headers", "-v", *kernels)
    assert rc == 0 and out == "" and "undecided" not in err
    assert err.endswith("fusionlint: 2 files checked, 0 findings\n")


def test_fl127_reads_the_per_attribute_absence(tmp_path: Path) -> None:
    """The support-table check (FL127) gets the same per-attribute absence: with TRANSA from a
    parameter, an aux pointer nobody set is "not set", not unknown."""
    from fusionlint.rules.engine import ConfigurationFacts, configuration_view
    from fusionlint.rules.support_check import table_config

    facts = extract_file(_write(tmp_path, GELU_AUX), ParseOptions(use_system_headers=False))
    (cfg,) = [c for c in facts.configurations if c.kind == "matmul"]
    config = table_config(configuration_view(cfg), ConfigurationFacts(cfg).absence_known)
    assert config["aux_pointer"] is False and config["bias_pointer"] is False
    assert config["transa"] is None  # the unknown value itself stays unknown


# ---- item 5: a suppression applies to the statement it ends ---------------------------------------

SPLIT_CALL = "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,\n" \
             "                                       &transa, sizeof(transa)));"


def _split_bad(tmp_path: Path, comment_after: str = "", before: str = "") -> Path:
    (bad,) = project(tmp_path, RULES / "FL100_transa_int64_size.cpp")
    call = "  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));"
    text = bad.read_text()
    assert call in text
    bad.write_text(text.replace(call, before + SPLIT_CALL + comment_after, 1))
    return bad


def test_suppression_after_the_last_line_of_a_multi_line_call(tmp_path: Path) -> None:
    bad = _split_bad(tmp_path / "a", comment_after="  // fusionlint: ignore[FL100]")
    assert _json(bad)[:2] == (0, [])  # suppressed, and no FL001 for the comment
    bad = _split_bad(tmp_path / "b", before="  // fusionlint: ignore-next-line[FL100]\n")
    assert _json(bad)[:2] == (0, [])  # the next line starts the statement: all of it
    bad = _split_bad(tmp_path / "c")
    rc, found, _ = _json(bad)
    assert rc == 1 and [(d["code"], d["line"]) for d in found] == [("FL100", 20)]  # the buffer, on the 2nd line
    bad = _split_bad(tmp_path / "d", comment_after="  // fusionlint: ignore[FL117]")
    rc, found, _ = _json(bad)  # a suppression of another code still suppresses nothing
    assert rc == 1 and sorted((d["code"], d["line"]) for d in found) == [("FL001", 20), ("FL100", 20)]


# ---- item 6: at the write that made the configuration wrong --------------------------------------

def _finding(path: Path, code: str) -> dict:
    rc, found, _ = _json(path)
    assert rc == 1
    (f,) = [d for d in found if d["code"] == code]
    return f


def _column_of(path: Path, line: int, text: str) -> int:
    return path.read_text().splitlines()[line - 1].index(text) + 1


def test_fl101_at_the_transa_write_with_the_heuristic_as_related(tmp_path: Path) -> None:
    (src,) = project(tmp_path, RULES / "FL101_fp8_nn_col.cpp")
    lines = src.read_text().splitlines()
    transa = next(i for i, line in enumerate(lines, 1) if "CUBLASLT_MATMUL_DESC_TRANSA, &transa" in line)
    heuristic = next(i for i, line in enumerate(lines, 1) if "cublasLtMatmulAlgoGetHeuristic(" in line)
    create = next(i for i, line in enumerate(lines, 1) if "cublasLtMatmulDescCreate(" in line)
    f = _finding(src, "FL101")
    assert (f["line"], f["column"]) == (transa, _column_of(src, transa, "&transa"))
    assert [(r["line"], r["message"]) for r in f["related"]] == [
        (heuristic, "cublasLtMatmulAlgoGetHeuristic is called with this configuration here"),
        (create, "matmul descriptor created here")]


def test_fl125_at_the_layout_argument_inside_a_macro_call_broken_over_lines(tmp_path: Path) -> None:
    (src,) = project(tmp_path, RULES / "FL125_d_rows_mismatch.cpp")
    create = "  PROBE(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, 64, 64, 64));"
    text = src.read_text()
    assert create in text
    src.write_text(text.replace(create, "  PROBE(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF,\n"
                                        "                                   64, 64, 64));", 1))
    line = next(i for i, l in enumerate(src.read_text().splitlines(), 1) if l.strip() == "64, 64, 64));")
    f = _finding(src, "FL125")
    assert (f["line"], f["column"]) == (line, _column_of(src, line, "64"))  # D's rows
    assert f["related"][0]["message"] == "cublasLtMatmulAlgoGetHeuristic is called with this configuration here"
    # suppression and baseline follow the finding to its statement
    _, out, _ = run_cli("--no-system-headers", "--show-source", src)
    assert out.splitlines()[2] == "      | " + " " * (_column_of(src, line, "64") - 1) + "^"
    base = tmp_path / "baseline.json"
    assert run_cli("--no-system-headers", "--baseline", base, "--update-baseline", src)[0] == 0
    assert _json("--baseline", base, src)[:2] == (0, [])
    split = "\n                                   64, 64, 64));\n"
    src.write_text(src.read_text().replace(split, split[:-1] + "  // fusionlint: ignore[FL125]\n"))
    assert _json(src)[:2] == (0, [])


def test_fl110_at_the_epilogue_write_and_fl120_at_the_layout_without_the_batch_count(tmp_path: Path) -> None:
    src = _write(tmp_path, GELU_AUX)
    f = _finding(src, "FL110")
    assert (f["line"], f["column"]) == (EPILOGUE_LINE, _column_of(src, EPILOGUE_LINE, "&epilogue"))
    assert f["related"][0] == {"path": str(src), "line": MATMUL_LINE, "column": 3,
                               "message": "cublasLtMatmul is called with this configuration here"}
    (batch,) = project(tmp_path / "b", RULES / "FL120_batch_count_b_unset.cpp")
    line = next(i for i, l in enumerate(batch.read_text().splitlines(), 1) if "LayoutCreate(&lb," in l)
    assert _finding(batch, "FL120")["line"] == line  # B is the layout whose count differs (never set)


def test_about_names_facts_of_the_rules_scope(tmp_path: Path) -> None:
    from fusionlint.rules.loader import RulesetError, load_ruleset, load_rules

    fl110 = next(r for r in load_rules() if r.id == "FL110")
    assert fl110.about == ("matmul_desc.EPILOGUE",) and fl110.at == "matmul"
    ruleset = tmp_path / "r.yaml"
    ruleset.write_text("""rules:
  - id: FL901
    name: demo
    severity: error
    scope: configuration
    about: [matmul_desc.EPILOG]
    when: {fact: matmul_desc.EPILOGUE, eq: CUBLASLT_EPILOGUE_BIAS}
    message: m
    fix: f
    references: [{source: s}]
""")
    try:
        load_ruleset(ruleset)
    except RulesetError as exc:
        assert "r.yaml:6: unknown fact 'matmul_desc.EPILOG'" in str(exc)
    else:
        raise AssertionError("a misspelt about fact was accepted")


# ---- item 7: FL100's fix says what is wrong ------------------------------------------------------

def test_fl100_fix_names_the_size_the_buffer_type_or_both(tmp_path: Path) -> None:
    src = _write(tmp_path, HEAD + """\
void f(cublasLtMatmulDesc_t desc, const float *bias, void *raw) {
  int32_t transa = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(int64_t));
  int64_t transb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb));
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(float));
  int16_t epi = 1;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, 8);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSC, raw, 8);
}
""")
    rc, found, _ = _json(src)
    assert rc == 1 and {d["code"] for d in found} == {"FL100"}
    fixes = {d["line"]: (d["column"], d["fix"]) for d in found if d["code"] == "FL100"}
    col = lambda line, text: _column_of(src, line, text)  # noqa: E731
    assert fixes == {
        6: (col(6, "sizeof(int64_t)"), "&transa (int32_t) is the right buffer for int32_t: pass sizeof(transa) = 4 as "
                                       "sizeInBytes, not 8"),
        8: (col(8, "&transb"), "the buffer &transb is int64_t (8 bytes) but the attribute holds int32_t (4 bytes): "
                               "declare it as int32_t, and sizeof of it is then 4"),
        9: (col(9, "sizeof(float)"), "&bias holds the pointer (const float *): pass sizeof(bias) = 8 as sizeInBytes, "
                                     "not 4 (the size of the pointer, not of what it points to)"),
        11: (col(11, "8)"), "both are wrong: the buffer &epi is int16_t (2 bytes) and sizeInBytes is 8; use a uint32_t "
                            "variable and pass sizeof of it (4)"),
        12: (col(12, "8)"), "pass sizeInBytes = 4 (sizeof(int32_t)) with a buffer that holds an int32_t"),
    }


# ---- item 8: no placeholders in the rules' help ------------------------------------------------------

def _placeholders(rule) -> set[str]:
    """The ``{placeholder}``s of a rule's message and fix templates, as written."""
    import string

    return {"{" + name + "}" for template in (rule.message, rule.fix)
            for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_sarif_rule_help_and_rule_docs_have_no_placeholders() -> None:
    from fusionlint.rules.loader import load_rules

    templates = {r.id: _placeholders(r) for r in load_rules()}
    assert {"{attribute_type}", "{size_fix}"} <= templates["FL100"] and "{aux_ld_multiple}" in templates["FL111"]
    assert sum(map(len, templates.values())) > 50
    rc, out, _ = run_cli("--no-system-headers", "--output-format", "sarif", RULES / "FL100_transa_int64_size.cpp")
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert len(rules) > 50
    for r in rules:
        for text in (r["help"]["text"], r["help"]["markdown"], r["fullDescription"]["text"],
                     r["shortDescription"]["text"]):
            left = [p for p in templates.get(r["id"], ()) if p in text]
            assert not left, (r["id"], left, text)
    fl100 = next(r for r in rules if r["id"] == "FL100")
    assert "Fix: pass a variable of the attribute's own type and sizeof of it" in fl100["help"]["text"]
    fl111 = next(r for r in rules if r["id"] == "FL111")
    assert "a multiple of 8 (GELU) or 128 (ReLU)" in fl111["help"]["text"]
    for code, placeholders in templates.items():
        rc, doc, _ = run_cli("rule", code)
        assert rc == 0 and not [p for p in placeholders if p in doc], (code, doc)


# ---- item 11: facts details ------------------------------------------------------------------------

ARGS_STRUCT = HEAD + """\
struct GemmArgs { int64_t m, n, k; int32_t transa; };
typedef void (*Hook)(cublasLtMatmulDesc_t);

void gemm(const GemmArgs &g, Hook hook, cublasLtHandle_t lt, const void *A, const void *B, void *D) {
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &g.transa, sizeof(g.transa));
  hook(desc);
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, g.k, g.m, g.k);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, g.k, g.n, g.k);
  cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, g.m, g.n, g.m);
  const float alpha = 1.0f, beta = 0.0f;
  cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, D, ld, D, ld, nullptr, nullptr, 0, 0);
}
"""


def test_facts_say_a_member_of_a_reference_parameter_comes_from_the_caller(tmp_path: Path) -> None:
    rc, out, _ = run_cli("facts", "--no-system-headers", _write(tmp_path, ARGS_STRUCT))
    (cfg,) = json.loads(out)
    assert rc == 0
    assert cfg["parameters"]["layout_A"]["COLS"]["unknown"] == "g.m comes from the caller (g is a parameter of gemm())"
    assert cfg["parameters"]["matmul_desc"]["TRANSA"]["unknown"] == \
        "g.transa comes from the caller (g is a parameter of gemm())"
    assert not any("not set on this path" in u for u in cfg["unknowns"])


def test_facts_name_an_escape_through_a_function_pointer(tmp_path: Path) -> None:
    rc, out, _ = run_cli("facts", "--no-system-headers", _write(tmp_path, ARGS_STRUCT))
    (cfg,) = json.loads(out)
    assert rc == 0 and cfg["matmul_desc"]["escaped_to"] == ["hook"]
    table = _write(tmp_path, ARGS_STRUCT.replace("hook(desc);", "Hook table[2] = {hook, hook};\n  table[1](desc);"),
                   "table.cpp")
    rc, out, _ = run_cli("facts", "--no-system-headers", table)
    assert rc == 0 and json.loads(out)[0]["matmul_desc"]["escaped_to"] == ["table[1]"]
