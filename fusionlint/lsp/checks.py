"""The language server's checks: one editor buffer through ``check``'s machinery, in the background.

A buffer is checked as ``fusionlint check FILE`` checks the file, with the buffer's text in place
of the file's bytes:

- ``check.Checker`` gives the settings (the nearest ``[tool.fusionlint]`` / ``fusionlint.toml``,
  ``compile_commands.json``, the server's command line over both), a new one per check, so an
  edited configuration counts at once (as each ``fusionlint`` run reads it afresh);
- ``prepare_buffer`` is ``Checker.prepare`` over the buffer: the pre-filter scans the buffer's
  bytes, and the result cache's key is the one ``check`` computes, over the buffer's hash. So a
  saved buffer and ``fusionlint FILE`` (same path, working directory and settings) share cache
  entries, and checking an unchanged buffer again is a cache look-up (``stats['cache_hits']``);
- a cache miss runs in a forked child (``workers.Isolated``, as ``check`` runs a single file):
  the child points the pipeline's reader of the source text at the buffer and calls
  ``workers.run_task``, so it stores its result in the cache (when the buffer is what is on disk,
  as ``run_task`` requires), uses and builds the precompiled preambles, and keeps the facts the
  quick fixes need (``edits.size_fixes``). A crash or a time-out is the buffer's ``FL000``;
- inline suppressions are read from the buffer, then the selection applies (``Checker.report``).

The server's event loop never waits for a parse: it watches the child's pipe
(``loop.add_reader``). Cancelling the check (a newer edit, closing the buffer, shutdown) kills the
child (SIGKILL) and removes the precompiled-header lock and temporary file it may have left, so the
next check can build the PCH. At most ``jobs`` children run at a time.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import io
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.findings import Finding
from fusionlint.findings import not_checked as _not_checked
from fusionlint.prefilter import Prefilter


def check_args(args: argparse.Namespace):
    """The server's options as ``check``'s (``options.CheckOptions``; the ones the server does not
    take at check's defaults)."""
    from fusionlint.run.options import check_options

    return check_options(args)


def content_hash(text: str) -> str:
    """What ``cache.file_hash`` gives for a file holding this buffer."""
    return hashlib.sha256(buffer_bytes(text)).hexdigest()


def buffer_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class BufferPrefilter(Prefilter):
    """The pre-filter, with one file's bytes taken from its buffer (its headers from the disk)."""

    def __init__(self, path: Path, data: bytes) -> None:
        super().__init__()
        self._buffer = (os.path.abspath(path), data)

    def _scan(self, path: str) -> tuple[bool, tuple]:
        if path == self._buffer[0] and path not in self._direct:
            import tempfile

            with tempfile.NamedTemporaryFile(prefix="fusionlint-buffer-") as f:
                f.write(self._buffer[1])
                f.flush()
                result = super()._scan(f.name)
                self._direct.pop(f.name, None)
                self._mentions[path] = self._mentions.pop(f.name, True)
            self._direct[path] = result
        return super()._scan(path)


def new_checker(opts, path: Path, data: bytes):
    """A ``check.Checker`` for one check of a buffer: the configuration and compilation database
    read afresh (as ``run_check`` does for each run), the pre-filter over the buffer."""
    from fusionlint.run import compile_db, config
    from fusionlint.run.check import Checker

    config.config_for_dir.cache_clear()
    config.load_config.cache_clear()
    compile_db.discover.cache_clear()
    compile_db.load.cache_clear()
    checker = Checker(opts)
    if checker.prefilter is not None:
        checker.prefilter = BufferPrefilter(path, data)
    return checker


def prepare_buffer(checker, path: Path, text: str):
    """``Checker.prepare`` for a buffer: None when the file is excluded, else a ``check.Prepared``
    with the result (pre-filtered, or from the cache) or the task that makes it. The cache key is
    ``check``'s, over the buffer's bytes (``tests/test_server.py`` checks they agree)."""
    from fusionlint.run import cache
    from fusionlint.run.check import Prepared
    from fusionlint.run.workers import Task

    real_parent = checker._real_parent(path)
    settings, _ = checker._per_dir(real_parent)
    if settings.excluded(path):
        return None
    arch_from = None
    if hasattr(checker, "options_and_arch_source"):  # where the arch came from: for the note on an arch without rules
        options, arch, arch_from = checker.options_and_arch_source(path, settings, real_parent)
    else:
        options, arch = checker.options(path, settings, real_parent)
    args = checker._args(path, options)
    spath = str(path)
    if checker.prefilter is not None and not checker.prefilter.relevant(spath, args, options.defines):
        return Prepared(path, settings, cache.CachedResult([]), directives=checker.prefilter.mentions_fusionlint(spath),
                        how="prefiltered")
    if arch_from is not None and isinstance(getattr(checker, "_arch_uses", None), dict):
        checker._arch_uses.setdefault((arch, arch_from), settings)
    key = content = None
    if checker.cache is not None:
        content = content_hash(text)
        key = cache.digest("result", cache.FORMAT, cache.fusionlint_key(), cache.libclang_key(), str(checker.cwd),
                           spath, str(path.absolute()), content, args, arch, settings.rules_key)
        hit = checker.cache.lookup(key)
        if hit is not None:
            return Prepared(path, settings, hit, how="cached")
        if checker.use_pch:
            options.pch_dir = str(checker.cache.pch_dir)
    return Prepared(path, settings, task=Task(0, path, options, settings.rules, arch, key, content))


@contextlib.contextmanager
def suppressions_from(path: Path, text: str):
    """While ``Checker.report`` runs: inline suppressions of ``path`` read from its buffer (the
    suppression module's one reader of a file's lines, pointed at the buffer for that file)."""
    from fusionlint.decide import suppress

    original = suppress.lines_of
    target = os.path.abspath(path)
    lines = tuple(text.splitlines())  # what sourcetext.lines_of makes of the file's text

    def lines_of(p: str) -> tuple[str, ...]:
        return lines if os.path.abspath(p) == target else original(p)

    suppress.lines_of = lines_of
    try:
        yield
    finally:
        suppress.lines_of = original


class _Bytes:
    """What ``extract._read_text`` reads a file through (``read_bytes``), holding the buffer."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read_bytes(self) -> bytes:
        return self.data


def _die_with_parent() -> None:
    """In a check's child: killed when the server goes (Linux), so a child never outlives it."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def child_check(task, text: str, cache_dir: str | None, fixes: bool = True, api=None):
    """In the forked child: ``workers.run_task`` on the buffer's text, and the quick fixes from the
    facts of that parse. The pipeline reads a file's text in one place (``facts.extract._read_text``)
    and ``run_task`` calls ``pipeline.check_file``; in this child (only) the first reads the buffer
    for the task's file and the second keeps the facts it made."""
    _die_with_parent()
    gc.disable()  # as workers' single-file child: the process ends after this one file
    from fusionlint.facts import extract
    from fusionlint.run import pipeline, workers

    read_text, check_file = extract._read_text, pipeline.check_file
    data, target = buffer_bytes(text), Path(task.path)
    kept: list = []

    def read_buffer(p):
        return read_text(_Bytes(data)) if Path(p) == target else read_text(p)

    def check_and_keep(*args, **kwargs):
        result = check_file(*args, **kwargs)
        kept.append(result.facts)
        return result

    extract._read_text, pipeline.check_file = read_buffer, check_and_keep
    outcome = workers.run_task(task, cache_dir, api)
    found = []
    if fixes and kept and kept[0] is not None:
        try:
            from fusionlint.lsp.edits import size_fixes

            found = size_fixes(kept[0], text, api.model() if api is not None else None)
        except Exception:  # noqa: BLE001 - no quick fix is better than no diagnostics
            found = []
    return outcome, found


def cached_result(outcome):
    """``check``'s ``CachedResult`` of a worker's outcome (with the headers found nowhere, where
    both know them)."""
    import dataclasses

    from fusionlint.run import cache

    extra = {}
    if "missing_headers" in {f.name for f in dataclasses.fields(cache.CachedResult)}:
        extra["missing_headers"] = list(getattr(outcome, "missing_headers", []))
    return cache.CachedResult(outcome.findings, outcome.error, outcome.skipped, **extra)


def not_checked(path: Path, reason: str) -> Finding:
    return _not_checked(path, reason)


@dataclass
class BufferResult:
    """What one check of a buffer reports."""

    path: Path
    text_hash: str
    findings: list[Finding] = field(default_factory=list)  # after suppressions and selection
    notes: list = field(default_factory=list)  # notes.Note about this file (headers found nowhere)
    how: str = "parsed"  # parsed | cached | prefiltered | excluded | failed
    rules: dict = field(default_factory=dict)  # code -> Rule the file was checked with
    fixes: list | None = None  # edits.Fix of the parse; None: not known (the result came from the cache)
    logs: list[str] = field(default_factory=list)  # what check would have printed on stderr
    seconds: float = 0.0


class BackgroundChecks:
    """Checks of buffers in forked children, each cancellable (see the module's docstring)."""

    def __init__(self, args: argparse.Namespace, jobs: int, timeout: float | None) -> None:
        self.opts = check_args(args)  # options.CheckOptions
        self.timeout = timeout or None
        self.slots = asyncio.Semaphore(max(1, jobs))
        self.stats: Counter = Counter()
        self.running: dict[int, float] = {}  # child pid -> start time
        from fusionlint.frontend.cublaslt.api_data import ApiData

        self.api = ApiData()  # the stand-in headers and API model the checks use (warm_up: the cache's copies)

    @property
    def cache_root(self) -> str | None:
        if self.opts.no_cache:
            return None
        from fusionlint.run import cache

        return str(Path(self.opts.cache_dir) if self.opts.cache_dir else cache.default_dir())

    def warm_up(self) -> None:
        """What every check needs, loaded once in the server so that each child inherits it: the
        extractors, the stand-in headers and API model, the built-in rules."""
        from fusionlint.run import cache, pipeline

        pipeline.import_extractors()
        if self.cache_root is not None:
            self.api = cache.Cache(Path(self.cache_root)).prime_api_model(load_model=True)
        self.api.stand_ins()
        self.api.model()
        from fusionlint.lsp.edits import size_fixes  # noqa: F401 - imported in the children

        with contextlib.redirect_stderr(io.StringIO()):
            checker = new_checker(self.opts, Path.cwd() / "-", b"")
            checker.validate()

    async def check(self, path: Path, text: str) -> BufferResult:
        """Check the buffer ``text`` of ``path``. Raises ``InputError`` for a configuration that
        cannot be used (the caller reports it), ``asyncio.CancelledError`` when cancelled."""
        from fusionlint.run.workers import ChildFailed, Outcome

        started = time.monotonic()
        self.stats["checks"] += 1
        out = BufferResult(path, content_hash(text))
        logs = io.StringIO()
        with contextlib.redirect_stderr(logs):
            checker = new_checker(self.opts, path, buffer_bytes(text))
            prepared = prepare_buffer(checker, path, text)
            if prepared is not None:
                checker.validate()  # the rules are read here, before the child is forked (it inherits them)
        if prepared is None:
            self.stats["excluded"] += 1
            out.how = "excluded"
            out.logs = logs.getvalue().splitlines()
            return out
        if prepared.result is None:
            async with self.slots:
                self.stats["parsed"] += 1
                try:
                    outcome, out.fixes = await self.run_isolated(child_check, prepared.task, text, self.cache_root,
                                                                 True, self.api)
                except ChildFailed as exc:
                    self.stats["failed"] += 1
                    outcome = Outcome(0, [not_checked(path, str(exc))], str(exc))
                    out.fixes = []
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - raised in the child: that file's FL000
                    reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
                    outcome = Outcome(0, [not_checked(path, reason)], reason)
                    out.fixes = []
            prepared.result = cached_result(outcome)
            out.how = "failed" if outcome.error else "parsed"
        else:
            out.how = prepared.how
            self.stats["cache_hits" if prepared.how == "cached" else prepared.how] += 1
            if prepared.how == "prefiltered":
                out.fixes = []
        with contextlib.redirect_stderr(logs), suppressions_from(path, text):
            out.findings, _ = checker.report(prepared, prepared.result)
        out.notes = [n for n in getattr(checker, "notes", ()) if n.path is not None
                     and os.path.abspath(n.path) == os.path.abspath(path)]
        out.rules = {r.id: r for r in prepared.settings.rules.get()}
        out.logs = logs.getvalue().splitlines()
        out.seconds = time.monotonic() - started
        return out

    async def fixes(self, path: Path, text: str) -> list:
        """The quick fixes of a buffer whose result came from the cache (a parse for its facts)."""
        from fusionlint.run.workers import ChildFailed

        with contextlib.redirect_stderr(io.StringIO()):
            checker = new_checker(self.opts, path, buffer_bytes(text))
            prepared = prepare_buffer(checker, path, text)
            if prepared is None:
                return []
            checker.validate()
        if prepared.task is None:  # a cache hit: make the task that would have run
            from fusionlint.run.workers import Task

            options, arch = checker.options(path, prepared.settings)
            if checker.cache is not None and checker.use_pch:
                options.pch_dir = str(checker.cache.pch_dir)
            prepared.task = Task(0, path, options, prepared.settings.rules, arch)
        async with self.slots:
            self.stats["fact_runs"] += 1
            try:
                _, found = await self.run_isolated(child_check, prepared.task, text, None, True, self.api)
            except (ChildFailed, Exception):  # noqa: BLE001 - no fixes, the diagnostics stand
                return []
        return found

    async def run_isolated(self, fn, *args):
        """``fn(*args)`` in a forked child, awaited without blocking the event loop; cancelling kills
        the child. ``ChildFailed`` when it crashed or ran past the time limit."""
        from fusionlint.run.workers import Isolated, can_isolate

        if not can_isolate():  # FUSIONLINT_IN_PROCESS=1: for debugging, no isolation
            return fn(*args)
        loop = asyncio.get_running_loop()
        since = time.time()
        child = Isolated(fn, *args, timeout=self.timeout)
        pid = child.pid
        self.running[pid] = since
        ready = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(child.read_end, wake)
        timer = loop.call_later(self.timeout, wake) if self.timeout else None
        try:
            try:
                await ready
            finally:
                loop.remove_reader(child.read_end)
                if timer is not None:
                    timer.cancel()
        except BaseException:  # cancelled: a newer edit, the buffer closed, shutdown
            child.cancel()
            self.stats["cancelled"] += 1
            self._clean_up_after(pid, since)
            raise
        finally:
            self.running.pop(pid, None)
        return child.result()  # the child has written its reply (or died, or is past its time)

    def _clean_up_after(self, pid: int, since: float) -> None:
        """After killing a child: the PCH lock it may have held (else no PCH is built for that
        preamble for ``parse._PCH_LOCK_AGE`` seconds) and its temporary PCH file. A lock another
        process made meanwhile may go too: two builders then write the same PCH, each atomically."""
        root = self.cache_root
        if root is None:
            return
        from fusionlint.run import cache

        pch = Path(root) / cache.FORMAT / "pch"
        try:
            for p in pch.glob("*.lock"):
                try:
                    if p.stat().st_mtime >= since - 0.01:
                        p.unlink()
                except OSError:
                    pass
            for p in pch.glob(f"{cache._TMP_PREFIX}*-{pid}.pch"):
                with contextlib.suppress(OSError):
                    p.unlink()
        except OSError:
            pass

    def kill_running(self) -> None:
        """Kill the children of checks that are still running (the server is going)."""
        import signal

        for pid in list(self.running):
            with contextlib.suppress(OSError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            self.running.pop(pid, None)

    def snapshot(self) -> dict:
        return {**{k: self.stats.get(k, 0) for k in ("checks", "parsed", "cache_hits", "prefiltered", "excluded",
                                                      "cancelled", "failed", "fact_runs")},
                "running": sorted(self.running)}
