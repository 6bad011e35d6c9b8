"""The walk: every file of a folder that git would show, within the limits, never following links."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ragls.config import Limits, limit_setting_path
from ragls.errors import LimitExceeded, SourceError
from ragls.ingest.ignore import IgnoreRules


@dataclass
class WalkResult:
    """Admitted files as sorted relative POSIX paths, and what was skipped, by reason."""

    files: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    entries: int = 0


def walk(root: Path, limits: Limits, rules: IgnoreRules | None = None, start: str = "") -> WalkResult:
    """Walk `root` (or its subtree `start`), applying ignore rules per directory and failing on a limit."""
    check_source(root)
    rules = rules or IgnoreRules(root)
    result = WalkResult()
    pending = [start]
    while pending:
        directory = pending.pop()
        for entry in _scan(root, directory, result):
            rel = f"{directory}/{entry.name}" if directory else entry.name
            _visit(entry, rel, limits, rules, result, pending)
    result.files.sort()
    result.directories.sort()
    return result


def check_source(root: Path) -> None:
    """Fail with a clear message when the folder to index cannot be walked at all."""
    if not root.exists():
        raise SourceError(f"{root} does not exist")
    if not root.is_dir():
        raise SourceError(f"{root} is not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise SourceError(f"{root} is not readable (permission denied)")


def _scan(root: Path, directory: str, result: WalkResult) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root / directory if directory else root) as entries:
            return sorted(entries, key=lambda e: e.name, reverse=True)
    except OSError:
        # A directory that vanished or cannot be read is a counted skip, not a failed run.
        result.skipped["unreadable"] += 1
        return []


def _visit(
    entry: os.DirEntry[str],
    rel: str,
    limits: Limits,
    rules: IgnoreRules,
    result: WalkResult,
    pending: list[str],
) -> None:
    try:
        if entry.is_symlink():
            result.skipped["symlink"] += 1
            return
        is_dir = entry.is_dir(follow_symlinks=False)
        is_file = entry.is_file(follow_symlinks=False)
    except OSError:
        result.skipped["unreadable"] += 1
        return
    if not (is_dir or is_file):
        result.skipped["special"] += 1
        return
    reason = rules.skip_reason(rel, is_dir)
    if reason == "ignoreFile":
        return
    if reason is not None:
        result.skipped[reason] += 1
        return
    _admit(rel, is_dir, limits, result)
    if is_dir:
        pending.append(rel)
        result.directories.append(rel)
    else:
        result.files.append(rel)


def _admit(rel: str, is_dir: bool, limits: Limits, result: WalkResult) -> None:
    result.entries += 1
    depth = rel.count("/") + 1
    if depth > limits.max_depth:
        raise LimitExceeded("maxDepth", limit_setting_path("max_depth"), limits.max_depth, f"{rel} is {depth} deep")
    if result.entries > limits.max_entries:
        raise LimitExceeded(
            "maxEntries", limit_setting_path("max_entries"), limits.max_entries, "the walk found more entries"
        )
    if not is_dir and len(result.files) >= limits.max_files:
        raise LimitExceeded("maxFiles", limit_setting_path("max_files"), limits.max_files, "the walk found more files")
