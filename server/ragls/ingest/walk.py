"""The walk: every file of a folder that git would show, within the limits, never following links."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ragls.config import Limits, limit_setting_path
from ragls.errors import LimitExceeded, SourceError
from ragls.ingest.ignore import IgnoreRules

# Past maxFiles or maxEntries the walk goes on counting (nothing is read), to say how many it found, for up to
# this many entries.
MAX_COUNTED_ENTRIES = 1_000_000
# Entries skipped as ignored that the walk remembers, so an empty walk can say which pattern excluded them.
MAX_IGNORED_SAMPLES = 200
DEFAULT_SKIPS = "the default skip list"


@dataclass
class WalkResult:
    """Admitted files as sorted relative POSIX paths, and what was skipped, by reason."""

    files: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    entries: int = 0
    n_files: int = 0
    # The first entries skipped as ignored, as (path, is a directory).
    ignored: list[tuple[str, bool]] = field(default_factory=list)
    # The limit the walk crossed ("maxFiles" or "maxEntries"); from then on it only counts.
    crossed: str | None = None


def walk(
    root: Path,
    limits: Limits,
    rules: IgnoreRules | None = None,
    start: str = "",
    found: Callable[[int], None] | None = None,
) -> WalkResult:
    """Walk `root` (or its subtree `start`), applying ignore rules per directory; fail as soon as a limit is
    crossed, before any file is read, saying how many files (or entries) there are.

    `found`, if given, hears how many files the walk has admitted so far, after each directory.
    """
    check_source(root)
    rules = rules or IgnoreRules(root)
    result = WalkResult()
    pending = [start]
    while pending and (result.crossed is None or result.entries <= MAX_COUNTED_ENTRIES):
        directory = pending.pop()
        for entry in _scan(root, directory, result):
            rel = f"{directory}/{entry.name}" if directory else entry.name
            _visit(entry, rel, limits, rules, result, pending)
        if found is not None:
            found(len(result.files))
    if result.crossed is not None:
        raise _crossed(result, limits, counted_all=not pending)
    result.files.sort()
    result.directories.sort()
    return result


def explain_empty_walk(result: WalkResult, rules: IgnoreRules) -> str | None:
    """When a walk admitted no file although the folder has entries: what excluded them, naming each ignore-file
    line (`.gitignore:167 /*`) that did; None otherwise."""
    if result.files or not result.skipped:
        return None
    by_source: dict[str, list[str]] = {}
    for rel, is_dir in result.ignored:
        source = rules.ignored_by(rel, is_dir)
        by_source.setdefault(str(source) if source else DEFAULT_SKIPS, []).append(rel + "/" * is_dir)
    parts = [f"{source} ignores {_some(paths)}" for source, paths in sorted(by_source.items(), key=_most_first)]
    unexplained = result.skipped["ignored"] - len(result.ignored)
    if unexplained > 0:
        parts.append(f"{unexplained:,} more ignored")
    parts += [f"{reason} {count:,}" for reason, count in sorted(result.skipped.items()) if reason != "ignored"]
    n_entries = sum(result.skipped.values())
    message = f"no files admitted, though the folder has {n_entries:,} entries: {'; '.join(parts)}."
    if any(source != DEFAULT_SKIPS for source in by_source):
        message += " Edit that ignore-file line, or add `!` patterns after it, to index them."
    return message


def _some(paths: list[str]) -> str:
    examples = ", ".join(sorted(paths)[:3])
    return f"{len(paths):,} ({examples}{', ...' if len(paths) > 3 else ''})"


def _most_first(item: tuple[str, list[str]]) -> tuple[int, str]:
    return -len(item[1]), item[0]


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
        if reason == "ignored" and len(result.ignored) < MAX_IGNORED_SAMPLES:
            result.ignored.append((rel, is_dir))
        return
    admitted = _admit(rel, is_dir, limits, result)
    if is_dir:
        pending.append(rel)
    if admitted:
        (result.directories if is_dir else result.files).append(rel)


def _admit(rel: str, is_dir: bool, limits: Limits, result: WalkResult) -> bool:
    """Count an entry; False once a limit is crossed, when the walk only counts."""
    result.entries += 1
    result.n_files += not is_dir
    if result.crossed is not None:
        return False
    depth = rel.count("/") + 1
    if depth > limits.max_depth:
        raise LimitExceeded("maxDepth", limit_setting_path("max_depth"), limits.max_depth, f"{rel} is {depth} deep")
    if result.entries > limits.max_entries:
        result.crossed = "maxEntries"
    elif result.n_files > limits.max_files:
        result.crossed = "maxFiles"
    return result.crossed is None


def _crossed(result: WalkResult, limits: Limits, counted_all: bool) -> LimitExceeded:
    """The breach, with what the walk found: every file or entry, or as many as it counted."""
    about = "" if counted_all else "more than "
    if result.crossed == "maxFiles":
        found = f"{about}{result.n_files:,} files found"
        return LimitExceeded("maxFiles", limit_setting_path("max_files"), limits.max_files, found)
    found = f"{about}{result.entries:,} files and directories found"
    return LimitExceeded("maxEntries", limit_setting_path("max_entries"), limits.max_entries, found)
