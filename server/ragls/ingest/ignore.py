"""Git's ignore semantics for nested `.gitignore` and `.tnsignore` files and `.git/info/exclude`, read as git reads
them (`patterns.py`); the default skip lists are in `skips.py`."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragls.ingest.patterns import Pattern, compile_line, ignore_file_lines, is_pattern_line, path_bytes
from ragls.ingest.reader import SkippedOpen, read_regular_prefix
from ragls.ingest.skips import default_skip_reason, skipped_anywhere

IGNORE_FILE_NAMES = (".gitignore", ".tnsignore")
GIT_EXCLUDE_FILE = ".git/info/exclude"
# The seeds' caps. Git has none, so past them the rest of that one file is not applied and the user is told.
MAX_IGNORE_FILE_BYTES = 64 * 1024
MAX_IGNORE_PATTERNS = 1024
# A `.git` file (a worktree or submodule checkout) names its git directory in its first line.
_MAX_GITDIR_FILE_BYTES = 4096


@dataclass(frozen=True)
class IgnoreSource:
    """The ignore-file line that decided a path: the file (relative to the folder), its line number, the pattern."""

    file: str
    line: int
    pattern: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.pattern}"


@dataclass(frozen=True)
class _DirectoryRules:
    directory: str
    patterns: tuple[Pattern, ...]
    # Every pattern in one alternation: most paths match none, and one search says so (the Linux kernel's walk
    # asked 9.2 million pattern searches of 92,000 paths). None where the patterns do not combine.
    any_pattern: re.Pattern[bytes] | None = None


class IgnoreRules:
    """The ignore files of one folder, loaded per directory on first use and cached."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_directory: dict[str, _DirectoryRules | None] = {}
        self._warnings: dict[str, str] = {}

    def forget(self, directory: str) -> None:
        """Drop the cached rules of a directory whose ignore file changed."""
        self._by_directory.pop(directory, None)

    def take_warnings(self) -> list[str]:
        """What the user should hear about the ignore files loaded since the last call (one cut short at a cap)."""
        warnings, self._warnings = list(self._warnings.values()), {}
        return warnings

    def rules_for(self, directory: str) -> _DirectoryRules | None:
        """The compiled rules of one directory ('' is the root), or None when it has no ignore file."""
        if directory not in self._by_directory:
            self._by_directory[directory] = self._load(directory)
        return self._by_directory[directory]

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """Git's verdict for one path whose ancestors are known not to be ignored."""
        parts = rel_path.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            directory = "/".join(parts[:depth])
            rules = self.rules_for(directory)
            if rules is None:
                continue
            relative = "/".join(parts[depth:]) + ("/" if is_dir else "")
            if rules.any_pattern is not None and rules.any_pattern.search(path_bytes(relative)) is None:
                continue
            verdict = _own_verdict(rules.patterns, relative)
            if verdict is not None:
                return bool(verdict)
        return False

    def ignored_by(self, rel_path: str, is_dir: bool) -> IgnoreSource | None:
        """The line that ignores a path whose ancestors are kept (as `git check-ignore -v` says), or None.

        For messages only: it re-reads the ignore files and matches their lines one by one.
        """
        parts = rel_path.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            directory = "/".join(parts[:depth])
            if self.rules_for(directory) is None:
                continue
            relative = "/".join(parts[depth:]) + ("/" if is_dir else "")
            decided = _deciding_line(self.root, directory, relative)
            if decided is not None:
                return decided[0] if decided[1] else None
        return None

    def skip_reason(self, rel_path: str, is_dir: bool) -> str | None:
        """Why a path (not its ancestors) is not indexed, or None."""
        name = rel_path.rsplit("/", 1)[-1]
        if not is_dir and name in IGNORE_FILE_NAMES:
            return "ignoreFile"
        reason = default_skip_reason(rel_path, is_dir)
        if reason is not None:
            return reason
        return "ignored" if self.is_ignored(rel_path, is_dir) else None

    def path_reason(self, rel_path: str) -> str | None:
        """Why a file path is not indexed, checking every ancestor directory too (for watch events)."""
        parts = rel_path.split("/")
        if skipped_anywhere(rel_path):
            return "ignored"
        for depth in range(1, len(parts)):
            reason = self.skip_reason("/".join(parts[:depth]), is_dir=True)
            if reason is not None:
                return reason
        return self.skip_reason(rel_path, is_dir=False)

    def _load(self, directory: str) -> _DirectoryRules | None:
        patterns: list[Pattern] = []
        for path, display in ignore_sources(self.root, directory):
            lines, warning = _read_capped(path, display)
            if warning is not None:
                self._warnings[display] = warning
            patterns.extend(p for p in map(compile_line, lines) if p is not None)
        return _DirectoryRules(directory, tuple(patterns), _any_of(patterns)) if patterns else None


