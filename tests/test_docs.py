"""The documentation: docs/rules.md's rule table is generated from the rulesets
(tools/gen_rule_table.py) and current; it lists what `fusionlint rule --all` lists (built-in codes
included); README keeps the quick start, stays short and points at docs/; docs/usage.md names every
command; every relative link of README and docs/ resolves (file and heading)."""
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


RULES_DOC = ROOT / "docs" / "rules.md"


def test_rule_table_is_current() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    assert _tool().rewrite(text) == text, "docs/rules.md's rule table is stale: run python3 tools/gen_rule_table.py"


def test_table_and_rule_command_come_from_the_same_rules() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
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


def test_readme_keeps_the_quick_start_and_stays_short() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e . && fusionlint fixtures/" in text
    assert "pip install -e '.[test]' && python -m pytest -q" in text
    assert len(text.splitlines()) <= 200
    for section in ("## Quick start", "## A first finding", "## Install", "## pre-commit", "## Editors"):
        assert section in text
    for doc in ("rules", "usage", "configuration", "cutlass-modes", "integrations", "verify", "calibrate", "trace",
                "evidence"):
        assert f"(docs/{doc}.md" in text, doc
    integrations = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    assert "## GitHub Actions" in integrations and "upload-sarif" in integrations


def test_usage_names_every_command() -> None:
    """Each subcommand of the command line is in docs/usage.md's command list (``probe`` was missing once)."""
    from fusionlint.cli import COMMANDS

    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    usage = text[text.index("## Commands"):text.index("## Exit status")]
    for command in COMMANDS:
        assert f"fusionlint {command}" in usage or command == "check" and "fusionlint [check]" in usage, command


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation but '-' and '_' dropped, spaces as '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def _broken_links(pages: list) -> tuple[int, list[str]]:
    """(links checked, the relative links of ``pages`` whose file or heading does not exist)."""
    checked, broken = 0, []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # an absolute URL
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            checked += 1
            if not dest.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.name}: {target} (no such heading)")
    return checked, broken


def test_every_relative_link_of_readme_and_docs_resolves() -> None:
    checked, broken = _broken_links([ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    assert checked >= 30 and broken == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Undecided checks\n\n[a](#undecided-checks) [b](#nowhere) [c](other.md) "
                    "[d](https://example.com/x.md)\n", encoding="utf-8")
    assert _broken_links([page]) == (3, ["page.md: #nowhere (no such heading)", "page.md: other.md (no such file)"])
    assert _anchor("The measured support table (FL127, `fusionlint calibrate`)") == \
        "the-measured-support-table-fl127-fusionlint-calibrate"
