"""Git's ignore semantics for nested `.gitignore` and `.tnsignore` files, plus the default skip lists."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

from ragls.errors import ConfigError

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


def default_skip_reason(name: str, is_dir: bool) -> str | None:
    """Why a file or directory name is skipped by default, or None when it is not."""
    lowered = name.lower()
    if is_dir:
        return "ignored" if lowered in SKIPPED_DIRECTORY_NAMES else None
    if lowered in SECRET_FILE_NAMES or any(fnmatch.fnmatch(lowered, p) for p in SECRET_FILE_PATTERNS):
        return "secret"
    if lowered in GENERATED_FILE_NAMES or any(fnmatch.fnmatch(lowered, p) for p in GENERATED_FILE_PATTERNS):
        return "generated"
    if is_editor_temp_file(name):
        return "editorTemp"
    return None


def is_editor_temp_file(name: str) -> bool:
    """Lock and swap files editors write next to the file being edited."""
    return any(fnmatch.fnmatchcase(name, p) for p in EDITOR_TEMP_PATTERNS)


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
            verdict = rules.spec.check_file(relative).include
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
        n_patterns = sum(1 for line in lines if line.strip() and not line.lstrip().startswith("#"))
        if n_patterns > MAX_IGNORE_PATTERNS:
            raise ConfigError(
                f"ignore rules in {directory or '.'}/ have {n_patterns} patterns, over the limit of "
                f"{MAX_IGNORE_PATTERNS}; merge or remove patterns"
            )
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"invalid ignore pattern in {directory or '.'}/: {exc}") from exc
        return _DirectoryRules(directory, spec)


def _read_ignore_file(path: Path, display: str) -> list[str]:
    try:
        if path.is_symlink() or not path.is_file():
            return []
        size = os.stat(path).st_size
        if size > MAX_IGNORE_FILE_BYTES:
            raise ConfigError(
                f"{display} is {size:,} bytes, over the limit of {MAX_IGNORE_FILE_BYTES:,} (64 KiB); shorten it"
            )
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
