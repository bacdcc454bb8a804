"""Ruleset files: schema validation with one-line errors naming file and line."""
from __future__ import annotations

from pathlib import Path

import pytest

from fusionlint.cli import main
from fusionlint.rules.loader import RulesetError, load_ruleset

GOOD_RULE = """\
rules:
  - id: FL900
    name: my-rule
    severity: warning
    scope: attribute_set
    when: {fact: attribute, eq: CUBLASLT_MATMUL_DESC_TRANSA}
    message: "{attribute} set"
    fix: "do not"
    references: [{source: "my notes"}]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "rules.yaml"
    p.write_text(text)
    return p


def test_good_ruleset_loads(tmp_path: Path) -> None:
    (rule,) = load_ruleset(write(tmp_path, GOOD_RULE))
    assert rule.id == "FL900" and rule.source.endswith("rules.yaml:2")


@pytest.mark.parametrize("text, line, needle", [
    (GOOD_RULE.replace("severity: warning", "severity: fatal"), 4, "severity"),
    (GOOD_RULE.replace("    fix:", "    colour: red\n    fix:"), 2, "colour"),
    (GOOD_RULE.replace("when: {fact: attribute, eq: CUBLASLT_MATMUL_DESC_TRANSA}",
                       "when: {fact: nonsense.path, eq: 1}"), 6, "unknown fact"),
    (GOOD_RULE.replace("when: {fact: attribute, eq: CUBLASLT_MATMUL_DESC_TRANSA}",
                       "when: {derived: no_such_quantity, eq: 1}"), 6, "unknown derived quantity"),
    # a CUTLASS quantity in an attribute_set rule would read a view without its facts: never fires
    (GOOD_RULE.replace("when: {fact: attribute, eq: CUBLASLT_MATMUL_DESC_TRANSA}",
                       "when: {derived: tma_epilogue, eq: true}"), 6, "computed from cutlass facts"),
    (GOOD_RULE.replace("when: {fact: attribute, eq: CUBLASLT_MATMUL_DESC_TRANSA}",
                       "when: {derived: any_fp8_input, eq: true}"), 6, "not from the facts of this attribute_set"),
    (GOOD_RULE + GOOD_RULE[len("rules:\n"):], 10, "duplicate rule id FL900"),
    ("rules:\n  - id: FL900\n    name: [unclosed\n", 4, "YAML syntax error"),
    (GOOD_RULE.replace("id: FL900", "id: 900"), 2, "is not of type"),
    (GOOD_RULE.replace("id: FL900", "id: X900"), 2, "does not match"),
])
def test_bad_ruleset_one_line_error(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(RulesetError) as exc:
        load_ruleset(path)
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}:{line}:"), msg
    assert needle in msg


def test_bad_ruleset_on_command_line_exits_two(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, GOOD_RULE.replace("scope: attribute_set", "scope: everywhere"))
    rc = main(["check", "--ruleset", str(path), str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "rules.yaml:5" in err and "Traceback" not in err


def test_yaml_cannot_construct_python_objects(tmp_path: Path) -> None:
    path = write(tmp_path, "!!python/object/apply:os.system ['touch pwned']\n")
    with pytest.raises(RulesetError):
        load_ruleset(path)
    assert not Path("pwned").exists()


def test_user_ruleset_adds_rules(tmp_path: Path, capsys) -> None:
    rules = write(tmp_path, GOOD_RULE)
    src = Path(__file__).resolve().parents[1] / "fixtures" / "cublaslt" / "rules" / "FL100_transa_int32_ok.cpp"
    rc = main(["check", "--ruleset", str(rules), str(src)])
    out = capsys.readouterr().out
    assert rc == 1 and "warning: CUBLASLT_MATMUL_DESC_TRANSA set [FL900]" in out
