"""One file through the pipeline: parse -> facts -> rules -> findings, isolated per file."""
from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.facts import FileFacts
from fusionlint.findings import INTERNAL_ERROR, Finding
from fusionlint.frontend import cublaslt
from fusionlint.frontend.cutlass import extract_cutlass
from fusionlint.frontend.parse import ParseOptions, parse_file
from fusionlint.rules.engine import run_rules
from fusionlint.rules.loader import Rule


class SkipFile(Exception):
    """A file that is not C++ source after all (e.g. binary content behind a .h name)."""


@dataclass
class FileResult:
    path: str
    facts: FileFacts | None = None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # the file could not be checked
    skipped: str | None = None  # the file is not source code


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise SkipFile("binary content (NUL bytes), not C++ source")
    # one '?' per byte that is not UTF-8, so columns stay the byte columns on disk
    return data.decode("utf-8", errors="one_byte_question_mark")


def _one_byte_per_bad_byte(err: UnicodeDecodeError) -> tuple[str, int]:
    return "?" * (err.end - err.start), err.end


codecs.register_error("one_byte_question_mark", _one_byte_per_bad_byte)


def extract_file(path: Path, options: ParseOptions) -> FileFacts:
    text = _read_text(path)
    unit = parse_file(path, options, text=text)
    facts = cublaslt.extract(unit)
    try:
        facts.cutlass = extract_cutlass(unit, text)
    except Exception as exc:  # noqa: BLE001 - a CUTLASS-reader bug must not hide the cuBLASLt findings
        facts.internal_errors.append(f"CUTLASS extraction failed: {type(exc).__name__}: {exc}".splitlines()[0])
    return facts


def check_file(path: Path, rules: list[Rule], options: ParseOptions, arch: str = "sm_90") -> FileResult:
    result = FileResult(str(path))
    try:
        result.facts = extract_file(path, options)
        result.findings = run_rules(rules, result.facts, arch)
        result.findings += [Finding(INTERNAL_ERROR, "file-not-checked", "error", str(path), 1, 1,
                                    f"part of the file not checked: {reason}")
                            for reason in result.facts.internal_errors]
    except SkipFile as exc:
        result.skipped = str(exc)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        result.error = reason
        result.findings = [Finding(INTERNAL_ERROR, "file-not-checked", "error", str(path), 1, 1,
                                   f"file not checked: {reason}")]
    return result
