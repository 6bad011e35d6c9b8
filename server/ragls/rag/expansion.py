"""Multi-query expansion: rewrites of the question from a chat model, each searched, fused by RRF with the question.

The rewrites are asked for before the search takes the generation's read side, and waited for at most the
setting's `timeout`: after that (or on any failure, told once) the question alone is searched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ragls.embedders.chat import expansion_from_setting
from ragls.errors import ConfigError
from ragls.model import Document, SearchResult
from ragls.rag.checks import MAX_QUERY_CHARS
from ragls.rag.rerank import RETRY_AFTER_S, Outages, Report, call_within
from ragls.rag.retriever import RRF_K


class QueryExpander(Protocol):
    """Rewrites a question into other search queries (never the question itself)."""

    name: str

    def rewrites(self, query: str) -> list[str]: ...


def expansion_stage(setting: str | Mapping[str, Any] | None, report: Report) -> ExpansionStage | None:
    """The stage the `queryExpansion` setting asks for; a setting that cannot be used is reported and means none."""
    try:
        chosen = expansion_from_setting(setting)
    except ConfigError as error:
        report(f"{error}; searching without query expansion")
        return None
    return None if chosen is None else ExpansionStage(chosen.expander, chosen.timeout, report)


class ExpansionStage:
    def __init__(
        self, expander: QueryExpander, timeout: float, report: Report, retry_after: float = RETRY_AFTER_S
    ) -> None:
        self.expander = expander
        self.timeout = timeout
        self.outages = Outages(report, retry_after)

    def rewrites(self, query: str) -> list[str]:
        """The expander's rewrites within the time limit, or none."""
        if not self.outages.available():
            return []
        try:
            rewrites = call_within(self.timeout, lambda: self.expander.rewrites(query), "ragls-expand")
        except TimeoutError:
            self.outages.failed(
                f"query expansion with {self.expander.name} did not answer within {self.timeout:g} s; "
                "searching with the question alone (raise ragls.queryExpansion.timeout)"
            )
            return []
        except Exception as error:  # any endpoint failure: the plain search answers
            self.outages.failed(
                f"query expansion with {self.expander.name} failed ({error}); searching with the question alone"
            )
            return []
        self.outages.succeeded()
        return [text for text in rewrites if isinstance(text, str) and text.strip() and len(text) <= MAX_QUERY_CHARS]


def fuse_rankings(rankings: Sequence[Sequence[SearchResult]], max_per_file: int, limit: int) -> list[SearchResult]:
    """sum(1 / (60 + rank + 1)) over the question's ranking and its rewrites', at most `max_per_file` per file.

    Ties keep the question's order. The fused list takes, place by place, the best scores its documents had in
    any ranking, so scores fall down the list and stay on the scale of one search.
    """
    fused: dict[str, float] = {}
    documents: dict[str, Document] = {}
    best: dict[str, float] = {}
    for ranking in rankings:
        for rank, result in enumerate(ranking):
            document_id = result.document.id
            fused[document_id] = fused.get(document_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            documents.setdefault(document_id, result.document)
            best[document_id] = max(best.get(document_id, 0.0), result.score)
    per_file: dict[str, int] = {}
    kept: list[Document] = []
    for document_id in sorted(fused, key=lambda i: -fused[i]):  # stable: first seen first among equals
        document = documents[document_id]
        file = document.metadata.get("file")
        if file is not None:
            if per_file.get(file, 0) >= max_per_file:
                continue
            per_file[file] = per_file.get(file, 0) + 1
        kept.append(document)
        if len(kept) == limit:
            break
    scores = sorted((best[document.id] for document in kept), reverse=True)
    return [SearchResult(document, score) for document, score in zip(kept, scores, strict=True)]
