"""OpenAIEndpointProvider against a small HTTP server on 127.0.0.1 that the tests start and stop."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from ragls.embedders.endpoint import OpenAIEndpointProvider, embeddings_url
from ragls.embedders.runtime import EmbeddingError
from ragls.errors import ConfigError
from tests.unit.rag.model_servers import model_server

pytestmark = pytest.mark.timeout(30)

DIMS = 5


def fake_vector(text: str) -> list[float]:
    """Deterministic, deliberately not normalized."""
    return [float(len(text) + 1), 2.0, 0.0, -1.0, float(sum(map(ord, text)) % 7)]


@dataclass
class FakeServer:
    """Answers like /v1/embeddings; `reply` may be swapped by a test to misbehave."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    reply: Callable[[dict[str, Any]], tuple[int, bytes]] | None = None

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes]:
        if self.reply is not None:
            return self.reply(body)
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(body["input"])]
        data.reverse()  # the index field, not the order, says which input a row belongs to
        return 200, json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    with model_server(lambda _path, body: fake.answer(body)) as running:
        fake.url, fake.requests, fake.headers = running.url, running.requests, running.headers
        yield fake


def expected(texts: list[str]) -> np.ndarray:
    rows = np.asarray([fake_vector(t) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/", "/v1/embeddings"])
def test_url_forms(suffix: str) -> None:
    assert embeddings_url("http://127.0.0.1:11434" + suffix) == "http://127.0.0.1:11434/v1/embeddings"
    with pytest.raises(ConfigError, match="expected an http"):
        embeddings_url("127.0.0.1:11434")


def test_embeds_in_batches_and_normalizes(server: FakeServer) -> None:
    provider = OpenAIEndpointProvider(server.url + "/v1", "nomic-embed-text", api_key="sekret", batch_size=2)
    assert (provider.model, provider.dims) == ("openai:nomic-embed-text", DIMS)
    texts = ["alpha", "beta gamma", "", "delta", "epsilon zeta eta"]
    vectors = provider.embed(texts)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected([t or " " for t in texts]), rtol=1e-6)
    assert provider.embed([]).shape == (0, DIMS)
    sent = server.requests[1:]  # the first one was the dimension probe
    assert [r["input"] for r in sent] == [["alpha", "beta gamma"], [" ", "delta"], ["epsilon zeta eta"]]
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert {r["model"] for r in server.requests} == {"nomic-embed-text"}
    assert {h["Authorization"] for h in server.headers} == {"Bearer sekret"}


def test_no_key_no_authorization_header(server: FakeServer) -> None:
    OpenAIEndpointProvider(server.url, "m")
    assert "Authorization" not in server.headers[0]


def test_unreachable_endpoint_is_a_config_error() -> None:
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago; nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConfigError, match=r"cannot reach the embedding endpoint .* start the server"):
        OpenAIEndpointProvider(f"http://127.0.0.1:{port}", "m", timeout=2)


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (500, b'{"error": "model not loaded"}', r"HTTP 500 .*model not loaded"),
        (401, b'{"error": "bad key"}', r"HTTP 401 .*check ragls\.embedding\.apiKey"),
        (200, b"<html>not json</html>", r"not an OpenAI embeddings response .*<html>"),
        (200, b'{"data": []}', r"0 embeddings for 1 inputs"),
        (200, b'{"data": [{"embedding": [0, 0, 0]}]}', r"all-zero"),
        (200, b'{"data": [{"embedding": "nope"}]}', r"shape|not an OpenAI"),
    ],
)
def test_bad_answers_are_clear_errors(server: FakeServer, status: int, body: bytes, message: str) -> None:
    server.reply = lambda _: (status, body)
    with pytest.raises(ConfigError, match=message):
        OpenAIEndpointProvider(server.url, "m")


def test_failures_after_loading_raise_embedding_error(server: FakeServer) -> None:
    provider = OpenAIEndpointProvider(server.url, "m")
    server.reply = lambda body: (200, json.dumps({"data": [{"index": 0, "embedding": [1.0, 2.0]}]}).encode())
    with pytest.raises(EmbeddingError, match=r"answered 2-dimensional vectors .* earlier 5"):
        provider.embed(["x"])
    server.reply = lambda body: (503, b"overloaded")
    with pytest.raises(EmbeddingError, match="HTTP 503"):
        provider.embed(["x"])


def test_a_slow_server_times_out(server: FakeServer) -> None:
    provider = OpenAIEndpointProvider(server.url, "m", timeout=0.3)

    def slow(body: dict[str, Any]) -> tuple[int, bytes]:
        time.sleep(1.0)
        return 200, b"{}"

    server.reply = slow
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"did not answer within 0\.3 s; .* raise ragls\.embedding\.timeout"):
        provider.embed(["x"])
    assert time.monotonic() - started < 1.0
