"""Filling a VectorStream's pending vectors in batches: in the background for a server (never blocking
searches), or here and now for a command that has no background to wait for (`ragls index`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import numpy as np

from ragls.embedders.runtime import EmbeddingError, lower_thread_priority
from ragls.errors import RaglsError
from ragls.index.embedding import prepare_provider
from ragls.index.vectors import VectorStream

BATCH_SIZE = 32
log = logging.getLogger(__name__)
T = TypeVar("T")

SaveVectors = Callable[[list[tuple[str, np.ndarray]]], None]
# (embedded, total) documents, after each batch.
CoverageCallback = Callable[[int, int], None]


def embed_pending(
    stream: VectorStream,
    save: SaveVectors | None = None,
    progress: CoverageCallback | None = None,
    batch_size: int = BATCH_SIZE,
) -> None:
    """Load the provider, then embed every pending document on the calling thread, saving each batch.

    A provider's failure is raised as EmbeddingError; the batches before it are kept (and saved).
    """
    try:
        prepare_provider(stream.provider)
        while batch := stream.pending_batch(batch_size):
            _save(save, stream.fill(batch, stream.embed(batch)))
            if progress is not None:
                progress(*stream.coverage())
    except RaglsError:
        raise
    except Exception as exc:  # onnxruntime and HTTP clients raise their own exception types
        raise EmbeddingError(f"embedding with {stream.provider.model} failed ({type(exc).__name__}: {exc})") from exc


class EmbeddingWorker:
    """One daemon thread per session; the embedding itself runs outside every lock."""

    def __init__(self, stream: VectorStream, save: SaveVectors | None = None, batch_size: int = BATCH_SIZE) -> None:
        self.stream = stream
        self.save = save
        self.batch_size = batch_size
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ragls-embed", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the batch in flight (and its save) has finished."""
        self._stop.set()
        self.stream.has_pending.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        # Prepared before this thread lowers its priority: a provider may start threads for searches there.
        self._guarded(partial(prepare_provider, self.stream.provider))
        lower_thread_priority()
        while not self._stop.is_set():
            self.stream.has_pending.wait(timeout=1.0)
            batch = self.stream.pending_batch(self.batch_size)
            if not batch or self._stop.is_set():
                continue
            vectors = self._guarded(partial(self.stream.embed, batch))
            if vectors is None:
                self._stop.wait(5.0)
                continue
            _save(self.save, self.stream.fill(batch, vectors))

    def _guarded(self, work: Callable[[], T]) -> T | None:
        """Run provider work; a broken provider must not take the session down: say so once, keep the error."""
        try:
            result = work()
        except Exception as exc:
            if self.error is None:
                log.warning("embedding failed, dense search is paused: %s", exc)
            self.error = f"{type(exc).__name__}: {exc}"
            return None
        self.error = None
        return result


def _save(save: SaveVectors | None, filled: list[tuple[str, np.ndarray]]) -> None:
    """Vectors that could not be saved are still searchable in this session: say so, carry on."""
    if save is not None:
        try:
            save(filled)
        except Exception as exc:
            log.warning("saving vectors failed: %s", exc)
