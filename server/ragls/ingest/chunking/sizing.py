"""Shared chunk shaping: line windows with overlap, stable IDs and the result type of every chunker."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ragls.config import ChunkShape
from ragls.model import Chunk, Symbol


@dataclass
class ChunkedFile:
    """What one file becomes: its chunks in line order and the symbols it defines."""

    chunks: list[Chunk] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)


def line_windows(start: int, end: int, shape: ChunkShape) -> Iterator[tuple[int, int]]:
    """Split lines start..end (1-based, inclusive) into windows of at most max_lines with overlap."""
    if end - start + 1 <= shape.max_lines:
        yield start, end
        return
    step = max(1, shape.max_lines - shape.overlap_lines)
    window_start = start
    while True:
        window_end = min(end, window_start + shape.max_lines - 1)
        yield window_start, window_end
        if window_end >= end:
            return
        window_start += step


def trim_blank_edges(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """Narrow start..end to its first and last non-blank lines; None when all are blank."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


class ChunkBuilder:
    """Collects chunks of one file and gives each a stable, unique ID (`path#symbol` or `path#L1-L9`)."""

    def __init__(self, rel_path: str, language: str, lines: list[str]) -> None:
        self.rel_path = rel_path
        self.language = language
        self.lines = lines
        self.chunks: list[Chunk] = []
        self._ids: set[str] = set()

    def add(
        self, start: int, end: int, symbol: str | None = None, kind: str | None = None, also: tuple[str, ...] = ()
    ) -> None:
        """Add lines start..end as one chunk, unless they are blank."""
        content = "\n".join(self.lines[start - 1 : end])
        if not any(char.isalnum() for char in content):
            return  # Blank lines or a lone `}` say nothing a search could use.
        chunk_id = f"{self.rel_path}#{symbol}" if symbol else f"{self.rel_path}#L{start}-L{end}"
        if chunk_id in self._ids:
            chunk_id = f"{chunk_id}@L{start}-L{end}" if symbol else f"{chunk_id}@{len(self.chunks)}"
        self._ids.add(chunk_id)
        self.chunks.append(Chunk(chunk_id, content, self.rel_path, self.language, start, end, symbol, kind, also))

    def add_windows(
        self, start: int, end: int, shape: ChunkShape, symbol: str | None = None, kind: str | None = None
    ) -> None:
        """Add lines start..end, split into overlapping windows when longer than the target."""
        trimmed = trim_blank_edges(self.lines, start, end)
        if trimmed is None:
            return
        for window_start, window_end in line_windows(*trimmed, shape):
            self.add(window_start, window_end, symbol, kind)

    def sorted_chunks(self) -> list[Chunk]:
        return sorted(self.chunks, key=lambda c: (c.start_line, c.end_line))
