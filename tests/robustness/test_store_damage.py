"""Damaged stores and killed saves: damage is found when the store loads (behind a current snapshot, on the
saver's thread just after), reported once, and rebuilt; a process killed at any point of an index run leaves a
store that loads and answers like a clean one."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.rag.service import RagService
from ragls.rag.store import StoreError, store_path
from tests.sample_workspace import write_tree

pytestmark = pytest.mark.timeout(180)


def workspace(tmp_path: Path, n_extra: int = 60) -> Path:
    root = write_tree(tmp_path / "workspace")
    for index in range(n_extra):
        (root / "src" / f"module_{index}.py").write_text(
            f"def helper_{index}(value):\n    '''Scale value {index} for the pool.'''\n    return value * {index}\n",
            encoding="utf-8",
        )
    return root


def session(root: Path, cache: Path) -> RagService:
    service = RagService(root, Settings(cache_dir=str(cache)), persist=True)
    service.index_directory()
    return service


def answers(service: RagService) -> list[list[str]]:
    queries = ("connection pool", "validate token", "helper_7 scale value", "router")
    return [[result.document.id for result in service.search(query, 10)] for query in queries]


def damage_pages(path: Path, seed: int) -> None:
    """Overwrite a few runs of bytes past the header page with random bytes."""
    rng = random.Random(seed)
    data = bytearray(path.read_bytes())
    for _ in range(8):
        start = rng.randrange(4096, len(data) - 64)
        data[start : start + 64] = rng.randbytes(64)
    path.write_bytes(bytes(data))


def damage_what_a_snapshot_load_skips(path: Path) -> None:
    """Break the root page of the chunks' index by file, which a load from a current snapshot never reads."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        query = "SELECT rootpage FROM sqlite_master WHERE name = 'chunks_by_file'"
        root_page = connection.execute(query).fetchone()[0]
    with path.open("r+b") as file:
        file.seek((root_page - 1) * page_size)
        file.write(b"\xff" * 64)


def closed_session(root: Path, cache: Path) -> list[list[str]]:
    """Index, close (which writes the snapshot), and return the answers."""
    first = session(root, cache)
    expected = answers(first)
    first.close()
    return expected


@pytest.mark.parametrize("damage", ["pages", "truncated", "emptied"])
def test_a_damaged_store_is_reported_once_and_rebuilt(tmp_path: Path, damage: str) -> None:
    root, cache = workspace(tmp_path), tmp_path / "cache"
    first = session(root, cache)
    expected = answers(first)
    first.close()
    database = store_path(str(cache), root.resolve())
    assert (database.parent / "snapshot.zip").exists()  # the snapshot is current: damage hides behind it
    if damage == "pages":
        damage_pages(database, seed=7)
    elif damage == "truncated":
        os.truncate(database, database.stat().st_size // 2)
    else:
        os.truncate(database, 0)

    second = session(root, cache)
    second.wait_for_saves()  # behind a current snapshot the pages are checked on the saver's thread
    notices = second.take_notices()
    assert len(notices) == 1 and "damaged" in notices[0] and "rebuilding" in notices[0], notices
    assert answers(second) == expected
    second.close()
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    third = session(root, cache)
    third.wait_for_saves()
    # Nothing read again: the rebuilt store holds every file (a store only discarded would be indexed afresh).
    assert third.take_notices() == [] and third.chunk_calls == 0 and answers(third) == expected
    third.close()


def test_a_load_from_a_current_snapshot_answers_before_the_store_is_checked(tmp_path: Path) -> None:
    """The saver's thread is held busy: the load, the walk and the searches finish without the check, which then
    reports the damage once and writes the rows again from the generation in memory."""
    root, cache = workspace(tmp_path), tmp_path / "cache"
    expected = closed_session(root, cache)
    damage_what_a_snapshot_load_skips(store_path(str(cache), root.resolve()))
    second = RagService(root, Settings(cache_dir=str(cache)), persist=True)
    saver_free = threading.Event()
    second._persistence.saver.submit(lambda: saver_free.wait(60))  # a bound: a regression fails, not hangs
    try:
        second.index_directory()
        assert second.take_notices() == [] and answers(second) == expected
    finally:
        saver_free.set()
    second.wait_for_saves()
    notices = second.take_notices()
    assert len(notices) == 1 and "damaged" in notices[0] and "rebuilding" in notices[0], notices
    assert second.chunk_calls == 0  # rebuilt from memory: no file was read again
    second.close()
    third = session(root, cache)
    third.wait_for_saves()
    assert third.take_notices() == [] and third.chunk_calls == 0 and answers(third) == expected
    third.close()


def test_the_pages_are_checked_where_a_load_reads_the_rows(tmp_path: Path) -> None:
    root, cache = workspace(tmp_path), tmp_path / "cache"
    closed_session(root, cache)
    database = store_path(str(cache), root.resolve())
    damage_what_a_snapshot_load_skips(database)
    store = RagService(root, Settings(cache_dir=str(cache)), persist=True)._persistence.store
    assert store is not None
    stored = store.load()
    assert stored is not None and stored.image is not None  # the snapshot is current: the rows were not checked
    damage = store.damage()
    assert damage is not None and "damaged" in damage
    store.discard_snapshot()
    with pytest.raises(StoreError, match="damaged"):
        store.load()
    store.close()


def test_a_damaged_snapshot_is_reported_and_the_rows_are_used(tmp_path: Path) -> None:
    root, cache = workspace(tmp_path), tmp_path / "cache"
    first = session(root, cache)
    expected = answers(first)
    first.close()
    snapshot_file = store_path(str(cache), root.resolve()).parent / "snapshot.zip"
    damage_pages(snapshot_file, seed=3)
    second = session(root, cache)
    notices = second.take_notices()
    assert len(notices) == 1 and "index.sqlite3 instead" in notices[0], notices
    assert answers(second) == expected
    second.close()


def test_kill_9_during_index_runs_never_leaves_a_torn_store(tmp_path: Path) -> None:
    root = workspace(tmp_path, n_extra=1500)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "RAGLS_EMBEDDING": "none"}
    command = [sys.executable, "-m", "ragls"]
    rng = random.Random(11)
    for round_number in range(8):
        # Each round changes some files, so every run has something to save when it is killed.
        for index in rng.sample(range(1500), 600):
            path = root / "src" / f"module_{index}.py"
            path.write_text(path.read_text(encoding="utf-8") + f"# round {round_number}\n", encoding="utf-8")
        process = subprocess.Popen([*command, "index", "-q", str(root)], env=env, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 1.5))  # from startup to the save, wherever it lands
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    survived = subprocess.run(
        [*command, "search", "--json", "-k", "10", str(root), "helper_7 scale value"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "damaged" not in survived.stderr and "unreadable" not in survived.stderr, survived.stderr
    clean_env = {**env, "XDG_CACHE_HOME": str(tmp_path / "clean")}
    clean = subprocess.run(
        [*command, "search", "--json", "-k", "10", str(root), "helper_7 scale value"],
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    ids = [[result["id"] for result in json.loads(run.stdout)] for run in (survived, clean)]
    assert ids[0] == ids[1] and ids[0]
