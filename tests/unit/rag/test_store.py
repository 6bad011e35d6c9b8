"""The persisted index: restarts reuse it, crashes never tear it, corrupt stores are rebuilt."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import pickle
import signal
import sqlite3
import struct
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ragls.config import Settings, Weights
from ragls.index import columns as columns_module
from ragls.model import Document, SavedDocument
from ragls.rag import reading as reading_module
from ragls.rag import service as service_module
from ragls.rag import snapshot as snapshot_module
from ragls.rag import spill as spill_module
from ragls.rag import store as store_module
from ragls.rag.generation import GenerationImage
from ragls.rag.service import RagService
from ragls.rag.snapshot import SNAPSHOT_FILE
from ragls.rag.store import StoreError, list_stores, remove_stale_stores, store_path
from tests.unit.rag.resident import SMAPS, resident_kb

FILES = {
    "a.py": "def alpha_handler(request):\n    return request.alpha\n",
    "b.py": "class BetaStore:\n    def beta_put(self, key):\n        self.items[key] = True\n",
    "docs/c.md": "# Gamma\n\nGamma rays are measured here.\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def service(root: Path, cache: Path) -> RagService:
    return RagService(root, Settings(cache_dir=str(cache)), persist=True)


def top(service: RagService, query: str) -> str:
    return service.search(query, 5)[0].document.id


def test_a_restart_reuses_everything_that_did_not_change(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    first = service(root, cache)
    first.index_directory()
    document_id = first.add_document("Deploys go out on Tuesdays")
    first_status = first.status()
    (root / "a.py").write_text("def alpha_handler(request):\n    return request.omega\n")  # changed while down
    second = service(root, cache)
    second.index_directory()
    assert second.chunk_calls == 1  # only the changed file was chunked again
    assert top(second, "omega") == "a.py#alpha_handler"
    assert top(second, "BetaStore") == "b.py#BetaStore"
    assert second.status().generation == first_status.generation + 1
    assert [d.id for d in second.list_documents()] == [document_id]
    assert second.status().chunks == first_status.chunks


def test_the_stored_generation_is_searchable_before_the_walk(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    service(root, cache).index_directory()
    restarted = service(root, cache)
    seen: list[str] = []
    # The progress callback runs during the walk, after the stored generation was loaded.
    restarted.index_directory(
        progress=lambda p: seen.append(top(restarted, "alpha_handler")) if p.phase == "walk" else None
    )
    assert seen and seen[0] == "a.py#alpha_handler"


def test_a_corrupt_store_is_reported_once_and_rebuilt(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    service(root, cache).index_directory()
    path = store_path(str(cache), root)
    for sidecar in path.parent.glob("*-wal"):
        sidecar.unlink()
    path.write_bytes(b"this is not a database" * 100)
    rebuilt = service(root, cache)
    rebuilt.index_directory()
    notices = rebuilt.take_notices()
    assert len(notices) == 1 and "unreadable" in notices[0] and "rebuilding" in notices[0]
    assert rebuilt.take_notices() == []
    assert top(rebuilt, "alpha_handler") == "a.py#alpha_handler"
    again = service(root, cache)
    again.index_directory()
    assert again.chunk_calls == 0 and again.take_notices() == []


def test_a_store_from_another_version_is_rebuilt(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    service(root, cache).index_directory()
    with sqlite3.connect(store_path(str(cache), root)) as connection:
        connection.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    rebuilt = service(root, cache)
    rebuilt.index_directory()
    assert "another version" in rebuilt.take_notices()[0]
    assert rebuilt.chunk_calls == 3


LONG_FILES = {
    **FILES,
    "long.py": "def delta_waves(here):\n" + "    here.measure_delta_waves(over_and_over=True)\n" * 30,
}


def test_the_store_keeps_packed_texts_as_bytes_and_loads_them_from_its_rows(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", LONG_FILES), tmp_path / "cache"
    first = service(root, cache)
    first.index_directory()
    first.close()
    with contextlib.closing(sqlite3.connect(store_path(str(cache), root))) as connection:
        kinds = dict(connection.execute("SELECT id, typeof(content) FROM chunks"))
    assert kinds["long.py#delta_waves"] == "blob" and kinds["a.py#alpha_handler"] == "text"
    store_path(str(cache), root).parent.joinpath(SNAPSHOT_FILE).unlink()  # loaded from the rows
    restarted = service(root, cache)
    restarted.index_directory()
    assert restarted.chunk_calls == 0 and restarted.take_notices() == []
    found = restarted.search("delta waves", 1)[0].document
    assert found.content == LONG_FILES["long.py"].rstrip("\n") and isinstance(found.packed_content, bytes)


def test_a_store_of_schema_3_with_plain_texts_loads_without_a_rebuild(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", LONG_FILES), tmp_path / "cache"
    first = service(root, cache)
    first.index_directory()
    first.close()
    path = store_path(str(cache), root)
    path.parent.joinpath(SNAPSHOT_FILE).unlink()  # a snapshot of schema 3 names it: never used by schema 4
    with contextlib.closing(sqlite3.connect(path)) as connection, connection:  # as schema 3 wrote it
        texts = {d.id: d.content for d in first.state.knowledge_base.documents()}
        connection.executemany("UPDATE chunks SET content = ? WHERE id = ?", [(t, i) for i, t in texts.items()])
        connection.execute("UPDATE meta SET value = '3' WHERE key = 'schema'")
    migrated = service(root, cache)
    migrated.index_directory()
    assert migrated.chunk_calls == 0 and migrated.take_notices() == []
    found = migrated.search("delta waves", 1)[0].document
    assert found.content == texts[found.id] and isinstance(found.packed_content, bytes)  # packed as it loads
    (root / "a.py").write_text("def alpha_handler(request):\n    return request.omega\n")
    migrated.index_directory()
    migrated.close()
    with contextlib.closing(sqlite3.connect(path)) as connection:
        assert connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == "4"
    again = service(root, cache)
    again.index_directory()
    assert again.chunk_calls == 0 and top(again, "omega") == "a.py#alpha_handler"
    assert again.search("delta waves", 1)[0].document.content == texts["long.py#delta_waves"]


def test_stale_stores_are_listed_and_removed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    kept, gone = write(tmp_path / "kept", FILES), write(tmp_path / "gone", FILES)
    service(kept, cache).index_directory()
    service(gone, cache).index_directory()
    for rel in FILES:
        (gone / rel).unlink()
    (gone / "docs").rmdir()
    gone.rmdir()
    infos = {info.folder: info for info in list_stores(cache)}
    assert infos[str(kept.resolve())].exists and not infos[str(gone.resolve())].exists
    assert infos[str(kept.resolve())].files == 3
    removed = remove_stale_stores(cache)
    assert [info.folder for info in removed] == [str(gone.resolve())]
    assert [info.folder for info in list_stores(cache)] == [str(kept.resolve())]


CRASHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from ragls.config import Limits, Settings
    from ragls.rag import service as service_module
    from ragls.rag.service import RagService
    service_module.SNAPSHOT_AFTER_RUN_SECONDS = 0.0  # snapshots written while the next run goes on
    root, cache, version = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    for i in range(400):
        (root / f"m{i}.py").write_text(f"def function_{i}():\\n    return 'version{version}'\\n")
    service = RagService(root, Settings(cache_dir=cache), persist=True)
    print("ready", flush=True)
    while True:
        service.clear_hashes()
        service.index_directory()
""")


