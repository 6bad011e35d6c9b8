"""The one place that swaps generations: every store changes together, or none does.

Searches hold the read side of a readers-writer lock for their whole duration, so a
search never sees the BM25 stream of one generation and the knowledge base of another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from ragls.index.bm25 import BM25Stream
from ragls.index.columns import ArraySpace
from ragls.index.knowledge_base import InMemoryKnowledgeBase
from ragls.index.postings import StagedPostings, same_documents
from ragls.index.symbols import SymbolIndex
from ragls.index.tokenize import TermCounts, TermTable
from ragls.index.vectors import VectorStream
from ragls.model import Document, Symbol
from ragls.rag.spill import SPILL_SUPPORTED, MappedArrays, SpillFile


class ReadWriteLock:
    """Many readers or one writer; a waiting writer blocks new readers so it is not starved."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._condition:
            while self._writer or self._writers_waiting:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._condition:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._condition.wait()
            self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._condition:
                self._writer = False
                self._condition.notify_all()


@dataclass(frozen=True)
class FileRecord:
    """What the current generation holds for one file; never changed in place (nor its `chunk_ids`), so a
    snapshot's image shares the records instead of copying 86,000 of them under the index lock."""

    fingerprint: str
    stat_key: tuple[int, int, int] | None
    chunk_ids: list[str]
    decoded_chars: int
    n_symbols: int = 0


class SkippedFile(NamedTuple):
    """A file left out for its content, and the stat key it had then."""

    stat_key: tuple[int, int, int]
    reason: str


@dataclass
class Delta:
    """A staged change: documents and symbols to drop and add, and the file table's new rows."""

    remove_ids: list[str] = field(default_factory=list)
    add: list[Document] = field(default_factory=list)
    removed_files: list[str] = field(default_factory=list)
    records: dict[str, FileRecord] = field(default_factory=dict)
    symbols: list[Symbol] = field(default_factory=list)
    symbol_files: list[str] = field(default_factory=list)
    # Term counts by document id, tokenized where each file was read: of the documents' `searchable_text` (the
    # knowledge base's), their names and their code (the code stream's, in `counts_within` form).
    terms: dict[str, TermCounts] = field(default_factory=dict)
    name_terms: dict[str, TermCounts] = field(default_factory=dict)
    code_terms: dict[str, TermCounts] = field(default_factory=dict)
    # Files skipped for what they hold (binary, undecodable), by stat key, so an unchanged one is not read
    # again; None forgets one (it changed, became indexable or is gone).
    skipped: dict[str, SkippedFile | None] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.remove_ids or self.add or self.removed_files or self.records or self.skipped)


@dataclass
class GenerationImage:
    """A generation as flat arrays and plain values, what a snapshot file holds.

    `documents` are the live documents in the knowledge base's slot order; each index maps
    its slots to positions in that list (-1 for a dead slot).
    """

    generation: int
    committed_at: str | None
    documents: list[Document]
    index: dict[str, np.ndarray]
    index_slots: np.ndarray
    names: dict[str, np.ndarray] | None
    names_slots: np.ndarray | None
    files: dict[str, FileRecord]
    # Columns where a snapshot holds them (`SymbolColumns`); each file's as they were in a session's (`captured`).
    symbols: Sequence[Symbol]
    code: dict[str, np.ndarray] | None = None
    code_slots: np.ndarray | None = None

    def as_delta(self) -> Delta:
        """A delta that writes this generation into an empty store (its documents, files and symbols), with nothing
        read again: the rows behind a snapshot found damaged, or a shared snapshot's rows in a reader's own store."""
        return Delta(
            add=list(self.documents),
            records=dict(self.files),
            symbols=list(self.symbols),
            symbol_files=list(self.files),
        )


class DocumentStore(Protocol):
    """What a generation swap needs of a store: an atomic replace that returns what it removed."""

    def replace_documents(
        self, remove_ids: Collection[str], add: Sequence[Document], terms: TermTable | None = None
    ) -> list[Document]: ...
    def clear(self) -> None: ...


@runtime_checkable
class StagingStore(Protocol):
    """A store that can build a change on a copy, readers carrying on, and install it in constant time."""

    def staged(self, space: ArraySpace | None = None) -> StagedPostings | None: ...


# A delta touching this many documents (a full reindex, a branch switch) is built on copies of the
# indexes outside the write lock, so searches wait for a swap instead of the whole change (Django's full
# reindex: 1.8 s of blocked searches before). Smaller ones change the indexes in place: copying costs more.
STAGE_MIN_DOCUMENTS = 2000


