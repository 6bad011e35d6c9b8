"""Turning a score per slot into ranked results, with exact-match metadata filters."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragls.model import Document, SearchResult

# Slots per block whose maximum `_lower_bound_of_kth` takes: a tree of fewer than BLOCK x topK slots sorts every
# positive one, as before.
BLOCK = 256


def matches(document: Document, filters: Mapping[str, Any] | None) -> bool:
    """Exact-match AND over metadata; no filters matches everything."""
    return not filters or all(document.metadata.get(key) == value for key, value in filters.items())


@dataclass(frozen=True)
class Ranking:
    """A stream's best results for a query, and its score for any document by id (0 for one it does not hold).

    Fusion sums every stream's score of every candidate, not only of the ones a stream listed: on a big tree
    the streams' top lists barely overlap, and a candidate one stream ranked 101st counted 0 there
    (docs/benchmarks.md). `scores_of` is None for a stream that can only list.
    """

    results: list[SearchResult]
    scores_of: Callable[[Sequence[str]], np.ndarray] | None = None


def ranking(
    scores: np.ndarray,
    documents: Sequence[Document | None],
    slot_of: Mapping[str, int],
    top_k: int,
    filters: Mapping[str, Any] | None = None,
) -> Ranking:
    """`top_results` with the scores of every slot kept for `Ranking.scores_of` (`slot_of`: id -> slot)."""

    def scores_of(document_ids: Sequence[str]) -> np.ndarray:
        slots = np.fromiter((slot_of.get(i, -1) for i in document_ids), dtype=np.int64, count=len(document_ids))
        found = (slots >= 0) & (slots < len(scores))  # a row a background embedder added since is not scored
        values = np.zeros(len(document_ids), dtype=np.float64)
        values[found] = scores[slots[found]]
        return values

    return Ranking(top_results(scores, documents, top_k, filters), scores_of)


def top_results(
    scores: np.ndarray, documents: Sequence[Document | None], top_k: int, filters: Mapping[str, Any] | None = None
) -> list[SearchResult]:
    """The top_k positive scores as results, best first, skipping documents the filters reject.

    Equal scores are ordered by document id, never by slot: slots depend on the order of past edits, and an
    index built by edits must answer like one built from scratch.
    """
    if top_k <= 0:
        return []
    floor = 0.0 if filters else _lower_bound_of_kth(scores, top_k)
    candidates = np.flatnonzero(scores > 0) if floor <= 0.0 else np.flatnonzero(scores >= floor)
    if candidates.size == 0:
        return []
    if not filters and candidates.size > top_k:
        kth = np.partition(scores[candidates], candidates.size - top_k)[candidates.size - top_k]
        candidates = candidates[scores[candidates] >= kth]
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    slots, ordered = order.tolist(), scores[order].tolist()
    results: list[SearchResult] = []
    start, n = 0, len(slots)
    while start < n and len(results) < top_k:
        end = start + 1
        while end < n and ordered[end] == ordered[start]:
            end += 1
        group = slots[start:end] if end - start == 1 else sorted(slots[start:end], key=lambda s: _id(documents[s]))
        for slot in group:
            document = documents[slot]
            if document is not None and matches(document, filters):
                results.append(SearchResult(document, ordered[start]))
                if len(results) == top_k:
                    break
        start = end
    return results


def _lower_bound_of_kth(scores: np.ndarray, top_k: int) -> float:
    """A score that at least top_k slots reach, at most the top_k-th best (0 where none is cheap to find).

    The top_k-th best of the blocks' maxima: top_k blocks reach it, so top_k slots do. Partitioning the slots
    at or above it instead of every positive one is what makes a top 100 of the Linux kernel's 865,000 chunks
    cheap (the positive slots of a question there run to hundreds of thousands).
    """
    blocks = len(scores) // BLOCK
    if blocks <= top_k:
        return 0.0
    maxima = scores[: blocks * BLOCK].reshape(blocks, BLOCK).max(axis=1)
    return float(np.partition(maxima, blocks - top_k)[blocks - top_k])


def _id(document: Document | None) -> str:
    return document.id if document is not None else ""