@pytest.mark.timeout(120)
def test_killing_the_process_never_leaves_a_torn_generation(tmp_path: Path) -> None:
    root, cache = tmp_path / "w", tmp_path / "cache"
    root.mkdir()
    for attempt, delay in enumerate((0.3, 0.7, 1.1, 1.6)):
        process = subprocess.Popen(
            [sys.executable, "-c", CRASHER, str(root), str(cache), str(attempt)], stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        time.sleep(delay)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        restored = service(root, cache)
        store = restored._persistence.store
        try:
            stored = store.load() if store else None  # what a restart would load
        except StoreError as exc:  # killed before the first save's rows: nothing to tear (a busy machine)
            assert "holds no index" in str(exc)
            continue
        if stored is None:
            continue
        if stored.image is not None:
            documents, records = stored.image.documents, stored.image.files
        else:
            assert stored.delta is not None
            documents, records = stored.delta.add, stored.delta.records
        versions = {d.content.split("version")[1][0] for d in documents}
        assert len(versions) == 1, f"a torn generation after {delay}s: {versions}"
        assert set(records) == {f"m{i}.py" for i in range(400)}
        assert all(len(record.chunk_ids) == 1 for record in records.values())


def _answers(service: RagService) -> list[object]:
    queries = ["alpha handler request", "BetaStore put key", "gamma rays", "deploys"]
    results = [[(r.document.id, round(r.score, 6)) for r in service.search(q, 10)] for q in queries]
    return [results, [s.qualified_name for s in service.symbols("beta")], service.status().chunks]


@pytest.fixture
def quick_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "SNAPSHOT_AFTER_RUN_SECONDS", 0.1)


