"""The session's talk to the shared index after its start, on a thread of its own, so no search ever waits on it.

When does a session ask the database again? When HEAD moves (a checkout, a pull, a commit: looked at after
each index run and every minute), after an index run that left chunks of files held as published waiting for
a vector, and when the database did not answer: then again after 1 s, 2 s, 4 s... up to a minute, until it
does. What it takes is the nearest generation's description (for `rag/status`) and vectors for chunks still
waiting for one; chunks and ranking stay the session's own. An outage is one warning, and searches go on
with the local index meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ragls.config import Settings
from ragls.rag.generation import IndexState
from ragls.rag.shared.database import SharedIndexError, SharedIndexUnreachable
from ragls.rag.shared.git import head_commit
from ragls.rag.shared.reader import SharedSource, refresh_shared

log = logging.getLogger(__name__)
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0
HEAD_POLL_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 10.0


class SharedSync:
    """One daemon thread per session with a shared index; `source` is what `rag/status` shows, replaced whole."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        state: IndexState,
        source: SharedSource,
        report: Callable[[str], None],
        save_vectors: Callable[[list[tuple[str, object]]], None],
        unreachable: bool,
    ) -> None:
        """`unreachable`: the start could not reach the database (and warned), so the first retry is due now."""
        self.source = source
        self._root, self._settings, self._state = root, settings, state
        self._report, self._save_vectors = report, save_vectors
        self._head = head_commit(root)
        self._retry_at: float | None = time.monotonic() + RETRY_FIRST_SECONDS if unreachable else None
        self._delay = RETRY_FIRST_SECONDS
        self._warned = unreachable
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ragls-shared", daemon=True)
        self._thread.start()

    @property
    def retrying(self) -> bool:
        return self._retry_at is not None

    def poke(self) -> None:
        """After an index run: look at HEAD, and at chunks waiting for vectors, now rather than at the next poll."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(STOP_TIMEOUT_SECONDS)

    def _run(self) -> None:
        while not self._stop.is_set():
            woken = self._wake.wait(self._seconds_to_wait())
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self._step(woken)
            except Exception:  # the thread outlives any surprise; the session goes on with its local index
                log.exception("the shared index's refresh failed")

    def _seconds_to_wait(self) -> float:
        if self._retry_at is None:
            return HEAD_POLL_SECONDS
        return max(0.0, self._retry_at - time.monotonic())

    def _step(self, woken: bool) -> None:
        if self._retry_at is not None:
            if time.monotonic() >= self._retry_at:
                self._refresh()
            return  # while retrying, pokes and HEAD moves wait for the next try
        if head_commit(self._root) != self._head or (woken and self._vectors_wanted()):
            self._refresh()

    def _vectors_wanted(self) -> bool:
        """Chunks wait for vectors in files held as published, with the model the generation was published with."""
        vectors = self._state.vectors
        if vectors is None or vectors.provider.model != self.source.vector_model:
            return False
        pending = vectors.pending_ids()
        if not pending:
            return False
        published = self.source.fingerprints
        with self._state.lock.reading():
            return any(
                published.get(path) == record.fingerprint and any(i in pending for i in record.chunk_ids)
                for path, record in self._state.files.items()
            )

    def _refresh(self) -> None:
        head = head_commit(self._root)
        try:
            source, vectors = refresh_shared(self._root, self._settings, self._state)
        except SharedIndexUnreachable as exc:
            self._failed(str(exc))
            return
        except SharedIndexError as exc:  # reachable but not usable (nothing published for these settings...)
            self._retry_at = None
            self.source = replace(self.source, error=str(exc))
            self._head = head
            return
        self._head, self._retry_at, self._delay = head, None, RETRY_FIRST_SECONDS
        if self._warned:
            log.warning("the shared index %s is reachable again", source.name)
        self._warned = False
        if vectors and self._state.vectors is not None:
            filled = self._state.vectors.fill_by_id(vectors)
            source.vectors = self.source.vectors + len(filled)
            if filled:
                self._save_vectors(list(filled))
        else:
            source.vectors = self.source.vectors
        self.source = source

    def _failed(self, reason: str) -> None:
        """One warning per outage; the next try after a doubled delay, a minute at most."""
        self.source = replace(self.source, error=reason)
        if not self._warned:
            self._warned = True
            self._report(
                f"the shared index {self.source.name} ({self.source.source}) did not answer: {reason}; "
                f"searches use the local index, and it is asked again in the background (every "
                f"{RETRY_MAX_SECONDS:.0f} s at most)"
            )
        self._retry_at = time.monotonic() + self._delay
        self._delay = min(self._delay * 2, RETRY_MAX_SECONDS)
