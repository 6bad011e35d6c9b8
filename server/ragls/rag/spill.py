"""Where a large run puts what it builds on disk, so that a first index of a million chunks fits in memory.

- `SpillFile`: each file's texts and metadata are written as they arrive, and a `SavedDocument` is left in
  memory for each, as a restart leaves one per row of its snapshot. On the Linux kernel (865,000 documents),
  the packed texts and metadata dicts held in memory were about 1 GB of the run's peak.
- `MappedArrays`: the postings' large arrays live in files mapped shared, and the pages a build has written or
  read through are given back to the system (`release`): they stay in the page cache, from where a search
  maps the few it reads. On the kernel those arrays are about 2 GB.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import threading
import weakref
from array import array
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragls.index.columns import ArraySpace
from ragls.model import Document, SavedDocument
from ragls.packing import PackedText

# Without `pread` and `madvise` (Windows) a run keeps its documents and arrays in memory, as before.
SPILL_SUPPORTED = hasattr(os, "pread") and hasattr(mmap, "MADV_DONTNEED")
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
        self._file = _File(directory, "ragls-spill-")  # closed once this object, which its documents hold, is gone
        self._fd = self._file.fd
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


class _File:
    """An unnamed file's descriptor, closed once nothing that reads it is left."""

    def __init__(self, directory: Path, prefix: str) -> None:
        descriptor, name = tempfile.mkstemp(dir=directory, prefix=prefix)
        os.unlink(name)
        self.fd = descriptor
        weakref.finalize(self, os.close, descriptor)


class _Mapping(mmap.mmap):
    """A shared mapping of one `_File` (kept alive by it), what a `MappedArrays` array is a view of."""

    file: _File


class MappedArrays(ArraySpace):
    """Arrays in unnamed files of `directory`, mapped shared: what is written goes to the page cache and from there
    to the file, so `release` can hand the pages back to the system without losing a value."""

    pass_postings = 1 << 24  # 96 MB of slots and counts held at once, at the cost of a pass over the terms each

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory

    def empty(self, size: int, dtype: np.dtype | type) -> np.ndarray:
        itemsize = np.dtype(dtype).itemsize
        if size * itemsize < mmap.PAGESIZE:  # small arrays are not worth a file
            return np.empty(size, dtype=dtype)
        return _mapped(_File(self.directory, "ragls-arrays-"), size, dtype)

    def regrown(self, array: np.ndarray, size: int) -> np.ndarray | None:
        mapping = _mapping_of(array)
        if (
            mapping is None
            or array.ndim != 1
            or not array.flags.c_contiguous
            or len(array) * array.itemsize != len(mapping)
        ):
            return None  # not one of ours from its start: the caller copies it into a new one
        return _mapped(mapping.file, size, array.dtype)

    def release(self, array: np.ndarray) -> None:
        release(array)


def _mapped(file: _File, size: int, dtype: np.dtype | type) -> np.ndarray:
    """`size` values of `dtype` over `file`, grown to hold them (what it held before stays)."""
    length = size * np.dtype(dtype).itemsize
    if os.fstat(file.fd).st_size < length:
        os.ftruncate(file.fd, length)
    mapping = _Mapping(file.fd, length)
    mapping.file = file
    return np.frombuffer(mapping, dtype=dtype, count=size)


def mapping_of(array: np.ndarray) -> mmap.mmap | None:
    """The mapping an array is a view of (a snapshot's or a `MappedArrays` file's), if it is one."""
    base: object = array
    while isinstance(base, np.ndarray | memoryview):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    return base if isinstance(base, mmap.mmap) else None


def _mapping_of(array: np.ndarray) -> _Mapping | None:
    """The `MappedArrays` mapping an array is a view of, if it is one."""
    mapping = mapping_of(array)
    return mapping if isinstance(mapping, _Mapping) else None


def is_mapped(array: np.ndarray) -> bool:
    """Whether an array is a view of a `MappedArrays` file."""
    return _mapping_of(array) is not None


def release(array: np.ndarray) -> None:
    """Let the system take back the pages of an array that a `MappedArrays` made; any other is left alone."""
    mapping = _mapping_of(array)
    if mapping is not None:
        mapping.madvise(mmap.MADV_DONTNEED)  # a shared mapping: the values stay in the page cache and the file
