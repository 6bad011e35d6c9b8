"""A generation in one file of flat arrays, so a restart loads a large index in well under a second.

The SQLite store stays the crash-safe record, written at every commit. A snapshot is a copy
taken now and then (after a full run, when changes go quiet, at shutdown) and trusted only when
it names the store's current revision, so a stale or half-written one is never used. It is an
uncompressed zip of JSON, the documents' texts as they hold them (packed bytes, or UTF-8 where a text
is kept plain; `ragls.packing`) and their metadata (a JSON object each, read where a document is asked for it:
`SavedDocument`), and `.npy` arrays read with `allow_pickle=False`: loading it runs no
code from the file. Each array's member starts on a page of the file (its values 64-byte aligned after the
`.npy` header), so that a load maps it copy-on-write instead of reading it (`_map_array`): a restart reads only
the pages that searches and edits touch, and the kernel keeps them in its page cache rather than in the
process's own memory.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import mmap
import os
import struct
import time
import weakref
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from ragls.index.columns import ROOM_SHARE, room_for
from ragls.index.symbol_table import SymbolColumns
from ragls.index.vocabulary import saved_lookup
from ragls.model import Document, SavedDocument, Symbol
from ragls.packing import PackedText
from ragls.rag import spill
from ragls.rag.generation import FileRecord, GenerationImage

SNAPSHOT_FILE = "snapshot.zip"
TEXT_BLOCK_BYTES = 1 << 24
# The forward arrays of every index, written with room for the appends of later edits (`_write_with_room`).
GROWING_ARRAYS = frozenset({"forward_offsets", "forward_terms", "forward_counts"})
_WRITE_VALUES = 1 << 20  # values written to a member at a time, so that no copy of a whole array is made
FORMAT = "5"  # 2: the streams share the knowledge base's terms, saved once; 3: texts packed; 4: documents lazy;
# 5: symbols as columns (`SymbolColumns`)
READABLE_FORMATS = frozenset({"3", "4", FORMAT})
# Arrays are mapped, not read, where the system's mapping semantics allow replacing a mapped file (not Windows).
MAP_ARRAYS = os.name == "posix"
_ALIGNMENT = mmap.ALLOCATIONGRANULARITY  # a page: where a mapping may start
_NPY_ALIGNMENT = 64  # `.npy` headers are padded so the values start a multiple of this past the member's start
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local header, before its name and extra field
_LOCAL_HEADER_SIGNATURE = b"PK\x03\x04"
_PADDING_ID = 0xD935  # an extra field readers skip, used for alignment (as Android's zipalign does)
# Documents read their texts and metadata with `pread` from the kept file; without it (Windows), from memory.
READ_WITH_PREAD = hasattr(os, "pread")


class SnapshotError(Exception):
    """The snapshot is unreadable or does not fit together; the SQLite rows are used instead."""


def write(path: Path, image: GenerationImage, header: Mapping[str, Any]) -> None:
    """Write atomically: a temporary file, flushed to disk, then renamed over the old snapshot.

    Members are streamed into an uncompressed zip, so writing needs little memory beyond the index: the texts
    and metadata a document by document (a saved document's are read from its own snapshot and copied).
    """
    arrays = {"index_slots": image.index_slots, **{f"index.{k}": v for k, v in image.index.items()}}
    if "terms" in image.index:  # hashed here, outside the index lock, so a restart need not hash them
        arrays.update({f"index.{k}": v for k, v in saved_lookup(image.index["terms"]).items()})
    for stream, index, slots in (("names", image.names, image.names_slots), ("code", image.code, image.code_slots)):
        if index is not None and slots is not None:
            arrays[f"{stream}_slots"] = slots
            arrays.update({f"{stream}.{k}": v for k, v in index.items()})
    symbol_arrays, symbol_table = SymbolColumns.of(image.symbols).to_saved()
    arrays.update({f"symbols.{k}": v for k, v in symbol_arrays.items()})
    documents = image.documents
    header = {**header, "format": FORMAT, "generation": image.generation, "committedAt": image.committed_at}
    # One temporary file per process, so two servers on one folder never write into the same file.
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    _remove_abandoned(path)
    with open(temporary, "wb") as handle:
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            _write_json(archive, "header.json", header)
            _write_json_rows(archive, "document_ids.json", (d.id for d in documents))
            text_packed = np.zeros(len(documents), dtype=np.bool_)

            def texts() -> Iterator[bytes]:
                for row, document in enumerate(documents):
                    text = document.packed_content
                    text_packed[row] = isinstance(text, bytes)
                    yield text if isinstance(text, bytes) else text.encode()

            arrays["text_offsets"] = _write_concatenated(archive, "text.bin", texts(), len(documents))
            arrays["text_packed"] = text_packed
            metadata = (document.metadata_json().encode() for document in documents)
            arrays["metadata_offsets"] = _write_concatenated(archive, "metadata.bin", metadata, len(documents))
            _write_json_rows(archive, "files.json", _file_rows(image.files, documents))
            _write_json(archive, "symbol_table.json", symbol_table)
            for name, value in arrays.items():
                with archive.open(_aligned_member(archive, f"{name}.npy"), "w", force_zip64=True) as member:
                    if name.rsplit(".", 1)[-1] in GROWING_ARRAYS:
                        _write_with_room(member, np.ascontiguousarray(value), len(value) // ROOM_SHARE)
                    elif value.ndim == 1 and spill.is_mapped(value):
                        _write_with_room(member, value, 0)  # in parts, each part's pages let go once written
                    else:
                        np.lib.format.write_array(member, np.ascontiguousarray(value), allow_pickle=False)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _aligned_member(archive: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    """A member whose data starts at a multiple of `_ALIGNMENT` in the file: its local header is padded with an
    extra field. Its `.npy` header is a multiple of 64 bytes, so the array's values are aligned too (a reader
    checks where they really start, and reads instead of mapping when they are not aligned)."""
    info = zipfile.ZipInfo(name, date_time=time.localtime(time.time())[:6])
    info.compress_type = zipfile.ZIP_STORED
    assert archive.fp is not None
    # The local header, the name, and the zip64 field `force_zip64` adds (4 + 16 bytes), then our padding.
    unpadded = archive.fp.tell() + _LOCAL_HEADER.size + len(name.encode()) + 20 + 4
    info.extra = struct.pack("<HH", _PADDING_ID, -unpadded % _ALIGNMENT) + b"\0" * (-unpadded % _ALIGNMENT)
    return info


def written_files(directory: Path) -> list[Path]:
    """The snapshot and the temporary files of its writers in a store directory: what deleting a store removes."""
    return [directory / SNAPSHOT_FILE, *_temporary_files(directory / SNAPSHOT_FILE)]


def _temporary_files(path: Path) -> list[Path]:
    """`<snapshot>.<pid>.tmp`, the names `write` gives its temporary files."""
    prefix = f"{path.name}."
    return sorted(p for p in path.parent.glob(f"{prefix}*.tmp") if p.name[len(prefix) : -len(".tmp")].isdigit())


def _remove_abandoned(path: Path, older_than_seconds: float = 3600.0) -> None:
    """Delete temporary files a killed process left behind."""
    now = time.time()
    for leftover in _temporary_files(path):
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > older_than_seconds:
                leftover.unlink()


def read_header(path: Path) -> dict[str, Any]:
    """The snapshot's header alone (format, revision, recipe, folder), to decide whether to load it."""
    try:
        with zipfile.ZipFile(path) as archive:
            header: dict[str, Any] = json.loads(archive.read("header.json"))
            return header
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise SnapshotError(f"unreadable snapshot {path}: {exc}") from exc


