"""A file's fingerprint: content plus everything that shapes its chunks, so equal means reusable."""

from __future__ import annotations

import hashlib
from dataclasses import astuple

from ragls.config import ChunkShape
from ragls.ingest.chunking import CHUNKER_VERSIONS
from ragls.ingest.formats import Format

EXTRACTOR_VERSION = "extract-1"


def fingerprint(data: bytes, file_format: Format, shape: ChunkShape) -> str:
    """SHA-256 over content, format, extractor and chunker versions and the chunk-shaping settings."""
    digest = hashlib.sha256(data)
    recipe = (
        file_format.family,
        file_format.language,
        EXTRACTOR_VERSION,
        CHUNKER_VERSIONS[file_format.family],
        *astuple(shape),
    )
    digest.update(repr(recipe).encode())
    return digest.hexdigest()
