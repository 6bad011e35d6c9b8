"""A published generation's snapshot in PostgreSQL: what lets a fresh reader search a large tree within seconds.

From the rows alone a reader builds every index again (on the Linux kernel, minutes). Beside its rows a
publish also writes the generation as the snapshot file a local restart maps (`ragls.rag.snapshot`): its
bytes in parts of PART_BYTES in a bytea column stored uncompressed (the texts are packed already), in the
publish's one transaction, with its length and SHA-256 in the generation's row. A reader downloads it into
a temporary file, checks both, maps it and deletes the file (the mapping keeps its pages); anything wrong
with it is a SnapshotError, and the reader uses the rows instead.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragls.rag import snapshot
from ragls.rag.generation import GenerationImage
from ragls.rag.snapshot import SnapshotError

if TYPE_CHECKING:
    import psycopg

PART_BYTES = 16 << 20
# A reader fetches this many parts per round trip.
FETCH_PARTS = 2
PREFIX = "ragls-shared-"


@dataclass(frozen=True)
class PublishedSnapshot:
    """Where a generation's snapshot is, and what a download must add up to."""

    name: str
    generation: int
    size: int
    sha256: str


def write_file(image: GenerationImage, directory: Path, recipe: str) -> Path:
    """The image as a snapshot file in `directory`, its header naming the recipe its chunks were made with."""
    path = directory / snapshot.SNAPSHOT_FILE
    snapshot.write(path, image, {"recipe": recipe, "shared": True})
    return path


def upload(connection: psycopg.Connection[Any], name: str, generation: int, path: Path) -> tuple[int, str]:
    """COPY the file's bytes as the generation's parts (binary: no hex doubling); its size and SHA-256."""
    digest = hashlib.sha256()
    size = 0
    copy_sql = "COPY ragls.snapshots (name, generation, part, data) FROM STDIN (FORMAT BINARY)"
    with open(path, "rb") as handle, connection.cursor() as cursor, cursor.copy(copy_sql) as copy:
        copy.set_types(["text", "int8", "int4", "bytea"])
        part = 0
        while data := handle.read(PART_BYTES):
            copy.write_row((name, generation, part, data))
            digest.update(data)
            size += len(data)
            part += 1
    return size, digest.hexdigest()


def download(
    connection: psycopg.Connection[Any],
    published: PublishedSnapshot,
    recipe: str,
    fingerprints: Mapping[str, str],
    progress: Callable[[int, int], None] | None = None,
) -> GenerationImage:
    """The published image, its files without stat keys (the reader's walk reads each file once to compare
    fingerprints); `progress` hears the bytes so far of the whole. Raises SnapshotError where the download is
    short, does not match its checksum, is not a snapshot of this format and recipe, or holds other files than
    the generation's rows (`fingerprints`: path -> fingerprint)."""
    handle, name = tempfile.mkstemp(prefix=PREFIX, suffix=".zip")
    path = Path(name)
    try:
        with os.fdopen(handle, "wb") as file:
            _fetch(connection, published, file, progress)
        header = snapshot.read_header(path)
        if header.get("format") not in snapshot.READABLE_FORMATS or header.get("recipe") != recipe:
            raise SnapshotError(
                f"the published snapshot is of format {header.get('format')} and recipe {header.get('recipe')!r}"
            )
        image = snapshot.read(path)
    finally:
        path.unlink(missing_ok=True)  # a mapped array keeps its pages; the name is no longer needed
    if {path: record.fingerprint for path, record in image.files.items()} != fingerprints:
        raise SnapshotError("its files are not the generation's files")
    image.files = {path: replace(record, stat_key=None) for path, record in image.files.items()}
    return image


def _fetch(
    connection: psycopg.Connection[Any],
    published: PublishedSnapshot,
    file: Any,
    progress: Callable[[int, int], None] | None,
) -> None:
    digest = hashlib.sha256()
    size = 0
    with connection.cursor(name="ragls_shared_snapshot", binary=True) as cursor:
        cursor.itersize = FETCH_PARTS
        cursor.execute(
            "SELECT data FROM ragls.snapshots WHERE name = %s AND generation = %s ORDER BY part",
            (published.name, published.generation),
        )
        for (data,) in cursor:
            file.write(data)
            digest.update(data)
            size += len(data)
            if progress is not None:
                progress(size, published.size)
    if size != published.size or digest.hexdigest() != published.sha256:
        raise SnapshotError(
            f"the published snapshot of generation {published.generation} is {size:,} bytes with SHA-256 "
            f"{digest.hexdigest()[:12]}, not the {published.size:,} bytes and {published.sha256[:12]} its "
            "generation names"
        )
