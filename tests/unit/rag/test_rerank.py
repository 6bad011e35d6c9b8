"""The rerank stage: a tiny cross-encoder on the real onnxruntime, and an HTTP `/rerank` server in a thread."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from ragls.config import Settings, parse_settings
from ragls.embedders.rerankers import HttpReranker, OnnxCrossEncoder, reranker_from_setting
from ragls.errors import ConfigError
from ragls.model import Document, SearchResult
from ragls.rag.rerank import RerankStage
from ragls.rag.service import RagService
from tests.unit.rag.model_servers import build_cross_encoder, model_server

pytestmark = pytest.mark.timeout(60)

# Lexically settings.py wins "settings" (its name and three mentions); the tiny model scores "yaml" ten times
# what "settings" is worth, so reranked, loader.py comes first.
FILES = {
    "settings.py": "def load_settings(path):\n    settings = read(path)\n    settings.check()\n    return settings\n",
    "loader.py": "def read_config(path):\n    # the settings come from yaml\n    return parse(yaml)\n",
    "cache.py": "def evict(cache):\n    cache.clear()\n",
}
QUERY = "settings"


def workspace(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def files_found(service: RagService, query: str = QUERY, top_k: int = 10) -> list[str]:
    return [result.document.metadata["file"] for result in service.search(query, top_k)]


def session(root: Path, **settings: Any) -> RagService:
    parsed, problems = parse_settings(settings)
    assert not problems
    service = RagService(root, parsed)
    service.index_directory()
    return service


def yaml_scores(path: str, body: dict[str, Any]) -> tuple[int, Any]:
    """Like Jina/Cohere/vLLM/llama.cpp: results sorted by relevance, each naming its document's index."""
    scores = [float(text.count("yaml")) for text in body["documents"]]
    results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
    results.sort(key=lambda item: -item["relevance_score"])
    return 200, {"model": body["model"], "results": results[: body.get("top_n", len(results))]}


def test_without_a_reranker_the_fused_order_is_lexical(tmp_path: Path) -> None:
    service = session(workspace(tmp_path))
    assert service.reranking is None
    assert files_found(service)[:2] == ["settings.py", "loader.py"]


@pytest.mark.parametrize("tokenizer", ["json", "vocab"])
def test_a_local_cross_encoder_reorders_the_fused_candidates(tmp_path: Path, tokenizer: str) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    if tokenizer == "json":
        pytest.importorskip("tokenizers")
    model = build_cross_encoder(tmp_path / "model", tokenizer)
    ws = tmp_path / "ws"
    ws.mkdir()
    service = session(workspace(ws), reranker={"provider": "onnx", "path": str(model)})
    assert service.reranking is not None
    assert service.reranking.prepared.wait(30)
    plain = RagService(service.root, Settings())
    plain.index_directory()
    fused = plain.search(QUERY, 10)
    reranked = service.search(QUERY, 10)
    assert [r.document.metadata["file"] for r in fused][:2] == ["settings.py", "loader.py"]
    assert [r.document.metadata["file"] for r in reranked][:2] == ["loader.py", "settings.py"]
    # The reordered results take the fused scores of their new places: still falling, still on that scale.
    assert [r.score for r in reranked] == [r.score for r in fused]
    assert service.take_notices() == []


