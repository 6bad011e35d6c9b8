"""Index limits on the command line: a flag for every limit, presets, usage errors and messages in the CLI's terms."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.test_cli import ragls

pytestmark = pytest.mark.timeout(120)


# --limit NAME=VALUE, and the breach it causes on the project, said in the CLI's terms.
BREACHES = {
    "maxFiles": (
        "maxFiles=2",
        r"maxFiles limit of 2 exceeded \(4 files found\); raise it with --max-files N or --limit maxFiles=N, ",
    ),
    "maxEntries": (
        "maxEntries=3",
        r"maxEntries limit of 3 exceeded \(5 files and directories found\); raise it with --limit maxEntries=N, ",
    ),
    "maxDepth": ("maxDepth=1", r"maxDepth limit of 1 exceeded \(src/\S+ is 2 deep\); raise it with --limit maxDepth=N"),
    "maxDecodedBytes": (
        "maxDecodedBytes=100",
        r"maxDecodedBytes limit of 100 exceeded \(1\d\d characters decoded by file 3 of 4, src/auth\.py\); "
        r"raise it with --limit maxDecodedBytes=N",
    ),
}


@pytest.mark.parametrize("limit", sorted(BREACHES))
def test_each_limit_set_with_limit_fails_the_run_naming_its_flag(project: Path, limit: str) -> None:
    assignment, message = BREACHES[limit]
    assert ragls("index", str(project), "-q", "--no-cache").returncode == 0  # the defaults admit it
    done = ragls("index", str(project), "-q", "--no-cache", "--limit", assignment)
    assert done.returncode == 1, done.stdout
    assert re.search(message, done.stderr), done.stderr
    assert "ragls.limits" not in done.stderr  # the CLI names its own flags, not the editor setting


def test_max_file_bytes_set_with_limit_skips_larger_files(project: Path) -> None:
    done = ragls("index", str(project), "-q", "--no-cache", "--limit", "maxFileBytes=60")
    assert done.returncode == 0, done.stderr
    assert "files 2, chunks 3" in done.stdout and "skipped: binary 1, tooLarge 1" in done.stdout  # src/auth.py


def test_limit_values_take_units_and_the_last_flag_wins(project: Path) -> None:
    done = ragls("index", str(project), "-q", "--no-cache", "--limit", "maxFileBytes=1", "--limit", "maxFileBytes=1KiB")
    assert done.returncode == 0 and "skipped: binary 1\n" in done.stdout, done.stdout


def test_max_files_is_kept_and_the_strict_preset_has_the_seeds_limits(tmp_path: Path) -> None:
    for index in range(4097):
        path = tmp_path / f"d{index // 100}" / f"f{index}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text("", encoding="utf-8")
    default = ragls("index", str(tmp_path), "-q", "--no-cache")
    assert default.returncode == 0 and "files 4097" in default.stdout, default.stderr
    strict = ragls("index", str(tmp_path), "-q", "--no-cache", "--limits", "strict")
    assert strict.returncode == 1
    assert "maxFiles limit of 4,096 exceeded (4,097 files found); raise it with --max-files N" in strict.stderr
    raised = ragls("index", str(tmp_path), "-q", "--no-cache", "--limits", "strict", "--max-files", "5000")
    assert raised.returncode == 0 and "files 4097" in raised.stdout, raised.stderr
    below = ragls("index", str(tmp_path), "-q", "--no-cache", "--max-files", "4000")
    assert below.returncode == 1 and "maxFiles limit of 4,000 exceeded (4,097 files found)" in below.stderr


BAD_FLAGS = {
    "no-value": (["--limit", "maxFiles"], "argument --limit: expected NAME=VALUE with NAME one of maxDecodedBytes, "),
    "unknown-name": (["--limit", "maxSize=3"], "expected NAME=VALUE with NAME one of"),
    "not-a-number": (["--limit", "maxFiles=lots"], "argument --limit: maxFiles: expected a positive integer"),
    "zero": (["--limit", "maxDepth=0"], "argument --limit: maxDepth: expected a positive integer"),
    "bad-unit": (["--limit", "maxDecodedBytes=2TB"], "maxDecodedBytes: expected a positive integer (optionally"),
    "max-files-zero": (["--max-files", "0"], "argument --max-files: expected a positive integer, got '0'"),
    "unknown-preset": (["--limits", "lax"], "argument --limits: invalid choice: 'lax'"),
}


@pytest.mark.parametrize("case", sorted(BAD_FLAGS))
def test_a_bad_limit_flag_is_a_usage_error(project: Path, case: str) -> None:
    flags, message = BAD_FLAGS[case]
    done = ragls("index", str(project), "-q", "--no-cache", *flags)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_mcp_server_takes_the_same_flags() -> None:
    done = ragls("mcp", ".", "--limit", "maxFiles=none")
    assert done.returncode == 2 and "argument --limit: maxFiles: expected a positive integer" in done.stderr


def test_a_folder_whose_ignore_file_ignores_everything_warns_with_the_line(tmp_path: Path) -> None:
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel/sched.c").write_text("int schedule(void) { return 0; }\n", encoding="utf-8")
    (tmp_path / "Makefile").write_text("all:\n", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("# Debian's kernel tree\n*.o\n/*\n", encoding="utf-8")
    done = ragls("index", str(tmp_path), "-q", "--no-cache")
    assert done.returncode == 0 and "files 0" in done.stdout
    assert (
        "ragls: warning: no files admitted, though the folder has 2 entries: "
        ".gitignore:3 /* ignores 2 (Makefile, kernel/)" in done.stderr
    ), done.stderr
