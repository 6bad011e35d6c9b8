"""`ragls publish`: write a commit's index as a new generation of a shared index, reusing unchanged files' rows.

Staging (walk, read, chunk, tokenize) runs over the last generation's whole index (its snapshot, else its rows)
before any write and outside any transaction, and the new generation is committed into that index and written
as a snapshot file (snapshots.py); the write is one transaction that adds the changed files' rows (and, with an
embedding provider, the vectors of every chunk that lacks one of its model), marks the replaced ones dead,
records the generation with its snapshot, switches the index to it and prunes old generations. A publish that
fails or is killed at any point leaves the previous generation current and whole: PostgreSQL rolls the
transaction back.
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls.config import Settings
from ragls.index.embedding import EmbeddingProvider
from ragls.model import Document, Progress, Symbol
from ragls.rag.embedding_worker import CoverageCallback
from ragls.rag.generation import Delta, FileRecord, IndexState
from ragls.rag.indexer import Indexer, ProgressCallback
from ragls.rag.shared.database import SharedIndexError, check_name, connect, describe, import_psycopg, migrate, redact
from ragls.rag.shared.git import folder_prefix, head_commit, is_dirty
from ragls.rag.shared.rows import rows_delta
from ragls.rag.shared.snapshots import PublishedSnapshot, download, upload, write_file
from ragls.rag.shared.vectors import StagedVectors, ensure_table, stage_vectors, write_staged_vectors
from ragls.rag.snapshot import SnapshotError

if TYPE_CHECKING:
    import psycopg

DEFAULT_KEEP_GENERATIONS = 3


@dataclass
class PublishReport:
    """What a publish wrote: the generation, its commit, and how much was new."""

    name: str
    generation: int
    commit: str
    files: int
    chunks: int
    written_files: int
    removed_files: int
    pruned_generations: int
    seconds: float
    # Files PostgreSQL's text cannot hold (undecodable name bytes): left out; readers index them locally.
    left_out: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The embedding model whose vectors now cover every chunk (None: published without vectors).
    vector_model: str | None = None
    written_vectors: int = 0
    # The size of the generation's snapshot, and whether the last generation's was the base (False: its rows).
    snapshot_bytes: int = 0
    from_snapshot: bool = False


@dataclass(frozen=True)
class PublishOptions:
    """The commit to record (None: HEAD), how many generations to keep, and the provider whose vectors to write
    (None: a lexical publish)."""

    commit: str | None = None
    keep: int = DEFAULT_KEEP_GENERATIONS
    embedding: EmbeddingProvider | None = None


@dataclass(frozen=True)
class _LiveFile:
    """A file version in the index's current generation."""

    id: int
    fingerprint: str
    decoded_chars: int
    n_symbols: int
    n_chunks: int


@dataclass
class _Plan:
    """What the write transaction does: files to write whole, versions that die, and the new totals."""

    records: dict[str, FileRecord]
    written: list[str]
    dying: list[int]
    documents: dict[str, Document]
    delta: Delta
    left_out: list[str]
    chunks: int = 0


