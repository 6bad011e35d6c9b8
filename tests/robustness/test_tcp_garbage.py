"""`ragls serve --tcp` frames and checks input like stdio: garbage is dropped and the next request answered."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.test_stdio_garbage import BAD_INPUTS, frame

pytestmark = pytest.mark.timeout(60)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TcpClient:
    def __init__(self, port: int) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.file = self.sock.makefile("rb")

    def answer(self, request_id: int) -> dict[str, Any]:
        while True:
            length = 0
            while (line := self.file.readline()) not in (b"\r\n", b""):
                if line.startswith(b"Content-Length: "):
                    length = int(line.split(b": ")[1])
            assert length, "the server closed the connection"
            message = json.loads(self.file.read(length))
            if message.get("id") == request_id and "method" not in message:
                return message


@pytest.mark.parametrize("case", [*BAD_INPUTS, "not-json"])
def test_tcp_drops_garbage_and_answers_the_next_request(tmp_path: Path, case: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def handler():\n    return 1\n", encoding="utf-8")
    port = free_port()
    env = {**os.environ, "RAGLS_EMBEDDING": "none", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    process = subprocess.Popen(
        [sys.executable, "-m", "ragls", "serve", "--tcp", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = TcpClient(port)
        if case == "not-json":
            client.sock.sendall(b'Content-Length: 9\r\n\r\n{"id": 7,')
            assert client.answer(7)["error"]["code"] == -32700
        else:
            client.sock.sendall(BAD_INPUTS[case])
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
        }
        client.sock.sendall(frame(initialize))
        assert client.answer(1)["result"]["serverInfo"]["name"] == "ragls"
        client.sock.sendall(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        assert client.answer(2)["result"] is None
        client.sock.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.wait(timeout=10)
