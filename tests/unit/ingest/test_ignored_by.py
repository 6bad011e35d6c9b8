"""Which ignore-file line ignored a path (checked against `git check-ignore -v`), and the walk's limit counts and
its warning when no file is admitted."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ragls.config import Limits
from ragls.errors import LimitExceeded
from ragls.ingest.ignore import IgnoreRules
from ragls.ingest.walk import MAX_IGNORED_SAMPLES, explain_empty_walk, walk
from tests.git_env import isolated_git_env

GIT_TIMEOUT_S = 30


def _write(root: Path, tree: dict[str, str]) -> None:
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def _git_check_ignore(root: Path, rel_path: str) -> str | None:
    """`source:line pattern` as git reports the deciding line, or None when git keeps the path."""
    env = isolated_git_env(root)
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True, timeout=GIT_TIMEOUT_S)
    done = subprocess.run(
        ["git", "check-ignore", "-v", "--no-index", rel_path],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_S,
    )
    if done.returncode == 1:
        return None
    source, line, pattern = done.stdout.split("\t")[0].split(":", 2)
    return None if pattern.startswith("!") else f"{source}:{line} {pattern}"


# A tree, and paths (whose ancestors are kept) with the line git says ignores each, or None.
CASES: dict[str, tuple[dict[str, str], dict[str, str | None]]] = {
    "top-level-star": (
        {".gitignore": "# Debian's kernel tree\n*.o\n/*\n", "kernel/sched.c": "", "Makefile": ""},
        {"kernel/": ".gitignore:3 /*", "Makefile": ".gitignore:3 /*"},
    ),
    "last-match-wins-and-negation-keeps": (
        {".gitignore": "*.log\nbuild.log\n!keep.log\n", "a.log": "", "build.log": "", "keep.log": "", "x.py": ""},
        {"a.log": ".gitignore:1 *.log", "build.log": ".gitignore:2 build.log", "keep.log": None, "x.py": None},
    ),
    "nested-file-wins-over-the-root": (
        {".gitignore": "*.tmp\n", "src/.gitignore": "\n\n/gen/\n!only.tmp\n", "src/gen/a.py": "", "src/x.tmp": ""},
        {"src/gen/": "src/.gitignore:3 /gen/", "src/x.tmp": ".gitignore:1 *.tmp", "src/only.tmp": None},
    ),
    "directory-only-pattern": (
        {".gitignore": "logs/\n", "logs/a.txt": "", "src/logs": "a file named logs"},
        {"logs/": ".gitignore:1 logs/", "src/logs": None},
    ),
}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("case", sorted(CASES))
def test_ignored_by_names_the_line_git_names(tmp_path: Path, case: str) -> None:
    tree, expected = CASES[case]
    _write(tmp_path, tree)
    rules = IgnoreRules(tmp_path)
    for rel_path, line in expected.items():
        is_dir = rel_path.endswith("/")
        source = rules.ignored_by(rel_path.rstrip("/"), is_dir)
        assert (str(source) if source else None) == line, rel_path
        assert _git_check_ignore(tmp_path, rel_path) == line, f"the case disagrees with git: {rel_path}"


def test_a_walk_that_admits_nothing_names_the_lines_that_excluded_everything(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            ".gitignore": "*.o\n/src/*\n!/src/build/\n",
            **{f"src/dir{index}/a.c": "" for index in range(5)},
            "src/README": "",
            "src/build/x.c": "",
            "src/.env": "",
        },
    )
    rules = IgnoreRules(tmp_path)
    result = walk(tmp_path, Limits(), rules)
    assert result.files == []
    assert explain_empty_walk(result, rules) == (
        "no files admitted, though the folder has 8 entries: "
        ".gitignore:2 /src/* ignores 6 (src/README, src/dir0/, src/dir1/, ...); "
        "the default skip list ignores 1 (src/build/); secret 1. "
        "Edit that ignore-file line, or add `!` patterns after it, to index them."
    )


@pytest.mark.parametrize(
    "tree",
    [
        {"main.py": "", ".gitignore": "*.o\n"},  # files admitted
        {".gitignore": "*\n"},  # nothing but the ignore file itself
        {},  # an empty folder
    ],
)
def test_no_warning_when_files_are_admitted_or_the_folder_is_empty(tmp_path: Path, tree: dict[str, str]) -> None:
    _write(tmp_path, tree)
    rules = IgnoreRules(tmp_path)
    assert explain_empty_walk(walk(tmp_path, Limits(), rules), rules) is None


def test_only_default_skips_give_no_ignore_file_hint(tmp_path: Path) -> None:
    _write(tmp_path, {"build/out.js": "", "dist/app.js": ""})
    rules = IgnoreRules(tmp_path)
    assert explain_empty_walk(walk(tmp_path, Limits(), rules), rules) == (
        "no files admitted, though the folder has 2 entries: the default skip list ignores 2 (build/, dist/)."
    )


def test_more_ignored_entries_than_the_walk_remembers_are_counted(tmp_path: Path) -> None:
    _write(tmp_path, {".gitignore": "*.o\n", **{f"f{index}.o": "" for index in range(MAX_IGNORED_SAMPLES + 5)}})
    rules = IgnoreRules(tmp_path)
    message = explain_empty_walk(walk(tmp_path, Limits(), rules), rules) or ""
    assert f".gitignore:1 *.o ignores {MAX_IGNORED_SAMPLES}" in message and "; 5 more ignored." in message


@pytest.mark.parametrize(
    ("limits", "found"),
    [
        (Limits(max_files=3), "maxFiles limit of 3 exceeded (12 files found)"),
        (Limits(max_entries=5), "maxEntries limit of 5 exceeded (15 files and directories found)"),
        # maxFiles is crossed first; past it the walk only counts, so maxEntries is never reported.
        (Limits(max_files=1, max_entries=5), "maxFiles limit of 1 exceeded (12 files found)"),
    ],
)
def test_a_walk_over_a_limit_says_how_many_it_found(tmp_path: Path, limits: Limits, found: str) -> None:
    _write(tmp_path, {f"d{index % 3}/f{index}.txt": "" for index in range(12)})
    with pytest.raises(LimitExceeded) as caught:
        walk(tmp_path, limits)
    assert str(caught.value).startswith(found), caught.value


def test_counting_past_a_limit_stops_at_the_cap_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragls.ingest.walk.MAX_COUNTED_ENTRIES", 20)
    _write(tmp_path, {f"d{index:02}/f.txt": "" for index in range(30)})
    with pytest.raises(LimitExceeded, match=r"^maxFiles limit of 2 exceeded \(more than \d+ files found\)"):
        walk(tmp_path, Limits(max_files=2))
    assert len(walk(tmp_path, Limits()).files) == 30  # the cap bounds only the counting past a limit
