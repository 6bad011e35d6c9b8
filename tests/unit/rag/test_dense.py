"""Dense vectors in the background: coverage, the switch into fusion, reuse by content hash."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragls.config import Settings
from ragls.index.embedding import HashingEmbedding
from ragls.index.tokenize import searchable_text
from ragls.index.vectors import RECENT_QUERIES, SPLIT_ROWS, VectorStream
from ragls.model import Document
from ragls.rag.service import RagService
from ragls.rag.store import store_path
from tests.robustness.test_store_damage import damage_what_a_snapshot_load_skips

FILES = {
    "a.py": "def alpha_handler(request):\n    return request.alpha\n",
    "b.py": "class BetaStore:\n    def beta_put(self, key):\n        self.items[key] = True\n",
}


class SlowCountingEmbedding(HashingEmbedding):
    """The hashing provider, slowed down and counting texts, to watch the background worker."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(64)
        self.delay = delay
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.delay)
        self.texts += len(texts)
        return super().embed(texts)


class LazyEmbedding(SlowCountingEmbedding):
    """Loads like a real model: `prepare` blocks until the test releases it, and embedding before that fails."""

    def __init__(self) -> None:
        super().__init__()
        self.ready = False
        self.release = threading.Event()
        self.prepared_on: str | None = None

    def prepare(self) -> None:
        assert self.release.wait(10)
        self.prepared_on = threading.current_thread().name
        self.ready = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        assert self.ready, "embedded before the model was loaded"
        return super().embed(texts)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