class StagedChange:
    """A delta on its way to a commit, built into copies of the stores as it grows once it is large.

    From STAGE_MIN_DOCUMENTS documents on, each `catch_up` (a full run calls it after every file) hands what the
    delta gained since to the copies: a run's term counts are indexed as its files are read, and taken out of the
    delta, instead of all being held until the commit (on the Linux kernel, about 2 GB of tuples at once). The
    caller serializes changes from the first `catch_up` to the commit, so the copies stay those of the stores.
    """

    def __init__(self, state: IndexState, delta: Delta | None = None) -> None:
        self.delta = delta if delta is not None else Delta()
        self._state = state
        self._staged: list[tuple[DocumentStore, StagedPostings]] | None = None
        self._spill: SpillFile | None = None
        self._removed = self._added = 0

    def catch_up(self) -> None:
        delta = self.delta
        if self._staged is None:
            if len(delta.add) + len(delta.remove_ids) < STAGE_MIN_DOCUMENTS:
                return
            space = None
            if self._state.spill_directory is not None and SPILL_SUPPORTED:
                self._spill = SpillFile(self._state.spill_directory)
                space = MappedArrays(self._state.spill_directory)
            stores = [store for store in self._state.stores if isinstance(store, StagingStore)]
            copies = [(store, store.staged(space)) for store in stores]
            self._staged = [(store, copy) for store, copy in copies if copy is not None]
        if self._removed == len(delta.remove_ids) and self._added == len(delta.add):
            return
        tables = self._state.term_tables(delta)
        remove_ids, add = delta.remove_ids[self._removed :], delta.add[self._added :]
        if self._spill is not None:  # before the copies see them: every store holds the same spilled documents
            add = delta.add[self._added :] = self._spill.spilled(add)
        for store, copy in self._staged:
            copy.replace(remove_ids, add, tables.get(id(store)))
        self._removed, self._added = len(delta.remove_ids), len(delta.add)

    def finish(self) -> list[tuple[DocumentStore, StagedPostings]]:
        """Hand the copies the rest of the delta and count and sort them (readers carrying on): the copies, to
        install; none for a delta small enough to change the stores in place."""
        self.catch_up()
        for _, copy in self._staged or ():
            copy.finish()
        return self._staged or []


class IndexState:
    """The stores of one session and the file table, changed only through `commit`."""

    def __init__(
        self,
        knowledge_base: InMemoryKnowledgeBase,
        bm25: BM25Stream,
        names: BM25Stream | None = None,
        vectors: VectorStream | None = None,
        code: BM25Stream | None = None,
    ) -> None:
        self.knowledge_base = knowledge_base
        self.bm25 = bm25
        self.names = names
        self.vectors = vectors
        self.code = code
        self.stores: list[DocumentStore] = [s for s in (knowledge_base, bm25, names, code, vectors) if s is not None]
        self.symbols = SymbolIndex()
        self._files: dict[str, FileRecord] = {}
        self.decoded_chars = 0  # the sum over `files`, kept as they change: an edit's limit check is not O(files)
        self.skipped_files: dict[str, SkippedFile] = {}
        self.generation = 0
        self.last_committed_at: str | None = None
        self.lock = ReadWriteLock()
        # Where a large change's documents wait on disk as it is staged (`SpillFile`); None keeps them in memory.
        self.spill_directory: Path | None = None

    @property
    def files(self) -> dict[str, FileRecord]:
        """The file table: path -> what its chunks were made from. Changed by `commit`, `install` and `clear`;
        a caller that sets a table of its own (a publish's plan) sets the whole of it."""
        return self._files

    @files.setter
    def files(self, files: dict[str, FileRecord]) -> None:
        self._files = files
        self.decoded_chars = sum(record.decoded_chars for record in files.values())

    def commit(self, change: Delta | StagedChange, count_generation: bool = True) -> None:
        """Apply a delta to every store atomically; on failure, undo what was applied and re-raise.

        Callers serialize commits (the service's index lock): staging reads the stores unlocked.
        """
        if isinstance(change, Delta):
            change = StagedChange(self, change)
        delta = change.delta
        staged = change.finish()
        staged_stores = [store for store, _ in staged]
        terms = self.term_tables(delta)
        with self.lock.writing():
            applied: list[tuple[DocumentStore, list[Document]]] = []
            try:
                for store in self.stores:
                    if store not in staged_stores:
                        removed = store.replace_documents(delta.remove_ids, delta.add, terms.get(id(store)))
                        applied.append((store, removed))
            except BaseException:
                # Each store undoes its own failed replace; undo the ones that had succeeded.
                added_ids = [d.id for d in delta.add]
                for store, removed in reversed(applied):
                    store.replace_documents(added_ids, removed)
                raise
            for _, copy in staged:
                copy.install()
            self.symbols.replace_files([*delta.removed_files, *delta.symbol_files], delta.symbols)
            for file in delta.removed_files:
                self._forget_file(file)
            for file, record in delta.records.items():
                self._forget_file(file)
                self._files[file] = record
                self.decoded_chars += record.decoded_chars
            for file, skipped in delta.skipped.items():
                if skipped is None:
                    self.skipped_files.pop(file, None)
                else:
                    self.skipped_files[file] = skipped
            if count_generation:
                self.generation += 1
                self.last_committed_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def term_tables(self, delta: Delta) -> dict[int, TermTable]:
        """Which of the delta's term tables each store indexes from (by the store's id); others tokenize."""
        tables: dict[int, TermTable] = {id(self.knowledge_base): delta.terms}
        if self.names is not None:
            tables[id(self.names)] = delta.name_terms
        if self.code is not None:
            tables[id(self.code)] = delta.code_terms
        return tables

    def restore(self, delta: Delta, generation: int, committed_at: str | None) -> None:
        """Load a stored generation as it was, number and time included."""
        self.commit(delta, count_generation=False)
        with self.lock.writing():
            self.generation = generation
            self.last_committed_at = committed_at

    def ensure_room(self) -> None:
        """Give every stream's forward postings room for the coming edits (after a load that mapped them); the
        caller serializes writers, and readers never use these columns."""
        for stream in (self.knowledge_base, self.names, self.code):
            if stream is not None:
                stream.ensure_room()

    def image(self) -> GenerationImage:
        """Copy the current generation out as arrays (readers carry on meanwhile)."""
        with self.lock.reading():
            index, slot_documents = self.knowledge_base.export_index()
            documents = [d for d in slot_documents if d is not None]
            positions = _Positions(slot_documents, documents, index["alive"])
            names, names_slots = _export(self.names, positions)
            code, code_slots = _export(self.code, positions)
            return GenerationImage(
                self.generation,
                self.last_committed_at,
                documents,
                index,
                positions.of_knowledge_base,
                names,
                names_slots,
                dict(self.files),
                self.symbols.captured(),
                code,
                code_slots,
            )

    def install(
        self, image: GenerationImage, loaded_arrays: Callable[[Mapping[str, np.ndarray]], None] | None = None
    ) -> None:
        """Make a saved image the current generation, number and time included; `loaded_arrays` is told of each
        index's arrays once that index has loaded them (a snapshot's install lets go of the pages it read)."""
        documents = image.documents
        done = loaded_arrays or (lambda arrays: None)
        with self.lock.writing():
            in_slots = _at(documents, image.index_slots)
            self.knowledge_base.load_index(image.index, in_slots)
            done(image.index)
            loaded = self.knowledge_base.shared_index()[0]
            for stream, arrays, slots in (
                (self.names, image.names, image.names_slots),
                (self.code, image.code, image.code_slots),
            ):
                if stream is None:
                    continue
                if arrays is not None and slots is not None:
                    same = np.array_equal(slots, image.index_slots)  # the usual case: every commit changes all alike
                    stream.load_index(arrays, in_slots if same else _at(documents, slots), loaded)
                    done(arrays)
                else:  # a snapshot written without this stream: index its documents again
                    stream.clear()
                    stream.replace_documents((), documents)
            if self.vectors is not None:
                self.vectors.clear()
                self.vectors.replace_documents((), documents)
            self.symbols.load(image.symbols)
            self.files = dict(image.files)
            self.generation = image.generation
            self.last_committed_at = image.committed_at

    def _forget_file(self, file: str) -> None:
        record = self._files.pop(file, None)
        if record is not None:
            self.decoded_chars -= record.decoded_chars

    def clear(self) -> None:
        with self.lock.writing():
            for store in self.stores:
                store.clear()
            self.symbols.clear()
            self.files = {}
            self.skipped_files.clear()
            self.generation = 0
            self.last_committed_at = None

    def chunk_count(self) -> int:
        return sum(len(record.chunk_ids) for record in self.files.values())


