"""README's rule table is generated from the rulesets (tools/gen_rule_table.py) and current;
it lists what `fusionlint rule --all` lists; the quick start stays as it is."""
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
    assert rc == 0 and [(c, n, s) for c, n, s in rows if c not in builtin] == \
        [(code, name, severity) for code, severity, name in listed]
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
