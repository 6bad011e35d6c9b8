"""The protocol's JSON shapes: URIs and LSP ranges of results, and how replies are written."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types
from pygls.protocol import JsonRPCResponseMessage

from ragls.model import Document, SearchResult, Symbol
from ragls.server.convert import symbol_to_wire
from ragls.server.handlers import create_server
from ragls.wire import search_result_to_wire, utf16_length


def chunk(content: str, file: str = "src/app.py") -> SearchResult:
    metadata = {"source": "file", "file": file, "startLine": 3, "endLine": 3 + content.count("\n")}
    return SearchResult(Document("c1", content, metadata), 0.5)


def test_a_result_ends_at_its_last_line_counted_in_utf16_units() -> None:
    ascii_end = search_result_to_wire(chunk("def f():\n    return 1"), Path("/w"))
    assert ascii_end["range"] == {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 12}}
    # é is one UTF-16 unit, the emoji two: 8 characters, 9 units.
    wide_end = search_result_to_wire(chunk("def f():\n    'é😀'"), Path("/w"))
    assert wide_end["range"]["end"] == {"line": 3, "character": 9}
    assert utf16_length("é😀") == 3
    single_line = search_result_to_wire(chunk("x = 1"), Path("/w"))
    assert single_line["range"]["end"] == {"line": 2, "character": 5}


def test_a_result_uri_is_quoted_and_under_its_root() -> None:
    wire = search_result_to_wire(chunk("x = 1", file="docs/read me.md"), Path("/work/my project"))
    assert wire["uri"] == "file:///work/my%20project/docs/read%20me.md"
    other_root = search_result_to_wire(chunk("x = 1", file="docs/read me.md"), Path("/elsewhere"))
    assert other_root["uri"] == "file:///elsewhere/docs/read%20me.md"


def test_documents_added_by_hand_have_no_uri_or_range() -> None:
    wire = search_result_to_wire(SearchResult(Document("n1", "a note", {"source": "manual"}), 0.25), Path("/w"))
    assert "uri" not in wire and "range" not in wire


def test_replies_of_our_methods_are_written_as_they_are_and_lsp_replies_through_the_converter() -> None:
    protocol = create_server().protocol
    result = {"results": [{"id": "c1", "metadata": {"file": "a.py", "symbol": None}}], "complete": True}
    reply = JsonRPCResponseMessage(id=7, jsonrpc="2.0", result=result)
    serialized = protocol._serialize_message(reply)
    assert serialized == {"id": 7, "jsonrpc": "2.0", "result": result}
    assert serialized["result"] is result  # not walked or copied
    written = json.loads(json.dumps(reply, default=protocol._serialize_message))
    assert written == {"id": 7, "jsonrpc": "2.0", "result": result}
    # An lsprotocol value inside a plain dict still reaches the converter through json's `default`.
    nested = JsonRPCResponseMessage(id=8, jsonrpc="2.0", result={"at": types.Position(line=1, character=2)})
    assert json.loads(json.dumps(nested, default=protocol._serialize_message))["result"] == {
        "at": {"line": 1, "character": 2}
    }
    # A list of lsprotocol values is converted by cattrs as before; a list of dicts (workspace/symbol's
    # answer, in its lsprotocol response type) is written as it is.
    values = JsonRPCResponseMessage(id=9, jsonrpc="2.0", result=[types.Position(line=0, character=0)])
    assert protocol._serialize_message(values) == {"id": 9, "jsonrpc": "2.0", "result": [{"line": 0, "character": 0}]}
    found = [{"name": "f", "kind": 12, "location": {"uri": "file:///w/a.py", "range": {}}}]
    serialized = protocol._serialize_message(types.WorkspaceSymbolResponse(id=10, result=found))
    assert serialized == {"id": 10, "jsonrpc": "2.0", "result": found} and serialized["result"] is found
    empty = protocol._serialize_message(types.WorkspaceSymbolResponse(id=11, result=[]))
    assert empty == {"id": 11, "jsonrpc": "2.0", "result": []}


def test_a_symbol_is_a_workspace_symbol_spanning_its_definition() -> None:
    method = Symbol("load", "Config.load", "method", "src/my app.py", 10, 14, "Config")
    assert symbol_to_wire(method, Path("/w")) == {
        "name": "load",
        "kind": types.SymbolKind.Method.value,
        "location": {
            "uri": "file:///w/src/my%20app.py",
            "range": {"start": {"line": 9, "character": 0}, "end": {"line": 14, "character": 0}},
        },
        "containerName": "Config",
    }
    top_level = symbol_to_wire(Symbol("Odd", "Odd", "something new", "a.py", 1, 2), Path("/w"))
    assert "containerName" not in top_level and top_level["kind"] == types.SymbolKind.Variable.value
