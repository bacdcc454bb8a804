"""``fusionlint check``: each file's settings (command line over compile_commands.json over the
nearest config file) -> pipeline -> inline suppressions -> selection -> baseline -> report.

Command line over file: ``--select``, ``--ignore``, ``--per-file-ignores``, ``--exclude``,
``--arch`` and ``--std`` replace the config's value; ``--extend-select``, ``--ruleset``,
``-I`` and ``-D`` add to it. The compilation database, being per file, comes between the two
for include dirs, macros, standard and arch.

Speed (see ``docs/architecture.md``): a file that cannot hold a configuration is passed over
without libclang (``prefilter.py``); a file whose result is in the cache (``cache.py``) is not
parsed again; the others are checked in worker processes (``workers.py``), ``--jobs`` at a
time, each with a time limit, and a crash or time-out is that file's ``FL000``. Whatever the
number of workers, notes and findings come out in file order.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from fusionlint.run import cache, compile_db, config
from fusionlint.run.options import CheckOptions, file_options
from fusionlint.errors import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UsageError
from fusionlint.findings import BUILTIN_CODES, ON_UNKNOWN_INPUTS, Finding, undecided_of
from fusionlint.frontend.clang.parse import CUDA_SUFFIXES, HEADER_SUFFIXES, ParseOptions, build_args
from fusionlint.paths import glob_matches
from fusionlint.prefilter import Prefilter
from fusionlint.rules.cached import RuleSource, rule_source

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:  # the selection, suppressions, baseline and reports are imported where they are used
    from fusionlint.frontend.cublaslt.api_data import ApiData
    from fusionlint.model.call_context import IndexContext
    from fusionlint.rules.loader import Rule
    from fusionlint.decide.selection import Selection

class Settings:
    """A directory's settings: its config file, rules, selection and excludes. The rules are named
    at once (their digest is part of the result cache's key) but read, and the selection's codes
    checked against them, only when first needed: ``check`` of a single file starts its parse
    before that (see ``run_check``)."""

    def __init__(self, cfg: config.FileConfig | None, rules: RuleSource,
                 exclude: tuple[tuple[str, Path], ...], make_selection: Callable[[tuple[str, ...]], Selection]) -> None:
        self.cfg = cfg
        self.rules = rules
        self.exclude = exclude  # (glob, directory it is relative to)
        self._make_selection = make_selection

    @property
    def rules_key(self) -> str:
        return self.rules.key

    @cached_property
    def known(self) -> tuple[str, ...]:
        """Every code these rules (and fusionlint itself) can report."""
        return (*(r.id for r in self.rules.get()), *BUILTIN_CODES)

    @cached_property
    def selection(self) -> Selection:
        return self._make_selection(self.known)

    def excluded(self, path: Path) -> bool:
        return any(glob_matches(g, path, base) for g, base in self.exclude)


@dataclass
class Prepared:
    """A file to report on: its settings, and either its result already or the task that makes it."""

    path: Path
    settings: Settings
    result: cache.CachedResult | None = None
    task: object | None = None  # workers.Task
    directives: bool = True  # may hold suppression comments
    how: str = "parsed"  # prefiltered | cached | parsed


class Checker:
    """Each file's settings and what checking it takes (``prepare``), then its report (``report``),
    for one run with the options ``opts``."""

    def __init__(self, opts: CheckOptions) -> None:
        self.opts = opts
        self.cwd = Path.cwd()
        self.cache: cache.Cache | None = None
        if not opts.no_cache:
            self.cache = cache.Cache(Path(opts.cache_dir) if opts.cache_dir else cache.default_dir())
        self.use_pch = self.cache is not None and not opts.no_pch
        self.prefilter = None if opts.no_prefilter else Prefilter()
        self._settings: dict[Path | None, Settings] = {}
        self._parents: dict[str, Path] = {}
        self._arg_memo: dict[tuple, list[str]] = {}
        self._dir_settings: dict[Path, tuple[Settings, bool]] = {}
        self._dir_options: dict[tuple[Path, bool], tuple[ParseOptions, str, str, list[str]]] = {}
        self._arch_uses: dict[tuple[str, str], Settings] = {}  # (arch, where it came from) -> settings
        self._noted: set[Path] = set()
        self._notes_said: set[str] = set()
        self.undecided: list = []  # findings.Undecided of the selected rules, in file order
        self.notes: list = []  # notes.Note: what the report formats show besides the findings
        self._library_missing: dict[str, list[str]] = {}  # file -> CUTLASS/CCCL headers found nowhere
        self.db = compile_db.load(Path(opts.compile_commands)) if opts.compile_commands else None
        self.pfi = None
        if opts.per_file_ignores:
            from fusionlint.decide import selection

            self.pfi = selection.parse_per_file_ignores(opts.per_file_ignores)
        self.settings(None)  # the command line's codes are checked (validate) even when no file is checked

    def settings(self, cfg: config.FileConfig | None) -> Settings:
        key = cfg.path if cfg else None
        if key not in self._settings:
            self._settings[key] = self._make_settings(cfg)
        return self._settings[key]

    def _support_table(self, cfg: config.FileConfig | None) -> str | None:
        """The measured cuBLASLt support table for FL127 (``support_select``); a fallback to another
        cuBLASLt version is a note, no table at all a note with ``-v``."""
        from fusionlint.run import support_select

        a = self.opts
        explicit = a.support_table or (cfg.support_table if cfg else None)
        choice = support_select.for_headers(explicit, [*a.include, *(cfg.include_dirs if cfg else ())],
                                            not a.no_system_headers)
        if choice.note and choice.note not in self._notes_said and (choice.path or a.verbose):
            self._notes_said.add(choice.note)
            print(f"fusionlint: note: {choice.note}", file=sys.stderr)
        elif choice.path and a.verbose and choice.path not in self._notes_said:
            self._notes_said.add(choice.path)
            print(f"fusionlint: note: FL127 checks against the support table {choice.path}", file=sys.stderr)
        return choice.path

    def _make_settings(self, cfg: config.FileConfig | None) -> Settings:
        a = self.opts
        rules = rule_source((*a.ruleset, *(cfg.rulesets if cfg else ())), a.only_rulesets, self.cache,
                            self._support_table(cfg))
        if a.exclude is not None:
            exclude = tuple((g, self.cwd) for g in a.exclude)
        else:
            exclude = tuple((g, cfg.base) for g in cfg.exclude) if cfg else ()
        return Settings(cfg, rules, exclude, lambda known: self._selection(cfg, known))

    def _selection(self, cfg: config.FileConfig | None, known: tuple[str, ...]) -> Selection:
        """The selection of a config (or of the command line alone), its codes checked against ``known``."""
        from fusionlint.decide import selection

        a = self.opts

        def check(codes: tuple[str, ...] | list[str], where: str) -> tuple[str, ...]:
            return selection.check_codes(codes, known, where)

        def pick(option: str, cli: tuple[str, ...] | None, value: tuple[str, ...] | None,
                 key: str) -> tuple[str, ...] | None:
            """The command line's value, else the config's (``value``; None: neither gives one)."""
            if cli is not None:
                return check(cli, option)
            return None if value is None else check(value, f"{cfg.path}: {key}")

        select = pick("--select", a.select, cfg.select if cfg else None, "select")
        select = ("FL",) if select is None else select
        ignore = pick("--ignore", a.ignore, cfg.ignore if cfg else None, "ignore") or ()
        extend = check(a.extend_select, "--extend-select") + \
            (check(cfg.extend_select, f"{cfg.path}: extend-select") if cfg else ())
        if self.pfi is not None:
            pfi = tuple(selection.PerFileIgnore(g, self.cwd, check(c, "--per-file-ignores")) for g, c in self.pfi.items())
        elif cfg is not None:
            pfi = tuple(selection.PerFileIgnore(g, cfg.base, check(c, f"{cfg.path}: per-file-ignores"))
                        for g, c in cfg.per_file_ignores)
        else:
            pfi = ()
        return selection.Selection(select + extend, ignore, pfi)

    def validate(self) -> None:
        """Read the rules of every settings made so far and check the selections' codes against
        them (a ``SelectionError`` for an unknown code)."""
        for s in list(self._settings.values()):
            s.selection  # noqa: B018 - made (and checked) on first use
            s.rules.support()  # a support table that cannot be read is an error now (forked workers inherit it)
        self.arch_notes()

    def arch_notes(self) -> None:
        """A note for each architecture the files are checked for that no rule is written for
        (``sm_80`` from a compilation database: only the architecture-independent rules run)."""
        from fusionlint import arch as archs

        for (arch, where), s in self._arch_uses.items():
            rules = s.rules.get()
            note = archs.no_rules_note(arch, rules, f"from {where}")
            if not archs.has_rules(arch, rules) and note not in self._notes_said:
                self._notes_said.add(note)
                print(f"fusionlint: note: {note}", file=sys.stderr)

    def _real_parent(self, path: Path) -> Path:
        """``path.resolve().parent``, resolved once per directory (resolving is the slow part of
        passing over thousands of files)."""
        if os.path.islink(path):
            return path.resolve().parent
        key = os.path.dirname(path)
        if key not in self._parents:
            self._parents[key] = path.parent.resolve()
        return self._parents[key]

    def _flags(self, path: Path, real_parent: Path | None = None) -> compile_db.CompileFlags:
        db_path = self.db.path if self.db else compile_db.discover(real_parent or self._real_parent(path))
        if db_path is None:
            return compile_db.CompileFlags()
        db = self.db or compile_db.load(db_path)
        if db.path not in self._noted:
            self._noted.add(db.path)
            for note in db.notes:
                print(f"fusionlint: note: {note}", file=sys.stderr)
            if self.opts.verbose:  # flags fusionlint will not pass on (plugins, @files, ...)
                for note in db.dropped:
                    print(f"fusionlint: note: {note}", file=sys.stderr)
        return db.lookup(path) or compile_db.CompileFlags()

    def options(self, path: Path, s: Settings, real_parent: Path | None = None) -> tuple[ParseOptions, str]:
        options, arch, _ = self.options_and_arch_source(path, s, real_parent)
        return options, arch

    def options_and_arch_source(self, path: Path, s: Settings,
                                real_parent: Path | None = None) -> tuple[ParseOptions, str, str]:
        """The file's parse options, its target arch, and where the arch came from (``options.file_options``)."""
        return file_options(self.opts, s.cfg, self._flags(path, real_parent))

    def prepare(self, index: int, path: Path, exclude: bool = True) -> Prepared | None:
        """What checking ``path`` takes: nothing (excluded: None), nothing more (pre-filtered or
        cached: the result), or a task for a worker. ``exclude=False``: the excludes do not apply
        (``test-rules`` checks every annotated fixture it is given)."""
        from fusionlint.run.workers import Task

        real_parent = self._real_parent(path)
        s, db_dir = self._per_dir(real_parent)
        if exclude and s.excluded(path):
            return None
        if db_dir:  # a compilation database: each file has its own flags
            options, arch, arch_from = self.options_and_arch_source(path, s, real_parent)
            args = self._args(path, options)
        else:  # the same for every file of the directory and language
            cuda = path.suffix.lower() in CUDA_SUFFIXES
            if (real_parent, cuda) not in self._dir_options:
                options, arch, arch_from = self.options_and_arch_source(path, s, real_parent)
                self._dir_options[real_parent, cuda] = (options, arch, arch_from, self._args(path, options))
            options, arch, arch_from, args = self._dir_options[real_parent, cuda]
            options = dataclasses.replace(options)
        spath = str(path)
        if self.prefilter is not None and not self.prefilter.relevant(spath, args, options.defines):
            return Prepared(path, s, cache.CachedResult([]), directives=self.prefilter.mentions_fusionlint(spath),
                            how="prefiltered")
        self._arch_uses.setdefault((arch, arch_from), s)
        if self.opts.verbose:
            print(f"fusionlint: note: {path}: arch {arch} (from {arch_from})", file=sys.stderr)
        contexts, contexts_key = self._index_contexts(path, real_parent) if db_dir else (None, "")
        includers, includers_key = self._index_includers(path, real_parent, s) \
            if db_dir and path.suffix.lower() in HEADER_SUFFIXES else ([], "")
        key = content = None
        if self.cache is not None:
            content = cache.file_hash(spath)
            if content is not None:
                key = cache.digest("result", cache.FORMAT, cache.fusionlint_key(), cache.libclang_key(), str(self.cwd),
                                   spath, str(path.absolute()), content, args, arch, s.rules_key,
                                   *((contexts_key,) if contexts_key else ()),
                                   *((includers_key,) if includers_key else ()))
                hit = self.cache.lookup(key)
                if hit is not None:
                    return Prepared(path, s, hit, how="cached")
            if self.use_pch:
                options.pch_dir = str(self.cache.pch_dir)
        return Prepared(path, s, task=Task(index, path, options, s.rules, arch, key, content, contexts or None,
                                                includers or None))

    def _project_index(self, real_parent: Path):
        """The project index of the compilation database above ``real_parent`` (``fusionlint index``),
        or None (none built, or ``--no-index``)."""
        if self.opts.no_index:
            return None
        db_path = self.db.path if self.db else compile_db.discover(real_parent)
        if db_path is None:
            return None
        from fusionlint.run import project_index

        root = Path(self.opts.cache_dir) if self.opts.cache_dir else cache.default_dir()
        return project_index.project_index(root, db_path)

    def _say_stale(self, index) -> None:
        """Once per run: the files changed since the index was built, whose calls or includes are not used."""
        from fusionlint.run import project_index

        note = project_index.stale_note(index)
        if note is not None and note not in self._notes_said:
            self._notes_said.add(note)
            print(f"fusionlint: note: {note}", file=sys.stderr)

    def _index_contexts(self, path: Path, real_parent: Path) -> tuple[IndexContext | None, str]:
        """The calls from other files of the functions ``path`` defines and what the functions of
        other files it calls return, from the project index of its compilation database (``fusionlint
        index``), and their digest for the cache key; nothing
        without an index (or with ``--no-index``)."""
        index = self._project_index(real_parent)
        if index is None:
            return None, ""
        found = index.contexts_for(path)
        self._say_stale(index)
        return found

    def _index_includers(self, path: Path, real_parent: Path, s) -> tuple[list, str]:
        """[(path, parse options)] of the project's files that include ``path`` (the project index), and
        their digest for the cache key; nothing without an index. Asked for headers only (a header's
        template GEMMs are instantiated there)."""
        index = self._project_index(real_parent)
        if index is None:
            return [], ""
        paths, key = index.includers_of(path)
        self._say_stale(index)
        out = []
        for p in paths:
            try:
                options, _arch, _src = self.options_and_arch_source(Path(p), s, self._real_parent(Path(p)))
            except Exception:  # noqa: BLE001 - an includer whose flags cannot be read is left out
                continue
            out.append((Path(p), options))
        return out, key

    def parse_options_of(self, path: Path) -> tuple[ParseOptions, list[str]]:
        """The parse options and compiler arguments ``check`` would parse ``path`` with (``index``)."""
        real_parent = self._real_parent(path)
        s, _ = self._per_dir(real_parent)
        options, _arch = self.options(path, s, real_parent)
        return options, self._args(path, options)

    def _per_dir(self, real_parent: Path) -> tuple[Settings, bool]:
        """The settings of a directory's files, and whether a compilation database covers them."""
        if real_parent not in self._dir_settings:
            has_db = self.db is not None or compile_db.discover(real_parent) is not None
            self._dir_settings[real_parent] = (self.settings(config.config_for_dir(real_parent)), has_db)
        return self._dir_settings[real_parent]

    def _args(self, path: Path, options: ParseOptions) -> list[str]:
        """The file's compiler arguments (the same for every file of a language with these options)."""
        key = (path.suffix.lower() in CUDA_SUFFIXES, tuple(options.include_dirs), tuple(options.defines),
               tuple(options.extra_args), options.std, options.use_system_headers)
        if key not in self._arg_memo:
            self._arg_memo[key] = build_args(path, options)[0]
        return self._arg_memo[key]

    def report(self, p: Prepared, result: cache.CachedResult) -> tuple[list[Finding], bool]:
        """Notes on stderr, then the findings that suppressions and selection keep, and whether the file failed."""
        if result.skipped:
            print(f"fusionlint: {p.path}: skipped: {result.skipped}", file=sys.stderr)
        if result.error:
            print(f"fusionlint: {p.path}: {result.error}", file=sys.stderr)
        if result.missing_headers:
            self._note_missing_headers(str(p.path), result.missing_headers)
        if result.functions_not_read:
            self._note_not_read(str(p.path), result.functions_not_read)
        from fusionlint.decide import suppress

        s = p.settings
        kept = suppress.apply(result.findings, [str(p.path)], s.known) if (result.findings or p.directives) else []
        # a finding only on paths chosen by values fusionlint does not know: a warning when FL002 is
        # selected, else the undecided check of its rule
        unsure = [undecided_of(f) for f in kept
                  if f.code == ON_UNKNOWN_INPUTS and not s.selection.enabled(f.code, f.path)]
        self.undecided += [u for u in [*result.undecided, *unsure] if s.selection.enabled(u.code, u.path)]
        return [f for f in kept if s.selection.enabled(f.code, f.path)], bool(result.error)

    def _note_missing_headers(self, path: str, headers: list[str]) -> None:
        """A note per header found nowhere (``notes.py``); CUTLASS/CCCL headers are summed up at the
        end of the run (``finish_notes``), per file with ``-v``."""
        from fusionlint import notes

        library = [h for h in headers if notes.library_of(h)]
        for note in notes.missing_header_notes(path, headers):
            self.notes.append(note)
            if note.detail and library:  # (a toolkit header on a vendored path is a detail note too)
                self._library_missing[path] = library
            if not note.detail or self.opts.verbose:
                print(f"fusionlint: note: {note.text()}", file=sys.stderr)

    def _note_not_read(self, path: str, messages: list[str]) -> None:
        """-v: a note per function definition the parse could not read (``frontend/clang/recovery.py``)."""
        import re

        from fusionlint import notes

        for message in messages:
            m = re.search(r" at line (\d+) ", message)
            note = notes.Note(path, int(m.group(1)) if m else 0, 0, message, detail=True)
            self.notes.append(note)
            if self.opts.verbose:
                print(f"fusionlint: note: {note.text()}", file=sys.stderr)

    def finish_notes(self) -> None:
        """The run's summary notes, after every file's own."""
        from fusionlint import notes

        summary = notes.library_summary(self._library_missing)
        if summary is not None:
            self.notes.append(summary)
            print(f"fusionlint: note: {summary.text()}", file=sys.stderr)

    def check(self, path: Path) -> tuple[list[Finding], bool] | None:
        """The reported findings of one file and whether it failed; None when excluded (in this process)."""
        from fusionlint.run.workers import run_task

        p = self.prepare(0, path)
        if p is None:
            return None
        if p.result is None:
            o = run_task(p.task, str(self.cache.root) if self.cache else None)
            p.result = cache.CachedResult(o.findings, o.error, o.skipped, o.missing_headers)
            p.result.undecided = o.undecided
            p.result.functions_not_read = o.functions_not_read
        return self.report(p, p.result)

    def prime(self, tasks: list) -> ApiData | None:
        """Before forking the workers of ``tasks``: what they all need, loaded once here and inherited;
        the stand-in headers and API model they check with (None: no tasks)."""
        if not tasks:
            return None
        from fusionlint.run import pipeline

        if len(tasks) > 1:  # loaded once here, inherited by the forked workers; a single file's child
            pipeline.import_extractors()  # else imported while libclang parses (facts.extract.extract_file)
        if self.cache is not None:  # the stand-in headers (and API model) from the cache, inherited by the workers
            return self.cache.prime_api_model(load_model=len(tasks) > 1)
        from fusionlint.frontend.cublaslt.api_data import ApiData

        api = ApiData()
        api.stand_ins()
        return api

    def all_rules(self) -> list[Rule]:
        by_id = {r.id: r for s in self._settings.values() for r in s.rules.get()}
        return sorted(by_id.values(), key=lambda r: r.id)


def output_format(opts: CheckOptions) -> str:
    if opts.output_format:
        return opts.output_format
    github = os.environ.get("GITHUB_ACTIONS", "").strip().lower()
    return "github" if github not in ("", "0", "false") else "text"


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_paths(paths: list[str]) -> None:
    """Refuse, before walking anything, a path that is the root of the file system."""
    for raw in paths:
        p = Path(raw)
        try:
            resolved = p.resolve()
        except OSError:
            continue
        if p.is_dir() and resolved == Path(resolved.anchor):
            raise UsageError(f"{raw}: refusing to check the whole file system; name the project's directories")


def run_check_setup() -> None:
    """A run reads config files and compilation databases afresh (in-process runs: the tests)."""
    config.config_for_dir.cache_clear()
    config.load_config.cache_clear()
    compile_db.discover.cache_clear()
    compile_db.load.cache_clear()
    if "fusionlint.run.project_index" in sys.modules:
        sys.modules["fusionlint.run.project_index"].forget()


def run_check(opts: CheckOptions, files: list[Path]) -> int:
    run_check_setup()
    if opts.update_baseline and not opts.baseline:
        raise UsageError("--update-baseline needs --baseline FILE")
    jobs = opts.jobs or default_jobs()
    timeout = opts.timeout
    max_files = opts.max_files
    if max_files and len(files) > max_files:
        raise UsageError(f"{len(files)} source files to check (more than --max-files {max_files}): "
                         "name the project's source directories, or raise --max-files")
    from fusionlint.progress import Progress, wanted

    with Progress(len(files), wanted(opts.quiet)) as progress:
        return _run_check(opts, files, jobs, timeout, progress)


def _run_check(opts: CheckOptions, files: list[Path], jobs: int, timeout: float, progress) -> int:
    checker = Checker(opts)
    prepared: list[Prepared] = []
    for f in files:
        p = checker.prepare(len(prepared), f)
        if p is not None:
            prepared.append(p)
        progress.tick()
    progress.total = len(prepared)
    progress.finished(sum(p.result is not None for p in prepared))
    findings: set[Finding] = set()
    checked: list[str] = []
    failed = 0
    done = 0  # results reported so far, in file order

    def report_ready() -> None:
        nonlocal done, failed
        while done < len(prepared) and prepared[done].result is not None:
            p = prepared[done]
            kept, bad = checker.report(p, p.result)
            checked.append(str(p.path))
            findings.update(kept)
            failed += bad
            done += 1

    def on_outcome(o) -> None:
        prepared[o.index].result = cache.CachedResult(o.findings, o.error, o.skipped, o.missing_headers)
        prepared[o.index].result.undecided = o.undecided
        prepared[o.index].result.functions_not_read = o.functions_not_read
        outcomes.append(o)
        progress.finished()
        report_ready()

    outcomes: list = []
    tasks = [p.task for p in prepared if p.result is None]
    cache_root = str(checker.cache.root) if checker.cache else None
    api = checker.prime(tasks)
    from fusionlint.run import workers

    if len(tasks) == 1 and workers.can_isolate():
        # A single file (pre-commit's usual case): its child starts parsing now, and this process
        # reads the rules, checks the selection and reports the other files while it parses.
        one = workers.OneFile(tasks[0], timeout or None, cache_root, api)
        progress.started(tasks[0].path)
        try:
            checker.validate()
            report_ready()
            _import_report_modules(opts)
            on_outcome(one.outcome(on_tick=progress.tick if progress.enabled else None))
        finally:
            one.cancel()
    else:
        checker.validate()  # the rules are read here, so forked workers inherit them
        report_ready()
        if tasks:
            workers.run_tasks(tasks, jobs, timeout or None, cache_root, on_outcome,
                              on_start=lambda t: progress.started(t.path),
                              on_tick=progress.tick if progress.enabled else None,
                              work=functools.partial(workers.run_task, api=api))
    report_ready()
    progress.clear()
    checker.finish_notes()
    if checker.cache is not None and (checker.cache.wrote or any(o.cached or o.pch for o in outcomes)):
        checker.cache.evict()
    _write_stats(checker, prepared, tasks, outcomes)
    ordered = sorted(findings, key=lambda x: x.sort_key())
    if opts.update_baseline:
        from fusionlint.decide import baseline

        n = baseline.write(ordered, Path(opts.baseline))
        print(f"fusionlint: recorded {n} finding(s) in {opts.baseline}", file=sys.stderr)
        return EXIT_CLEAN
    if opts.baseline:
        from fusionlint.decide import baseline

        ordered = baseline.filter_new(ordered, Path(opts.baseline))
    fmt = output_format(opts)
    color = fmt == "text" and not opts.output_file and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    from fusionlint.paths import project_root
    from fusionlint.report import ReportContext, render

    ctx = ReportContext(project_root(), checked, checker.all_rules(), opts.show_source, color, checker.notes)
    out = render(fmt, ordered, ctx)
    if opts.statistics:
        from fusionlint.report.text import format_statistics

        stats = format_statistics(ordered)
        if fmt == "text":
            out += stats
        else:  # keep machine-readable output parseable
            sys.stderr.write(stats)
    from fusionlint.report import write_output

    write_output(opts.output_file, out)
    _summary(opts, fmt, len(checked), len(ordered), checker.undecided)
    if checked and failed == len(checked):
        return EXIT_ERROR
    if opts.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if any(x.severity in ("error", "warning") for x in ordered) else EXIT_CLEAN


def _summary(opts: CheckOptions, fmt: str, files: int, findings: int, undecided: list) -> None:
    """Text output on a terminal (not with ``--quiet``) or with ``-v``: the checks unknown values
    left undecided (their list with ``-v``) and a summary line, on stderr."""
    verbose = opts.verbose
    if fmt != "text" or not (verbose or (sys.stderr.isatty() and not opts.quiet)):
        return
    from fusionlint.report.text import format_summary, format_undecided

    from fusionlint.findings import merge_undecided

    unique = merge_undecided(undecided)
    if verbose:
        sys.stderr.write(format_undecided(list(unique)))
    sys.stderr.write(format_summary(files, findings, len(unique), verbose))


def _import_report_modules(opts: CheckOptions) -> None:
    """What reporting needs, imported while a single file's child parses."""
    import importlib

    from fusionlint.decide import suppress  # noqa: F401

    module = {"json": "json_format"}.get(output_format(opts), output_format(opts))
    importlib.import_module(f"fusionlint.report.{module}")

    if opts.baseline:
        from fusionlint.decide import baseline  # noqa: F401


def _write_stats(checker: Checker, prepared: list[Prepared], tasks: list, outcomes: list) -> None:
    """``FUSIONLINT_STATS=FILE``: what the run did, as JSON (for bench/run.py)."""
    target = os.environ.get("FUSIONLINT_STATS")
    if not target:
        return
    import json

    data = {"files": len(prepared), "parsed": len(tasks),
            "prefiltered": sum(p.how == "prefiltered" for p in prepared),
            "cache_hits": sum(p.how == "cached" for p in prepared),
            "outcomes": [{"path": str(prepared[o.index].path), "seconds": round(o.seconds, 3), "pch": o.pch,
                          "max_rss_kb": o.max_rss_kb, "rss_kb": o.rss_kb, "cached": o.cached, "error": o.error,
                          "pid": o.pid}
                         for o in sorted(outcomes, key=lambda o: o.index)]}
    Path(target).write_text(json.dumps(data, indent=1), encoding="utf-8")
