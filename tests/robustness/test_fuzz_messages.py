"""A fuzz of hostile messages against one real server: every request with an id is answered, nothing crashes.

The messages come from a seeded generator, so a failure reproduces: mutated valid requests, wrong
types in params, huge strings, deep nesting, bad envelopes, batches, bad UTF-8, broken JSON,
notifications sent with an id, hostile notifications and stray responses. Afterwards the server
still searches, shuts down cleanly, and never popped up "Error in server".
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.stdio_client import Server, frame_bytes
from tests.sample_workspace import write_tree

pytestmark = pytest.mark.timeout(180)

SEED = 20
N_MESSAGES = 2400
FUZZ_SECONDS = 90.0
# The codes a hostile message may be answered with; -32603 (a crash in a handler) is not among them.
EXPECTED_CODES = {-32700, -32600, -32601, -32602, -32800}
MAX_ERROR_CHARS = 2000

SHORT_STRINGS = ["a", "#", "../../etc/passwd", "file:///", "\x00", "é", "\U0001f600", "[User question]"]
NOTIFICATIONS_WITH_IDS = [
    "initialized",
    "exit",
    "$/cancelRequest",
    "$/setTrace",
    "textDocument/didOpen",
    "textDocument/didSave",
    "workspace/didChangeWatchedFiles",
    "workspace/didChangeConfiguration",
    "workspace/didChangeWorkspaceFolders",
]
# Notifications the fuzz sends without an id; none of them may close the folder, reconfigure or end the server.
SAFE_NOTIFICATIONS = [
    "$/cancelRequest",
    "$/setTrace",
    "textDocument/didSave",
    "textDocument/didOpen",
    "workspace/didChangeWatchedFiles",
    "ragls/unknownNotification",
]


def valid_requests(root: Path) -> list[tuple[str, Any]]:
    """Requests the server answers with a result, to mutate from."""
    folder = root.as_uri()
    return [
        ("rag/search", {"query": "bearer token", "topK": 5}),
        ("rag/search", {"query": "connection pool", "filters": {"language": "python"}, "folder": folder}),
        ("rag/contextPrompt", {"query": "how are routes matched", "format": "plain"}),
        ("rag/contextPrompt", {"query": "auth", "topK": 2}),
        ("rag/status", {}),
        ("rag/status", {"folder": folder}),
        ("rag/listDocuments", {}),
        ("rag/getDocument", {"id": "fuzz-note"}),
        ("rag/removeDocument", {"id": "fuzz-missing"}),
        ("rag/addDocument", {"content": "fuzz note about deployments", "metadata": {"k": 1}, "id": "fuzz-note"}),
        ("workspace/symbol", {"query": "Pool"}),
        ("workspace/symbol", {"query": ""}),
        ("workspace/executeCommand", {"command": "ragls.search", "arguments": [{"query": "router"}]}),
        ("workspace/executeCommand", {"command": "ragls.status", "arguments": []}),
        ("workspace/executeCommand", {"command": "ragls.search", "arguments": ["pool"]}),
        ("rag/unknownMethod", {}),
    ]


class Fuzzer:
    """Builds message bodies; each comes with the id its answer must carry, or None when none is owed."""

    def __init__(self, rng: random.Random, root: Path) -> None:
        self.rng = rng
        self.root = root
        self.templates = valid_requests(root)
        self.next_id = 0
        self.mutations: list[tuple[int, Callable[[], tuple[bytes, Any]]]] = [
            (14, self.valid),
            (16, self.wrong_type_in_params),
            (8, self.bad_params),
            (5, self.huge_string),
            (6, self.deep_nesting),
            (10, self.bad_envelope),
            (3, self.batch),
            (6, self.bad_utf8),
            (6, self.broken_json),
            (6, self.notification_with_id),
            (8, self.hostile_notification),
            (3, self.stray_response),
            (4, self.bad_id),
            (5, self.lone_surrogate),
        ]

    def message(self) -> tuple[bytes, Any]:
        weights = [weight for weight, _ in self.mutations]
        (_, make) = self.rng.choices(self.mutations, weights)[0]
        return make()

    # ---------------------------------------------------------------- building blocks

    def new_id(self) -> int | str:
        self.next_id += 1
        return self.next_id if self.rng.random() < 0.7 else f"fuzz-{self.next_id}"

    def template(self) -> tuple[str, Any]:
        method, params = self.rng.choice(self.templates)
        return method, json.loads(json.dumps(params))

    def request(self, method: str, params: Any, request_id: Any) -> dict[str, Any]:
        members = [("jsonrpc", "2.0"), ("id", request_id), ("method", method), ("params", params)]
        self.rng.shuffle(members)
        return dict(members)

    def encode(self, message: Any) -> bytes:
        return json.dumps(message).encode()

    def hostile_value(self, depth: int = 0) -> Any:
        rng = self.rng
        choice = rng.randrange(14 if depth < 2 else 10)
        values: list[Callable[[], Any]] = [
            lambda: None,
            lambda: rng.choice([True, False]),
            lambda: rng.randint(-(2**63), 2**63),
            lambda: rng.choice([0, -1, 1.5, 1e308, -0.0]),
            lambda: "",
            lambda: "   ",
            lambda: rng.choice(SHORT_STRINGS),
            lambda: "x" * rng.choice([257, 4097, 70_000]),
            lambda: "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(1, 40))),
            lambda: "\ud800",
            lambda: [self.hostile_value(depth + 1) for _ in range(rng.randrange(4))],
            lambda: {f"k{i}": self.hostile_value(depth + 1) for i in range(rng.randrange(4))},
            lambda: [[[[[[]]]]]],
            lambda: {"jsonrpc": "2.0", "id": 1, "method": "shutdown"},
        ]
        return values[choice]()

    # ---------------------------------------------------------------- mutations

    def valid(self) -> tuple[bytes, Any]:
        method, params = self.template()
        request_id = self.new_id()
        return self.encode(self.request(method, params, request_id)), request_id

    def wrong_type_in_params(self) -> tuple[bytes, Any]:
        method, params = self.template()
        if method == "workspace/executeCommand" and self.rng.random() < 0.5:
            params["arguments"] = self.hostile_value()
        elif isinstance(params, dict):
            keys = [*params, "query", "topK", "folder", "id", "content", "metadata", "format", "full", "filters"]
            params[self.rng.choice(keys)] = self.hostile_value()
        request_id = self.new_id()
        return self.encode(self.request(method, params, request_id)), request_id

    def bad_params(self) -> tuple[bytes, Any]:
        method, _ = self.template()
        params = self.rng.choice([None, 7, "query", True, [], [1, 2], [[]], {"": None}])
        request_id = self.new_id()
        message = self.request(method, params, request_id)
        if self.rng.random() < 0.3:
            del message["params"]
        return self.encode(message), request_id

    def huge_string(self) -> tuple[bytes, Any]:
        method, params = self.template()
        size = self.rng.choices([20_000, 100_000, 1_100_000], [6, 3, 1])[0]
        field = self.rng.choice(["query", "id", "content", "folder", "format", "command"])
        if isinstance(params, dict):
            params[field] = self.rng.choice("xy#é ") * size
        request_id = self.new_id()
        return self.encode(self.request(method, params, request_id)), request_id

    def deep_nesting(self) -> tuple[bytes, Any]:
        method, _ = self.template()
        depth = self.rng.choice([65, 100, 999, 1000, 1500, 20_000])
        opener, closer = self.rng.choice([("[", "]"), ('{"a":', "}")])
        nested = opener * depth + "1" + closer * depth
        request_id = self.new_id()
        if self.rng.random() < 0.2:
            # Unbalanced as well: the brackets never close, so only an id before them is at the top level.
            shell = {"id": request_id, "jsonrpc": "2.0", "method": method, "params": "PLACEHOLDER"}
            nested = nested[: len(nested) // 2]
        else:
            shell = self.request(method, "PLACEHOLDER", request_id)
        return self.encode(shell).replace(b'"PLACEHOLDER"', nested.encode()), request_id

    def bad_envelope(self) -> tuple[bytes, Any]:
        method, params = self.template()
        request_id = self.new_id()
        message = self.request(method, params, request_id)
        kind = self.rng.randrange(7)
        if kind == 0:
            message[self.rng.choice(["extra", "Method", "ID", "result"])] = self.hostile_value()
        elif kind == 1:
            message["jsonrpc"] = self.rng.choice(["1.0", "2", 2.0, None, "", "2.0 "])
        elif kind == 2:
            del message["jsonrpc"]
        elif kind == 3:
            del message["method"]
        elif kind == 4:
            message["method"] = self.rng.choice([None, 5, ["rag/search"], "", "m" * 10_000])
        elif kind == 5:
            message["error"] = {"code": 1, "message": "x"}
        else:
            return self.encode(self.rng.choice([1, "text", None, True, {}, []])), None
        return self.encode(message), request_id

    def batch(self) -> tuple[bytes, Any]:
        method, params = self.template()
        request_id = self.new_id()
        return self.encode([self.request(method, params, request_id)]), request_id

    def id_first(self) -> tuple[bytes, int, Any]:
        """A valid request whose id comes first, and where its id ends: damage after that leaves the id readable."""
        method, params = self.template()
        request_id = self.new_id()
        body = self.encode({"id": request_id, "jsonrpc": "2.0", "method": method, "params": params})
        return body, len(b'{"id": ') + len(self.encode(request_id)) + 1, request_id

    def bad_utf8(self) -> tuple[bytes, Any]:
        body, head, request_id = self.id_first()
        position = self.rng.randrange(head, len(body))
        garbage = self.rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xf8\x88\x80\x80\x80"])
        return body[:position] + garbage + body[position:], request_id

    def broken_json(self) -> tuple[bytes, Any]:
        body, head, request_id = self.id_first()
        kind = self.rng.randrange(3)
        if kind == 0:
            return body[: self.rng.randrange(head, len(body))], request_id
        if kind == 1:
            position = self.rng.randrange(head, len(body))
            inserted = self.rng.choice([b",", b"}", b'"', b"\\", b"NaN", b"\x00"])
            return body[:position] + inserted + body[position:], request_id
        return body + b"}", request_id

    def notification_with_id(self) -> tuple[bytes, Any]:
        method = self.rng.choice(NOTIFICATIONS_WITH_IDS)
        request_id = self.new_id()
        return self.encode(self.request(method, self.hostile_value(), request_id)), request_id

    def hostile_notification(self) -> tuple[bytes, Any]:
        method = self.rng.choice(SAFE_NOTIFICATIONS)
        params = self.rng.choice(
            [
                self.hostile_value(),
                {"changes": [{"uri": self.hostile_value(), "type": self.rng.choice([1, 2, 3, 9, "x"])}]},
                {"changes": [{"uri": (self.root / "nowhere.py").as_uri(), "type": 2}]},
                {"textDocument": {"uri": self.hostile_value()}},
                {"textDocument": {"uri": "http://example.com/x.py"}},
                {"id": self.hostile_value()},
            ]
        )
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        return self.encode(message), None

    def stray_response(self) -> tuple[bytes, Any]:
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": f"stray-{self.rng.randrange(10**6)}"}
        response[self.rng.choice(["result", "error"])] = self.hostile_value()
        return self.encode(response), None

    def bad_id(self) -> tuple[bytes, Any]:
        method, params = self.template()
        message = self.request(method, params, self.rng.choice([None, 1.5, True, [], {}, -0.0]))
        return self.encode(message), None  # answered at id null: there is no id to owe an answer to

    def lone_surrogate(self) -> tuple[bytes, Any]:
        method, params = self.template()
        if isinstance(params, dict) and params:
            key = self.rng.choice(list(params))
            params[key] = "\udcff" if self.rng.random() < 0.5 else {"\ud800": 1}
        request_id = self.new_id()
        return self.encode(self.request(method, params, request_id)), request_id


def test_every_hostile_request_is_answered_and_the_server_keeps_working(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "workspace")
    fuzzer = Fuzzer(random.Random(SEED), root)
    messages = [fuzzer.message() for _ in range(N_MESSAGES)]
    owed = [request_id for _, request_id in messages if request_id is not None]
    assert len(messages) >= 2000 and len(owed) >= 1500
    with Server(tmp_path) as server:
        server.initialize(root)
        server.wait_indexed()
        started = time.monotonic()
        for body, _ in messages:
            server.send(frame_bytes(body))
        deadline = started + FUZZ_SECONDS
        for request_id in owed:
            answer = server.answer(request_id, timeout=max(1.0, deadline - time.monotonic()))
            check_answer(answer)
        assert server.process.poll() is None
        results = server.result("rag/search", {"query": "acquire connection pool", "topK": 5})["results"]
        assert results and results[0]["metadata"]["file"] == "src/db/pool.py"
        server.drain(0.5)
        assert server.error_popups() == []
        server.shutdown()


def check_answer(answer: dict[str, Any]) -> None:
    assert answer.get("jsonrpc") == "2.0", answer
    if "result" in answer:
        return
    error = answer["error"]
    text = json.dumps(error)
    assert error["code"] in EXPECTED_CODES, text[:MAX_ERROR_CHARS]
    assert len(text) < MAX_ERROR_CHARS, text[:MAX_ERROR_CHARS]
    assert "data" not in error or error["data"] is None, text[:MAX_ERROR_CHARS]
