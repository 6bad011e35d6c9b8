"""Reading one file into chunks, or a counted reason why not; never raises for one broken file."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ragls.config import ChunkShape, Limits
from ragls.ingest.chunking import ChunkedFile, chunk_file, chunk_sections
from ragls.ingest.documents import NEEDS_EXTRA, DocumentSkipped, extract_sections, has_extractor
from ragls.ingest.fingerprint import fingerprint
from ragls.ingest.formats import Format, decode, detect_format

StatKey = tuple[int, int, int]
# O_NOFOLLOW: a file swapped for a symlink after the walk saw it fails to open instead of reading the target.
# O_NONBLOCK: a FIFO swapped in opens at once and is then refused, instead of blocking the run.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# What open with O_NOFOLLOW fails with on a symlink: ELOOP (Linux, macOS), EMLINK (FreeBSD).
_SYMLINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK})


class SkippedOpen(Exception):
    """The path is not a regular file within the size limit; `reason` is its skip reason, as the walk names it."""

    def __init__(self, reason: str, size: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.size = size


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


def read_regular_file(path: str | Path, max_bytes: int, root: Path | None = None) -> bytes:
    """A regular file's bytes, checked on the opened descriptor so a swap after any check cannot redirect it.

    With `root`, every folder between it and the file is opened without following links too, so a folder
    swapped for a link to elsewhere cannot lead outside either. Raises SkippedOpen for a symlink, a special
    file or more than `max_bytes`, and OSError when unreadable.
    """
    with _open_beneath(root, Path(path)) if root is not None else _open_no_follow(path) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SkippedOpen("special")
        if info.st_size > max_bytes:
            raise SkippedOpen("tooLarge", info.st_size)
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise SkippedOpen("tooLarge", len(data))  # it grew since fstat
    return data


def read_regular_prefix(path: str | Path, max_bytes: int) -> tuple[bytes, int]:
    """At most `max_bytes` of a regular file, and its size: for a file used up to a cap (an ignore file).

    Checked on the opened descriptor as `read_regular_file` is; raises SkippedOpen for a symlink or a special file,
    and OSError when unreadable.
    """
    with _open_no_follow(path) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SkippedOpen("special")
        data = handle.read(max_bytes + 1)
    return data[:max_bytes], max(info.st_size, len(data))


def read_file(
    path: Path,
    rel_path: str,
    limits: Limits,
    shape: ChunkShape,
    previous_fingerprint: str | None,
    root: Path | None = None,
) -> ReadOutcome:
    """Read, decode, fingerprint and (when the fingerprint changed) chunk one file (below `root`, when given,
    through no symlinked folder)."""
    file_format = detect_format(rel_path)
    if file_format is None:
        return ReadOutcome("binary")
    if file_format.family == "document" and not has_extractor(file_format.language):
        return ReadOutcome(NEEDS_EXTRA)
    try:
        data = read_regular_file(path, limits.max_file_bytes, root)
    except SkippedOpen as skipped:
        return ReadOutcome(skipped.reason)
    except OSError:
        return ReadOutcome("unreadable")
    if file_format.family == "document":
        return _read_document(data, rel_path, file_format, limits, shape, previous_fingerprint)
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


def _read_document(
    data: bytes, rel_path: str, file_format: Format, limits: Limits, shape: ChunkShape, previous_fingerprint: str | None
) -> ReadOutcome:
    """A PDF's or DOCX's text, extracted from its bytes, chunked per page or heading; fingerprinted as any file."""
    try:
        sections = extract_sections(data, file_format.language, limits.max_file_bytes)
    except DocumentSkipped as skipped:
        return ReadOutcome(skipped.reason)
    decoded_chars = sum(len(line) + 1 for section in sections for line in section.lines)
    file_fingerprint = fingerprint(data, file_format, shape)
    if file_fingerprint == previous_fingerprint:
        return ReadOutcome(fingerprint=file_fingerprint, decoded_chars=decoded_chars)
    chunked = chunk_sections(sections, rel_path, file_format.language, shape)
    return ReadOutcome(fingerprint=file_fingerprint, chunked=chunked, decoded_chars=decoded_chars)


def _open_no_follow(path: str | Path) -> BinaryIO:
    """`open` that raises SkippedOpen for a symlink or a directory and returns at once for a FIFO."""
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
        raise SkippedOpen("symlink")  # best effort where the flag is missing
    try:
        return open(path, "rb", opener=_no_follow_opener)
    except OSError as exc:
        skipped = _skipped_open(exc)
        if skipped is None:
            raise
        raise skipped from exc


def _open_beneath(root: Path, path: Path) -> BinaryIO:
    """Open `path` below `root` one component at a time, refusing a symlink at every step (openat with
    O_NOFOLLOW, which is what Linux's RESOLVE_NO_SYMLINKS does in one call)."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return _open_no_follow(path)
    if not parts or not hasattr(os, "O_DIRECTORY") or os.open not in os.supports_dir_fd:
        return _open_no_follow(path)
    root_flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
    directory = os.open(root, root_flags)  # the folder itself may be reached through a link
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, root_flags | getattr(os, "O_NOFOLLOW", 0), dir_fd=directory)
            except OSError as exc:
                if exc.errno in _SYMLINK_ERRNOS or exc.errno == errno.ENOTDIR:
                    raise SkippedOpen("symlink") from exc
                raise
            os.close(directory)
            directory = inner
        try:
            descriptor = os.open(parts[-1], _OPEN_FLAGS, dir_fd=directory)
        except OSError as exc:
            skipped = _skipped_open(exc)
            if skipped is None:
                raise
            raise skipped from exc
    finally:
        os.close(directory)
    return os.fdopen(descriptor, "rb")


def _skipped_open(exc: OSError) -> SkippedOpen | None:
    """What a failed no-follow open of a file means: a symlink, a directory swapped in (not a regular file
    either), or None for a plain read error."""
    if exc.errno in _SYMLINK_ERRNOS:
        return SkippedOpen("symlink")
    if exc.errno == errno.EISDIR:
        return SkippedOpen("special")
    return None


def _no_follow_opener(path: str, flags: int) -> int:
    return os.open(path, flags | _OPEN_FLAGS)
