"""frontend/clang/explicit_instantiations.py: explicit instantiations of function templates become
functions the interpreter can run (libclang does not visit the instantiation lines themselves)."""
from __future__ import annotations

import clang.cindex as ci

from conftest import FIXTURES
from fusionlint.frontend.clang import explicit_instantiations as ei
from fusionlint.frontend.clang.parse import ParseOptions, parse_file

FORMS = FIXTURES / "interprocedural" / "explicit_instantiation_forms.cpp"


def test_only_function_template_instantiations_get_a_reference_on_their_own_line():
    text = FORMS.read_text()
    out, spans = ei.synthesize(text)
    assert out.count("\n") == text.count("\n")  # no line moves
    assert [line for line, _ in spans] == [12, 13, 14]
    lines, before = out.splitlines(), text.splitlines()
    for line, column in spans:
        assert lines[line - 1][:column - 1] == before[line - 1][:column - 1]  # nothing before the added text moves
        assert lines[line - 1][column - 1:].startswith(f" static void {ei.PREFIX}")
    assert "&first<int64_t>" in lines[12] and "&twice;" in lines[11] and "&twice<float>" in lines[13]
    assert ei.synthesize("int f();\n") == ("int f();\n", [])


def test_the_references_resolve_to_the_instantiated_definitions_and_add_no_diagnostic():
    unit = parse_file(FORMS, ParseOptions(), text=FORMS.read_text())
    assert [d for d in unit.diagnostics if d.severity in ("error", "fatal")] == []
    found = {}
    for c in unit.tu.cursor.walk_preorder():
        if c.kind == ci.CursorKind.FUNCTION_DECL and ei.is_synthetic(c.spelling):
            ref = next(x.referenced for x in c.walk_preorder() if x.kind == ci.CursorKind.DECL_REF_EXPR
                       and x.referenced is not None and x.referenced.kind == ci.CursorKind.FUNCTION_DECL)
            found[c.location.line] = (ref.spelling, ref.type.spelling, ref.get_definition() is not None)
    assert found == {12: ("twice", "double (double)", True), 13: ("first", "long *(long *, int)", True),
                     14: ("twice", "float (float)", True)}


def test_a_reference_that_does_not_compile_leaves_no_diagnostic_of_its_own(tmp_path):
    src = tmp_path / "bad.cpp"
    text = "template <typename T> T id(T x) { return x; }\ntemplate Missing id(Missing);\n"
    src.write_text(text)
    unit = parse_file(src, ParseOptions(), text=text)
    errors = [d for d in unit.diagnostics if d.severity in ("error", "fatal")]
    assert errors and all(d.line == 2 and d.column < len("template Missing id(Missing);") + 1 for d in errors)


def test_non_type_template_arguments_are_constants_in_each_instantiation():
    from cli_helpers import run_cli
    import json

    rc, out, err = run_cli("facts", FIXTURES / "interprocedural" / "non_type_template_arguments.cu")
    assert rc == 0, err
    got = sorted(([v["callee"] for v in c["via"]], c.get("when") or [], c["line"],
                  c["parameters"]["matmul_desc"]["SCALE_TYPE"]["name"], c["parameters"]["layout_C"]["TYPE"]["name"])
                 for c in json.loads(out))
    # one configuration per instantiation, at the call its arguments take, no runtime condition
    assert got == [(["int8_gemm<32, false>"], [], 20, "CUDA_R_32I", "CUDA_R_32I"),
                   (["int8_gemm<8, false>"], [], 23, "CUDA_R_32F", "CUDA_R_8I")]
