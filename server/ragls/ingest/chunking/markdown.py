"""Markdown: one chunk per heading section, named by its heading path (`Install > Linux`)."""

from __future__ import annotations

import re

from ragls.config import ChunkShape
from ragls.ingest.chunking.sizing import ChunkBuilder, ChunkedFile
from ragls.model import Symbol

CHUNKER_VERSION = "markdown-1"
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def chunk_markdown(text: str, rel_path: str, shape: ChunkShape) -> ChunkedFile:
    """Split at ATX headings outside code fences; each section's symbol is its heading path."""
    lines = text.splitlines()
    builder = ChunkBuilder(rel_path, "markdown", lines)
    headings = _headings(lines)
    symbols: list[Symbol] = []
    trail: list[tuple[int, str]] = []
    if not headings or headings[0][0] > 1:
        builder.add_windows(1, (headings[0][0] - 1) if headings else len(lines), shape)
    for index, (line_number, level, title) in enumerate(headings):
        section_end = headings[index + 1][0] - 1 if index + 1 < len(headings) else len(lines)
        trail = [(lvl, name) for lvl, name in trail if lvl < level] + [(level, title)]
        qualified = " > ".join(name for _, name in trail)
        container = " > ".join(name for _, name in trail[:-1]) or None
        builder.add_windows(line_number, section_end, shape, qualified, "heading")
        symbols.append(Symbol(title, qualified, "heading", rel_path, line_number, section_end, container))
    return ChunkedFile(builder.sorted_chunks(), symbols)


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    in_fence = False
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _HEADING.match(line)
        if match:
            found.append((number, len(match.group(1)), match.group(2)))
    return found
