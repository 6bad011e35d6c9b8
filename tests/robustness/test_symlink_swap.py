"""A workspace file swapped for a symlink is never read through the link, however the swap is timed."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from ragls.config import ChunkShape, Limits, Settings
from ragls.ingest.reader import read_file
from ragls.rag.service import RagService

pytestmark = pytest.mark.timeout(60)

SECRET = "SECRET_MARKER_5f0c1e9a"
N_SWAPPED = 16
N_RUNS = 300
MAX_SWAPS = 2_000_000
SWITCH_SECONDS = 1e-5  # threads take turns often, so swaps land between the walk and the read


def outside_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(f"password = {SECRET}\n", encoding="utf-8")
    return secret


def test_a_symlink_to_an_outside_file_is_skipped(tmp_path: Path) -> None:
    secret = outside_secret(tmp_path)
    link = tmp_path / "notes.txt"
    link.symlink_to(secret)
    outcome = read_file(link, "notes.txt", Limits(), ChunkShape(), None)
    assert outcome.skip_reason == "symlink"
    assert outcome.chunked is None and outcome.fingerprint is None


@pytest.mark.timeout(10)
def test_a_fifo_is_skipped_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    assert read_file(fifo, "pipe.txt", Limits(), ChunkShape(), None).skip_reason == "special"


def test_a_file_swapped_with_a_symlink_during_indexing_never_leaks_the_target(tmp_path: Path) -> None:
    secret = outside_secret(tmp_path)
    root = tmp_path / "workspace"
    root.mkdir()
    names = [f"file{i}.txt" for i in range(N_SWAPPED)]
    for name in names:
        (root / name).write_text(f"ordinary text of {name}\n", encoding="utf-8")
    stop = threading.Event()

    def swap() -> None:
        """Replace each file by a symlink and back, atomically, so the walk always finds one of the two."""
        for count in range(MAX_SWAPS):
            if stop.is_set():
                return
            name = names[count % N_SWAPPED]
            temporary = root / f".{name}.swap"
            if count // N_SWAPPED % 2 == 0:
                temporary.symlink_to(secret)
            else:
                temporary.write_text(f"ordinary text of {name}\n", encoding="utf-8")
            os.replace(temporary, root / name)

    swapper = threading.Thread(target=swap, daemon=True)
    service = RagService(root, Settings(cache_dir=str(tmp_path / "cache"), embedding="none"), persist=False)
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_SECONDS)
    swapper.start()
    try:
        for _ in range(N_RUNS):
            service.index_directory()
            leaked = [d.id for d in service.state.image().documents if SECRET in d.content]
            assert leaked == [], f"indexed through a symlink: {leaked}"
    finally:
        stop.set()
        swapper.join(timeout=10)
        sys.setswitchinterval(switch_interval)
    assert service.search(SECRET, 5) == []


def test_a_folder_swapped_with_a_symlink_during_indexing_never_leaks_the_target(tmp_path: Path) -> None:
    """O_NOFOLLOW guards only a path's last component: a folder on the way is checked the same way."""
    secret = outside_secret(tmp_path)
    (secret.parent / "notes.txt").write_text(f"token = {SECRET}\n", encoding="utf-8")
    root = tmp_path / "workspace"
    folder = root / "docs"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("ordinary notes\n", encoding="utf-8")
    (folder / "secret.txt").write_text("ordinary secret\n", encoding="utf-8")
    stop = threading.Event()

    def swap() -> None:
        """Swap the folder for a link to the outside folder and back, atomically, again and again."""
        real = root / ".docs.real"
        for count in range(MAX_SWAPS):
            if stop.is_set():
                return
            if count % 2 == 0:
                os.rename(folder, real)
                folder.symlink_to(secret.parent, target_is_directory=True)
            else:
                folder.unlink()
                os.rename(real, folder)

    swapper = threading.Thread(target=swap, daemon=True)
    service = RagService(root, Settings(cache_dir=str(tmp_path / "cache"), embedding="none"), persist=False)
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_SECONDS)
    swapper.start()
    try:
        for _ in range(N_RUNS):
            try:
                service.index_directory()
            except OSError:
                continue  # the walk may find the folder half-swapped; what matters is what gets in
            leaked = [d.id for d in service.state.image().documents if SECRET in d.content]
            assert leaked == [], f"indexed through a symlinked folder: {leaked}"
    finally:
        stop.set()
        swapper.join(10)
        sys.setswitchinterval(switch_interval)
