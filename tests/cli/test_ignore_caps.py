"""`ragls index` on a folder whose `.gitignore` is over a cap: it succeeds, says so on stderr and in its summary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)


def test_index_warns_about_an_ignore_file_over_the_pattern_cap(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".gitignore").write_text("".join(f"p{i}.txt\n" for i in range(1100)), encoding="utf-8")
    (project / "main.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    (project / "p1099.txt").write_text("past the cap\n", encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "RAGLS_EMBEDDING": "none"}
    done = subprocess.run(
        [sys.executable, "-m", "ragls", "index", str(project), "-q"],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "files 2," in done.stdout
    assert "skipped: ignoreFileTruncated 1" in done.stdout
    assert ".gitignore has more than 1,024 patterns: those from line 1,025 on are not applied" in done.stderr
