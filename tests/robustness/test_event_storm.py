"""File-event storms through the real server: a burst of thousands of deletions costs time linear in the burst,
searches keep answering meanwhile, and what is left afterwards is exactly what is on disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import client, start_session  # noqa: F401 (the real server as a fixture)

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(150)]

# Enough files that a scan of every file per deletion (the old, quadratic cost: 17 s here) blows the
# 10 s wait; 13,500 deletions now take under a second.
N_FILES = 15000
CLIENT_WATCH = "visual-studio-code@v1.65.2"


def files_of(results: list[dict]) -> set[str]:
    return {r["metadata"]["file"] for r in results}


async def test_a_burst_of_deletions_leaves_exactly_the_files_on_disk(client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "workspace"
    (root / "gen").mkdir(parents=True)
    for index in range(N_FILES):
        (root / "gen" / f"m{index}.py").write_text(f"def stormy_function_{index}():\n    return {index}\n")
    (root / "keep.py").write_text("def survivor_of_the_storm():\n    return 'still here'\n")
    session = await start_session(client, root, CLIENT_WATCH)
    status = await session.wait_indexed()
    assert sum(folder["files"] for folder in status["folders"]) == N_FILES + 1

    deleted = [root / "gen" / f"m{index}.py" for index in range(N_FILES) if index % 10]
    for path in deleted:
        path.unlink()
    generation = status["folders"][0]["generation"]
    # One notification for the whole burst, as an editor sends after `git checkout` or `rm -r`.
    events = [types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Deleted) for path in deleted]
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=events))
    answers = await asyncio.gather(*(session.search("survivor of the storm") for _ in range(20)))
    assert all("keep.py" in files_of(answer["results"]) for answer in answers)

    remaining = N_FILES // 10 + 1
    status = await session.wait_for(
        lambda s: s["folders"][0]["generation"] > generation and s["folders"][0]["files"] == remaining, timeout=10
    )
    assert status["folders"][0]["state"] == "idle"
    gone = await session.search("stormy_function_7", topK=50)
    assert "gen/m7.py" not in files_of(gone["results"])
    kept = await session.search("stormy_function_10", topK=50)
    assert "gen/m10.py" in files_of(kept["results"])
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="stormy_function_"))
    assert symbols is not None and len({s.location.uri for s in symbols}) <= remaining
