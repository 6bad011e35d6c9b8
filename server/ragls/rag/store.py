"""A session's index on disk (SQLite, WAL): restarts load it at once and re-ingest only what changed.

Each committed generation is written in one transaction, so a crash at any moment leaves
either the previous generation or the new one. The store holds chunks, the file table with
fingerprints and stat keys (so the walk after a restart reads only files that changed), and the
symbols. Not the chunks' term counts: the snapshot holds the index, and loading from the rows alone
(a snapshot behind them) tokenizes again, which kept a whole run's counts out of memory until its
save and a third of the Linux kernel's rows off the disk. A chunk's text is stored as its document
holds it (`ragls.packing`): compressed bytes in a BLOB, or plain text where that is smaller.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from ragls.config import cache_root
from ragls.model import Document, Symbol
from ragls.rag import snapshot
from ragls.rag.generation import Delta, FileRecord, GenerationImage, SkippedFile

SCHEMA_VERSION = "4"  # 4: chunk texts packed
# Stores this version loads as they are: schema 3's rows differ only in holding every text plain, which a
# document packs as it is made; the next save marks the store 4 (its old rows stay plain until rewritten).
READABLE_SCHEMAS = frozenset({"3", SCHEMA_VERSION})
STORE_FILE = "index.sqlite3"
# Written into every store directory ragls creates: the cache directory is a setting and may hold other folders,
# so listing and cleanup touch only directories that carry it (or a legacy store's own index) under their digest.
MARKER_FILE = "ragls-store.json"
MARKER_FORMAT = "1"
_SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")
_DIGEST_CHARS = 20
_DIGEST_NAME = re.compile(f"[0-9a-f]{{{_DIGEST_CHARS}}}")
# How text that is not valid Unicode (a file name's undecodable bytes) is kept: reversibly, as its code points.
_SURROGATES = "surrogatepass"
ROWS_PER_BATCH = 256  # about a millisecond of work between chances for searches to go first
log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, mtime_ns INTEGER, size INTEGER, inode INTEGER,
    decoded_chars INTEGER NOT NULL, n_symbols INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, file TEXT, content BLOB NOT NULL, metadata TEXT NOT NULL);
-- chunks.content: a packed text's bytes, or TEXT where it is kept plain (declared TEXT before schema 4).
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (file);
CREATE TABLE IF NOT EXISTS symbols (
    file TEXT NOT NULL, name TEXT NOT NULL, qualified TEXT NOT NULL, kind TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, container TEXT);
CREATE INDEX IF NOT EXISTS symbols_by_file ON symbols (file);
CREATE TABLE IF NOT EXISTS vectors (
    hash TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (hash, model));
CREATE TABLE IF NOT EXISTS skipped_files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, inode INTEGER NOT NULL,
    reason TEXT NOT NULL);
"""


class StoreError(Exception):
    """The store on disk is unreadable or corrupt; it is reported once and rebuilt."""


@dataclass
class StoredIndex:
    """What a store held: a snapshot's image when one is current, else a delta that recreates it."""

    delta: Delta | None
    image: GenerationImage | None
    generation: int
    committed_at: str | None
    manual_ids: list[str]
    skipped: dict[str, SkippedFile]

    def rows(self) -> Delta:
        """A delta that writes this generation into an empty store: how the rows behind a snapshot that were
        found damaged are rebuilt from the generation in memory, with nothing read again."""
        if self.image is None:
            assert self.delta is not None
            return self.delta
        delta = self.image.as_delta()
        delta.skipped = dict(self.skipped)
        return delta


@dataclass(frozen=True)
class StoreInfo:
    """One store in the cache directory, for `ragls cache list`."""

    path: Path
    folder: str
    exists: bool
    bytes: int
    generation: int
    files: int
    chunks: int
    committed_at: str | None


def store_path(cache_dir: str | Path | None, root: Path) -> Path:
    """Where a folder's store lives: `<cache dir>/<hash of the folder path>/index.sqlite3`."""
    return cache_root(cache_dir) / _digest(str(root.resolve())) / STORE_FILE


