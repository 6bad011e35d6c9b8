"""Where a large run's documents wait on disk while it is read: each file's texts and metadata written as they
arrive, and a `SavedDocument` left in memory for each, as a restart leaves one per row of its snapshot.

A first index of the Linux kernel holds 865,000 documents. Held in memory, their packed texts and metadata
dicts were about 1 GB of the run's peak; here each is a small handle, and a search, the store and the snapshot
read the few bytes they need with `pread`.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path

from ragls.model import Document, SavedDocument
from ragls.packing import PackedText

# Without `pread` (Windows) a run keeps its documents in memory, as before.
SPILL_SUPPORTED = hasattr(os, "pread")
# A plain text may hold lone surrogates (a file's undecodable bytes, escaped), as `ragls.packing` lets it.
_SURROGATES = "surrogatepass"


class SpillFile:
    """An unnamed file in `directory` that documents are appended to, a file's documents at a write.

    The file has no name from its creation on, so nothing is left behind however the process ends; it closes when
    the last document that reads from it is gone. Rows are only appended, and a document is made only once its
    bytes are written, so readers on other threads never wait for a writer.
    """

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        # Open as long as a document reads from it, not for a block: closed when this object is collected.
        self._file = tempfile.TemporaryFile(dir=directory, prefix="ragls-spill-")  # noqa: SIM115
        self._fd = self._file.fileno()
        # Row r's text is bytes [starts[2r], starts[2r+1]) and its metadata JSON [starts[2r+1], starts[2r+2]).
        self._starts = array("q", [0])
        self._packed = bytearray()  # 1 where a row's text is packed bytes, 0 where it is a plain string's UTF-8
        self._write_lock = threading.Lock()

    @property
    def rows(self) -> int:
        return len(self._packed)

    def spilled(self, documents: Sequence[Document]) -> list[Document]:
        """The documents as rows of this file, each a `SavedDocument` of the same id; a document that carries an
        embedding, or is already read from a file, is kept as it is."""
        kept = [type(document) is not Document or document.embedding is not None for document in documents]
        moving = [document for document, keep in zip(documents, kept, strict=True) if not keep]
        if not moving:
            return list(documents)
        with self._write_lock:
            first_row = self.rows
            self._append(moving)
        written = iter(SavedDocument.many([document.id for document in moving], self, first_row))
        return [document if keep else next(written) for document, keep in zip(documents, kept, strict=True)]

    def _append(self, documents: Sequence[Document]) -> None:
        parts: list[bytes] = []
        starts, end = self._starts, self._starts[-1]
        flags = bytearray()
        for document in documents:
            text = document.packed_content
            data = text if isinstance(text, bytes) else text.encode("utf-8", _SURROGATES)
            metadata = document.metadata_json().encode()
            parts += (data, metadata)
            flags.append(isinstance(text, bytes))
        block = b"".join(parts)
        view, written = memoryview(block), 0
        while written < len(block):
            written += os.pwrite(self._fd, view[written:], end + written)
        for part in parts:  # only now: a reader never finds a row whose bytes are not there yet
            end += len(part)
            starts.append(end)
        self._packed += flags

    def _read(self, index: int) -> bytes:
        start, end = self._starts[index], self._starts[index + 1]
        data = os.pread(self._fd, end - start, start)
        if len(data) != end - start:
            raise OSError("the spill file holding this document was cut short")
        return data

    def packed_text(self, row: int) -> PackedText:
        data = self._read(2 * row)
        return data if self._packed[row] else data.decode("utf-8", _SURROGATES)

    def metadata_json(self, row: int) -> str:
        return self._read(2 * row + 1).decode()
