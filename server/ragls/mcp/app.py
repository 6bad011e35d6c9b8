"""`ragls mcp`: a Model Context Protocol server on stdio that lets AI agents search one folder's index."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from ragls import __version__
from ragls.errors import RaglsError, SourceError
from ragls.mcp import render
from ragls.mcp.session import FolderSession

T = TypeVar("T")
READY_WAIT_SECONDS = 5.0
log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "ragls indexes the code and documents of one folder and keeps the index fresh as files change. "
    "Use search_code to find the chunks (functions, classes, sections) that answer a question; each result "
    "is cited as file:start-end (1-based, inclusive lines). Use context_prompt for a ready-made prompt with "
    "the evidence fenced as untrusted context. index_status says what is indexed; reindex re-walks the folder."
)


def run_mcp(root: Path) -> int:
    """Serve the MCP tools for `root` on stdio until the client closes the connection; the exit status."""
    _log_to_stderr()
    root = root.expanduser().resolve()
    if not root.is_dir():
        raise SourceError(f"{root} is not a folder: pass the folder to index, e.g. `ragls mcp .`")
    session = FolderSession(root)
    server = create_mcp_server(session)
    session.start()
    try:
        anyio.run(server.run_stdio_async)
    finally:
        session.close()
    return 0


def create_mcp_server(session: FolderSession, ready_wait: float = READY_WAIT_SECONDS) -> MCPServer[Any]:
    """An MCPServer with the four ragls tools over one folder session."""
    server: MCPServer[Any] = MCPServer("ragls", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    tools = _Tools(session, ready_wait)
    server.add_tool(tools.search_code, name="search_code")
    server.add_tool(tools.context_prompt, name="context_prompt")
    server.add_tool(tools.index_status, name="index_status")
    server.add_tool(tools.reindex, name="reindex")
    return server


class _Tools:
    """The tool bodies: engine calls run in worker threads, engine errors become tool errors."""

    def __init__(self, session: FolderSession, ready_wait: float) -> None:
        self.session = session
        self.ready_wait = ready_wait

    async def search_code(
        self,
        query: Annotated[str, Field(description="a question or keywords, e.g. 'where are tokens validated'")],
        top_k: Annotated[int, Field(description="how many results, 1..100")] = 10,
        filters: Annotated[
            dict[str, Any] | None,
            Field(description='exact metadata matches, ANDed, e.g. {"language": "python"}'),
        ] = None,
    ) -> CallToolResult:
        """Search the folder's code and documents; each result is cited as file:start-end with its code."""
        complete = await self._wait_for_first_index()
        results = await _engine(lambda: self.session.service.search(query, top_k, filters))
        root = self.session.root
        return CallToolResult(
            content=[TextContent(type="text", text=render.results_text(query, results, complete))],
            structured_content={
                "results": [render.result_data(result, root) for result in results],
                "complete": complete,
            },
        )

    async def context_prompt(
        self,
        query: Annotated[str, Field(description="the question the prompt is for")],
        top_k: Annotated[int, Field(description="how many chunks of evidence, 1..100")] = 5,
        format: Annotated[str, Field(description="'fenced' (untrusted-context fence) or 'plain'")] = "fenced",
    ) -> CallToolResult:
        """A prompt that answers the question from the folder's code: evidence first, then the question."""
        complete = await self._wait_for_first_index()
        prompt, results = await _engine(lambda: self.session.service.build_context_prompt(query, top_k, format))
        root = self.session.root
        return CallToolResult(
            content=[
                TextContent(type="text", text=prompt),
                TextContent(type="text", text=render.sources_text(results)),
            ],
            structured_content={
                "prompt": prompt,
                "citations": [render.citation(result) for result in results],
                "results": [render.result_data(result, root) for result in results],
                "complete": complete,
            },
        )

    async def index_status(self) -> CallToolResult:
        """What is indexed: state (indexing, idle, failed), files, chunks, generation and the last error."""
        return self._status_result()

    async def reindex(
        self,
        full: Annotated[bool, Field(description="re-read and re-chunk every file, not only changed ones")] = False,
    ) -> CallToolResult:
        """Re-walk the folder now and answer when the run has finished; files that changed are re-indexed."""
        await _engine(lambda: self.session.reindex(full))
        return self._status_result()

    async def _wait_for_first_index(self) -> bool:
        """Wait briefly for the first index; True when it has committed, a tool error when it failed."""
        session = self.session
        if not session.first_run_done.is_set():
            await anyio.to_thread.run_sync(session.wait_until_ready, self.ready_wait)
        if session.first_run_error is not None and not session.service.complete:
            raise ToolError(f"indexing {session.root} failed: {session.first_run_error}")
        return session.service.complete

    def _status_result(self) -> CallToolResult:
        data = render.status_data(self.session.status(), self.session.root)
        return CallToolResult(
            content=[TextContent(type="text", text=render.status_text(data))], structured_content=data
        )


async def _engine(call: Callable[[], T]) -> T:
    """Run a blocking engine call off the event loop; its deliberate errors reach the agent as tool errors."""
    try:
        return await anyio.to_thread.run_sync(call)
    except RaglsError as exc:
        raise ToolError(str(exc)) from exc


def _log_to_stderr() -> None:
    """Our progress lines on stderr at INFO; stdout carries only the MCP protocol."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    ragls_log = logging.getLogger("ragls")
    ragls_log.addHandler(handler)
    ragls_log.setLevel(logging.INFO)
    ragls_log.propagate = False