def _export(stream: BM25Stream | None, positions: _Positions) -> tuple[dict[str, np.ndarray] | None, np.ndarray | None]:
    """A stream's own index and its slots as positions in the image's documents (None without the stream)."""
    if stream is None:
        return None, None
    arrays, slot_documents = stream.export_index()
    return arrays, positions.of(slot_documents)


class _Positions:
    """Where each slot of a stream is in the image's documents (the knowledge base's live ones, in slot order).

    The snapshot is captured under the index lock, so edits wait for it: the knowledge base's positions are
    counted from its liveness flags, and a stream whose slots hold the very same documents (the usual case:
    every commit changes all streams alike) takes them as they are, with no lookup by id (on the Linux kernel's
    865,000 chunks, 2.9 s of the capture's 4.2-5.8 s).
    """

    def __init__(
        self, slot_documents: Sequence[Document | None], documents: Sequence[Document], alive: np.ndarray
    ) -> None:
        self._slot_documents = slot_documents
        self._documents = documents
        live = np.asarray(alive, dtype=bool)
        positions = np.cumsum(live, dtype=np.int64) - 1
        positions[~live] = -1
        self.of_knowledge_base = positions.astype(np.int32)
        self._by_id: dict[str, int] | None = None

    def of(self, slot_documents: Sequence[Document | None]) -> np.ndarray:
        if same_documents(slot_documents, self._slot_documents):
            return self.of_knowledge_base.copy()
        if self._by_id is None:
            self._by_id = {d.id: i for i, d in enumerate(self._documents)}
        by_id = self._by_id
        return np.fromiter(
            (by_id[d.id] if d is not None else -1 for d in slot_documents), dtype=np.int32, count=len(slot_documents)
        )


def _at(documents: list[Document], positions: np.ndarray) -> list[Document | None]:
    if len(positions) and (positions.max() >= len(documents) or positions.min() < -1):
        raise ValueError("a saved index refers to documents that are not there")
    return [documents[i] if i >= 0 else None for i in positions.tolist()]
