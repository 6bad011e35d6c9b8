"""Engine values to wire shapes (PROTOCOL.md): RagResult, FolderStatus, WorkspaceSymbol."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from ragls.model import DocumentInfo, IndexStatus, SearchResult, Symbol

SYMBOL_KINDS = {
    "class": types.SymbolKind.Class,
    "function": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "constructor": types.SymbolKind.Constructor,
    "struct": types.SymbolKind.Struct,
    "interface": types.SymbolKind.Interface,
    "trait": types.SymbolKind.Interface,
    "impl": types.SymbolKind.Class,
    "enum": types.SymbolKind.Enum,
    "module": types.SymbolKind.Module,
    "namespace": types.SymbolKind.Namespace,
    "object": types.SymbolKind.Object,
    "constant": types.SymbolKind.Constant,
    "type": types.SymbolKind.TypeParameter,
    "property": types.SymbolKind.Property,
    "heading": types.SymbolKind.String,
}


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units, the unit of LSP character offsets."""
    return len(text.encode("utf-16-le")) // 2


def file_uri(root: Path | None, rel_path: str) -> str | None:
    return (root / rel_path).as_uri() if root is not None else None


def search_result_to_wire(result: SearchResult, root: Path | None) -> dict[str, Any]:
    """A RagResult: id, score, content, metadata, and uri/range for chunks of files."""
    document = result.document
    metadata = dict(document.metadata)
    wire: dict[str, Any] = {
        "id": document.id,
        "score": round(result.score, 6),
        "content": document.content,
        "metadata": metadata,
    }
    if metadata.get("source") == "file" and "file" in metadata:
        last_line = document.content.rsplit("\n", 1)[-1]
        wire["uri"] = file_uri(root, metadata["file"])
        wire["range"] = {
            "start": {"line": metadata["startLine"] - 1, "character": 0},
            "end": {"line": metadata["endLine"] - 1, "character": utf16_length(last_line)},
        }
    return wire


def status_to_wire(folder_uri: str, status: IndexStatus) -> dict[str, Any]:
    """A FolderStatus."""
    wire: dict[str, Any] = {
        "folder": folder_uri,
        "state": status.state,
        "files": status.files,
        "chunks": status.chunks,
        "documents": status.documents,
        "generation": status.generation,
        "lastIndexedAt": status.last_indexed_at,
        "indexedPath": status.indexed_path,
        "skipped": dict(status.skipped),
        "error": status.error,
    }
    if status.vectors is not None:
        wire["vectors"] = dict(status.vectors)
    return wire


def document_info_to_wire(info: DocumentInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "preview": info.preview,
        "contentLength": info.content_length,
        "metadata": dict(info.metadata),
    }


def symbol_to_wire(symbol: Symbol, root: Path) -> types.WorkspaceSymbol:
    """A WorkspaceSymbol whose location spans the whole definition."""
    location = types.Location(
        uri=(root / symbol.file).as_uri(),
        range=types.Range(
            start=types.Position(line=symbol.start_line - 1, character=0),
            end=types.Position(line=symbol.end_line, character=0),
        ),
    )
    return types.WorkspaceSymbol(
        name=symbol.name,
        kind=SYMBOL_KINDS.get(symbol.kind, types.SymbolKind.Variable),
        location=location,
        container_name=symbol.container,
    )
