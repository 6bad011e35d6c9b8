"""The one error type of the client: a JSON-RPC error code and the server's message."""

from __future__ import annotations

from typing import Any

# JSON-RPC and LSP codes the server answers with.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

# Codes the client itself uses, in the JSON-RPC range reserved for implementations.
SERVER_EXITED = -32099
"""The server process ended (or could not be started) before it answered."""
INDEX_FAILED = -32098
"""The first index of a folder failed; the message is the folder's `error` from `rag/status`."""


class RaglsError(Exception):
    """A request failed: `code` is the JSON-RPC error code, `message` the server's own words."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data
