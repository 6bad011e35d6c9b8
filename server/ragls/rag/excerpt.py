"""Long chunks are scored whole but shown as their best window, so a result stays readable.

A long function is one chunk (all its words count toward one score), but a 500-line result would bury the
lines that matched. A result longer than the chunk shape's `max_lines` is narrowed, for display only, to the
window of that size holding the most distinct query terms (the earliest on a tie, which keeps the
signature when nothing else decides). Its id stays the chunk's, and `unitStartLine`/`unitEndLine` say what
the whole unit spans.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragls.config import ChunkShape
from ragls.index.tokenize import Tokenizer
from ragls.ingest.chunking.sizing import line_windows
from ragls.model import Document, SearchResult


def narrow_long_results(
    results: Sequence[SearchResult], query: str, tokenizer: Tokenizer, shape: ChunkShape
) -> list[SearchResult]:
    """The results, each longer than `shape.max_lines` replaced by its best window."""
    query_terms: set[str] | None = None
    narrowed: list[SearchResult] = []
    for result in results:
        metadata = result.document.metadata
        start, end = metadata.get("startLine"), metadata.get("endLine")
        if not isinstance(start, int) or not isinstance(end, int) or end - start + 1 <= shape.max_lines:
            narrowed.append(result)
            continue
        if query_terms is None:
            query_terms = set(tokenizer(query))
        narrowed.append(
            SearchResult(_best_window(result.document, start, end, query_terms, tokenizer, shape), result.score)
        )
    return narrowed


def _best_window(
    document: Document, start: int, end: int, query_terms: set[str], tokenizer: Tokenizer, shape: ChunkShape
) -> Document:
    lines = document.content.split("\n")
    if len(lines) != end - start + 1:
        return document  # not a plain line span (an added document, say): shown whole
    line_terms = [query_terms.intersection(tokenizer(line)) if line.strip() else set() for line in lines]

    def distinct_terms(window: tuple[int, int]) -> int:
        return len(set().union(*line_terms[window[0] - start : window[1] - start + 1]))

    # max keeps the first of equals: the earliest window wins a tie.
    window_start, window_end = max(line_windows(start, end, shape), key=distinct_terms)
    metadata = {
        **document.metadata,
        "startLine": window_start,
        "endLine": window_end,
        "unitStartLine": start,
        "unitEndLine": end,
    }
    content = "\n".join(lines[window_start - start : window_end - start + 1])
    return Document(document.id, content, metadata)
