"""JUnit XML (as ruff and pylint write it): one ``testsuite`` per checked file, one failing
``testcase`` per finding, and one passing ``testcase`` for a file without findings, so CI
dashboards (GitLab, Jenkins) count checked files too. A file's notes that are not findings (headers
found nowhere) are its suite's ``system-err``."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from fusionlint.findings import Finding


def format_findings(findings: list[Finding], files: list[str], notes: list = ()) -> str:
    by_file: dict[str, list[Finding]] = {str(f): [] for f in files}
    for f in findings:
        by_file.setdefault(f.path, []).append(f)
    root = ET.Element("testsuites", name="fusionlint", tests="0", failures=str(len(findings)), errors="0")
    total = 0
    for path, items in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(max(len(items), 1)),
                              failures=str(len(items)), errors="0")
        if not items:
            ET.SubElement(suite, "testcase", name="fusionlint", classname=path, file=path)
        for f in items:
            case = ET.SubElement(suite, "testcase", name=f"fusionlint.{f.code}", classname=path, file=path,
                                 line=str(f.line), column=str(f.column))
            failure = ET.SubElement(case, "failure", message=f.message, type=f.severity)
            failure.text = f"{f.path}:{f.line}:{f.column}: {f.message} [{f.code}]" + (f"\nfix: {f.fix}" if f.fix else "")
        said = [f"note: {n.text()}" for n in notes if n.path == path]
        if said:
            ET.SubElement(suite, "system-err").text = "\n".join(said)
        total += max(len(items), 1)
    root.set("tests", str(total))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
