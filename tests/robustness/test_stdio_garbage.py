"""`ragls serve` on stdio survives input it cannot frame: over-long lines, wrong lengths, bare bodies."""

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

import pytest

pytestmark = pytest.mark.timeout(60)

READ_SECONDS = 20.0
PADDING = "x" * 100_000


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def garbage_body() -> bytes:
    """A 100 KB request on one line, with no newline in it."""
    return json.dumps({"jsonrpc": "2.0", "id": 99, "method": "rag/status", "params": {"padding": PADDING}}).encode()


BAD_INPUTS = {
    "header-line-of-70-kb": b"X-Padding: " + b"a" * 70_000 + b"\r\n",
    "content-length-too-short": b"Content-Length: 10\r\n\r\n" + garbage_body(),
    "body-without-header": garbage_body(),
}
BAD_INPUTS["all-three"] = b"".join(BAD_INPUTS.values())


class Server:
    """The real server as a subprocess; a thread parses its output so every read has a timeout."""

    def __init__(self, tmp_path: Path) -> None:
        env = {
            **os.environ,
            "RAGLS_EMBEDDING": "none",
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "HOME": str(tmp_path / "home"),
        }
        self.stderr = (tmp_path / "stderr.txt").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ragls", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            cwd=tmp_path,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        """The response to `request_id`, skipping the server's own requests and notifications."""
        deadline = time.monotonic() + READ_SECONDS
        while True:
            message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            assert message is not None, f"the server closed its output (exit code {self.exit_code()})"
            if message.get("id") == request_id and "method" not in message:
                return message

    def exit_code(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            if stream is not None:
                stream.close()

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


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_the_server_drops_garbage_and_answers_the_next_request(tmp_path: Path, case: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def handler():\n    return 1\n", encoding="utf-8")
    server = Server(tmp_path)
    try:
        server.send(BAD_INPUTS[case])
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
        }
        server.send(frame(initialize))
        assert server.answer(1)["result"]["serverInfo"]["name"] == "ragls"
        assert server.process.poll() is None
        server.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        assert server.answer(2)["result"] is None
        server.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert server.process.wait(timeout=30) == 0
    finally:
        server.stop()
