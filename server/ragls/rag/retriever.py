"""HybridRetriever: weighted fusion of several streams (RRF by default), at most N chunks per file."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ragls.index.ranking import Ranking
from ragls.model import Document, SearchResult

RRF_K = 60
log = logging.getLogger(__name__)


class SearchStream(Protocol):
    """Anything that ranks documents for a query.

    A stream that can also score documents it did not list has a `ranking(query, top_k, filters)` method
    returning a `Ranking`; the fusion then counts its score for every candidate (`ranking_of`).
    """

    name: str

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]: ...


Fusion = Callable[[Sequence[SearchResult]], list[float]]


def reciprocal_ranks(results: Sequence[SearchResult]) -> list[float]:
    """1 / (60 + rank + 1), rank from 0: the contract's fusion; it needs no comparable scores."""
    return [1.0 / (RRF_K + rank + 1) for rank in range(len(results))]


def normalized_scores(results: Sequence[SearchResult]) -> list[float]:
    """Each score over the stream's best: 0..1, keeping how far ahead a stream's best answers are.

    Every stream's scores are >= 0 (BM25, TF-IDF cosine, clipped dense cosine), so this is a min-max
    normalization with the theoretical minimum 0. Rank fusion throws those gaps away; summing normalized
    scores measured +0.02..+0.03 MRR@10 over it with dense vectors, and is part of the lexical gain on the
    hand-written questions (docs/benchmarks.md). It is the fusion every session uses.
    """
    best = max((result.score for result in results), default=0.0)
    if best <= 0.0:
        return [0.0] * len(results)
    scale = 1.0 / best
    return [result.score * scale if result.score > 0.0 else 0.0 for result in results]


def normalized_everywhere(scores: np.ndarray, results: Sequence[SearchResult]) -> np.ndarray:
    """`normalized_scores` for any candidate's score in a stream, listed or not: over the best it listed."""
    best = max((result.score for result in results), default=0.0)
    if best <= 0.0:
        return np.zeros(len(scores))
    return np.where(scores > 0.0, scores * (1.0 / best), 0.0)


# The most one stream's result can contribute (before its weight), by fusion: what `relevance` divides by.
FUSION_CEILINGS: dict[Fusion, float] = {reciprocal_ranks: 1.0 / (RRF_K + 1), normalized_scores: 1.0}
# How a fusion counts the score of a candidate a stream did not list; one without an entry counts 0 (a rank
# fusion cannot place it).
FILL_INS: dict[Fusion, Callable[[np.ndarray, Sequence[SearchResult]], np.ndarray]] = {
    normalized_scores: normalized_everywhere
}


def ranking_of(stream: SearchStream, query: str, top_k: int, filters: Mapping[str, Any] | None) -> Ranking:
    """The stream's `ranking` where it has one, else its results alone."""
    ranks = getattr(stream, "ranking", None)
    if ranks is not None:
        ranked: Ranking = ranks(query, top_k, filters)
        return ranked
    return Ranking(stream.search(query, top_k, filters))


@dataclass(frozen=True)
class WeightedStream:
    """A stream, its weight, and the power its fused contributions are raised to (1: as they are).

    A power above 1 keeps a stream's best answers and shrinks its partial ones: the names stream matches one
    query word against a name as readily as all of them, and squared, a name that holds one word of four
    counts a sixteenth, not a quarter (docs/benchmarks.md).
    """

    stream: SearchStream
    weight: float
    power: float = 1.0


