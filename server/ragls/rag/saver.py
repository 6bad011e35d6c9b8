"""SerialWorker: jobs run one at a time, in the order they were submitted, on a thread of their own.

Saving a committed generation to SQLite takes seconds on a large folder and holds the interpreter
for most of it. Run under the index lock, it held up the next file event's commit; run beside
searches, it halved their speed. The session hands each save to this worker instead (commit
order is save order), and the save pauses between batches while searches are arriving.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)


class SerialWorker:
    """Run jobs in submission order; `wait(ticket)` blocks until that job (and every earlier one) is done."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: deque[Callable[[], None]] = deque()
        self._changed = threading.Condition()
        self._submitted = 0
        self._finished = 0
        self._stopping = False
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[[], None]) -> int:
        """Queue a job; returns its ticket. A job that raises is logged and the next one runs."""
        with self._changed:
            if self._stopping:
                raise RuntimeError(f"{self.name} is stopped")
            self._jobs.append(job)
            self._submitted += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._changed.notify_all()
            return self._submitted

    def wait(self, ticket: int | None = None, timeout: float | None = None) -> bool:
        """Until job `ticket` (default: every job submitted so far) has finished; False on timeout."""
        with self._changed:
            target = self._submitted if ticket is None else ticket
            return self._changed.wait_for(lambda: self._finished >= target, timeout)

    @property
    def idle(self) -> bool:
        with self._changed:
            return self._finished == self._submitted

    def stop(self, timeout: float | None = None) -> None:
        """Finish the queued jobs, then end the thread; later submits are refused."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._jobs or self._stopping)
                if not self._jobs:
                    return
                job = self._jobs.popleft()
            try:
                job()
            except Exception:
                log.exception("%s: a job failed", self.name)
            # Not held while the worker waits: a job's arguments may be a whole delta or a loaded generation.
            del job
            with self._changed:
                self._finished += 1
                self._changed.notify_all()
