"""BM25Stream: Okapi BM25 (k1 1.2, b 0.5) over an incremental inverted index, with query synonyms."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ragls.index.columns import ArraySpace
from ragls.index.knowledge_base import InMemoryKnowledgeBase
from ragls.index.postings import Postings, StagedPostings
from ragls.index.ranking import Ranking, ranking
from ragls.index.tokenize import (
    TermCounts,
    TermTable,
    Tokenizer,
    code_tokens,
    compound_terms,
    expand_query,
    present,
    searchable_text,
)
from ragls.index.vocabulary import Vocabulary
from ragls.model import Document, SearchResult

DocumentText = Callable[[str, Mapping[str, Any]], str]

K1 = 1.2
# Less length normalization than the usual 0.75: chunks now run from a few lines to a whole long function,
# and 0.75 let one-line chunks win on the one query word they hold (0.5 measured best on the NL sets of
# five corpora; docs/benchmarks.md).
B = 0.5


class BM25Stream:
    """Keyword ranking; its generation swap is atomic under its own write lock.

    `text` chooses what of a document is indexed: by default its content, path and symbol;
    the names stream indexes only the symbol and file name, the code stream the content less its comments.
    With `compounds`, adjacent query words glued into one identifier ("one shot" -> `oneshot`) are also
    asked for where the index holds them. A `vocabulary` shared with the knowledge base keeps each term once.
    """

    def __init__(
        self,
        tokenizer: Tokenizer = code_tokens,
        k1: float = K1,
        b: float = B,
        text: DocumentText = searchable_text,
        name: str = "bm25",
        compounds: bool = False,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        self.name = name
        self.compounds = compounds
        self.text = text
        self.tokenizer = tokenizer
        self.k1 = k1
        self.b = b
        self._postings = Postings(vocabulary)
        self._lock = threading.RLock()
        self._owns_postings = True

    @classmethod
    def over(cls, knowledge_base: InMemoryKnowledgeBase, k1: float = K1, b: float = B) -> BM25Stream:
        """A BM25 ranking of the knowledge base's own inverted index (same text, same tokens).

        Both rank the same terms of the same documents, so one index serves both: half the
        indexing work and memory. The view's replace is a no-op; the knowledge base changes it.
        """
        stream = cls(knowledge_base.tokenizer, k1, b)
        stream._postings, stream._lock = knowledge_base.shared_index()
        stream._owns_postings = False
        return stream

    def __len__(self) -> int:
        return self._postings.n_alive

    def add_documents(self, documents: Iterable[Document]) -> None:
        if not self._owns_postings:
            raise TypeError("a BM25 view over a knowledge base changes with it")
        with self._lock:
            for document in documents:
                self._postings.add(document, self._terms(document))
            self._postings.refresh()

    def replace_documents(
        self, remove_ids: Collection[str], add: Sequence[Document], terms: TermTable | None = None
    ) -> list[Document]:
        """Drop then add as one step readers never see half of; returns the documents removed.

        `terms` may carry each added document's term counts, tokenized ahead of time.
        """
        if not self._owns_postings:
            return []
        with self._lock:
            removed = [doc for doc in (self._postings.remove(i) for i in remove_ids) if doc is not None]
            try:
                for document in add:
                    self._postings.add(document, self._terms(document, terms))
            except BaseException:
                for document in add:
                    self._postings.remove(document.id)
                for document in removed:
                    self._postings.add(document, self._terms(document))
                raise
            finally:
                self._postings.refresh()
            return removed

    def staged(self, space: ArraySpace | None = None) -> StagedPostings | None:
        """A copy to change while readers carry on, then install in constant time (`StagedPostings`), its new
        arrays in `space`; None for a view, which its knowledge base's copy changes."""
        return StagedPostings(self._postings, self._lock, self._terms, space) if self._owns_postings else None

    def remove(self, document_id: str) -> bool:
        if not self._owns_postings:
            raise TypeError("a BM25 view over a knowledge base changes with it")
        with self._lock:
            removed = self._postings.remove(document_id) is not None
            self._postings.refresh()
            return removed

    def export_index(self) -> tuple[dict[str, np.ndarray], list[Document | None]]:
        """The inverted index's arrays and its documents in slot order, for a snapshot."""
        with self._lock:
            return self._postings.export(), list(self._postings.documents)

    def ensure_room(self) -> None:
        """Room past the forward postings' end, so the next edits do not move them (`Postings.ensure_room`)."""
        with self._lock:
            self._postings.ensure_room()

    def load_index(
        self, arrays: Mapping[str, np.ndarray], documents: Sequence[Document | None], like: Postings | None = None
    ) -> None:
        """Replace the index with a snapshot's (a view follows its knowledge base instead); `like`: an index over
        the same slots to share the documents with (`Postings.load`)."""
        if self._owns_postings:
            with self._lock:
                self._postings.load(arrays, documents, like)

    def clear(self) -> None:
        if not self._owns_postings:
            return
        with self._lock:
            self._postings.clear()

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        """Documents ranked by BM25 over the query's terms and their synonyms."""
        return self.ranking(query, top_k, filters).results

    def ranking(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> Ranking:
        """`search`'s results, and the BM25 score of any other document for the fusion."""
        terms = expand_query(self.tokenizer(query), self.tokenizer)
        with self._lock:
            postings = self._postings
            if self.compounds:
                held = postings.has_term
                terms.extend(t for t in compound_terms(query, self.tokenizer) if t not in terms and held(t))
            scores = self.scores(terms)
            if scores is None:
                return Ranking([])
            return ranking(scores, postings.documents, postings.slot_of, top_k, filters)

    def scores(self, terms: Sequence[str]) -> np.ndarray | None:
        """BM25 score of every slot for the given (already tokenized) query terms."""
        postings = self._postings
        n_documents = postings.n_alive
        if n_documents == 0 or not terms:
            return None
        normalizer = postings.bm25_normalizer(self.k1, self.b)
        scores = np.zeros(postings.n_slots, dtype=np.float32)
        for term in terms:
            entry = postings.term_postings(term)
            if entry is None:
                continue
            slots, frequencies, document_frequency = entry
            idf = math.log(1.0 + (n_documents - document_frequency + 0.5) / (document_frequency + 0.5))
            scores[slots] += idf * frequencies * (self.k1 + 1.0) / (frequencies + normalizer[slots])
        scores[postings.dead_slots()] = 0.0
        return scores

    def _terms(self, document: Document, terms: TermTable | None = None) -> list[str] | TermCounts:
        """The document's counts of this stream's text taken out of `terms`, else tokenized now."""
        counts = terms.pop(document.id, None) if terms is not None else None
        if counts is not None:
            return present(counts)
        return self.tokenizer(self.text(document.content, document.metadata))