def publish(
    root: Path,
    url: str | None,
    name: str,
    settings: Settings,
    options: PublishOptions | None = None,
    progress: ProgressCallback | None = None,
    embedded: CoverageCallback | None = None,
) -> PublishReport:
    """Publish the folder's index as `name`; raises SharedIndexError (masked) and then nothing was switched.

    `progress` follows the walk, `embedded` the embedding of the chunks that lack a vector.
    """
    started = time.perf_counter()
    options = options or PublishOptions()
    check_name(name)
    if options.keep < 1:
        raise SharedIndexError(f"--keep must be at least 1, got {options.keep}")
    root = root.resolve()
    warnings = []
    commit = options.commit
    if commit is None:
        commit = head_commit(root)
        if commit is None:
            raise SharedIndexError(f"{root} is not in a git repository with a commit; pass --commit ID")
        if is_dirty(root):
            warnings.append(f"{root} has uncommitted or untracked files; they are published as commit {commit[:12]}")
    psycopg = import_psycopg()
    recipe = shared_recipe(settings)
    connection = connect(url, read_only=False)
    try:
        migrate(connection)
        current, live = _load_live(connection, name, recipe)
        state, from_snapshot = _last_generation(connection, name, current, live, settings, recipe)
        plan = _plan(root, settings, state, live, progress)
        staged = _vectors_staged(connection, plan, live, options.embedding, embedded, warnings, url)
        if progress is not None:
            progress(Progress(0, len(plan.records), "", "index"))
        state.commit(_published(plan, state))
        if progress is not None:
            progress(Progress(0, 0, "", "save"))
        with tempfile.TemporaryDirectory(prefix="ragls-publish-") as directory:
            snapshot_file = write_file(state.image(), Path(directory), recipe)
            del state  # the file holds it now
            with connection.transaction():
                where = (commit, folder_prefix(root), recipe)
                generation, pruned, snapshot_bytes = _write(
                    connection, name, current, plan, where, options.keep, staged, snapshot_file
                )
    except psycopg.Error as exc:
        raise SharedIndexError(
            f"publishing {name} to {describe(url)} failed ({redact(str(exc), url)}); "
            "the previous generation is unchanged"
        ) from exc
    finally:
        connection.close()
    return PublishReport(
        name,
        generation,
        commit,
        len(plan.records),
        plan.chunks,
        len(plan.written),
        len(plan.dying) - len([p for p in plan.written if p in live]),
        pruned,
        time.perf_counter() - started,
        plan.left_out,
        warnings,
        staged.model if staged else None,
        staged.written if staged else 0,
        snapshot_bytes,
        from_snapshot,
    )


def shared_recipe(settings: Settings) -> str:
    """What makes published chunks and term counts usable by a reader: the local store's recipe, the same knobs."""
    from ragls.rag.service import _store_recipe

    return _store_recipe(settings)


def _load_live(connection: psycopg.Connection[Any], name: str, recipe: str) -> tuple[int | None, dict[str, _LiveFile]]:
    """The current generation's number and its files made with this recipe (others are written again)."""
    with connection.transaction():
        row = connection.execute("SELECT current_generation FROM ragls.indexes WHERE name = %s", (name,)).fetchone()
        current = row[0] if row else None
        rows = connection.execute(
            "SELECT id, path, fingerprint, decoded_chars, n_symbols, n_chunks FROM ragls.files "
            "WHERE name = %s AND died IS NULL AND recipe = %s",
            (name, recipe),
        )
        live = {
            path: _LiveFile(id, fingerprint, chars, symbols, chunks)
            for id, path, fingerprint, chars, symbols, chunks in rows
        }
    return current, live


def _last_generation(
    connection: psycopg.Connection[Any],
    name: str,
    current: int | None,
    live: dict[str, _LiveFile],
    settings: Settings,
    recipe: str,
) -> tuple[IndexState, bool]:
    """The current generation's whole index, which the new one is staged and committed over, so that its snapshot
    holds every file: the current snapshot where it fits the live files, else their rows; True for the former."""
    from ragls.rag.service import new_state

    state = new_state(settings, None)
    if current is None or not live:
        return state, False
    with connection.transaction():
        row = connection.execute(
            "SELECT snapshot_bytes, snapshot_sha256 FROM ragls.generations WHERE name = %s AND generation = %s",
            (name, current),
        ).fetchone()
        if row is not None and row[0] is not None:
            fingerprints = {path: file.fingerprint for path, file in live.items()}
            try:
                image = download(connection, PublishedSnapshot(name, current, row[0], row[1]), recipe, fingerprints)
            except SnapshotError:
                pass  # rebuilt from the rows below
            else:
                state.install(image)
                return state, True
        wanted = {path: (file.id, file.fingerprint, file.decoded_chars, file.n_symbols) for path, file in live.items()}
        state.commit(rows_delta(connection, wanted, state), count_generation=False)
    return state, False


def _plan(
    root: Path, settings: Settings, state: IndexState, live: dict[str, _LiveFile], progress: ProgressCallback | None
) -> _Plan:
    """Walk and stage the folder as an index run would, over the last generation's index (its files' chunks are
    not re-made where their fingerprints match), and decide what the write transaction writes."""
    delta = Indexer(root, settings).full_run(state, progress, built_as_read=False)[0].delta
    documents = {document.id: document for document in delta.add}
    records: dict[str, FileRecord] = {}
    left_out = []
    for path, record in delta.records.items():
        texts = [path, *(documents[i].content for i in record.chunk_ids if i in documents)]
        if all(_storable(text) for text in texts):
            records[path] = record
        else:
            left_out.append(path)
    written = [p for p, r in records.items() if p not in live or live[p].fingerprint != r.fingerprint]
    written_set = set(written)
    dying = [file.id for path, file in live.items() if path not in records or path in written_set]
    plan = _Plan(records, written, dying, documents, delta, sorted(left_out))
    plan.chunks = sum(len(records[p].chunk_ids) for p in written) + sum(
        live[p].n_chunks for p in records if p not in written_set
    )
    return plan


