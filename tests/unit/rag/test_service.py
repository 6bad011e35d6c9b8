"""RagService: fingerprint reuse, atomic generations, failures that lose nothing, documents."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragls.config import Limits, Settings
from ragls.errors import InvalidArgument, LimitExceeded
from ragls.index.embedding import HashingEmbedding
from ragls.index.knowledge_base import InMemoryKnowledgeBase
from ragls.rag.service import RagService


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


FILES = {
    "a.py": "def alpha_handler(request):\n    return request.alpha\n",
    "b.py": "class BetaStore:\n    def beta_put(self, key):\n        self.items[key] = True\n",
    "docs/c.md": "# Gamma\n\nGamma rays are measured here.\n",
}


class CountingEmbedding(HashingEmbedding):
    """The hashing provider, counting how many texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        return super().embed(texts)


def wait_embedded(service: RagService, timeout: float = 10.0) -> None:
    """Vectors are computed in the background; wait until every chunk has one."""
    deadline = time.monotonic() + timeout
    while (vectors := service.status().vectors) and vectors["embedded"] < vectors["total"]:
        assert time.monotonic() < deadline, vectors
        time.sleep(0.02)


def ids(service: RagService, query: str, k: int = 10) -> list[str]:
    return [r.document.id for r in service.search(query, k)]


def test_unchanged_files_are_neither_rechunked_nor_reembedded(tmp_path: Path) -> None:
    root = write(tmp_path, FILES)
    provider = CountingEmbedding()
    service = RagService(root, embedding=provider)
    service.index_directory()
    assert service.chunk_calls == 3
    wait_embedded(service)
    embedded = provider.texts
    assert embedded == service.status().chunks
    (root / "a.py").write_text("def alpha_handler(request):\n    return request.omega\n")
    (root / "b.py").touch()  # new mtime, same content: read and fingerprinted, not re-chunked
    service.index_directory()
    assert service.chunk_calls == 4
    wait_embedded(service)
    assert provider.texts == embedded + 1
    service.close()
    assert ids(service, "omega") == ["a.py#alpha_handler"]
    assert service.status().generation == 2


def test_clear_hashes_forces_a_full_run(tmp_path: Path) -> None:
    service = RagService(write(tmp_path, FILES))
    service.index_directory()
    service.clear_hashes()
    service.index_directory()
    assert service.chunk_calls == 6


def test_deleted_and_renamed_files_lose_their_chunks(tmp_path: Path) -> None:
    root = write(tmp_path, FILES)
    service = RagService(root)
    service.index_directory()
    (root / "a.py").unlink()
    (root / "b.py").rename(root / "store.py")
    service.index_directory()
    assert ids(service, "alpha_handler") == []
    assert [i.split("#")[0] for i in ids(service, "BetaStore beta_put")] == ["store.py"]
    assert service.status().files == 2


def test_unreadable_file_keeps_its_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write(tmp_path, FILES)
    service = RagService(root)
    service.index_directory()
    (root / "a.py").write_text("def alpha_handler(request):\n    return changed\n")
    real_open = os.open

    def failing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("a.py"):  # the tests run as root, for whom chmod 000 changes nothing
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", failing_open)
    service.index_directory()
    assert ids(service, "alpha_handler request")[0] == "a.py#alpha_handler"
    assert service.status().skipped["unreadable"] == 1


