"""README's rule table is generated from the rulesets (tools/gen_rule_table.py) and current;
it lists what `fusionlint rule --all` lists (built-in codes included); the quick start stays as
it is; the usage section names every command."""
from __future__ import annotations

import importlib.util
import re

from fusionlint.findings import BUILTIN_CODES

from cli_helpers import run_cli
from conftest import ROOT


def _tool():
    spec = importlib.util.spec_from_file_location("gen_rule_table", ROOT / "tools" / "gen_rule_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_rule_table_is_current() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _tool().rewrite(text) == text, "README.md's rule table is stale: run python3 tools/gen_rule_table.py"


def test_table_and_rule_command_come_from_the_same_rules() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("<!-- rules:begin -->"):text.index("<!-- rules:end -->")]
    rows = re.findall(r"^\| (FL\d{3}) \| `([a-z0-9-]+)` \| (\w+) \|", table, re.M)
    rc, out, _ = run_cli("rule", "--all")
    listed = [tuple(line.split()) for line in out.splitlines()]
    builtin = set(BUILTIN_CODES)
    # every row of the table, the built-in codes included, is what `rule --all` lists, in its order
    assert rc == 0 and rows == [(code, name, severity) for code, severity, name in listed]
    assert builtin <= {c for c, _, _ in rows}
    for code in sorted(builtin):
        rc, out, _ = run_cli("rule", code)
        assert rc == 0 and "built in" in out


def test_readme_keeps_the_quick_start() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e . && fusionlint fixtures/" in text
    assert "pip install -e '.[test]' && python -m pytest -q" in text
    for section in ("## What it checks", "## Install", "## Configuration", "## Suppressions and baseline",
                    "## pre-commit", "## GitHub Actions", "upload-sarif", "## Editor setup"):
        assert section in text


def test_readme_usage_names_every_command() -> None:
    """Each subcommand of the command line is in README's usage section (``probe`` was missing)."""
    from fusionlint.cli import COMMANDS

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    usage = text[text.index("## Using it"):text.index("## Configuration")]
    for command in COMMANDS:
        assert f"fusionlint {command}" in usage or command == "check" and "fusionlint [check]" in usage, command