def _published(plan: _Plan, state: IndexState) -> Delta:
    """The staged delta less the files left out of the rows, so that the snapshot holds what the rows hold; with a
    table of term counts of its own, since a commit takes the counts it indexes and the rows are written after."""
    delta = plan.delta
    left_out = set(plan.left_out)
    left_ids = {i for path in left_out for i in delta.records[path].chunk_ids}
    return Delta(
        remove_ids=delta.remove_ids,
        add=[document for document in delta.add if document.id not in left_ids],
        removed_files=[*delta.removed_files, *(path for path in left_out if path in state.files)],
        records={path: record for path, record in delta.records.items() if path not in left_out},
        symbols=[symbol for symbol in delta.symbols if symbol.file not in left_out],
        symbol_files=[path for path in delta.symbol_files if path not in left_out],
        terms=dict(delta.terms),
        name_terms=delta.name_terms,
        code_terms=delta.code_terms,
        skipped=delta.skipped,
    )


def _vectors_staged(
    connection: psycopg.Connection[Any],
    plan: _Plan,
    live: dict[str, _LiveFile],
    provider: EmbeddingProvider | None,
    progress: CoverageCallback | None,
    warnings: list[str],
    url: str | None,
) -> StagedVectors | None:
    """With a provider, embed (before the write transaction, since it is the slow part) every chunk of the new
    generation that has no vector of its model yet; None for a lexical publish, or where pgvector is missing."""
    if provider is None:
        return None
    problem = ensure_table(connection)
    if problem is not None:
        warnings.append(
            f"pgvector is not available in this database ({redact(problem, url)}), so no vectors are published: "
            "the lexical streams work as before and readers embed locally; a superuser enables it once with "
            "CREATE EXTENSION vector"
        )
        return None
    written = set(plan.written)
    documents = [plan.documents[i] for p in plan.written for i in plan.records[p].chunk_ids]
    return stage_vectors(
        connection, documents, [live[p].id for p in plan.records if p not in written], provider, progress
    )


def _write(
    connection: psycopg.Connection[Any],
    name: str,
    expected_current: int | None,
    plan: _Plan,
    where: tuple[str, str, str],
    keep: int,
    staged: StagedVectors | None,
    snapshot_file: Path,
) -> tuple[int, int, int]:
    """The one write transaction's statements; returns the new generation, how many old ones were pruned and the
    size of its snapshot.

    `where` is the commit, the folder's prefix in its repository, and the recipe.
    """
    commit, prefix, recipe = where
    connection.execute("INSERT INTO ragls.indexes (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))
    row = connection.execute(
        "SELECT current_generation FROM ragls.indexes WHERE name = %s FOR UPDATE", (name,)
    ).fetchone()
    if row is None or row[0] != expected_current:
        raise SharedIndexError(f"another publish of {name} finished while this one was staging; run it again")
    row = connection.execute(
        "SELECT coalesce(max(generation), 0) + 1 FROM ragls.generations WHERE name = %s", (name,)
    ).fetchone()
    generation = int(row[0]) if row else 1
    if plan.dying:
        connection.execute("UPDATE ragls.files SET died = %s WHERE id = ANY(%s)", (generation, plan.dying))
    file_ids = _write_files(connection, name, generation, plan, recipe)
    _write_chunks(connection, _chunk_rows(plan, file_ids))
    _write_symbols(connection, _symbol_rows(plan.delta.symbols, file_ids))
    if staged is not None:
        written_chunks = (
            (file_id, ordinal, plan.documents[chunk_id])
            for path, file_id in file_ids.items()
            for ordinal, chunk_id in enumerate(plan.records[path].chunk_ids)
        )
        write_staged_vectors(connection, staged, written_chunks)
    connection.execute(
        "INSERT INTO ragls.generations (name, generation, commit_id, prefix, recipe, files, chunks, written_files, "
        "vector_model) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            name,
            generation,
            commit,
            prefix,
            recipe,
            len(plan.records),
            plan.chunks,
            len(plan.written),
            staged.model if staged else None,
        ),
    )
    snapshot_bytes, snapshot_sha256 = upload(connection, name, generation, snapshot_file)
    connection.execute(
        "UPDATE ragls.generations SET snapshot_bytes = %s, snapshot_sha256 = %s WHERE name = %s AND generation = %s",
        (snapshot_bytes, snapshot_sha256, name, generation),
    )
    connection.execute(
        "UPDATE ragls.indexes SET current_generation = %s, updated_at = now() WHERE name = %s", (generation, name)
    )
    return generation, _prune(connection, name, keep), snapshot_bytes


