"""Worker processes for ``fusionlint check``: one file at a time per worker, so that a libclang
crash (a segfault in C), a runaway file or a hang costs one ``FL000`` for that file, never the run.

libclang is not thread-safe per index, so parallelism is processes. On Linux workers are forked
from the command's process (nothing is imported twice); a worker that dies is replaced and the
run goes on; a file that takes longer than the timeout has its worker killed. Workers ignore
Ctrl-C: the main process stops them (SIGKILL) and exits 130. Workers write nothing to the
terminal; everything comes back through a pipe and the main process reports it in file order.

``FUSIONLINT_IN_PROCESS=1`` checks the files in the main process instead (for debuggers and
profilers): no isolation, no timeout.
"""
from __future__ import annotations

import gc
import os
import signal
import time
from collections import deque
from contextlib import contextmanager
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.findings import Finding, not_checked

TYPE_CHECKING = False

if TYPE_CHECKING:
    from fusionlint.model.call_context import IndexContext

TICK = 0.25  # seconds between on_tick calls while waiting for workers (the progress line's clock)

# Test-only hook: FUSIONLINT_TEST_WORKER_HOOK="crash:NAME,hang:NAME,raise:NAME,parse:NAME" makes a worker
# abort, sleep, raise, or spend minutes inside one libclang parse (in C, where Python's signal
# handlers do not run; it writes NAME.parsing beside the file first) on the file whose name is NAME.
# Never set outside the tests.
_HOOK_ENV = "FUSIONLINT_TEST_WORKER_HOOK"


@dataclass
class Task:
    index: int
    path: Path
    options: object  # ParseOptions
    rules: object  # the Rule objects, or a rules.cached.RuleSource (read in the worker when first needed)
    arch: str
    cache_key: str | None = None
    content_hash: str | None = None
    contexts: IndexContext | None = None  # the file's surroundings in the project index (calls, returns)
    includers: list | None = None  # [(path, ParseOptions)]: project files that include this one (the index)


@dataclass
class Outcome:
    index: int
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None
    seconds: float = 0.0
    max_rss_kb: int = 0
    rss_kb: int = 0
    pch: str | None = None
    cached: bool = False  # written to the cache
    pid: int = 0  # the process that checked the file
    undecided: list = field(default_factory=list)  # findings.Undecided: checks unknown facts left open
    missing_headers: list[str] = field(default_factory=list)  # headers found nowhere (empty stand-ins)
    functions_not_read: list[str] = field(default_factory=list)  # definitions the parse lost (-v notes)


def _test_hook(path: Path) -> None:
    spec = os.environ.get(_HOOK_ENV)
    if not spec:
        return
    for item in spec.split(","):
        action, _, name = item.partition(":")
        if name != path.name:
            continue
        if action == "crash":
            os.abort()
        elif action == "segv":
            import ctypes

            ctypes.string_at(0)
        elif action == "hang":
            time.sleep(3600)
        elif action == "raise":
            raise RecursionError("maximum recursion depth exceeded (test hook)")
        elif action == "parse":
            _slow_parse(path)


# a constant expression of 2e9 loop steps: minutes of libclang's constexpr evaluator
_SLOW_SOURCE = ("constexpr long spin(long n) { long s = 0; for (long i = 0; i < n; ++i) s += i % 7; return s; }\n"
                "static_assert(spin(2000000000L) != 1, \"\");\n")


def _slow_parse(path: Path) -> None:
    import clang.cindex as ci

    path.with_name(path.name + ".parsing").write_text(str(os.getpid()))
    ci.Index.create().parse("slow.cpp", args=["-std=c++17", "-fconstexpr-steps=2147483647"],
                            unsaved_files=[("slow.cpp", _SLOW_SOURCE)])


