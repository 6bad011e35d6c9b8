"""Chunkers: code at symbol boundaries (tree-sitter), Markdown at headings, PDF and DOCX per page or heading,
other text by paragraphs."""

from __future__ import annotations

from ragls.config import ChunkShape
from ragls.ingest.chunking.code import CHUNKER_VERSION as CODE_VERSION
from ragls.ingest.chunking.code import chunk_code, supports
from ragls.ingest.chunking.document import CHUNKER_VERSION as DOCUMENT_VERSION
from ragls.ingest.chunking.document import chunk_sections
from ragls.ingest.chunking.markdown import CHUNKER_VERSION as MARKDOWN_VERSION
from ragls.ingest.chunking.markdown import chunk_markdown
from ragls.ingest.chunking.sizing import ChunkedFile
from ragls.ingest.chunking.text import CHUNKER_VERSION as TEXT_VERSION
from ragls.ingest.chunking.text import chunk_text
from ragls.ingest.formats import Format

CHUNKER_VERSIONS = {
    "code": CODE_VERSION,
    "markdown": MARKDOWN_VERSION,
    "text": TEXT_VERSION,
    "document": DOCUMENT_VERSION,
}

__all__ = ["CHUNKER_VERSIONS", "ChunkedFile", "chunk_file", "chunk_sections"]


def chunk_file(text: str, rel_path: str, file_format: Format, shape: ChunkShape) -> ChunkedFile:
    """Chunks and symbols of one decoded file, by its format."""
    if file_format.family == "code" and supports(file_format.language):
        return chunk_code(text, rel_path, file_format.language, shape)
    if file_format.family == "markdown":
        return chunk_markdown(text, rel_path, shape)
    return chunk_text(text, rel_path, file_format.language, shape)
