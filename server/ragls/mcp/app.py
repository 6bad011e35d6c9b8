"""`ragls mcp`: a Model Context Protocol server on stdio that lets AI agents search one folder's index."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ragls import __version__
from ragls.config import Settings
from ragls.errors import InvalidArgument, RaglsError, SourceError
from ragls.mcp import files, render
from ragls.mcp.schemas import ContextOutput, FolderStatus, LinesOutput, SearchOutput, SymbolsOutput
from ragls.mcp.session import FolderSession, embedding_provider
from ragls.rag.checks import MAX_QUERY_CHARS, MAX_SYMBOL_QUERY_CHARS, shown
from ragls.rag.prompt import FORMATS
from ragls.rag.service import MAX_TOP_K

T = TypeVar("T")
READY_WAIT_SECONDS = 5.0
MAX_SYMBOLS = 200
log = logging.getLogger(__name__)
# The engine's errors name the protocol's fields; the tools' parameters are spelled these ways.
PARAMETER_NAMES = {"topK": "top_k", "minScore": "min_score"}
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

INSTRUCTIONS = (
    "ragls indexes the code and documents of one folder and keeps the index fresh as files change. "
    "Use search_code to find the chunks (functions, classes, sections) that answer a question; each result "
    "is cited as file:start-end (1-based, inclusive lines). find_symbols finds definitions by name, and "
    "read_lines reads the lines around a citation. Use context_prompt for a ready-made prompt with "
    "the evidence fenced as untrusted context. index_status says what is indexed; reindex re-walks the folder."
)


def _bounded(description: str, **bounds: Any) -> Any:
    """A parameter's Field with JSON Schema bounds (minimum, maximum, enum, maxLength) for clients to read.

    The bounds are published, not enforced by pydantic: the engine checks them, so a bad value is refused in
    our own words, naming the tool's parameter ("top_k must be 1..100, got 0").
    """
    return Field(description=description, json_schema_extra=bounds)


Query = Annotated[
    str,
    _bounded("a question or keywords, e.g. 'where are tokens validated'", minLength=1, maxLength=MAX_QUERY_CHARS),
]
TopK = Annotated[int, _bounded(f"how many results, 1..{MAX_TOP_K}", minimum=1, maximum=MAX_TOP_K)]
MinScore = Annotated[
    float,
    _bounded(
        "leave out results scoring less (scores are relevance, 0..1: 1 for a result every search stream ranks "
        "first); 0 keeps all",
        minimum=0,
        maximum=1,
    ),
]


def run_mcp(root: Path, settings: Settings | None = None) -> int:
    """Serve the MCP tools for `root` on stdio until the client closes the connection; the exit status."""
    _log_to_stderr()
    root = root.expanduser().resolve()
    if not root.is_dir():
        raise SourceError(f"{root} is not a folder: pass the folder to index, e.g. `ragls mcp .`")
    settings = settings or Settings()
    session = FolderSession(root, settings, embedding=embedding_provider(settings))
    server = create_mcp_server(session)
    session.start()
    try:
        anyio.run(server.run_stdio_async)
    finally:
        session.close()
    return 0


def create_mcp_server(session: FolderSession, ready_wait: float = READY_WAIT_SECONDS) -> MCPServer[Any]:
    """An MCPServer with the six ragls tools over one folder session."""
    server: MCPServer[Any] = MCPServer("ragls", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    tools = _Tools(session, ready_wait)
    server.add_tool(tools.search_code, name="search_code", annotations=READ_ONLY)
    server.add_tool(tools.context_prompt, name="context_prompt", annotations=READ_ONLY)
    server.add_tool(tools.find_symbols, name="find_symbols", annotations=READ_ONLY)
    server.add_tool(tools.read_lines, name="read_lines", annotations=READ_ONLY)
    server.add_tool(tools.index_status, name="index_status", annotations=READ_ONLY)
    server.add_tool(
        tools.reindex, name="reindex", annotations=ToolAnnotations(idempotent_hint=True, open_world_hint=False)
    )
    return server


class _Tools:
    """The tool bodies: engine calls run in worker threads, engine errors become tool errors.

    Each returns a CallToolResult whose `structuredContent` has the type its annotation names (`schemas.py`),
    which the SDK publishes as the tool's outputSchema and checks before sending.
    """

    def __init__(self, session: FolderSession, ready_wait: float) -> None:
        self.session = session
        self.ready_wait = ready_wait

    async def search_code(
        self,
        query: Query,
        top_k: TopK = 10,
        filters: Annotated[
            dict[str, Any] | None,
            Field(description='exact metadata matches, ANDed, e.g. {"language": "python"}'),
        ] = None,
        min_score: MinScore = 0.0,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Search the folder's code and documents; each result is cited as file:start-end with its code."""
        complete = await self._wait_for_first_index()
        results = await _engine(lambda: self.session.service.search(query, top_k, filters, min_score))
        root = self.session.root
        data: SearchOutput = {"results": [render.result_data(result, root) for result in results], "complete": complete}
        return _result(data, render.results_text(query, results, complete))

    async def context_prompt(
        self,
        query: Annotated[str, _bounded("the question the prompt is for", minLength=1, maxLength=MAX_QUERY_CHARS)],
        top_k: Annotated[
            int, _bounded(f"how many chunks of evidence, 1..{MAX_TOP_K}", minimum=1, maximum=MAX_TOP_K)
        ] = 5,
        format: Annotated[
            str, _bounded("'fenced' (untrusted-context fence) or 'plain'", enum=list(FORMATS))
        ] = "fenced",
        min_score: MinScore = 0.0,
    ) -> Annotated[CallToolResult, ContextOutput]:
        """A prompt that answers the question from the folder's code: evidence first, then the question."""
        complete = await self._wait_for_first_index()
        prompt, results = await _engine(
            lambda: self.session.service.build_context_prompt(query, top_k, format, min_score)
        )
        root = self.session.root
        data: ContextOutput = {
            "prompt": prompt,
            "citations": [render.citation(result) for result in results],
            "results": [render.result_data(result, root) for result in results],
            "complete": complete,
        }
        return _result(data, prompt, render.sources_text(results))

    async def find_symbols(
        self,
        query: Annotated[
            str,
            _bounded(
                "a name or part of one, matched like an editor's Go to Symbol (e.g. 'AuthMiddleware', 'authchk'); "
                "'' lists the first symbols",
                maxLength=MAX_SYMBOL_QUERY_CHARS,
            ),
        ] = "",
        limit: Annotated[int, _bounded(f"how many symbols, 1..{MAX_SYMBOLS}", minimum=1, maximum=MAX_SYMBOLS)] = 20,
    ) -> Annotated[CallToolResult, SymbolsOutput]:
        """Definitions (functions, classes, methods, headings) by name, best match first, each cited as
        file:start-end; read one with read_lines."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SYMBOLS:
            raise ToolError(f"limit must be 1..{MAX_SYMBOLS}, got {shown(limit)}")
        complete = await self._wait_for_first_index()
        found = await _engine(lambda: self.session.service.symbols(query, limit))
        data: SymbolsOutput = {"symbols": [render.symbol_data(symbol) for symbol in found], "complete": complete}
        return _result(data, render.symbols_text(query, data["symbols"], complete))

    async def read_lines(
        self,
        path: Annotated[
            str,
            _bounded(
                "an indexed file, as search_code and find_symbols cite it (relative to the folder, "
                "e.g. 'src/app.py'); an absolute path or file:// URI inside the folder works too",
                minLength=1,
                maxLength=files.MAX_PATH_CHARS,
            ),
        ],
        start_line: Annotated[int, _bounded("the first line, 1-based", minimum=1)] = 1,
        end_line: Annotated[
            int | None,
            _bounded(
                f"the last line, inclusive (default: {files.DEFAULT_LINES} lines; at most {files.MAX_LINES} "
                "lines from start_line); past the end of the file reads to the end",
                minimum=1,
            ),
        ] = None,
    ) -> Annotated[CallToolResult, LinesOutput]:
        """Lines of an indexed file by range, numbered, to read around a hit: at most 400 lines and 64,000
        characters a call (the answer says where to go on). Files outside the folder, through symbolic links
        or left out of the index are refused."""
        await self._wait_for_first_index()
        session = self.session
        lines = await _engine(
            lambda: files.read_lines(
                session.root, path, start_line, end_line, session.is_indexed, session.settings.limits.max_file_bytes
            )
        )
        return _result(render.lines_data(lines), render.lines_text(lines))

    async def index_status(self) -> Annotated[CallToolResult, FolderStatus]:
        """What is indexed: state (indexing, idle, failed), files, chunks, generation and the last error."""
        return self._status_result()

    async def reindex(
        self,
        full: Annotated[bool, Field(description="re-read and re-chunk every file, not only changed ones")] = False,
    ) -> Annotated[CallToolResult, FolderStatus]:
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
        return _result(data, render.status_text(data))


def _result(data: Mapping[str, Any], *texts: str) -> CallToolResult:
    """Text blocks for the model, and the same answer as data."""
    return CallToolResult(
        content=[TextContent(type="text", text=text) for text in texts], structured_content=dict(data)
    )


async def _engine(call: Callable[[], T]) -> T:
    """Run a blocking engine call off the event loop; its deliberate errors reach the agent as tool errors."""
    try:
        return await anyio.to_thread.run_sync(call)
    except RaglsError as exc:
        raise ToolError(_in_tool_terms(exc)) from exc


def _in_tool_terms(exc: RaglsError) -> str:
    """The error's message, naming the tool's parameter where the engine named the protocol's field."""
    message = str(exc)
    if isinstance(exc, InvalidArgument) and exc.field in PARAMETER_NAMES and message.startswith(exc.field):
        return PARAMETER_NAMES[exc.field] + message[len(exc.field) :]
    return message


def _log_to_stderr() -> None:
    """Our progress lines on stderr at INFO; stdout carries only the MCP protocol."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    ragls_log = logging.getLogger("ragls")
    ragls_log.addHandler(handler)
    ragls_log.setLevel(logging.INFO)
    ragls_log.propagate = False
