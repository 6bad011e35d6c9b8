"""A stand-in for a buffer's usual language server (pyright, pylsp) in ragls-test.el: plain LSP over stdio.

It answers `workspace/symbol` with one symbol of its own, so a test can tell which server answered.
Standard library only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

OWN_SYMBOL = "from_the_other_server"


def read_message() -> dict[str, Any] | None:
    """One JSON-RPC message from stdin, or None at end of input."""
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def write_message(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode("utf-8")
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def answer(method: str) -> Any:
    if method == "initialize":
        return {"capabilities": {"workspaceSymbolProvider": True}, "serverInfo": {"name": "other-server"}}
    if method == "workspace/symbol":
        start = {"line": 0, "character": 0}
        location = {"uri": "file:///nowhere.py", "range": {"start": start, "end": start}}
        return [{"name": OWN_SYMBOL, "kind": 12, "location": location}]
    return None


def main() -> None:
    while (message := read_message()) is not None:
        method = message.get("method", "")
        if method == "exit":
            return
        if "id" in message and method:
            write_message({"jsonrpc": "2.0", "id": message["id"], "result": answer(method)})


if __name__ == "__main__":
    main()
