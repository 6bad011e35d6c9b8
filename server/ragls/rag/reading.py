"""Files read, chunked, tokenized and packed ahead of the indexer in worker processes, in the walk's order.

Reading is most of a first index (Django: 9 of 18 s), it is pure per file, and it parses with tree-sitter
outside the GIL's reach only in another process: with 2 workers on 2 cores the reading phase takes about
half as long. Workers are spawned, not forked, because a server has threads (the event loop, the saver)
whose locks a fork would copy held.

Two rules keep a parallel run indistinguishable from a serial one:
- Results are handed over in the walk's order, so the index, the skip counts and the progress read the same.
- A file is read ahead only while the decoded budget (`maxDecodedBytes`) holds even if every file read so far
  and every file in flight decoded to the most it can (a text file's size in bytes; `maxFileBytes` for a PDF
  or DOCX, whose text is capped there). A breach therefore happens only at a file read in order, as in a
  serial run, and no file after it is read. Past that point files are read inline.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ragls.config import ChunkShape, Limits
from ragls.index.tokenize import ChunkTerms, TermCounts, limit_identifier_cache, tokenizer_for
from ragls.ingest.chunking import ChunkedFile
from ragls.ingest.formats import detect_format
from ragls.ingest.reader import ReadOutcome, read_file
from ragls.model import Document

log = logging.getLogger(__name__)

# Fewer files to read than this are read inline: starting workers costs about a second.
PARALLEL_MIN_FILES = 1000
# Files per task sent to a worker: big enough that the round trip is small against the work.
BATCH_FILES = 32
# Tasks in flight per worker: enough to keep each busy, few enough to bound the memory of results waiting.
TASKS_PER_WORKER = 4
# Split identifiers a worker keeps (a session keeps 500,000): on Django the two workers then peak at 52 MB each
# instead of 63-71 MB, the whole process tree at 254 MB instead of 281 MB, in the same time; with none kept the
# read takes twice as long.
WORKER_IDENTIFIER_CACHE = 20_000
MAX_WORKERS = 8
# How often a worker looks whether the process that started it is still there.
PARENT_POLL_SECONDS = 1.0


@dataclass(frozen=True)
class PlannedRead:
    """A file the run will read: its size in bytes, and the fingerprint it had."""

    rel_path: str
    size: int
    previous_fingerprint: str | None


@dataclass(frozen=True)
class Read:
    """One file read: the outcome, its chunks as documents (packed where they were read), and each document's
    term counts per stream (tokenized there too). The outcome's `chunked` keeps the symbols; its chunks were
    dropped once they became documents, so that a worker's result carries each text once, packed."""

    outcome: ReadOutcome
    documents: tuple[Document, ...] = ()
    terms: tuple[ChunkTerms, ...] = ()


def read_workers() -> int:
    """Worker processes for a big run: one per core, at most 8; 1 means read inline."""
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def read_and_tokenize(
    root: Path, rel_path: str, limits: Limits, shape: ChunkShape, previous: str | None, tokenizer_name: str
) -> Read:
    """What the indexer needs of one file: it is the same work inline and in a worker."""
    outcome = read_file(root / rel_path, rel_path, limits, shape, previous, root)
    chunked = outcome.chunked
    if chunked is None:
        return Read(outcome)
    tokenizer = tokenizer_for(tokenizer_name)
    terms = []
    documents = []
    for chunk in chunked.chunks:
        metadata = chunk.metadata()
        terms.append(ChunkTerms.of(chunk.content, metadata, tokenizer))
        documents.append(Document(chunk.id, chunk.content, metadata))
    without_chunks = replace(outcome, chunked=ChunkedFile([], chunked.symbols))
    return Read(without_chunks, tuple(documents), tuple(terms))


def _interned(read: Read) -> Read:
    """A read from a worker with its terms interned here, as the tokenizer interns them in this process: the
    staged counts of every chunk of a big first index then share one string per term."""
    if not read.terms:
        return read
    return Read(read.outcome, read.documents, tuple(map(_interned_terms, read.terms)))


def _interned_terms(terms: ChunkTerms) -> ChunkTerms:
    every = _interned_counts(terms.all)
    if terms.code is terms.all:
        code = every
    elif terms.code.terms is terms.all.terms:  # counts within the first (`counts_within`): they share its terms
        code = TermCounts(every.terms, terms.code.counts)
    else:
        code = _interned_counts(terms.code)
    return ChunkTerms(every, _interned_counts(terms.names), code)


def _interned_counts(counts: TermCounts) -> TermCounts:
    return TermCounts(tuple(map(sys.intern, counts.terms)), counts.counts)


