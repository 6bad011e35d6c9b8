"""A published generation's rows as one Delta: what a reader without its snapshot, or a publish building on the
last generation, commits into an index of its own."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ragls.index.tokenize import TermCounts
from ragls.model import Document, Symbol
from ragls.rag.generation import Delta, FileRecord, IndexState

if TYPE_CHECKING:
    import psycopg

FETCH_ROWS = 2000


def rows_delta(connection: psycopg.Connection[Any], wanted: dict[str, tuple[Any, ...]], state: IndexState) -> Delta:
    """The wanted files' chunks, term counts and symbols, replacing what `state` held for those paths.

    `wanted` maps a path to its published (id, fingerprint, decoded chars, symbols).
    """
    path_of = {file[0]: path for path, file in wanted.items()}
    ids = list(path_of)
    delta = Delta()
    chunk_ids: dict[str, list[str]] = {path: [] for path in wanted}
    with connection.cursor(name="ragls_shared_chunks") as cursor:
        cursor.itersize = FETCH_ROWS
        cursor.execute(
            "SELECT file_id, chunk_id, content, metadata, terms, counts FROM ragls.chunks "
            "WHERE file_id = ANY(%s) ORDER BY file_id, ord",
            (ids,),
        )
        for file_id, chunk_id, content, metadata, terms, counts in cursor:
            delta.add.append(Document(chunk_id, content, json.loads(metadata)))
            delta.terms[chunk_id] = TermCounts(tuple(terms), tuple(counts))
            chunk_ids[path_of[file_id]].append(chunk_id)
    rows = connection.execute(
        "SELECT file_id, name, qualified, kind, start_line, end_line, container FROM ragls.symbols "
        "WHERE file_id = ANY(%s) ORDER BY file_id, ord",
        (ids,),
    )
    for file_id, name, qualified, kind, start_line, end_line, container in rows:
        delta.symbols.append(Symbol(name, qualified, kind, path_of[file_id], start_line, end_line, container))
    for path, (_, fingerprint, decoded_chars, n_symbols) in sorted(wanted.items()):
        local = state.files.get(path)
        if local is not None:
            delta.remove_ids.extend(local.chunk_ids)
        if path in state.skipped_files:
            delta.skipped[path] = None
        # No stat key: the walk that follows reads the file once and keeps these rows only if its fingerprint matches.
        delta.records[path] = FileRecord(fingerprint, None, chunk_ids[path], decoded_chars, n_symbols)
        delta.symbol_files.append(path)
    return delta
