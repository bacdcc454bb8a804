"""What fusionlint's output must look like, whatever the input: shared by the fuzz tests and the
campaign. Each check returns a list of problems (empty: the output is valid)."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The SARIF 2.1.0 schema is shared project data, not part of the repository (as in tests/test_formats.py).
SARIF_SCHEMA = ROOT.parent / "shared" / "data" / "sarif-schema-2.1.0.json"

FINDING_LINE = re.compile(r"^(?P<path>.+?):(?P<line>[1-9]\d*):(?P<col>[1-9]\d*): (?P<sev>error|warning): "
                          r"(?P<msg>\S.*) \[(?P<code>FL\d{3})\]$")
NOTE_LINE = re.compile(r"^.+?:[1-9]\d*:[1-9]\d*: note: \S.*$")
FINDING_KEYS = {"path", "line", "column", "severity", "code", "name", "message", "fix", "related"}


def text_problems(out: str, path: str | None = None) -> list[str]:
    problems = []
    if out and not out.endswith("\n"):
        problems.append("text output does not end with a newline")
    for line in out.splitlines():
        m = FINDING_LINE.match(line)
        if m:
            if path is not None and m["path"] != path:
                problems.append(f"finding for another file: {line!r}")
        elif not NOTE_LINE.match(line):
            problems.append(f"text line of the wrong shape: {line!r}")
    return problems


def json_problems(out: str) -> list[str]:
    try:
        data = json.loads(out)
    except ValueError as exc:
        return [f"JSON does not parse: {exc}"]
    if not isinstance(data, list):
        return ["JSON output is not an array"]
    problems = []
    for d in data:
        if not isinstance(d, dict) or set(d) != FINDING_KEYS:
            problems.append(f"JSON finding with the wrong keys: {str(d)[:200]}")
            continue
        if not (isinstance(d["line"], int) and d["line"] >= 1 and isinstance(d["column"], int) and d["column"] >= 1):
            problems.append(f"JSON finding with a bad location: {d['line']}:{d['column']}")
        if d["severity"] not in ("error", "warning") or not re.fullmatch(r"FL\d{3}", str(d["code"])):
            problems.append(f"JSON finding with a bad severity or code: {d['severity']} {d['code']}")
        if not isinstance(d["message"], str) or not d["message"].strip() or "\n" in d["message"]:
            problems.append(f"JSON finding with a bad message: {d['message']!r}")
    return problems


@lru_cache(maxsize=1)
def _sarif_validator():
    import jsonschema

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def sarif_problems(out: str) -> list[str]:
    try:
        data = json.loads(out)
    except ValueError as exc:
        return [f"SARIF does not parse: {exc}"]
    if not SARIF_SCHEMA.is_file():
        return []  # parse-only where the shared schema is absent
    errors = sorted(_sarif_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [f"SARIF invalid at {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors[:3]]
