"""`ragls mcp` through the MCP SDK's own client over stdio, plus the first-index wait in process."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from ragls.config import Limits, Settings
from ragls.mcp.app import create_mcp_server
from ragls.mcp.session import FolderSession
from tests.sample_workspace import write_tree

CITATION = re.compile(r"^[\w./-]+:\d+-\d+$")
TOOLS = {"search_code", "context_prompt", "index_status", "reindex"}


MCP_COMMAND = (sys.executable, "-m", "ragls", "mcp")


@asynccontextmanager
async def mcp_session(root: Path) -> AsyncIterator[ClientSession]:
    command, *args = MCP_COMMAND
    params = StdioServerParameters(command=command, args=[*args, str(root)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def call(session: ClientSession, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
    with anyio.fail_after(30):
        return await session.call_tool(tool, arguments or {})


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_tools_answer_with_citations(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        listed = await session.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS

        found = await call(session, "search_code", {"query": "validate bearer token", "top_k": 3})
        assert not found.is_error
        data = found.structured_content
        assert data is not None and data["complete"] is True
        best = data["results"][0]
        assert best["metadata"]["file"] == "src/auth/middleware.py"
        assert CITATION.match(best["citation"])
        lines = f"{best['metadata']['startLine']}-{best['metadata']['endLine']}"
        assert best["citation"] == f"src/auth/middleware.py:{lines}"
        assert f"[1] {best['citation']}" in text(found)
        assert all("swordfish" not in result["content"] for result in data["results"])

        markdown = await call(session, "search_code", {"query": "rate limiting", "filters": {"language": "markdown"}})
        assert markdown.structured_content is not None
        assert {r["metadata"]["file"] for r in markdown.structured_content["results"]} == {"docs/guide.md"}

        prompt = await call(session, "context_prompt", {"query": "How does AuthMiddleware check requests?"})
        assert not prompt.is_error
        assert prompt.structured_content is not None
        assert prompt.structured_content["prompt"].startswith("<tnsai-memory>")
        citations = prompt.structured_content["citations"]
        assert citations and all(CITATION.match(c) for c in citations)
        assert "Sources:\n- " + citations[0] in text(prompt)
        plain = await call(session, "context_prompt", {"query": "connection pool", "format": "plain"})
        assert text(plain).startswith("[Relevant code context]")


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_status_and_reindex(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        await call(session, "search_code", {"query": "token"})  # waits for the first index
        status = await call(session, "index_status")
        data = status.structured_content
        assert data is not None
        assert (data["state"], data["generation"], data["error"]) == ("idle", 1, None)
        assert data["folder"] == workspace.resolve().as_uri()
        assert data["files"] >= 3
        assert f"Index of {workspace.resolve()}: idle, generation 1" in text(status)
        again = await call(session, "reindex", {"full": True})
        assert again.structured_content is not None and again.structured_content["generation"] == 2


BAD_INPUT = [
    ("search_code", {"query": ""}, "query must be a non-empty string, got ''"),
    ("search_code", {"query": "   "}, "query must be a non-empty string"),
    ("search_code", {"query": "token", "top_k": 0}, "topK must be 1..100, got 0"),
    ("search_code", {"query": "token", "top_k": 101}, "topK must be 1..100, got 101"),
    ("search_code", {"query": "token", "filters": "python"}, "filters"),
    ("context_prompt", {"query": "token", "format": "yaml"}, "format must be one of fenced, plain, got 'yaml'"),
    ("context_prompt", {"query": ""}, "query must be a non-empty string"),
    ("context_prompt", {"query": "token", "top_k": -3}, "topK must be 1..100, got -3"),
]


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_bad_input_is_a_tool_error_with_the_engines_message(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        for tool, arguments, message in BAD_INPUT:
            result = await call(session, tool, arguments)
            assert result.is_error, (tool, arguments)
            assert message in text(result), (tool, arguments, text(result))
            assert "Traceback" not in text(result)
        status = await call(session, "index_status")
        assert status.structured_content is not None
        assert (status.structured_content["state"], status.structured_content["error"]) == ("idle", None)


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_changed_files_are_found_without_a_reindex(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        await call(session, "index_status")
        await call(session, "search_code", {"query": "token"})
        new_file = workspace / "src" / "billing.py"
        new_file.write_text("def compute_invoice_total(lines):\n    return sum(lines)\n", encoding="utf-8")
        await wait_for_citation(session, "compute_invoice_total", "src/billing.py:1-2", present=True)
        new_file.unlink()
        await wait_for_citation(session, "compute_invoice_total", "src/billing.py:1-2", present=False)


async def wait_for_citation(session: ClientSession, query: str, citation: str, present: bool) -> None:
    deadline = time.monotonic() + 20
    while True:
        result = await call(session, "search_code", {"query": query})
        assert result.structured_content is not None
        citations = [r["citation"] for r in result.structured_content["results"]]
        if (citation in citations) == present:
            return
        assert time.monotonic() < deadline, f"{citation} {'never appeared' if present else 'never left'}: {citations}"
        await anyio.sleep(0.2)


@pytest.mark.timeout(60)
def test_a_missing_folder_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    completed = subprocess.run(
        [*MCP_COMMAND, str(missing)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
    )
    assert completed.returncode == 1
    assert f"{missing} is not a folder" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert completed.stdout == ""


# ---------------------------------------------------------------- in process: the first-index wait


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_search_before_the_first_index_says_it_is_still_building(workspace: Path) -> None:
    session = FolderSession(workspace, watch=False)  # not started: the first index never finishes
    server = create_mcp_server(session, ready_wait=0.2)
    started = time.monotonic()
    result = await server.call_tool("search_code", {"query": "token"})
    assert isinstance(result, CallToolResult) and not result.is_error
    assert time.monotonic() - started < 5
    assert result.structured_content == {"results": [], "complete": False}
    assert "still building" in text(result)


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_search_waits_briefly_for_the_first_index(workspace: Path) -> None:
    session = FolderSession(workspace, watch=False)
    server = create_mcp_server(session, ready_wait=30)
    session.start()
    result = await server.call_tool("search_code", {"query": "validate bearer token"})
    assert isinstance(result, CallToolResult) and result.structured_content is not None
    assert result.structured_content["complete"] is True
    assert result.structured_content["results"][0]["metadata"]["file"] == "src/auth/middleware.py"


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_a_failed_first_index_is_a_tool_error(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "big")
    session = FolderSession(root, Settings(limits=Limits(max_files=1)), watch=False)
    server = create_mcp_server(session, ready_wait=30)
    session.start()
    with pytest.raises(ToolError, match=r"failed: maxFiles limit of 1 exceeded"):
        await server.call_tool("search_code", {"query": "token"})
    status = await server.call_tool("index_status", {})
    assert isinstance(status, CallToolResult) and status.structured_content is not None
    assert status.structured_content["state"] == "failed"
