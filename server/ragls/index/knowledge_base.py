"""The KnowledgeBase contract and its in-memory store: TF-IDF cosine search and embedding cosine search."""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from ragls.index.columns import ArraySpace
from ragls.index.postings import Postings, StagedPostings
from ragls.index.ranking import Ranking, matches, ranking, top_results
from ragls.index.tokenize import TermCounts, TermTable, Tokenizer, code_tokens, searchable_text
from ragls.index.vocabulary import Vocabulary
from ragls.model import Document, SearchResult


class KnowledgeBase(Protocol):
    """A document store that can be searched by text and by embedding."""

    def add_document(self, document: Document) -> None: ...
    def add_documents(self, documents: Sequence[Document]) -> None: ...
    def get_document(self, document_id: str) -> Document | None: ...
    def remove_document(self, document_id: str) -> bool: ...
    def replace_documents(self, remove_ids: Collection[str], add: Sequence[Document]) -> list[Document]: ...
    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]: ...
    def search_by_embedding(
        self, embedding: Sequence[float], top_k: int, filters: Mapping[str, Any] | None = None
    ) -> list[SearchResult]: ...
    def size(self) -> int: ...
    def clear(self) -> None: ...


class InMemoryKnowledgeBase:
    """Thread-safe store ranking by TF-IDF cosine (lnc.ltc), so updates never recompute other documents."""

    name = "tfidf"

    def __init__(self, tokenizer: Tokenizer = code_tokens) -> None:
        self.tokenizer = tokenizer
        # The postings hold the documents (by slot, with an id -> slot map): no second map of them here, which
        # every edit would copy (the Linux kernel's 865,000).
        self._postings = Postings()
        self._lock = threading.RLock()

    def add_document(self, document: Document) -> None:
        self.add_documents([document])

    def add_documents(self, documents: Sequence[Document]) -> None:
        self.replace_documents((), documents)

    def get_document(self, document_id: str) -> Document | None:
        return self._postings.get(document_id)

    def documents(self) -> list[Document]:
        """The live documents, in slot order."""
        with self._lock:
            return [d for d in self._postings.documents if d is not None]

    def remove_document(self, document_id: str) -> bool:
        return bool(self.replace_documents([document_id], []))

    def replace_documents(
        self, remove_ids: Collection[str], add: Sequence[Document], terms: TermTable | None = None
    ) -> list[Document]:
        """Drop then add under the write lock, rolling back if an add fails; returns what was removed.

        `terms` may carry each added document's term counts, tokenized ahead of time; each is taken out as used.
        """
        with self._lock:
            postings = self._postings
            removed = [d for d in (postings.remove(i) for i in remove_ids) if d is not None]
            replaced = [d for d in (postings.get(a.id) for a in add) if d is not None]
            try:
                for document in add:
                    postings.add(document, self._terms(document, terms))
            except BaseException:
                for document in add:
                    postings.remove(document.id)
                for document in [*removed, *replaced]:
                    postings.add(document, self._terms(document))
                raise
            finally:
                self._postings.refresh()
            return removed + replaced

    def staged(self, space: ArraySpace | None = None) -> StagedPostings:
        """A copy to change while readers carry on, then install in constant time (`StagedPostings`); its new
        arrays in `space`."""
        return StagedPostings(self._postings, self._lock, self._terms, space)

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        """Cosine of (1 + log tf) document weights with (1 + log tf) * idf query weights."""
        return self.ranking(query, top_k, filters).results

    def ranking(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> Ranking:
        """`search`'s results, and the cosine of any other document for the fusion."""
        query_counts = Counter(self.tokenizer(query))
        with self._lock:
            postings = self._postings
            n_documents = postings.n_alive
            if n_documents == 0 or not query_counts:
                return Ranking([])
            scores = np.zeros(postings.n_slots, dtype=np.float32)
            query_norm = 0.0
            for term, count in query_counts.items():
                entry = postings.term_postings(term)
                if entry is None:
                    continue
                slots, frequencies, document_frequency = entry
                weight = (1.0 + math.log(count)) * math.log(1.0 + n_documents / document_frequency)
                query_norm += weight * weight
                scores[slots] += weight * (1.0 + np.log(frequencies))
            if query_norm == 0.0:
                return Ranking([])
            scores /= postings.log_norms() * math.sqrt(query_norm)
            scores[postings.dead_slots()] = 0.0
            return ranking(scores, postings.documents, postings.slot_of, top_k, filters)

    def search_by_embedding(
        self, embedding: Sequence[float], top_k: int, filters: Mapping[str, Any] | None = None
    ) -> list[SearchResult]:
        """Cosine similarity against every document that carries an embedding of the same size."""
        query = np.asarray(embedding, dtype=np.float32)
        with self._lock:
            candidates = [
                d
                for d in self._postings.documents
                if d is not None and d.embedding is not None and len(d.embedding) == query.size and matches(d, filters)
            ]
        if not candidates or not np.any(query):
            return []
        matrix = np.asarray([d.embedding for d in candidates], dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
        scores = matrix @ query / np.where(norms == 0, 1.0, norms)
        return top_results(scores, candidates, top_k)

    def export_index(self) -> tuple[dict[str, np.ndarray], list[Document | None]]:
        """The inverted index's arrays and its documents in slot order, for a snapshot."""
        with self._lock:
            return self._postings.export(), list(self._postings.documents)

    def load_index(self, arrays: Mapping[str, np.ndarray], documents: Sequence[Document | None]) -> None:
        """Replace everything with a snapshot's index (documents in slot order, None for dead slots)."""
        with self._lock:
            self._postings.load(arrays, documents)

    @property
    def vocabulary(self) -> Vocabulary:
        """The term ids of this index, for the other streams of a session to share."""
        return self._postings.vocabulary

    def ensure_room(self) -> None:
        """Room past the forward postings' end, so the next edits do not move them (`Postings.ensure_room`)."""
        with self._lock:
            self._postings.ensure_room()

    def shared_index(self) -> tuple[Postings, threading.RLock]:
        """The inverted index and its lock, for a BM25 view over the same documents."""
        return self._postings, self._lock

    def size(self) -> int:
        return self._postings.n_alive

    def clear(self) -> None:
        with self._lock:
            self._postings.clear()

    def _terms(self, document: Document, terms: TermTable | None = None) -> list[str] | TermCounts:
        """The document's counts taken out of `terms` (the postings keep them as arrays), else tokenized now."""
        counts = terms.pop(document.id, None) if terms is not None else None
        if counts is not None:
            return counts
        return self.tokenizer(searchable_text(document.content, document.metadata))
