"""The `structuredContent` each tool returns, as types: the MCP SDK publishes them as the tools' `outputSchema`
and checks every result against them before it is sent.

The shapes are the protocol's (`ragls.wire`, docs/protocol.md): camelCase keys, 1-based inclusive lines in
metadata and citations, 0-based LSP ranges. typing_extensions' TypedDict, which pydantic reads on Python 3.11.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict


class Position(TypedDict):
    line: int
    character: int


class Range(TypedDict):
    start: Position
    end: Position


class RagResult(TypedDict):
    """A chunk or an added document; `uri` and `range` only for chunks of files."""

    citation: str
    id: str
    score: float
    content: str
    metadata: dict[str, Any]
    uri: NotRequired[str]
    range: NotRequired[Range]


class SearchOutput(TypedDict):
    """`complete` is False while the first index is still being built."""

    results: list[RagResult]
    complete: bool


class ContextOutput(TypedDict):
    prompt: str
    citations: list[str]
    results: list[RagResult]
    complete: bool


class Vectors(TypedDict):
    """Dense vectors: how many chunks have one; dense search joins once `embedded` equals `total`."""

    model: str
    dims: int
    embedded: int
    total: int
    error: NotRequired[str]


class SharedIndex(TypedDict):
    """Where the index came from, with the `sharedIndex` setting: `files` are used as published, `localFiles` were
    indexed here; `error` says why the shared index is not (or no longer) answering; `source` has no password."""

    name: str
    source: str
    commit: str | None
    generation: int | None
    publishedAt: str | None
    files: int
    localFiles: int
    vectorModel: str | None
    vectors: int
    error: str | None


class FolderStatus(TypedDict):
    folder: str
    state: Literal["indexing", "idle", "failed"]
    files: int
    chunks: int
    documents: int
    generation: int
    lastIndexedAt: str | None
    indexedPath: str | None
    skipped: dict[str, int]
    error: str | None
    vectors: NotRequired[Vectors]
    sharedIndex: NotRequired[SharedIndex]


class SymbolHit(TypedDict):
    """A definition: `file:startLine-endLine` is the whole of it; `container` is the class or module around it."""

    name: str
    kind: str
    container: str | None
    citation: str
    file: str
    startLine: int
    endLine: int


class SymbolsOutput(TypedDict):
    symbols: list[SymbolHit]
    complete: bool


class LinesOutput(TypedDict):
    """Lines `startLine..endLine` (1-based, inclusive) of `file`, which has `totalLines`; `text` holds them joined
    by newlines. `nextStartLine` says where to go on when the range was cut short or the file goes on."""

    file: str
    startLine: int
    endLine: int
    totalLines: int
    text: str
    truncated: bool
    nextStartLine: int | None
