"""When each file of a folder last changed: its last commit's time where git tracks it, else its mtime.

A checkout sets every file's mtime to the time of the clone, so in a repository the commit time is the one
that says what is recent. One `git log` pass over the recent history answers for every file (never a call
per file); files that git does not track, or that have uncommitted changes, use their mtime. A machine
without git, a folder outside any repository, or a git that fails or takes too long: mtimes for all.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

GIT_TIMEOUT_SECONDS = 20.0
log = logging.getLogger(__name__)


def last_changes(root: Path, files: Iterable[str], history_days: float) -> dict[str, float]:
    """Each file's last change as a Unix time; a file git tracks unchanged for longer than `history_days`
    is dated that long ago (only that much history is read), and a file that cannot be stat'ed is left out."""
    files = list(files)
    committed = _commit_times(root, history_days)
    if committed is None:
        return mtimes(root, files)
    commit_times, tracked, modified = committed
    oldest = time.time() - history_days * 86400.0
    times: dict[str, float] = {}
    use_mtime = []
    for file in files:
        if file in tracked and file not in modified:
            times[file] = commit_times.get(file, oldest)
        else:
            use_mtime.append(file)
    times.update(mtimes(root, use_mtime))
    return times


def mtimes(root: Path, files: Iterable[str]) -> dict[str, float]:
    """Each file's mtime (what an edit just changed); files that cannot be stat'ed are left out."""
    times = {}
    for file in files:
        try:
            times[file] = os.stat(root / file, follow_symlinks=False).st_mtime
        except OSError:
            continue
    return times


def _commit_times(root: Path, history_days: float) -> tuple[dict[str, float], set[str], set[str]] | None:
    """Last commit time of every path changed in the last `history_days`, the tracked paths and the ones with
    uncommitted changes, all relative to `root`; None when git cannot say."""
    listed = _git(root, ["ls-files", "-z", "-t", "-c", "-m"])
    if listed is None:
        return None
    tracked: set[str] = set()
    modified: set[str] = set()
    for entry in listed.split(b"\0"):
        if len(entry) > 2:
            (modified if entry[:1] == b"C" else tracked).add(os.fsdecode(entry[2:]))
    days = max(1, int(history_days + 0.5))
    history = _git(
        root, ["log", "-z", "--format=%x01%ct", "--name-only", "--no-renames", "--relative", f"--since={days}.days"]
    )
    if history is None:
        return None
    return _parse_log(history), tracked, modified


def _parse_log(output: bytes) -> dict[str, float]:
    """`git log -z --format=%x01%ct --name-only` as each path's newest commit time (the log is newest first)."""
    times: dict[str, float] = {}
    for record in output.split(b"\x01"):
        head, _, names = record.partition(b"\0")
        if not head.strip().isdigit():
            continue
        committed_at = float(int(head))
        for name in names.lstrip(b"\n").split(b"\0"):
            if name:
                times.setdefault(os.fsdecode(name), committed_at)
    return times


def _git(root: Path, arguments: list[str]) -> bytes | None:
    """A git command's stdout, run in `root`; None (logged) when git is missing, fails or takes too long.

    stdin is closed and stdout captured: on a language server both are the protocol.
    """
    command = ["git", "-C", str(root), "-c", "core.quotepath=off", *arguments]
    try:
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT_SECONDS, check=False
        )
    except FileNotFoundError:
        log.info("git is not installed: dating files by their mtime")
        return None
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("git %s in %s failed (%s): dating files by their mtime", arguments[0], root, exc)
        return None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()[:200]
        log.info("git %s in %s: %s; dating files by their mtime", arguments[0], root, message)
        return None
    return done.stdout
