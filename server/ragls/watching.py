"""`ragls watch`: an indexed folder kept fresh from file events, one line per changed file, until a signal.

Each change is saved to the folder's store before its line is printed, so `ragls search`, `ragls mcp` or an
editor started meanwhile loads it current. SIGINT (Ctrl-C) and SIGTERM end the watch; the caller closes the
service, which finishes the saves and writes the snapshot.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

from ragls.console import out, say
from ragls.ingest.watch import FolderWatcher
from ragls.rag.freshness import FreshnessQueue
from ragls.rag.indexer import FileChange
from ragls.rag.service import RagService, RunSummary

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# How long a change's save may take before its line is printed anyway (the store catches up behind it).
SAVE_WAIT_SECONDS = 30.0


@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """An event that SIGINT and SIGTERM set instead of interrupting (the previous handlers come back after)."""
    stop = threading.Event()
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in STOP_SIGNALS}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def keep_fresh(service: RagService, stop: threading.Event) -> None:
    """Watch the service's folder and re-ingest what changes, printing each file's change, until `stop` is set."""
    assert service.root is not None
    queue = FreshnessQueue(lambda: service, on_done=partial(_print_changes, service))
    watcher = FolderWatcher(service.root, service.settings.limits, queue.submit)
    watcher.start()
    try:
        while not watcher.listening.wait(0.1) and not stop.is_set():
            pass
        if not stop.is_set():
            out(f"watching {service.root} (Ctrl-C stops)")
            sys.stdout.flush()
        while not stop.wait(0.5):
            pass
    finally:
        watcher.stop()
        queue.close()


def change_line(change: FileChange) -> str:
    """`added src/a.py (3 chunks)`, `updated ...`, `removed src/a.py`, `skipped big.pdf (needsExtra)`."""
    if change.action in ("added", "updated"):
        return f"{change.action} {change.path} ({change.chunks} chunk{'' if change.chunks == 1 else 's'})"
    if change.action == "skipped":
        return f"skipped {change.path} ({change.reason})"
    return f"{change.action} {change.path}"


def _print_changes(service: RagService, summary: RunSummary | None, error: Exception | None) -> None:
    """On the freshness queue's thread: a failed refresh (a limit crossed) is a warning, and the watch goes on."""
    if error is not None:
        say(f"ragls: warning: refreshing changed files failed: {error}")
        return
    if summary is None or not summary.report.changes:
        return
    service.wait_for_saves(SAVE_WAIT_SECONDS)
    for change in summary.report.changes:
        out(change_line(change))
    sys.stdout.flush()
