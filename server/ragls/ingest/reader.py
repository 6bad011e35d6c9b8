"""Reading one file into chunks, or a counted reason why not; never raises for one broken file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ragls.config import ChunkShape, Limits
from ragls.ingest.chunking import ChunkedFile, chunk_file
from ragls.ingest.fingerprint import fingerprint
from ragls.ingest.formats import Format, decode, detect_format

StatKey = tuple[int, int, int]


@dataclass(frozen=True)
class FileStat:
    """What a cheap stat says about a file, to skip reading files that did not change."""

    key: StatKey
    size: int


@dataclass
class ReadOutcome:
    """Either a fingerprint and (unless reused) chunks, or a skip reason."""

    skip_reason: str | None = None
    fingerprint: str | None = None
    chunked: ChunkedFile | None = None
    decoded_chars: int = 0


def stat_file(path: str | Path) -> FileStat | None:
    """The file's stat key, or None when it vanished or cannot be read."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return FileStat((info.st_mtime_ns, info.st_size, info.st_ino), info.st_size)


def read_file(
    path: Path, rel_path: str, limits: Limits, shape: ChunkShape, previous_fingerprint: str | None
) -> ReadOutcome:
    """Read, decode, fingerprint and (when the fingerprint changed) chunk one file."""
    file_format = detect_format(rel_path)
    if file_format is None:
        return ReadOutcome("binary")
    try:
        if os.stat(path, follow_symlinks=False).st_size > limits.max_file_bytes:
            return ReadOutcome("tooLarge")
        with open(path, "rb") as handle:
            data = handle.read(limits.max_file_bytes + 1)
    except OSError:
        return ReadOutcome("unreadable")
    if len(data) > limits.max_file_bytes:
        return ReadOutcome("tooLarge")
    text = decode(data)
    if text is None:
        return ReadOutcome("binary" if b"\x00" in data else "undecodable")
    file_fingerprint = fingerprint(data, file_format, shape)
    if file_fingerprint == previous_fingerprint:
        return ReadOutcome(fingerprint=file_fingerprint, decoded_chars=len(text))
    try:
        chunked = chunk_file(text, rel_path, file_format, shape)
    except Exception:  # A parser bug on one file must not fail the run: fall back to plain text chunks.
        chunked = chunk_file(text, rel_path, Format("text", file_format.language), shape)
    return ReadOutcome(fingerprint=file_fingerprint, chunked=chunked, decoded_chars=len(text))