def snapshot_of(root: Path, cache: Path) -> Path:
    return store_path(str(cache), root).parent / SNAPSHOT_FILE


def wait_for_snapshot(root: Path, cache: Path) -> Path:
    snapshot = snapshot_of(root, cache)
    deadline = time.monotonic() + 10
    while not snapshot.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return snapshot


def indexed_and_closed(root: Path, cache: Path) -> list[object]:
    """Index, note the answers, close (which writes the snapshot); returns the answers."""
    first = service(root, cache)
    first.index_directory()
    answers = _answers(first)
    first.close()
    return answers


def stored_image(session: RagService) -> GenerationImage | None:
    """What a restart of this session would load from the snapshot (None: it would use the rows)."""
    assert session._persistence.store is not None
    stored = session._persistence.store.load()
    assert stored is not None
    return stored.image


@pytest.mark.usefixtures("quick_snapshots")
def test_a_restart_loads_the_snapshot_and_answers_the_same(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    first = service(root, cache)
    first.index_directory()
    expected = _answers(first)
    assert wait_for_snapshot(root, cache).exists()  # written shortly after the full run, without waiting for close
    restarted = service(root, cache)
    assert stored_image(restarted) is not None
    restarted.index_directory()
    assert restarted.chunk_calls == 0
    assert _answers(restarted) == expected


@pytest.mark.parametrize("pread", [True, False], ids=["pread", "in memory"])
def test_a_snapshot_reads_each_document_from_its_file_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pread: bool
) -> None:
    """A restart makes every document without reading its text or metadata; each is read where it is asked for,
    as it was held (packed ones packed: a restart compresses nothing again), even once the file is gone. Where
    the system has no `pread`, the texts and metadata are read into memory at the load instead."""
    if pread and not snapshot_module.READ_WITH_PREAD:
        pytest.skip("this system has no pread")
    monkeypatch.setattr(snapshot_module, "READ_WITH_PREAD", pread)
    files = {**FILES, "docs/d.md": "# Déjà vu\n\nNaïve café, 日本語 and more\n" * 40}
    root, cache = write(tmp_path / "w", files), tmp_path / "cache"
    first = service(root, cache)
    first.index_directory()
    first.close()
    held = {d.id: (d.packed_content, d.content, dict(d.metadata)) for d in first.state.knowledge_base.documents()}
    assert any(isinstance(text, bytes) for text, _, _ in held.values())
    assert any(isinstance(text, str) for text, _, _ in held.values())
    image = snapshot_module.read(snapshot_of(root, cache))
    assert all(isinstance(d, SavedDocument) for d in image.documents)
    snapshot_of(root, cache).unlink()  # replaced by a later snapshot, or a shared one's download deleted
    assert {d.id: (d.packed_content, d.content, dict(d.metadata)) for d in image.documents} == held
    document = image.documents[0]
    copy = pickle.loads(pickle.dumps(document))  # as a reading worker or a test hands it on: a plain document
    assert type(copy) is Document and (copy.id, copy.content, copy.metadata) == (
        document.id,
        document.content,
        document.metadata,
    )
    assert document.with_embedding((1.0, 0.0)).content == document.content


