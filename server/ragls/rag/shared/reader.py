"""A session's start from a shared index: the published generation nearest to HEAD, as one Delta.

Ranking parity by construction: the shared chunks, with their stored term counts, go into the session's own
in-memory indexes through `IndexState.commit`, like the chunks of a local run; the walk that follows reads
every file once, keeps the shared chunks of the files whose fingerprint matches (no chunking, no tokenizing)
and indexes the others locally. The cost is memory: a reader holds the whole index, as a local session does.
A generation published with this session's embedding model also hands over its chunks' vectors (by content
hash, into the vector stream's cache, before the commit), so unchanged files are never embedded again; vectors
of another model are never used. `refresh_shared` is what the session asks later (sync.py runs it): the
generation nearest to HEAD now, and vectors for chunks still waiting for one; it never replaces a chunk.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragls.config import Settings, SharedIndex
from ragls.errors import RaglsError
from ragls.index.tokenize import TermCounts
from ragls.index.vectors import content_hash
from ragls.model import Document, Symbol
from ragls.rag.generation import Delta, FileRecord, IndexState
from ragls.rag.shared.database import (
    SCHEMA_VERSION,
    SharedIndexError,
    SharedIndexUnreachable,
    check_name,
    connect,
    describe,
    import_psycopg,
    installed_version,
    redact,
)
from ragls.rag.shared.git import folder_prefix, nearest_commit
from ragls.rag.shared.publish import shared_recipe
from ragls.rag.shared.vectors import read_vectors

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)
FETCH_ROWS = 2000


@dataclass
class SharedSource:
    """Where a session's shared rows came from, for `rag/status`; `error` says why none were used."""

    name: str
    source: str
    commit: str | None = None
    generation: int | None = None
    published_at: str | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    # The model of the published vectors (None: published lexically), and how many this session took from it.
    vector_model: str | None = None
    vectors: int = 0

    def status(self, files: Mapping[str, FileRecord]) -> dict[str, Any]:
        """The protocol's `sharedIndex`: files still as published, and files indexed locally."""
        shared = sum(1 for path, record in files.items() if self.fingerprints.get(path) == record.fingerprint)
        return {
            "name": self.name,
            "source": self.source,
            "commit": self.commit,
            "generation": self.generation,
            "publishedAt": self.published_at,
            "files": shared,
            "localFiles": len(files) - shared,
            "vectorModel": self.vector_model,
            "vectors": self.vectors,
            "error": self.error,
        }


@dataclass
class SharedLoad:
    """The rows to commit before the first walk (None when the shared index is not usable), and what to tell."""

    source: SharedSource
    delta: Delta | None = None
    warning: str | None = None
    # The published vectors of the delta's chunks, by content hash (empty without this session's model).
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    notice: str | None = None
    # The database did not answer: the session tries again in the background (sync.py).
    unreachable: bool = False


@dataclass(frozen=True)
class _Generation:
    number: int
    commit: str
    prefix: str
    recipe: str
    published_at: str
    vector_model: str | None


def load_shared(root: Path, settings: Settings, state: IndexState) -> SharedLoad:
    """The shared rows of every published file that the session does not already hold with the same fingerprint.

    Never raises for the database: unreachable, empty, or made with other settings, it is one warning, and the
    session indexes locally.
    """
    shared = settings.shared_index
    assert shared is not None
    loaded = SharedLoad(SharedSource(shared.name, describe(shared.url)))
    try:
        _load(root, settings, shared, state, loaded)
    except SharedIndexUnreachable as exc:
        retrying = "; retrying in the background"
        return _unusable(loaded.source, str(exc), root, retrying)
    except RaglsError as exc:
        return _unusable(loaded.source, str(exc), root)
    except Exception as exc:  # psycopg's errors, and whatever else a driver raises: degrade, never fail the run
        detail = redact(f"{type(exc).__name__}: {exc}", shared.url)
        return _unusable(loaded.source, detail, root)
    return loaded


