"""Prose and configuration: paragraphs packed up to the size target, long runs in line windows."""

from __future__ import annotations

from ragls.config import ChunkShape
from ragls.ingest.chunking.sizing import ChunkBuilder, ChunkedFile

CHUNKER_VERSION = "text-1"


def chunk_text(text: str, rel_path: str, language: str, shape: ChunkShape) -> ChunkedFile:
    """Pack blank-line separated paragraphs into chunks of at most max_lines lines."""
    lines = text.splitlines()
    builder = ChunkBuilder(rel_path, language, lines)
    packed: tuple[int, int] | None = None
    for paragraph_start, paragraph_end in _paragraphs(lines):
        if packed is not None and paragraph_end - packed[0] + 1 > shape.max_lines:
            builder.add_windows(*packed, shape)
            packed = None
        packed = (paragraph_start, paragraph_end) if packed is None else (packed[0], paragraph_end)
    if packed is not None:
        builder.add_windows(*packed, shape)
    return ChunkedFile(builder.sorted_chunks(), [])


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            start = number if start is None else start
        elif start is not None:
            spans.append((start, number - 1))
            start = None
    if start is not None:
        spans.append((start, len(lines)))
    return spans