def test_a_writer_visiting_every_saved_document_keeps_no_parse_of_its_metadata(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    indexed_and_closed(root, cache)
    document = snapshot_module.read(snapshot_of(root, cache)).documents[0]
    passing = document.passing_metadata()
    assert json.loads(document.metadata_json()) == dict(passing)
    assert document.passing_metadata() is not passing  # parsed again: nothing was kept
    assert document.metadata is document.metadata  # a search's read is kept
    assert document.passing_metadata() is document.metadata


def _members(snapshot: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(snapshot) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _rewrite(snapshot: Path, members: dict[str, bytes]) -> None:
    """The snapshot written again with these members, as a plain zip would (no aligned members)."""
    with zipfile.ZipFile(snapshot, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _as_format_3(snapshot: Path) -> None:
    """Rewrite a snapshot as format 3 wrote it: ids and metadata in one JSON, no metadata member."""
    members, image = _members(snapshot), snapshot_module.read(snapshot)
    header = {**json.loads(members["header.json"]), "format": "3"}
    members["header.json"] = json.dumps(header).encode()
    members["documents.json"] = json.dumps([[d.id, dict(d.metadata)] for d in image.documents]).encode()
    for name in ("document_ids.json", "metadata.bin", "metadata_offsets.npy"):
        del members[name]
    _rewrite(snapshot, _with_symbols_as_rows(members, image))


def _as_format_4(snapshot: Path) -> None:
    """Rewrite a snapshot as format 4 wrote it: its symbols as JSON rows, not columns."""
    members, image = _members(snapshot), snapshot_module.read(snapshot)
    members["header.json"] = json.dumps({**json.loads(members["header.json"]), "format": "4"}).encode()
    _rewrite(snapshot, _with_symbols_as_rows(members, image))


def _with_symbols_as_rows(members: dict[str, bytes], image: GenerationImage) -> dict[str, bytes]:
    kept = {name: data for name, data in members.items() if not name.startswith(("symbols.", "symbol_table."))}
    return {**kept, "symbols.json": json.dumps([list(symbol) for symbol in image.symbols]).encode()}


@pytest.mark.parametrize("block_bytes", [1, 7, 1 << 24])
def test_a_snapshot_of_format_3_loads_its_texts_whole_whatever_the_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    files = {**FILES, "docs/d.md": "# Déjà vu\n\nNaïve café, 日本語 and more\n" * 40}
    root, cache = write(tmp_path / "w", files), tmp_path / "cache"
    expected = indexed_and_closed(root, cache)
    saved = snapshot_module.read(snapshot_of(root, cache))
    held = {d.id: (d.packed_content, d.content, dict(d.metadata)) for d in saved.documents}
    _as_format_3(snapshot_of(root, cache))
    monkeypatch.setattr(snapshot_module, "TEXT_BLOCK_BYTES", block_bytes)
    restarted = service(root, cache)
    image = stored_image(restarted)
    assert image is not None and not any(isinstance(d, SavedDocument) for d in image.documents)
    assert {d.id: (d.packed_content, d.content, dict(d.metadata)) for d in image.documents} == held
    restarted.index_directory()
    assert not restarted.take_notices() and restarted.chunk_calls == 0
    assert _answers(restarted) == expected


@pytest.mark.parametrize("member", ["metadata_offsets.npy", "text_offsets.npy"])
def test_a_snapshot_whose_document_offsets_do_not_fit_is_reported_and_the_rows_used(
    tmp_path: Path, member: str
) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    expected = indexed_and_closed(root, cache)
    snapshot = snapshot_of(root, cache)
    members = _members(snapshot)
    offsets = np.lib.format.read_array(io.BytesIO(members[member]))
    offsets[[1, 2]] = offsets[[2, 1]]  # the right length and ends, going back in between
    assert offsets[1] > offsets[2]
    members[member] = _npy(offsets)
    _rewrite(snapshot, members)
    restarted = service(root, cache)
    restarted.index_directory()
    assert any("unreadable snapshot" in notice for notice in restarted.take_notices())
    assert _answers(restarted) == expected and restarted.chunk_calls == 0


@pytest.mark.usefixtures("quick_snapshots")
def test_a_stale_snapshot_is_not_used_and_close_refreshes_it(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    first = service(root, cache)
    first.index_directory()
    assert wait_for_snapshot(root, cache).exists()
    first.add_document("Deploys go out on Tuesdays", document_id="deploys")
    expected = _answers(first)
    stale = service(root, cache)
    assert stored_image(stale) is None  # the snapshot predates the added document
    stale.index_directory()
    assert _answers(stale) == expected
    stale.close()
    fresh = service(root, cache)
    assert stored_image(fresh) is not None
    fresh.index_directory()
    assert _answers(fresh) == expected


def test_a_corrupt_snapshot_falls_back_to_the_store(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    expected = indexed_and_closed(root, cache)
    snapshot = snapshot_of(root, cache)
    snapshot.write_bytes(snapshot.read_bytes()[:300])
    restarted = service(root, cache)
    restarted.index_directory()
    assert _answers(restarted) == expected
    assert restarted.chunk_calls == 0
    restarted.close()
    assert snapshot.exists()  # rewritten from the rows it fell back to
    assert stored_image(service(root, cache)) is not None


def test_a_snapshot_without_the_names_stream_still_serves_a_session_that_has_one(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    plain = RagService(root, Settings(cache_dir=str(cache), weights=Weights(names=0.0)), persist=True)
    plain.index_directory()
    plain.close()
    restarted = service(root, cache)
    image = stored_image(restarted)
    assert image is not None and image.names is None
    restarted.index_directory()
    assert restarted.state.names is not None and len(restarted.state.names) == restarted.status().chunks
    fresh = service(root, tmp_path / "fresh-cache")
    fresh.index_directory()
    assert _answers(restarted) == _answers(fresh)


def test_a_snapshot_without_the_code_stream_still_serves_a_session_that_has_one(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    plain = RagService(root, Settings(cache_dir=str(cache), weights=Weights(code=0.0)), persist=True)
    plain.index_directory()
    plain.close()
    restarted = service(root, cache)
    image = stored_image(restarted)
    assert image is not None and image.code is None
    restarted.index_directory()
    assert restarted.state.code is not None and len(restarted.state.code) == restarted.status().chunks
    fresh = service(root, tmp_path / "fresh-cache")
    fresh.index_directory()
    assert _answers(restarted) == _answers(fresh)


def test_a_snapshot_from_before_a_clear_is_never_loaded(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    indexed_and_closed(root, cache)
    snapshot = snapshot_of(root, cache)
    old = snapshot.read_bytes()
    cleared = service(root, cache)
    cleared.index_directory()
    cleared.clear()
    (root / "a.py").write_text("def omega_handler(request):\n    return request.omega\n")
    cleared.index_directory()
    snapshot.write_bytes(old)  # as if a write from before the clear landed late
    restarted = service(root, cache)
    assert stored_image(restarted) is None
    restarted.index_directory()
    assert top(restarted, "omega_handler") == "a.py#omega_handler"


def test_a_snapshot_whose_arrays_do_not_fit_is_reported_and_the_rows_used(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    expected = indexed_and_closed(root, cache)
    snapshot = snapshot_of(root, cache)
    members = _members(snapshot)
    members["index.lengths.npy"] = _npy(np.zeros(1, dtype=np.float32))  # a well-formed array of the wrong length
    _rewrite(snapshot, members)
    restarted = service(root, cache)
    restarted.index_directory()
    assert any("unusable" in notice for notice in restarted.take_notices())
    assert _answers(restarted) == expected and restarted.chunk_calls == 0


def _mapped(array: np.ndarray) -> bool:
    return spill_module.mapping_of(array) is not None


@pytest.mark.skipif(not snapshot_module.MAP_ARRAYS, reason="arrays are mapped only where the system allows it")
def test_a_snapshot_maps_its_arrays_copy_on_write(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    indexed_and_closed(root, cache)
    snapshot = snapshot_of(root, cache)
    before = snapshot.read_bytes()
    image = snapshot_module.read(snapshot)
    arrays = {**image.index, "index_slots": image.index_slots}
    assert all(_mapped(array) for array in arrays.values() if len(array))
    assert all(array.flags.aligned for array in arrays.values())
    lengths = image.index["lengths"]
    lengths[:] = -1.0  # this process's own copy of the pages: the file never changes
    assert snapshot.read_bytes() == before
    assert float(snapshot_module.read(snapshot).index["lengths"][0]) != -1.0


@pytest.mark.skipif(not SMAPS.exists(), reason="resident pages are read from /proc/self/smaps")
def test_the_pages_an_install_read_leave_the_process_and_read_the_same_again(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    indexed_and_closed(root, cache)
    image = snapshot_module.read(snapshot_of(root, cache))
    arrays = {name: array for name, array in image.index.items() if len(array) and _mapped(array)}
    assert "forward_terms" in arrays and "terms" in arrays
    before = {name: array.tolist() for name, array in arrays.items()}  # reads every page
    assert all(resident_kb(array) > 0 for array in arrays.values())
    snapshot_module.release_pages(image.index)
    assert all(resident_kb(array) == 0 for array in arrays.values())
    assert {name: array.tolist() for name, array in arrays.items()} == before


@pytest.mark.parametrize("saved_as", ["columns", "rows of format 4"])
def test_loaded_symbols_share_the_strings_they_repeat(tmp_path: Path, saved_as: str) -> None:
    root = write(tmp_path / "w", {**FILES, "d.py": "def delta():\n    pass\n\n\ndef epsilon():\n    pass\n"})
    cache = tmp_path / "cache"
    expected = indexed_and_closed(root, cache)
    if saved_as != "columns":
        _as_format_4(snapshot_of(root, cache))
    saved_as_rows = "symbols.json" in _members(snapshot_of(root, cache))
    assert saved_as_rows == (saved_as != "columns")
    symbols = snapshot_module.read(snapshot_of(root, cache)).symbols
    by_name = {symbol.name: symbol for symbol in symbols}
    assert {"alpha_handler", "BetaStore", "beta_put", "delta", "epsilon"} <= set(by_name)
    assert by_name["delta"].qualified_name is by_name["delta"].name
    assert by_name["beta_put"].qualified_name == "BetaStore.beta_put"
    assert by_name["delta"].kind is by_name["epsilon"].kind and by_name["delta"].file is by_name["epsilon"].file
    restarted = service(root, cache)
    restarted.index_directory()
    assert restarted.chunk_calls == 0 and _answers(restarted) == expected


def test_a_snapshot_of_unaligned_arrays_is_read_instead_of_mapped(tmp_path: Path) -> None:
    """An array whose values are not on an aligned offset (a snapshot written before they were) is read whole."""
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    expected = indexed_and_closed(root, cache)
    snapshot = snapshot_of(root, cache)
    _rewrite(snapshot, _members(snapshot))
    image = snapshot_module.read(snapshot)
    with zipfile.ZipFile(snapshot) as archive, open(snapshot, "rb") as raw:
        for name, array in image.index.items():
            info = archive.getinfo(f"index.{name}.npy")
            raw.seek(info.header_offset + 26)
            name_length, extra_length = struct.unpack("<HH", raw.read(4))
            start = info.header_offset + 30 + name_length + extra_length
            assert _mapped(array) == (len(array) > 0 and start % 64 == 0), name  # by chance, an old one may be
    assert any(not _mapped(array) for array in image.index.values() if len(array))
    restarted = service(root, cache)
    restarted.index_directory()
    assert not restarted.take_notices() and restarted.chunk_calls == 0
    assert _answers(restarted) == expected


def test_a_snapshot_written_after_an_edit_loads_and_answers_the_same(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    indexed_and_closed(root, cache)
    (root / "a.py").write_text("def alpha_handler(request):\n    return request.zeppelin\n")
    edited = service(root, cache)
    edited.index_directory()
    expected = [*_answers(edited), top(edited, "zeppelin")]
    edited.close()
    restarted = service(root, cache)
    assert stored_image(restarted) is not None
    restarted.index_directory()
    assert not restarted.take_notices() and restarted.chunk_calls == 0
    assert [*_answers(restarted), top(restarted, "zeppelin")] == expected


@pytest.mark.parametrize("written_with_room", [True, False])
def test_the_first_edit_after_a_restart_appends_into_the_loaded_arrays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written_with_room: bool
) -> None:
    """A snapshot's forward postings come with room, mapped (an older snapshot's get it after the first run): the
    edit writes past them instead of copying them."""
    # A sixteenth of each forward array is its room in the file; with no least room in memory either, the room of
    # these 50 chunks is enough, as that of a large index is.
    monkeypatch.setattr(columns_module, "ROOM_MIN", 1)
    modules = {f"m{i}.py": f"def helper_{i}(value):\n    return value * {i}\n" for i in range(48)}
    root, cache = write(tmp_path / "w", {**FILES, **modules}), tmp_path / "cache"
    with monkeypatch.context() as patched:
        if not written_with_room:  # as snapshots were written before: each forward array holds its values alone
            patched.setattr(
                snapshot_module,
                "_write_with_room",
                lambda member, values: np.lib.format.write_array(member, values, allow_pickle=False),
            )
        indexed_and_closed(root, cache)
    restarted = service(root, cache)
    restarted.index_directory()
    assert not restarted.take_notices() and restarted.chunk_calls == 0
    postings = restarted.state.knowledge_base.shared_index()[0]
    columns = (postings._forward_offsets, postings._forward_terms, postings._forward_counts)
    assert all(column.capacity > len(column) for column in columns)
    if snapshot_module.MAP_ARRAYS:
        assert all(_mapped(column.values()) == written_with_room for column in columns)
    loaded = [column.values() for column in columns]
    (root / "a.py").write_text("def alpha_handler(request):\n    return request.zeppelin\n")
    restarted.update_paths(["a.py"])
    assert top(restarted, "zeppelin") == "a.py#alpha_handler"
    assert all(np.shares_memory(view, column.values()) for view, column in zip(loaded, columns, strict=True))
    assert all(len(view) < len(column) for view, column in zip(loaded, columns, strict=True))
    restarted.close()


def test_edits_are_searchable_while_an_earlier_save_is_still_running(tmp_path: Path) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    session = service(root, cache)
    session.index_directory()
    gate = threading.Event()
    session._persistence.saver.submit(lambda: gate.wait(10))  # a save that takes its time
    (root / "a.py").write_text("def alpha_handler(request):\n    return request.zeppelin\n")
    session.update_paths(["a.py"])  # returns without waiting for the saver
    assert top(session, "zeppelin") == "a.py#alpha_handler"
    assert session.status().state == "idle"
    (root / "b.py").unlink()
    session.update_paths(["b.py"])  # the index lock is free: a second edit commits too
    assert session.status().files == 2
    assert session._persistence.store is not None
    stored = session._persistence.store.load()  # the rows still hold the generation before both edits
    assert stored is not None and stored.delta is not None and "b.py" in stored.delta.records
    gate.set()
    session.close()  # finishes the saves, in commit order
    restarted = service(root, cache)
    restarted.index_directory()
    assert restarted.chunk_calls == 0
    assert top(restarted, "zeppelin") == "a.py#alpha_handler" and restarted.status().files == 2


def test_a_save_writes_in_batches_so_searches_can_go_first(tmp_path: Path) -> None:
    root, cache = tmp_path / "w", tmp_path / "cache"
    write(root, {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(3 * store_module.ROWS_PER_BATCH)})
    session = service(root, cache)
    pauses: list[float] = []
    original = session._persistence._searches_first

    def counting() -> Callable[[], None]:
        pause = original()

        def counted() -> None:
            pauses.append(time.monotonic())
            pause()

        return counted

    session._persistence._searches_first = counting  # type: ignore[method-assign]
    session.index_directory()
    assert len(pauses) >= 6  # chunks, symbols and files, several batches each
    session.close()


def test_files_skipped_for_their_content_are_not_read_again_until_they_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    (root / "data.txt").write_bytes(b"\x00\x01binary payload")
    (root / "latin.txt").write_bytes(b"\xff\xfe\xfd not utf-8 \x80\x81")
    reads: list[str] = []
    real_read = reading_module.read_file

    def counted_read(path: Path, rel_path: str, *args: object) -> object:
        reads.append(rel_path)
        return real_read(path, rel_path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(reading_module, "read_file", counted_read)  # a small folder is read inline
    first = service(root, cache)
    first.index_directory()
    skipped = dict(first.status().skipped)
    assert skipped.get("binary") == 1 and sorted(reads) == sorted([*FILES, "data.txt", "latin.txt"])
    reads.clear()
    first.index_directory()  # a second run in the same session
    assert reads == [] and dict(first.status().skipped) == skipped
    first.close()
    restarted = service(root, cache)
    restarted.index_directory()
    assert reads == [] and dict(restarted.status().skipped) == skipped  # and after a restart
    (root / "data.txt").write_text("now plain text about zeppelins\n")
    (root / "latin.txt").unlink()
    restarted.index_directory()
    assert sorted(reads) == ["data.txt"]
    assert top(restarted, "zeppelins").startswith("data.txt#")
    assert restarted.state.skipped_files == {}
    restarted.close()
    reads.clear()
    again = service(root, cache)
    again.index_directory()
    assert reads == [] and again.state.skipped_files == {} and "binary" not in dict(again.status().skipped)


def test_a_snapshots_file_records_share_the_documents_ids_and_keep_any_other_list(tmp_path: Path) -> None:
    """A file's chunks that are a run of the documents are saved as where the run starts; a restart's records then
    hold the documents' own id strings. Chunk ids that are no run (nor documents at all) are saved as they are."""
    root, cache = write(tmp_path / "w", FILES), tmp_path / "cache"
    indexed_and_closed(root, cache)
    image = snapshot_module.read(snapshot_of(root, cache))
    documents = {d.id: d for d in image.documents}
    for record in image.files.values():
        assert record.chunk_ids and all(i is documents[i].id for i in record.chunk_ids)
    apart = dict(image.files)
    reversed_ids = [d.id for d in image.documents][::-1]
    apart["a.py"] = dataclasses.replace(apart["a.py"], chunk_ids=[*reversed_ids, "no-such-chunk"])
    apart["none.py"] = dataclasses.replace(apart["a.py"], chunk_ids=[])
    rows = list(snapshot_module._file_rows(apart, image.documents))
    assert snapshot_module._file_records(json.loads(json.dumps(rows)), image.documents) == apart
    run_row = next(row for row in rows if row[0] == "b.py")
    for first, count in ((len(documents), 1), (-1, 1), (0, len(documents) + 1), (0, -1), ("0", 1)):
        damaged = [[*run_row[:5], first, count]]
        with pytest.raises(ValueError, match="not a run"):
            snapshot_module._file_records(damaged, image.documents)
