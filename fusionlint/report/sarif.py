"""SARIF 2.1.0 for GitHub code scanning (and any SARIF viewer).

``tool.driver.rules`` describes every rule (id, name, short/full description, help with the
fix and references, helpUri, default level); each result has ruleId/ruleIndex, level,
message, a location with a repository-relative URI (``uriBaseId: %SRCROOT%``), related
locations (e.g. "matmul descriptor created here") and partial fingerprints that do not depend
on line numbers. Notes about the run that are not findings (headers found nowhere) are the
invocation's ``toolExecutionNotifications`` (level ``note``), with the file as location.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from fusionlint import __version__
from fusionlint.decide.baseline import finding_key
from fusionlint.findings import BUILTIN_CODES, WARNING_CODES, Finding
from fusionlint.paths import relative_posix
from fusionlint.rules.loader import Rule
from fusionlint.sourcetext import line_hash

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"


def _text(s: str) -> str:
    return " ".join(s.split())


def _first_sentence(s: str) -> str:
    head = s.split(". ")[0].rstrip(".")
    return head if len(head) <= 200 else head[:197] + "..."


def rule_descriptor(rule: Rule) -> dict:
    from fusionlint.rules.docs import generic  # the templates' placeholders in words: no finding fills them

    summary, fix = _text(rule.summary) or _text(generic(rule.message)), _text(generic(rule.fix))
    refs = [r for r in rule.references if r.get("source")]
    ref_text = "".join(f"\n- {r['source']}" + (f" <{r['url']}>" if r.get("url") else "") for r in refs)
    ref_md = "".join(f"\n- " + (f"[{r['source']}]({r['url']})" if r.get("url") else r["source"]) for r in refs)
    d = {"id": rule.id, "name": rule.name,
         "shortDescription": {"text": _first_sentence(summary)},
         "fullDescription": {"text": summary},
         "help": {"text": f"{summary}\n\nFix: {fix}" + (f"\n\nReferences:{ref_text}" if refs else ""),
                  "markdown": f"{summary}\n\n**Fix:** {fix}" + (f"\n\n**References**{ref_md}" if refs else "")},
         "defaultConfiguration": {"level": LEVELS.get(rule.severity, "warning")},
         "properties": {"tags": ["cublaslt", rule.scope, *rule.arch], "precision": "high",
                        "problem.severity": "error" if rule.severity == "error" else "warning"}}
    url = next((r["url"] for r in refs if r.get("url")), None)
    if url:
        d["helpUri"] = url
    return d


def _builtin_descriptor(code: str, name: str, description: str, level: str) -> dict:
    return {"id": code, "name": name, "shortDescription": {"text": _first_sentence(description)},
            "fullDescription": {"text": description}, "help": {"text": description, "markdown": description},
            "defaultConfiguration": {"level": level}, "properties": {"tags": ["fusionlint"]}}


def _location(path: str, line: int, column: int, root: Path) -> dict:
    rel = relative_posix(path, root)
    # quoted from the name's bytes: a file name that is not UTF-8 keeps its bytes as %XX escapes
    artifact = ({"uri": quote(os.fsencode(rel)), "uriBaseId": SRCROOT} if rel is not None
                else {"uri": Path(path).resolve().as_uri()})
    region = {"startLine": max(line, 1)}
    if column > 0:
        region["startColumn"] = column
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _notification(note, root: Path) -> dict:
    d: dict = {"level": "note", "message": {"text": note.message},
               "descriptor": {"id": "missing-header"}}
    if note.path is not None:
        loc = _location(note.path, note.line, note.column, root)
        if not note.line:  # no line: the file itself
            del loc["physicalLocation"]["region"]
        d["locations"] = [loc]
    return d


def to_sarif(findings: list[Finding], rules: list[Rule], root: Path, notes: list = ()) -> dict:
    descriptors = [rule_descriptor(r) for r in rules]
    for code, (name, description) in BUILTIN_CODES.items():
        descriptors.append(_builtin_descriptor(code, name, description, "warning" if code in WARNING_CODES else "error"))
    for f in findings:  # a code no rule describes (a ruleset left out since): a minimal entry
        if f.code not in {d["id"] for d in descriptors}:
            descriptors.append(_builtin_descriptor(f.code, f.name, f.name, LEVELS.get(f.severity, "warning")))
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    occurrences: Counter[tuple[str, str]] = Counter()
    results = []
    for f in findings:
        lh = line_hash(f.path, f.line)
        occurrences[(f.path, lh)] += 1
        key = "|".join(finding_key(f, root))
        result = {"ruleId": f.code, "ruleIndex": index[f.code], "level": LEVELS.get(f.severity, "warning"),
                  "message": {"text": f.message + (f"\nFix: {f.fix}" if f.fix else "")},
                  "locations": [_location(f.path, f.line, f.column, root)],
                  "partialFingerprints": {
                      "primaryLocationLineHash": f"{lh}:{occurrences[(f.path, lh)]}",
                      "fusionlintFindingHash/v1": hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]}}
        if f.related:
            result["relatedLocations"] = [{"id": i, **_location(r.path, r.line, r.column, root),
                                           "message": {"text": r.message}} for i, r in enumerate(f.related)]
        results.append(result)
    driver = {"name": "fusionlint", "version": __version__, "semanticVersion": __version__, "rules": descriptors}
    run: dict = {"tool": {"driver": driver},
                 "originalUriBaseIds": {SRCROOT: {"uri": root.resolve().as_uri() + "/"}},
                 "results": results}
    if notes:
        run["invocations"] = [{"executionSuccessful": True,
                               "toolExecutionNotifications": [_notification(n, root) for n in notes]}]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def format_findings(findings: list[Finding], rules: list[Rule], root: Path, notes: list = ()) -> str:
    return json.dumps(to_sarif(findings, rules, root, notes), indent=2) + "\n"