def _rss_kb() -> tuple[int, int]:
    """(peak, current) resident memory of this process in KiB."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        with open("/proc/self/statm") as f:
            current = int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        current = 0
    return peak, current


def run_task(task: Task, cache_dir: str | None, api: object | None = None) -> Outcome:
    """Check one file (in a worker, or in the main process) and store its result in the cache.
    ``api``: the stand-in headers and API model to check it with (``frontend.cublaslt.api_data.ApiData``, which
    ``check`` reads from its cache; None: the shipped ones). ``run_tasks``'s ``work`` is this with
    the run's ``api`` bound (``functools.partial``)."""
    from fusionlint.run import cache, pipeline

    start = time.time()
    try:
        _test_hook(task.path)
        result = pipeline.check_file(task.path, task.rules, task.options, task.arch, api=api,
                                     contexts=getattr(task, "contexts", None),
                                     includers=getattr(task, "includers", None))
    except Exception as exc:  # noqa: BLE001 - a failure outside the pipeline's own guard
        result = pipeline.FileResult(str(task.path))
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        result.error = reason
        result.findings = [not_checked(task.path, reason)]
    record = result.unit  # the parse's include closure and missing headers (None: no parse finished)
    out = Outcome(task.index, result.findings, result.error, result.skipped, time.time() - start)
    out.missing_headers = list(result.missing_headers)
    out.pch = record.pch if record else None
    out.undecided = list(result.undecided)
    out.functions_not_read = list(result.functions_not_read)
    if cache_dir and task.cache_key and result.error is None:
        try:
            if cache.file_hash(str(task.path)) != task.content_hash:
                pass  # the file changed while it was checked
            elif result.skipped is not None and record is None:  # not source: decided from the bytes alone
                out.cached = cache.Cache(Path(cache_dir)).store(task.cache_key, [], [], [], skipped=result.skipped)
            elif result.skipped is None and record and record.path == str(task.path):
                deps = cache.dependencies(list(record.includes), start)
                if deps is not None:
                    absent = cache.absent_candidates(list(record.missing), str(task.path), list(record.args),
                                                     list(record.includes))
                    out.cached = cache.Cache(Path(cache_dir)).store(task.cache_key, result.findings, deps, absent,
                                                                    missing=result.missing_headers,
                                                                    undecided=result.undecided,
                                                                    not_read=result.functions_not_read)
        except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
            pass
    result.facts = None
    out.max_rss_kb, out.rss_kb = _rss_kb()
    out.pid = os.getpid()
    return out


@contextmanager
def _interrupt_deferred():
    """Ctrl-C held back (SIGINT blocked) while a child is forked and recorded, so that an interrupt
    never falls between the fork and the record the main process kills its children from; a Ctrl-C
    that came meanwhile is raised as the block ends. The child inherits the block and lifts it in
    ``_become_worker``, once it ignores SIGINT."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    mask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        mask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _become_worker() -> None:
    """In a forked worker: Ctrl-C is the main process's business, no core dumps or fault
    tracebacks for a crash (the main process reports it), nothing written to the terminal, and
    a libclang index of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by _interrupt_deferred
    try:
        import faulthandler

        faulthandler.disable()
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    from fusionlint.frontend.clang import parse

    parse._index.cache_clear()  # never share the parent's libclang index


def _worker_main(conn, cache_dir: str | None, work: Callable[[Task, str | None], object] = run_task) -> None:
    _become_worker()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            break
        if task is None:
            break
        conn.send(work(task, cache_dir))
    conn.close()


class _Worker:
    def __init__(self, ctx, cache_dir: str | None, work: Callable[[Task, str | None], object] = run_task) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, cache_dir, work), daemon=True)
        self.proc.start()
        child.close()
        self.task: Task | None = None
        self.started = 0.0

    def send(self, task: Task) -> None:
        self.task, self.started = task, time.monotonic()
        self.conn.send(task)

    def stop(self, kill: bool = False) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except OSError:
                kill = True
        if not kill:
            self.proc.join(2)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.conn.close()


def _failed(task: Task, reason: str, seconds: float) -> Outcome:
    return Outcome(task.index, [not_checked(task.path, reason)], reason, None, seconds)


