"""Freshness: changed paths are collected briefly, then re-ingested together with fingerprint reuse."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from ragls.rag.service import RagService, RunSummary

DEBOUNCE_SECONDS = 0.03
MAX_DELAY_SECONDS = 0.25
log = logging.getLogger(__name__)


class FreshnessQueue:
    """Debounces path events for one session; each flush re-ingests only the paths that changed."""

    def __init__(
        self,
        service: Callable[[], RagService],
        on_done: Callable[[RunSummary | None, Exception | None], None] | None = None,
        debounce: float = DEBOUNCE_SECONDS,
        max_delay: float = MAX_DELAY_SECONDS,
    ) -> None:
        self._service = service
        self._on_done = on_done
        self._debounce = debounce
        self._max_delay = max_delay
        self._pending: set[str] = set()
        self._first_pending_at = 0.0
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, rel_paths: Iterable[str]) -> None:
        """Queue paths (relative to the folder); the flush comes after a short quiet period."""
        with self._lock:
            if self._closed:
                return
            if not self._pending:
                self._first_pending_at = time.monotonic()
            self._pending.update(rel_paths)
            if not self._pending:
                return
            if self._timer is not None:
                self._timer.cancel()
            waited = time.monotonic() - self._first_pending_at
            self._timer = threading.Timer(max(0.0, min(self._debounce, self._max_delay - waited)), self._flush)
            self._timer.daemon = True
            self._timer.start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            self._pending.clear()

    def _flush(self) -> None:
        with self._lock:
            paths, self._pending = sorted(self._pending), set()
            self._timer = None
        if not paths:
            return
        try:
            summary = self._service().update_paths(paths)
        except Exception as exc:
            log.warning("re-ingesting %d changed paths failed: %s", len(paths), exc)
            if self._on_done is not None:
                self._on_done(None, exc)
            return
        if self._on_done is not None:
            self._on_done(summary, None)
