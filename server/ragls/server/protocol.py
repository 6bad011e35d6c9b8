"""The wire contract's methods and their params, checked field by field so errors name the field.

Every string is bounded and must be valid Unicode (the limits are in `ragls.rag.checks`), and no
error echoes a long value back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from ragls.rag.checks import (
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    MAX_QUERY_CHARS,
    MAX_SYMBOL_QUERY_CHARS,
    MAX_URI_CHARS,
    document_id_problem,
    object_problem,
    score_problem,
    shown,
    text_problem,
)
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
# An error message is cut here: whatever a check put in it, a huge value never goes back on the wire.
MAX_MESSAGE_CHARS = 1000


@dataclass(frozen=True)
class SearchParams:
    query: str
    top_k: int
    filters: Mapping[str, Any] | None
    folder: str | None
    min_score: float = 0.0


@dataclass(frozen=True)
class ContextPromptParams:
    query: str
    top_k: int
    format: str
    folder: str | None
    min_score: float = 0.0


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
    return JsonRpcInvalidParams(bounded(f"{field}: {message}"))


def bounded(message: str) -> str:
    """A message cut to MAX_MESSAGE_CHARS."""
    return message if len(message) <= MAX_MESSAGE_CHARS else f"{message[:MAX_MESSAGE_CHARS]}..."


def require(field: str, problem: str | None) -> None:
    """InvalidParams for what one of the checks in `ragls.rag.checks` found wrong with a field."""
    if problem is not None:
        raise invalid(field, problem)


def as_object(params: Any) -> dict[str, Any]:
    """Params as a dict; absent params are an empty object."""
    if params is None or params == []:
        return {}  # Some clients encode an empty object as an empty array (Neovim's `{}`).
    if isinstance(params, list) and len(params) == 1 and isinstance(params[0], dict):
        return params[0]  # executeCommand arguments: [params]
    if not isinstance(params, dict):
        raise invalid("params", f"expected an object, got {type(params).__name__}")
    return params


def check_workspace_symbol(params: Any) -> None:
    """workspace/symbol's params, before lsprotocol structures them: an object with a bounded `query`."""
    if not isinstance(params, dict):
        raise invalid("params", f"expected an object with a query, got {_json_type(params)}")
    require("query", text_problem(params.get("query"), MAX_SYMBOL_QUERY_CHARS, allow_empty=True))


def check_execute_command(params: Any) -> None:
    """workspace/executeCommand's params: a `command` name and, when present, a list of `arguments`."""
    if not isinstance(params, dict):
        raise invalid("params", f"expected an object with a command, got {_json_type(params)}")
    require("command", text_problem(params.get("command"), MAX_ID_CHARS))
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, list):
        raise invalid("arguments", f"must be a list (the request's params object first), got {_json_type(arguments)}")


# Checks of the raw params of standard methods, run before pygls structures them (and would answer nothing).
RAW_PARAM_CHECKS = {
    "workspace/symbol": check_workspace_symbol,
    "workspace/executeCommand": check_execute_command,
}


def parse_search(params: Any) -> SearchParams:
    p = as_object(params)
    return SearchParams(_query(p), _top_k(p, 10), _filters(p), folder_of(p), _min_score(p))


def parse_context_prompt(params: Any) -> ContextPromptParams:
    p = as_object(params)
    prompt_format = p.get("format", "fenced")
    if prompt_format not in FORMATS:
        raise invalid("format", f"must be one of {', '.join(FORMATS)}, got {shown(prompt_format)}")
    return ContextPromptParams(_query(p), _top_k(p, 5), prompt_format, folder_of(p), _min_score(p))


def parse_reindex(params: Any) -> ReindexParams:
    p = as_object(params)
    full = p.get("full", False)
    if not isinstance(full, bool):
        raise invalid("full", f"must be true or false, got {shown(full)}")
    return ReindexParams(folder_of(p), full)


def parse_add_document(params: Any) -> AddDocumentParams:
    p = as_object(params)
    content = _text(p, "content", MAX_CONTENT_CHARS)
    metadata = p.get("metadata")
    require("metadata", object_problem(metadata))
    document_id = p.get("id")
    if document_id is not None:
        require("id", document_id_problem(document_id))
    return AddDocumentParams(content, metadata, document_id, folder_of(p))


def parse_document_id(params: Any) -> DocumentIdParams:
    p = as_object(params)
    return DocumentIdParams(_text(p, "id", MAX_ID_CHARS), folder_of(p))


def folder_of(p: Mapping[str, Any]) -> str | None:
    return None if p.get("folder") is None else _text(p, "folder", MAX_URI_CHARS)


def _query(p: Mapping[str, Any]) -> str:
    return _text(p, "query", MAX_QUERY_CHARS)


def _text(p: Mapping[str, Any], field: str, max_chars: int) -> str:
    """A non-blank string of at most `max_chars`, valid Unicode."""
    value = p.get(field)
    require(field, text_problem(value, max_chars))
    assert isinstance(value, str)
    return value


def _top_k(p: Mapping[str, Any], default: int) -> int:
    top_k = p.get("topK", default)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise invalid("topK", f"must be an integer 1..{MAX_TOP_K}, got {shown(top_k)}")
    return top_k


def _min_score(p: Mapping[str, Any]) -> float:
    """Results scoring less are left out; a score is 0..1 (docs/protocol.md)."""
    min_score = p.get("minScore", 0.0)
    require("minScore", score_problem(min_score))
    return float(min_score)


def _filters(p: Mapping[str, Any]) -> Mapping[str, Any] | None:
    filters = p.get("filters")
    if filters is not None and not isinstance(filters, dict):
        raise invalid("filters", f"must be an object of exact metadata values, got {shown(filters)}")
    require("filters", object_problem(filters))
    return filters or None


def _json_type(value: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if value is None:
        return "null"
    names = {bool: "a boolean", str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), "a number")
