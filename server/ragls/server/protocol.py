"""The wire contract's methods and their params, checked field by field so errors name the field."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from ragls.rag.prompt import FORMATS
from ragls.rag.service import MAX_TOP_K

SEARCH = "rag/search"
CONTEXT_PROMPT = "rag/contextPrompt"
STATUS = "rag/status"
REINDEX = "rag/reindex"
ADD_DOCUMENT = "rag/addDocument"
REMOVE_DOCUMENT = "rag/removeDocument"
GET_DOCUMENT = "rag/getDocument"
LIST_DOCUMENTS = "rag/listDocuments"
CLEAR = "rag/clear"
METHODS = (SEARCH, CONTEXT_PROMPT, STATUS, REINDEX, ADD_DOCUMENT, REMOVE_DOCUMENT, GET_DOCUMENT, LIST_DOCUMENTS, CLEAR)

COMMAND_SEARCH = "ragls.search"
COMMAND_CONTEXT_PROMPT = "ragls.contextPrompt"
COMMAND_REINDEX = "ragls.reindex"
COMMAND_STATUS = "ragls.status"
COMMANDS = (COMMAND_SEARCH, COMMAND_CONTEXT_PROMPT, COMMAND_REINDEX, COMMAND_STATUS)


@dataclass(frozen=True)
class SearchParams:
    query: str
    top_k: int
    filters: Mapping[str, Any] | None
    folder: str | None


@dataclass(frozen=True)
class ContextPromptParams:
    query: str
    top_k: int
    format: str
    folder: str | None


@dataclass(frozen=True)
class ReindexParams:
    folder: str | None
    full: bool


@dataclass(frozen=True)
class AddDocumentParams:
    content: str
    metadata: Mapping[str, Any] | None
    id: str | None
    folder: str | None


@dataclass(frozen=True)
class DocumentIdParams:
    id: str
    folder: str | None


def invalid(field: str, message: str) -> JsonRpcInvalidParams:
    """An InvalidParams error whose message starts with the field it is about."""
    return JsonRpcInvalidParams(f"{field}: {message}")


def as_object(params: Any) -> dict[str, Any]:
    """Params as a dict; absent params are an empty object."""
    if params is None or params == []:
        return {}  # Some clients encode an empty object as an empty array (Neovim's `{}`).
    if isinstance(params, list) and len(params) == 1 and isinstance(params[0], dict):
        return params[0]  # executeCommand arguments: [params]
    if not isinstance(params, dict):
        raise invalid("params", f"expected an object, got {type(params).__name__}")
    return params


def parse_search(params: Any) -> SearchParams:
    p = as_object(params)
    return SearchParams(_query(p), _top_k(p, 10), _filters(p), folder_of(p))


def parse_context_prompt(params: Any) -> ContextPromptParams:
    p = as_object(params)
    prompt_format = p.get("format", "fenced")
    if prompt_format not in FORMATS:
        raise invalid("format", f"must be one of {', '.join(FORMATS)}, got {prompt_format!r}")
    return ContextPromptParams(_query(p), _top_k(p, 5), prompt_format, folder_of(p))


def parse_reindex(params: Any) -> ReindexParams:
    p = as_object(params)
    full = p.get("full", False)
    if not isinstance(full, bool):
        raise invalid("full", f"must be true or false, got {full!r}")
    return ReindexParams(folder_of(p), full)


def parse_add_document(params: Any) -> AddDocumentParams:
    p = as_object(params)
    content = p.get("content")
    if not isinstance(content, str) or not content.strip():
        raise invalid("content", f"must be a non-empty string, got {content!r}")
    metadata = p.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise invalid("metadata", f"must be an object, got {metadata!r}")
    document_id = p.get("id")
    if document_id is not None and (not isinstance(document_id, str) or not document_id):
        raise invalid("id", f"must be a non-empty string, got {document_id!r}")
    return AddDocumentParams(content, metadata, document_id, folder_of(p))


def parse_document_id(params: Any) -> DocumentIdParams:
    p = as_object(params)
    document_id = p.get("id")
    if not isinstance(document_id, str) or not document_id:
        raise invalid("id", f"must be a non-empty string, got {document_id!r}")
    return DocumentIdParams(document_id, folder_of(p))


def folder_of(p: Mapping[str, Any]) -> str | None:
    folder = p.get("folder")
    if folder is not None and (not isinstance(folder, str) or not folder):
        raise invalid("folder", f"must be a workspace folder URI, got {folder!r}")
    return folder


def _query(p: Mapping[str, Any]) -> str:
    query = p.get("query")
    if not isinstance(query, str) or not query.strip():
        raise invalid("query", f"must be a non-empty string, got {query!r}")
    return query


def _top_k(p: Mapping[str, Any], default: int) -> int:
    top_k = p.get("topK", default)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise invalid("topK", f"must be an integer 1..{MAX_TOP_K}, got {top_k!r}")
    return top_k


def _filters(p: Mapping[str, Any]) -> Mapping[str, Any] | None:
    filters = p.get("filters")
    if filters is not None and not isinstance(filters, dict):
        raise invalid("filters", f"must be an object of exact metadata values, got {filters!r}")
    return filters or None
