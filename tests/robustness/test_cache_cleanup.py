"""Cleaning the cache removes only stores ragls made: never other folders, nor files it did not write."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.rag.service import RagService
from ragls.rag.store import list_stores, remove_stale_stores, store_path

pytestmark = pytest.mark.timeout(60)


def make_decoys(cache: Path) -> dict[Path, bytes]:
    """Folders that look a little like stores, and a plain one; returns every file with its bytes."""
    garbage = cache / "0123456789abcdef0123"  # a store-like name
    garbage.mkdir(parents=True)
    (garbage / "index.sqlite3").write_bytes(b"not a database, the user's own file")
    (garbage / "notes.txt").write_text("keep me", encoding="utf-8")
    foreign = cache / "fedcba9876543210fedc"
    foreign.mkdir()
    with sqlite3.connect(foreign / "index.sqlite3") as connection:
        connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.execute("INSERT INTO meta VALUES ('folder', ?)", (str(cache / "no-such-folder"),))
    connection.close()
    (foreign / "thesis.tex").write_text("\\section{Mine}", encoding="utf-8")
    copied = cache / "00000000000000000000"  # a marker whose folder does not hash to this name
    copied.mkdir()
    (copied / "ragls-store.json").write_text(json.dumps({"format": "1", "folder": str(cache / "gone")}))
    (copied / "index.sqlite3-wal").write_bytes(b"the user's")
    plain = cache / "Documents"
    (plain / "photos").mkdir(parents=True)
    (plain / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    (plain / "todo.md").write_text("- buy milk", encoding="utf-8")
    return {path: path.read_bytes() for path in cache.rglob("*") if path.is_file()}


def make_stale_store(tmp_path: Path, cache: Path, name: str = "gone") -> Path:
    """A store ragls made for a folder that was deleted afterwards; returns the store's directory."""
    root = tmp_path / name
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n", encoding="utf-8")
    service = RagService(root, Settings(cache_dir=str(cache), embedding="none"), persist=True)
    service.index_directory()
    service.close()
    directory = store_path(str(cache), root).parent
    assert (directory / "index.sqlite3").is_file()
    shutil.rmtree(root)
    return directory


def assert_decoys_intact(decoys: dict[Path, bytes]) -> None:
    for path, data in decoys.items():
        assert path.is_file() and path.read_bytes() == data, path


def test_remove_stale_stores_touches_only_ragls_stores(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    decoys = make_decoys(cache)
    store = make_stale_store(tmp_path, cache)
    legacy = make_stale_store(tmp_path, cache, "gone-before-markers")
    (legacy / "ragls-store.json").unlink()  # a store from before the marker is still recognized by its index
    stores = sorted([store, legacy])
    assert [info.path.parent for info in list_stores(cache)] == stores
    removed = remove_stale_stores(cache)
    assert sorted(info.path.parent for info in removed) == stores
    assert not store.exists() and not legacy.exists()
    assert_decoys_intact(decoys)


def test_a_file_of_the_user_inside_a_store_survives_and_keeps_the_folder(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    store = make_stale_store(tmp_path, cache)
    (store / "mine.txt").write_text("not ragls's", encoding="utf-8")
    remove_stale_stores(cache)
    assert sorted(p.name for p in store.iterdir()) == ["mine.txt"]


def test_cache_clear_touches_only_ragls_stores(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    decoys = make_decoys(cache)
    store = make_stale_store(tmp_path, cache)
    env = {**os.environ, "RAGLS_EMBEDDING": "none", "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    command = [sys.executable, "-m", "ragls", "cache"]
    listed = subprocess.run([*command, "list", "--cache-dir", str(cache)], capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr
    assert str(store) in listed.stdout and "0123456789abcdef0123" not in listed.stdout
    cleared = subprocess.run(
        [*command, "clear", "--cache-dir", str(cache)], capture_output=True, text=True, env=env, timeout=50
    )
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.strip() == "cleared 1 stores"
    assert not store.exists()
    assert_decoys_intact(decoys)
