"""A JSON array of findings: path, line, column, severity, code, message (and fix, related)."""
from __future__ import annotations

import json

from fusionlint.findings import Finding


def format_findings(findings: list[Finding]) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"