def _worker_started(parent: int) -> None:
    """A worker's stdout is the server's protocol stream: anything printed there goes to stderr instead. And a
    worker ends with the process that started it, even one killed with SIGKILL, which cannot stop its pool."""
    os.dup2(2, 1)
    limit_identifier_cache(WORKER_IDENTIFIER_CACHE)
    threading.Thread(target=_exit_with, args=(parent,), name="ragls-reader-parent", daemon=True).start()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(0)


def _read_batch(
    root: Path, batch: list[tuple[str, str | None]], limits: Limits, shape: ChunkShape, tokenizer_name: str
) -> list[Read]:
    return [read_and_tokenize(root, rel, limits, shape, previous, tokenizer_name) for rel, previous in batch]


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Workers that do not run the caller's main module again.

    A spawned worker imports the parent's `__main__` script (or `-m` module) before its first task, which runs
    a script's top level again unless it has multiprocessing's `if __name__ == "__main__":` guard: a script that
    embeds a RagService would index a second time in every worker. The workers need nothing of it (tasks name
    only this module's functions), so it is hidden while they start: multiprocessing then leaves it alone.
    """
    main = sys.modules["__main__"]
    saved: dict[str, object] = {name: main.__dict__[name] for name in ("__spec__", "__file__") if name in main.__dict__}
    main.__dict__["__spec__"] = None
    main.__dict__.pop("__file__", None)
    try:
        yield
    finally:
        main.__dict__.update(saved)
        if "__spec__" not in saved:
            main.__dict__.pop("__spec__", None)


class ReadAhead:
    """Reads planned files in worker processes and hands each one over, in order, when the indexer asks."""

    def __init__(
        self,
        root: Path,
        limits: Limits,
        shape: ChunkShape,
        tokenizer_name: str,
        plan: Sequence[PlannedRead],
        budget_used: int,
        workers: int,
    ) -> None:
        self.root = root
        self.limits = limits
        self.shape = shape
        self.tokenizer_name = tokenizer_name
        self._ready: dict[str, Read] = {}
        self._tasks: deque[tuple[list[str], Future[list[Read]]]] = deque()
        self._queued = deque(self._within_budget(plan, budget_used))
        self._pool: ProcessPoolExecutor | None = None
        if self._queued and workers > 1:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                max_workers=workers, mp_context=context, initializer=_worker_started, initargs=(os.getpid(),)
            )
            self._max_tasks = workers * TASKS_PER_WORKER
            with _main_module_hidden():  # every worker starts here, with the first tasks
                self._submit()

    @property
    def parallel(self) -> bool:
        return self._pool is not None

    def read(self, rel_path: str, previous: str | None) -> Read:
        """The file's read: from the workers when it was read ahead, else now, here."""
        if rel_path not in self._ready and self._tasks and rel_path in self._tasks[0][0]:
            self._collect()
        found = self._ready.pop(rel_path, None)
        if found is not None:
            return found
        return read_and_tokenize(self.root, rel_path, self.limits, self.shape, previous, self.tokenizer_name)

    def close(self) -> None:
        """Stop the workers; reads still queued or in flight are dropped."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._tasks.clear()
        self._queued.clear()
        self._ready.clear()

    def _within_budget(self, plan: Sequence[PlannedRead], budget_used: int) -> list[PlannedRead]:
        """The plan's first files up to the first one that could, at the most it can decode to, cross the budget.

        A text file decodes to at most one character a byte, a document (PDF, DOCX) to at most `maxFileBytes`
        characters whatever its size, and a file over `maxFileBytes` to nothing (it is skipped unread).
        """
        taken: list[PlannedRead] = []
        max_file_bytes = self.limits.max_file_bytes
        for planned in plan:
            file_format = detect_format(planned.rel_path)
            if planned.size > max_file_bytes:
                most = 0
            elif file_format is not None and file_format.family == "document":
                most = max_file_bytes
            else:
                most = planned.size
            budget_used += most
            if budget_used > self.limits.max_decoded_bytes:
                break
            taken.append(planned)
        return taken

    def _submit(self) -> None:
        assert self._pool is not None
        while self._queued and len(self._tasks) < self._max_tasks:
            batch = [self._queued.popleft() for _ in range(min(BATCH_FILES, len(self._queued)))]
            names = [planned.rel_path for planned in batch]
            pairs = [(planned.rel_path, planned.previous_fingerprint) for planned in batch]
            future = self._pool.submit(_read_batch, self.root, pairs, self.limits, self.shape, self.tokenizer_name)
            self._tasks.append((names, future))

    def _collect(self) -> None:
        """Wait for the oldest task and keep its reads; a broken pool leaves the rest to inline reading."""
        names, future = self._tasks.popleft()
        try:
            self._ready.update(zip(names, map(_interned, future.result()), strict=True))
        except Exception as exc:  # a broken pool, not a file (read_file never raises): read the rest here
            log.warning("reading in worker processes failed (%s); reading the remaining files here", exc)
            self.close()
            return
        if self._pool is not None:
            self._submit()