def _signal_name(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def run_tasks(tasks: Iterable[Task], jobs: int, timeout: float | None, cache_dir: str | None,
              on_outcome: Callable[[Outcome], None], on_start: Callable[[Task], None] | None = None,
              on_tick: Callable[[], None] | None = None, work: Callable[[Task, str | None], object] = run_task,
              failed: Callable[[Task, str, float], object] | None = None) -> None:
    """Run every task in a pool of forked workers, calling ``on_outcome`` as each finishes (in
    completion order), ``on_start`` as each is handed to a worker, and ``on_tick`` every
    ``TICK`` seconds while waiting (the progress line's clock). ``check`` starts a single file with
    :class:`OneFile` instead (before reading the rules).

    ``work(task, cache_dir)`` is what a worker does with a task (``run_task``: check the file), and
    ``failed(task, reason, seconds)`` the outcome of a task whose worker crashed or ran past the
    time limit (the file's FL000); another command gives its own (``verify`` lints each file's
    configurations: a task there is any object with ``index`` and ``path``, and so is the outcome
    with its ``index``)."""
    failed = failed or _failed
    pending = deque(tasks)
    if not pending:
        return
    if os.environ.get("FUSIONLINT_IN_PROCESS") == "1":
        while pending:
            task = pending.popleft()
            if on_start is not None:
                on_start(task)
            on_outcome(work(task, cache_dir))
        return
    import multiprocessing as mp
    from multiprocessing.connection import wait

    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else "spawn")
    n = max(1, min(jobs, len(pending)))
    workers: list[_Worker] = []
    try:
        for _ in range(n):
            with _interrupt_deferred():  # a started worker is in `workers` before Ctrl-C can stop the run
                workers.append(_Worker(ctx, cache_dir, work))
        failures = 0
        while True:
            for i, w in enumerate(workers):
                if w.task is None and pending:
                    try:
                        w.send(pending[0])
                        started = pending.popleft()
                        if on_start is not None:
                            on_start(started)
                    except OSError:  # it died before it got the task: start another
                        w.task = None
                        w.stop(kill=True)
                        failures += 1
                        if failures > 3 * n + 3:
                            raise RuntimeError("cannot start worker processes") from None
                        with _interrupt_deferred():
                            workers[i] = _Worker(ctx, cache_dir, work)
            busy = [w for w in workers if w.task is not None]
            if not busy:
                if not pending:
                    break
                continue
            wait_for = None
            if timeout:
                now = time.monotonic()
                wait_for = max(0.0, min(w.started + timeout - now for w in busy))
            if on_tick is not None:
                on_tick()
                wait_for = TICK if wait_for is None else min(wait_for, TICK)
            ready = wait([x for w in busy for x in (w.conn, w.proc.sentinel)], wait_for)
            for i, w in enumerate(workers):
                if w.task is None:
                    continue
                task = w.task
                elapsed = time.monotonic() - w.started
                outcome = None
                replace = False
                if w.conn in ready or w.proc.sentinel in ready:
                    try:
                        if w.conn.poll():
                            outcome = w.conn.recv()
                    except (EOFError, OSError):
                        outcome = None
                    if outcome is None:
                        w.proc.join(5)
                        outcome = failed(task, f"the parser crashed ({_signal_name(w.proc.exitcode)}); "
                                               "the other files were checked", elapsed)
                        replace = True
                elif timeout and elapsed >= timeout:
                    outcome = failed(task, f"timed out after {timeout:g} s (--timeout)", elapsed)
                    replace = True
                if outcome is None:
                    continue
                w.task = None
                if replace:
                    w.stop(kill=True)
                    if pending:
                        with _interrupt_deferred():
                            workers[i] = _Worker(ctx, cache_dir, work)
                on_outcome(outcome)
            workers = [w for w in workers if w.proc.is_alive() or w.task is not None or pending]
            if not pending and all(w.task is None for w in workers):
                break
    finally:
        for w in workers:
            w.stop(kill=bool(pending) or w.task is not None)


class ChildFailed(Exception):
    """What ``call_isolated`` raises when the child crashed or ran past its time."""


