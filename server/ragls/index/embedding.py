"""Embedding providers: the protocol a vector stream needs, and a deterministic hashing provider for tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ragls.index.tokenize import code_tokens


class EmbeddingProvider(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed size."""

    model: str
    dims: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class LoadsLazily(Protocol):
    """A provider whose first embed would be slow (a model to load or build); the background embedder calls
    `prepare` before anything else, and the dense stream waits for `ready` instead of making a search wait."""

    ready: bool

    def prepare(self) -> None: ...


@runtime_checkable
class EmbedsQueries(Protocol):
    """A provider with a faster way to embed one query than its background batches (a session of its own)."""

    def embed_query(self, text: str) -> np.ndarray: ...


def embed_query(provider: EmbeddingProvider, query: str) -> np.ndarray:
    if isinstance(provider, EmbedsQueries):
        return np.asarray(provider.embed_query(query), dtype=np.float32)
    return np.asarray(provider.embed([query])[0], dtype=np.float32)


def provider_ready(provider: EmbeddingProvider) -> bool:
    return provider.ready if isinstance(provider, LoadsLazily) else True


def prepare_provider(provider: EmbeddingProvider) -> None:
    if isinstance(provider, LoadsLazily):
        provider.prepare()


class HashingEmbedding:
    """Feature hashing of code tokens: no model, deterministic; for tests and as a plumbing check."""

    def __init__(self, dims: int = 256) -> None:
        self.model = f"hashing-{dims}"
        self.dims = dims

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in code_tokens(text):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                matrix[row, value % self.dims] += 1.0 if value & (1 << 63) else -1.0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)
