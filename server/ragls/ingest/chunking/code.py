"""Source code cut at symbol boundaries with tree-sitter; one query file per language names the symbols."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources

import tree_sitter

from ragls.config import ChunkShape
from ragls.ingest.chunking.sizing import ChunkBuilder, ChunkedFile, line_windows, trim_blank_edges
from ragls.model import Symbol

CHUNKER_VERSION = "code-6"

# language -> (grammar module, function returning the language pointer)
GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "bash": ("tree_sitter_bash", "language"),
}
# Query files shared between grammars of one family.
QUERY_FILE = {"tsx": "typescript"}
# Query files read before a language's own one (tree-sitter queries cannot include each other).
QUERY_INCLUDES = {"javascript": ("js-bindings",), "typescript": ("js-bindings",)}
# Kinds that make a nested function a method.
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "object", "module", "namespace"})
# Kinds scored as one unit however long they are; containers are cut into their members instead.
UNIT_KINDS = frozenset({"function", "method"})
# Nodes that wrap a definition and belong to its span (decorators, `export`, templates).
WRAPPER_TYPES = frozenset(
    {"decorated_definition", "export_statement", "ambient_declaration", "template_declaration", "annotation"}
)
# Statements that hold a definition written as an expression (`res.send = function send() {...};`): the
# comments above the statement are the definition's.
STATEMENT_TYPES = frozenset({"expression_statement"})
# Blank lines allowed between a definition and the comment above it (JSDoc is often set off by one).
COMMENT_GAP_LINES = 1
# Siblings right above a definition that belong to it like its comments (Rust `#[...]`, TS member decorators).
LEADING_TYPES = frozenset({"attribute_item", "decorator"})
# Macro calls whose braced body holds items (Rust's `cfg_rt! { pub fn spawn() ... }`): a grammar sees only
# tokens there, so such a body is parsed again as source of the same language, at the same lines.
ITEM_MACRO_BODIES = {
    "rust": "[(source_file (macro_invocation (token_tree) @body))"
    " (declaration_list (macro_invocation (token_tree) @body))]"
}
# How deep macro bodies inside macro bodies are parsed again (tokio nests two or three).
MAX_MACRO_DEPTH = 4


@dataclass
class _Definition:
    name: str
    kind: str
    start_line: int
    end_line: int
    children: list[_Definition] = field(default_factory=list)
    qualified_name: str = ""
    # The type a method is declared on outside any container (Go's receiver): its container for symbols.
    receiver: str | None = None


def supports(language: str) -> bool:
    """True when a grammar and a query exist for the language."""
    return language in GRAMMARS and _query_text(language) is not None


def chunk_code(text: str, rel_path: str, language: str, shape: ChunkShape) -> ChunkedFile:
    """Chunks sized for retrieval: a function is one chunk however long it is (up to `max_unit_lines`), a
    container too big for one chunk is cut into its members, and small neighbours are packed together up
    to `pack_lines`, so no chunk is a lone class header, a lone import block or a one-line alias."""
    lines = text.splitlines()
    tree = _parser(language).parse(text.encode("utf-8"))
    definitions = _nest(_definitions(tree.root_node, language))
    symbols: list[Symbol] = []
    _qualify(definitions, None, rel_path, symbols)
    builder = ChunkBuilder(rel_path, language, lines)
    for piece in _pack(_pieces(builder, definitions, 1, len(lines), None, shape), shape):
        builder.add(piece.start, piece.end, piece.symbol, piece.kind, piece.also)
    return ChunkedFile(builder.sorted_chunks(), symbols)


@dataclass
class _Piece:
    """A span that becomes a chunk alone or packed with its neighbours (`packable`); `also` names the other
    definitions packed into it."""

    start: int
    end: int
    symbol: str | None
    kind: str | None
    definition: bool
    packable: bool = True
    also: tuple[str, ...] = ()

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


def _pieces(
    builder: ChunkBuilder,
    definitions: list[_Definition],
    start: int,
    end: int,
    container: _Definition | None,
    shape: ChunkShape,
) -> list[_Piece]:
    """Lines start..end as pieces: each definition, and the code between them under the container."""
    gap_symbol = container.qualified_name if container else None
    gap_kind = container.kind if container else None
    pieces: list[_Piece] = []
    cursor = start
    for definition in definitions:
        if definition.start_line > cursor:
            pieces.extend(_gap(builder, cursor, definition.start_line - 1, shape, gap_symbol, gap_kind))
        pieces.extend(_definition_pieces(builder, definition, shape))
        cursor = max(cursor, definition.end_line + 1)
    if cursor <= end:
        pieces.extend(_gap(builder, cursor, end, shape, gap_symbol, gap_kind))
    return pieces


def _gap(
    builder: ChunkBuilder, start: int, end: int, shape: ChunkShape, symbol: str | None, kind: str | None
) -> list[_Piece]:
    trimmed = trim_blank_edges(builder.lines, start, end)
    if trimmed is None:
        return []
    windows = list(line_windows(*trimmed, shape))
    return [_Piece(s, e, symbol, kind, False, packable=len(windows) == 1) for s, e in windows]


def _definition_pieces(builder: ChunkBuilder, definition: _Definition, shape: ChunkShape) -> list[_Piece]:
    n_lines = definition.end_line - definition.start_line + 1
    n_chars = sum(len(line) + 1 for line in builder.lines[definition.start_line - 1 : definition.end_line])
    whole = _Piece(definition.start_line, definition.end_line, definition.qualified_name, definition.kind, True)
    if n_lines <= shape.max_lines and n_chars <= shape.max_chars:
        return [whole]
    if definition.kind in UNIT_KINDS and n_lines <= shape.max_unit_lines and n_chars <= shape.max_unit_chars:
        # Scored whole: a long function's words are all in one document; search results show its best window.
        whole.packable = False
        return [whole]
    if definition.children:
        packed = _pack(
            _pieces(builder, definition.children, definition.start_line, definition.end_line, definition, shape),
            shape,
        )
        for piece in packed:
            piece.packable = False  # a container's members pack among themselves, never with its neighbours
        return packed
    return [
        _Piece(s, e, definition.qualified_name, definition.kind, True, packable=False)
        for s, e in line_windows(definition.start_line, definition.end_line, shape)
    ]


def _pack(pieces: list[_Piece], shape: ChunkShape) -> list[_Piece]:
    """Greedily join neighbouring small pieces while the joined span stays within `pack_lines` (cAST).

    The joined piece is named by its longest definition, so a class header packed with its first
    method, or imports packed with the first function, read as that function.
    """
    packed: list[_Piece] = []
    group: list[_Piece] = []

    def flush() -> None:
        if not group:
            return
        if len(group) == 1:
            packed.append(group[0])
        else:
            named = [piece for piece in group if piece.definition] or group
            lead = max(named, key=lambda piece: piece.lines)
            also = tuple(p.symbol for p in group if p.definition and p is not lead and p.symbol)
            packed.append(_Piece(group[0].start, group[-1].end, lead.symbol, lead.kind, lead.definition, also=also))
        group.clear()

    for piece in pieces:
        fits = piece.packable and (
            not group or piece.end - group[0].start + 1 <= min(shape.pack_lines, shape.max_lines)
        )
        if not fits:
            flush()
        group.append(piece)
        if not piece.packable:
            flush()
    flush()
    return _attach_lone_gaps(packed)


def _attach_lone_gaps(pieces: list[_Piece]) -> list[_Piece]:
    """A header, import block or stray statement left alone joins the definition after it (before it at the end).

    Alone it would be a result that shows no code worth reading; joined, its words still count.
    """
    attached: list[_Piece] = []
    carried: _Piece | None = None
    for piece in pieces:
        if not piece.definition and piece.packable and not piece.also:
            carried = piece if carried is None else replace(carried, end=piece.end)
            continue
        if carried is not None:
            piece = replace(piece, start=carried.start, packable=False)
            carried = None
        attached.append(piece)
    if carried is not None:
        if attached and attached[-1].definition:
            attached[-1] = replace(attached[-1], end=carried.end, packable=False)
        else:
            attached.append(carried)
    return attached


def _definitions(root: tree_sitter.Node, language: str) -> list[_Definition]:
    found: dict[tuple[int, int], _Definition] = {}
    _collect(root, language, found, MAX_MACRO_DEPTH)
    return sorted(found.values(), key=lambda d: (d.start_line, -d.end_line))


def _collect(root: tree_sitter.Node, language: str, found: dict[tuple[int, int], _Definition], depth: int) -> None:
    for body in _item_macro_bodies(root, language) if depth > 0 else ():
        _collect(body, language, found, depth - 1)
    for _, captures in tree_sitter.QueryCursor(_query(language)).matches(root):
        kind_and_node = [
            (name.split(".", 1)[1], nodes[0]) for name, nodes in captures.items() if name.startswith("definition.")
        ]
        names = captures.get("name")
        if not kind_and_node or not names:
            continue
        kind, node = kind_and_node[0]
        name = _text(names[0])
        start_line, end_line = _span(node)
        key = (start_line, end_line)
        receivers = captures.get("receiver")
        if key not in found and name:
            found[key] = _Definition(name, kind, start_line, end_line)
        if receivers and key in found:
            found[key].receiver = _text(receivers[0])


def _item_macro_bodies(root: tree_sitter.Node, language: str) -> list[tree_sitter.Node]:
    """Item-level macro bodies parsed as source, padded so that their rows are the file's rows."""
    if language not in ITEM_MACRO_BODIES:
        return []
    bodies = []
    for body in tree_sitter.QueryCursor(_macro_query(language)).captures(root).get("body", []):
        text = body.text or b""
        if body.end_point.row > body.start_point.row and text[:1] == b"{":
            padding = b"\n" * body.start_point.row + b" " * (body.start_point.column + 1)
            bodies.append(_parser(language).parse(padding + text[1:-1]).root_node)
    return bodies


