"""One file through the pipeline: parse -> facts -> rules -> findings, isolated per file."""
from __future__ import annotations

import codecs
import importlib
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.findings import Finding, not_checked
from fusionlint.frontend.parse import ParseOptions, parse_file
from fusionlint.path_alias import renamed, utf8_alias

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from fusionlint.facts import FileFacts
    from fusionlint.rules.cached import RuleSource
    from fusionlint.rules.loader import Rule

# What runs after the parse: imported while libclang parses (see extract_file), or up front by a
# process that forks several workers (check.py). The CUTLASS reader only for a file that names
# cutlass or cute (frontend/cutlass.py reads nothing else).
CUBLASLT_EXTRACTORS = ("fusionlint.frontend.cublaslt", "fusionlint.rules.engine")
EXTRACTORS = (*CUBLASLT_EXTRACTORS, "fusionlint.frontend.cutlass")


def may_hold_cutlass(text: str) -> bool:
    """A cheap necessary condition of ``extract_cutlass``'s own test (``\\bcutlass\\b|\\bcute\\b``)."""
    return "cutlass" in text or "cute" in text


def import_extractors(names: tuple[str, ...] = EXTRACTORS) -> None:
    for name in names:
        importlib.import_module(name)


def _import_during_parse(text: str, preload: Callable[[], object] | None = None) -> threading.Thread | None:
    """Import the extractors (and call ``preload``: read the rules) in a thread while the main
    thread parses (libclang releases the GIL while it parses, so this costs no wall time when a
    core is free); None when there is nothing to do."""
    names = EXTRACTORS if may_hold_cutlass(text) else CUBLASLT_EXTRACTORS
    if preload is None and all(name in sys.modules for name in names):
        return None
    # what the parse itself imports or makes, first, so that the two threads never import the same
    # module at the same time
    import fusionlint.cache  # noqa: F401
    import fusionlint.prefilter  # noqa: F401
    from fusionlint.frontend.parse import stand_in_headers

    stand_in_headers()
    thread = threading.Thread(target=_quiet_import, args=(names, preload), name="fusionlint-imports", daemon=True)
    thread.start()
    return thread


def _quiet_import(names: tuple[str, ...], preload: Callable[[], object] | None) -> None:
    try:
        import_extractors(names)
        from fusionlint.frontend.api.model import load_model

        load_model()
        if preload is not None:
            preload()
    except BaseException:  # noqa: BLE001 - the main thread does it again and reports the error
        pass


class SkipFile(Exception):
    """A file that is not C++ source after all (e.g. binary content behind a .h name)."""


@dataclass
class FileResult:
    path: str
    facts: FileFacts | None = None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # the file could not be checked
    skipped: str | None = None  # the file is not source code
    undecided: list = field(default_factory=list)  # findings.Undecided: checks unknown facts left open
    missing_headers: list[str] = field(default_factory=list)  # found nowhere: parsed as empty stand-ins


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise SkipFile("binary content (NUL bytes), not C++ source")
    # one '?' per byte that is not UTF-8, so columns stay the byte columns on disk
    return data.decode("utf-8", errors="one_byte_question_mark")


def _one_byte_per_bad_byte(err: UnicodeDecodeError) -> tuple[str, int]:
    return "?" * (err.end - err.start), err.end


codecs.register_error("one_byte_question_mark", _one_byte_per_bad_byte)


def extract_file(path: Path, options: ParseOptions, preload: Callable[[], object] | None = None) -> FileFacts:
    """The file's facts. ``preload`` runs in a thread while libclang parses (``check_file`` reads
    the rules there when they have not been read yet)."""
    text = _read_text(path)
    alias = utf8_alias(path)  # a name libclang cannot take (not UTF-8) is parsed under an alias
    importer = _import_during_parse(text, preload)
    try:
        unit = parse_file(alias or path, options, text=text)
    finally:
        if importer is not None:
            importer.join()
    from fusionlint.frontend import cublaslt

    facts = cublaslt.extract(unit, text)
    if may_hold_cutlass(text):
        try:
            from fusionlint.frontend.cutlass import extract_cutlass

            facts.cutlass = extract_cutlass(unit, text)
        except Exception as exc:  # noqa: BLE001 - a CUTLASS-reader bug must not hide the cuBLASLt findings
            facts.internal_errors.append(f"CUTLASS extraction failed: {type(exc).__name__}: {exc}".splitlines()[0])
    return renamed(facts, str(alias), str(path)) if alias else facts


def check_file(path: Path, rules: Sequence[Rule] | RuleSource, options: ParseOptions,
               arch: str = "sm_90") -> FileResult:
    """The file's facts and findings. ``rules`` may be a ``RuleSource`` not read yet: it is read
    while libclang parses."""
    result = FileResult(str(path))
    try:
        from fusionlint.rules.cached import RuleSource

        source = rules if isinstance(rules, RuleSource) else None
        result.facts = extract_file(path, options, preload=source.preload if source is not None else None)
        result.missing_headers = list(result.facts.missing_headers)
        from fusionlint.rules.engine import run_rules

        result.findings = run_rules(list(source.get() if source is not None else rules), result.facts, arch,
                                    support=source.support() if source is not None else None,
                                    undecided=result.undecided)
        result.findings += [not_checked(path, reason, part=True) for reason in result.facts.internal_errors]
    except SkipFile as exc:
        result.skipped = str(exc)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        result.error = reason
        result.findings = [not_checked(path, reason)]
    return result
