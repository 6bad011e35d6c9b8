"""`ragls serve` on stdio survives input it cannot frame: over-long lines, wrong lengths, bare bodies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.stdio_client import Server, frame

pytestmark = pytest.mark.timeout(60)

PADDING = "x" * 100_000


def garbage_body() -> bytes:
    """A 100 KB request on one line, with no newline in it."""
    return json.dumps({"jsonrpc": "2.0", "id": 99, "method": "rag/status", "params": {"padding": PADDING}}).encode()


BAD_INPUTS = {
    "header-line-of-70-kb": b"X-Padding: " + b"a" * 70_000 + b"\r\n",
    "content-length-too-short": b"Content-Length: 10\r\n\r\n" + garbage_body(),
    "body-without-header": garbage_body(),
}
BAD_INPUTS["all-three"] = b"".join(BAD_INPUTS.values())


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
