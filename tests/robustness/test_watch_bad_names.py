"""The server's own watcher survives a file name that is not UTF-8: watchfiles fails on the whole batch of
events that holds one, and the re-armed watcher walks the folder again, so no change in that batch is lost."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import client, start_session  # noqa: F401 (the real server as a fixture)
from tests.sample_workspace import write_tree

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]

SERVER_WATCH = "neovim@v0.10.0"  # cannot register file watchers, so the server watches the folder itself


async def test_a_change_beside_an_undecodable_name_is_still_indexed(client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811
    root = write_tree(tmp_path / "workspace")
    session = await start_session(client, root, SERVER_WATCH)
    await session.wait_indexed()
    await asyncio.sleep(0.5)  # let the watcher arm itself
    # Both in one batch of events: the undecodable name makes watchfiles drop the batch.
    with open(os.path.join(os.fsencode(root / "src"), b"bad\xff.py"), "w", encoding="utf-8") as bad:
        bad.write("def undecodable_neighbour():\n    return 1\n")
    (root / "src" / "beside_the_bad_name.py").write_text("def created_beside_a_bad_name():\n    return 2\n")
    results = await session.wait_search(
        "created_beside_a_bad_name",
        lambda r: any(x["metadata"]["file"] == "src/beside_the_bad_name.py" for x in r),
    )
    assert results