def test_a_failed_commit_rolls_every_store_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write(tmp_path, FILES)
    service = RagService(root)
    service.index_directory()
    before = (service.state.knowledge_base.size(), len(service.state.bm25), ids(service, "gamma alpha beta"))
    (root / "a.py").write_text("def zeta(): pass\n")

    def explode(*args: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(service.state.bm25, "replace_documents", explode)
    with pytest.raises(RuntimeError):
        service.index_directory()
    monkeypatch.undo()
    assert (service.state.knowledge_base.size(), len(service.state.bm25), ids(service, "gamma alpha beta")) == before
    assert service.state.knowledge_base.search("zeta", 5) == []
    status = service.status()
    assert status.state == "failed" and "disk on fire" in (status.error or "")
    assert status.generation == 1


def test_a_limit_breach_fails_the_run_and_keeps_the_previous_generation(tmp_path: Path) -> None:
    root = write(tmp_path, FILES)
    service = RagService(root, Settings(limits=Limits(max_files=3)))
    service.index_directory()
    write(root, {"d.py": "def delta(): pass\n"})
    with pytest.raises(LimitExceeded, match=r"maxFiles.*ragls\.limits\.maxFiles"):
        service.index_directory()
    status = service.status()
    assert status.state == "failed" and "maxFiles" in (status.error or "")
    assert ids(service, "alpha_handler")[0] == "a.py#alpha_handler"
    (root / "d.py").unlink()
    service.index_directory()
    assert service.status().state == "idle" and service.status().error is None


def results(service: RagService, query: str) -> list[tuple[str, float]]:
    return [(r.document.id, round(r.score, 6)) for r in service.search(query, 10)]


def test_a_full_run_built_as_its_files_are_read_answers_as_one_built_at_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large run indexes each file into copies of the stores as it is read (its counts are not all held until the
    commit): the same answers, a run that fails halfway leaves the previous generation, and a rerun catches up."""
    files = {f"pkg/m{i}.py": f"def handler_{i}(request):\n    return request.field_{i % 7}\n" for i in range(40)}
    queries = ("handler_3 request", "field_5", "m12", "return request")
    built, reference = RagService(write(tmp_path / "built", files)), RagService(write(tmp_path / "ref", files))
    monkeypatch.setattr("ragls.rag.generation.STAGE_MIN_DOCUMENTS", 4)
    files_read: list[int] = []
    copied_after: list[int] = []
    staged = InMemoryKnowledgeBase.staged

    def staged_counted(knowledge_base: InMemoryKnowledgeBase, space: Any = None) -> Any:
        copied_after.append(len(files_read))
        return staged(knowledge_base, space)

    monkeypatch.setattr(InMemoryKnowledgeBase, "staged", staged_counted)
    built.index_directory(progress=lambda p: files_read.append(p.indexed_files) if p.phase == "read" else None)
    assert copied_after == [3], "the copies are made with the 4th document staged (before its file is told)"
    monkeypatch.undo()
    reference.index_directory()
    for query in queries:
        assert results(built, query) == results(reference, query)
    for root in (built.root, reference.root):
        assert root is not None
        (root / "pkg/m3.py").write_text("def handler_3(request):\n    return request.renamed\n")
        (root / "pkg/m4.py").unlink()
        write(root, {f"new/n{i}.py": f"def fresh_{i}():\n    return 'fresh'\n" for i in range(10)})
    monkeypatch.setattr("ragls.rag.generation.STAGE_MIN_DOCUMENTS", 4)
    built.settings = Settings(limits=Limits(max_decoded_bytes=2000))
    assert built._indexer is not None
    built._indexer.settings = built.settings
    with pytest.raises(LimitExceeded, match="maxDecodedBytes"):
        built.index_directory()
    assert results(built, "renamed") == [] and ids(built, "m4")[0] == "pkg/m4.py#handler_4"
    built._indexer.settings = built.settings = Settings()
    built.index_directory()
    monkeypatch.undo()
    reference.index_directory()
    for query in (*queries, "renamed", "fresh", "m4 handler_4"):
        assert results(built, query) == results(reference, query)
    assert built.status().files == reference.status().files == 49


def test_searches_never_see_a_mix_of_generations(tmp_path: Path) -> None:
    files = {f"f{i}.py": f"def marker_{i}():\n    return 'marker version0'\n" for i in range(20)}
    root = write(tmp_path, files)
    service = RagService(root)
    service.index_directory()
    mixes: list[set[str]] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            versions = {r.document.content.split("version")[1][0] for r in service.search("marker version", 40)}
            if len(versions) > 1:
                mixes.append(versions)

    thread = threading.Thread(target=reader)
    thread.start()
    for run in range(1, 25):
        write(root, {rel: text.replace("version0", f"version{run % 10}") for rel, text in files.items()})
        service.index_directory()
    stop.set()
    thread.join(timeout=10)
    assert mixes == []


def test_one_changed_file_costs_what_changed(tmp_path: Path) -> None:
    files = {f"pkg{i // 100}/m{i}.py": f"def function_{i}(value):\n    return value + {i}\n" for i in range(5000)}
    root = write(tmp_path, files)
    service = RagService(root, Settings(limits=replace(Limits(), max_files=6000, max_entries=7000)))
    service.index_directory()
    postings = service.state.bm25._postings
    kb_postings = service.state.knowledge_base._postings
    slots_before, kb_slots_before = postings.n_slots, kb_postings.n_slots
    write(root, {"pkg7/m700.py": "def function_700(value):\n    return value * 700\n\ndef extra(): pass\n"})
    summary = service.update_paths(["pkg7/m700.py"])
    assert summary is not None and summary.report.chunked_files == 1
    # The same index objects, grown by the changed file's one chunk (its two small functions are packed
    # together, named by the longer): nothing was rebuilt.
    assert service.state.bm25._postings is postings and service.state.knowledge_base._postings is kb_postings
    assert postings.n_slots == slots_before + 1 and kb_postings.n_slots == kb_slots_before + 1
    assert ids(service, "extra")[0] == "pkg7/m700.py#function_700"


def test_update_paths_handles_create_delete_and_ignored(tmp_path: Path) -> None:
    root = write(tmp_path, {**FILES, ".gitignore": "ignored/\n"})
    service = RagService(root)
    service.index_directory()
    write(root, {"new.py": "def brand_new(): pass\n", "ignored/x.py": "def hidden(): pass\n"})
    (root / "a.py").unlink()
    service.update_paths(["new.py", "ignored/x.py", "a.py", ".#new.py"])
    assert ids(service, "brand_new")[0] == "new.py#brand_new"
    assert ids(service, "hidden") == [] and ids(service, "alpha_handler") == []
    (root / ".gitignore").write_text("")
    service.update_paths([".gitignore"])
    assert ids(service, "hidden")[0] == "ignored/x.py#hidden"


def test_documents_are_listed_searched_and_removed(tmp_path: Path) -> None:
    service = RagService(write(tmp_path, FILES))
    service.index_directory()
    document_id = service.add_document("Deploys happen on Tuesdays " * 10, {"topic": "ops"})
    (info,) = service.list_documents()
    assert info.id == document_id and len(info.preview) == 100 and info.metadata == {"topic": "ops", "source": "manual"}
    assert ids(service, "when do deploys happen")[0] == document_id
    assert service.remove_document(document_id) and not service.remove_document(document_id)
    assert service.status().documents == 0
    service.clear()
    assert service.status().chunks == 0 and service.search("alpha", 5) == []


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.search("", 5), "query"),
        (lambda s: s.search("x", 0), "topK"),
        (lambda s: s.search("x", 101), "topK"),
        (lambda s: s.build_context_prompt("x", 5, "html"), "format"),
        (lambda s: s.add_document("   "), "content"),
    ],
)
def test_bad_arguments_name_the_field(tmp_path: Path, call: Any, field: str) -> None:
    service = RagService(write(tmp_path, FILES))
    with pytest.raises(InvalidArgument) as caught:
        call(service)
    assert caught.value.field == field


def test_the_collector_pause_nests_and_restores() -> None:
    import gc

    from ragls.rag.memory import collector_paused

    assert gc.isenabled()
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
