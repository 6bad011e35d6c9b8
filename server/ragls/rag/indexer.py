"""Index runs: turn a walk (or a list of changed paths) into a staged Delta, reusing unchanged files."""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ragls.config import Settings, limit_setting_path
from ragls.errors import LimitExceeded, RaglsError
from ragls.ingest.ignore import IGNORE_FILE_NAMES, IgnoreRules
from ragls.ingest.reader import FileStat, stat_file
from ragls.ingest.skips import is_editor_temp_file
from ragls.ingest.walk import explain_empty_walk, walk
from ragls.model import Progress
from ragls.rag.generation import Delta, FileRecord, IndexState, SkippedFile, StagedChange
from ragls.rag.reading import PARALLEL_MIN_FILES, PlannedRead, ReadAhead, read_and_tokenize, read_workers

ProgressCallback = Callable[[Progress], None]
# Skip reasons that only the bytes decide (not the limits): remembered by stat key, so an unchanged file
# is not read again on every run and restart (Django has 1,390 of them).
SKIPS_BY_CONTENT = frozenset({"binary", "undecodable", "unextractable"})


class FileChange(NamedTuple):
    """What a run of changed paths did to one file: `added` or `updated` (with its chunks), `removed`, or
    `skipped` (with the reason)."""

    path: str
    action: str
    chunks: int = 0
    reason: str | None = None


class Cancelled(RaglsError):
    """The run was cancelled before it committed; the previous generation is untouched."""


@dataclass
class RunReport:
    """What a run did: files seen, read and reused, and skips by reason."""

    files: int = 0
    chunked_files: int = 0
    reused_files: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    # Something the user should hear about although the run succeeded (no file admitted, and why).
    warning: str | None = None
    # Ignore files cut short at a cap (the rest of each is not applied), one warning each for the user.
    ignore_warnings: list[str] = field(default_factory=list)
    # Per file, for runs of changed paths only (`ragls watch` prints them); a full run leaves it empty.
    changes: list[FileChange] = field(default_factory=list)


@dataclass
class _Staging:
    change: StagedChange
    report: RunReport = field(default_factory=RunReport)
    track_changes: bool = False
    decoded_chars: int = 0
    # The files of delta.removed_files as a set: a burst of 10,000 deletions must not cost 10,000 list scans.
    removed: set[str] = field(default_factory=set)

    @property
    def delta(self) -> Delta:
        return self.change.delta


