"""The shared index through the real front ends: `ragls serve` over stdio with `sharedIndex` initializationOptions,
`ragls mcp --shared-index`, and `ragls index --shared-index`, each reading what `ragls publish` wrote."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_lsp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent
from pytest_lsp import LanguageClient

from ragls.cli import main
from tests.e2e.conftest import SHUTDOWN_SECONDS, server_config, start_session
from tests.shared_index.conftest import clone, git
from tests.shared_index.test_shared_index import NAME, publish

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")
pytestmark = pytest.mark.timeout(120)
WAIT_SECONDS = 30.0


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), SHUTDOWN_SECONDS)


@pytest.fixture
def published(repository: Path, database: str, tmp_path: Path) -> Path:
    """A clone with one uncommitted edit and one untracked file, of a repository published at its HEAD."""
    assert publish(repository, database) == 0
    workspace = clone(repository, tmp_path / "clone")
    (workspace / "pkg" / "module_05.py").write_text("def edited_here():\n    return 'quokka'\n")
    (workspace / "notes.md").write_text("# Quokka notes\n\nUntracked, so indexed here.\n")
    return workspace


def assert_shared(shared: dict[str, Any], workspace: Path, files: int) -> None:
    assert shared["name"] == NAME and shared["error"] is None
    assert shared["commit"] == git(workspace, "rev-parse", "HEAD") and shared["generation"] == 1
    assert (shared["files"], shared["localFiles"]) == (files - 2, 2)
    assert "***" not in shared["source"] and shared["source"].startswith("postgresql://")


@pytest.mark.asyncio
@pytest.mark.parametrize("client_name", ["visual-studio-code@v1.65.2", "neovim@v0.10.0"])
async def test_the_language_server_reads_the_shared_index(
    client: LanguageClient, published: Path, database: str, client_name: str
) -> None:
    options = {"sharedIndex": {"name": NAME, "url": database}}
    session = await start_session(client, published, client_name, init_options=options)
    # The published snapshot is searchable (generation 1) before the walk finds the two local files: wait for them.
    status = await session.wait_for(
        lambda s: bool(s["folders"]) and (s["folders"][0].get("sharedIndex") or {}).get("localFiles") == 2
    )
    (folder,) = status["folders"]
    assert_shared(folder["sharedIndex"], published, folder["files"])
    results = (await session.search("quokka", topK=5))["results"]
    assert {r["metadata"]["file"] for r in results} == {"pkg/module_05.py", "notes.md"}
    best = (await session.search("validate the bearer token", topK=1))["results"]
    assert best and best[0]["metadata"]["file"] == "src/auth/middleware.py"
    assert not [m for m in client.messages if "shared index" in m.message]


@pytest.mark.asyncio
async def test_the_language_server_warns_once_when_the_database_is_down(
    client: LanguageClient, published: Path, tmp_path: Path
) -> None:
    down = f"postgresql://reader:hunter2-secret@/ragls?host={tmp_path / 'no-server'}"
    session = await start_session(
        client, published, "neovim@v0.10.0", init_options={"sharedIndex": {"name": NAME, "url": down}}
    )
    status = await session.wait_indexed()
    shared = status["folders"][0]["sharedIndex"]
    assert shared["error"] and shared["files"] == 0 and "reader:***@" in shared["source"]
    assert (await session.search("quokka", topK=5))["results"]
    await asyncio.sleep(0.2)  # showMessage follows the index run's end
    warnings = [m.message for m in client.messages if "shared index" in m.message]
    assert len(warnings) == 1 and "locally" in warnings[0] and "retrying in the background" in warnings[0]
    assert all("hunter2-secret" not in m.message for m in client.messages)


@pytest.mark.asyncio
async def test_the_mcp_server_reads_the_shared_index(published: Path, database: str) -> None:
    # The SDK passes a server only HOME, PATH and a few more: the tests' cache, a lexical index, and where ragls is.
    env = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "RAGLS_EMBEDDING": "none", "PATH": os.environ["PATH"]}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    arguments = ["-m", "ragls", "mcp", str(published), "--shared-index", NAME, "--shared-url", database]
    params = StdioServerParameters(command=sys.executable, args=arguments, env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        with anyio.fail_after(WAIT_SECONDS):
            found = await session.call_tool("search_code", {"query": "quokka", "top_k": 5})
            status = await session.call_tool("index_status", {})
    assert found.structured_content is not None
    assert {r["metadata"]["file"] for r in found.structured_content["results"]} == {"pkg/module_05.py", "notes.md"}
    data = status.structured_content
    assert data is not None
    assert_shared(data["sharedIndex"], published, data["files"])
    text = "\n".join(block.text for block in status.content if isinstance(block, TextContent))
    assert f"shared index {NAME} (" in text and f"{data['files'] - 2} files from it, 2 indexed here" in text


def test_the_cli_reads_the_shared_index(published: Path, database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(published), "--shared-index", NAME, "--shared-url", database, "--no-cache", "-q"]) == 0
    out = capsys.readouterr().out
    assert f"shared index {NAME} (" in out and "files from it, 2 indexed here" in out
