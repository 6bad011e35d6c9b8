"""The team-shared index against a real PostgreSQL: publish, read, parity with local indexing, failures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragls.cli import main
from ragls.config import Settings, SharedIndex
from ragls.rag.service import RagService
from tests.shared_index.conftest import Postgres, clone, git, reader_role

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' (tests/run.sh does)"
)

NAME = "demo"
QUERIES = [
    "validate the bearer token",
    "connection pool acquire",
    "match a route",
    "request handler",
    "cookie session",
    "parse token render",
    "queue cache",
    "Router dispatch",
]


def publish(root: Path, url: str, *extra: str) -> int:
    return main(["publish", str(root), "--to", url, "--name", NAME, "--quiet", *extra])


def reader(root: Path, url: str | None, persist: bool = False) -> RagService:
    settings = Settings(shared_index=SharedIndex(NAME, url)) if url is not None else Settings()
    service = RagService(root, settings, persist=persist)
    service.index_directory()
    return service


def answers(service: RagService) -> list[list[tuple[str, float, str, dict[str, Any]]]]:
    return [
        [(r.document.id, r.score, r.document.content, dict(r.document.metadata)) for r in service.search(q, 10)]
        for q in QUERIES
    ]


def assert_parity(root: Path, shared: RagService) -> None:
    """The reader answers exactly as a local index of the same folder: ids, scores, content, metadata, order."""
    local = reader(root, None)
    try:
        assert answers(shared) == answers(local)
        assert sorted(shared.symbols("", 1000)) == sorted(local.symbols("", 1000))
        assert shared.status().chunks == local.status().chunks
    finally:
        local.close()


def rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, connect_timeout=10) as connection:
        return connection.execute(sql, params).fetchall()


def test_publish_then_a_fresh_clone_reads_it_and_ranks_as_local(
    repository: Path, database: str, tmp_path: Path
) -> None:
    assert publish(repository, database) == 0
    workspace = clone(repository, tmp_path / "clone")
    service = reader(workspace, database)
    try:
        status = service.status()
        assert status.shared is not None and status.shared["error"] is None
        assert status.shared["commit"] == git(repository, "rev-parse", "HEAD")
        assert status.shared["files"] == status.files and status.shared["localFiles"] == 0
        assert service.chunk_calls == 0  # every file was fingerprinted, none chunked
        assert service.take_notices() == []
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_persisted_reader_restarts_from_its_own_store_and_loads_only_what_it_lacks(
    repository: Path, database: str, tmp_path: Path
) -> None:
    assert publish(repository, database) == 0
    workspace = clone(repository, tmp_path / "clone")
    reader(workspace, database, persist=True).close()
    (workspace / "pkg" / "module_04.py").write_text("def edited_locally():\n    return 'ibex'\n")
    service = reader(workspace, database, persist=True)
    try:
        assert service.chunk_calls == 1  # the edit; the rest came from the local store, their rows not fetched
        shared = service.status().shared
        assert shared is not None and shared["localFiles"] == 1
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_second_publish_after_a_commit_changing_three_files_writes_only_those(
    repository: Path, database: str, tmp_path: Path
) -> None:
    assert publish(repository, database) == 0
    [(files_before, chunks_before)] = rows(database, "SELECT count(*), sum(n_chunks) FROM ragls.files")
    for index in (1, 2, 3):
        path = repository / "pkg" / f"module_{index:02d}.py"
        path.write_text(path.read_text() + f"\n\ndef extra_{index}():\n    return 'narwhal {index}'\n")
    git(repository, "commit", "-qam", "three files")
    assert publish(repository, database) == 0
    [(generation, written)] = rows(
        database, "SELECT generation, written_files FROM ragls.generations ORDER BY generation DESC LIMIT 1"
    )
    assert (generation, written) == (2, 3)
    new_files = rows(database, "SELECT path FROM ragls.files WHERE born = 2 ORDER BY path")
    assert [p for (p,) in new_files] == [f"pkg/module_{i:02d}.py" for i in (1, 2, 3)]
    assert rows(database, "SELECT count(*) FROM ragls.files WHERE died = 2") == [(3,)]
    # Unchanged files keep their rows (the first generation's), and both generations are still there.
    assert rows(database, "SELECT count(*) FROM ragls.files WHERE born = 1 AND died IS NULL") == [(files_before - 3,)]
    assert rows(database, "SELECT count(*) FROM ragls.generations") == [(2,)]
    service = reader(clone(repository, tmp_path / "clone"), database)
    try:
        assert service.status().shared["generation"] == 2  # type: ignore[index]
        assert service.search("narwhal", 3)[0].document.metadata["file"].startswith("pkg/module_0")
        assert service.chunk_calls == 0
    finally:
        service.close()
    assert chunks_before > 0


def test_old_generations_are_pruned_with_the_rows_only_they_used(repository: Path, database: str) -> None:
    path = repository / "pkg" / "module_05.py"
    for round in range(4):
        path.write_text(path.read_text() + f"\n# round {round}\n")
        git(repository, "commit", "-qam", f"round {round}")
        assert publish(repository, database, "--keep", "2") == 0
    assert rows(database, "SELECT generation FROM ragls.generations ORDER BY generation") == [(3,), (4,)]
    versions = rows(database, "SELECT born, died FROM ragls.files WHERE path = 'pkg/module_05.py' ORDER BY born")
    assert versions == [(3, 4), (4, None)]


def test_a_reader_sees_its_uncommitted_edit_and_untracked_file(repository: Path, database: str, tmp_path: Path) -> None:
    assert publish(repository, database) == 0
    workspace = clone(repository, tmp_path / "clone")
    edited = workspace / "src" / "db" / "pool.py"
    edited.write_text("class ConnectionPool:\n    def zebraquux(self):\n        return 'drained'\n")
    (workspace / "notes.md").write_text("# Walrusplop\n\nThe walrusplop ritual is untracked.\n")
    service = reader(workspace, database)
    try:
        assert [r.document.metadata["file"] for r in service.search("zebraquux", 3)] == ["src/db/pool.py"]
        assert [r.document.metadata["file"] for r in service.search("walrusplop", 3)] == ["notes.md"]
        old_chunks = [r for r in service.search("acquire connections pop", 10) if "acquire" in r.document.content]
        assert old_chunks == []  # the published chunks of the edited file are gone
        shared = service.status().shared
        assert shared is not None
        assert (shared["files"], shared["localFiles"]) == (service.status().files - 2, 2)
        assert service.chunk_calls == 2
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_reader_on_a_branch_uses_the_published_commit_nearest_its_head(
    repository: Path, database: str, tmp_path: Path
) -> None:
    first = git(repository, "rev-parse", "HEAD")
    assert publish(repository, database) == 0
    (repository / "pkg" / "module_07.py").write_text("def later_on_main():\n    return 'mainline'\n")
    git(repository, "commit", "-qam", "main moves on")
    assert publish(repository, database) == 0
    workspace = clone(repository, tmp_path / "clone")
    git(workspace, "checkout", "-q", "-b", "feature", first)
    (workspace / "pkg" / "feature.py").write_text("def feature_work():\n    return 'branch only'\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "feature")
    service = reader(workspace, database)
    try:
        shared = service.status().shared
        assert shared is not None and shared["commit"] == first and shared["generation"] == 1
        assert shared["localFiles"] == 1
        assert service.chunk_calls == 1
        assert_parity(workspace, service)
    finally:
        service.close()


def test_a_read_only_role_can_read_and_cannot_publish(
    repository: Path, database: str, postgres: Postgres, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert publish(repository, database) == 0
    with reader_role(postgres, database, "ragls_reader") as reader_url:
        service = reader(clone(repository, tmp_path / "clone"), reader_url)
        try:
            shared = service.status().shared
            assert shared is not None and shared["error"] is None and shared["localFiles"] == 0
            assert service.search("validate the bearer token", 1)
        finally:
            service.close()
        capsys.readouterr()
        assert publish(repository, reader_url) == 1
        error = capsys.readouterr().err
        assert "permission denied" in error and "the previous generation is unchanged" in error


def test_a_database_down_at_start_means_local_indexing_and_one_warning(repository: Path, tmp_path: Path) -> None:
    down = f"postgresql://ragls:hunter2-secret@/ragls?host={tmp_path / 'no-server-here'}"
    service = reader(repository, down)
    try:
        notices = service.take_notices()
        assert len(notices) == 1
        assert "indexing" in notices[0] and "locally" in notices[0] and "cannot connect" in notices[0]
        shared = service.status().shared
        assert shared is not None and shared["error"] and shared["files"] == 0
        assert shared["localFiles"] == service.status().files
        for text in (*notices, str(shared)):
            assert "hunter2-secret" not in text
        assert "ragls:***@" in shared["source"]
        assert_parity(repository, service)
    finally:
        service.close()


def test_the_database_stopped_mid_session_changes_nothing_for_a_started_reader(
    repository: Path, database: str, postgres: Postgres, tmp_path: Path
) -> None:
    assert publish(repository, database) == 0
    workspace = clone(repository, tmp_path / "clone")
    service = reader(workspace, database)
    before = answers(service)
    postgres.stop()
    try:
        assert answers(service) == before
        (workspace / "late.py").write_text("def arrived_late():\n    return 'okapi'\n")
        service.update_paths(["late.py"])
        assert [r.document.metadata["file"] for r in service.search("okapi", 1)] == ["late.py"]
    finally:
        postgres.start()
        service.close()


KILLER = """
import os, signal, sys
from ragls.rag.shared import publish as module
original = module._write_chunks
def killed_halfway(connection, rows):
    def some():
        for index, row in enumerate(rows):
            if index == 5:
                os.kill(os.getpid(), signal.SIGKILL)
            yield row
    original(connection, some())
