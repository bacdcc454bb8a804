"""``fusionlint index``: building the project index (the storage and its use by ``check`` are
``project_index.py``), and ``facts`` of the files of an indexed project."""
from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.run.project_index import (
    MANIFEST_FORMAT,
    entry_key,
    entry_path,
    forget,
    manifest_path,
    project_index,
    stale_note,
)
from fusionlint.store import (
    _still_valid,
    absent_candidates,
    cache_files,
    default_dir,
    dependencies,
    file_hash,
    read_json,
    write_atomic,
)

TYPE_CHECKING = False

if TYPE_CHECKING:
    from fusionlint.run.options import CheckOptions


def _valid_entry(cache_root: Path, key: str) -> dict | None:
    data = read_json(entry_path(cache_root, key))
    if data is None or data.get("key") != key or not isinstance(data.get("record"), dict):
        return None
    return data if _still_valid(data.get("deps"), data.get("absent")) else None


# -- building ------------------------------------------------------------------------------------
@dataclass
class IndexTask:
    index: int
    path: Path
    options: object  # ParseOptions
    key: str
    content: str


@dataclass
class IndexOutcome:
    index: int
    record: dict | None = None
    deps: list | None = None
    absent: list = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0


def index_task(task: IndexTask, cache_dir: str | None, api: object | None = None) -> IndexOutcome:
    """Parse one file and make its record (in a worker)."""
    from fusionlint.facts.extract import SkipFile
    from fusionlint.facts.project_index import index_file

    start = time.time()
    out = IndexOutcome(task.index)
    try:
        record, unit = index_file(task.path, task.options, api)
        out.record = record
        if unit is not None and unit.path == str(task.path):
            out.deps = dependencies(list(unit.includes), start)
            out.absent = absent_candidates(list(unit.missing), str(task.path), list(unit.args), list(unit.includes))
    except SkipFile as exc:
        out.error = f"skipped: {exc}"
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the index
        out.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    out.seconds = time.time() - start
    return out


def _failed(task: IndexTask, reason: str, seconds: float) -> IndexOutcome:
    return IndexOutcome(task.index, error=reason, seconds=seconds)


def _project_files(checker, paths: list[str], opts: CheckOptions) -> dict[Path, list[Path]]:
    """The files to index, by the compilation database that covers them."""
    from fusionlint.errors import UsageError
    from fusionlint.run import compile_db

    by_db: dict[Path, list[Path]] = {}
    if not paths:
        db_path = Path(opts.compile_commands) if opts.compile_commands else compile_db.discover(Path.cwd().resolve())
        if db_path is None:
            raise UsageError("no compile_commands.json here or above: name it with -p, or name the files to index")
        db = compile_db.load(db_path)
        for note in db.notes:
            print(f"fusionlint: note: {note}", file=sys.stderr)
        from fusionlint.run.sources import is_source

        by_db[db.path] = sorted((Path(p) for p in db.entries if is_source(Path(p))), key=str)
        return by_db
    from fusionlint.run.sources import collect

    files, errors = collect(paths)
    for e in errors:
        print(f"fusionlint: error: {e}", file=sys.stderr)
    if errors:
        raise UsageError("bad path")
    for f in files:
        db_path = checker.db.path if checker.db else compile_db.discover(f.resolve().parent)
        if db_path is None:
            print(f"fusionlint: note: {f}: no compile_commands.json above it: not in a project, not indexed",
                  file=sys.stderr)
            continue
        by_db.setdefault(compile_db.load(db_path).path, []).append(f)
    return by_db


def run_index(opts: CheckOptions, paths: list[str]) -> int:
    """Build or refresh the index of the project(s) of ``paths`` (none: the compilation database's files)."""
    from fusionlint.errors import EXIT_CLEAN, UsageError
    from fusionlint.progress import Progress, wanted
    from fusionlint.run import check

    start = time.monotonic()
    check.run_check_setup()
    forget()
    if opts.no_cache:
        raise UsageError("the index lives in the cache directory: --no-cache cannot be used with index")
    root = Path(opts.cache_dir) if opts.cache_dir else default_dir()
    checker = check.Checker(opts)
    by_db = _project_files(checker, paths, opts)
    total = sum(len(v) for v in by_db.values())
    stats = {"files": 0, "parsed": 0, "cached": 0, "skipped": 0, "failed": 0, "functions": 0, "calls": 0}
    api_holder: list = [None]  # the stand-in headers and API model, loaded once when something is parsed
    with Progress(total, wanted(opts.quiet)) as progress:
        for db_path, files in by_db.items():
            records, includes = _index_project(checker, root, files, opts, progress, stats, api_holder)
            _write_manifest(root, db_path, records, includes, replace=not paths)
        progress.clear()
    seconds = time.monotonic() - start
    extra = f", {stats['failed']} failed" if stats["failed"] else ""
    skipped = f", {stats['skipped']} without calls of indexed functions" if stats["skipped"] else ""
    print(f"fusionlint: index: {stats['files']} files ({stats['parsed']} parsed, {stats['cached']} cached{skipped}"
          f"{extra}), {stats['functions']} functions reaching cuBLASLt, {stats['calls']} call sites of them, "
          f"{seconds:.1f} s")
    return EXIT_CLEAN