def refresh_shared(root: Path, settings: Settings, state: IndexState) -> tuple[SharedSource, dict[str, np.ndarray]]:
    """Mid-session: the generation nearest to HEAD now, and the published vectors of the chunks still waiting for
    one in files the session holds with the published fingerprint (by chunk id). Never replaces a chunk.

    Raises SharedIndexUnreachable when the database does not answer, SharedIndexError when it cannot be used.
    """
    shared = settings.shared_index
    assert shared is not None
    source = SharedSource(shared.name, describe(shared.url))
    psycopg = import_psycopg()
    connection = connect(shared.url, read_only=True)
    try:
        with connection.transaction():
            generation, files = _nearest(connection, root, settings, shared.name, source)
            vectors: dict[str, np.ndarray] = {}
            model = state.vectors.provider.model if state.vectors is not None else None
            if state.vectors is not None and model is not None and model == generation.vector_model:
                waiting = _waiting_files(files, state, state.vectors.pending_ids())
                try:
                    with connection.transaction():
                        vectors = dict(read_vectors(connection, waiting, model))
                except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedTable):
                    vectors = {}  # told at start; the chunks are embedded locally
            return source, vectors
    except psycopg.OperationalError as exc:
        raise SharedIndexUnreachable(f"the connection was lost ({redact(str(exc), shared.url)})") from exc
    except psycopg.Error as exc:
        raise SharedIndexError(f"reading it failed ({redact(str(exc), shared.url)})") from exc
    finally:
        connection.close()


def _vectors_unreadable(name: str, reason: str) -> str:
    return (
        f"the shared index {name}'s vectors cannot be read ({' '.join(reason.split())}), so its chunks are embedded "
        "here; a reader role needs SELECT on ragls.vectors too"
    )


def _waiting_files(files: dict[str, tuple[Any, ...]], state: IndexState, pending: set[str]) -> list[int]:
    """The published file ids of the files held as published whose chunks still wait for a vector."""
    if not pending:
        return []
    with state.lock.reading():
        return [
            files[path][0]
            for path, record in state.files.items()
            if path in files
            and record.fingerprint == files[path][1]
            and any(chunk_id in pending for chunk_id in record.chunk_ids)
        ]


def _unusable(source: SharedSource, reason: str, root: Path, retrying: str = "") -> SharedLoad:
    source.error = reason
    warning = (
        f"the shared index {source.name} ({source.source}) is not used: {reason}; indexing {root} locally{retrying}"
    )
    return SharedLoad(source, None, warning, unreachable=bool(retrying))


def _nearest(
    connection: psycopg.Connection[Any], root: Path, settings: Settings, name: str, source: SharedSource
) -> tuple[_Generation, dict[str, tuple[Any, ...]]]:
    """The generation nearest HEAD and its files, described in `source` (what `rag/status` shows)."""
    generation = _choose(connection, root, settings, name)
    _describe(source, generation)
    files = _files(connection, name, generation.number)
    source.fingerprints = {path: file[1] for path, file in files.items()}
    return generation, files


def _describe(source: SharedSource, generation: _Generation) -> None:
    source.commit, source.generation = generation.commit, generation.number
    source.published_at, source.vector_model = generation.published_at, generation.vector_model


