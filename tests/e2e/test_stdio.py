"""`ragls serve` on stdio as processes start it: from a pipe, from a file, and when input just ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

pytestmark = pytest.mark.timeout(60)


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
INITIALIZED = {"jsonrpc": "2.0", "method": "initialized", "params": {}}
STATUS = {"jsonrpc": "2.0", "id": 2, "method": "rag/status", "params": {}}
SHUTDOWN = {"jsonrpc": "2.0", "id": 3, "method": "shutdown"}
EXIT = {"jsonrpc": "2.0", "method": "exit"}


def initialize(root: Path) -> dict[str, Any]:
    return {**INITIALIZE, "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}


def read_message(stream: IO[bytes]) -> dict[str, Any]:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.startswith(b"Content-Length: "):
            length = int(line.split(b": ")[1])
    assert length, "the server closed its output"
    return json.loads(stream.read(length))


def answer(stream: IO[bytes], request_id: int) -> dict[str, Any]:
    """Read until the response to `request_id` (skipping the server's own requests and notifications)."""
    while True:
        message = read_message(stream)
        if message.get("id") == request_id and "method" not in message:
            return message


def start(tmp_path: Path, stdin: Any = subprocess.PIPE) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RAGLS_EMBEDDING": "none", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "ragls", "serve"]
    return subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)


def stop(server: subprocess.Popen[bytes]) -> None:
    server.kill()
    server.wait(timeout=10)
    for stream in (server.stdin, server.stdout, server.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("def handler():\n    return 1\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("ending", ["exit", "end-of-input"])
def test_a_pipe(root: Path, tmp_path: Path, ending: str) -> None:
    server = start(tmp_path)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(frame(initialize(root)) + frame(INITIALIZED) + frame(STATUS))
        server.stdin.flush()
        assert answer(server.stdout, 1)["result"]["serverInfo"]["name"] == "ragls"
        assert "folders" in answer(server.stdout, 2)["result"]
        server.stdin.write(frame(SHUTDOWN))
        server.stdin.flush()
        assert answer(server.stdout, 3)["result"] is None
        if ending == "exit":
            server.stdin.write(frame(EXIT))
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    finally:
        stop(server)


def test_a_file(root: Path, tmp_path: Path) -> None:
    """Requests read from a file are answered in order; the end of the file ends the server."""
    messages = tmp_path / "messages.bin"
    messages.write_bytes(b"".join(frame(m) for m in (initialize(root), INITIALIZED, SHUTDOWN)))
    with messages.open("rb") as stdin:
        server = start(tmp_path, stdin)
        try:
            assert server.stdout is not None
            assert answer(server.stdout, 1)["result"]["serverInfo"]["name"] == "ragls"
            assert answer(server.stdout, 3)["result"] is None
            assert server.wait(timeout=30) == 0
        finally:
            stop(server)
