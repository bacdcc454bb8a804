"""``fusionlint rule FLnnn``: a rule's documentation from its YAML definition."""
from __future__ import annotations

import textwrap

from fusionlint.rules.loader import Rule


# What a placeholder of a rule's message or fix stands for, where no finding fills it in (SARIF's
# rule help, ``fusionlint rule``): GitHub code scanning would show ``{attribute_type}`` as it is.
_PLACEHOLDERS = {
    "function": "the SetAttribute function", "attribute": "the attribute", "attribute_type": "the attribute's type",
    "attribute_size": "the size of the attribute's type", "size": "the size passed", "buffer": "the buffer",
    "buffer_type": "the buffer's type",
    "size_fix": "pass a variable of the attribute's own type and sizeof of it (each finding says what is wrong "
                "here: the size, the buffer's type, or both)",
    "aux_ld_multiple": "8 (GELU) or 128 (ReLU)",
    "expected_bias_type": "the bias type this GEMM takes (the D type; for FP8 the FP8 table's bias type)",
    "expected_scale_types": "the scale type of the compute type", "tile_k_multiple": "the K granularity of the type",
}
_PARTS = {"matmul_desc": "CUBLASLT_MATMUL_DESC_", "preference": "CUBLASLT_MATMUL_PREF_"}


def placeholder_text(name: str) -> str:
    """Words for a ``{placeholder}``: ``{layout_D.TYPE}`` -> "the D type", ``{matmul_desc.TRANSA}`` ->
    "CUBLASLT_MATMUL_DESC_TRANSA", ``{k_extent}`` -> "the k extent"."""
    if name in _PLACEHOLDERS:
        return _PLACEHOLDERS[name]
    part, _, field = name.partition(".")
    if part.startswith("layout_") and field:
        m = part[len("layout_"):]
        return f"the {m} type" if field == "TYPE" else f"{m}'s CUBLASLT_MATRIX_LAYOUT_{field}"
    if part in _PARTS and field:
        return _PARTS[part] + field
    if field:
        return f"the {part}'s {field.replace('_', ' ')}"
    return "the " + name.replace("_", " ")


def generic(template: str) -> str:
    """A message or fix template with its placeholders in words (no finding to fill them from)."""
    import string

    out = []
    try:
        for literal, field_name, _spec, _conv in string.Formatter().parse(template):
            out.append(literal)
            if field_name is not None:
                out.append(placeholder_text(field_name))
    except ValueError:  # a lone brace: not a template
        return template
    return "".join(out)


def describe(rule: Rule) -> str:
    wrap = lambda s: textwrap.fill(" ".join(s.split()), width=88, initial_indent="  ", subsequent_indent="  ")  # noqa: E731
    parts = [f"{rule.id} {rule.name} ({rule.severity}; "
             f"{'arch ' + ', '.join(rule.arch) if rule.arch else 'all architectures'})", ""]
    if rule.summary:
        parts += [wrap(rule.summary), ""]
    parts += ["Message:", wrap(generic(rule.message)), "", "Fix:", wrap(generic(rule.fix)), "", "References:"]
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


def builtin_severity(code: str) -> str:
    """The severity of a built-in code (``findings.BUILTIN_CODES``): those of ``WARNING_CODES`` warn, the
    others are errors."""
    from fusionlint.findings import WARNING_CODES

    return "warning" if code in WARNING_CODES else "error"


def describe_builtin(code: str) -> str:
    from fusionlint.findings import BUILTIN_CODES

    name, description = BUILTIN_CODES[code]
    wrapped = textwrap.fill(" ".join(description.split()), width=88, initial_indent="  ", subsequent_indent="  ")
    return f"{code} {name} (built in, not a YAML rule; {builtin_severity(code)})\n\n{wrapped}"


def builtin_dict(code: str) -> dict:
    """JSON form of a built-in code, with the keys of ``rule_dict``."""
    from fusionlint.findings import BUILTIN_CODES

    name, description = BUILTIN_CODES[code]
    return {"id": code, "name": name, "severity": builtin_severity(code), "scope": "builtin", "arch": [],
            "summary": " ".join(description.split()), "message": "", "fix": "", "references": [], "evidence": {},
            "defined_at": "fusionlint/findings.py (built in)", "builtin": True}
