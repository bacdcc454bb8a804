"""``fusionlint test-rules``: check annotated fixtures, semgrep style.

``// ruleid: FLnnn`` means the next code line must get an FLnnn finding; ``// ok: FLnnn``
means it must not. Several codes may be listed, comma-separated. When that line starts a
statement broken over lines, a finding on any of its lines counts (a finding's caret sits on the
offending argument, which may be on a later line of the call).

The command checks the fixtures the way ``check`` checks files (``check.Checker``: each file's
settings from the command line, compilation database and config; the pre-filter; the result
cache; ``-j`` worker processes with a time limit; the progress line) and compares the findings
before suppression and selection with the annotations.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.defaults import DEFAULT_ARCH
from fusionlint.frontend.clang.parse import ParseOptions
from fusionlint.run.pipeline import check_file
from fusionlint.rules.loader import Rule

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from fusionlint.run.options import CheckOptions

ANNOTATION = re.compile(r"//\s*(ruleid|ok):\s*(FL\d{3}(?:\s*,\s*FL\d{3})*)")


@dataclass
class FixtureResult:
    path: Path
    expected: set[tuple[str, int]] = field(default_factory=set)
    forbidden: set[tuple[str, int]] = field(default_factory=set)
    missed: set[tuple[str, int]] = field(default_factory=set)
    unexpected: set[tuple[str, int]] = field(default_factory=set)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.missed or self.unexpected or self.error)


def annotations(text: str) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(expected, forbidden) ``(code, line)`` pairs of a fixture's annotations."""
    lines = text.splitlines()
    want: set[tuple[str, int]] = set()
    forbid: set[tuple[str, int]] = set()
    for i, line in enumerate(lines):
        m = ANNOTATION.search(line)
        if not m:
            continue
        target = next((j for j in range(i + 1, len(lines))
                       if lines[j].strip() and not ANNOTATION.search(lines[j])), None)
        if target is None:
            continue
        for code in re.split(r"\s*,\s*", m.group(2)):
            (want if m.group(1) == "ruleid" else forbid).add((code, target + 1))
    return want, forbid


def check_fixture(path: Path, rules: list[Rule], options: ParseOptions, arch: str = DEFAULT_ARCH) -> FixtureResult:
    checked = check_file(path, rules, options, arch)
    return compare(path, checked.findings, checked.error)


def compare(path: Path, findings: list, error: str | None) -> FixtureResult:
    """A fixture's annotations against the findings it got (or the reason it was not checked)."""
    want, forbid = annotations(path.read_text(encoding="utf-8", errors="replace"))
    result = FixtureResult(path, want, forbid)
    if error:
        result.error = error
        return result
    result.missed, result.unexpected = match(path.read_text(encoding="utf-8", errors="replace"), findings,
                                             want, forbid)
    return result


def match(text: str, findings: list, want: set[tuple[str, int]],
          forbid: set[tuple[str, int]]) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(missed, unexpected) ``(code, line)`` pairs of findings (``code``, ``line``, ``column``)
    against a fixture's annotations: a finding answers for its own line and for the first line of
    the statement it lies in; findings of annotated codes that answer no ``ruleid`` are unexpected."""
    from fusionlint.statements import containing, statements

    stmts = statements(text.splitlines())
    annotated_codes = {code for code, _ in want | forbid}
    got: set[tuple[str, int]] = set()
    unexpected: set[tuple[str, int]] = set()
    for f in findings:
        st = containing(stmts, f.line, f.column)
        marks = {(f.code, f.line)} | ({(f.code, st.first[0])} if st is not None else set())
        got |= marks
        if (marks & forbid) or (f.code in annotated_codes and not marks & want):
            unexpected.add((f.code, f.line))
    return want - got, unexpected


def annotated_files(paths: list[Path]) -> list[Path]:
    from fusionlint.run.sources import collect

    files, _ = collect([str(p) for p in paths])
    return [f for f in files if ANNOTATION.search(f.read_text(encoding="utf-8", errors="replace"))]


def run_test_rules(opts: CheckOptions, files: list[Path]) -> int:
    """``fusionlint test-rules``: every annotated fixture checked as ``check`` checks it, results
    printed in file order; exit 1 when one fails. ``opts``: check's options (``options.check_options``
    of test-rules' command line: the ones test-rules does not take are at check's defaults)."""
    from fusionlint.run import cache, check, workers
    from fusionlint.errors import EXIT_CLEAN, EXIT_FINDINGS
    from fusionlint.progress import Progress, wanted

    check.run_check_setup()
    with Progress(len(files), wanted(opts.quiet), what="fixtures") as progress:
        checker = check.Checker(opts)
        prepared = []
        for f in files:
            prepared.append(checker.prepare(len(prepared), f, exclude=False))
            progress.tick()
        progress.finished(sum(p.result is not None for p in prepared))
        tasks = [p.task for p in prepared if p.result is None]
        api = checker.prime(tasks)
        checker.validate()
        failed = printed = 0

        def print_ready() -> None:
            nonlocal failed, printed
            while printed < len(prepared) and prepared[printed].result is not None:
                p = prepared[printed]
                r = compare(p.path, p.result.findings, p.result.error)
                for code, line in sorted(r.missed):
                    print(f"{p.path}:{line}: missed: expected {code} here")
                for code, line in sorted(r.unexpected):
                    print(f"{p.path}:{line}: unexpected: {code} reported here")
                if r.error:
                    print(f"{p.path}:1: error: not checked: {r.error}")
                failed += not r.ok
                printed += 1

        outcomes: list = []

        def on_outcome(o) -> None:
            prepared[o.index].result = cache.CachedResult(o.findings, o.error, o.skipped, o.missing_headers)
            outcomes.append(o)
            progress.finished()
            print_ready()

        print_ready()
        workers.run_tasks(tasks, opts.jobs or check.default_jobs(), opts.timeout or None,
                          str(checker.cache.root) if checker.cache else None, on_outcome,
                          on_start=lambda t: progress.started(t.path),
                          on_tick=progress.tick if progress.enabled else None,
                          work=functools.partial(workers.run_task, api=api))
        print_ready()
        if checker.cache is not None and (checker.cache.wrote or any(o.cached or o.pch for o in outcomes)):
            checker.cache.evict()
    print(f"{len(files) - failed} passed, {failed} failed")
    return EXIT_FINDINGS if failed else EXIT_CLEAN