def ignore_sources(root: Path, directory: str) -> list[tuple[Path, str]]:
    """The ignore files that govern one directory, lowest precedence first, with the names shown to the user:
    `.git/info/exclude` (the root only, below its `.gitignore` as in git), then `.gitignore` and `.tnsignore`."""
    base = root / directory if directory else root
    sources = [(base / name, f"{directory}/{name}".lstrip("/")) for name in IGNORE_FILE_NAMES]
    git_dir = None if directory else _git_directory(root)
    if git_dir is not None:
        sources.insert(0, (git_dir / "info" / "exclude", GIT_EXCLUDE_FILE))
    return sources


def _git_directory(root: Path) -> Path | None:
    """The folder's git directory: `.git` itself, or the one a `.git` file names (`gitdir: ...`), whose shared
    part (where `info/exclude` is) a linked worktree names in its `commondir` file."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    named = _first_line(dot_git)
    if named is None or not named.startswith("gitdir:"):
        return None
    git_dir = root / named.removeprefix("gitdir:").strip()
    common = _first_line(git_dir / "commondir")
    return git_dir / common if common else git_dir


def _first_line(path: Path) -> str | None:
    try:
        data, _ = read_regular_prefix(path, _MAX_GITDIR_FILE_BYTES)
    except (SkippedOpen, OSError):
        return None
    lines = data.decode("utf-8", errors="surrogateescape").splitlines()
    return lines[0].strip() if lines else None


# The regex group pathspec puts where a pattern matched a directory (`foo/...`, or `foo/` itself).
_DIR_MARK = "ps_d"


def _own_verdict(patterns: Sequence[Pattern], relative: str) -> bool | None:
    """The last pattern that matches `relative` itself decides (git's rule for a path whose ancestors are kept).

    pathspec's `check_file` is not used: it ranks a match through a directory below a plain match, so after `*`,
    `!*/` (or `!src`) could never re-include the directory `src/` that it names; and it lets `src/**`
    match the directory `src/` itself, so `src/**` + `!src/keep.txt` lost `src/keep.txt`.
    """
    verdict: bool | None = None
    path = path_bytes(relative)
    for pattern in patterns:
        match = pattern.regex.search(path)
        if match is None:
            continue
        if match.groupdict().get(_DIR_MARK) is not None:
            # A directory mark short of the end is a match through an ancestor, which the walk already kept;
            # the pattern may still match the path itself further on (`*/` against `a/b/`).
            if _at_end(pattern.regex).search(path) is None:
                continue
        elif path.endswith(b"/") and pattern.regex.search(path[:-1]) is None:
            continue  # `src/**` matched only the slash marking `src/` a directory: it names what is below
        verdict = pattern.include
    return verdict


def _any_of(patterns: Sequence[Pattern]) -> re.Pattern[bytes] | None:
    """One regex that matches where any of the patterns does (their directory marks dropped: a name may not
    repeat), or None where they do not combine."""
    mark = f"(?P<{_DIR_MARK}>".encode()
    try:
        return re.compile(b"|".join(b"(?:" + p.regex.pattern.replace(mark, b"(?:") + b")" for p in patterns))
    except re.error:
        return None


@functools.lru_cache(maxsize=4096)
def _at_end(regex: re.Pattern[bytes]) -> re.Pattern[bytes]:
    """A pattern's regex that must match up to the end of the path: a match of the path itself."""
    return re.compile(b"(?:" + regex.pattern + b")\\Z", regex.flags)


def _deciding_line(root: Path, directory: str, relative: str) -> tuple[IgnoreSource, bool] | None:
    """The last line of a directory's ignore files that matches `relative`, and whether it ignores it.

    Each line is matched on its own, as `_own_verdict` matches each pattern on its own.
    """
    decided = None
    for path, display in ignore_sources(root, directory):
        for number, line in enumerate(_read_capped(path, display)[0], start=1):
            pattern = compile_line(line)
            verdict = None if pattern is None else _own_verdict((pattern,), relative)
            if verdict is not None:
                decided = (IgnoreSource(display, number, line.strip()), verdict)
    return decided


def _read_capped(path: Path, display: str) -> tuple[list[str], str | None]:
    """An ignore file's lines (as `ignore_file_lines` gives them) up to the caps, and, when the caps cut it short, a
    warning that says where. A symlink or special file is not read, as the walk would not index it either."""
    try:
        data, size = read_regular_prefix(path, MAX_IGNORE_FILE_BYTES)
    except (SkippedOpen, OSError):
        return [], None
    warning = None
    if size > MAX_IGNORE_FILE_BYTES:
        data = data[: data.rfind(b"\n") + 1]  # whole lines only
        n_kept = data.count(b"\n")
        warning = (
            f"{display} is {size:,} bytes, over the limit of {MAX_IGNORE_FILE_BYTES:,} (64 KiB): its patterns after "
            f"line {n_kept:,} are not applied, so files they would ignore are indexed; shorten it"
        )
    lines = ignore_file_lines(data)
    n_patterns = 0
    for line_index, line in enumerate(lines):
        n_patterns += is_pattern_line(line)
        if n_patterns > MAX_IGNORE_PATTERNS:
            warning = (
                f"{display} has more than {MAX_IGNORE_PATTERNS:,} patterns: those from line {line_index + 1:,} on "
                "are not applied, so files they would ignore are indexed; merge or remove patterns"
            )
            return lines[:line_index], warning
    return lines, warning
