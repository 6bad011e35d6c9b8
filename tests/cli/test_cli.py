"""The `ragls` command as a user runs it: output, JSON, filters and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)


CACHE_HOME = tempfile.mkdtemp(prefix="ragls-cli-cache-")


def ragls(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": CACHE_HOME}
    return subprocess.run([sys.executable, "-m", "ragls", *args], capture_output=True, text=True, timeout=90, env=env)


def test_index_reports_counts(project: Path) -> None:
    done = ragls("index", str(project))
    assert done.returncode == 0, done.stderr
    assert "files 3, chunks 4" in done.stdout
    assert "skipped: binary 1" in done.stdout


def test_search_prints_citations(project: Path) -> None:
    done = ragls("search", str(project), "validate bearer token", "-k", "2", "-q")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith(" 1. ") and "src/auth.py:1-3  check_token" in first


def test_search_json_and_filters(project: Path) -> None:
    done = ragls("search", str(project), "connection pool", "--json", "--filter", "language=javascript", "-q")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [r["metadata"]["file"] for r in results] == ["src/pool.js"]
    assert results[0]["uri"] == (project / "src/pool.js").resolve().as_uri()


def test_context_and_symbols(project: Path) -> None:
    plain = ragls("context", str(project), "acquire connection", "--format", "plain", "-q")
    assert plain.returncode == 0 and plain.stdout.startswith("[Relevant code context]\n--- file: src/pool.js")
    symbols = ragls("symbols", str(project), "acq", "-q")
    assert symbols.stdout.splitlines()[0].startswith("acquireConnection  function  src/pool.js:1-3")


def test_min_score_and_recency_flags(project: Path) -> None:
    every = json.loads(ragls("search", str(project), "token connection", "--json", "-q").stdout)
    scores = [result["score"] for result in every]
    assert len(every) >= 2 and scores[0] == 1.0 and all(0 <= score <= 1 for score in scores)
    threshold = str((scores[0] + scores[1]) / 2)
    kept = json.loads(
        ragls("search", str(project), "token connection", "--json", "-q", "--min-score", threshold).stdout
    )
    assert [r["id"] for r in kept] == [every[0]["id"]]
    context = ragls("context", str(project), "token connection", "--format", "plain", "-q", "--min-score", threshold)
    assert context.returncode == 0 and context.stdout.count("--- file:") == 1
    for bad in ("1.5", "-0.1", "high"):
        refused = ragls("search", str(project), "token", "--min-score", bad)
        assert refused.returncode == 2 and "--min-score: expected a number from 0 to 1" in refused.stderr
    # Files dated by their mtime (no git here): the one changed today beats last year's with recency on.
    year_ago = time.time() - 365 * 86400
    os.utime(project / "src/auth.py", (year_ago, year_ago))
    recent = ragls("search", str(project), "token connection", "--json", "-q", "--recency", "--half-life-days", "7")
    assert recent.returncode == 0, recent.stderr
    dated = {r["metadata"]["file"]: r["score"] for r in json.loads(recent.stdout)}
    plain = {r["metadata"]["file"]: r["score"] for r in every}
    assert dated["src/auth.py"] == pytest.approx(plain["src/auth.py"] * 0.8, rel=1e-3)
    assert dated["src/pool.js"] == pytest.approx(plain["src/pool.js"], rel=1e-3)
    assert ragls("search", str(project), "x", "--half-life-days", "0").returncode == 2


def test_exit_codes(project: Path) -> None:
    missing = ragls("search", str(project / "nope"), "x")
    assert missing.returncode == 1
    assert missing.stderr.strip().endswith("does not exist") and "Traceback" not in missing.stderr
    assert ragls("search", str(project)).returncode == 2
    assert ragls("frobnicate").returncode == 2
    # Counts are checked before anything is indexed, in the flags' own terms.
    for args, message in [
        (("search", str(project), "x", "-k", "0"), "argument -k/--top-k: expected 1..100, got '0'"),
        (("context", str(project), "x", "-k", "101"), "argument -k/--top-k: expected 1..100, got '101'"),
        (("symbols", str(project), "x", "-n", "0"), "argument -n/--count: expected a positive integer, got '0'"),
    ]:
        bad = ragls(*args, "-q")
        assert bad.returncode == 2 and message in bad.stderr, bad.stderr
        assert "topK" not in bad.stderr
    for command in ("index", "search", "context", "symbols", "serve", "mcp"):
        assert ragls(command, "--help").returncode == 0


def test_a_second_run_reuses_the_stored_index_and_cache_commands(project: Path) -> None:
    first = ragls("index", str(project), "-q")
    assert "read 3 changed files, reused 0" in first.stdout, first.stdout
    (project / "src/auth.py").write_text("def check_token(request):\n    return request.bearer\n", encoding="utf-8")
    second = ragls("index", str(project), "-q")
    assert "read 1 changed files, reused 2" in second.stdout, second.stdout
    listed = ragls("cache", "list")
    assert str(project.resolve()) in listed.stdout and "generation 2, 3 files" in listed.stdout
    cleared = ragls("cache", "clear", str(project))
    assert cleared.returncode == 0 and cleared.stdout.startswith("cleared ")
    assert str(project.resolve()) not in ragls("cache", "list").stdout
    uncached = ragls("index", str(project), "-q", "--no-cache")
    assert "reused 0" in uncached.stdout and str(project.resolve()) not in ragls("cache", "list").stdout


@pytest.mark.timeout(120)
def test_a_reader_that_goes_away_is_not_an_error(project: Path) -> None:
    """`ragls search ... | head -1`: the pipe closes early; that is no error and prints no traceback."""
    env = {**os.environ, "XDG_CACHE_HOME": CACHE_HOME}
    search = subprocess.Popen(
        [sys.executable, "-m", "ragls", "search", str(project), "token", "-k", "20", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert search.stdout is not None and search.stderr is not None
    search.stdout.close()  # the reader is gone before the answer is written
    stderr = search.stderr.read().decode()
    assert search.wait(timeout=90) == 0 and "Traceback" not in stderr, stderr


def test_servers_run_blas_on_one_thread() -> None:
    script = (
        "import numpy, json, threadpoolctl\n"
        "threadpoolctl.threadpool_limits(2, user_api='blas')\n"
        "from ragls.cli import one_blas_thread\n"
        "one_blas_thread()\n"
        "print(json.dumps([pool['num_threads'] for pool in threadpoolctl.threadpool_info()]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [1]  # NumPy's BLAS, limited after it had two threads
