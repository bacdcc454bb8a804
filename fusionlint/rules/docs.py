"""``fusionlint rule FLnnn``: a rule's documentation from its YAML definition."""
from __future__ import annotations

import textwrap

from fusionlint.rules.loader import Rule


def describe(rule: Rule) -> str:
    wrap = lambda s: textwrap.fill(" ".join(s.split()), width=88, initial_indent="  ", subsequent_indent="  ")  # noqa: E731
    parts = [f"{rule.id} {rule.name} ({rule.severity}; "
             f"{'arch ' + ', '.join(rule.arch) if rule.arch else 'all architectures'})", ""]
    if rule.summary:
        parts += [wrap(rule.summary), ""]
    parts += ["Message:", wrap(rule.message), "", "Fix:", wrap(rule.fix), "", "References:"]
    for ref in rule.references:
        line = f"  - {ref['source']}"
        if ref.get("section"):
            line += f" — {ref['section']}"
        if ref.get("url"):
            line += f" <{ref['url']}>"
        parts.append(line)
    ev = rule.evidence
    if ev:
        parts += ["", "Evidence:"]
        for key in ("fail", "pass"):
            for f in ev.get(key, []):
                parts.append(f"  {key}: {f}")
        if ev.get("device_record"):
            parts.append(f"  device record: {ev['device_record']}")
        if ev.get("observed"):
            parts.append(wrap("observed: " + ev["observed"]))
    parts += ["", f"Defined at {rule.source}"]
    return "\n".join(parts)


def rule_dict(rule: Rule) -> dict:
    """JSON form for ``fusionlint rule --output-format json``."""
    return {"id": rule.id, "name": rule.name, "severity": rule.severity, "scope": rule.scope,
            "arch": list(rule.arch), "summary": " ".join(rule.summary.split()),
            "message": " ".join(rule.message.split()), "fix": " ".join(rule.fix.split()),
            "references": list(rule.references), "evidence": rule.evidence, "defined_at": rule.source}
