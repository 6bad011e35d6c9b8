"""Engine values to LSP types: symbols as WorkspaceSymbol (the JSON shapes are in `ragls.wire`)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ragls.model import Symbol

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