def wait_complete(service: RagService, timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        vectors = dict(service.status().vectors or {})
        if vectors and vectors["embedded"] == vectors["total"]:
            return vectors
        assert time.monotonic() < deadline, vectors
        time.sleep(0.02)


def test_vectors_fill_in_the_background_and_report_coverage(tmp_path: Path) -> None:
    root = write(tmp_path, FILES)
    provider = SlowCountingEmbedding(delay=0.3)
    service = RagService(root, Settings(), embedding=provider)
    service.index_directory()
    first = service.status().vectors
    assert first is not None and first["model"] == "hashing-64" and first["dims"] == 64
    assert first["embedded"] < first["total"]  # indexing did not wait for the model
    assert service.search("alpha_handler", 3)[0].document.id == "a.py#alpha_handler"  # lexical meanwhile
    vectors = wait_complete(service)
    assert vectors["total"] == service.status().chunks
    assert service.search("alpha_handler", 3)[0].document.id == "a.py#alpha_handler"
    service.close()


def test_streams_fuse_by_normalized_scores_with_or_without_an_embedding_provider(tmp_path: Path) -> None:
    root = write(tmp_path, FILES)
    lexical = RagService(root, Settings())
    lexical.index_directory()
    dense = RagService(root, Settings(), embedding=HashingEmbedding(64))
    dense.index_directory()
    wait_complete(dense)
    lexical_best = lexical.search("alpha_handler", 3)[0]
    dense_best = dense.search("alpha_handler", 3)[0]
    assert lexical_best.document.id == dense_best.document.id == "a.py#alpha_handler"
    weights = Settings().weights
    lexical_weight = weights.bm25 + weights.vector + weights.names + weights.code
    # The best of BM25 and of names count 1 each (times their weights), not 1 / 61 as reciprocal ranks would; a
    # score is relevance, over the weights of the streams that answered (dense joins the second session's).
    assert lexical_best.score >= (weights.bm25 + weights.names) / lexical_weight
    assert dense_best.score >= (weights.bm25 + weights.names) / (lexical_weight + weights.dense)
    assert lexical_best.score <= 1.0 and dense_best.score <= 1.0
    lexical.close()
    dense.close()


def embedded_and_closed(tmp_path: Path) -> tuple[Path, Path]:
    """A folder indexed and embedded by a session that then closed: its store holds every vector."""
    root, cache = tmp_path / "w", tmp_path / "c"
    root.mkdir()
    first = persisted(write(root, FILES), cache, SlowCountingEmbedding())
    first.index_directory()
    wait_complete(first)
    first.close()
    return root, cache


def persisted(root: Path, cache: Path, provider: SlowCountingEmbedding) -> RagService:
    return RagService(root, Settings(cache_dir=str(cache)), embedding=provider, persist=True)


def test_vectors_are_reused_by_content_across_restarts(tmp_path: Path) -> None:
    root, cache = embedded_and_closed(tmp_path)
    second_provider = SlowCountingEmbedding()
    second = persisted(root, cache, second_provider)
    second.index_directory()
    assert wait_complete(second)["embedded"] == second.status().chunks
    assert second_provider.texts == 0  # every vector came from the store
    (root / "a.py").write_text("def alpha_handler(request):\n    return request.omega\n")
    second.update_paths(["a.py"])
    wait_complete(second)
    assert second_provider.texts == 1  # only the changed chunk was embedded
    second.close()


def test_a_model_that_loads_lazily_is_loaded_in_the_background_and_searches_never_wait(tmp_path: Path) -> None:
    root, cache = embedded_and_closed(tmp_path)
    provider = LazyEmbedding()
    second = persisted(root, cache, provider)
    second.index_directory()
    assert wait_complete(second)["embedded"] == second.status().chunks  # every vector came from the store
    assert second.state.vectors is not None and not second.state.vectors.complete  # but the model is not loaded
    assert second.search("alpha_handler", 3)[0].document.id == "a.py#alpha_handler"  # lexical, no query embedding
    provider.release.set()
    deadline = time.monotonic() + 10
    while not second.state.vectors.complete:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert provider.prepared_on == "ragls-embed"
    assert second.search("alpha_handler", 3)[0].document.id == "a.py#alpha_handler"
    assert provider.texts == 1  # the query, now embedded
    second.close()


def test_recent_query_vectors_are_reused(tmp_path: Path) -> None:
    provider = SlowCountingEmbedding()
    stream = VectorStream(provider)
    stream.replace_documents([], [Document("a", "alpha handler"), Document("b", "beta store")])
    embedded = provider.texts
    first = [r.document.id for r in stream.search("alpha handler", 2)]
    assert [r.document.id for r in stream.search("alpha handler", 2)] == first
    assert provider.texts == embedded + 1  # the second search reused the query's vector
    for i in range(RECENT_QUERIES):
        stream.search(f"query {i}", 1)
    stream.search("alpha handler", 2)  # pushed out by newer queries: embedded again
    assert provider.texts == embedded + 2 + RECENT_QUERIES


class QuerySessionEmbedding(SlowCountingEmbedding):
    """Embeds queries apart from chunks, as MiniLM does on a session of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return super().embed([text])[0]


def test_a_provider_with_a_query_session_embeds_queries_there(tmp_path: Path) -> None:
    provider = QuerySessionEmbedding()
    stream = VectorStream(provider)
    stream.replace_documents([], [Document("a", "alpha handler"), Document("b", "beta store")])
    chunks = provider.texts
    assert [r.document.id for r in stream.search("alpha handler", 1)] == ["a"]
    assert provider.queries == ["alpha handler"]
    assert provider.texts == chunks + 1  # embed_query delegates to embed here; once, not twice


def test_each_vector_is_held_once_and_reused_after_removal_and_clear() -> None:
    provider = SlowCountingEmbedding()
    stream = VectorStream(provider)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    documents = [Document(f"d{i}", f"def {word}_handler():\n    return {word}_value\n") for i, word in enumerate(words)]
    stream.replace_documents([], documents)
    assert provider.texts == 6 and stream.cache == {}  # the rows hold every vector; no second copy
    stream.replace_documents(["d1", "d4"], [])
    assert len(stream.cache) == 2  # removed documents' vectors wait in the cache
    stream.replace_documents([], [documents[4], documents[1]])
    assert provider.texts == 6 and stream.cache == {}
    stream.clear()
    assert len(stream.cache) == 6 and stream.coverage() == (0, 0)
    stream.replace_documents([], documents)
    assert provider.texts == 6  # a rebuild after clear embeds nothing again
    for document in documents:
        assert stream.search(document.content, 1)[0].document.id == document.id


WORDS = ["kilo", "lima", "mike", "november"]


def test_documents_with_the_same_content_share_one_vector() -> None:
    provider = SlowCountingEmbedding()
    stream = VectorStream(provider)
    same = [Document(name, "def license_header():\n    return 'MIT'\n") for name in ("a", "b", "c")]
    other = [Document(f"x{i}", f"def {word}_parser(text):\n    return {word}(text)\n") for i, word in enumerate(WORDS)]
    stream.replace_documents([], [*same[:1], *other, *same[1:]])
    assert provider.texts == 5  # the copies reuse the first one's vector
    stream.replace_documents(["a", "x0"], [])  # swaps rows around; b and c still hold the vector
    assert len(stream.cache) == 1  # only x0's
    assert {r.document.id for r in stream.search(same[0].content, 2)} == {"b", "c"}
    stream.replace_documents(["b", "c"], [])
    assert len(stream.cache) == 2  # the last copy gone: its vector is kept
    embedded = provider.texts  # the search above embedded its query
    stream.replace_documents([], same)
    assert provider.texts == embedded
    for document in other[1:]:
        assert stream.search(document.content, 1)[0].document.id == document.id


def test_a_large_matrix_ranks_as_one_product_would() -> None:
    """Past SPLIT_ROWS two threads score halves of the matrix; the ranking must not change."""
    provider = HashingEmbedding(64)
    stream = VectorStream(provider)
    documents = [
        Document(f"d{i}", f"def handler_{i % 97}(item_{i % 89}):\n    return item_{i % 83}\n")
        for i in range(SPLIT_ROWS + 904)
    ]
    stream.replace_documents([], documents)
    matrix = provider.embed([searchable_text(d.content, d.metadata) for d in documents])
    for query in ("handler_5 item_7", "return item_12", "handler_96"):
        scores = np.maximum(matrix @ provider.embed([query])[0], 0.0)
        results = stream.search(query, 10)
        assert len(results) == 10
        np.testing.assert_allclose([r.score for r in results], np.sort(scores)[::-1][:10], rtol=1e-5)
        for result in results:  # each score belongs to its document (ties may come in any order)
            assert abs(result.score - scores[int(result.document.id[1:])]) < 1e-5


def test_vectors_are_kept_when_the_store_behind_a_snapshot_is_rebuilt(tmp_path: Path) -> None:
    root, cache = embedded_and_closed(tmp_path)
    damage_what_a_snapshot_load_skips(store_path(str(cache), root.resolve()))
    second = persisted(root, cache, SlowCountingEmbedding())
    second.index_directory()
    second.wait_for_saves()
    assert ["damaged" in notice for notice in second.take_notices()] == [True]
    second.close()
    third_provider = SlowCountingEmbedding()
    third = persisted(root, cache, third_provider)
    third.index_directory()
    assert wait_complete(third)["embedded"] == third.status().chunks
    assert third_provider.texts == 0  # the rebuilt store has every vector the session held
    third.close()
