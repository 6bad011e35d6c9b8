"""SerialWorker: jobs run in submission order on one thread; callers wait for theirs; stop finishes the queue."""

from __future__ import annotations

import threading

import pytest

from ragls.rag.saver import SerialWorker

pytestmark = pytest.mark.timeout(30)


def test_jobs_run_in_order_on_one_thread_and_callers_wait_for_theirs() -> None:
    worker = SerialWorker("test-saver")
    gate = threading.Event()
    ran: list[tuple[int, str]] = []
    first = worker.submit(lambda: (gate.wait(10), ran.append((1, threading.current_thread().name))))
    later = [worker.submit(lambda i=i: ran.append((i, threading.current_thread().name))) for i in range(2, 6)]
    assert not worker.idle
    assert not worker.wait(first, timeout=0.05)  # held at the gate
    gate.set()
    assert worker.wait(later[1], timeout=10)
    assert worker.wait(timeout=10) and worker.idle
    assert [i for i, _ in ran] == [1, 2, 3, 4, 5]
    assert {name for _, name in ran} == {"test-saver"}
    worker.stop()


def test_a_failing_job_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    worker = SerialWorker("test-saver")
    ran: list[str] = []

    def broken() -> None:
        raise OSError("disk full")

    worker.submit(broken)
    worker.wait(worker.submit(lambda: ran.append("next")), timeout=10)
    assert ran == ["next"]
    assert "test-saver: a job failed" in caplog.text and "disk full" in caplog.text
    worker.stop()


def test_stop_finishes_what_was_queued_and_refuses_more() -> None:
    worker = SerialWorker("test-saver")
    gate = threading.Event()
    ran: list[int] = []
    worker.submit(lambda: (gate.wait(10), ran.append(1)))
    worker.submit(lambda: ran.append(2))
    stopper = threading.Thread(target=worker.stop)
    stopper.start()
    gate.set()
    stopper.join(10)
    assert ran == [1, 2] and worker.idle
    with pytest.raises(RuntimeError, match="test-saver is stopped"):
        worker.submit(lambda: None)


def test_waiting_with_nothing_submitted_returns_at_once() -> None:
    worker = SerialWorker("test-saver")
    assert worker.wait(timeout=0) and worker.wait(0, timeout=0) and worker.idle
    worker.stop()
