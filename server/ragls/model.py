"""Plain value types shared by every layer: documents, chunks, symbols, progress and status."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from ragls.packing import PackedText, pack, unpack


def _frozen(metadata: Mapping[str, Any] | None) -> MappingProxyType[str, Any]:
    return MappingProxyType(dict(metadata or {}))


class Document:
    """An immutable unit of searchable text; equality is by id alone, as in the knowledge-base contract.

    The text is held packed (`ragls.packing`: compressed unless that would not make it smaller) and unpacked
    at each read of `content`: an index holds every chunk's text and reads only the few a search returns.
    """

    __slots__ = ("_metadata", "_packed", "embedding", "id")
    id: str
    _packed: PackedText
    _metadata: Mapping[str, Any]
    embedding: tuple[float, ...] | None

    def __init__(
        self,
        id: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        embedding: tuple[float, ...] | None = None,
    ) -> None:
        if not isinstance(content, str) or not content or content.isspace():
            raise ValueError("Document content must be a non-empty string")
        self._set(id, pack(content), _frozen(metadata), embedding)

    @classmethod
    def from_packed(
        cls,
        id: str,
        packed: PackedText,
        metadata: Mapping[str, Any] | None = None,
        embedding: tuple[float, ...] | None = None,
    ) -> Document:
        """A document of text packed before (by a reading worker, or as the store and snapshot keep it).

        Packed bytes are not unpacked to check them: they were packed from a document's checked content.
        """
        if isinstance(packed, str):
            return cls(id, packed, metadata, embedding)
        if not isinstance(packed, bytes) or not packed:
            raise ValueError("Document content must be a non-empty string")
        document = cls.__new__(cls)
        document._set(id, packed, _frozen(metadata), embedding)
        return document

    @classmethod
    def loaded(cls, id: str, packed: bytes, metadata: dict[str, Any]) -> Document:
        """A document as a store or snapshot saved it: packed bytes and a metadata dict that the caller hands
        over (it is not copied). A restart makes 865,000 of these on the Linux kernel, a third faster so."""
        if not isinstance(packed, bytes) or not packed:
            raise ValueError("a saved document has no text")
        document = cls.__new__(cls)
        document._set(id, packed, MappingProxyType(metadata), None)
        return document

    @classmethod
    def of(cls, content: str, metadata: Mapping[str, Any] | None = None, id: str | None = None) -> Document:
        """Build a document, generating a UUID when no id is given."""
        return cls(id=id or str(uuid.uuid4()), content=content, metadata=metadata)

    @property
    def content(self) -> str:
        return unpack(self._packed)

    @property
    def packed_content(self) -> PackedText:
        """The text as it is held: what the store and the snapshot write."""
        return self._packed

    @property
    def metadata(self) -> Mapping[str, Any]:
        return self._metadata

    def metadata_json(self) -> str:
        """The metadata as compact JSON, what the store and the snapshot write (a saved document's own bytes)."""
        return json.dumps(dict(self._metadata), separators=(",", ":"))

    def passing_metadata(self) -> Mapping[str, Any]:
        """The metadata for a writer that visits every document once: a saved document parses it without
        keeping the parse, so a save of every document does not bring every document's metadata into memory."""
        return self._metadata

    def with_embedding(self, embedding: tuple[float, ...]) -> Document:
        """A copy carrying an embedding; documents never change in place."""
        return Document.from_packed(self.id, self.packed_content, self.metadata, tuple(embedding))

    def _set(
        self, id: str, packed: PackedText, metadata: MappingProxyType[str, Any], embedding: tuple[float, ...] | None
    ) -> None:
        """Every field at once; `metadata` is already frozen (a copy, or a dict handed over by `loaded`)."""
        if not id:
            raise ValueError("Document id must be a non-empty string")
        setter = object.__setattr__
        setter(self, "id", id)
        setter(self, "_packed", packed)
        setter(self, "_metadata", metadata)
        setter(self, "embedding", embedding)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled packed (reading workers hand documents back): the metadata as a dict, frozen again on load."""
        return (Document.from_packed, (self.id, self.packed_content, dict(self.metadata), self.embedding))

    def __repr__(self) -> str:
        return f"Document(id={self.id!r}, content={self.content!r}, metadata={dict(self.metadata)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Document) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)


class SavedRows(Protocol):
    """Where a saved document's text and metadata stay until they are asked for (a snapshot file)."""

    def packed_text(self, row: int) -> PackedText: ...
    def metadata_json(self, row: int) -> str: ...


class SavedDocument(Document):
    """A document of a loaded snapshot: its text and metadata are read from the file when first asked for.

    A restart makes one per chunk (865,000 on the Linux kernel): parsing every metadata object and copying every
    text into memory was most of the load, for the few a search shows. The metadata is kept once parsed.
    """

    __slots__ = ("_row", "_rows")
    _rows: SavedRows
    _row: int

    @classmethod
    def many(cls, ids: Sequence[str], rows: SavedRows, first_row: int = 0) -> list[Document]:
        """One document per id, row by row from `first_row` (the slot descriptors set directly: a restart makes
        865,000)."""
        if not all(ids):
            raise ValueError("Document id must be a non-empty string")
        new = cls.__new__
        set_id, set_rows, set_row, set_embedding = (
            getattr(cls, name).__set__ for name in ("id", "_rows", "_row", "embedding")
        )
        documents: list[Document] = []
        for row, document_id in enumerate(ids, first_row):
            document = new(cls)
            set_id(document, document_id)
            set_rows(document, rows)
            set_row(document, row)
            set_embedding(document, None)
            documents.append(document)
        return documents

    @property
    def content(self) -> str:
        return unpack(self._rows.packed_text(self._row))

    @property
    def packed_content(self) -> PackedText:
        return self._rows.packed_text(self._row)

    @property
    def metadata(self) -> Mapping[str, Any]:
        try:
            return self._metadata
        except AttributeError:
            metadata = MappingProxyType(json.loads(self._rows.metadata_json(self._row)))
            object.__setattr__(self, "_metadata", metadata)  # two threads may both parse: they set equal values
            return metadata

    def metadata_json(self) -> str:
        return self._rows.metadata_json(self._row)

    def passing_metadata(self) -> Mapping[str, Any]:
        try:
            return self._metadata
        except AttributeError:
            parsed: dict[str, Any] = json.loads(self._rows.metadata_json(self._row))
            return parsed


@dataclass(frozen=True, slots=True, order=False)
class SearchResult:
    """A document with its relevance score; sorting puts the highest score first."""

    document: Document
    score: float

    def __lt__(self, other: SearchResult) -> bool:
        return self.score > other.score


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of one file cut at a symbol boundary, with 1-based inclusive line numbers."""

    id: str
    content: str
    file: str
    language: str
    start_line: int
    end_line: int
    symbol: str | None = None
    symbol_kind: str | None = None
    # The other definitions packed into this chunk with `symbol` (small neighbours share one chunk).
    also_defines: tuple[str, ...] = ()
    # Where a chunk of a PDF or DOCX is in the document: its page (1-based), or its heading path.
    page: int | None = None
    heading: str | None = None

    def metadata(self) -> dict[str, Any]:
        """The metadata a chunk's document carries, keyed as on the wire."""
        data: dict[str, Any] = {
            "file": self.file,
            "language": self.language,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "source": "file",
        }
        if self.symbol:
            data["symbol"] = self.symbol
            data["symbolKind"] = self.symbol_kind
        if self.also_defines:
            data["alsoDefines"] = list(self.also_defines)
        if self.page is not None:
            data["page"] = self.page
        if self.heading is not None:
            data["heading"] = self.heading
        return data


class Symbol(NamedTuple):
    """A definition found while chunking; the workspace-symbol index is a list of these.

    A named tuple, not a dataclass: a large workspace loads tens of thousands at start, three times faster.
    """

    name: str
    qualified_name: str
    kind: str
    file: str
    start_line: int
    end_line: int
    container: str | None = None


# The phases of an index run, in order: the stored index loaded, the folder walked, files read and chunked,
# the new generation built, and it saved. A long first index is never silent in any of them.
PHASES = ("load", "shared", "walk", "read", "index", "save")


@dataclass(frozen=True, slots=True)
class Progress:
    """How far an index run has got: its phase, and in `read` how many files of how many (`walk` counts the files
    found so far; `total_files` is 0 while no total is known)."""

    indexed_files: int
    total_files: int
    current_file: str
    phase: str = "read"

    def describe(self) -> str:
        """The run's state in words, for a progress bar or an editor's progress message."""
        if self.phase == "load":
            return "loading the stored index"
        if self.phase == "shared":  # counted in MiB
            return f"downloading the shared index: {self.indexed_files:,} of {self.total_files:,} MB"
        if self.phase == "walk":
            return f"walking the folder: {self.indexed_files:,} files found"
        if self.phase == "index":
            return f"building the search index of {self.total_files:,} files"
        if self.phase == "save":
            return "saving the index"
        return f"{self.indexed_files}/{self.total_files} {self.current_file}"


class ProgressGate:
    """Which progress reports to pass on: each new phase at once, the last file read, and otherwise at most one
    every `interval` seconds (an editor or a log gets a readable pace, never a report per file)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._last = 0.0
        self._phase = ""

    def admit(self, progress: Progress) -> bool:
        now = time.monotonic()
        new_phase = progress.phase != self._phase
        last_file = progress.phase == "read" and progress.indexed_files == progress.total_files
        if now - self._last < self.interval and not new_phase and not last_file:
            return False
        self._last, self._phase = now, progress.phase
        return True


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """A session's state as callers see it; maps one to one onto the protocol's FolderStatus."""

    state: str
    files: int
    chunks: int
    documents: int
    generation: int
    last_indexed_at: str | None
    indexed_path: str | None
    skipped: Mapping[str, int]
    error: str | None
    vectors: Mapping[str, Any] | None = None
    # With a `sharedIndex` setting: its source (password masked), commit, files from it, files indexed locally.
    shared: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A manually added document as listed: id, a 100-character preview, its length and metadata."""

    id: str
    preview: str
    content_length: int
    metadata: Mapping[str, Any]