module._write_chunks = killed_halfway
from ragls.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_publish_killed_halfway_leaves_the_previous_generation_whole(
    repository: Path, database: str, tmp_path: Path
) -> None:
    assert publish(repository, database) == 0
    for path in sorted((repository / "pkg").glob("*.py"))[:10]:
        path.write_text(path.read_text() + "\n# touched\n")
    git(repository, "commit", "-qam", "ten files")
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, "publish", str(repository), "--to", database, "--name", NAME, "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    assert rows(database, "SELECT current_generation FROM ragls.indexes") == [(1,)]
    assert rows(database, "SELECT count(*) FROM ragls.files WHERE born > 1 OR died IS NOT NULL") == [(0,)]
    assert rows(database, "SELECT count(*) FROM ragls.generations") == [(1,)]
    git(repository, "checkout", "-q", "HEAD~1")
    service = reader(clone(repository, tmp_path / "clone"), database)
    try:
        assert service.status().shared["generation"] == 1  # type: ignore[index]
        assert service.chunk_calls == 0
    finally:
        service.close()
    git(repository, "checkout", "-q", "main")
    assert publish(repository, database) == 0
    assert rows(
        database,
        "SELECT current_generation, (SELECT written_files FROM ragls.generations "
        "WHERE generation = 2) FROM ragls.indexes",
    ) == [(2, 10)]
