"""A progress line on the terminal for long runs (``check``, ``test-rules``): files done / total,
elapsed time and the file being checked, redrawn in place on stderr.

Only when stderr is a terminal (never when it is a pipe or a file, so CI logs and editors see
nothing), not with ``--quiet``, not for ``TERM=dumb``. While the line is up, ``sys.stderr`` (and
``sys.stdout`` when it is the same terminal) are wrapped so that anything else written there
first clears the line: notes and results are never mixed with it. Workers write nothing to the
terminal (``workers._become_worker``), so the main process owns the line.
"""
from __future__ import annotations

import os
import sys
import time

_CLEAR = "\r\x1b[K"
_MIN_REDRAW = 0.1  # seconds between redraws (the elapsed time changes once a second)


def wanted(quiet: bool = False) -> bool:
    if quiet or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Guard:
    """A text stream whose writes clear the progress line first (it is drawn again on the next tick)."""

    def __init__(self, stream, progress: Progress) -> None:
        self._stream = stream
        self._progress = progress

    def write(self, text: str) -> int:
        self._progress.clear()
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class Progress:
    """``with Progress(total, enabled) as p: p.started(path); p.finished(); p.tick()``; does
    nothing at all when not enabled."""

    def __init__(self, total: int, enabled: bool, what: str = "files") -> None:
        self.total = total
        self.enabled = enabled
        self.what = what
        self.done = 0
        self.current = ""
        self.start = time.monotonic()
        self._drawn = False
        self._last = 0.0
        self._err = sys.stderr
        self._saved: tuple | None = None

    def __enter__(self) -> Progress:
        if self.enabled:
            self._saved = (sys.stdout, sys.stderr)
            sys.stderr = _Guard(self._err, self)
            try:
                same_terminal = sys.stdout.isatty()
            except (AttributeError, ValueError):
                same_terminal = False
            if same_terminal:
                sys.stdout = _Guard(sys.stdout, self)
            self.draw()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            self.clear()
            sys.stdout, sys.stderr = self._saved
            self._saved = None

    # -- events --------------------------------------------------------------------------------
    def started(self, path: object) -> None:
        self.current = str(path)
        self.tick()

    def finished(self, n: int = 1) -> None:
        self.done += n
        self.tick()

    def tick(self) -> None:
        """Redraw if it is time (called on each event and, while waiting for workers, a few times a second)."""
        if self.enabled and time.monotonic() - self._last >= _MIN_REDRAW:
            self.draw()

    # -- drawing -------------------------------------------------------------------------------
    def line(self) -> str:
        seconds = int(time.monotonic() - self.start)
        elapsed = f"{seconds // 60}:{seconds % 60:02d}"
        text = f"fusionlint: {self.done}/{self.total} {self.what}  {elapsed}"
        if self.current and self.done < self.total:
            text += f"  {self.current}"
        return text

    def draw(self) -> None:
        if not self.enabled:
            return
        width = self._width()
        text = self.line()
        if len(text) > width - 1:  # never wrap: the carriage return only goes back one line
            text = text[:max(0, width - 4)] + "..."
        try:
            self._err.write(_CLEAR + text)
            self._err.flush()
        except (OSError, ValueError):
            self.enabled = False
            return
        self._drawn = True
        self._last = time.monotonic()

    def _width(self) -> int:
        """The terminal's columns: ``COLUMNS``, else stderr's terminal (stdout may be a pipe), else 80."""
        try:
            columns = int(os.environ.get("COLUMNS", ""))
        except ValueError:
            columns = 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(self._err.fileno()).columns
            except (AttributeError, OSError, ValueError):
                columns = 0
        return columns if columns > 0 else 80

    def clear(self) -> None:
        if self._drawn:
            self._drawn = False
            try:
                self._err.write(_CLEAR)
                self._err.flush()
            except (OSError, ValueError):
                self.enabled = False