def _index_project(checker, root: Path, files: list[Path], opts: CheckOptions, progress, stats: dict,
                   api_holder: list) -> tuple[dict[str, dict], dict[str, dict]]:
    """Index ``files`` of one project: ({resolved path: {"key", "content", "record"}}, every file's
    project headers: ``_record_includes``). Files whose text or headers name cuBLASLt first (those
    can define a function that calls it; a CUTLASS-only file is not parsed for that); then the
    others that call one of the functions those define (a caller that names no cuBLASLt function
    itself) or define one of the functions of other files those call (what it returns)."""
    from fusionlint.prefilter import CUBLASLT, Prefilter
    from fusionlint.run import workers

    jobs = opts.jobs or _default_jobs()
    done: dict[str, dict] = {}
    first: list[tuple[Path, object, list[str]]] = []
    # (the file or a header it includes names cuBLASLt: bitsandbytes' ops.cu calls it through macros
    # of compat.cuh, included by ops.cuh)
    cublaslt_prefilter = Prefilter(CUBLASLT, project_only=True)
    later: list[tuple[Path, object, list[str]]] = []
    for f in files:
        options, args = checker.parse_options_of(f)
        if not opts.no_pch:
            options.pch_dir = str(cache_files(root, "pch"))
        relevant = opts.no_prefilter or cublaslt_prefilter.relevant(str(f), args)
        (first if relevant else later).append((f, options, args))
    includes = _record_includes([(f, args) for f, _options, args in first + later])

    def phase(items: list[tuple[Path, object, list[str]]]) -> None:
        tasks: list[IndexTask] = []
        for f, options, args in items:
            content = file_hash(str(f))
            if content is None:
                stats["failed"] += 1
                progress.tick()
                continue
            key = entry_key(f, content, args)
            data = _valid_entry(root, key)
            if data is not None:
                done[str(f.resolve())] = {"key": key, "content": content, "record": data["record"]}
                stats["cached"] += 1
                progress.finished()
                continue
            tasks.append(IndexTask(len(tasks), f, options, key, content))
        if not tasks:
            return
        if api_holder[0] is None:
            from fusionlint.run.cache import Cache

            if len(tasks) > 1:
                from fusionlint.facts import extract

                extract.import_extractors(extract.CUBLASLT_EXTRACTORS)
            api_holder[0] = Cache(root).prime_api_model(load_model=True)
        api = api_holder[0]

        def on_outcome(o: IndexOutcome) -> None:
            task = tasks[o.index]
            progress.finished()
            if o.record is None:
                stats["failed"] += 1
                print(f"fusionlint: {task.path}: not indexed: {o.error}", file=sys.stderr)
                return
            stats["parsed"] += 1
            entry = {"key": task.key, "path": str(task.path), "content": task.content, "deps": o.deps,
                     "absent": o.absent, "created": time.time(), "record": o.record}
            if o.deps is not None and file_hash(str(task.path)) == task.content:
                write_atomic(entry_path(root, task.key), json.dumps(entry).encode("utf-8"))
            done[str(task.path.resolve())] = {"key": task.key, "content": task.content, "record": o.record}

        import functools

        workers.run_tasks(tasks, jobs, opts.timeout or None, str(root), on_outcome,
                          on_start=lambda t: progress.started(t.path),
                          on_tick=progress.tick if progress.enabled else None,
                          work=functools.partial(index_task, api=api), failed=_failed)

    phase(first)
    names = {fn["name"] for e in done.values() for fn in e["record"].get("functions", ())}
    names |= _called_elsewhere(done.values())  # files that may define what those call (their returns)
    # (no file calls main, CUDALibrarySamples' main files reach cuBLASLt; no file of the project
    # defines malloc, to_string or a compiler builtin)
    names = {n for n in names if n != "main" and not n.startswith("__") and n not in _LIBRARY_FUNCTIONS}
    wanted_later = []
    if names and later:
        # the name written as a call or a definition, ``f(``, ``f<T>(``: not any mention (FasterTransformer's
        # method Gemm is also every CUTLASS example's ``using Gemm = ...``, parsed for nothing)
        pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\s*(?:<[^;{}()]*>\s*)?\(")
        for item in later:
            try:
                text = item[0].read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            if pattern.search(text):
                wanted_later.append(item)
            else:
                stats["skipped"] += 1
                progress.finished()
    else:
        stats["skipped"] += len(later)
        progress.finished(len(later))
    phase(wanted_later)
    usrs = {fn["usr"] for e in done.values() for fn in e["record"].get("functions", ())}
    stats["files"] += len(files)
    stats["functions"] += len(usrs)
    stats["calls"] += sum(1 for e in done.values() for c in e["record"].get("calls", ()) if c.get("usr") in usrs)
    return done, includes


# functions of the C and C++ standard libraries a file may call that no file of a project defines
_LIBRARY_FUNCTIONS = frozenset("""
malloc calloc realloc free memset memcpy memmove memcmp strlen strcmp strncmp strcpy strncpy printf fprintf
sprintf snprintf puts fflush abort exit getenv atoi atof strtol strtoul strtod fopen fclose fread fwrite
to_string stoi stol stoll stoul stoull stof stod min max swap move forward make_pair make_tuple make_unique
make_shared sort fill copy transform accumulate iota assert rand srand time clock sqrt sqrtf exp expf log logf
pow powf fabs fabsf abs floor ceil round
""".split())


def _called_elsewhere(entries) -> set[str]:
    """The unqualified names of the functions of other files that the indexed files call."""
    out = set()
    for e in entries:
        for call in e["record"].get("calls", ()):
            via = call.get("context", {}).get("via") if isinstance(call, dict) else None
            if via and isinstance(via[-1], dict):
                name = str(via[-1].get("callee", "")).rsplit("::", 1)[-1].split("<", 1)[0]
                if name.isidentifier():
                    out.add(name)
    return out


def _record_includes(files: list[tuple[Path, list[str]]]) -> dict[str, dict]:
    """Every file's project headers (quoted includes, transitively, read as the CUTLASS reader reads
    them with the file's compiler arguments; no parse), kept in the manifest: ``check`` of a header
    reads the header's template GEMMs where these files instantiate them. A file that includes none
    gets nothing."""
    from fusionlint.frontend.cutlass.source.includes import ProjectHeaders, search_dirs

    includes: dict[str, dict] = {}
    for f, args in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        content = file_hash(str(f))
        headers = ProjectHeaders(str(f), search_dirs(list(args))).closure(text)
        if headers and content is not None:
            includes[str(f.resolve())] = {"content": content, "headers": headers}
    return includes


def _default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _write_manifest(root: Path, db_path: Path, records: dict[str, dict], includes: dict[str, dict],
                    replace: bool) -> None:
    target = manifest_path(root, db_path)
    files: dict[str, dict] = {}
    old_includes: dict[str, dict] = {}
    if not replace:
        old = read_json(target)
        if old is not None and old.get("format") == MANIFEST_FORMAT and isinstance(old.get("files"), dict):
            files = {p: e for p, e in old["files"].items() if isinstance(e, dict) and os.path.exists(p)}
            if isinstance(old.get("includes"), dict):
                old_includes = {p: e for p, e in old["includes"].items() if isinstance(e, dict) and os.path.exists(p)}
    files.update({p: {"key": e["key"], "content": e["content"]} for p, e in records.items()})
    old_includes.update(includes)
    data = {"format": MANIFEST_FORMAT, "db": str(db_path), "built": time.time(), "files": dict(sorted(files.items())),
            "includes": dict(sorted(old_includes.items()))}
    write_atomic(target, json.dumps(data, indent=1).encode("utf-8"))


class IndexedFacts:
    """``facts`` of files in an indexed project: a file whose compilation database (``-p``, else
    the nearest one above it) has an index is read as ``check`` reads it (its flags from the
    database) with the calls of its functions from other files; any other file as before."""

    def __init__(self, args) -> None:
        from fusionlint.run import check
        from fusionlint.run.options import check_options

        check.run_check_setup()
        self.opts = check_options(args)
        self.root = Path(self.opts.cache_dir) if self.opts.cache_dir else default_dir()
        self._said: set[str] = set()

    def options_and_contexts(self, path: Path):
        """(parse options, contexts, includers) for a file of an indexed project, else None; includers:
        [(path, parse options)] of the project's files that include a header ``path``."""
        from fusionlint.frontend.clang.parse import HEADER_SUFFIXES
        from fusionlint.run import compile_db, config
        from fusionlint.run.options import file_options

        parent = path.resolve().parent
        db_path = Path(self.opts.compile_commands) if self.opts.compile_commands else compile_db.discover(parent)
        if db_path is None:
            return None
        db = compile_db.load(db_path)
        index = project_index(self.root, db.path)
        if index is None:
            return None
        def options_of(p: Path):
            return file_options(self.opts, config.config_for_dir(p.resolve().parent),
                                db.lookup(p) or compile_db.CompileFlags())[0]

        options = options_of(path)
        contexts, _ = index.contexts_for(path)
        includers = [(Path(p), options_of(Path(p))) for p in index.includers_of(path)[0]] \
            if path.suffix.lower() in HEADER_SUFFIXES else []
        note = stale_note(index)
        if note is not None and note not in self._said:
            self._said.add(note)
            print(f"fusionlint: note: {note}", file=sys.stderr)
        return options, contexts, includers
