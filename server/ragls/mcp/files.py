"""Lines of an indexed file by range, so an agent can read around a hit: inside the folder only, and bounded.

Only files the index holds are read: a path outside the folder, one through a symbolic link (the walk never
follows one), and a file the index left out (ignored, binary, too large) are refused by name, so the tool
never shows what `.gitignore` or `.tnsignore` keep out of the index.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from ragls.errors import InvalidArgument
from ragls.ingest.formats import decode
from ragls.ingest.reader import SkippedOpen, read_regular_file
from ragls.rag.checks import require, shown, text_problem

DEFAULT_LINES = 100
MAX_LINES = 400
# About 16k tokens: a range of long lines stops early, and says where to go on.
MAX_CHARS = 64_000
MAX_LINE_CHARS = 2_000
MAX_PATH_CHARS = 4096


@dataclass(frozen=True)
class FileLines:
    """Lines start_line..end_line (1-based, inclusive) of `file`; `truncated` when MAX_CHARS cut them short."""

    file: str
    start_line: int
    end_line: int
    total_lines: int
    lines: list[str]
    truncated: bool

    @property
    def next_start_line(self) -> int | None:
        return self.end_line + 1 if self.end_line < self.total_lines else None


def read_lines(
    root: Path,
    path: Any,
    start_line: Any,
    end_line: Any,
    is_indexed: Callable[[str], bool],
    max_file_bytes: int,
) -> FileLines:
    """The lines of an indexed file under `root` (resolved); InvalidArgument naming the parameter otherwise."""
    first, last = line_range(start_line, end_line)
    rel = folder_relative(root, path)
    _refuse_links(root, rel)
    if not is_indexed(rel):
        raise InvalidArgument(
            "path",
            f"path {rel} is not a file of the index (missing, ignored, binary or skipped): only the files that "
            "search_code and find_symbols cite can be read",
        )
    lines = _text(root, rel, max_file_bytes).splitlines()
    if first > max(len(lines), 1):
        raise InvalidArgument(
            "start_line", f"start_line must be at most {len(lines)}, the last line of {rel}, got {first}"
        )
    return _window(rel, lines, first, min(last, len(lines)))


def line_range(start_line: Any, end_line: Any) -> tuple[int, int]:
    """(first, last) asked for: end_line defaults to DEFAULT_LINES lines; at most MAX_LINES lines."""
    if not _is_int(start_line) or start_line < 1:
        raise InvalidArgument("start_line", f"start_line must be a line number from 1, got {shown(start_line)}")
    if end_line is None:
        return start_line, start_line + DEFAULT_LINES - 1
    if not _is_int(end_line) or end_line < start_line:
        raise InvalidArgument(
            "end_line", f"end_line must be a line number from start_line ({start_line}) on, got {shown(end_line)}"
        )
    if end_line - start_line + 1 > MAX_LINES:
        raise InvalidArgument(
            "end_line",
            f"start_line..end_line may span at most {MAX_LINES} lines, got {end_line - start_line + 1:,} "
            f"({start_line}..{end_line}): read in parts, e.g. end_line={start_line + MAX_LINES - 1}",
        )
    return start_line, end_line


def folder_relative(root: Path, path: Any) -> str:
    """`path` (relative to the folder, absolute, or a file:// URI) as a folder-relative POSIX path, or an error."""
    require("path", text_problem(path, MAX_PATH_CHARS))
    if "\x00" in path:
        raise InvalidArgument("path", "path must not contain NUL characters")
    local = unquote(urlsplit(path).path) if path.startswith("file://") else path
    full = Path(os.path.normpath(root / local))  # lexical: `..` cannot climb out unseen
    if not full.is_relative_to(root):
        raise InvalidArgument("path", f"path must be inside the folder {root}, got {shown(path)}")
    rel = full.relative_to(root).as_posix()
    if rel == ".":
        raise InvalidArgument("path", "path must name a file of the folder, got the folder itself")
    return rel


def _refuse_links(root: Path, rel: str) -> None:
    """No component of `rel` may be a symbolic link: one could lead anywhere, and the index never follows one."""
    current = root
    for part in PurePosixPath(rel).parts:
        current = current / part
        if current.is_symlink():
            link = current.relative_to(root).as_posix()
            where = "is" if link == rel else f"goes through {link}, which is"
            raise InvalidArgument("path", f"path {rel} {where} a symbolic link: only files in the folder are read")


def _text(root: Path, rel: str, max_file_bytes: int) -> str:
    try:
        # Below the root through no symlink at any step, whatever changed since `_refuse_links` looked.
        data = read_regular_file(root / rel, max_file_bytes, root)
    except SkippedOpen as skipped:
        reason = {"symlink": "is a symbolic link", "tooLarge": f"is over maxFileBytes ({max_file_bytes:,} bytes)"}
        raise InvalidArgument("path", f"path {rel} {reason.get(skipped.reason, 'is not a regular file')}") from None
    except OSError as exc:
        raise InvalidArgument("path", f"path {rel} cannot be read ({exc.strerror or exc})") from None
    text = decode(data)
    if text is None:
        raise InvalidArgument("path", f"path {rel} is no longer text")
    return text


def _window(rel: str, lines: list[str], first: int, last: int) -> FileLines:
    """Lines first..last, each cut at MAX_LINE_CHARS, stopping early (but after one line) at MAX_CHARS."""
    kept: list[str] = []
    chars = 0
    for line in lines[first - 1 : last]:
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]} ... ({len(line) - MAX_LINE_CHARS:,} more characters)"
        if kept and chars + len(line) + 1 > MAX_CHARS:
            break
        kept.append(line)
        chars += len(line) + 1
    end = first + len(kept) - 1
    return FileLines(rel, first, end, len(lines), kept, truncated=end < last)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
