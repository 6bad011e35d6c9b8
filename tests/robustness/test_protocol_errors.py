"""Every request with an id gets an answer: -32700 for bytes that are not JSON, -32600 for a message LSP does
not allow, -32602 for params that cannot be read; never a popup, and never a traceback in the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragls.server.handlers import create_server
from tests.robustness.stdio_client import Server, frame_bytes

pytestmark = pytest.mark.timeout(60)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def request(request_id: Any, method: str, params: Any = None, **extra: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params, **extra}).encode()


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def command(request_id: int, name: str, arguments: Any) -> bytes:
    return request(request_id, "workspace/executeCommand", {"command": name, "arguments": arguments})


SEARCH = b'{"jsonrpc":"2.0","method":"rag/search","params":'


# name: (body, the id of the answer, its code, a word its message holds)
CASES: dict[str, tuple[bytes, Any, int, str]] = {
    "invalid-utf8": (
        b'{"jsonrpc":"2.0","id":1,"method":"rag/search","params":{"query":"\xff\xfe"}}',
        1,
        PARSE_ERROR,
        "UTF-8",
    ),
    "invalid-utf8-surrogate-bytes": (
        b'{"id":"s","jsonrpc":"2.0","method":"rag/status","x":"\xed\xa0\x80"}',
        "s",
        PARSE_ERROR,
        "UTF-8",
    ),
    "truncated-json": (b'{"jsonrpc":"2.0","id":2,"method":"rag/search","params":{"que', 2, PARSE_ERROR, "JSON"),
    "trailing-garbage": (request(3, "rag/status", {}) + b"}", 3, PARSE_ERROR, "JSON"),
    "not-json-at-all": (b"hello", None, PARSE_ERROR, "JSON"),
    "extra-member": (request(4, "rag/status", {}, extra=1), 4, INVALID_REQUEST, "extra"),
    "jsonrpc-1.0": (request(5, "rag/status", {}, jsonrpc="1.0"), 5, INVALID_REQUEST, "jsonrpc"),
    "jsonrpc-missing": (b'{"id":6,"method":"rag/status","params":{}}', 6, INVALID_REQUEST, "jsonrpc"),
    "batch": (json.dumps([json.loads(request(7, "rag/status", {}))]).encode(), 7, INVALID_REQUEST, "batch"),
    "empty-batch": (b"[]", None, INVALID_REQUEST, "batch"),
    "no-method": (b'{"jsonrpc":"2.0","id":8,"params":{}}', 8, INVALID_REQUEST, "method"),
    "method-not-a-string": (request(9, "x").replace(b'"x"', b"42"), 9, INVALID_REQUEST, "method"),
    "id-not-an-id": (request(1.5, "rag/status", {}), None, INVALID_REQUEST, "id"),
    "a-request-with-a-result": (request(10, "rag/status", {}, result=1), 10, INVALID_REQUEST, "result"),
    "exit-with-an-id": (request(11, "exit"), 11, INVALID_REQUEST, "notification"),
    "initialized-with-an-id": (request(12, "initialized", {}), 12, INVALID_REQUEST, "notification"),
    "didSave-with-an-id": (
        request(13, "textDocument/didSave", {"textDocument": {"uri": "file:///x"}}),
        13,
        INVALID_REQUEST,
        "notification",
    ),
    "cancel-with-an-id": (request(14, "$/cancelRequest", {"id": 1}), 14, INVALID_REQUEST, "notification"),
    "nested-1000-deep": (request(15, "rag/search", "P").replace(b'"P"', nested(1000)), 15, INVALID_REQUEST, "nests"),
    "nested-100000-deep-id-last": (SEARCH + nested(100_000) + b',"id":16}', 16, INVALID_REQUEST, "nests"),
    "nested-unclosed": (b'{"id":17,' + SEARCH[1:] + b"[" * 5000, 17, INVALID_REQUEST, "nests"),
    "params-a-number": (request(18, "rag/status", 5), 18, INVALID_PARAMS, "params"),
    "symbol-params-missing": (b'{"jsonrpc":"2.0","id":19,"method":"workspace/symbol"}', 19, INVALID_PARAMS, "params"),
    "symbol-params-null": (request(20, "workspace/symbol", None), 20, INVALID_PARAMS, "params"),
    "symbol-params-a-list": (request(21, "workspace/symbol", [{"query": "x"}]), 21, INVALID_PARAMS, "params"),
    "symbol-query-a-number": (request(22, "workspace/symbol", {"query": 5}), 22, INVALID_PARAMS, "query"),
    "command-arguments-a-string": (command(23, "ragls.search", "pool"), 23, INVALID_PARAMS, "arguments"),
    "command-arguments-an-object": (command(24, "ragls.search", {"query": "x"}), 24, INVALID_PARAMS, "arguments"),
    "command-arguments-a-number": (command(25, "ragls.status", 3), 25, INVALID_PARAMS, "arguments"),
    "command-unknown": (command(26, "nope", []), 26, INVALID_PARAMS, "nope"),
    "params-that-lsprotocol-cannot-read": (
        request(27, "initialize", {"processId": "x", "capabilities": {}}),
        27,
        INVALID_PARAMS,
        "params",
    ),
    "unknown-method": (request(28, "rag/nope", {}), 28, METHOD_NOT_FOUND, "rag/nope"),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp_path = tmp_path_factory.mktemp("protocol-errors")
    root = tmp_path / "project"
    root.mkdir()
    (root / "pool.py").write_text("def acquire_connection():\n    return 1\n", encoding="utf-8")
    with Server(tmp_path) as started:
        started.initialize(root)
        started.wait_indexed()
        yield started


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_message_is_answered_with_its_error(server: Server, case: str) -> None:
    body, answer_id, code, word = CASES[case]
    server.answers.pop(answer_id, None)
    server.send(frame_bytes(body))
    answer = server.answer(answer_id, timeout=10)
    assert answer["error"]["code"] == code, answer
    assert word.lower() in answer["error"]["message"].lower(), answer
    assert "data" not in answer["error"], answer
    assert server.result("rag/status", {})["folders"][0]["files"] == 1  # and the server goes on


def test_bad_messages_pop_nothing_up_and_notifications_with_ids_do_not_run(server: Server) -> None:
    for body, *_ in CASES.values():
        server.send(frame_bytes(body))
    assert server.result("rag/search", {"query": "acquire connection"})["results"]
    server.drain(0.5)
    assert server.error_popups() == []
    assert server.process.poll() is None  # `exit` sent with an id was refused, not run


def test_a_request_after_shutdown_is_answered(tmp_path: Path) -> None:
    with Server(tmp_path) as server:
        server.initialize(tmp_path)
        assert server.request("shutdown").get("result", "missing") is None
        answer = server.request("rag/status", {})
        assert answer["error"]["code"] == INVALID_REQUEST and "shutting down" in answer["error"]["message"]
        server.notify("exit")
        assert server.process.wait(timeout=30) == 0


class Captured:
    """A writer that keeps what the server writes."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        bodies = self.data.split(b"\r\n\r\n")[1:]
        return [json.loads(body.split(b"Content-Length")[0]) for body in bodies]


def test_an_internal_error_carries_no_traceback() -> None:
    server = create_server()
    writer = Captured()
    server.protocol.set_writer(writer)

    @server.feature("test/crash")
    def crash(ls: Any, params: Any) -> None:
        raise ZeroDivisionError("a bug in a handler")

    server.protocol.receive(request(1, "test/crash", {}))
    (answer,) = writer.messages()
    assert answer["id"] == 1 and answer["error"]["code"] == -32603, answer
    assert "a bug in a handler" in answer["error"]["message"]
    assert "data" not in answer["error"] and "Traceback" not in json.dumps(answer), answer


def test_an_error_message_never_echoes_a_huge_value() -> None:
    server = create_server()
    writer = Captured()
    server.protocol.set_writer(writer)
    huge = "m" * 1_000_000
    server.protocol.receive(request(1, "workspace/executeCommand", {"command": huge, "arguments": []}))
    server.protocol.receive(request(2, huge[:300], {}))
    server.protocol.receive(request(3, "rag/search", {"query": 1}, **{huge: 1}))
    answers = writer.messages()
    assert [answer["id"] for answer in answers] == [1, 2, 3]
    assert all(len(json.dumps(answer)) < 2000 for answer in answers), [len(json.dumps(a)) for a in answers]
