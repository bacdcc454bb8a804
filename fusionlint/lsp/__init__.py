"""``fusionlint server``: a language server with live diagnostics, hover documentation and quick fixes.

``server.py`` speaks the protocol (pygls, a dependency of fusionlint),
``checks.py`` checks buffers in the background with ``check``'s machinery, ``edits.py`` makes the
positions and quick fixes. This module only declares the command line (``cli.py`` builds every
command's parser at start-up; nothing here imports pygls).
"""
from __future__ import annotations

import argparse
import sys

DEFAULT_DEBOUNCE = 0.3


def _arch(text: str) -> str:
    """``--arch``, normalized as ``check`` normalizes it where it can (``fusionlint.arch``)."""
    try:
        from fusionlint.arch import argument
    except ImportError:
        return text
    return argument(text)


def add_arguments(p: argparse.ArgumentParser, positive_int) -> None:
    """The options of ``fusionlint server`` besides the front end's (-I, -D, --std, --no-system-headers)."""
    p.add_argument("--stdio", action="store_true",
                   help="talk LSP on stdin/stdout (the default and only transport; accepted for editors that pass it)")
    p.add_argument("--debounce", type=float, default=DEFAULT_DEBOUNCE, metavar="SECONDS",
                   help=f"check an edited buffer after SECONDS without another change (default: {DEFAULT_DEBOUNCE})")
    p.add_argument("-j", "--jobs", type=positive_int, metavar="N",
                   help="buffers checked at a time, each in a child process (default: all cores)")
    from fusionlint.defaults import CHECK_TIMEOUT

    p.add_argument("--timeout", type=float, default=float(CHECK_TIMEOUT), metavar="SECONDS",
                   help=f"give up on a buffer after SECONDS, reported as FL000 (default: {CHECK_TIMEOUT}; 0: no limit)")
    p.add_argument("--arch", type=_arch, metavar="ARCH", help="target architecture of the rules (as for check)")
    p.add_argument("--ruleset", action="append", metavar="FILE", help="add a ruleset file (repeatable)")
    p.add_argument("--support-table", metavar="FILE", help="the measured cuBLASLt support table FL127 checks against")
    p.add_argument("-p", "--compile-commands", metavar="PATH",
                   help="compile_commands.json (or its directory); default: the nearest one above each file")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache and PCHs")
    p.add_argument("--cache-dir", metavar="DIR", help="cache directory (as for check)")
    p.add_argument("--no-pch", action="store_true", help="do not use precompiled headers")
    p.add_argument("--no-prefilter", action="store_true", help="parse every buffer, also those without GEMM tokens")


def run(args: argparse.Namespace) -> int:
    """Serve on stdin/stdout until the client says exit (or goes away)."""
    try:
        from fusionlint.lsp.server import build
    except ImportError as exc:  # pygls is a dependency; an environment may still lack it
        print(f"fusionlint: error: the language server needs pygls ({exc}): pip install pygls",
              file=sys.stderr)
        return 2
    from fusionlint.run.check import default_jobs
    from fusionlint.lsp.checks import BackgroundChecks

    checks = BackgroundChecks(args, args.jobs or default_jobs(), args.timeout)
    checks.warm_up()  # before the protocol's reader thread exists: imports, stand-in headers, rules
    server = build(checks, max(0.0, args.debounce))
    protocol_out = _protocol_stdout()
    try:
        # asyncio.run: the checks still running at the end are cancelled (their children killed)
        server.start_io(sys.stdin.buffer, protocol_out)
    finally:
        checks.kill_running()
    return 0 if getattr(server.protocol, "_shutdown", True) else 1  # exit without shutdown: 1 (LSP)


def _protocol_stdout():
    """The protocol's own copy of stdout; file descriptor 1 then goes to stderr, so that nothing
    else the process writes (a stray print) can corrupt the messages."""
    import os

    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return out
