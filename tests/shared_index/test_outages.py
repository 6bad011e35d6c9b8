"""The database going away under a session: retried with backoff in the background, one warning, searches never
wait, and what the session lacked (vectors, the generation in use) arrives once the database is back."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragls.config import Settings, SharedIndex
from ragls.rag.service import RagService
from ragls.rag.shared import sync
from tests.shared_index.conftest import Postgres, clone, git
from tests.shared_index.test_shared_index import NAME
from tests.shared_index.test_vectors import CountingEmbedding, publish_dense

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")

WAIT_SECONDS = 30.0


@pytest.fixture(autouse=True)
def short_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tries after 1 s and 2 s, then every 2 s (a minute at most in use), so the tests wait seconds."""
    monkeypatch.setattr(sync, "RETRY_MAX_SECONDS", 2.0)


def wait_for(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def shared_status(service: RagService) -> dict[str, Any]:
    shared = service.status().shared
    assert shared is not None
    return dict(shared)


def coverage(service: RagService) -> tuple[int, int]:
    vectors = service.status().vectors
    assert vectors is not None
    return vectors["embedded"], vectors["total"]


def session(root: Path, url: str, provider: CountingEmbedding) -> RagService:
    """No background embedder: chunks without a published vector wait, so the test sees where vectors came from."""
    service = RagService(root, Settings(shared_index=SharedIndex(NAME, url)), provider, background_embedding=False)
    service.index_directory()
    return service


def change_three_files(repository: Path) -> list[str]:
    changed = [f"pkg/module_{index:02d}.py" for index in (1, 2, 3)]
    for index, rel_path in enumerate(changed, start=1):
        path = repository / rel_path
        path.write_text(path.read_text() + f"\n\ndef extra_{index}():\n    return 'narwhal {index}'\n")
    git(repository, "commit", "-qam", "three files")
    return changed


def test_a_connection_lost_mid_session_is_retried_with_backoff_and_searches_never_wait(
    repository: Path, database: str, postgres: Postgres, tmp_path: Path
) -> None:
    publish_dense(repository, database)
    workspace = clone(repository, tmp_path / "clone")
    provider = CountingEmbedding()
    service = session(workspace, database, provider)
    try:
        assert shared_status(service)["generation"] == 1 and provider.texts == 0
        changed = change_three_files(repository)
        publish_dense(repository, database)  # CI publishes the new main as generation 2
        postgres.stop()
        try:
            git(workspace, "pull", "-q", "--ff-only")
            service.update_paths(changed)  # the watcher's events after the pull: HEAD moved, so the session asks
            wait_for(lambda: shared_status(service)["error"], "the failed refresh")
            started = time.monotonic()
            found = service.search("narwhal", 3)
            assert time.monotonic() - started < 1.0  # the retries run on their own thread
            assert {r.document.metadata["file"] for r in found} <= set(changed) and found
            notices = service.take_notices()
            assert (
                len(notices) == 1 and "did not answer" in notices[0] and "asked again in the background" in notices[0]
            )
            embedded, total = coverage(service)
            assert embedded < total  # the pulled files' chunks wait for vectors
            time.sleep(3.5)  # a few failed tries: still one warning
            assert service.take_notices() == []
        finally:
            postgres.start()
        wait_for(lambda: shared_status(service)["error"] is None, "the retry once the database is back")
        shared = shared_status(service)
        assert shared["generation"] == 2 and shared["commit"] == git(workspace, "rev-parse", "HEAD")
        assert shared["localFiles"] == 0
        embedded, total = coverage(service)
        assert embedded == total and provider.texts == 0  # generation 2's vectors, none embedded here
        assert service.take_notices() == []
    finally:
        service.close()


def test_a_reader_started_while_the_database_was_down_takes_what_it_lacks_once_it_is_back(
    repository: Path, database: str, postgres: Postgres, tmp_path: Path
) -> None:
    report = publish_dense(repository, database)
    workspace = clone(repository, tmp_path / "clone")
    provider = CountingEmbedding()
    postgres.stop()
    service = None
    try:
        service = session(workspace, database, provider)
        notices = service.take_notices()
        assert len(notices) == 1 and "retrying in the background" in notices[0]
        assert shared_status(service)["files"] == 0 and coverage(service) == (0, report.chunks)
        assert service.search("validate the bearer token", 1)  # lexical, from the local index
    finally:
        postgres.start()
    assert service is not None
    try:
        wait_for(lambda: shared_status(service)["error"] is None, "the retry once the database is back")
        shared = shared_status(service)
        assert (shared["generation"], shared["files"], shared["localFiles"]) == (1, service.status().files, 0)
        assert coverage(service) == (report.chunks, report.chunks) and provider.texts == 0
        assert shared["vectors"] == report.chunks
        assert service.take_notices() == []
    finally:
        service.close()
