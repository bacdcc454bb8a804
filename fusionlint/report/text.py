"""``path:line:col: severity: message [FLnnn]`` — the shape of gcc diagnostics, which VS Code's
``$gcc`` problem matcher and GitHub's matchers parse."""
from __future__ import annotations

from fusionlint.findings import Finding


def format_findings(findings: list[Finding], show_fix: bool = True) -> str:
    lines = []
    for f in findings:
        lines.append(f"{f.path}:{f.line}:{f.column}: {f.severity}: {f.message} [{f.code}]")
        if show_fix and f.fix:
            lines.append(f"{f.path}:{f.line}:{f.column}: note: fix: {f.fix}")
        for r in f.related:
            lines.append(f"{r.path}:{r.line}:{r.column}: note: {r.message}")
    return "\n".join(lines) + ("\n" if lines else "")
