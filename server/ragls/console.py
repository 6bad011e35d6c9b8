"""What the CLI shows a person: answers on stdout; a progress bar, notes, warnings and errors on stderr.

A bar is redrawn in place, so it leaves stderr mid-line; whatever is written there next ends that line
first, so an error after a bar starts a line of its own.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ragls.model import Progress

BAR_WIDTH = 24
LINE_CHARS = 100
REDRAW_SECONDS = 0.05


@contextmanager
def progress_bar(quiet: bool) -> Iterator[ProgressBar | None]:
    """A bar on stderr unless `quiet`; its line is ended however the work ends."""
    bar = None if quiet else ProgressBar()
    try:
        yield bar
    finally:
        _STDERR.end_line()


class ProgressBar:
    """Done/total and what is being done, redrawn in place when stderr is a terminal (and not drawn otherwise)."""

    def __init__(self) -> None:
        self.is_tty = sys.stderr.isatty()
        self.last_draw = 0.0
        self.phase = ""

    def files(self, progress: Progress) -> None:
        """A run's progress: the bar while files are read, the phase in words before and after (each new phase
        drawn at once)."""
        new_phase = progress.phase != self.phase
        self.phase = progress.phase
        if progress.phase == "read":
            self.draw(progress.indexed_files, progress.total_files, progress.current_file, force=new_phase)
        else:
            self.step(progress.describe(), force=new_phase)

    def step(self, label: str, force: bool = False) -> None:
        """A phase without a count of its own (walk, index, save): its words where the bar would be."""
        now = time.monotonic()
        if self.is_tty and (force or now - self.last_draw > REDRAW_SECONDS):
            self.last_draw = now
            _STDERR.draw(label[:LINE_CHARS].ljust(LINE_CHARS))

    def chunks(self, embedded: int, total: int) -> None:
        self.draw(embedded, total, "chunks embedded")

    def draw(self, done: int, total: int, label: str, force: bool = False) -> None:
        now = time.monotonic()
        if self.is_tty and (force or now - self.last_draw > REDRAW_SECONDS or done == total):
            self.last_draw = now
            filled = BAR_WIDTH * done // max(total, 1)
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            _STDERR.draw(f"[{bar}] {done}/{total} {label}"[:LINE_CHARS].ljust(LINE_CHARS))


class StderrHandler(logging.Handler):
    """Log records as `ragls: warning: ...` lines, each on a line of its own."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            say(f"ragls: {record.levelname.lower()}: {record.getMessage()}")
        except Exception:
            self.handleError(record)


def say(message: str) -> None:
    """A line on stderr, after ending a bar's line."""
    _STDERR.end_line()
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def out(*parts: object) -> None:
    """A line of the answer on stdout."""
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")


class _Stderr:
    """Whether a bar has left stderr mid-line."""

    def __init__(self) -> None:
        self.line_open = False

    def draw(self, line: str) -> None:
        sys.stderr.write("\r" + line)
        sys.stderr.flush()
        self.line_open = True

    def end_line(self) -> None:
        if self.line_open:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.line_open = False


_STDERR = _Stderr()