class Indexer:
    """Stages index runs for one folder; `chunk_calls` counts files actually re-chunked."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.rules = IgnoreRules(root)
        self.chunk_calls = 0

    def full_run(
        self,
        state: IndexState,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        built_as_read: bool = True,
    ) -> tuple[StagedChange, RunReport]:
        """Walk the whole folder; files no longer found lose their chunks.

        `built_as_read`: a large change goes into copies of the stores file by file (`StagedChange.catch_up`), so
        the caller must commit it before anything else changes the stores; without it, the change is the delta
        alone, with every term count in it (a publish filters it before its commit).
        """
        self.rules = IgnoreRules(self.root)
        found = (lambda n_files: progress(Progress(n_files, 0, "", "walk"))) if progress is not None else None
        walked = walk(self.root, self.settings.limits, self.rules, found=found)
        staging = _Staging(StagedChange(state))
        staging.report.skipped.update(walked.skipped)
        staging.report.warning = explain_empty_walk(walked, self.rules)
        self._take_ignore_warnings(staging.report)
        reader = self._read_ahead(state, walked.files)
        try:
            for index, rel_path in enumerate(walked.files):
                if cancel is not None and cancel.is_set():
                    raise Cancelled("index run cancelled")
                self._stage_file(state, rel_path, staging, reader)
                if built_as_read:
                    staging.change.catch_up()
                # The budget counts every admitted file so far (read or reused): a breach stops the run at once.
                where = f"by file {index + 1:,} of {len(walked.files):,}, {rel_path}"
                self._check_decoded_chars(staging.decoded_chars, where)
                if progress is not None:
                    progress(Progress(index + 1, len(walked.files), rel_path))
        finally:
            reader.close()
        kept = set(walked.files)
        for rel_path in (state.files.keys() | state.skipped_files.keys()) - kept:
            self._stage_removal(state, rel_path, staging)
        staging.report.files = len(walked.files)
        return staging.change, staging.report

    def paths_run(self, state: IndexState, rel_paths: Iterable[str]) -> tuple[StagedChange, RunReport]:
        """Re-ingest only the given paths (files or directories); cost is proportional to them."""
        staging = _Staging(StagedChange(state), track_changes=True)
        paths = sorted(set(rel_paths))
        # A branch switch changes thousands of files: those that are plain files are read ahead as a full run's.
        reader = self._read_ahead(state, [rel_path for rel_path in paths if self._path_kind(rel_path) == "file"])
        try:
            for rel_path in paths:
                self._stage_path(state, rel_path, staging, reader)
        finally:
            reader.close()
        touched = set(staging.delta.records) | set(staging.delta.removed_files)
        files = state.files
        untouched = state.decoded_chars - sum(files[path].decoded_chars for path in touched if path in files)
        self._check_decoded_chars(staging.decoded_chars + untouched, "after the change")
        new_files = (
            len(state.files)
            + len([p for p in staging.delta.records if p not in state.files])
            - len(staging.delta.removed_files)
        )
        if new_files > self.settings.limits.max_files:
            raise LimitExceeded(
                "maxFiles",
                limit_setting_path("max_files"),
                self.settings.limits.max_files,
                f"{new_files:,} files after the change",
            )
        staging.report.files = new_files
        self._take_ignore_warnings(staging.report)
        return staging.change, staging.report

    def _take_ignore_warnings(self, report: RunReport) -> None:
        """Ignore files the run found over a cap: warned about, and counted among the skips (`rag/status` shows it)."""
        report.ignore_warnings = self.rules.take_warnings()
        if report.ignore_warnings:
            report.skipped["ignoreFileTruncated"] = len(report.ignore_warnings)

    def _path_kind(self, rel_path: str) -> str:
        """What a changed path is to `_stage_path`: an ignore file, an editor's temporary file, a folder, gone
        (missing, a symlink or ignored now), or a file to stage; the read-ahead plans only the last."""
        name = rel_path.rsplit("/", 1)[-1]
        if name in IGNORE_FILE_NAMES:
            return "ignore file"
        if is_editor_temp_file(name):
            return "temporary"
        path = self.root / rel_path
        if path.is_dir() and not path.is_symlink():
            return "folder"
        if not path.exists() or path.is_symlink() or self.rules.path_reason(rel_path) is not None:
            return "gone"
        return "file"

    def _stage_path(self, state: IndexState, rel_path: str, staging: _Staging, reader: ReadAhead | None = None) -> None:
        kind = self._path_kind(rel_path)
        if kind == "ignore file":
            self._stage_ignore_change(state, rel_path, staging)
        elif kind == "folder":
            self._stage_subtree(state, rel_path, staging)
        elif kind == "gone":
            was_file = rel_path in state.files or rel_path in state.skipped_files
            self._stage_removal(state, rel_path, staging)
            if not was_file:  # a folder went away: its files go with it (one scan per folder, none per file)
                for file in [f for f in state.files if f.startswith(rel_path + "/")]:
                    self._stage_removal(state, file, staging)
        elif kind == "file":
            self._stage_file(state, rel_path, staging, reader)

    def _stage_ignore_change(self, state: IndexState, rel_path: str, staging: _Staging) -> None:
        """An edited ignore file re-evaluates the subtree of the directory it governs."""
        directory = rel_path.rsplit("/", 1)[0] if "/" in rel_path else ""
        self.rules.forget(directory)
        self._stage_subtree(state, directory, staging)

    def _stage_subtree(self, state: IndexState, directory: str, staging: _Staging) -> None:
        if directory and self.rules.path_reason(directory + "/x") is not None:
            found: list[str] = []
        else:
            found = walk(self.root, self.settings.limits, self.rules, start=directory).files
        prefix = directory + "/" if directory else ""
        for rel_path in found:
            self._stage_file(state, rel_path, staging)
        kept = set(found)
        for rel_path in [f for f in state.files if f.startswith(prefix) and f not in kept]:
            self._stage_removal(state, rel_path, staging)

    def _read_ahead(self, state: IndexState, files: list[str]) -> ReadAhead:
        """Worker processes reading the files this run will read, when there are enough of them to pay."""
        plan: list[PlannedRead] = []
        reused_chars = 0
        for rel_path in files:
            record = state.files.get(rel_path)
            stat = stat_file(os.path.join(self.root, rel_path))
            if stat is None:
                continue
            if record is not None and _unchanged(record, stat):
                reused_chars += record.decoded_chars
            elif not _unchanged(state.skipped_files.get(rel_path), stat):
                plan.append(PlannedRead(rel_path, stat.size, record.fingerprint if record else None))
        workers = read_workers() if len(plan) >= PARALLEL_MIN_FILES else 1
        settings = self.settings
        return ReadAhead(
            self.root, settings.limits, settings.chunk_shape, settings.tokenizer, plan, reused_chars, workers
        )

    def _stage_file(self, state: IndexState, rel_path: str, staging: _Staging, reader: ReadAhead | None = None) -> None:
        if rel_path in staging.delta.records:
            return
        record = state.files.get(rel_path)
        stat = stat_file(os.path.join(self.root, rel_path))
        if record is not None and _unchanged(record, stat):
            staging.report.reused_files += 1
            staging.decoded_chars += record.decoded_chars
            return
        known = state.skipped_files.get(rel_path)
        if known is not None and _unchanged(known, stat):
            staging.report.skipped[known.reason] += 1  # skipped for its content, which has not changed
            return
        previous = record.fingerprint if record else None
        if reader is not None:
            read = reader.read(rel_path, previous)
        else:
            read = read_and_tokenize(
                self.root, rel_path, self.settings.limits, self.settings.chunk_shape, previous, self.settings.tokenizer
            )
        outcome = read.outcome
        if outcome.skip_reason is not None:
            staging.report.skipped[outcome.skip_reason] += 1
            if staging.track_changes:
                staging.report.changes.append(FileChange(rel_path, "skipped", reason=outcome.skip_reason))
            if outcome.skip_reason != "unreadable":
                # A file that became binary or too large loses its chunks; an unreadable one keeps them.
                self._stage_removal(state, rel_path, staging)
                if outcome.skip_reason in SKIPS_BY_CONTENT and stat is not None:
                    staging.delta.skipped[rel_path] = SkippedFile(stat.key, outcome.skip_reason)
            elif record is not None:
                staging.decoded_chars += record.decoded_chars
            return
        if known is not None:
            staging.delta.skipped[rel_path] = None
        assert outcome.fingerprint is not None
        staging.decoded_chars += outcome.decoded_chars
        stat_key = stat.key if stat else None
        if outcome.chunked is None and record is not None:
            staging.report.reused_files += 1
            staging.delta.records[rel_path] = FileRecord(
                outcome.fingerprint, stat_key, record.chunk_ids, record.decoded_chars, record.n_symbols
            )
            return
        assert outcome.chunked is not None
        self.chunk_calls += 1
        staging.report.chunked_files += 1
        if staging.track_changes:
            action = "added" if record is None else "updated"
            staging.report.changes.append(FileChange(rel_path, action, len(read.documents)))
        if record is not None:
            staging.delta.remove_ids.extend(record.chunk_ids)
        documents = read.documents
        staging.delta.add.extend(documents)
        # Tokenized where the file was read, outside the generation lock, once per text a stream indexes.
        delta = staging.delta
        for document, terms in zip(documents, read.terms, strict=True):
            delta.terms[document.id], delta.name_terms[document.id], delta.code_terms[document.id] = terms
        staging.delta.symbols.extend(outcome.chunked.symbols)
        staging.delta.symbol_files.append(rel_path)
        staging.delta.records[rel_path] = FileRecord(
            outcome.fingerprint,
            stat_key,
            [d.id for d in documents],
            outcome.decoded_chars,
            len(outcome.chunked.symbols),
        )

    def _stage_removal(self, state: IndexState, rel_path: str, staging: _Staging) -> None:
        if rel_path in state.skipped_files:
            staging.delta.skipped[rel_path] = None
        record = state.files.get(rel_path)
        if record is None or rel_path in staging.removed:
            return
        staging.delta.remove_ids.extend(record.chunk_ids)
        staging.delta.removed_files.append(rel_path)
        staging.removed.add(rel_path)
        staging.delta.records.pop(rel_path, None)
        if staging.track_changes and not any(c.path == rel_path for c in staging.report.changes[-1:]):
            staging.report.changes.append(FileChange(rel_path, "removed"))

    def _check_decoded_chars(self, total: int, when: str) -> None:
        limit = self.settings.limits.max_decoded_bytes
        if total > limit:
            found = f"{total:,} characters decoded {when}"
            raise LimitExceeded("maxDecodedBytes", limit_setting_path("max_decoded_bytes"), limit, found)


def _unchanged(entry: FileRecord | SkippedFile | None, stat: FileStat | None) -> bool:
    """Whether a file was indexed (or skipped for its content) with the stat key it has now: no read needed."""
    return entry is not None and stat is not None and stat.key == entry.stat_key