class Isolated:
    """``fn(*args)`` running in a forked child, its result pickled back through a pipe: a libclang
    crash (a segfault in C) or a hang costs :class:`ChildFailed` in :meth:`result`, never this
    process. The parent may go on with other work while the child runs (``check`` loads its rules
    and report modules while a single file is parsed); :meth:`cancel` kills the child."""

    def __init__(self, fn: Callable[..., object], *args: object, timeout: float | None = None) -> None:
        self.timeout = timeout
        self.started = time.monotonic()
        read_end, write_end = os.pipe()
        self.pid: int | None = None
        self.read_end: int | None = read_end
        try:
            with _interrupt_deferred():  # the child is recorded before Ctrl-C can act
                pid = os.fork()
                if pid == 0:  # the child: run, send the pickled result (or the exception), leave without cleanup
                    try:
                        os.close(read_end)
                        _become_worker()
                        _send_reply(write_end, fn, args)
                    finally:
                        os._exit(0)
                os.close(write_end)
                self.pid = pid
        except BaseException:  # a Ctrl-C held back during the fork: the child goes with the run
            self.cancel()
            raise

    def cancel(self) -> None:
        if self.pid is not None:
            _kill(self.pid)
            self.pid = None
        if self.read_end is not None:
            os.close(self.read_end)
            self.read_end = None

    def result(self, on_tick: Callable[[], None] | None = None) -> object:
        """Wait for the child: its return value, or the exception it raised; ``ChildFailed`` when it
        crashed or ran past the time limit (``on_tick`` is called every ``TICK`` seconds meanwhile).
        Ctrl-C kills the child and goes on up."""
        import pickle
        import select

        assert self.pid is not None and self.read_end is not None, "result() of a finished child"
        chunks: list[bytes] = []
        timed_out = False
        try:
            while True:
                wait_for = None
                if self.timeout:
                    wait_for = max(0.0, self.started + self.timeout - time.monotonic())
                if on_tick is not None:
                    on_tick()
                    wait_for = TICK if wait_for is None else min(wait_for, TICK)
                ready, _, _ = select.select([self.read_end], [], [], wait_for)
                if not ready:
                    if self.timeout and time.monotonic() >= self.started + self.timeout:
                        timed_out = True
                        break
                    continue
                chunk = os.read(self.read_end, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        except BaseException:  # Ctrl-C: the child goes with the run
            self.cancel()
            raise
        if timed_out:
            self.cancel()
            raise ChildFailed(f"timed out after {self.timeout:g} s (--timeout)")
        os.close(self.read_end)
        self.read_end = None
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        try:
            reply = pickle.loads(b"".join(chunks)) if chunks else None
        except Exception:  # noqa: BLE001 - a child that died half-way through sending
            reply = None
        if not (isinstance(reply, tuple) and len(reply) == 2):
            code = os.waitstatus_to_exitcode(status)
            raise ChildFailed(f"the parser crashed ({_signal_name(code)}); the other files were checked")
        if reply[0] == "raised":
            raise reply[1]
        return reply[1]


def _send_reply(write_end: int, fn: Callable[..., object], args: tuple) -> None:
    import pickle

    try:
        reply: tuple = ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001 - raised again in the parent
        reply = ("raised", exc)
    try:
        data = pickle.dumps(reply)
    except Exception as exc:  # noqa: BLE001 - an exception that cannot be pickled
        data = pickle.dumps(("raised", RuntimeError(f"{type(exc).__name__}: {exc}")))
    with os.fdopen(write_end, "wb") as f:
        f.write(data)


def call_isolated(fn: Callable[..., object], *args: object, timeout: float | None = None) -> object:
    """``fn(*args)`` in one forked child (:class:`Isolated`), waited for. Without ``os.fork`` (or
    with ``FUSIONLINT_IN_PROCESS=1``) it is a plain call."""
    if not can_isolate():
        return fn(*args)
    return Isolated(fn, *args, timeout=timeout).result()


def can_isolate() -> bool:
    return os.environ.get("FUSIONLINT_IN_PROCESS") != "1" and hasattr(os, "fork")


def _run_only_task(task: Task, cache_dir: str | None, api: object | None) -> Outcome:
    """``run_task`` in a child that ends after this one file, without the cyclic garbage collector:
    the extraction makes many short-lived objects and few cycles (collecting cost ~4% of its time),
    and the child's end frees everything. Workers that check file after file keep it on (with it
    off per file, a worker's memory grew ~9 KiB a file over 500 files)."""
    gc.disable()
    return run_task(task, cache_dir, api)


class OneFile:
    """One file in one forked child, without a pool: the isolation of ``run_tasks``'s workers (a
    crash or a time-out is the file's FL000, Ctrl-C kills the child), minus the start-up of
    ``multiprocessing`` (~0.05 s, a tenth of a small file's own overhead). The
    child starts at once; :meth:`outcome` waits for it, :meth:`cancel` kills it."""

    def __init__(self, task: Task, timeout: float | None, cache_dir: str | None, api: object | None = None) -> None:
        self.task = task
        self.started = time.monotonic()
        self.child = Isolated(_run_only_task, task, cache_dir, api, timeout=timeout)

    def outcome(self, on_tick: Callable[[], None] | None = None) -> Outcome:
        try:
            outcome = self.child.result(on_tick)
        except ChildFailed as exc:
            return _failed(self.task, str(exc), time.monotonic() - self.started)
        assert isinstance(outcome, Outcome)
        return outcome

    def cancel(self) -> None:
        self.child.cancel()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (OSError, ChildProcessError):
        pass
