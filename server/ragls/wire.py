"""Engine values in the protocol's JSON shapes (RagResult, FolderStatus), shared by every front end."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ragls.model import DocumentInfo, IndexStatus, SearchResult


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units, the unit of LSP character offsets."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


@functools.lru_cache(maxsize=1 << 14)
def file_uri(root: Path, file: str) -> str:
    """The file:// URI of a file under a root (cached: building one took half of a result's conversion, and a
    search's results come from few files, asked for again and again)."""
    return (root / file).as_uri()


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
    if metadata.get("source") == "file" and "file" in metadata and root is not None:
        last_line = document.content[document.content.rfind("\n") + 1 :]
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
    if status.shared is not None:
        wire["sharedIndex"] = dict(status.shared)
    return wire


def document_info_to_wire(info: DocumentInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "preview": info.preview,
        "contentLength": info.content_length,
        "metadata": dict(info.metadata),
    }