class HybridRetriever:
    """Asks each stream for 2 x topK (or `min_depth` if more) and sums weight x fusion(stream's results).

    A candidate is anything a stream listed; a stream with a `Ranking.scores_of` also gives its score of the
    candidates it did not list (by `FILL_INS`: normalized by its best, as if listed), so a candidate ranked
    101st by one stream is not counted 0 there.

    The default fusion is the contract's sum(weight / (60 + rank + 1)), rank from 0. With `relevance`, the
    fused score is divided by the most it could be (every active stream's weight times the fusion's best
    contribution): 0..1, 1 for a result each stream ranks first. It is then scaled by an optional prior on
    the result's file, and at most `max_per_file` chunks of one file are kept.
    """

    def __init__(
        self,
        streams: list[WeightedStream],
        max_per_file: int = 3,
        prior: Callable[[str | None], float] | None = None,
        min_depth: int = 0,
        fusion: Fusion = reciprocal_ranks,
        relevance: bool = False,
    ) -> None:
        if not streams:
            raise ValueError("HybridRetriever needs at least one stream")
        self.streams = streams
        self.max_per_file = max_per_file
        self.prior = prior
        self.min_depth = min_depth
        self.fusion = fusion
        self.relevance = relevance
        if relevance and fusion not in FUSION_CEILINGS:
            raise ValueError("relevance needs a fusion whose best contribution is known (see FUSION_CEILINGS)")

    @staticmethod
    def builder() -> HybridRetrieverBuilder:
        return HybridRetrieverBuilder()

    def retrieve(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        depth = max(2 * top_k, self.min_depth)
        answered, active_weight = self._rankings(query, depth, filters)
        documents = {result.document.id: result.document for _, ranked in answered for result in ranked.results}
        ids = list(documents)
        fused = np.zeros(len(ids))
        for weighted, ranked in answered:
            contributions = self._contributions(ranked, ids)
            if weighted.power != 1.0:
                contributions = contributions**weighted.power
            fused += weighted.weight * contributions
        ceiling = active_weight * FUSION_CEILINGS[self.fusion] if self.relevance else 1.0
        scale = 1.0 / ceiling if ceiling > 0.0 else 1.0
        prior = self.prior
        scores: dict[str, float] = {}
        for document_id, score in zip(ids, fused.tolist(), strict=True):
            factor = prior(documents[document_id].metadata.get("file")) if prior is not None else 1.0
            scores[document_id] = score * scale * factor
        ranked_ids = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return self._diversify(ranked_ids, documents, top_k)

    def _rankings(
        self, query: str, depth: int, filters: Mapping[str, Any] | None
    ) -> tuple[list[tuple[WeightedStream, Ranking]], float]:
        """Each active stream's ranking (a stream that fails is skipped), and the sum of their weights."""
        answered: list[tuple[WeightedStream, Ranking]] = []
        active_weight = 0.0
        for weighted in self.streams:
            if not getattr(weighted.stream, "active", True):
                continue
            try:
                ranked = ranking_of(weighted.stream, query, depth, filters)
            except Exception:
                log.exception("search stream %s failed; skipping it", getattr(weighted.stream, "name", "?"))
                continue
            active_weight += weighted.weight
            answered.append((weighted, ranked))
        return answered, active_weight

    def _contributions(self, ranked: Ranking, ids: list[str]) -> np.ndarray:
        """What one stream adds to each candidate, before its weight and power."""
        fill_in = FILL_INS.get(self.fusion)
        if fill_in is not None and ranked.scores_of is not None and ranked.results:
            return fill_in(ranked.scores_of(ids), ranked.results)
        position = {document_id: n for n, document_id in enumerate(ids)}
        contributions = np.zeros(len(ids))
        for result, contribution in zip(ranked.results, self.fusion(ranked.results), strict=True):
            contributions[position[result.document.id]] = contribution
        return contributions

    def _diversify(
        self, ranked: list[tuple[str, float]], documents: Mapping[str, Document], top_k: int
    ) -> list[SearchResult]:
        """The first top_k of `ranked`, at most `max_per_file` from one file."""
        per_file: dict[str, int] = {}
        kept: list[SearchResult] = []
        for document_id, score in ranked:
            document = documents[document_id]
            file = document.metadata.get("file")
            if file is not None:
                if per_file.get(file, 0) >= self.max_per_file:
                    continue
                per_file[file] = per_file.get(file, 0) + 1
            kept.append(SearchResult(document, score))
            if len(kept) == top_k:
                break
        return kept


class HybridRetrieverBuilder:
    """`HybridRetriever.builder().stream(bm25, 0.6).stream(kb, 0.4).build()`."""

    def __init__(self) -> None:
        self._streams: list[WeightedStream] = []
        self._max_per_file = 3
        self._prior: Callable[[str | None], float] | None = None
        self._min_depth = 0
        self._fusion: Fusion = reciprocal_ranks
        self._relevance = False

    def stream(self, stream: SearchStream, weight: float, power: float = 1.0) -> HybridRetrieverBuilder:
        """Add a stream whose fused contributions are raised to `power`, then weighted (see `WeightedStream`)."""
        if power <= 0.0:
            raise ValueError("a stream's power must be positive")
        self._streams.append(WeightedStream(stream, weight, power))
        return self

    def max_per_file(self, limit: int) -> HybridRetrieverBuilder:
        self._max_per_file = limit
        return self

    def prior(self, prior: Callable[[str | None], float]) -> HybridRetrieverBuilder:
        """Scale each fused score by a factor computed from the result's file path."""
        self._prior = prior
        return self

    def min_depth(self, depth: int) -> HybridRetrieverBuilder:
        """Ask every stream for at least `depth` results, however small topK is."""
        self._min_depth = depth
        return self

    def fusion(self, fusion: Fusion) -> HybridRetrieverBuilder:
        """How a stream's results turn into contributions: `reciprocal_ranks` (default) or `normalized_scores`."""
        self._fusion = fusion
        return self

    def relevance(self) -> HybridRetrieverBuilder:
        """Scores as relevance, 0..1: the fused score over the most it could be for the streams that answered."""
        self._relevance = True
        return self

    def build(self) -> HybridRetriever:
        if not self._streams:
            raise ValueError("HybridRetriever.builder() needs at least one stream before build()")
        return HybridRetriever(
            self._streams, self._max_per_file, self._prior, self._min_depth, self._fusion, self._relevance
        )


class WhenComplete:
    """A stream that joins the fusion only once `complete()` says every document is in it.

    Dense results over half-embedded documents would rank the rest lower for no reason; until
    the embedder catches up the other streams answer alone.
    """

    def __init__(self, stream: SearchStream, complete: Callable[[], bool]) -> None:
        self.stream = stream
        self.name = stream.name
        self.complete = complete

    @property
    def active(self) -> bool:
        """Whether the stream takes part: its weight counts toward the most a fused score could be."""
        return self.complete()

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        return self.stream.search(query, top_k, filters) if self.complete() else []

    def ranking(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> Ranking:
        return ranking_of(self.stream, query, top_k, filters) if self.complete() else Ranking([])
