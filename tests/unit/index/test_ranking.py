"""A stream's ranking: its listed results, and its score of every other document for the fusion."""

from __future__ import annotations

import numpy as np
import pytest

from ragls.index.bm25 import BM25Stream
from ragls.index.embedding import HashingEmbedding
from ragls.index.knowledge_base import InMemoryKnowledgeBase
from ragls.index.ranking import ranking, top_results
from ragls.index.vectors import VectorStream
from ragls.model import Document

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
DOCUMENTS = [
    Document(f"d{i}", f"def {word}_reader(source):\n    return read_{word}(source) + {i}\n", {"file": f"{word}.py"})
    for i, word in enumerate(WORDS)
]
QUERY = "read the source with the alpha reader"


def test_scores_of_gives_each_held_document_its_slot_s_score_and_zero_otherwise() -> None:
    documents = [Document(i, i) for i in "abc"]
    ranked = ranking(np.array([0.5, 2.0, 0.0], dtype=np.float32), documents, {"a": 0, "b": 1, "c": 2, "d": 7}, 1)
    assert [(r.document.id, r.score) for r in ranked.results] == [("b", 2.0)]
    assert ranked.scores_of is not None
    # "d" points past the scores (a row added after they were computed), "e" is not held at all.
    assert ranked.scores_of(["a", "b", "c", "d", "e"]).tolist() == [0.5, 2.0, 0.0, 0.0, 0.0]


def every_score(stream: BM25Stream | InMemoryKnowledgeBase | VectorStream) -> dict[str, float]:
    return {result.document.id: result.score for result in stream.search(QUERY, len(DOCUMENTS))}


@pytest.mark.parametrize("kind", ["bm25", "tfidf", "vectors"])
def test_a_stream_scores_documents_beyond_the_ones_it_listed(kind: str) -> None:
    knowledge_base = InMemoryKnowledgeBase()
    stream: BM25Stream | InMemoryKnowledgeBase | VectorStream
    if kind == "vectors":
        stream = VectorStream(HashingEmbedding())
        stream.replace_documents([], DOCUMENTS)
    else:
        knowledge_base.add_documents(DOCUMENTS)
        stream = knowledge_base if kind == "tfidf" else BM25Stream.over(knowledge_base)
    ranked = stream.ranking(QUERY, 1)
    expected = every_score(stream)
    assert len(ranked.results) == 1 and len(expected) > 1  # the others are scored, not listed
    ids = [document.id for document in DOCUMENTS] + ["unknown"]
    assert ranked.scores_of is not None
    scores = dict(zip(ids, ranked.scores_of(ids).tolist(), strict=True))
    assert scores == pytest.approx({i: expected.get(i, 0.0) for i in ids})


def test_a_removed_document_scores_nothing() -> None:
    knowledge_base = InMemoryKnowledgeBase()
    knowledge_base.add_documents(DOCUMENTS)
    knowledge_base.remove_document("d0")
    ranked = BM25Stream.over(knowledge_base).ranking(QUERY, 1)
    assert ranked.scores_of is not None and ranked.scores_of(["d0"]).tolist() == [0.0]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("top_k", [1, 7, 100])
def test_the_top_of_many_slots_is_every_positive_slot_sorted_by_score_then_id(seed: int, top_k: int) -> None:
    """Big arrays take the blocks' maxima as a floor before partitioning; the answer must not change, ties and
    all (scores drawn from a few values, many zeros, some negative)."""
    generator = np.random.default_rng(seed)
    size = 30_000 + seed * 1_001  # not a multiple of the block: the tail past the last block counts too
    scores = generator.choice(np.array([-1.0, 0.0, 0.0, 0.0, 0.25, 0.5, 1.0, 2.0], dtype=np.float32), size)
    if seed % 2:
        scores[-3:] = 9.0  # the best scores in the tail past the last block, which no block's maximum holds
    documents = [Document(f"d{generator.integers(10**9):09d}-{slot}", "x") for slot in range(size)]
    positive = [(-float(score), documents[slot].id) for slot, score in enumerate(scores.tolist()) if score > 0]
    expected = sorted(positive)[:top_k]
    results = top_results(scores, documents, top_k)
    assert [(-result.score, result.document.id) for result in results] == expected
