"""A session's start from a shared index: the published generation nearest to HEAD, as a snapshot or a Delta.

Ranking parity by construction: a session that holds nothing yet takes the generation's published snapshot
(snapshots.py), the very arrays a local index of the tree has, and maps them, as a local restart does; a
session that holds an index already (its own store), or where the snapshot cannot be read, takes the rows of
the files it lacks, which go into its own in-memory indexes through `IndexState.commit` with their stored term
counts, like the chunks of a local run. Either way the walk that follows reads every file once, keeps the
shared chunks of the files whose fingerprint matches (no chunking, no tokenizing) and indexes the others
locally. The cost is memory: a reader holds the whole index, as a local session does.
A generation published with this session's embedding model also hands over its chunks' vectors (by content
hash, into the vector stream's cache, before the commit), so unchanged files are never embedded again; vectors
of another model are never used. `refresh_shared` is what the session asks later (sync.py runs it): the
generation nearest to HEAD now, and vectors for chunks still waiting for one; it never replaces a chunk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragls.config import Settings, SharedIndex
from ragls.errors import RaglsError
from ragls.index.vectors import content_hash
from ragls.model import Document
from ragls.rag.generation import Delta, FileRecord, GenerationImage, IndexState
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
from ragls.rag.shared.rows import rows_delta
from ragls.rag.shared.snapshots import PublishedSnapshot, download
from ragls.rag.shared.vectors import read_vectors
from ragls.rag.snapshot import SnapshotError

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)
# How a start reports the snapshot's download: bytes so far, of how many.
DownloadProgress = Callable[[int, int], None]


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
    """What to make searchable before the first walk: the generation's image to install, or rows to commit (both
    None when the shared index is not usable), and what to tell."""

    source: SharedSource
    delta: Delta | None = None
    warning: str | None = None
    # The published vectors of the chunks, by content hash (empty without this session's model).
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    image: GenerationImage | None = None
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
    snapshot_bytes: int | None = None
    snapshot_sha256: str | None = None


def load_shared(
    root: Path, settings: Settings, state: IndexState, progress: DownloadProgress | None = None
) -> SharedLoad:
    """The published generation's snapshot for a session that holds nothing yet, else the shared rows of every
    published file that the session does not already hold with the same fingerprint.

    Never raises for the database: unreachable, empty, or made with other settings, it is one warning, and the
    session indexes locally.
    """
    shared = settings.shared_index
    assert shared is not None
    loaded = SharedLoad(SharedSource(shared.name, describe(shared.url)))
    try:
        _load(root, settings, shared, state, loaded, progress)
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


def _load(
    root: Path,
    settings: Settings,
    shared: SharedIndex,
    state: IndexState,
    loaded: SharedLoad,
    progress: DownloadProgress | None,
) -> None:
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
            if not state.files and generation.snapshot_bytes is not None:
                loaded.image = _published_image(connection, shared, generation, settings, loaded, progress)
            if loaded.image is not None:
                documents = loaded.image.documents
            else:
                loaded.delta = rows_delta(connection, wanted, state)
                documents = loaded.delta.add
            model = state.vectors.provider.model if state.vectors is not None else None
            if model is not None and generation.vector_model == model:
                try:
                    with connection.transaction():  # a savepoint: the chunks stand without their vectors
                        loaded.vectors = _vectors(connection, documents, wanted, model)
                except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedTable) as exc:
                    loaded.notices.append(_vectors_unreadable(shared.name, redact(str(exc), shared.url)))
                source.vectors = len(loaded.vectors)
            elif model is not None and generation.vector_model is not None:
                loaded.notices.append(
                    f"the shared index {shared.name} holds vectors of {generation.vector_model}, and this session "
                    f"embeds with {model}: its chunks are embedded here"
                )
    except psycopg.OperationalError as exc:
        raise SharedIndexUnreachable(f"the connection was lost ({redact(str(exc), shared.url)})") from exc
    except psycopg.Error as exc:
        raise SharedIndexError(f"reading it failed ({redact(str(exc), shared.url)})") from exc
    finally:
        connection.close()


def _published_image(
    connection: psycopg.Connection[Any],
    shared: SharedIndex,
    generation: _Generation,
    settings: Settings,
    loaded: SharedLoad,
    progress: DownloadProgress | None,
) -> GenerationImage | None:
    """The generation's snapshot, checked against its file rows; None, with a notice, where it cannot be used
    (the rows are loaded instead: the same index, slower to build on a large tree)."""
    psycopg = import_psycopg()
    assert generation.snapshot_bytes is not None and generation.snapshot_sha256 is not None
    published = PublishedSnapshot(shared.name, generation.number, generation.snapshot_bytes, generation.snapshot_sha256)
    source_fingerprints = loaded.source.fingerprints  # the generation's file rows, as `_nearest` read them
    try:
        with connection.transaction():  # a savepoint: the rows are read after a refusal
            return download(connection, published, shared_recipe(settings), source_fingerprints, progress)
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedTable, SnapshotError, OSError) as exc:
        reason = redact(str(exc), shared.url)
    loaded.notices.append(
        f"the shared index {shared.name}'s snapshot cannot be used ({reason}), so its rows are loaded and indexed "
        "here instead, which takes longer on a large tree; a reader role needs SELECT on ragls.snapshots too"
    )
    return None


def _choose(connection: psycopg.Connection[Any], root: Path, settings: Settings, name: str) -> _Generation:
    """The generation made with this session's settings, from this folder, whose commit is nearest to HEAD."""
    version = installed_version(connection)
    if version == 0:
        raise SharedIndexError("nothing was ever published to this database (no ragls schema)")
    if version > SCHEMA_VERSION:
        raise SharedIndexError(f"it was published by a newer ragls (schema {version}); upgrade ragls")
    # Schema 1 had no vector_model, 2 no snapshot; a reader may be newer than every publisher of its database.
    vector_model = "vector_model" if version >= 2 else "NULL"
    snapshot = "snapshot_bytes, snapshot_sha256" if version >= 3 else "NULL, NULL"
    rows = connection.execute(
        "SELECT generation, commit_id, prefix, recipe, to_char(published_at AT TIME ZONE 'UTC', "
        f'\'YYYY-MM-DD"T"HH24:MI:SS"Z"\'), {vector_model}, {snapshot} FROM ragls.generations WHERE name = %s '
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


def _vectors(
    connection: psycopg.Connection[Any], documents: list[Document], wanted: dict[str, tuple[Any, ...]], model: str
) -> dict[str, np.ndarray]:
    """The published vectors of the wanted files' chunks, by content hash: the key the vector stream reuses them by."""
    by_id = {document.id: document for document in documents}
    file_ids = [file[0] for file in wanted.values()]
    return {
        content_hash(by_id[chunk_id]): vector
        for chunk_id, vector in read_vectors(connection, file_ids, model)
        if chunk_id in by_id
    }
