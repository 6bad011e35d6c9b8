"""Recency (seed 003's temporal strategy) by git commit time or mtime, and the open-file boost, on real sessions."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ragls.config import Recency, Settings
from ragls.ingest import history
from ragls.rag.recency import FUTURE_SKEW_SECONDS, HISTORY_HALF_LIVES
from ragls.rag.service import RagService

DAY = 86400.0
# Two files with the same code: every stream scores them alike, so only a prior can tell them apart.
CODE = "def settle_invoice(invoice):\n    return invoice.total - invoice.discount\n"
FILES = {"a_old.py": CODE, "b_new.py": CODE, "c_other.py": "def unrelated():\n    return 1\n"}
QUERY = "settle invoice total discount"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="builds a git repository with the git command")


def decay(age_days: float, recency: Recency | None = None) -> float:
    """The seed's factor: floor + (1 - floor) x 0.5 ** (age / half-life)."""
    recency = recency or Recency()
    return recency.floor + (1 - recency.floor) * 0.5 ** (age_days / recency.half_life_days)


def git(root: Path, *arguments: str, when: float | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    if when is not None:
        stamp = f"@{int(when)} +0000"
        env |= {"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp}
    subprocess.run(["git", "-C", str(root), *arguments], env=env, check=True, capture_output=True, timeout=30)


def repository(root: Path, commits: list[tuple[float, dict[str, str]]]) -> Path:
    """A git repository whose commits land `days ago` each, writing the files given."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for days_ago, files in commits:
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"{days_ago} days ago", when=time.time() - days_ago * DAY)
    return root


def ranked(root: Path, **settings: Any) -> list[tuple[str, float]]:
    service = RagService(root, replace(Settings(embedding="none"), **settings))
    service.index_directory()
    try:
        return [(r.document.metadata["file"], r.score) for r in service.search(QUERY, 3)]
    finally:
        service.close()


@needs_git
def test_recency_ranks_by_the_last_commit_not_the_checkout_s_mtimes(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [(100, FILES), (3, {"b_new.py": CODE + "\n# reviewed\n"})])
    # Without recency the two copies tie, and ties go by id.
    off = ranked(root)
    assert [file for file, _ in off[:2]] == ["a_old.py", "b_new.py"]
    on = ranked(root, recency=Recency(enabled=True))
    assert [file for file, _ in on[:2]] == ["b_new.py", "a_old.py"]
    relevance = dict(off)
    scores = dict(on)
    # Every file was written moments ago: only the commit dates (100 and 3 days) tell them apart.
    assert scores["b_new.py"] == pytest.approx(relevance["b_new.py"] * decay(3), rel=1e-3)
    assert scores["a_old.py"] == pytest.approx(relevance["a_old.py"] * decay(100), rel=1e-3)
    assert all(0.0 <= score <= 1.0 for score in scores.values())


@needs_git
def test_the_half_life_and_floor_are_settings(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [(10, FILES)])
    recency = Recency(enabled=True, half_life_days=5, floor=0.5)
    relevance, scores = dict(ranked(root)), dict(ranked(root, recency=recency))
    assert scores["a_old.py"] == pytest.approx(relevance["a_old.py"] * decay(10, recency), rel=1e-3)
    assert decay(10, recency) == pytest.approx(0.625)


@needs_git
def test_history_past_ten_half_lives_is_not_read_and_counts_as_that_old(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [(1000, FILES), (2, {"c_other.py": "def unrelated():\n    return 2\n"})])
    times = history.last_changes(root, list(FILES), HISTORY_HALF_LIVES * 30)
    assert time.time() - times["c_other.py"] == pytest.approx(2 * DAY, abs=60)
    assert time.time() - times["a_old.py"] == pytest.approx(300 * DAY, abs=60)


@needs_git
def test_one_git_log_for_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    many = {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(40)}
    root = repository(tmp_path / "repo", [(5, many), (1, {"m0.py": "def f0():\n    return 0.5\n"})])
    calls: list[list[str]] = []
    real_run = subprocess.run

    def spy(command: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(history.subprocess, "run", spy)
    times = history.last_changes(root, list(many), 300)
    assert sum("log" in command for command in calls) == 1 and len(calls) == 2  # ls-files and log
    assert time.time() - times["m0.py"] == pytest.approx(DAY, abs=60)
    assert time.time() - times["m7.py"] == pytest.approx(5 * DAY, abs=60)


@needs_git
def test_uncommitted_and_untracked_files_are_dated_by_their_mtime(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [(50, {"a_old.py": CODE, "b_new.py": CODE})])
    long_ago = time.time() - 200 * DAY
    (root / "b_new.py").write_text(CODE + "# edited, not committed\n", encoding="utf-8")
    (root / "untracked.py").write_text(CODE, encoding="utf-8")
    for name in ("b_new.py", "untracked.py"):
        os.utime(root / name, (long_ago, long_ago))
    times = history.last_changes(root, ["a_old.py", "b_new.py", "untracked.py", "gone.py"], 300)
    assert time.time() - times["a_old.py"] == pytest.approx(50 * DAY, abs=60)
    assert times["b_new.py"] == pytest.approx(long_ago) and times["untracked.py"] == pytest.approx(long_ago)
    assert "gone.py" not in times


@needs_git
def test_a_folder_inside_a_repository_reads_its_own_paths(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [(20, {"top.py": CODE}), (4, {"sub/x.py": CODE})])
    times = history.last_changes(root / "sub", ["x.py"], 300)
    assert time.time() - times["x.py"] == pytest.approx(4 * DAY, abs=60)


def test_without_git_files_are_dated_by_their_mtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    now = time.time()
    os.utime(root / "a_old.py", (now - 2 * DAY, now - 2 * DAY))
    os.utime(root / "b_new.py", (now - 60 * DAY, now - 60 * DAY))
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # no git at all: a clean fallback, not an error
    scores = dict(ranked(root, recency=Recency(enabled=True)))
    relevance = dict(ranked(root))
    assert scores["a_old.py"] > scores["b_new.py"]
    assert scores["a_old.py"] == pytest.approx(relevance["a_old.py"] * decay(2), rel=1e-3)
    assert scores["b_new.py"] == pytest.approx(relevance["b_new.py"] * decay(60), rel=1e-3)


def test_future_dates_within_the_skew_count_as_now_and_beyond_it_as_undated(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    soon, far = time.time() + FUTURE_SKEW_SECONDS / 2, time.time() + 10 * DAY
    os.utime(root / "a_old.py", (far, far))
    os.utime(root / "b_new.py", (soon, soon))
    service = RagService(root, Settings(embedding="none", recency=Recency(enabled=True)))
    service.index_directory()
    assert service.freshness.factor("b_new.py") == pytest.approx(1.0)
    assert service.freshness.factor("a_old.py") == Recency().floor
    assert service.freshness.factor(None) == Recency().floor  # an added document has no date
    service.close()


def test_an_edit_dates_the_file_by_its_new_mtime(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
        os.utime(root / name, (time.time() - 90 * DAY, time.time() - 90 * DAY))
    service = RagService(root, Settings(embedding="none", recency=Recency(enabled=True)))
    service.index_directory()
    assert service.freshness.factor("a_old.py") == pytest.approx(decay(90), rel=1e-3)
    (root / "a_old.py").write_text(CODE + "# changed\n", encoding="utf-8")
    service.update_paths(["a_old.py"])
    assert service.freshness.factor("a_old.py") == pytest.approx(1.0, abs=1e-4)
    (root / "a_old.py").unlink()
    service.update_paths(["a_old.py"])
    assert "a_old.py" not in service.freshness.changed_at
    service.close()


def test_open_files_rank_as_just_changed(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    service = RagService(root, Settings(embedding="none", open_files_boost=True))
    service.index_directory()
    first = service.search(QUERY, 3)
    assert [r.document.metadata["file"] for r in first[:2]] == ["a_old.py", "b_new.py"]
    service.freshness.opened("b_new.py")
    boosted = service.search(QUERY, 3)
    assert [r.document.metadata["file"] for r in boosted[:2]] == ["b_new.py", "a_old.py"]
    # Open: factor 1; every other file is undated without recency, so it keeps the floor.
    assert boosted[0].score == pytest.approx(first[1].score / Recency().floor)
    assert boosted[1].score == pytest.approx(first[0].score)
    service.freshness.closed("b_new.py")
    assert [r.document.metadata["file"] for r in service.search(QUERY, 3)[:2]] == ["a_old.py", "b_new.py"]
    service.close()


def test_both_off_by_default_leave_the_scores_alone(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    service = RagService(root, Settings(embedding="none"))
    assert not service.freshness.active
    service.index_directory()
    service.freshness.opened("b_new.py")  # tracked, but the boost is off
    assert [r.document.metadata["file"] for r in service.search(QUERY, 3)[:2]] == ["a_old.py", "b_new.py"]
    assert service.freshness.changed_at == {}  # nothing was dated: no git, no stat
    service.close()
