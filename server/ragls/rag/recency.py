"""Recency and open files: seed 003's temporal strategy as a factor in [floor, 1] on each result's score.

factor = floor + (1 - floor) x 0.5 ** (age / half-life), the age from the file's last change (its last
commit where git tracks it, else its mtime: `ingest.history`). A file changed at most FUTURE_SKEW_SECONDS
in the future counts as changed now; one dated further ahead (a wrong clock, a forged commit date), or with
no date at all (an added document), keeps the floor, as the seed's undated documents do. With the open-file
boost, a file open in the editor counts as changed now (factor 1); without recency every other file is then
undated (the floor). The factor never exceeds 1, so a score stays in 0..1 and `minScore` keeps its meaning.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from ragls.config import Recency
from ragls.ingest.history import last_changes, mtimes

FUTURE_SKEW_SECONDS = 300.0
# Only this many half-lives of history are read: past them the factor is within 0.1% of (1 - floor) of the floor.
HISTORY_HALF_LIVES = 10
DAY_SECONDS = 86400.0


class Freshness:
    """Each file's last change and the files open in the editor, for one session; inactive unless a setting asks.

    The dates are replaced whole after each full run and per file after edits; the open files are replaced
    whole on each change, so a search reads either without a lock.
    """

    def __init__(self, recency: Recency, open_files_boost: bool) -> None:
        self.recency = recency
        self.open_files_boost = open_files_boost
        self.changed_at: dict[str, float] = {}
        self.open_files: frozenset[str] = frozenset()

    @property
    def active(self) -> bool:
        """Whether any factor can differ from 1: otherwise the retriever is left as it was."""
        return self.recency.enabled or self.open_files_boost

    def refresh(self, root: Path, files: Iterable[str]) -> None:
        """Date every indexed file (one git pass); after a full run, and only with recency on."""
        if self.recency.enabled:
            self.changed_at = last_changes(root, files, HISTORY_HALF_LIVES * self.recency.half_life_days)

    def touched(self, root: Path, files: Iterable[str]) -> None:
        """Files that file events re-ingested: dated by their mtime (an edit is newer than its last commit)."""
        if not self.recency.enabled:
            return
        files = list(files)
        dated = mtimes(root, files)
        for file in files:
            if file in dated:
                self.changed_at[file] = dated[file]
            else:
                self.changed_at.pop(file, None)

    def opened(self, file: str) -> None:
        self.open_files = self.open_files | {file}

    def closed(self, file: str) -> None:
        self.open_files = self.open_files - {file}

    def factor(self, file: str | None) -> float:
        """The result's factor in [floor, 1], by its file."""
        floor = self.recency.floor
        if file is None:
            return floor
        if self.open_files_boost and file in self.open_files:
            return 1.0
        changed_at = self.changed_at.get(file) if self.recency.enabled else None
        if changed_at is None:
            return floor
        age = time.time() - changed_at
        if age < -FUTURE_SKEW_SECONDS:
            return floor
        half_lives = max(age, 0.0) / (self.recency.half_life_days * DAY_SECONDS)
        return floor + (1.0 - floor) * 0.5**half_lives
