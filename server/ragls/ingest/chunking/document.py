"""PDF and DOCX: one chunk per page or per heading's section, each carrying its page or heading path."""

from __future__ import annotations

from dataclasses import replace

from ragls.config import ChunkShape
from ragls.ingest.chunking.sizing import ChunkBuilder, ChunkedFile
from ragls.ingest.documents import Section
from ragls.model import Symbol

CHUNKER_VERSION = "document-1"


def chunk_sections(sections: list[Section], rel_path: str, language: str, shape: ChunkShape) -> ChunkedFile:
    """Lines are those of the extracted text, sections one after another; a long section is cut into windows.

    A DOCX heading is the chunk's symbol, as a Markdown heading is, and a workspace symbol.
    """
    builder = ChunkBuilder(rel_path, language, [line for section in sections for line in section.lines])
    symbols: list[Symbol] = []
    start = 1
    for section in sections:
        end = start + len(section.lines) - 1
        first_new = len(builder.chunks)
        builder.add_windows(start, end, shape, section.heading, "heading" if section.heading else None)
        builder.chunks[first_new:] = [
            replace(chunk, page=section.page, heading=section.heading) for chunk in builder.chunks[first_new:]
        ]
        if section.heading is not None and section.title is not None and end >= start:
            container = section.heading.rpartition(" > ")[0] or None
            symbols.append(Symbol(section.title, section.heading, "heading", rel_path, start, end, container))
        start = end + 1
    return ChunkedFile(builder.sorted_chunks(), symbols)