def read(path: Path) -> GenerationImage:
    """The image a snapshot holds."""
    try:
        with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
            return _image(archive, raw)
    except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile) as exc:
        raise SnapshotError(f"unreadable snapshot {path}: {exc}") from exc


def _image(archive: zipfile.ZipFile, raw: IO[bytes]) -> GenerationImage:
    header = json.loads(archive.read("header.json"))
    arrays = {}
    for name in archive.namelist():
        if name.endswith(".npy"):
            mapped = _map_array(archive.getinfo(name), raw) if MAP_ARRAYS else None
            if mapped is not None:
                arrays[name[: -len(".npy")]] = mapped
                continue
            with archive.open(name) as member:
                grows = name.rsplit(".", 2)[-2] in GROWING_ARRAYS
                arrays[name[: -len(".npy")]] = (
                    _read_with_room(member) if grows else np.lib.format.read_array(member, allow_pickle=False)
                )
    if header.get("format") == "3":
        documents = _documents_of_format_3(archive, arrays)
    else:
        documents = _saved_documents(archive, raw, arrays)
    files = _file_records(json.loads(archive.read("files.json")), documents)
    symbols = (
        SymbolColumns.from_saved(_prefixed(arrays, "symbols."), json.loads(archive.read("symbol_table.json")))
        if header.get("format") == FORMAT
        else _symbols(json.loads(archive.read("symbols.json")))
    )
    names = _prefixed(arrays, "names.") or None
    code = _prefixed(arrays, "code.") or None
    return GenerationImage(
        int(header["generation"]),
        header.get("committedAt"),
        documents,
        _prefixed(arrays, "index."),
        arrays["index_slots"],
        names,
        arrays["names_slots"] if names else None,
        files,
        symbols,
        code,
        arrays["code_slots"] if code else None,
    )


