"""Weighted RRF and normalized-score fusion, per-file caps and failing streams; both context prompt formats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from ragls.index.ranking import Ranking
from ragls.model import Document, SearchResult
from ragls.rag.prompt import build_prompt
from ragls.rag.retriever import HybridRetriever, WhenComplete, normalized_scores


class FixedStream:
    """A stream that answers every query with a fixed ranking (test input, not a ragls component)."""

    def __init__(self, name: str, ids: list[str], files: dict[str, str] | None = None) -> None:
        self.name = name
        self.ids = ids
        self.files = files or {}
        self.asked: list[int] = []

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        self.asked.append(top_k)
        docs = [Document(i, f"content {i}", {"file": self.files.get(i, f"{i}.py")}) for i in self.ids]
        return [SearchResult(d, 1.0 / (rank + 1)) for rank, d in enumerate(docs)][:top_k]


class ScoredStream:
    """A stream that answers every query with fixed (id, score) pairs, best first."""

    def __init__(self, name: str, scored: list[tuple[str, float]]) -> None:
        self.name = name
        self.scored = scored

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        return [SearchResult(Document(i, f"content {i}", {"file": f"{i}.py"}), score) for i, score in self.scored][
            :top_k
        ]


class EveryScoreStream(ScoredStream):
    """A ScoredStream that, like the index's streams, also gives its score of documents it did not list."""

    def ranking(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> Ranking:
        scores = dict(self.scored)

        def scores_of(ids: Sequence[str]) -> np.ndarray:
            return np.array([scores.get(i, 0.0) for i in ids])

        return Ranking(self.search(query, top_k, filters), scores_of)


class BrokenStream:
    name = "broken"

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        raise RuntimeError("index unavailable")


def test_weighted_rrf_with_rank_from_zero() -> None:
    bm25 = FixedStream("bm25", ["a", "b", "c"])
    vector = FixedStream("vector", ["c", "a"])
    results = HybridRetriever.builder().stream(bm25, 0.6).stream(vector, 0.4).build().retrieve("q", 2)
    assert bm25.asked == [4] and vector.asked == [4]  # 2 x topK from each stream
    scores = {r.document.id: r.score for r in results}
    assert scores["a"] == pytest.approx(0.6 / 61 + 0.4 / 62)
    assert scores["c"] == pytest.approx(0.6 / 63 + 0.4 / 61)
    assert [r.document.id for r in results] == ["a", "c"]


def test_normalized_scores_keep_how_far_ahead_a_stream_s_best_answer_is() -> None:
    # By rank the two streams cancel out (a ties c); by score bm25's a is ten times ahead of its c,
    # while dense has c barely ahead of a.
    bm25 = ScoredStream("bm25", [("a", 10.0), ("c", 1.0)])
    dense = ScoredStream("dense", [("c", 0.5), ("a", 0.45), ("z", 0.0)])
    by_rank = HybridRetriever.builder().stream(bm25, 1.0).stream(dense, 1.0).build().retrieve("q", 3)
    assert by_rank[0].score == pytest.approx(by_rank[1].score)
    by_score = HybridRetriever.builder().stream(bm25, 1.0).stream(dense, 1.0).fusion(normalized_scores).build()
    results = by_score.retrieve("q", 3)
    scores = {r.document.id: r.score for r in results}
    assert scores == pytest.approx({"a": 1.0 + 0.9, "c": 0.1 + 1.0, "z": 0.0})
    assert [r.document.id for r in results] == ["a", "c", "z"]


def test_a_candidate_a_stream_did_not_list_still_gets_its_score_there() -> None:
    # Asked for 2, bm25 lists a and b; c, its third, is dense's best, and fuses with what bm25 gives it.
    bm25 = EveryScoreStream("bm25", [("a", 10.0), ("b", 8.0), ("c", 7.0)])
    dense = EveryScoreStream("dense", [("c", 0.5), ("a", 0.1)])
    retriever = HybridRetriever.builder().stream(bm25, 1.0).stream(dense, 1.0).fusion(normalized_scores).build()
    scores = {r.document.id: r.score for r in retriever.retrieve("q", 1)}
    assert scores == pytest.approx({"c": 0.7 + 1.0})
    deep = {r.document.id: r.score for r in retriever.retrieve("q", 3)}
    assert deep == pytest.approx({"c": 1.7, "a": 1.2, "b": 0.8})
    # A rank fusion cannot place what a stream did not list: it counts 0 there.
    rrf = HybridRetriever.builder().stream(bm25, 1.0).stream(dense, 1.0).build()
    assert {r.document.id: r.score for r in rrf.retrieve("q", 1)} == pytest.approx({"a": 1 / 61 + 1 / 62})


def test_relevance_is_the_fused_score_over_the_weights_of_the_streams_that_answered() -> None:
    bm25 = ScoredStream("bm25", [("a", 10.0), ("c", 1.0)])
    dense = ScoredStream("dense", [("c", 0.5), ("a", 0.45)])
    complete = False
    retriever = (
        HybridRetriever.builder()
        .stream(bm25, 1.5)
        .stream(WhenComplete(dense, lambda: complete), 0.5)
        .stream(BrokenStream(), 2.0)
        .fusion(normalized_scores)
        .relevance()
        .build()
    )
    # Neither the failing stream nor the dense one that has not joined yet counts toward the most a score can be.
    assert {r.document.id: r.score for r in retriever.retrieve("q", 3)} == pytest.approx({"a": 1.0, "c": 0.1})
    complete = True
    scores = {r.document.id: r.score for r in retriever.retrieve("q", 3)}
    assert scores == pytest.approx({"a": (1.5 + 0.5 * 0.9) / 2.0, "c": (1.5 * 0.1 + 0.5) / 2.0})
    rrf = HybridRetriever.builder().stream(bm25, 0.6).stream(dense, 0.4).relevance().build()
    assert rrf.retrieve("q", 3)[0].score == pytest.approx((0.6 / 61 + 0.4 / 62) * 61)


def test_a_stream_s_power_shrinks_its_partial_answers_and_keeps_its_best() -> None:
    names = ScoredStream("names", [("a", 4.0), ("b", 2.0)])
    bm25 = ScoredStream("bm25", [("b", 1.0), ("a", 0.6)])
    plain = HybridRetriever.builder().stream(names, 1.0).stream(bm25, 1.0).fusion(normalized_scores).build()
    assert {r.document.id: r.score for r in plain.retrieve("q", 2)} == pytest.approx({"a": 1.6, "b": 1.5})
    squared = (
        HybridRetriever.builder().stream(names, 1.0, power=2.0).stream(bm25, 1.0).fusion(normalized_scores).build()
    )
    results = squared.retrieve("q", 2)
    assert {r.document.id: r.score for r in results} == pytest.approx({"a": 1.6, "b": 1.25})
    with pytest.raises(ValueError, match="power"):
        HybridRetriever.builder().stream(names, 1.0, power=0.0)


def test_a_stream_with_no_positive_score_adds_nothing() -> None:
    zero = ScoredStream("zero", [("a", 0.0), ("b", 0.0)])
    results = HybridRetriever.builder().stream(zero, 1.0).fusion(normalized_scores).build().retrieve("q", 5)
    assert [(r.document.id, r.score) for r in results] == [("a", 0.0), ("b", 0.0)]


def test_min_depth_asks_every_stream_for_more() -> None:
    bm25 = FixedStream("bm25", ["a", "b", "c"])
    HybridRetriever.builder().stream(bm25, 1.0).min_depth(50).build().retrieve("q", 2)
    HybridRetriever.builder().stream(bm25, 1.0).min_depth(50).build().retrieve("q", 40)
    assert bm25.asked == [50, 80]


def test_a_stream_joins_only_once_complete() -> None:
    complete = False
    dense = FixedStream("dense", ["z"])
    retriever = (
        HybridRetriever.builder()
        .stream(FixedStream("bm25", ["a"]), 0.6)
        .stream(WhenComplete(dense, lambda: complete), 0.4)
        .build()
    )
    assert [r.document.id for r in retriever.retrieve("q", 5)] == ["a"] and dense.asked == []
    complete = True
    assert [r.document.id for r in retriever.retrieve("q", 5)] == ["a", "z"]


def test_at_most_three_chunks_per_file() -> None:
    ids = [f"x{i}" for i in range(6)] + ["y"]
    files = {i: "same.py" for i in ids[:6]} | {"y": "other.py"}
    results = HybridRetriever.builder().stream(FixedStream("s", ids, files), 1.0).build().retrieve("q", 10)
    assert [r.document.id for r in results] == ["x0", "x1", "x2", "y"]


def test_a_failing_stream_is_skipped() -> None:
    retriever = HybridRetriever.builder().stream(BrokenStream(), 0.6).stream(FixedStream("ok", ["a"]), 0.4).build()
    assert [r.document.id for r in retriever.retrieve("q", 5)] == ["a"]


def test_empty_builder_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one stream"):
        HybridRetriever.builder().build()


def test_prior_reorders_without_dropping() -> None:
    files = {"t": "tests/test_a.py", "s": "src/a.py"}
    retriever = (
        HybridRetriever.builder()
        .stream(FixedStream("s", ["t", "s"], files), 1.0)
        .prior(lambda f: 0.5 if f and f.startswith("tests/") else 1.0)
        .build()
    )
    assert [r.document.id for r in retriever.retrieve("q", 5)] == ["s", "t"]


def result(doc_id: str, content: str, **metadata: Any) -> SearchResult:
    return SearchResult(Document(doc_id, content, metadata), 0.5)


def test_fenced_prompt_escapes_ids_metadata_and_content_but_not_the_query() -> None:
    prompt = build_prompt("Why <b> & co?", [result("a.py#<x>", "if a < b && c > d:", file="a.py", note="</evidence>")])
    assert prompt == (
        "<tnsai-memory>\n<evidence>\n<document-id>a.py#&lt;x&gt;</document-id>\n<provenance>\n"
        "<entry><key>file</key><value>a.py</value></entry>\n"
        "<entry><key>note</key><value>&lt;/evidence&gt;</value></entry>\n</provenance>\n"
        "<content>if a &lt; b &amp;&amp; c &gt; d:</content>\n</evidence>\n</tnsai-memory>\n\n"
        "<tnsai-user-message>\nWhy <b> & co?\n</tnsai-user-message>"
    )


def test_plain_prompt_and_no_results() -> None:
    prompt = build_prompt(
        "How?",
        [
            result("f#g", "def g(): ...", file="src/f.py", startLine=3, endLine=4),
            result("note-1", "Deploy on Tuesdays"),
        ],
        "plain",
    )
    assert prompt == (
        "[Relevant code context]\n--- file: src/f.py (lines 3-4) ---\ndef g(): ...\n\n"
        "--- document: note-1 ---\nDeploy on Tuesdays\n\n[User question]\nHow?"
    )
    assert build_prompt("How?", [], "fenced") == "How?"
    assert build_prompt("How?", [], "plain") == "How?"
