"""The suite never writes to the user's real cache: a session with default settings stores under the tests'."""

from __future__ import annotations

from pathlib import Path

from ragls.config import Settings
from ragls.rag.service import RagService
from ragls.rag.store import store_path
from tests.conftest import TEST_CACHE_HOME


def test_a_default_session_persists_under_the_tests_cache(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def cached_somewhere_safe():\n    return 1\n", encoding="utf-8")
    service = RagService(tmp_path, Settings(), persist=True)
    service.index_directory()
    service.close()
    stored = store_path(Settings().cache_dir, tmp_path.resolve())
    assert stored.is_relative_to(TEST_CACHE_HOME) and stored.exists()
    assert not stored.is_relative_to(Path.home() / ".cache")
