"""Engine values as MCP tool output: text for the model with `file:start-end` citations, and plain data.

The data is the protocol's RagResult and FolderStatus (`ragls.wire`), plus a `citation` per result; its
types, which the tools publish as their output schemas, are in `schemas.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from ragls.mcp.files import MAX_CHARS, FileLines
from ragls.mcp.schemas import FolderStatus, LinesOutput, RagResult, SymbolHit
from ragls.model import IndexStatus, SearchResult, Symbol
from ragls.wire import search_result_to_wire, status_to_wire

PREVIEW_LINES = 40


def citation(result: SearchResult) -> str:
    """`file:start-end` for chunks of files (1-based, inclusive; `file:start-end page N` for a PDF's);
    `document:<id>` for added documents."""
    metadata = result.document.metadata
    if metadata.get("file") and metadata.get("startLine") is not None:
        page = f" page {metadata['page']}" if metadata.get("page") is not None else ""
        return f"{metadata['file']}:{metadata['startLine']}-{metadata.get('endLine', metadata['startLine'])}{page}"
    return f"document:{result.document.id}"


def result_data(result: SearchResult, root: Path) -> RagResult:
    """A RagResult (id, score, content, metadata, uri/range for files) with its citation."""
    return cast(RagResult, {"citation": citation(result), **search_result_to_wire(result, root)})


def results_text(query: str, results: list[SearchResult], complete: bool) -> str:
    """Each result as a header line (rank, citation, symbol, score) and its code in a fence."""
    if not results:
        note = "" if complete else " (the index is still building; try again shortly)"
        return f"No results for {query!r}{note}."
    heading = f"{len(results)} results for {query!r}"
    if not complete:
        heading += " (the index is still building; results may be missing)"
    parts = [heading + ":"]
    for rank, result in enumerate(results, start=1):
        metadata = result.document.metadata
        symbol = f"  {metadata['symbol']}" if metadata.get("symbol") else ""
        kind = f" ({metadata['symbolKind']})" if metadata.get("symbolKind") else ""
        parts.append("")
        parts.append(f"[{rank}] {citation(result)}{symbol}{kind}  score {result.score:.4f}")
        parts.append(fenced(result.document.content, str(metadata.get("language") or "")))
    return "\n".join(parts)


def sources_text(results: list[SearchResult]) -> str:
    """The citations a context prompt was built from, one per line."""
    if not results:
        return "Sources: none (no indexed code matched; the prompt is the question alone)."
    return "Sources:\n" + "\n".join(f"- {citation(result)}" for result in results)


def status_data(status: IndexStatus, root: Path) -> FolderStatus:
    """A FolderStatus."""
    return cast(FolderStatus, status_to_wire(root.as_uri(), status))


def status_text(data: Mapping[str, Any]) -> str:
    """One paragraph a person or a model can read, then the same data as JSON."""
    skipped = ", ".join(f"{reason} {count}" for reason, count in sorted(data["skipped"].items())) or "none"
    lines = [
        f"Index of {data['indexedPath']}: {data['state']}, generation {data['generation']}",
        f"{data['files']} files, {data['chunks']} chunks, {data['documents']} added documents",
        f"last indexed at {data['lastIndexedAt'] or 'never'}; skipped: {skipped}",
    ]
    if data.get("error"):
        lines.append(f"error: {data['error']}")
    shared = data.get("sharedIndex")
    if shared is not None:
        lines.append(shared_text(shared))
    return "\n".join(lines) + "\n\n" + json.dumps(data, indent=2)


def shared_text(shared: Mapping[str, Any]) -> str:
    """Where the index came from: the shared index's commit, its files in use, and the files indexed here."""
    where = f"shared index {shared['name']} ({shared['source']})"
    if shared["commit"] is None:
        return f"{where}: not used ({shared['error']}); every file is indexed here"
    counts = f"{shared['files']} files from it, {shared['localFiles']} indexed here"
    lost = f"; not answering now ({shared['error']})" if shared["error"] else ""
    return f"{where} at commit {shared['commit'][:12]}, generation {shared['generation']}: {counts}{lost}"


def symbol_data(symbol: Symbol) -> SymbolHit:
    return {
        "name": symbol.qualified_name,
        "kind": symbol.kind,
        "container": symbol.container,
        "citation": f"{symbol.file}:{symbol.start_line}-{symbol.end_line}",
        "file": symbol.file,
        "startLine": symbol.start_line,
        "endLine": symbol.end_line,
    }


def symbols_text(query: str, symbols: list[SymbolHit], complete: bool) -> str:
    """One line per symbol: its name, kind and citation."""
    note = "" if complete else " (the index is still building; symbols may be missing)"
    if not symbols:
        return f"No symbols match {query!r}{note}."
    lines = [f"{len(symbols)} {'symbol' if len(symbols) == 1 else 'symbols'} for {query!r}{note}:"]
    lines += [f"{hit['name']}  {hit['kind']}  {hit['citation']}" for hit in symbols]
    return "\n".join(lines)


def lines_data(lines: FileLines) -> LinesOutput:
    return {
        "file": lines.file,
        "startLine": lines.start_line,
        "endLine": lines.end_line,
        "totalLines": lines.total_lines,
        "text": "\n".join(lines.lines),
        "truncated": lines.truncated,
        "nextStartLine": lines.next_start_line,
    }


def lines_text(lines: FileLines) -> str:
    """A `file:start-end (of N lines)` header, then each line after its number."""
    if not lines.lines:
        return f"{lines.file} is empty."
    width = len(str(lines.end_line))
    numbered = [
        f"{number:>{width}}  {line}" if line else f"{number:>{width}}"
        for number, line in enumerate(lines.lines, start=lines.start_line)
    ]
    parts = [f"{lines.file}:{lines.start_line}-{lines.end_line} (of {lines.total_lines} lines)", *numbered]
    if lines.next_start_line is not None:
        why = f"cut at {MAX_CHARS:,} characters" if lines.truncated else "more lines follow"
        parts.append(f"({why}: go on with start_line={lines.next_start_line})")
    return "\n".join(parts)


def fenced(content: str, language: str) -> str:
    """Content in a Markdown code fence longer than any backtick run inside it, trimmed to a preview."""
    lines = content.splitlines()
    if len(lines) > PREVIEW_LINES:
        lines = [*lines[:PREVIEW_LINES], f"... ({len(content.splitlines()) - PREVIEW_LINES} more lines)"]
    longest_run = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest_run + 1)
    return "\n".join([fence + language, *lines, fence])