def _file_rows(files: Mapping[str, FileRecord], documents: Sequence[Document]) -> Iterator[list[Any]]:
    """Each file's record as a JSON row; chunks that are a run of the documents as its first row and length, so
    that a restart shares the documents' id strings instead of parsing each again (865,000 on the Linux kernel)."""
    row_of = {document.id: row for row, document in enumerate(documents)}
    for path, record in files.items():
        head = [path, record.fingerprint, record.stat_key, record.decoded_chars, record.n_symbols]
        chunk_ids = record.chunk_ids
        first = row_of.get(chunk_ids[0], -1) if chunk_ids else -1
        run = documents[first : first + len(chunk_ids)] if first >= 0 else ()
        if first >= 0 and len(run) == len(chunk_ids) and all(d.id == i for d, i in zip(run, chunk_ids, strict=True)):
            yield [*head, first, len(chunk_ids)]
        else:
            yield [*head, chunk_ids]


def _file_records(rows: list[list[Any]], documents: Sequence[Document]) -> dict[str, FileRecord]:
    """The records `_file_rows` wrote (a snapshot of format 3 or 4 lists every file's chunk ids)."""
    ids = [document.id for document in documents]
    records = {}
    for path, fingerprint, stat_key, decoded_chars, n_symbols, chunks, *length in rows:
        if isinstance(chunks, list):
            chunk_ids = chunks
        else:
            (count,) = length
            if not (isinstance(chunks, int) and isinstance(count, int) and 0 <= chunks <= chunks + count <= len(ids)):
                raise ValueError(f"the chunks of {path!r} are not a run of the documents")
            chunk_ids = ids[chunks : chunks + count]
        records[path] = FileRecord(fingerprint, _stat_key(stat_key), chunk_ids, decoded_chars, n_symbols)
    return records


def _saved_documents(archive: zipfile.ZipFile, raw: IO[bytes], arrays: Mapping[str, np.ndarray]) -> list[Document]:
    """One `SavedDocument` per id, its text and metadata left in the file (`_SavedRows`)."""
    ids = json.loads(archive.read("document_ids.json"))
    rows = _SavedRows(
        raw,
        _Blob(archive.getinfo("text.bin"), raw, arrays["text_offsets"], len(ids), "texts"),
        arrays["text_packed"],
        _Blob(archive.getinfo("metadata.bin"), raw, arrays["metadata_offsets"], len(ids), "metadata"),
    )
    if len(rows.packed) != len(ids):
        raise ValueError("document texts and their packing disagree")
    return SavedDocument.many(ids, rows)


class _Blob:
    """A member of concatenated values and where each starts, checked to fit; read with `pread` from the kept
    file, or held in memory where the system has no `pread`."""

    def __init__(self, info: zipfile.ZipInfo, raw: IO[bytes], offsets: np.ndarray, count: int, what: str) -> None:
        if info.compress_type != zipfile.ZIP_STORED:
            raise ValueError(f"the document {what} are compressed")
        if len(offsets) != count + 1 or int(offsets[0]) != 0 or int(offsets[-1]) != info.file_size:
            raise ValueError(f"the document {what} and their offsets disagree")
        if count and bool((offsets[1:] < offsets[:-1]).any()):
            raise ValueError(f"the document {what}' offsets go back")
        self.start = _data_start(info, raw)
        self.offsets = offsets
        self.data: bytes | None = None
        if not READ_WITH_PREAD:
            raw.seek(self.start)
            self.data = raw.read(info.file_size)

    def read(self, fd: int, row: int) -> bytes:
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        if self.data is not None:
            return self.data[start:end]
        data = os.pread(fd, end - start, self.start + start)
        if len(data) != end - start:
            raise OSError("the snapshot holding this document's text was cut short")
        return data