def delete_store(directory: Path) -> None:
    """Delete the files ragls writes in a store directory, then the directory if nothing else is left.

    Never a recursive delete: anything else in there is not ours to remove.
    """
    for path in _written_files(directory):  # the marker last, so a half-done delete is still found as a store
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not delete %s: %s", path, exc)
    with contextlib.suppress(OSError):
        directory.rmdir()  # fails, and keeps it, when other files are there


class IndexStore:
    """One folder's store. `recipe` names everything that makes stored chunks reusable."""

    def __init__(self, path: Path, root: Path, recipe: str) -> None:
        self.path = path
        self.root = root
        self.recipe = recipe
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        # A fresh random token per save: a snapshot is current only when it names the same one, so a
        # snapshot can never be mistaken for a store that was cleared and rebuilt since it was written.
        self.revision: str | None = None
        self.snapshot_revision: str | None = None
        # Problems a load worked around (a damaged snapshot) that the user should hear about.
        self.notices: list[str] = []

    @property
    def snapshot_path(self) -> Path:
        return self.path.parent / snapshot.SNAPSHOT_FILE

    def load(self) -> StoredIndex | None:
        """The stored generation, or None when there is none (or it was made by another recipe).

        The pages are checked here only when the rows are read. Behind a current snapshot they are not, and the
        check (2 s on the Linux kernel's 1 GB store with a warm page cache, 32 s cold) is left to `damage`, which
        the session runs after the load, off the restart's path.
        """
        if not self.path.exists():
            return None
        try:
            with self._lock:
                connection = self._connect()
                meta = _read_meta(connection)
                if not meta:
                    # Every save writes meta with its rows: a store without it was cut short or emptied.
                    raise StoreError(f"the index store {self.path} is damaged (it holds no index); rebuilding it")
                if meta.get("schema") not in READABLE_SCHEMAS:
                    raise StoreError(f"the index store {self.path} was made by another version of ragls; rebuilding it")
                if meta.get("recipe") != self.recipe:
                    log.info("index store %s was made with other chunking settings; rebuilding", self.path)
                    self._reset(connection)
                    return None
                if meta.get("folder") != str(self.root):
                    raise StoreError(f"{self.path} belongs to {meta.get('folder')!r}, not {self.root}")
                self.revision = meta.get("revision")
                image = self._current_snapshot()
                if image is not None:
                    delta, generation, committed_at = None, image.generation, image.committed_at
                else:
                    _check_pages(connection, self.path)
                    delta, generation = _read_delta(connection), int(meta.get("generation", "0"))
                    committed_at = meta.get("committedAt") or None
                return StoredIndex(
                    delta,
                    image,
                    generation,
                    committed_at,
                    json.loads(meta.get("manualIds", "[]")),
                    _read_skipped(connection),
                )
        except StoreError:
            raise
        except (sqlite3.DatabaseError, ValueError, KeyError, TypeError) as exc:
            raise _load_error(self.path, exc) from exc

    def damage(self) -> str | None:
        """What is wrong with the store's pages, as the notice to tell the user, or None when they are sound.

        On a connection of its own, read-only: the session's connection stays free for vectors meanwhile.
        """
        try:
            with contextlib.closing(sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True)) as connection:
                _check_pages(connection, self.path)
        except StoreError as exc:
            return str(exc)
        except sqlite3.DatabaseError as exc:
            return f"the index store {self.path} is damaged ({exc}); rebuilding it"
        return None

    def save(
        self,
        delta: Delta,
        generation: int,
        committed_at: str | None,
        manual_ids: set[str],
        between_batches: Callable[[], None] = lambda: None,
    ) -> None:
        """Write one committed delta and the generation number in a single transaction.

        `between_batches` runs after every few hundred rows: the session uses it to let searches go first.
        """
        with self._lock:
            connection = self._connect()
            with connection:
                _write(connection, delta, between_batches)
                revision = uuid.uuid4().hex
                meta = {
                    "schema": SCHEMA_VERSION,
                    "recipe": self.recipe,
                    "folder": _db_text(str(self.root)),
                    "revision": revision,
                    "generation": str(generation),
                    "committedAt": committed_at or "",
                    "manualIds": json.dumps(sorted(manual_ids)),
                }
                connection.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", meta.items())
            self.revision = revision

    def discard_snapshot(self) -> None:
        """Delete the snapshot file; loading then uses the SQLite rows until a new one is written."""
        self.snapshot_path.unlink(missing_ok=True)
        self.snapshot_revision = None

    @property
    def snapshot_is_current(self) -> bool:
        return self.revision is not None and self.snapshot_revision == self.revision

    def write_snapshot(self, image: GenerationImage, revision: str) -> None:
        """Save a generation for fast loading; `revision` is the store's revision when it was copied."""
        self._make_directory()
        snapshot.write(self.snapshot_path, image, self._snapshot_header(revision))
        self.snapshot_revision = revision

    def _snapshot_header(self, revision: str | None) -> dict[str, str | None]:
        """What a snapshot must name to be used with this store (the snapshot adds its own format)."""
        return {"schema": SCHEMA_VERSION, "recipe": self.recipe, "folder": str(self.root), "revision": revision}

    def _current_snapshot(self) -> GenerationImage | None:
        """The snapshot's image when it matches this store's revision and recipe; a bad one is removed."""
        path = self.snapshot_path
        if not path.exists():
            return None
        try:
            header = snapshot.read_header(path)
            expected = self._snapshot_header(self.revision)
            readable = header.get("format") in snapshot.READABLE_FORMATS
            if not readable or {key: header.get(key) for key in expected} != expected:
                return None
            image = snapshot.read(path)
        except snapshot.SnapshotError as exc:
            self.notices.append(f"{exc}; loading the index from {self.path.name} instead")
            log.warning("%s", self.notices[-1])
            self.discard_snapshot()
            return None
        self.snapshot_revision = self.revision
        return image

    def save_vectors(self, model: str, items: list[tuple[str, np.ndarray]]) -> None:
        """Keep computed vectors by content hash and model; they survive restarts and branch switches."""
        with self._lock:
            connection = self._connect()
            with connection:
                connection.executemany(
                    "INSERT OR REPLACE INTO vectors (hash, model, vector) VALUES (?, ?, ?)",
                    ((key, model, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in items),
                )

    def load_vectors(self, model: str) -> dict[str, np.ndarray]:
        """Every stored vector of one model; vectors of other models never mix in."""
        try:
            with self._lock:
                rows = self._connect().execute("SELECT hash, vector FROM vectors WHERE model = ?", (model,))
                return {key: np.frombuffer(blob, dtype=np.float32) for key, blob in rows}
        except sqlite3.DatabaseError as exc:  # read before the pages are checked: damage shows here first
            raise _load_error(self.path, exc) from exc

    def discard(self) -> None:
        """Delete the store (a corrupt one, or on `clear`)."""
        with self._lock:
            self.close_locked()
            delete_store(self.path.parent)

    def close(self) -> None:
        with self._lock:
            self.close_locked()

    def close_locked(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self._make_directory()
            connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(_SCHEMA)
            connection.isolation_level = "DEFERRED"
            self._connection = connection
        return self._connection

    def _make_directory(self) -> None:
        """The store directory with its marker (added to a legacy store too), so cleanups know it is ours."""
        directory = self.path.parent
        if (directory / MARKER_FILE).is_file():
            return
        directory.mkdir(parents=True, exist_ok=True)
        marker = {"format": MARKER_FORMAT, "folder": str(self.root.resolve())}
        (directory / MARKER_FILE).write_text(json.dumps(marker), encoding="utf-8")

    def _reset(self, connection: sqlite3.Connection) -> None:
        with connection:
            for table in ("meta", "files", "chunks", "symbols", "vectors", "skipped_files"):
                connection.execute(f"DELETE FROM {table}")
        self.discard_snapshot()
        self.revision = None


def _chunk_row(document: Document) -> tuple[Any, ...]:
    """A document's row; a saved document's metadata is parsed for its file without keeping the parse."""
    metadata = document.passing_metadata()
    file = _db_text(metadata.get("file")) if metadata.get("source") == "file" else None
    return (_db_text(document.id), file, document.packed_content, document.metadata_json())


def _write(connection: sqlite3.Connection, delta: Delta, between_batches: Callable[[], None]) -> None:
    def write(sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        iterator = iter(rows)
        while batch := list(islice(iterator, ROWS_PER_BATCH)):
            connection.executemany(sql, batch)
            between_batches()

    write("DELETE FROM chunks WHERE id = ?", ((_db_text(i),) for i in delta.remove_ids))
    write("INSERT OR REPLACE INTO chunks (id, file, content, metadata) VALUES (?, ?, ?, ?)", map(_chunk_row, delta.add))
    touched = [*delta.removed_files, *delta.symbol_files]
    write("DELETE FROM symbols WHERE file = ?", ((_db_text(f),) for f in touched))
    write(
        "INSERT INTO symbols (file, name, qualified, kind, start_line, end_line, container) VALUES (?,?,?,?,?,?,?)",
        (
            (_db_text(s.file), s.name, s.qualified_name, s.kind, s.start_line, s.end_line, s.container)
            for s in delta.symbols
        ),
    )
    write("DELETE FROM files WHERE path = ?", ((_db_text(f),) for f in delta.removed_files))
    write(
        "DELETE FROM skipped_files WHERE path = ?",
        ((_db_text(f),) for f in {*delta.skipped, *delta.records, *delta.removed_files}),
    )
    write(
        "INSERT INTO skipped_files (path, mtime_ns, size, inode, reason) VALUES (?, ?, ?, ?, ?)",
        ((_db_text(path), *s.stat_key, s.reason) for path, s in delta.skipped.items() if s is not None),
    )
    write(
        "INSERT OR REPLACE INTO files (path, fingerprint, mtime_ns, size, inode, decoded_chars, n_symbols) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            (_db_text(path), r.fingerprint, *(r.stat_key or (None, None, None)), r.decoded_chars, r.n_symbols)
            for path, r in delta.records.items()
        ),
    )


def _db_text(text: str | None) -> str | bytes | None:
    """Text as SQLite takes it. A file name's undecodable bytes are lone surrogates in Python (`bad\\udcff.py`),
    which sqlite3 cannot encode: such a string is stored as its bytes (a BLOB), and `_text` turns it back."""
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", _SURROGATES)
    return text


def _text(value: str | bytes) -> str:
    """What `_db_text` stored, as the string it was given."""
    return value.decode("utf-8", _SURROGATES) if isinstance(value, bytes) else value


def _check_pages(connection: sqlite3.Connection, path: Path) -> None:
    """Raise StoreError for damaged pages, so they are found once, not later in a search or a save that fails
    (43 ms for Django's 88 MB store)."""
    damage = connection.execute("PRAGMA quick_check").fetchone()[0]
    if damage != "ok":
        raise StoreError(f"the index store {path} is damaged ({damage}); rebuilding it")


def _load_error(path: Path, exc: Exception) -> StoreError:
    """Why a store could not be loaded. Behind a current snapshot its pages are read before they are checked, so
    a damaged one fails a read (SQLITE_CORRUPT): that is told as damage, as the check would have told it."""
    if isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_CORRUPT:
        return StoreError(f"the index store {path} is damaged ({exc}); rebuilding it")
    return StoreError(f"the index store {path} is unreadable ({exc}); rebuilding it")


def _read_meta(connection: sqlite3.Connection) -> dict[str, str]:
    return {key: _text(value) for key, value in connection.execute("SELECT key, value FROM meta")}


def _read_delta(connection: sqlite3.Connection) -> Delta:
    """The stored generation's rows as one delta that recreates it."""
    delta = Delta()
    chunk_ids: dict[str, list[str]] = {}
    for chunk_id, file, content, metadata in connection.execute(
        "SELECT id, file, content, metadata FROM chunks ORDER BY rowid"
    ):
        chunk_id = _text(chunk_id)
        delta.add.append(Document.from_packed(chunk_id, content, json.loads(metadata)))
        if file is not None:
            chunk_ids.setdefault(_text(file), []).append(chunk_id)
    for path, fingerprint, mtime_ns, size, inode, decoded_chars, n_symbols in connection.execute(
        "SELECT path, fingerprint, mtime_ns, size, inode, decoded_chars, n_symbols FROM files"
    ):
        stat_key = (mtime_ns, size, inode) if mtime_ns is not None else None
        path = _text(path)
        delta.records[path] = FileRecord(fingerprint, stat_key, chunk_ids.get(path, []), decoded_chars, n_symbols)
    for file, name, qualified, kind, start_line, end_line, container in connection.execute(
        "SELECT file, name, qualified, kind, start_line, end_line, container FROM symbols"
    ):
        delta.symbols.append(Symbol(name, qualified, kind, _text(file), start_line, end_line, container))
    delta.symbol_files = list(delta.records)
    return delta


def _read_skipped(connection: sqlite3.Connection) -> dict[str, SkippedFile]:
    rows = connection.execute("SELECT path, mtime_ns, size, inode, reason FROM skipped_files")
    return {_text(path): SkippedFile((mtime_ns, size, inode), reason) for path, mtime_ns, size, inode, reason in rows}


def list_stores(cache_dir: str | Path | None = None) -> list[StoreInfo]:
    """Every store in the cache directory, with the folder it indexes and whether that still exists."""
    base = cache_root(cache_dir)
    try:
        directories = sorted(base.iterdir())
    except OSError:
        return []
    infos = []
    for directory in directories:
        folder = _store_folder(directory)
        if folder is not None:
            infos.append(_info(directory, folder))
    return infos


def remove_stale_stores(cache_dir: str | Path | None = None) -> list[StoreInfo]:
    """Delete stores whose folder no longer exists; returns what was removed."""
    removed = []
    for info in list_stores(cache_dir):
        if not info.exists:
            delete_store(info.path.parent)
            removed.append(info)
    return removed


def _digest(folder: str) -> str:
    return hashlib.sha256(folder.encode("utf-8", _SURROGATES)).hexdigest()[:_DIGEST_CHARS]


def _written_files(directory: Path) -> list[Path]:
    """The files ragls writes in a store directory, the marker last."""
    sqlite_files = [directory / f"{STORE_FILE}{suffix}" for suffix in _SQLITE_SUFFIXES]
    return [*sqlite_files, *snapshot.written_files(directory), directory / MARKER_FILE]


def _store_folder(directory: Path) -> str | None:
    """The folder a cache subdirectory is the store of, or None where ragls did not make it."""
    # Only a directory named like a digest is looked into at all; a symlinked one is never followed.
    if not _DIGEST_NAME.fullmatch(directory.name) or directory.is_symlink() or not directory.is_dir():
        return None
    for read_folder in (_marker_folder, _legacy_folder):
        folder = read_folder(directory)
        if folder is not None and _digest(folder) == directory.name:
            return folder
    return None


def _marker_folder(directory: Path) -> str | None:
    path = directory / MARKER_FILE
    if path.is_symlink() or not path.is_file():
        return None
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    folder = marker.get("folder") if isinstance(marker, dict) else None
    return folder if isinstance(folder, str) else None


def _legacy_folder(directory: Path) -> str | None:
    """A store from before the marker: its own index names the folder."""
    path = directory / STORE_FILE
    if not path.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as connection:
            row = connection.execute("SELECT value FROM meta WHERE key = 'folder'").fetchone()
    except sqlite3.Error:
        return None
    return _text(row[0]) if row and isinstance(row[0], (str, bytes)) else None


def _info(directory: Path, folder: str) -> StoreInfo:
    path = directory / STORE_FILE
    size = sum(_size(p) for p in _written_files(directory))
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as connection:
            meta: dict[str, Any] = _read_meta(connection)
            files = connection.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            chunks = connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    except sqlite3.Error:
        meta, files, chunks = {}, 0, 0
    return StoreInfo(
        path,
        folder,
        Path(folder).is_dir(),
        size,
        int(meta.get("generation", 0) or 0),
        files,
        chunks,
        meta.get("committedAt") or None,
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0
