"""Engine values in LSP shapes: symbols as WorkspaceSymbol (our own methods' shapes are in `ragls.wire`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from ragls.model import Symbol
from ragls.wire import file_uri

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


def symbol_to_wire(symbol: Symbol, root: Path) -> dict[str, Any]:
    """A WorkspaceSymbol whose location spans the whole definition, in its JSON shape.

    Built as JSON rather than as lsprotocol objects: 200 symbols (the cap) took 3-5 ms to build as objects
    and 2-3 ms more for cattrs to take apart again, on every keystroke of a symbol search.
    """
    wire: dict[str, Any] = {
        "name": symbol.name,
        "kind": SYMBOL_KINDS.get(symbol.kind, types.SymbolKind.Variable).value,
        "location": {
            "uri": file_uri(root, symbol.file),
            "range": {
                "start": {"line": symbol.start_line - 1, "character": 0},
                "end": {"line": symbol.end_line, "character": 0},
            },
        },
    }
    if symbol.container is not None:
        wire["containerName"] = symbol.container
    return wire