def _span(node: tree_sitter.Node) -> tuple[int, int]:
    """1-based inclusive lines of a definition with its wrappers and the comments right above it."""
    while node.parent is not None and (
        node.parent.type in WRAPPER_TYPES
        or (node.parent.type in STATEMENT_TYPES and node.parent.start_point.row == node.start_point.row)
    ):
        node = node.parent
    start_row = node.start_point.row
    sibling = node.prev_sibling
    while (
        sibling is not None
        and ("comment" in sibling.type or sibling.type in LEADING_TYPES)
        and sibling.end_point.row >= start_row - (1 + COMMENT_GAP_LINES)
        and not _trails_code(sibling)
    ):
        start_row = sibling.start_point.row
        sibling = sibling.prev_sibling
    end_row = (
        node.end_point.row if node.end_point.column > 0 or node.end_point.row == start_row else node.end_point.row - 1
    )
    return start_row + 1, end_row + 1


def _trails_code(comment: tree_sitter.Node) -> bool:
    """A comment after code on the same line (`}  // namespace geo`) belongs to that code, not below."""
    before = comment.prev_sibling
    return before is not None and before.end_point.row == comment.start_point.row


def _nest(flat: list[_Definition]) -> list[_Definition]:
    """Turn definitions sorted by (start, -end) into a containment forest."""
    roots: list[_Definition] = []
    stack: list[_Definition] = []
    for definition in flat:
        while stack and definition.start_line > stack[-1].end_line:
            stack.pop()
        if stack and definition.end_line <= stack[-1].end_line:
            stack[-1].children.append(definition)
        elif stack:
            # Overlapping but not contained (rare, e.g. comments pulled in): treat as a sibling.
            stack.pop()
            (stack[-1].children if stack else roots).append(definition)
        else:
            roots.append(definition)
        stack.append(definition)
    return roots


