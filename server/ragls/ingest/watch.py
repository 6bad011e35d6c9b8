"""A folder watcher over watchfiles that watches only directories the walk admits, never ignored trees."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from ragls.config import Limits
from ragls.ingest.ignore import IGNORE_FILE_NAMES, IgnoreRules
from ragls.ingest.skips import is_editor_temp_file
from ragls.ingest.walk import walk

log = logging.getLogger(__name__)


class FolderWatcher:
    """Watches each admitted directory non-recursively, re-arming when directories or ignore files change."""

    def __init__(self, root: Path, limits: Limits, on_paths: Callable[[list[str]], None]) -> None:
        self.root = root
        self.limits = limits
        self.on_paths = on_paths
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"ragls-watch-{root.name}", daemon=True)
        self.watched_directories: list[str] = []
        # Set once the directories are listed and their watches being armed (which takes milliseconds).
        self.listening = threading.Event()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        catch_up = False
        while not self._stop.is_set():
            try:
                self._watch_once(catch_up)
                catch_up = False
            except Exception as exc:  # A watcher problem must not kill the server; retry after a pause.
                # watchfiles drops the whole batch it failed on (a file name that is not UTF-8 does it), so the
                # re-armed watch first has the folder walked again: stat keys make that cheap.
                log.warning("file watcher for %s failed: %s; watching again, then re-reading changes", self.root, exc)
                catch_up = True
                self._stop.wait(1.0)

    def _watch_once(self, catch_up: bool = False) -> None:
        rules = IgnoreRules(self.root)
        directories = admitted_directories(self.root, self.limits, rules)
        self.watched_directories = directories
        self.listening.set()
        if catch_up:
            self.on_paths([""])  # the folder itself: every file is checked against its stat key
        paths = [self.root / d if d else self.root for d in directories]
        for changes in watchfiles.watch(
            *paths,
            recursive=False,
            stop_event=self._stop,
            debounce=200,
            step=20,
            raise_interrupt=False,
            yield_on_timeout=False,
        ):
            rel_paths, rearm = self._relevant(changes, rules)
            if rel_paths:
                self.on_paths(rel_paths)
            if rearm:
                return

    def _relevant(self, changes: set[tuple[watchfiles.Change, str]], rules: IgnoreRules) -> tuple[list[str], bool]:
        rel_paths: list[str] = []
        rearm = False
        for change, raw_path in changes:
            path = Path(raw_path)
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:
                continue
            if is_editor_temp_file(path.name):
                continue
            if (
                path.name in IGNORE_FILE_NAMES
                or path.is_dir()
                or (change == watchfiles.Change.deleted and rel in self.watched_directories)
            ):
                rearm = True
                rel_paths.append(rel)
            elif rules.path_reason(rel) is None or change == watchfiles.Change.deleted:
                rel_paths.append(rel)
        return rel_paths, rearm


def admitted_directories(root: Path, limits: Limits, rules: IgnoreRules) -> list[str]:
    """The root and every directory the walk would descend into."""
    return ["", *walk(root, limits, rules).directories]
