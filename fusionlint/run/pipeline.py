"""One file through the pipeline: parse -> facts -> rules -> findings, isolated per file."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.defaults import DEFAULT_ARCH
from fusionlint.facts import extract
from fusionlint.facts.extract import EXTRACTORS, SkipFile, extract_file
from fusionlint.findings import Finding, not_checked

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fusionlint.frontend.cublaslt.api_data import ApiData
    from fusionlint.frontend.clang.parse import ParseOptions, UnitRecord
    from fusionlint.model.call_context import IndexContext
    from fusionlint.model.cublaslt_facts import FileFacts
    from fusionlint.rules.cached import RuleSource
    from fusionlint.rules.loader import Rule

__all__ = ["EXTRACTORS", "FileResult", "SkipFile", "check_file", "extract_file", "import_extractors"]

# the rules' engine, imported while libclang parses the first file (with the extractors)
RULE_MODULES = ("fusionlint.rules.engine",)


def import_extractors() -> None:
    """The readers and the rules' engine, up front (a process that forks several workers)."""
    extract.import_extractors((*EXTRACTORS, *RULE_MODULES))


@dataclass
class FileResult:
    path: str
    facts: FileFacts | None = None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # the file could not be checked
    skipped: str | None = None  # the file is not source code
    undecided: list = field(default_factory=list)  # findings.Undecided: checks unknown facts left open
    missing_headers: list[str] = field(default_factory=list)  # found nowhere: parsed as empty stand-ins
    functions_not_read: list[str] = field(default_factory=list)  # definitions the parse lost (-v notes)
    unit: UnitRecord | None = None  # the parse's record (None: no parse finished): what the result cache keeps


def check_file(path: Path, rules: Sequence[Rule] | RuleSource, options: ParseOptions,
               arch: str = DEFAULT_ARCH, api: ApiData | None = None, contexts: IndexContext | None = None,
               includers: list | None = None) -> FileResult:
    """The file's facts and findings. ``rules`` may be a ``RuleSource`` not read yet: it is read
    while libclang parses. ``api``: the stand-in headers and API model (``check``'s copies from its
    cache), else the shipped ones. ``contexts``: calls of the file's functions from other files, and
    what the functions of other files it calls return (the project index). ``includers``: [(path, ParseOptions)] of the project's files that include
    this one, in which its template GEMMs are instantiated (the project index)."""
    result = FileResult(str(path))

    def parsed(record: UnitRecord) -> None:
        result.unit = record

    try:
        from fusionlint.rules.cached import RuleSource

        source = rules if isinstance(rules, RuleSource) else None
        import fusionlint.run.cache  # noqa: F401 - before the parse's import thread starts (it may need it too)
        result.facts = extract_file(path, options, preload=source.preload if source is not None else None,
                                    also_import=RULE_MODULES, on_parse=parsed, api=api,
                                    **({"contexts": contexts} if contexts else {}),
                                    **({"includers": includers} if includers else {}))
        result.missing_headers = list(result.facts.missing_headers)
        result.functions_not_read = list(result.facts.functions_not_read)
        from fusionlint.rules.engine import run_rules

        result.findings = run_rules(list(source.get() if source is not None else rules), result.facts, arch,
                                    model=api.model() if api is not None else None,
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
