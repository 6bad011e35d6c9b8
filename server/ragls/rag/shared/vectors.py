"""The chunks' dense vectors in PostgreSQL: a pgvector column, written by `ragls publish`, read by sessions.

A vector belongs to one chunk row (`file_id`, `ord`) and one embedding model, and goes with the chunk when
pruning deletes it. Vectors are optional: the table exists only once a publisher found pgvector (or could
create the extension), and without it every lexical stream still works and readers embed locally. They
travel in pgvector's binary form (a 2-byte dimension count, 2 unused bytes, big-endian float32s), so a
million floats are bytes to copy, not text to parse.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from ragls.index.embedding import EmbeddingProvider
from ragls.index.vectors import VectorStream, content_hash
from ragls.model import Document
from ragls.rag.embedding_worker import CoverageCallback, embed_pending
from ragls.rag.shared.database import MIGRATION_LOCK, import_psycopg

if TYPE_CHECKING:
    import psycopg

FETCH_ROWS = 2000
_HEADER = struct.Struct(">HH")
# A vector row as the publisher writes it: chunk file id, ordinal, model, pgvector's binary value.
VectorRow = tuple[int, int, str, bytes]

TABLE_SQL = """
CREATE TABLE IF NOT EXISTS ragls.vectors (
    file_id bigint NOT NULL,
    ord integer NOT NULL,
    model text NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (file_id, ord, model),
    FOREIGN KEY (file_id, ord) REFERENCES ragls.chunks (file_id, ord) ON DELETE CASCADE)
"""


def ensure_table(connection: psycopg.Connection[Any]) -> str | None:
    """Make sure `ragls.vectors` exists, creating pgvector's extension if this role may; None when it does,
    else why not (the publish then goes on without vectors)."""
    psycopg = import_psycopg()
    with connection.transaction():
        if has_table(connection):
            return None
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        if not _has_vector_type(connection):
            try:
                with connection.transaction():  # a savepoint: a refusal must not abort the transaction
                    connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                return " ".join(str(exc).split())
        connection.execute(TABLE_SQL)
    return None


def has_table(connection: psycopg.Connection[Any]) -> bool:
    row = connection.execute("SELECT to_regclass('ragls.vectors') IS NOT NULL").fetchone()
    return bool(row and row[0])


def missing_chunks(connection: psycopg.Connection[Any], file_ids: Sequence[int], model: str) -> list[tuple[Any, ...]]:
    """The chunks of files kept from earlier generations that have no vector of `model` (published lexically, or
    with another model): (file_id, ord, Document)."""
    rows = connection.execute(
        "SELECT c.file_id, c.ord, c.chunk_id, c.content, c.metadata FROM ragls.chunks c "
        "WHERE c.file_id = ANY(%s) AND NOT EXISTS (SELECT 1 FROM ragls.vectors v "
        "WHERE v.file_id = c.file_id AND v.ord = c.ord AND v.model = %s) ORDER BY c.file_id, c.ord",
        (list(file_ids), model),
    )
    return [
        (file_id, ordinal, Document(chunk_id, content, json.loads(metadata)))
        for file_id, ordinal, chunk_id, content, metadata in rows
    ]


@dataclass
class StagedVectors:
    """A publish's vectors, embedded before its write transaction (the slow part): by content hash, for the chunks
    it writes and for the kept chunks that lack one of `model`."""

    model: str
    by_hash: dict[str, np.ndarray]
    kept_chunks: list[tuple[int, int, Document]]
    written: int = 0


def stage_vectors(
    connection: psycopg.Connection[Any],
    written: Sequence[Document],
    kept_file_ids: Sequence[int],
    provider: EmbeddingProvider,
    progress: CoverageCallback | None = None,
) -> StagedVectors:
    """Embed the written chunks and the kept files' chunks without a vector of the provider's model."""
    with connection.transaction():
        kept = missing_chunks(connection, kept_file_ids, provider.model)
    by_hash = embed_documents(provider, chain(written, (document for _, _, document in kept)), progress)
    return StagedVectors(provider.model, by_hash, kept)


def write_staged_vectors(
    connection: psycopg.Connection[Any], staged: StagedVectors, written_chunks: Iterable[tuple[int, int, Document]]
) -> None:
    """In the write transaction, once the written chunks have their file ids: every staged vector's row."""
    rows = vector_rows(chain(written_chunks, staged.kept_chunks), staged.by_hash, staged.model)
    staged.written = write_vectors(connection, rows)


def embed_documents(
    provider: EmbeddingProvider, documents: Iterable[Document], progress: CoverageCallback | None = None
) -> dict[str, np.ndarray]:
    """Vectors by content hash, embedded here and now in the background embedder's batches (copies once)."""
    unique = {content_hash(document): document for document in documents}
    if not unique:
        return {}
    stream = VectorStream(provider, background=True)
    stream.replace_documents([], list(unique.values()))
    vectors: dict[str, np.ndarray] = {}
    embed_pending(stream, lambda items: vectors.update(items), progress)
    return vectors


def write_vectors(connection: psycopg.Connection[Any], rows: Iterable[VectorRow]) -> int:
    """COPY vector rows in binary; returns how many."""
    count = 0
    copy_sql = "COPY ragls.vectors (file_id, ord, model, embedding) FROM STDIN (FORMAT BINARY)"
    with connection.cursor() as cursor, cursor.copy(copy_sql) as copy:
        # bytea's binary dump is the bytes as they are: the server reads them with pgvector's receive function.
        copy.set_types(["int8", "int4", "text", "bytea"])
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


def encode(vector: np.ndarray) -> bytes:
    values = np.asarray(vector, dtype=">f4")
    return _HEADER.pack(len(values), 0) + values.tobytes()


def decode(value: bytes) -> np.ndarray:
    return np.frombuffer(value, dtype=">f4", offset=_HEADER.size).astype(np.float32)


def read_vectors(
    connection: psycopg.Connection[Any], file_ids: Sequence[int], model: str
) -> Iterator[tuple[str, np.ndarray]]:
    """The vectors of `model` for these files' chunks, by chunk id, in a server-side cursor."""
    with connection.cursor(name="ragls_shared_vectors", binary=True) as cursor:
        cursor.itersize = FETCH_ROWS
        cursor.execute(
            "SELECT c.chunk_id, v.embedding FROM ragls.vectors v JOIN ragls.chunks c "
            "ON (c.file_id, c.ord) = (v.file_id, v.ord) WHERE v.file_id = ANY(%s) AND v.model = %s",
            (list(file_ids), model),
        )
        for chunk_id, value in cursor:
            yield chunk_id, decode(value)


def vector_rows(
    chunks: Iterable[tuple[int, int, Document]], vectors: dict[str, np.ndarray], model: str
) -> Iterator[VectorRow]:
    """Vector rows for (file_id, ord, Document) triples, from vectors by content hash."""
    for file_id, ordinal, document in chunks:
        yield file_id, ordinal, model, encode(vectors[content_hash(document)])


def _has_vector_type(connection: psycopg.Connection[Any]) -> bool:
    row = connection.execute("SELECT to_regtype('vector') IS NOT NULL").fetchone()
    return bool(row and row[0])
