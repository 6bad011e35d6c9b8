"""When committed generations reach disk: each delta saved in order on a worker thread, yielding to searches,
and the snapshot written once changes and searches have gone quiet.

The session decides what is committed (under its index lock); this module decides when and how it is written,
so that a save or a snapshot never holds up a search or an edit for long.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ragls.rag.generation import Delta, GenerationImage, IndexState
from ragls.rag.memory import release_free_memory
from ragls.rag.saver import SerialWorker
from ragls.rag.store import IndexStore, StoredIndex

log = logging.getLogger(__name__)
SNAPSHOT_MAX_WAIT_SECONDS = 60.0
SEARCH_PAUSE_SECONDS = 1.0
# A save pauses between batches while searches are running (one in the last SEARCH_PAUSE_SECONDS) or an edit
# is being indexed, at most SAVE_MAX_YIELD_SECONDS per save: sharing the interpreter with a save made a large
# folder's searches twice as slow, and its edits 30% slower to become searchable.
SAVE_POLL_SECONDS = 0.02
SAVE_MAX_YIELD_SECONDS = 10.0


@dataclass
class _Capture:
    """A generation copied for the snapshot, with the store revision it matches and its order."""

    store: IndexStore
    image: GenerationImage
    revision: str
    number: int


class Persistence:
    """Saves and snapshots of one session's store. `store` is None when the session does not persist, or
    once a save failed (reported once); `last_search_at` is the session's, so saves can let searches go first."""

    def __init__(
        self,
        store: IndexStore | None,
        state: IndexState,
        index_lock: threading.Lock,
        report: Callable[[str], None],
    ) -> None:
        self.store = store
        self.state = state
        self.index_lock = index_lock
        self.report = report
        self.closing = False
        self.last_search_at = 0.0
        self.saver = SerialWorker("ragls-save")
        self.last_save = 0
        self._hurry = False
        self._timer: threading.Timer | None = None
        self._requested_at: float | None = None
        self._timer_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._captures = self._written = 0
        self._check_ticket = 0

    # ---------------------------------------------------------------- saves

    def queue(self, delta: Delta, manual_ids: set[str], snapshot_delay: float) -> None:
        """Hand a committed delta to the saver, with the generation it makes; the caller holds the index lock."""
        if self.store is None or self.closing:
            return
        generation, committed_at = self.state.generation, self.state.last_committed_at
        job = partial(self._save, delta, generation, committed_at, set(manual_ids), snapshot_delay)
        self.last_save = self.saver.submit(job)

    def wait(self, ticket: int | None = None, timeout: float | None = None) -> bool:
        """Block until the save `ticket` (default: every queued one) is written."""
        return self.saver.wait(ticket, timeout)

    def finish(self) -> None:
        """Wait for every queued save, which then yields to nothing; the caller holds the index lock."""
        self._hurry = True
        try:
            self.saver.wait()
        finally:
            self._hurry = False

    def save_vectors(self, items: list[tuple[str, Any]]) -> None:
        store, vectors = self.store, self.state.vectors
        if store is not None and vectors is not None:
            store.save_vectors(vectors.provider.model, items)

    def close(self) -> None:
        """Finish saving, write the snapshot if it is behind, close the store; the caller set `closing`."""
        self.saver.stop()
        self.snapshot_now(closing=True)
        if self.store is not None:
            self.store.close()

    def _save(
        self, delta: Delta, generation: int, committed_at: str | None, manual_ids: set[str], snapshot_delay: float
    ) -> None:
        """Persist a committed delta (on the saver's thread); a store that fails is reported once, then left alone."""
        store = self.store
        if store is None:
            return
        try:
            store.save(delta, generation, committed_at, manual_ids, self._searches_first())
        except Exception as exc:  # a bad row must not end persistence silently: say so once
            self.report(f"saving the index to {store.path} failed ({describe(exc)}); it will not be persisted")
            self.store = None
            return
        self.snapshot_when_quiet(snapshot_delay)

    def _searches_first(self) -> Callable[[], None]:
        """Between a save's batches: wait while searches are running or an edit is being indexed, up to
        SAVE_MAX_YIELD_SECONDS in all (a save that shares the interpreter slows both down)."""
        started = time.monotonic()

        def pause() -> None:
            while not (self.closing or self._hurry):
                now = time.monotonic()
                busy = self.searching(now) or self.index_lock.locked()
                if not busy or now - started >= SAVE_MAX_YIELD_SECONDS:
                    return
                time.sleep(SAVE_POLL_SECONDS)

        return pause

    def searching(self, now: float) -> bool:
        """Searches are running: one came in the last SEARCH_PAUSE_SECONDS."""
        return now - self.last_search_at < SEARCH_PAUSE_SECONDS

    # ---------------------------------------------------------------- the check behind a snapshot

    def check_soon(self, stored: StoredIndex, snapshot_delay: float) -> None:
        """Check the store's pages on the saver's thread after a load that took a current snapshot and left them
        unchecked; the caller holds the index lock.

        Searches answer from the snapshot meanwhile, and the check still comes before anything is written to the
        store: the saver runs jobs in order. Damage is reported once, and the store is written again from the
        loaded generation (the snapshot's), as one save of all of it, so nothing is read again.
        """
        if self.store is not None and not self.closing:
            self._check_ticket = self.saver.submit(partial(self._check, self.store, stored, snapshot_delay))

    def _check(self, store: IndexStore, stored: StoredIndex, snapshot_delay: float) -> None:
        """The job `check_soon` queues: the check, and where it finds damage, the rebuild."""
        if self.closing and self.last_save < self._check_ticket:
            # Closing before it ran, and nothing was written since the load: the next load finds the same rows,
            # and checks them itself where it reads them. A command line search does not wait for it to exit.
            return
        damage = store.damage()
        if damage is None:
            return
        self.report(damage)
        store.discard()
        self._save(stored.rows(), stored.generation, stored.committed_at, set(stored.manual_ids), snapshot_delay)
        vectors = self.state.vectors
        if vectors is not None and self.store is store:  # the discard took them; the session still holds them
            self.save_vectors(vectors.known_vectors())

    # ---------------------------------------------------------------- snapshots

    def snapshot_when_quiet(self, delay: float) -> None:
        """(Re)arm a timer that writes the snapshot once changes have stopped for `delay` seconds."""
        store = self.store
        if store is None or self.closing or store.snapshot_is_current:
            return
        with self._timer_lock:
            if self._requested_at is None:
                self._requested_at = time.monotonic()
        self._arm_timer(delay)

    def snapshot_now(self, closing: bool = False) -> None:
        """Capture under the index lock, write outside it, then hand the copy's memory back."""
        with self.index_lock:
            if self.closing and not closing:
                return  # close writes it
            captured = self._capture() if self.state.generation >= 1 else None
        if captured is not None:
            self._write(captured)
            del captured
            release_free_memory()

    def _capture(self) -> _Capture | None:
        """Copy the generation out for the snapshot unless it is current; the caller holds the index lock.

        Commits in between are saved as SQLite rows only. The snapshot follows a full run after a
        moment, edits once they go quiet, and `close` in any case, so a restart rarely has to
        rebuild from rows (which is correct, only slower).
        """
        store = self.store
        if not self.saver.idle:  # the rows are behind the generation: copy once they have caught up
            if not self.closing:
                self._arm_timer(SEARCH_PAUSE_SECONDS)
            return None
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._requested_at = None
        if store is None or store.revision is None or store.snapshot_is_current:
            return None
        self._captures += 1
        return _Capture(store, self.state.image(), store.revision, self._captures)

    def _write(self, captured: _Capture) -> None:
        """Write a captured generation; outside the index lock, so file events are not held up meanwhile."""
        with self._write_lock:
            if captured.number < self._written:
                return  # a later copy was written while this one waited
            try:
                captured.store.write_snapshot(captured.image, captured.revision)
            except Exception as exc:  # the rows stay the record; a shutdown or a timer must not fail over it
                log.warning("writing the index snapshot to %s failed: %s", captured.store.snapshot_path, describe(exc))
            self._written = captured.number

    def _arm_timer(self, delay: float) -> None:
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(delay, self._timer_fired)
            self._timer.daemon = True
            self._timer.start()

    def _timer_fired(self) -> None:
        """Write the snapshot, unless searches are running: then wait for a pause (at most a minute).

        Writing holds the interpreter for most of a second on a large folder, which would show in
        the latency of searches that run meanwhile.
        """
        now = time.monotonic()
        requested_at = self._requested_at or now
        if self.searching(now) and now - requested_at < SNAPSHOT_MAX_WAIT_SECONDS:
            self._arm_timer(SEARCH_PAUSE_SECONDS)
            return
        try:
            self.snapshot_now()
        except Exception:  # on a timer thread nobody would hear of it: log it, and the next change tries again
            log.exception("writing the index snapshot failed")


def describe(exc: Exception) -> str:
    """An exception as the user reads it: its type and its message."""
    return f"{type(exc).__name__}: {exc}"
