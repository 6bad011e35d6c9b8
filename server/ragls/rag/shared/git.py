"""What the shared index asks of git: the commit of a folder, where it sits in its repository, and distances."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

GIT_TIMEOUT_SECONDS = 20


def head_commit(root: Path) -> str | None:
    """`git rev-parse HEAD` in the folder, or None outside a repository (or without git)."""
    return _git(root, "rev-parse", "--verify", "HEAD")


def folder_prefix(root: Path) -> str:
    """The folder's path inside its repository (`sub/dir/`, or `` at the top): published paths are relative to it."""
    return _git(root, "rev-parse", "--show-prefix") or ""


def is_dirty(root: Path) -> bool:
    """Uncommitted changes or untracked files that are not ignored."""
    return bool(_git(root, "status", "--porcelain", "--untracked-files=normal"))


def nearest_commit(root: Path, candidates: Sequence[str]) -> str | None:
    """The candidate with the fewest commits between it and HEAD (either side of their merge-base).

    Candidates unknown to the local repository are passed over; None when none is known (or there is no HEAD).
    Ties go to the earlier candidate, so callers list the newest first.
    """
    best: tuple[int, str] | None = None
    for commit in candidates:
        counted = _git(root, "rev-list", "--count", f"{commit}...HEAD")
        if counted is None or not counted.isdigit():
            continue
        if best is None or int(counted) < best[0]:
            best = (int(counted), commit)
        if best[0] == 0:
            break
    return best[1] if best else None


def _git(root: Path, *arguments: str) -> str | None:
    environment = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        completed = subprocess.run(
            ["git", "-C", str(root), *arguments],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=environment,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout.strip() if completed.returncode == 0 else None
