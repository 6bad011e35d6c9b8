"""The shared index's schema in PostgreSQL, its migrations, connections, and text safe to show (no passwords).

Design: one PostgreSQL schema, `ragls`, for every published index, with a `name` column in its tables (not one
schema per name), so a read-only role needs one grant for all of them and the name is always a query value,
never an identifier. A file's rows are written once per content and reused by later generations: a file
version is visible in generation G when `born <= G` and (`died` is null or `died > G`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ragls.config import shared_index_name_problem
from ragls.errors import RaglsError

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 3
CONNECT_TIMEOUT_SECONDS = 5
# Serializes migrations across publishers (an arbitrary key: "ragls" in ASCII).
MIGRATION_LOCK = 0x7261676C73
_INSTALL_HINT = "pip install 'ragls[postgres]'"

# Migration N takes the schema from version N - 1 to N; a publisher applies the ones it lacks in one transaction.
MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE ragls.indexes (
    name text PRIMARY KEY,
    current_generation bigint,
    updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE ragls.generations (
    name text NOT NULL REFERENCES ragls.indexes (name) ON DELETE CASCADE,
    generation bigint NOT NULL,
    commit_id text NOT NULL,
    prefix text NOT NULL,
    recipe text NOT NULL,
    files integer NOT NULL,
    chunks integer NOT NULL,
    written_files integer NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (name, generation));
CREATE TABLE ragls.files (
    id bigserial PRIMARY KEY,
    name text NOT NULL REFERENCES ragls.indexes (name) ON DELETE CASCADE,
    path text NOT NULL,
    fingerprint text NOT NULL,
    recipe text NOT NULL,
    decoded_chars bigint NOT NULL,
    n_symbols integer NOT NULL,
    n_chunks integer NOT NULL,
    born bigint NOT NULL,
    died bigint);
CREATE INDEX files_by_generation ON ragls.files (name, born, died);
CREATE UNIQUE INDEX files_one_live_version ON ragls.files (name, path) WHERE died IS NULL;
CREATE TABLE ragls.chunks (
    file_id bigint NOT NULL REFERENCES ragls.files (id) ON DELETE CASCADE,
    ord integer NOT NULL,
    chunk_id text NOT NULL,
    content text NOT NULL,
    metadata text NOT NULL,
    terms text[] NOT NULL,
    counts integer[] NOT NULL,
    PRIMARY KEY (file_id, ord));
CREATE TABLE ragls.symbols (
    file_id bigint NOT NULL REFERENCES ragls.files (id) ON DELETE CASCADE,
    ord integer NOT NULL,
    name text NOT NULL,
    qualified text NOT NULL,
    kind text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    container text,
    PRIMARY KEY (file_id, ord));
""",
    # The embedding model whose vectors cover every chunk of a generation (null: published without vectors). The
    # vectors themselves are in `ragls.vectors`, created apart (vectors.py) since it needs pgvector.
    2: "ALTER TABLE ragls.generations ADD COLUMN vector_model text;",
    # The generation as one snapshot file (snapshots.py), for readers that start with nothing: its parts, and
    # the length and SHA-256 a download must add up to. Stored uncompressed: its texts are packed already.
    3: """
ALTER TABLE ragls.generations ADD COLUMN snapshot_bytes bigint, ADD COLUMN snapshot_sha256 text;
CREATE TABLE ragls.snapshots (
    name text NOT NULL,
    generation bigint NOT NULL,
    part integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (name, generation, part),
    FOREIGN KEY (name, generation) REFERENCES ragls.generations (name, generation) ON DELETE CASCADE);
ALTER TABLE ragls.snapshots ALTER COLUMN data SET STORAGE EXTERNAL;
""",
}
assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))


class SharedIndexError(RaglsError):
    """The shared index cannot be used or written; the message names it and never holds a password."""


class SharedIndexUnreachable(SharedIndexError):
    """The database did not answer (down, unreachable, the connection lost): worth trying again later."""


def check_name(name: str) -> str:
    problem = shared_index_name_problem(name)
    if problem is not None:
        raise SharedIndexError(problem)
    return name


def import_psycopg() -> Any:
    """psycopg, imported only where a shared index is used: the default install never loads it."""
    try:
        import psycopg
    except ImportError as exc:
        raise SharedIndexError(f"a shared index needs the postgres extra: {_INSTALL_HINT} ({exc})") from exc
    return psycopg


def connect(url: str | None, read_only: bool) -> psycopg.Connection[Any]:
    """A connection (libpq's environment and files fill in what `url` leaves out); errors say where, masked."""
    psycopg = import_psycopg()
    try:
        connection = psycopg.connect(
            url or "", connect_timeout=CONNECT_TIMEOUT_SECONDS, application_name="ragls", autocommit=False
        )
    except psycopg.Error as exc:
        raise SharedIndexUnreachable(f"cannot connect to {describe(url)}: {redact(str(exc), url)}") from exc
    if read_only:
        connection.read_only = True
        connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    return connection


def migrate(connection: psycopg.Connection[Any]) -> None:
    """Bring the `ragls` schema to SCHEMA_VERSION, one transaction, one migrator at a time; never downgrade.

    A current schema is only read, so a role without CREATE gets to the permission error of its first write.
    """
    with connection.transaction():
        if installed_version(connection) == SCHEMA_VERSION:
            return
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        connection.execute("CREATE SCHEMA IF NOT EXISTS ragls")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS ragls.schema_version ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = installed_version(connection)
        if current > SCHEMA_VERSION:
            raise SharedIndexError(
                f"the shared index schema is version {current}, newer than this ragls knows ({SCHEMA_VERSION}); "
                "upgrade ragls"
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            connection.execute(MIGRATIONS[version])
            connection.execute("INSERT INTO ragls.schema_version (version) VALUES (%s)", (version,))


def installed_version(connection: psycopg.Connection[Any]) -> int:
    """The schema's version, 0 where ragls never migrated this database."""
    exists = connection.execute("SELECT to_regclass('ragls.schema_version') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = connection.execute("SELECT coalesce(max(version), 0) FROM ragls.schema_version").fetchone()
    return int(row[0]) if row else 0


# `user:password@` in a URL, and `password=...` in a URL's query or a key=value connection string.
_URL_PASSWORD = re.compile(r"(://[^/@\s:]*:)[^@\s]*@")
_KEY_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)", re.IGNORECASE)


def mask(url: str) -> str:
    """A connection string with its password replaced by `***`."""
    return _KEY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", url))


def describe(url: str | None) -> str:
    return mask(url) if url else "the database named by libpq's environment (PGHOST, PGSERVICE, ...)"


def redact(message: str, url: str | None) -> str:
    """An error's text without the password of `url`, wherever the driver may have quoted it."""
    text = mask(" ".join(message.split()))  # libpq's messages span lines; a warning is one
    password = _password_of(url)
    # A very short password would mask ordinary words; the URL masks above have already removed it from URLs.
    return text.replace(password, "***") if password and len(password) >= 4 else text


def _password_of(url: str | None) -> str | None:
    if not url:
        return None
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return None
    try:
        value = conninfo_to_dict(url).get("password")
    except Exception:  # an unparsable string holds no password we could find; the masks still apply
        return None
    return str(value) if value else None