class _SavedRows:
    """The snapshot's document texts and metadata, read where a document is asked for them (`SavedDocument`).

    They are read with `pread` from the snapshot's file, kept open: a replaced or deleted snapshot stays
    readable while its documents live, and its pages go to the page cache, not to this process. Where `pread`
    is missing (Windows) both members are read into memory.
    """

    def __init__(self, raw: IO[bytes], texts: _Blob, packed: np.ndarray, metadata: _Blob) -> None:
        self.texts, self.packed, self.metadata = texts, packed, metadata
        self._fd = -1
        if READ_WITH_PREAD:
            self._fd = os.dup(raw.fileno())
            weakref.finalize(self, os.close, self._fd)

    def packed_text(self, row: int) -> PackedText:
        data = self.texts.read(self._fd, row)
        return data if self.packed[row] else data.decode()

    def metadata_json(self, row: int) -> str:
        return self.metadata.read(self._fd, row).decode()


def _write_concatenated(archive: zipfile.ZipFile, name: str, values: Iterator[bytes], count: int) -> np.ndarray:
    """A member of `count` values one after another, written about a megabyte at a time (a member's `write`
    costs per call); returns where each starts, and the end."""
    lengths = np.zeros(count, dtype=np.int64)
    with archive.open(name, "w", force_zip64=True) as member:
        parts: list[bytes] = []
        held = 0
        for row, value in enumerate(values):
            parts.append(value)
            lengths[row] = len(value)
            held += len(value)
            if held >= 1 << 20:
                member.write(b"".join(parts))
                parts, held = [], 0
        member.write(b"".join(parts))
    return _offsets(lengths)


def _map_array(info: zipfile.ZipInfo, raw: IO[bytes]) -> np.ndarray | None:
    """A flat array of numbers mapped copy-on-write from the file (writes stay this process's own), or None
    where it cannot be: compressed, not a flat array of numbers, empty, or not aligned (an older snapshot).

    Nothing is read but the headers: the pages come in as they are used. The forward columns, which edits
    append to, were written with room past their values; those of an older snapshot, written without it, move
    to memory of their own with room after the first walk (`IndexState.ensure_room`).
    """
    if info.compress_type != zipfile.ZIP_STORED:
        return None
    start = _data_start(info, raw)
    if start % _NPY_ALIGNMENT:
        return None
    raw.seek(start)
    shape, dtype = _npy_header(raw)
    if len(shape) != 1 or dtype.hasobject or shape[0] == 0:
        return None
    values_start = raw.tell()
    (length,) = shape
    if values_start + length * dtype.itemsize > start + info.file_size:
        raise ValueError(f"{info.filename} ends early")
    map_start = values_start - values_start % _ALIGNMENT
    mapping = mmap.mmap(
        raw.fileno(), values_start - map_start + length * dtype.itemsize, access=mmap.ACCESS_COPY, offset=map_start
    )
    return np.frombuffer(mapping, dtype=dtype, count=length, offset=values_start - map_start)


def release_pages(arrays: Mapping[str, np.ndarray]) -> None:
    """Let go of the pages of the mapped arrays that an install has read through (the forward postings' term ids
    and base slots checked, the vocabulary's terms scanned: about 1.4 GB of the Linux kernel's), so that they stay
    in the kernel's page cache and leave this process's memory; the next read of one maps it again from there.

    Only as an install loads them (`IndexState.install`), before any edit has written into an array: dropping a
    page of a copy-on-write mapping drops what was written to it.
    """
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    for array in arrays.values():
        mapping = spill.mapping_of(array)
        if mapping is not None:
            with contextlib.suppress(OSError):  # only advice: where the system refuses, the pages stay
                mapping.madvise(mmap.MADV_DONTNEED)


def _data_start(info: zipfile.ZipInfo, raw: IO[bytes]) -> int:
    """Where a member's bytes start in the file: past its local header, name and extra field."""
    raw.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(raw.read(_LOCAL_HEADER.size))
    if fields[0] != _LOCAL_HEADER_SIGNATURE:
        raise ValueError(f"a bad local header for {info.filename}")
    return int(info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1])


