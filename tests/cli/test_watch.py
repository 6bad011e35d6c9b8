"""`ragls watch` as a user runs it: one line per change on stdout, the store current for other processes
(`ragls search`, `ragls index`), and SIGINT or SIGTERM ending it with exit code 0."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.document_files import write_pdf

pytestmark = pytest.mark.timeout(120)
CACHE_HOME = tempfile.mkdtemp(prefix="ragls-cli-watch-cache-")
ENV = {**os.environ, "XDG_CACHE_HOME": CACHE_HOME, "RAGLS_EMBEDDING": "none"}
LINE_SECONDS = 10.0


class Watch:
    """A running `ragls watch`, its stdout lines read on a thread so that every wait has a timeout."""

    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ragls", "watch", str(folder), "-q"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def next_line(self, timeout: float = LINE_SECONDS) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line from `ragls watch` within {timeout}s") from None

    def until(self, prefix: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            line = self.next_line(max(0.1, deadline - time.monotonic()))
            if line.startswith(prefix):
                return line

    def stop(self, signal_number: int) -> tuple[int, str]:
        self.process.send_signal(signal_number)
        try:
            code = self.process.wait(timeout=30)
        finally:
            self.process.kill()
        assert self.process.stderr is not None
        return code, self.process.stderr.read()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("def start_engine():\n    return 'vroom'\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# Engine\n\nStarts things.\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def watch(folder: Path) -> Iterator[Watch]:
    running = Watch(folder)
    try:
        running.until("watching ")
        yield running
    finally:
        running.process.kill()


def ragls(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragls", *args], capture_output=True, text=True, timeout=90, env=ENV)


def search_files(folder: Path, query: str) -> list[str]:
    done = ragls("search", str(folder), query, "--json", "-q")
    assert done.returncode == 0, done.stderr
    return [result["metadata"]["file"] for result in json.loads(done.stdout)]


def change(watch: Watch, make_change: Callable[[], object], expected: str) -> None:
    """Make a change and wait for its line; the first change is made again if the watches were still arming."""
    for _ in range(3):
        make_change()
        try:
            line = watch.next_line(5.0)
        except AssertionError:
            continue
        assert line == expected
        return
    raise AssertionError(f"`ragls watch` never printed {expected!r}")


def test_watch_prints_each_change_and_keeps_the_store_current(folder: Path, watch: Watch) -> None:
    new_file = folder / "src/brakes.py"
    change(
        watch,
        lambda: new_file.write_text("def apply_brakes():\n    return 'screech'\n"),
        "added src/brakes.py (1 chunk)",
    )
    assert search_files(folder, "apply brakes screech")[0] == "src/brakes.py"

    app = folder / "src/app.py"
    app.write_text("def start_engine():\n    return 'vroom'\n\n\ndef honk_horn():\n    return 'beep'\n")
    assert watch.next_line() == "updated src/app.py (1 chunk)"
    new_file.unlink()
    assert watch.next_line() == "removed src/brakes.py"
    write_pdf(folder / "docs/manual.pdf", [["Rotate the tyres."], ["Torque the lug nuts to spec."]])
    assert watch.until("added docs/manual.pdf") == "added docs/manual.pdf (2 chunks)"

    # Another process loads the store the watch keeps: nothing left for it to read, and the changes are there.
    done = ragls("index", str(folder), "-q")
    assert "files 3, chunks 4" in done.stdout and "read 0 changed files, reused 3" in done.stdout, done.stdout
    assert "src/brakes.py" not in search_files(folder, "apply brakes screech")
    assert search_files(folder, "honk horn beep")[0] == "src/app.py"
    assert search_files(folder, "lug nuts torque")[0] == "docs/manual.pdf"

    code, stderr = watch.stop(signal.SIGINT)
    assert code == 0, stderr
    assert "Traceback" not in stderr and "failed" not in stderr
    assert stderr.strip().endswith("ragls: watch stopped")


def test_sigterm_stops_it_cleanly(watch: Watch) -> None:
    code, stderr = watch.stop(signal.SIGTERM)
    assert code == 0 and "Traceback" not in stderr, stderr
