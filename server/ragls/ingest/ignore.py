"""Git's ignore semantics for nested `.gitignore` and `.tnsignore` files, plus the default skip lists."""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pathspec

from ragls.errors import ConfigError
from ragls.ingest.reader import SkippedOpen, read_regular_file

IGNORE_FILE_NAMES = (".gitignore", ".tnsignore")
MAX_IGNORE_FILE_BYTES = 64 * 1024
MAX_IGNORE_PATTERNS = 1024

SKIPPED_DIRECTORY_NAMES = frozenset(
    {
        ".aws",
        ".git",
        ".gnupg",
        ".gradle",
        ".hg",
        ".idea",
        ".kube",
        ".next",
        ".ssh",
        ".svn",
        ".vscode",
        "__pycache__",
        "build",
        "coverage",
        "dist",
        "node_modules",
        "out",
        "target",
        "vendor",
        ".venv",
        "venv",
        "site-packages",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
# These also match as any component of a path, e.g. a watch event deep under node_modules.
SKIPPED_ANYWHERE = frozenset({".aws", ".git", ".gnupg", ".hg", ".kube", ".ssh", ".svn", "node_modules", "vendor"})
SECRET_FILE_NAMES = frozenset(
    {".env", ".git-credentials", ".netrc", ".npmrc", ".pypirc", "id_dsa", "id_ecdsa", "id_ed25519", "id_rsa"}
)
SECRET_FILE_PATTERNS = (".env.*",)
GENERATED_FILE_NAMES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "cargo.lock",
        "composer.lock",
        "gemfile.lock",
        "uv.lock",
        "pipfile.lock",
        "npm-shrinkwrap.json",
    }
)
GENERATED_FILE_PATTERNS = ("*.min.js", "*.min.css", "*.map", "*.min.mjs", "*.bundle.js")
# Editor lock and swap files that appear and vanish while a user types.
EDITOR_TEMP_PATTERNS = (".#*", "*.swp", "*.swo", "*.swx", "*~", "4913", "#*#")


def _one_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Shell patterns as one compiled regex: the walk tests every file name against them."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


_SECRET = _one_pattern(SECRET_FILE_PATTERNS)
_GENERATED = _one_pattern(GENERATED_FILE_PATTERNS)
_EDITOR_TEMP = _one_pattern(EDITOR_TEMP_PATTERNS)


def default_skip_reason(name: str, is_dir: bool) -> str | None:
    """Why a file or directory name is skipped by default, or None when it is not."""
    lowered = name.lower()
    if is_dir:
        return "ignored" if lowered in SKIPPED_DIRECTORY_NAMES else None
    if lowered in SECRET_FILE_NAMES or _SECRET.match(lowered):
        return "secret"
    if lowered in GENERATED_FILE_NAMES or _GENERATED.match(lowered):
        return "generated"
    if is_editor_temp_file(name):
        return "editorTemp"
    return None


def is_editor_temp_file(name: str) -> bool:
    """Lock and swap files editors write next to the file being edited."""
    return _EDITOR_TEMP.match(name) is not None


def skipped_anywhere(rel_path: str) -> bool:
    """True when a path runs through a directory that is never indexed at any depth."""
    return any(part.lower() in SKIPPED_ANYWHERE for part in rel_path.split("/")[:-1])


@dataclass(frozen=True)
class _DirectoryRules:
    directory: str
    spec: pathspec.GitIgnoreSpec


class IgnoreRules:
    """The ignore files of one folder, loaded per directory on first use and cached."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_directory: dict[str, _DirectoryRules | None] = {}

    def forget(self, directory: str) -> None:
        """Drop the cached rules of a directory whose ignore file changed."""
        self._by_directory.pop(directory, None)

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
            verdict = _own_verdict(rules.spec, relative)
            if verdict is not None:
                return bool(verdict)
        return False

    def skip_reason(self, rel_path: str, is_dir: bool) -> str | None:
        """Why a path (not its ancestors) is not indexed, or None."""
        name = rel_path.rsplit("/", 1)[-1]
        if not is_dir and name in IGNORE_FILE_NAMES:
            return "ignoreFile"
        reason = default_skip_reason(name, is_dir)
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
        lines: list[str] = []
        base = self.root / directory if directory else self.root
        for name in IGNORE_FILE_NAMES:
            lines.extend(_read_ignore_file(base / name, f"{directory}/{name}".lstrip("/")))
        if not lines:
            return None
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(_dirs_below(line) for line in lines)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"invalid ignore pattern in {directory or '.'}/: {exc}") from exc
        return _DirectoryRules(directory, spec)


def _dirs_below(line: str) -> str:
    """`src/**/` names the directories below `src`, but pathspec reads it as `src/`: spell it `src/**/*/`."""
    stripped = line.rstrip(" ")
    if stripped.endswith("/**/") and stripped[:-4].strip("!*/"):
        return stripped + "*/"
    return line


# The regex group pathspec puts where a pattern matched a directory (`foo/...`, or `foo/` itself).
_DIR_MARK = "ps_d"


def _own_verdict(spec: pathspec.GitIgnoreSpec, relative: str) -> bool | None:
    """The last pattern that matches `relative` itself decides (git's rule for a path whose ancestors are kept).

    `spec.check_file` is not used: it ranks a match through a directory below a plain match, so after `*`,
    `!*/` (or `!src`) could never re-include the directory `src/` that it names; and it lets `src/**`
    match the directory `src/` itself, so `src/**` + `!src/keep.txt` lost `src/keep.txt`.
    """
    verdict: bool | None = None
    for pattern in spec.patterns:
        if pattern.include is None or pattern.regex is None:
            continue
        result = pattern.match_file(relative)
        if result is None:
            continue
        if result.match.groupdict().get(_DIR_MARK) is not None:
            # A directory mark short of the end is a match through an ancestor, which the walk already kept;
            # the pattern may still match the path itself further on (`*/` against `a/b/`).
            if _at_end(pattern.regex).search(relative) is None:
                continue
        elif relative.endswith("/") and pattern.regex.search(relative[:-1]) is None:
            continue  # `src/**` matched only the slash marking `src/` a directory: it names what is below
        verdict = pattern.include
    return verdict


@functools.lru_cache(maxsize=4096)
def _at_end(regex: re.Pattern[str]) -> re.Pattern[str]:
    """A pattern's regex that must match up to the end of the path: a match of the path itself."""
    return re.compile(f"(?:{regex.pattern})\\Z", regex.flags)


def _read_ignore_file(path: Path, display: str) -> list[str]:
    """Its lines; a symlink or special file is not read, as the walk would not index it either."""
    try:
        data = read_regular_file(path, MAX_IGNORE_FILE_BYTES)
    except SkippedOpen as skipped:
        if skipped.reason == "tooLarge":
            raise ConfigError(
                f"{display} is {skipped.size:,} bytes, over the limit of {MAX_IGNORE_FILE_BYTES:,} (64 KiB); shorten it"
            ) from None
        return []
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    n_patterns = sum(1 for line in lines if line.strip() and not line.lstrip().startswith("#"))
    if n_patterns > MAX_IGNORE_PATTERNS:
        raise ConfigError(
            f"{display} has {n_patterns:,} patterns, over the limit of {MAX_IGNORE_PATTERNS:,}; "
            "merge or remove patterns"
        )
    return lines
