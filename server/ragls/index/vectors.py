"""VectorStream: cosine top-k over a contiguous float32 matrix filled by an embedding provider."""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from ragls.index.embedding import EmbeddingProvider
from ragls.index.ranking import top_results
from ragls.index.tokenize import searchable_text
from ragls.model import Document, SearchResult


class VectorStream:
    """Rows of unit vectors, one per document; removal swaps the last row into the hole."""

    name = "vector"

    def __init__(self, provider: EmbeddingProvider) -> None:
        self.provider = provider
        self._matrix = np.zeros((0, provider.dims), dtype=np.float32)
        self._documents: list[Document] = []
        self._row_of: dict[str, int] = {}
        self._lock = threading.RLock()
        self.embed_calls = 0

    def __len__(self) -> int:
        return len(self._documents)

    def replace_documents(
        self, remove_ids: Collection[str], add: Sequence[Document], terms: object = None
    ) -> list[Document]:
        """Remove then add; documents that carry an embedding of the right size are not re-embedded."""
        vectors = self._vectors_for(add)
        with self._lock:
            removed = [self._remove(i) for i in remove_ids if i in self._row_of]
            for document in add:
                if document.id in self._row_of:
                    self._remove(document.id)
                self._row_of[document.id] = len(self._documents)
                self._documents.append(document)
            if len(add):
                self._matrix = np.vstack([self._matrix, vectors])
            return removed

    def clear(self) -> None:
        with self._lock:
            self._matrix = np.zeros((0, self.provider.dims), dtype=np.float32)
            self._documents.clear()
            self._row_of.clear()

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[SearchResult]:
        self.embed_calls += 1
        query_vector = self.provider.embed([query])[0]
        with self._lock:
            if not self._documents:
                return []
            scores = self._matrix @ query_vector
            return top_results(np.maximum(scores, 0.0), self._documents, top_k, filters)

    def _vectors_for(self, documents: Sequence[Document]) -> np.ndarray:
        vectors = np.zeros((len(documents), self.provider.dims), dtype=np.float32)
        missing = [i for i, d in enumerate(documents) if d.embedding is None or len(d.embedding) != self.provider.dims]
        for i, document in enumerate(documents):
            if i not in missing and document.embedding is not None:
                vectors[i] = document.embedding
        if missing:
            self.embed_calls += 1
            texts = [searchable_text(documents[i].content, documents[i].metadata) for i in missing]
            vectors[missing] = self.provider.embed(texts)
        return vectors

    def _remove(self, document_id: str) -> Document:
        row = self._row_of.pop(document_id)
        last = len(self._documents) - 1
        document = self._documents[row]
        if row != last:
            moved = self._documents[last]
            self._documents[row] = moved
            self._matrix[row] = self._matrix[last]
            self._row_of[moved.id] = row
        self._documents.pop()
        self._matrix = self._matrix[:last]
        return document