def test_the_cross_encoder_scores_pairs_as_its_weights_say(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    provider = OnnxCrossEncoder(str(build_cross_encoder(tmp_path / "model")), batch_size=2)
    assert not provider.ready
    provider.prepare()
    documents = ["settings settings", "read yaml, settings", "cache evict", "", "socket " * 2000]
    assert provider.scores("where are settings read", documents) == [2.0, 11.0, 0.0, 0.0, 0.0]
    assert provider.scores("evict the cache", documents) == [0.0, 0.0, 36.0, 0.0, 0.0]
    assert provider.name.startswith("onnx:model@")


def test_an_http_rerank_endpoint_reorders_the_fused_candidates(tmp_path: Path) -> None:
    with model_server(yaml_scores) as server:
        setting = {"provider": "http", "url": server.url, "model": "bge-reranker-v2-m3", "apiKey": "k"}
        service = session(workspace(tmp_path), reranker=setting)
        assert files_found(service)[:2] == ["loader.py", "settings.py"]
    request = server.requests[-1]
    assert request["path"] == "/v1/rerank"
    assert request["model"] == "bge-reranker-v2-m3"
    assert request["query"] == QUERY
    assert request["top_n"] == len(request["documents"])
    assert any("yaml" in text for text in request["documents"])
    assert server.headers[-1]["Authorization"] == "Bearer k"
    assert service.take_notices() == []


def test_tei_answers_are_read_too(tmp_path: Path) -> None:
    def tei(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        return 200, [{"index": i, "score": float(t.count("yaml"))} for i, t in enumerate(body["documents"])]

    with model_server(tei) as server:
        service = session(
            workspace(tmp_path), reranker={"provider": "http", "url": server.url + "/rerank", "model": "tei"}
        )
        assert files_found(service)[:2] == ["loader.py", "settings.py"]
    assert server.requests[-1]["path"] == "/rerank"


def test_only_the_top_n_are_reranked(tmp_path: Path) -> None:
    with model_server(yaml_scores) as server:
        service = session(
            workspace(tmp_path), reranker={"provider": "http", "url": server.url, "model": "m", "topN": 1}
        )
        assert files_found(service)[:2] == ["settings.py", "loader.py"]  # one candidate: nothing to reorder
        topn2 = RerankStage(HttpReranker(server.url, "m"), 2, 5.0, lambda message: None)
        results = [SearchResult(Document(str(i), text, {}), 1.0 - i / 10) for i, text in enumerate(["a", "b", "yaml"])]
        assert [r.document.id for r in topn2.rerank("q", results)] == ["0", "1", "2"]  # "yaml" is third: not sent
        assert len(server.requests[-1]["documents"]) == 2


@pytest.mark.parametrize("failure", ["error", "garbage", "down"])
def test_a_failing_endpoint_leaves_the_fused_order_and_is_told_once(tmp_path: Path, failure: str) -> None:
    def reply(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        return (500, {"error": "model not loaded"}) if failure == "error" else (200, {"results": "nope"})

    with model_server(reply) as server:
        url = server.url if failure != "down" else "http://127.0.0.1:9"
        service = session(workspace(tmp_path), reranker={"provider": "http", "url": url, "model": "m"})
        assert service.reranking is not None
        service.reranking.outages.retry_after = 0.0  # try it on every search: still told only once
        for _ in range(3):
            assert files_found(service)[:2] == ["settings.py", "loader.py"]
    notices = service.take_notices()
    assert len(notices) == 1, notices
    assert "showing the fused order" in notices[0]
    assert {"error": "HTTP 500", "garbage": "not a rerank response", "down": "cannot reach"}[failure] in notices[0]


def test_a_slow_endpoint_is_cut_off_at_the_timeout(tmp_path: Path) -> None:
    with model_server(yaml_scores, delay=3.0) as server:
        setting = {"provider": "http", "url": server.url, "model": "m", "timeout": 0.3}
        service = session(workspace(tmp_path), reranker=setting)
        started = time.monotonic()
        assert files_found(service)[:2] == ["settings.py", "loader.py"]
        assert time.monotonic() - started < 2.0
        started = time.monotonic()
        files_found(service)  # the endpoint rests after a failure: no second wait
        assert time.monotonic() - started < 0.25
    notices = service.take_notices()
    assert len(notices) == 1 and "did not answer within 0.3 s" in notices[0], notices


def test_a_model_that_cannot_load_is_told_and_searches_go_on(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    model = tmp_path / "broken"
    model.mkdir()
    (model / "model.onnx").write_bytes(b"not a graph")
    (model / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]"]))
    ws = tmp_path / "ws"
    ws.mkdir()
    service = session(workspace(ws), reranker={"provider": "onnx", "path": str(model)})
    assert service.reranking is not None
    deadline = time.monotonic() + 20
    while not service.notices and time.monotonic() < deadline:
        time.sleep(0.02)
    assert files_found(service)[:2] == ["settings.py", "loader.py"]
    notices = service.take_notices()
    assert len(notices) == 1 and "cannot load" in notices[0], notices


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"provider": "cohere"}, "ragls.reranker.provider: expected one of onnx, http"),
        ({"provider": "http", "model": "m"}, "ragls.reranker.url"),
        ({"provider": "http", "url": "ftp://x", "model": "m"}, "expected an http(s) URL"),
        ({"provider": "http", "url": "http://h", "model": "m", "topN": 0}, "ragls.reranker.topN"),
        ({"provider": "http", "url": "http://h", "model": "m", "topN": 101}, "ragls.reranker.topN: expected 1..100"),
        ({"provider": "http", "url": "http://h", "model": "m", "timeout": 0}, "ragls.reranker.timeout"),
        ({"provider": "http", "url": "http://h", "model": "m", "path": "/x"}, "unknown key(s) path"),
        ({"provider": "onnx", "path": "/no/such/dir"}, "is not a directory"),
        ("yes", 'expected "none" or an object'),
    ],
)
def test_bad_settings_name_the_key(setting: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        reranker_from_setting(setting)


def test_a_bad_setting_is_reported_and_the_session_searches_without(tmp_path: Path) -> None:
    service = session(workspace(tmp_path), reranker={"provider": "onnx", "path": str(tmp_path / "missing")})
    assert service.reranking is None
    assert any("searching without a reranker" in notice for notice in service.take_notices())
    assert files_found(service)[:2] == ["settings.py", "loader.py"]


def test_the_setting_parses_and_is_off_by_default() -> None:
    assert Settings().reranker is None
    parsed, problems = parse_settings({"reranker": {"provider": "http", "url": "u", "model": "m"}})
    assert parsed.reranker == {"provider": "http", "url": "u", "model": "m"} and not problems
    assert parse_settings({"reranker": "none"})[0].reranker is None
    parsed, problems = parse_settings({"reranker": 3})
    assert parsed.reranker is None and problems and "ragls.reranker" in problems[0]
    assert reranker_from_setting(None) is None and reranker_from_setting("none") is None
    chosen = reranker_from_setting({"provider": "http", "url": "http://h:1/v1", "model": "m"})
    assert chosen is not None and chosen.top_n == 30 and chosen.timeout == 5.0
    assert chosen.provider.url == "http://h:1/v1/rerank"
