"""JSON-RPC envelopes, checked before pygls handles a message, so that every request with an id gets an answer.

pygls parses a body with `json.loads` and structures it with cattrs; where either fails, it logs,
pops up "Error in server" in the editor, and answers nothing. Here a body is read and checked
first. Bytes that are not UTF-8 JSON answer -32700 (parse error). A message LSP does not allow
answers -32600 (invalid request): a batch, a member other than JSON-RPC's, `jsonrpc` other than
"2.0", no method, a notification sent with an id, nesting deeper than MAX_NESTING. Params that
cannot be read answer -32602 (invalid params), naming the field. An answer goes to the request's
id, found in the text where the JSON could not be parsed, else to null.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cattrs import transform_error
from lsprotocol.types import METHOD_TO_TYPES
from pygls.exceptions import JsonRpcException

from ragls.rag.checks import lone_surrogate, shown
from ragls.server.protocol import RAW_PARAM_CHECKS, bounded

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
# LSP's own messages nest fewer than 10 levels; Python's parser gives up at about 990, and a value nested that
# deep could not be written back (a result, a stored document's metadata) without the same failure.
MAX_NESTING = 64
MAX_METHOD_CHARS = 256
MEMBERS = frozenset({"jsonrpc", "id", "method", "params", "result", "error"})
NOTIFICATIONS = frozenset(
    method for method, types in METHOD_TO_TYPES.items() if types[0].__name__.endswith("Notification")
)

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_EMPTY_PAIR = re.compile(r"\[\]|\{\}")
_ID_MEMBER = re.compile(r'"id"\s*:\s*(-?\d+|"[^"\\]*(?:\\.[^"\\]*)*")')
# A JSON escape of a surrogate: the only way a lone one gets into a message that decoded as UTF-8.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN_KEY_CHARS = 40


class Rejected(Exception):
    """A message that is answered with an error (one answer per id in `ids`; none for a notification)."""

    def __init__(self, code: int, message: str, ids: list[Any]) -> None:
        super().__init__(message)
        self.code = code
        self.message = bounded(message)
        self.ids = ids

    def answers(self) -> list[dict[str, Any]]:
        error = {"code": self.code, "message": self.message}
        return [{"jsonrpc": "2.0", "id": message_id, "error": error} for message_id in self.ids]


def read(body: bytes) -> dict[str, Any]:
    """One framed body as a checked JSON-RPC message; a Rejected says what answer it gets instead."""
    text = _decoded(body)
    message = _parsed(text)
    if isinstance(message, list):
        ids = [item["id"] for item in message if isinstance(item, dict) and is_valid_id(item.get("id"))]
        raise Rejected(INVALID_REQUEST, "batches are not supported: send one message at a time", ids or [None])
    if not isinstance(message, dict):
        raise Rejected(INVALID_REQUEST, f"a message must be a JSON object, got {shown(message)}", [None])
    _check_members(message)
    if _ESCAPED_SURROGATE.search(text):
        message = _valid_unicode(message)
    if "method" in message and "id" in message:
        check = RAW_PARAM_CHECKS.get(message["method"])
        if check is not None:
            try:
                check(message.get("params"))
            except JsonRpcException as exc:
                raise Rejected(INVALID_PARAMS, exc.message, [message["id"]]) from None
    return message


def is_valid_id(value: Any) -> bool:
    """LSP's ids are integers or strings (JSON-RPC's null is not one a request can be answered at)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def unreadable(exc: Exception) -> str:
    """Why params could not be structured, in cattrs's words with the path of each bad field."""
    try:
        problems = transform_error(exc, path="$")
    except Exception:
        problems = [type(exc).__name__]
    return f"params: cannot be read: {'; '.join(problems[:3])}"


def recover_id(text: str) -> Any:
    """The top-level id of a message that could not be parsed, when one can be found; else None."""
    masked: str | None = None
    for match in _ID_MEMBER.finditer(text):
        if masked is None:
            masked = _STRING.sub(lambda string: '"' + " " * (len(string.group(0)) - 2) + '"', text)
        start = match.start()
        if masked[start : start + 4] != '"  "':
            continue  # inside a string
        depth = sum(masked.count(bracket, 0, start) for bracket in "[{") - sum(
            masked.count(bracket, 0, start) for bracket in "]}"
        )
        if depth == 1:
            try:
                value = json.loads(match.group(1))
            except (ValueError, RecursionError):
                return None
            return value if is_valid_id(value) else None
    return None


