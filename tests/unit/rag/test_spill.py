"""A large run's documents wait on disk (`SpillFile`): read back as they were, by every store alike."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ragls.config import Settings
from ragls.index.columns import Column
from ragls.model import Document, SavedDocument
from ragls.rag import spill as spill_module
from ragls.rag.service import RagService
from ragls.rag.spill import MappedArrays, SpillFile
from tests.unit.rag.resident import SMAPS, resident_kb


def test_spilled_documents_read_back_as_they_were(tmp_path: Path) -> None:
    spill = SpillFile(tmp_path / "store")
    long_text = "def handler(request):\n    return request.field\n" * 20
    documents = [
        Document("a.py#handler", long_text, {"file": "a.py", "startLine": 1, "alsoDefines": ["x", "y"]}),
        Document("b.py", "short = 1", {"file": "b.py"}),
        Document("bad\udcff.py", "name = '\udcff'", {"file": "bad\udcff.py"}),
    ]
    assert isinstance(documents[0].packed_content, bytes) and isinstance(documents[1].packed_content, str)
    embedded = Document("c.py", "vector = 2", {"file": "c.py"}, embedding=(0.5, 0.5))
    spilled = spill.spilled([*documents, embedded])
    assert [type(d) for d in spilled] == [SavedDocument, SavedDocument, SavedDocument, Document]
    assert spilled[3] is embedded, "a document with an embedding stays as it is"
    for before, after in zip(documents, spilled, strict=False):
        assert after.id == before.id
        assert after.content == before.content
        assert after.packed_content == before.packed_content
        assert dict(after.metadata) == dict(before.metadata)
        assert after.metadata_json() == before.metadata_json()
    more = spill.spilled([Document("d.py", "later = 3" * 30, {"file": "d.py"}), spilled[0]])
    assert more[1] is spilled[0], "a document already read from a file is not written again"
    assert more[0].content == "later = 3" * 30 and spilled[2].content == "name = '\udcff'"
    assert spill.rows == 4
    assert os.listdir(tmp_path / "store") == [], "the spill file has no name: nothing is left behind"


@pytest.mark.skipif(not spill_module.SPILL_SUPPORTED or not SMAPS.exists(), reason="pages are mapped and read on Linux")
def test_mapped_arrays_read_the_same_once_their_pages_are_released_and_grow_in_place(tmp_path: Path) -> None:
    space = MappedArrays(tmp_path / "store")
    values = space.empty(100_000, np.int32)
    assert spill_module.is_mapped(values)
    values[:] = np.arange(100_000)
    assert resident_kb(values) > 0
    space.release(values)
    assert resident_kb(values) == 0, "the pages went back to the system"
    assert bool((values == np.arange(100_000)).all()), "and the values are read back from the page cache"
    grown = space.regrown(values, 250_000)
    assert grown is not None and len(grown) == 250_000
    assert bool((grown[:100_000] == np.arange(100_000)).all())
    grown[100_000:] = 7
    assert bool((values == np.arange(100_000)).all()), "an earlier view sees what it saw"
    small = space.empty(16, np.int32)
    small[:] = 3
    space.release(small)
    assert not spill_module.is_mapped(small) and small.tolist() == [3] * 16, "memory is left as it is"
    in_memory = np.arange(50_000)
    space.release(in_memory)
    assert bool((in_memory == np.arange(50_000)).all()) and space.regrown(in_memory, 60_000) is None
    assert os.listdir(tmp_path / "store") == []


@pytest.mark.skipif(not spill_module.SPILL_SUPPORTED, reason="arrays are mapped where the system has madvise")
def test_a_column_in_mapped_arrays_grows_and_forks_as_one_in_memory(tmp_path: Path) -> None:
    space = MappedArrays(tmp_path)
    mapped, plain = Column(np.int64, [0], space), Column(np.int64, [0])
    for column in (mapped, plain):
        for step in range(1, 40):
            column.extend(np.arange(step * 1_000, dtype=np.int64))
            column.release()
    assert spill_module.is_mapped(mapped.values())
    assert mapped.values().tolist() == plain.values().tolist()
    seen = mapped.values()
    fork = mapped.fork()
    mapped.extend(np.full(50_000, 5, dtype=np.int64))  # claims the room: grows the shared file in place
    fork.extend(np.full(10, 9, dtype=np.int64))  # its room is taken: moves to a file of its own
    assert seen.tolist() == plain.values().tolist()
    assert fork.values().tolist() == [*plain.values().tolist(), *[9] * 10]
    assert mapped.values().tolist() == [*plain.values().tolist(), *[5] * 50_000]


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def answers(service: RagService, query: str) -> list[tuple[str, float, str, int]]:
    return [
        (r.document.id, round(r.score, 6), r.document.content, r.document.metadata["startLine"])
        for r in service.search(query, 10)
    ]


def test_a_large_persisted_run_holds_its_documents_on_disk_and_answers_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its documents are spilled before any store sees them; searches, the saved store and the snapshot read them
    back; a session without a store keeps them in memory."""
    monkeypatch.setattr("ragls.rag.generation.STAGE_MIN_DOCUMENTS", 4)
    words = " ".join(f"word{j}" for j in range(300))  # postings enough for arrays of more than a page
    files = {
        f"pkg/m{i}.py": f"def handler_{i}(request):\n    '{words} topic{i}'\n    return request.field_{i % 7}\n"
        for i in range(40)
    }
    root = write(tmp_path / "repo", files)
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    reference = RagService(root)
    reference.index_directory()
    service = RagService(root, settings, persist=True)
    service.index_directory()
    queries = ("handler_3 request", "field_5", "m12", "return request", "topic17 word3")
    try:
        kept = reference.state.knowledge_base.shared_index()[0].documents
        assert not any(isinstance(d, SavedDocument) for d in kept), "without a store, documents stay in memory"
        held = service.state.knowledge_base.shared_index()[0].documents
        assert len(held) == 40 and all(isinstance(d, SavedDocument) for d in held)
        forward_terms = service.state.knowledge_base.shared_index()[0]._forward_terms.values()
        if spill_module.SPILL_SUPPORTED:
            assert spill_module.is_mapped(forward_terms), "the postings' arrays are in mapped files"
        for stream in (service.state.names, service.state.code):
            assert stream is not None
            slot_documents = stream.export_index()[1]
            assert all(a is b for a, b in zip(slot_documents, held, strict=True)), "one document, every stream"
        for query in queries:
            assert answers(service, query) == answers(reference, query)
        (root / "pkg/m3.py").write_text("def handler_3(request):\n    return request.renamed\n")
        service.update_paths(["pkg/m3.py"])
        reference.update_paths(["pkg/m3.py"])
        assert answers(service, "renamed") == answers(reference, "renamed") != []
    finally:
        service.close()
    restarted = RagService(root, settings, persist=True)
    try:
        restarted.index_directory()
        for query in (*queries, "renamed"):
            assert answers(restarted, query) == answers(reference, query)
    finally:
        restarted.close()