def _npy_header(stream: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype of the `.npy` array that starts here, the stream left where its values begin (its
    order is left out: a flat array reads the same in either)."""
    version = np.lib.format.read_magic(stream)
    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _fortran_order, dtype = header(stream)
    return shape, dtype


def _write_with_room(member: IO[bytes], values: np.ndarray, room: int) -> None:
    """A flat array followed by a sixteenth of its length of zeros, as one `.npy` array of both: mapped copy-on-write,
    the zeros are the room later edits append into, so a restart never copies the forward postings to give them
    room (a gigabyte of the Linux kernel's), and only the pages an edit writes become the process's own. A reader
    takes the values' length from the offsets (`Postings.load`). A small array gets no least room
    (`columns.ROOM_MIN`): moving it after the walk costs nothing, and the file stays its size. An array a large run
    built in a file (`spill`) gives back the pages of each part once it is written."""
    header = {
        "descr": np.lib.format.dtype_to_descr(values.dtype),
        "fortran_order": False,
        "shape": (len(values) + room,),
    }
    np.lib.format.write_array_header_1_0(member, header)
    for start in range(0, len(values), _WRITE_VALUES):
        member.write(values[start : start + _WRITE_VALUES].data.cast("B"))
        spill.release(values)
    zeros = np.zeros(min(room, _WRITE_VALUES), dtype=values.dtype)
    for start in range(0, room, _WRITE_VALUES):
        member.write(zeros[: min(_WRITE_VALUES, room - start)].data.cast("B"))


def _read_with_room(member: IO[bytes]) -> np.ndarray:
    """A flat array read into a longer buffer (`room_for`): an index takes the rest as room for later edits
    (`Postings.load`), so the first edit after a restart need not copy a gigabyte of forward postings."""
    shape, dtype = _npy_header(member)
    if len(shape) != 1 or dtype.hasobject:
        raise ValueError("a growing index array is not a flat array of numbers")
    (length,) = shape
    buffer = np.empty(length + room_for(length), dtype=dtype)
    view = buffer[:length].data.cast("B")
    filled = 0
    while filled < len(view):
        read = member.readinto(view[filled:])  # type: ignore[attr-defined]
        if not read:
            raise ValueError("a saved index array ends early")
        filled += read
    return buffer


def _symbols(rows: list[list[Any]]) -> SymbolColumns:
    """The symbols of a format 3 or 4 snapshot (JSON rows), as columns: these share the strings a row repeats."""
    return SymbolColumns.of(Symbol(*row) for row in rows)


def _stat_key(value: list[int] | None) -> tuple[int, int, int] | None:
    if value is None:
        return None
    mtime_ns, size, inode = value
    return (int(mtime_ns), int(size), int(inode))


def _documents_of_format_3(archive: zipfile.ZipFile, arrays: Mapping[str, np.ndarray]) -> list[Document]:
    """The documents of a snapshot written before format 4 (ids and metadata in one JSON), read into memory,
    their texts a block at a time: never the whole text beside its strings, nor a read per document."""
    offsets = arrays["text_offsets"].tolist()
    metadata = json.loads(archive.read("documents.json"))
    if len(offsets) != len(metadata) + 1 or offsets[-1] != archive.getinfo("text.bin").file_size:
        raise ValueError("document texts and offsets disagree")
    packed = arrays["text_packed"].tolist()
    if len(packed) != len(metadata):
        raise ValueError("document texts and their packing disagree")
    documents = []
    block, block_start = memoryview(b""), 0  # block_start: where in the text the block begins
    with archive.open("text.bin") as member:
        for (document_id, meta), start, end, is_packed_text in zip(
            metadata, offsets, offsets[1:], packed, strict=False
        ):
            if end > block_start + len(block):
                rest = block[start - block_start :]
                block = memoryview(bytes(rest) + member.read(max(TEXT_BLOCK_BYTES, end - start - len(rest))))
                block_start = start
                if end > block_start + len(block):
                    raise ValueError("the document texts end early")
            text = block[start - block_start : end - block_start]
            if is_packed_text:
                documents.append(Document.loaded(document_id, bytes(text), meta))
            else:
                documents.append(Document(document_id, str(text, "utf-8"), meta))
    return documents


def _write_json(archive: zipfile.ZipFile, name: str, value: Any) -> None:
    archive.writestr(name, json.dumps(value, separators=(",", ":")))


def _write_json_rows(archive: zipfile.ZipFile, name: str, rows: Iterator[Any], per_batch: int = 4096) -> None:
    """A JSON array written a batch of rows at a time: the same bytes as `_write_json`, without the whole
    list and its text in memory at once (a Linux-sized index has 865,000 rows)."""
    with archive.open(name, "w", force_zip64=True) as member:
        member.write(b"[")
        separator = b""
        while batch := list(itertools.islice(rows, per_batch)):
            member.write(separator + json.dumps(batch, separators=(",", ":"))[1:-1].encode())
            separator = b","
        member.write(b"]")


def _prefixed(arrays: Mapping[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {name[len(prefix) :]: value for name, value in arrays.items() if name.startswith(prefix)}


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets
