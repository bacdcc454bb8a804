"""Output formats: one module each; ``render`` picks one."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.findings import Finding

FORMATS = ("text", "json", "sarif", "github", "junit")


@dataclass
class ReportContext:
    root: Path  # repository root: SARIF URIs and annotation paths are relative to it
    files: list[str] = field(default_factory=list)  # the files checked (JUnit lists clean ones too)
    rules: list = field(default_factory=list)  # the rules in effect (SARIF's tool.driver.rules)
    show_source: bool = False
    color: bool = False
    notes: list = field(default_factory=list)  # notes.Note: headers found nowhere (SARIF, github, junit)


def write_output(output_file: str | None, out: str) -> None:
    """The report to ``--output-file`` (``-o``), else to standard output; a file that cannot be
    written is a one-line input error (exit status 2)."""
    import sys

    from fusionlint.errors import UsageError

    if output_file:
        try:
            Path(output_file).write_text(out, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{output_file}: cannot write: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(out)


def run_notes(ctx: ReportContext) -> list:
    """The notes of a run as one list (a run-level summary instead of its per-file details):
    what SARIF's notifications and GitHub's ``::notice`` commands show. JSON keeps to findings,
    text has them on stderr."""
    return [n for n in ctx.notes if not n.detail]


def render(fmt: str, findings: list[Finding], ctx: ReportContext) -> str:
    if fmt == "json":
        from fusionlint.report import json_format
        return json_format.format_findings(findings)
    if fmt == "sarif":
        from fusionlint.report import sarif
        return sarif.format_findings(findings, ctx.rules, ctx.root, notes=run_notes(ctx))
    if fmt == "github":
        from fusionlint.report import github
        return github.format_findings(findings, ctx.root, notes=run_notes(ctx))
    if fmt == "junit":
        from fusionlint.report import junit
        return junit.format_findings(findings, ctx.files, notes=[n for n in ctx.notes if n.path is not None])
    from fusionlint.report import text
    return text.format_findings(findings, show_source=ctx.show_source, color=ctx.color)