def _load(root: Path, settings: Settings, shared: SharedIndex, state: IndexState, loaded: SharedLoad) -> None:
    check_name(shared.name)
    psycopg = import_psycopg()
    source = loaded.source
    connection = connect(shared.url, read_only=True)
    try:
        with connection.transaction():
            generation, files = _nearest(connection, root, settings, shared.name, source)
            wanted = {
                path: file
                for path, file in files.items()
                if path not in state.files or state.files[path].fingerprint != file[1]
            }
            loaded.delta = _delta(connection, wanted, state)
            model = state.vectors.provider.model if state.vectors is not None else None
            if model is not None and generation.vector_model == model:
                try:
                    with connection.transaction():  # a savepoint: the chunks stand without their vectors
                        loaded.vectors = _vectors(connection, loaded.delta, wanted, model)
                except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedTable) as exc:
                    loaded.notice = _vectors_unreadable(shared.name, redact(str(exc), shared.url))
                source.vectors = len(loaded.vectors)
            elif model is not None and generation.vector_model is not None:
                loaded.notice = (
                    f"the shared index {shared.name} holds vectors of {generation.vector_model}, and this session "
                    f"embeds with {model}: its chunks are embedded here"
                )
    except psycopg.OperationalError as exc:
        raise SharedIndexUnreachable(f"the connection was lost ({redact(str(exc), shared.url)})") from exc
    except psycopg.Error as exc:
        raise SharedIndexError(f"reading it failed ({redact(str(exc), shared.url)})") from exc
    finally:
        connection.close()


def _choose(connection: psycopg.Connection[Any], root: Path, settings: Settings, name: str) -> _Generation:
    """The generation made with this session's settings, from this folder, whose commit is nearest to HEAD."""
    version = installed_version(connection)
    if version == 0:
        raise SharedIndexError("nothing was ever published to this database (no ragls schema)")
    if version > SCHEMA_VERSION:
        raise SharedIndexError(f"it was published by a newer ragls (schema {version}); upgrade ragls")
    # Schema 1 had no vector_model; a reader may be newer than every publisher of its database.
    vector_model = "vector_model" if version >= 2 else "NULL"
    rows = connection.execute(
        "SELECT generation, commit_id, prefix, recipe, to_char(published_at AT TIME ZONE 'UTC', "
        f'\'YYYY-MM-DD"T"HH24:MI:SS"Z"\'), {vector_model} FROM ragls.generations WHERE name = %s '
        "ORDER BY generation DESC",
        (name,),
    ).fetchall()
    generations = [_Generation(*row) for row in rows]
    if not generations:
        raise SharedIndexError(f"nothing is published as {name!r} in this database")
    recipe = shared_recipe(settings)
    usable = [g for g in generations if g.recipe == recipe]
    if not usable:
        raise SharedIndexError(
            "it was published with other chunking or tokenizer settings (or another ragls version) than this "
            "session's; publish again with these, or use the same settings"
        )
    prefix = folder_prefix(root)
    here = [g for g in usable if g.prefix == prefix]
    if not here:
        raise SharedIndexError(
            f"it was published from the folder {usable[0].prefix or '/'!r} of its repository, and this folder is "
            f"{prefix or '/'!r}; open that folder, or publish this one"
        )
    nearest = nearest_commit(root, [g.commit for g in here])
    return next((g for g in here if g.commit == nearest), here[0])


def _files(connection: psycopg.Connection[Any], name: str, generation: int) -> dict[str, tuple[Any, ...]]:
    """The generation's files: path -> (id, fingerprint, decoded chars, symbols)."""
    rows = connection.execute(
        "SELECT id, path, fingerprint, decoded_chars, n_symbols FROM ragls.files "
        "WHERE name = %s AND born <= %s AND (died IS NULL OR died > %s)",
        (name, generation, generation),
    )
    return {path: (id, fingerprint, chars, symbols) for id, path, fingerprint, chars, symbols in rows}


def _delta(connection: psycopg.Connection[Any], wanted: dict[str, tuple[Any, ...]], state: IndexState) -> Delta:
    """The wanted files' chunks, term counts and symbols, replacing what the session held for those paths."""
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


def _vectors(
    connection: psycopg.Connection[Any], delta: Delta, wanted: dict[str, tuple[Any, ...]], model: str
) -> dict[str, np.ndarray]:
    """The published vectors of the delta's chunks, by content hash: the key the vector stream reuses them by."""
    documents = {document.id: document for document in delta.add}
    file_ids = [file[0] for file in wanted.values()]
    return {
        content_hash(documents[chunk_id]): vector
        for chunk_id, vector in read_vectors(connection, file_ids, model)
        if chunk_id in documents
    }
