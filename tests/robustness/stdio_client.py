"""The real `ragls serve` as a subprocess on stdio, for tests that send it raw and hostile bytes.

A thread parses the server's output into messages, so every wait has a timeout and a server that
stops answering fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

READ_SECONDS = 30.0


def frame_bytes(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def frame(message: Any) -> bytes:
    return frame_bytes(json.dumps(message).encode())


class Server:
    """One server process; `answer(id)` returns its response to a request, whatever came in between."""

    def __init__(self, tmp_path: Path, cache: Path | None = None, name: str = "server") -> None:
        env = {
            **os.environ,
            "RAGLS_EMBEDDING": "none",
            "XDG_CACHE_HOME": str(cache or tmp_path / "cache"),
            "HOME": str(tmp_path / "home"),
        }
        self.stderr_path = tmp_path / f"{name}-stderr.txt"
        self.stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ragls", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            cwd=tmp_path,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.answers: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.closed = False
        self._next_id = 1_000_000
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    # ---------------------------------------------------------------- sending

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any = None) -> None:
        self.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def new_id(self) -> int:
        """An id no request of the test's own has used."""
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any = None, timeout: float = READ_SECONDS) -> dict[str, Any]:
        """Send a request and wait for its whole response (result or error)."""
        request_id = self.new_id()
        self.send(frame({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        return self.answer(request_id, timeout)

    def result(self, method: str, params: Any = None, timeout: float = READ_SECONDS) -> Any:
        answer = self.request(method, params, timeout)
        assert "result" in answer, answer
        return answer["result"]

    # ---------------------------------------------------------------- receiving

    def answer(self, request_id: Any, timeout: float = READ_SECONDS) -> dict[str, Any]:
        """The response to `request_id`; the server's own requests and notifications are kept aside."""
        deadline = time.monotonic() + timeout
        while request_id not in self.answers:
            self.take(max(0.0, deadline - time.monotonic()))
        return self.answers[request_id]

    def take(self, timeout: float) -> None:
        """Handle one message from the server; fails when none comes in time or the server closed its output."""
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server in time (exit code {self.process.poll()})") from None
        if message is None:
            self.closed = True
            raise AssertionError(f"the server closed its output (exit code {self.exit_code()})")
        if "method" in message:
            self.notifications.append(message)
            if "id" in message:  # a request of the server's own (configuration, registration): answer it
                self.send(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        else:
            self.answers[message.get("id")] = message

    def drain(self, seconds: float) -> None:
        """Take whatever the server sends within `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.take(left)
            except AssertionError:
                if self.closed:
                    raise
                return

    def error_popups(self) -> list[dict[str, Any]]:
        """window/showMessage notifications of type Error (pygls's "Error in server" popups)."""
        return [m for m in self.notifications if m["method"] == "window/showMessage" and m["params"]["type"] == 1]

    # ---------------------------------------------------------------- lifecycle

    def initialize(self, root: Path) -> None:
        params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        assert self.result("initialize", params)["serverInfo"]["name"] == "ragls"
        self.notify("initialized", {})

    def wait_indexed(self, generation: int = 1, timeout: float = READ_SECONDS) -> dict[str, Any]:
        """Poll rag/status until every folder has committed `generation` runs."""
        deadline = time.monotonic() + timeout
        while True:
            folders = self.result("rag/status", {})["folders"]
            if folders and all(f["generation"] >= generation and f["state"] != "indexing" for f in folders):
                return dict(folders[0])
            assert time.monotonic() < deadline, f"never indexed: {folders}"
            time.sleep(0.05)

    def shutdown(self) -> None:
        """shutdown answers null and exit ends the process with 0."""
        answer = self.request("shutdown")
        assert answer.get("result", "missing") is None, answer
        self.notify("exit")
        assert self.process.wait(timeout=30) == 0

    def exit_code(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while True:
                length = 0
                while (line := stream.readline()) not in (b"\r\n", b""):
                    if line.startswith(b"Content-Length: "):
                        length = int(line.split(b": ")[1])
                if not length:
                    break
                self.messages.put(json.loads(stream.read(length)))
        finally:
            self.messages.put(None)