def _decoded(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        message_id = recover_id(body.decode("utf-8", "replace"))
        raise Rejected(PARSE_ERROR, f"the message is not valid UTF-8 (at byte {exc.start})", [message_id]) from None


def _parsed(text: str) -> Any:
    too_deep = f"the message nests deeper than {MAX_NESTING} levels"
    if _nests_deeper(text, MAX_NESTING):
        raise Rejected(INVALID_REQUEST, too_deep, [recover_id(text)])
    try:
        return json.loads(text)
    except RecursionError:
        raise Rejected(INVALID_REQUEST, too_deep, [recover_id(text)]) from None
    except ValueError as exc:
        raise Rejected(PARSE_ERROR, f"the message is not JSON ({exc})", [recover_id(text)]) from None


def _nests_deeper(text: str, limit: int) -> bool:
    """Whether brackets outside strings nest deeper than `limit`: each pass removes the innermost pairs."""
    if text.count("[") + text.count("{") <= limit:
        return False  # nearly every message: two counts and done
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        brackets, removed = _EMPTY_PAIR.subn("", brackets)
        if not removed:
            return False  # empty, or unbalanced: the parser reports it
    return bool(brackets)


def _check_members(message: dict[str, Any]) -> None:
    """The envelope of a request, a notification or a response, as JSON-RPC 2.0 and LSP have it."""
    has_id = "id" in message
    if has_id and not is_valid_id(message["id"]):
        raise Rejected(INVALID_REQUEST, f"id must be an integer or a string, got {shown(message['id'])}", [None])
    ids = [message["id"]] if has_id else [None]
    extra = sorted(set(message) - MEMBERS)
    if extra:
        raise Rejected(INVALID_REQUEST, f"unexpected member {shown(extra[0])}: a message has only {_members()}", ids)
    if message.get("jsonrpc") != "2.0":
        raise Rejected(INVALID_REQUEST, f'jsonrpc must be "2.0", got {shown(message.get("jsonrpc"))}', ids)
    is_response = "result" in message or "error" in message
    if "method" not in message:
        if not (has_id and is_response):
            raise Rejected(
                INVALID_REQUEST, "a message needs a method (or, as a response, an id and a result or an error)", ids
            )
        return
    method = message["method"]
    if not isinstance(method, str) or not method or len(method) > MAX_METHOD_CHARS:
        raise Rejected(INVALID_REQUEST, f"method must be a name of 1..{MAX_METHOD_CHARS} characters", ids)
    if is_response:
        raise Rejected(INVALID_REQUEST, "a request has no result or error member", ids)
    if has_id and method in NOTIFICATIONS:
        raise Rejected(INVALID_REQUEST, f"{method} is a notification: send it without an id", ids)
    params = message.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        raise Rejected(INVALID_PARAMS, f"params: must be an object or an array, got {shown(params)}", ids)


def _valid_unicode(message: dict[str, Any]) -> dict[str, Any]:
    """A request whose params hold a lone surrogate is rejected, naming the field; other messages get U+FFFD."""
    if "method" in message and "id" in message:
        if lone_surrogate(message["method"]) is not None:
            raise Rejected(INVALID_REQUEST, "method must be valid Unicode", [message["id"]])
        path = _surrogate_path(message.get("params"), "")
        if path is not None:
            field = _SURROGATE.sub("\ufffd", path.lstrip(".")) or "params"
            raise Rejected(INVALID_PARAMS, f"{field}: must be valid Unicode, got a lone surrogate", [message["id"]])
        return message
    replaced: dict[str, Any] = _replace_surrogates(message)
    return replaced


def _surrogate_path(value: Any, path: str) -> str | None:
    """Where the first lone surrogate is, as `.metadata.title` or `.arguments[0].query`; None when there is none."""
    if isinstance(value, str):
        return path if lone_surrogate(value) is not None else None
    if isinstance(value, dict):
        for key, item in value.items():
            key_path = f"{path}.{key[:_SHOWN_KEY_CHARS]}"
            if lone_surrogate(key) is not None:
                return key_path
            found = _surrogate_path(item, key_path)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _surrogate_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_surrogates(key): _replace_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    return value


def _members() -> str:
    return ", ".join(sorted(MEMBERS))
