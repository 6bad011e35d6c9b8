"""Turning a score per slot into ranked results, with exact-match metadata filters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragls.model import Document, SearchResult


def matches(document: Document, filters: Mapping[str, Any] | None) -> bool:
    """Exact-match AND over metadata; no filters matches everything."""
    return not filters or all(document.metadata.get(key) == value for key, value in filters.items())


def top_results(
    scores: np.ndarray, documents: Sequence[Document | None], top_k: int, filters: Mapping[str, Any] | None = None
) -> list[SearchResult]:
    """The top_k positive scores as results, best first, skipping documents the filters reject."""
    candidates = np.flatnonzero(scores > 0)
    if candidates.size == 0 or top_k <= 0:
        return []
    if not filters and candidates.size > top_k:
        part = np.argpartition(-scores[candidates], top_k - 1)[:top_k]
        candidates = candidates[part]
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    results: list[SearchResult] = []
    for slot in order.tolist():
        document = documents[slot]
        if document is not None and matches(document, filters):
            results.append(SearchResult(document, float(scores[slot])))
            if len(results) == top_k:
                break
    return results
