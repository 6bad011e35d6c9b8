"""Dense vectors in the shared index: published into pgvector, read by sessions of the same model only, and a
database without pgvector publishing lexically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragls.config import Settings, SharedIndex
from ragls.index.embedding import HashingEmbedding
from ragls.rag.service import RagService
from ragls.rag.shared.publish import PublishOptions, PublishReport
from ragls.rag.shared.publish import publish as publish_index
from tests.shared_index.conftest import Postgres, clone, git
from tests.shared_index.test_shared_index import NAME, QUERIES, publish, rows

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")


class CountingEmbedding(HashingEmbedding):
    """The hashing provider (a deterministic model without weights), counting the chunk texts it embeds."""

    def __init__(self, dims: int = 64) -> None:
        super().__init__(dims)
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        return super().embed(texts)


def publish_dense(root: Path, url: str, provider: CountingEmbedding | None = None) -> PublishReport:
    options = PublishOptions(embedding=provider or CountingEmbedding())
    return publish_index(root, url, NAME, Settings(), options)


def dense_session(root: Path, url: str | None, provider: CountingEmbedding) -> RagService:
    """A session that embeds in the foreground, so its dense stream joins as soon as `embed_pending` returns."""
    settings = Settings(shared_index=SharedIndex(NAME, url)) if url else Settings()
    service = RagService(root, settings, embedding=provider, background_embedding=False)
    service.index_directory()
    service.embed_pending()
    return service


def dense_answers(service: RagService) -> list[list[tuple[str, float]]]:
    return [[(r.document.id, r.score) for r in service.search(q, 10)] for q in QUERIES]


def test_a_reader_of_the_same_model_takes_the_published_vectors_and_ranks_as_local(
    repository: Path, database: str, tmp_path: Path
) -> None:
    report = publish_dense(repository, database)
    assert report.vector_model == "hashing-64" and report.written_vectors == report.chunks > 0
    assert rows(database, "SELECT count(*), min(vector_dims(embedding)) FROM ragls.vectors") == [(report.chunks, 64)]
    workspace = clone(repository, tmp_path / "clone")
    provider = CountingEmbedding()
    service = dense_session(workspace, database, provider)
    local_provider = CountingEmbedding()
    local = dense_session(workspace, None, local_provider)
    try:
        assert provider.texts == 0  # every chunk came with its vector
        assert local_provider.texts == report.chunks
        vectors, shared = service.status().vectors, service.status().shared
        assert vectors is not None and vectors["embedded"] == vectors["total"] == report.chunks
        assert shared is not None and shared["vectorModel"] == "hashing-64" and shared["vectors"] == report.chunks
        assert service.take_notices() == []
        assert dense_answers(service) == dense_answers(local)
    finally:
        service.close()
        local.close()


def test_a_reader_embeds_only_its_edits(repository: Path, database: str, tmp_path: Path) -> None:
    publish_dense(repository, database)
    workspace = clone(repository, tmp_path / "clone")
    (workspace / "pkg" / "module_03.py").write_text("def edited_here():\n    return 'capybara'\n")
    provider = CountingEmbedding()
    service = dense_session(workspace, database, provider)
    try:
        assert provider.texts == 1  # the edited file's one chunk
        assert [r.document.metadata["file"] for r in service.search("capybara", 1)] == ["pkg/module_03.py"]
    finally:
        service.close()


def test_a_reader_with_another_model_never_uses_foreign_vectors(
    repository: Path, database: str, tmp_path: Path
) -> None:
    report = publish_dense(repository, database)
    provider = CountingEmbedding(32)
    service = dense_session(clone(repository, tmp_path / "clone"), database, provider)
    try:
        assert provider.texts == report.chunks  # all embedded here, with its own model
        shared = service.status().shared
        assert shared is not None and shared["vectors"] == 0 and shared["error"] is None
        notices = service.take_notices()
        assert len(notices) == 1 and "hashing-64" in notices[0] and "hashing-32" in notices[0]
    finally:
        service.close()


def test_vectors_are_written_for_what_lacks_them_only(repository: Path, database: str) -> None:
    assert publish(repository, database) == 0  # lexical (RAGLS_EMBEDDING=none): no vectors, no table needed
    assert rows(database, "SELECT vector_model FROM ragls.generations") == [(None,)]
    provider = CountingEmbedding()
    second = publish_dense(repository, database, provider)
    assert (second.written_files, second.written_vectors) == (0, second.chunks)  # the kept files' chunks
    for index in (1, 2, 3):
        path = repository / "pkg" / f"module_{index:02d}.py"
        path.write_text(path.read_text() + f"\n\ndef extra_{index}():\n    return 'narwhal {index}'\n")
    git(repository, "commit", "-qam", "three files")
    provider = CountingEmbedding()
    third = publish_dense(repository, database, provider)
    [(changed_chunks,)] = rows(database, "SELECT sum(n_chunks) FROM ragls.files WHERE born = 3")
    assert third.written_files == 3 and third.written_vectors == changed_chunks == provider.texts
    # The replaced versions' vectors go when pruning removes their chunks; every live chunk has one.
    [(live, covered)] = rows(
        database,
        "SELECT count(*), count(v.file_id) FROM ragls.chunks c JOIN ragls.files f ON f.id = c.file_id "
        "LEFT JOIN ragls.vectors v ON (v.file_id, v.ord) = (c.file_id, c.ord) WHERE f.died IS NULL",
    )
    assert live == covered == third.chunks


def test_without_pgvector_a_publish_is_lexical_with_one_warning(
    repository: Path, database: str, postgres: Postgres, tmp_path: Path
) -> None:
    """A role that owns its database but may not create pgvector (not a trusted extension): what a managed
    database looks like before an administrator enables it."""
    database_name = psycopg.conninfo.conninfo_to_dict(database)["dbname"]
    with psycopg.connect(database, autocommit=True, connect_timeout=10) as connection:
        connection.execute("DROP ROLE IF EXISTS ragls_owner")
        connection.execute("CREATE ROLE ragls_owner LOGIN")
        connection.execute(f'ALTER DATABASE "{database_name}" OWNER TO ragls_owner')
    owner_url = postgres.url(database_name, user="ragls_owner")
    try:
        report = publish_dense(repository, owner_url)
        assert report.vector_model is None and report.written_vectors == 0
        assert len(report.warnings) == 1
        assert "pgvector is not available" in report.warnings[0] and "CREATE EXTENSION vector" in report.warnings[0]
        provider = CountingEmbedding()
        service = dense_session(clone(repository, tmp_path / "clone"), owner_url, provider)
        try:
            shared: Any = service.status().shared
            assert shared["error"] is None and shared["localFiles"] == 0 and shared["vectorModel"] is None
            assert provider.texts == report.chunks  # nothing to take: embedded here, searches as ever
            assert service.search("validate the bearer token", 1)
        finally:
            service.close()
    finally:
        with psycopg.connect(database, autocommit=True, connect_timeout=10) as connection:
            connection.execute(f'ALTER DATABASE "{database_name}" OWNER TO postgres')
            connection.execute("DROP OWNED BY ragls_owner")
            connection.execute("DROP ROLE ragls_owner")


def test_the_cli_publishes_the_bundled_models_vectors_and_a_reader_of_it_embeds_nothing(
    repository: Path, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime", reason="the dense extra is not installed")
    from ragls.embedders import MiniLMProvider, minilm_available

    if not minilm_available():
        pytest.skip("the bundled MiniLM is not installed (ragls[dense])")
    monkeypatch.setenv("RAGLS_EMBEDDING", '{"provider": "minilm", "quantize": false}')
    assert publish(repository, database) == 0
    [(model, chunks)] = rows(database, "SELECT vector_model, chunks FROM ragls.generations")
    assert model == "all-MiniLM-L6-v2-int8" and rows(database, "SELECT count(*) FROM ragls.vectors") == [(chunks,)]
    settings = Settings(shared_index=SharedIndex(NAME, database))
    service = RagService(clone(repository, tmp_path / "clone"), settings, embedding=MiniLMProvider(quantize=False))
    try:
        service.index_directory()
        vectors = service.status().vectors
        assert vectors is not None and vectors["embedded"] == vectors["total"] == chunks  # none left to embed
        found = service.search("check the bearer token of a request", 3)
        assert found and found[0].document.metadata["file"].endswith(".py")
    finally:
        service.close()


def test_a_reader_role_without_select_on_the_vectors_uses_the_chunks_and_embeds_them(
    repository: Path, database: str, postgres: Postgres, tmp_path: Path
) -> None:
    report = publish_dense(repository, database)
    database_name = psycopg.conninfo.conninfo_to_dict(database)["dbname"]
    with psycopg.connect(database, autocommit=True, connect_timeout=10) as connection:
        connection.execute("DROP ROLE IF EXISTS ragls_reader")
        connection.execute("CREATE ROLE ragls_reader LOGIN")
        connection.execute(f'GRANT CONNECT ON DATABASE "{database_name}" TO ragls_reader')
        connection.execute("GRANT USAGE ON SCHEMA ragls TO ragls_reader")
        connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA ragls TO ragls_reader")
        connection.execute("REVOKE SELECT ON ragls.vectors FROM ragls_reader")
    try:
        provider = CountingEmbedding()
        service = dense_session(
            clone(repository, tmp_path / "clone"), postgres.url(database_name, "ragls_reader"), provider
        )
        try:
            shared: Any = service.status().shared
            assert shared["error"] is None and shared["localFiles"] == 0 and shared["vectors"] == 0
            assert service.chunk_calls == 0 and provider.texts == report.chunks
            notices = service.take_notices()
            assert len(notices) == 1 and "SELECT on ragls.vectors" in notices[0] and "permission denied" in notices[0]
        finally:
            service.close()
    finally:
        with psycopg.connect(database, autocommit=True, connect_timeout=10) as connection:
            connection.execute("DROP OWNED BY ragls_reader")
            connection.execute("DROP ROLE ragls_reader")