def _qualify(definitions: list[_Definition], parent: _Definition | None, rel_path: str, symbols: list[Symbol]) -> None:
    for definition in definitions:
        if parent is not None and definition.kind == "function" and parent.kind in CONTAINER_KINDS:
            definition.kind = "method"
        container = parent.qualified_name if parent else definition.receiver
        definition.qualified_name = f"{container}.{definition.name}" if container else definition.name
        symbols.append(
            Symbol(
                definition.name,
                definition.qualified_name,
                definition.kind,
                rel_path,
                definition.start_line,
                definition.end_line,
                container,
            )
        )
        _qualify(definition.children, definition, rel_path, symbols)


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace").strip()


@cache
def _language(language: str) -> tree_sitter.Language:
    module_name, attribute = GRAMMARS[language]
    module = importlib.import_module(module_name)
    return tree_sitter.Language(getattr(module, attribute)())


@cache
def _parser(language: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(_language(language))


@cache
def _query(language: str) -> tree_sitter.Query:
    text = _query_text(language)
    assert text is not None
    return tree_sitter.Query(_language(language), text)


@cache
def _macro_query(language: str) -> tree_sitter.Query:
    return tree_sitter.Query(_language(language), ITEM_MACRO_BODIES[language])


@cache
def _query_text(language: str) -> str | None:
    name = QUERY_FILE.get(language, language)
    own = _query_file(name)
    if own is None:
        return None
    return "".join(_query_file(include) or "" for include in QUERY_INCLUDES.get(name, ())) + own


def _query_file(name: str) -> str | None:
    resource = resources.files("ragls.ingest").joinpath("queries", f"{name}.scm")
    return resource.read_text(encoding="utf-8") if resource.is_file() else None