def _write_files(
    connection: psycopg.Connection[Any], name: str, generation: int, plan: _Plan, recipe: str
) -> dict[str, int]:
    with connection.cursor() as cursor:
        copy_sql = (
            "COPY ragls.files (name, path, fingerprint, recipe, decoded_chars, n_symbols, n_chunks, born) FROM STDIN"
        )
        with cursor.copy(copy_sql) as copy:
            for path in plan.written:
                record = plan.records[path]
                copy.write_row(
                    (
                        name,
                        path,
                        record.fingerprint,
                        recipe,
                        record.decoded_chars,
                        record.n_symbols,
                        len(record.chunk_ids),
                        generation,
                    )
                )
        rows = cursor.execute("SELECT id, path FROM ragls.files WHERE name = %s AND born = %s", (name, generation))
        ids = {path: id for id, path in rows}
    return {path: ids[path] for path in plan.written}


def _chunk_rows(plan: _Plan, file_ids: dict[str, int]) -> Iterable[tuple[Any, ...]]:
    for path, file_id in file_ids.items():
        for ordinal, chunk_id in enumerate(plan.records[path].chunk_ids):
            document = plan.documents[chunk_id]
            terms = plan.delta.terms[chunk_id]
            metadata = document.metadata_json()
            yield (file_id, ordinal, chunk_id, document.content, metadata, list(terms.terms), list(terms.counts))


def _write_chunks(connection: psycopg.Connection[Any], rows: Iterable[tuple[Any, ...]]) -> None:
    """COPY the chunks of the written files (the seam tests use to kill a publish halfway)."""
    copy_sql = "COPY ragls.chunks (file_id, ord, chunk_id, content, metadata, terms, counts) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(copy_sql) as copy:
        for row in rows:
            copy.write_row(row)


def _symbol_rows(symbols: list[Symbol], file_ids: dict[str, int]) -> Iterable[tuple[Any, ...]]:
    ordinals: dict[str, int] = defaultdict(int)
    for symbol in symbols:
        file_id = file_ids.get(symbol.file)
        if file_id is None:
            continue
        ordinal = ordinals[symbol.file]
        ordinals[symbol.file] += 1
        yield (
            file_id,
            ordinal,
            symbol.name,
            symbol.qualified_name,
            symbol.kind,
            symbol.start_line,
            symbol.end_line,
            symbol.container,
        )


def _write_symbols(connection: psycopg.Connection[Any], rows: Iterable[tuple[Any, ...]]) -> None:
    copy_sql = "COPY ragls.symbols (file_id, ord, name, qualified, kind, start_line, end_line, container) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(copy_sql) as copy:
        for row in rows:
            copy.write_row(row)


def _prune(connection: psycopg.Connection[Any], name: str, keep: int) -> int:
    """Drop generations past the newest `keep`, and the file versions no kept generation sees."""
    row = connection.execute(
        "SELECT generation FROM ragls.generations WHERE name = %s ORDER BY generation DESC OFFSET %s LIMIT 1",
        (name, keep - 1),
    ).fetchone()
    if row is None:
        return 0
    oldest_kept = row[0]
    connection.execute(
        "DELETE FROM ragls.files WHERE name = %s AND died IS NOT NULL AND died <= %s", (name, oldest_kept)
    )
    pruned = connection.execute(
        "DELETE FROM ragls.generations WHERE name = %s AND generation < %s", (name, oldest_kept)
    )
    return pruned.rowcount


def _storable(text: str) -> bool:
    """PostgreSQL text holds valid UTF-8 without NUL; a file name's undecodable bytes are lone surrogates here."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
