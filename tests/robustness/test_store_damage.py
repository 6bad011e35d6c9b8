"""Damaged stores and killed saves: damage is found when the store loads, reported once, and rebuilt; a
process killed at any point of an index run leaves a store that loads and answers like a clean one."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.rag.service import RagService
from ragls.rag.store import store_path
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
    notices = second.take_notices()
    assert len(notices) == 1 and "damaged" in notices[0] and "rebuilding" in notices[0], notices
    assert answers(second) == expected
    second.close()
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    third = session(root, cache)
    assert third.take_notices() == [] and answers(third) == expected
    third.close()


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
