"""VectorStream: cosine top-k over a contiguous float32 matrix filled by an embedding provider.

Embedding is slow (a small model on a laptop CPU does tens of chunks a second), so in background
mode new documents wait in `pending` and a worker fills their vectors later; vectors are reused
by content hash across generations, restarts and branch switches. Each vector is held once: in a
row while a document has it, in `cache` (by content hash) otherwise.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ragls.index.embedding import EmbeddingProvider, embed_query, provider_ready
from ragls.index.ranking import Ranking, ranking
from ragls.index.tokenize import searchable_text
from ragls.model import Document, SearchResult


def content_hash(document: Document) -> str:
    """The key a vector is reused under: what gets embedded, not where it lives."""
    text = searchable_text(document.content, document.metadata)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


RECENT_QUERIES = 256
MIN_CAPACITY = 64
# From this many rows a second thread scores half of the matrix (one product is memory-bound; measured on
# 2 cores: 38,403 rows 5.6 -> 3.5 ms, 8,000 rows 0.61 -> 0.39 ms, 1,231 rows 0.07 -> 0.14 ms).
SPLIT_ROWS = 4096


class VectorStream:
    """Rows of unit vectors, one per embedded document; removal swaps the last row into the hole."""

    name = "vector"

    def __init__(self, provider: EmbeddingProvider, background: bool = False) -> None:
        self.provider = provider
        self.background = background
        self._rows = np.zeros((0, provider.dims), dtype=np.float32)
        self._documents: list[Document] = []
        self._hashes: list[str] = []  # the content hash of each row's document
        self._row_of: dict[str, int] = {}
        self._rows_of_hash: dict[str, list[int]] = {}
        self._pending: dict[str, Document] = {}
        self.cache: dict[str, np.ndarray] = {}  # vectors no row holds: removed documents, stored generations
        self._recent_queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.RLock()
        self.has_pending = threading.Event()
        self.embed_calls = 0

    def __len__(self) -> int:
        return len(self._documents)

    def coverage(self) -> tuple[int, int]:
        """(embedded, total) documents."""
        with self._lock:
            return len(self._documents), len(self._documents) + len(self._pending)

    @property
    def complete(self) -> bool:
        """Every document has its vector, and a query can be embedded without loading a model first."""
        with self._lock:
            return not self._pending and provider_ready(self.provider)

    def replace_documents(
        self, remove_ids: Collection[str], add: Sequence[Document], terms: object = None
    ) -> list[Document]:
        """Remove then add; cached or carried vectors are used at once, others wait or are embedded now."""
        keys = [content_hash(document) for document in add]
        if not self.background:
            missing: dict[str, Document] = {}  # by content: copies are embedded once
            with self._lock:
                for document, key in zip(add, keys, strict=True):
                    if key not in missing and self._known_vector(document, key) is None:
                        missing[key] = document
            self._embed_into_cache(missing)
        with self._lock:
            removed = [self._remove(i) for i in remove_ids if i in self._row_of]
            for document_id in remove_ids:
                self._pending.pop(document_id, None)
            self._reserve(len(self._documents) + len(add))
            for document, key in zip(add, keys, strict=True):
                if document.id in self._row_of:
                    self._remove(document.id)
                vector = self._known_vector(document, key)
                if vector is None:
                    self._pending[document.id] = document
                else:
                    self._append(document, vector, key)
            if self._pending:
                self.has_pending.set()
            return removed

    def pending_batch(self, size: int) -> list[Document]:
        with self._lock:
            batch = []
            for document in self._pending.values():
                batch.append(document)
                if len(batch) == size:
                    break
            if not batch:
                self.has_pending.clear()
            return batch

    def fill(self, documents: Sequence[Document], vectors: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Store vectors computed in the background; those of documents removed meanwhile are only cached."""
        filled = []
        with self._lock:
            for document, vector in zip(documents, vectors, strict=True):
                key = content_hash(document)
                filled.append((key, vector))
                if self._pending.get(document.id) is document:
                    del self._pending[document.id]
                    self._append(document, vector, key)
                elif key not in self._rows_of_hash:
                    self.cache[key] = vector
        return filled

    def pending_ids(self) -> set[str]:
        with self._lock:
            return set(self._pending)

    def fill_by_id(self, vectors: Mapping[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        """Give pending documents vectors computed elsewhere (a shared index's), by document id; ids no longer
        pending are passed over. Returns what was filled, by content hash, for the store."""
        with self._lock:
            documents = [self._pending[i] for i in vectors if i in self._pending]
        if not documents:
            return []
        return self.fill(documents, np.asarray([vectors[d.id] for d in documents], dtype=np.float32))

    def embed(self, documents: Sequence[Document]) -> np.ndarray:
        """Vectors for documents (no locks held: this is the slow part)."""
        self.embed_calls += 1
        texts = [searchable_text(d.content, d.metadata) for d in documents]
        return np.asarray(self.provider.embed(texts), dtype=np.float32)

    def known_vectors(self) -> list[tuple[str, np.ndarray]]:
        """Every vector held, by content hash (the rows' copied), to write into a store made again."""
        with self._lock:
            held = [(key, self._rows[rows[0]].copy()) for key, rows in self._rows_of_hash.items()]
            return [*self.cache.items(), *held]

    def clear(self) -> None:
        """Forget every document; their vectors move to the cache, for the documents of a rebuild."""
        with self._lock:
            for key, rows in self._rows_of_hash.items():
                self.cache[key] = self._rows[rows[0]].copy()
            self._rows = np.zeros((0, self.provider.dims), dtype=np.float32)
            self._documents.clear()
            self._hashes.clear()
            self._row_of.clear()
            self._rows_of_hash.clear()
            self._pending.clear()

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        return self.ranking(query, top_k, filters).results

    def ranking(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> Ranking:
        """`search`'s results, and the clipped cosine of any other embedded document for the fusion."""
        query_vector = self._query_vector(query)
        with self._lock:
            if not self._documents:
                return Ranking([])
            scores = _scores(self._rows[: len(self._documents)], query_vector)
            return ranking(np.maximum(scores, 0.0), self._documents, self._row_of, top_k, filters)

    def _query_vector(self, query: str) -> np.ndarray:
        """Embedding a query is most of a dense search; editors ask the same one again (a search, then its
        context prompt), so recent ones are kept."""
        with self._lock:
            vector = self._recent_queries.get(query)
            if vector is not None:
                self._recent_queries.move_to_end(query)
                return vector
        vector = embed_query(self.provider, query)
        with self._lock:
            self._recent_queries[query] = vector
            if len(self._recent_queries) > RECENT_QUERIES:
                self._recent_queries.popitem(last=False)
        return vector

    def _known_vector(self, document: Document, key: str) -> np.ndarray | None:
        if document.embedding is not None and len(document.embedding) == self.provider.dims:
            return np.asarray(document.embedding, dtype=np.float32)
        rows = self._rows_of_hash.get(key)
        if rows:
            return self._rows[rows[0]]
        return self.cache.get(key)

    def _embed_into_cache(self, documents: Mapping[str, Document]) -> None:
        """Embed documents given by content hash, now, into the cache."""
        if documents:
            self.cache.update(zip(documents.keys(), self.embed(list(documents.values())), strict=True))

    def _reserve(self, rows: int) -> None:
        """Room for `rows` rows: exactly, for a bulk add, else a quarter more (amortized O(1) appends,
        at most a fifth of the matrix unused)."""
        if rows > len(self._rows):
            capacity = max(rows, len(self._rows) + len(self._rows) // 4, MIN_CAPACITY)
            grown = np.zeros((capacity, self.provider.dims), dtype=np.float32)
            grown[: len(self._documents)] = self._rows[: len(self._documents)]
            self._rows = grown

    def _append(self, document: Document, vector: np.ndarray, key: str) -> None:
        row = len(self._documents)
        self._reserve(row + 1)
        self._rows[row] = vector
        self._row_of[document.id] = row
        self._documents.append(document)
        self._hashes.append(key)
        self._rows_of_hash.setdefault(key, []).append(row)
        self.cache.pop(key, None)  # the row holds it now

    def _remove(self, document_id: str) -> Document:
        row = self._row_of.pop(document_id)
        last = len(self._documents) - 1
        document = self._documents[row]
        key = self._hashes[row]
        rows = self._rows_of_hash[key]
        rows.remove(row)
        if not rows:  # no other document has this content: keep the vector for when it comes back
            del self._rows_of_hash[key]
            self.cache[key] = self._rows[row].copy()
        if row != last:
            moved = self._documents[last]
            moved_key = self._hashes[last]
            self._documents[row] = moved
            self._hashes[row] = moved_key
            self._rows[row] = self._rows[last]
            self._row_of[moved.id] = row
            moved_rows = self._rows_of_hash[moved_key]
            moved_rows[moved_rows.index(last)] = row
        self._documents.pop()
        self._hashes.pop()
        return document


def _scores(rows: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
    """rows @ query_vector; large matrices in two halves on two threads (NumPy lets go of the GIL)."""
    if len(rows) < SPLIT_ROWS or (os.cpu_count() or 1) < 2:
        return rows @ query_vector
    half = len(rows) // 2
    head = _scoring_thread().submit(np.dot, rows[:half], query_vector)
    tail = rows[half:] @ query_vector
    return np.concatenate([head.result(), tail])


@functools.cache
def _scoring_thread() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="ragls-vectors")
