"""The published snapshot: a fresh reader maps the generation's arrays instead of rebuilding them from the rows,
a publish builds on the last one, and a snapshot that cannot be used means the rows, with the same answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragls.config import Settings, SharedIndex
from ragls.model import Progress
from ragls.rag.service import RagService
from ragls.rag.shared.publish import PublishReport
from ragls.rag.shared.publish import publish as publish_index
from ragls.rag.shared.snapshots import PART_BYTES
from tests.shared_index.conftest import Postgres, clone, git, reader_role
from tests.shared_index.test_shared_index import NAME, assert_parity, rows

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")


def publish(root: Path, url: str) -> PublishReport:
    return publish_index(root, url, NAME, Settings())


def start_reader(root: Path, url: str) -> tuple[RagService, list[str]]:
    """A reader's first index run, and the phases it reported."""
    phases: list[str] = []

    def progress(report: Progress) -> None:
        if not phases or phases[-1] != report.phase:
            phases.append(report.phase)

    service = RagService(root, Settings(shared_index=SharedIndex(NAME, url)))
    service.index_directory(progress=progress)
    return service, phases


def test_a_publish_writes_its_generation_as_one_snapshot_that_a_fresh_reader_maps(
    repository: Path, database: str, tmp_path: Path
) -> None:
    report = publish(repository, database)
    assert report.snapshot_bytes > 0 and not report.from_snapshot  # the first publish has nothing to build on
    [(size, digest)] = rows(database, "SELECT snapshot_bytes, snapshot_sha256 FROM ragls.generations")
    [(parts, stored)] = rows(database, "SELECT count(*), sum(length(data)) FROM ragls.snapshots")
    assert size == report.snapshot_bytes == stored and len(digest) == 64
    assert parts == -(-size // PART_BYTES)
    workspace = clone(repository, tmp_path / "clone")
    service, phases = start_reader(workspace, database)
    try:
        assert phases[:2] == ["shared", "walk"]  # the download, then the walk that compares fingerprints
        assert service.take_notices() == []
        assert service.chunk_calls == 0
        shared = service.status().shared
        assert shared is not None and shared["localFiles"] == 0 and shared["files"] == service.status().files
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_second_publish_builds_on_the_last_snapshot_and_a_reader_of_it_ranks_as_local(
    repository: Path, database: str, tmp_path: Path
) -> None:
    publish(repository, database)
    for index in (1, 2, 3):
        path = repository / "pkg" / f"module_{index:02d}.py"
        path.write_text(path.read_text() + f"\n\ndef extra_{index}():\n    return 'narwhal {index}'\n")
    (repository / "pkg" / "module_04.py").unlink()
    git(repository, "commit", "-qam", "three files changed, one removed")
    report = publish(repository, database)
    assert report.from_snapshot and report.written_files == 3
    assert rows(database, "SELECT generation FROM ragls.snapshots GROUP BY generation ORDER BY 1") == [(1,), (2,)]
    workspace = clone(repository, tmp_path / "clone")
    service, _ = start_reader(workspace, database)
    try:
        assert service.status().shared["generation"] == 2  # type: ignore[index]
        assert "pkg/module_04.py" not in service.state.files
        assert service.search("narwhal", 3)[0].document.metadata["file"].startswith("pkg/module_0")
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_publish_over_a_generation_without_a_snapshot_builds_on_its_rows(
    repository: Path, database: str, tmp_path: Path
) -> None:
    publish(repository, database)
    with psycopg.connect(database, connect_timeout=10) as connection:  # as a generation of an older ragls
        connection.execute("DELETE FROM ragls.snapshots")
        connection.execute("UPDATE ragls.generations SET snapshot_bytes = NULL, snapshot_sha256 = NULL")
    path = repository / "pkg" / "module_06.py"
    path.write_text(path.read_text() + "\n\ndef walrus():\n    return 'walrus'\n")
    git(repository, "commit", "-qam", "one file")
    report = publish(repository, database)
    assert not report.from_snapshot and report.written_files == 1 and report.snapshot_bytes > 0
    workspace = clone(repository, tmp_path / "clone")
    service, phases = start_reader(workspace, database)
    try:
        assert "shared" in phases
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_damaged_snapshot_means_the_rows_one_notice_and_the_same_answers(
    repository: Path, database: str, tmp_path: Path
) -> None:
    publish(repository, database)
    with psycopg.connect(database, connect_timeout=10) as connection:
        connection.execute("UPDATE ragls.snapshots SET data = 'damaged'::bytea WHERE part = 0")
    workspace = clone(repository, tmp_path / "clone")
    service, _ = start_reader(workspace, database)
    try:
        [notice] = service.take_notices()
        assert "snapshot cannot be used" in notice and "SHA-256" in notice and "rows are loaded" in notice
        assert service.chunk_calls == 0  # the rows, not a local index
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_reader_role_without_select_on_the_snapshots_uses_the_rows(
    repository: Path, database: str, postgres: Postgres, tmp_path: Path
) -> None:
    publish(repository, database)
    revoked = "REVOKE SELECT ON ragls.snapshots FROM ragls_rows_reader"
    with reader_role(postgres, database, "ragls_rows_reader", revoked) as url:
        workspace = clone(repository, tmp_path / "clone")
        service, _ = start_reader(workspace, url)
        try:
            [notice] = service.take_notices()
            assert "permission denied" in notice and "SELECT on ragls.snapshots" in notice
            shared = service.status().shared
            assert shared is not None and shared["error"] is None and shared["localFiles"] == 0
            assert_parity(workspace, service)
        finally:
            service.close()
