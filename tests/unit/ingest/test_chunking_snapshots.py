"""Chunk boundaries and symbols of one sample file per language, pinned as JSON snapshots.

Run with UPDATE_SNAPSHOTS=1 to (re)write the snapshots; review the diff before committing it.
"""

from __future__ import annotations

import json
import os
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from ragls.config import ChunkShape
from ragls.ingest.chunking import chunk_file
from ragls.ingest.chunking.code import GRAMMARS, _query
from ragls.ingest.formats import detect_format
from ragls.model import Chunk

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "chunking"
SNAPSHOTS = HERE / "snapshots" / "chunking"
FIXTURE_NAMES = sorted(path.name for path in FIXTURES.iterdir() if path.is_file())
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"
# The defaults keep every sample definition whole; the narrow shape makes classes split into their members.
DEFAULT_SHAPE = ChunkShape()
NARROW_SHAPE = ChunkShape(max_lines=12, overlap_lines=2)


def _chunks(name: str, shape: ChunkShape) -> list[Chunk]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    file_format = detect_format(name)
    assert file_format is not None
    return chunk_file(text, name, file_format, shape).chunks


def _render_chunks(chunks: list[Chunk]) -> list[dict[str, Any]]:
    return [
        {
            "id": chunk.id,
            "symbol": chunk.symbol,
            "symbolKind": chunk.symbol_kind,
            "alsoDefines": list(chunk.also_defines),
            "startLine": chunk.start_line,
            "endLine": chunk.end_line,
            "language": chunk.language,
        }
        for chunk in chunks
    ]


def render(name: str) -> dict[str, Any]:
    """The snapshot of one fixture: its format, chunks under both shapes, and its symbols."""
    file_format = detect_format(name)
    assert file_format is not None
    text = (FIXTURES / name).read_text(encoding="utf-8")
    result = chunk_file(text, name, file_format, DEFAULT_SHAPE)
    return {
        "format": {"family": file_format.family, "language": file_format.language},
        "chunks": _render_chunks(result.chunks),
        "narrowChunks": _render_chunks(_chunks(name, NARROW_SHAPE)),
        "symbols": [
            {
                "qualified_name": symbol.qualified_name,
                "kind": symbol.kind,
                "start_line": symbol.start_line,
                "end_line": symbol.end_line,
                "container": symbol.container,
            }
            for symbol in result.symbols
        ],
    }


def assert_well_formed(chunks: list[Chunk]) -> None:
    """Unique IDs, line order, and no overlap except between line windows of one symbol."""
    assert len({chunk.id for chunk in chunks}) == len(chunks)
    for before, after in pairwise(chunks):
        assert before.start_line <= after.start_line
        if after.start_line <= before.end_line:
            assert (before.symbol, before.symbol_kind) == (after.symbol, after.symbol_kind), (before.id, after.id)


def check(name: str) -> None:
    """Compare a fixture's rendering with its snapshot, or write the snapshot under UPDATE_SNAPSHOTS=1."""
    assert_well_formed(_chunks(name, DEFAULT_SHAPE))
    assert_well_formed(_chunks(name, NARROW_SHAPE))
    actual = json.dumps(render(name), indent=2, ensure_ascii=False) + "\n"
    snapshot = SNAPSHOTS / f"{name}.json"
    if UPDATE:
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(actual, encoding="utf-8")
        return
    assert snapshot.is_file(), f"no snapshot for {name}; run with UPDATE_SNAPSHOTS=1 and review it"
    assert json.loads(actual) == json.loads(snapshot.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_snapshot(name: str) -> None:
    check(name)


def test_every_grammar_has_a_compiling_query_and_a_fixture() -> None:
    covered = set()
    for name in FIXTURE_NAMES:
        file_format = detect_format(name)
        if file_format is not None and file_format.family == "code":
            covered.add(file_format.language)
    assert covered == set(GRAMMARS)
    for language in GRAMMARS:
        assert _query(language).pattern_count > 0, language


EXPECTED_SYMBOLS = [
    ("sample.py", "Session.send", "method"),
    ("sample.py", "Session.Retry.delay", "method"),
    ("sample.py", "connect", "function"),
    ("sample.js", "Server.handle", "method"),
    ("sample.js", "createServer", "function"),
    ("sample.ts", "Store.set", "method"),
    ("sample.ts", "Entry", "interface"),
    ("sample.ts", "Listener", "type"),
    ("sample.ts", "Mode", "enum"),
    ("sample.ts", "Base.size", "method"),
    ("sample.ts", "Stores", "namespace"),
    ("sample.tsx", "Panel.render", "method"),
    ("sample.tsx", "Button", "function"),
    ("sample.tsx", "Counter", "function"),
    ("sample.go", "Server.Handle", "method"),
    ("sample.go", "Set.Has", "method"),
    ("sample.go", "Options.Verbose", "method"),
    ("sample.go", "Server", "struct"),
    ("sample.go", "Handler", "interface"),
    ("sample.go", "Options", "struct"),
    ("sample.go", "NewServer", "function"),
    ("sample.rs", "Cache", "struct"),
    ("sample.rs", "Cache.insert", "method"),
    ("sample.rs", "Evict", "trait"),
    ("sample.rs", "Policy.fmt", "method"),
    ("sample.rs", "stats", "module"),
    ("sample.rs", "square", "function"),
    ("sample.java", "WorkQueue.offer", "method"),
    ("sample.java", "WorkQueue.Stats.rejectRate", "method"),
    ("sample.java", "Worker", "interface"),
    ("sample.java", "Priority", "enum"),
    ("sample.java", "Job", "class"),
    ("sample.c", "buffer_append", "function"),
    ("sample.c", "buffer_detach", "function"),
    ("sample.c", "buffer", "struct"),
    ("sample.c", "point", "type"),
    ("sample.cpp", "geo.Circle.radius", "method"),
    ("sample.cpp", "geo.Shape", "class"),
    ("sample.cpp", "geo", "namespace"),
    ("sample.cpp", "distance", "function"),
    ("sample.cs", "Example.Inventory.Inventory.Add", "method"),
    ("sample.cs", "Example.Inventory.IAuditor", "interface"),
    ("sample.cs", "Example.Inventory.Level", "struct"),
    ("sample.rb", "Billing.Invoice.total", "method"),
    ("sample.rb", "Billing.Invoice.from_json", "method"),
    ("sample.rb", "Billing", "module"),
    ("sample.rb", "format_money", "function"),
    ("sample.php", "Message.addRecipient", "method"),
    ("sample.php", "Loggable", "trait"),
    ("sample.php", "Transport", "interface"),
    ("sample.php", "send", "function"),
    ("sample.kt", "Cart.add", "method"),
    ("sample.kt", "NoDiscount", "object"),
    ("sample.kt", "Discount", "interface"),
    ("sample.kt", "Currency", "enum"),
    ("sample.kt", "checkout", "function"),
    ("sample.swift", "Canvas.draw", "method"),
    ("sample.swift", "Canvas.init", "method"),
    ("sample.swift", "Size", "struct"),
    ("sample.swift", "Drawable", "interface"),
    ("sample.swift", "makeCanvas", "function"),
    ("sample.scala", "Graph.addEdge", "method"),
    ("sample.scala", "Visitor", "trait"),
    ("sample.scala", "countNodes", "function"),
    ("sample.lua", "M:push", "method"),
    ("sample.lua", "M.new", "function"),
    ("sample.lua", "describe", "function"),
    ("sample.sh", "deploy", "function"),
    ("sample.sh", "deploy.confirm", "function"),
    ("sample.md", "Project Guide > Install", "heading"),
]


@pytest.mark.parametrize(("name", "qualified_name", "kind"), EXPECTED_SYMBOLS)
def test_expected_symbol(name: str, qualified_name: str, kind: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    file_format = detect_format(name)
    assert file_format is not None
    symbols = chunk_file(text, name, file_format, DEFAULT_SHAPE).symbols
    found = {(symbol.qualified_name, symbol.kind) for symbol in symbols}
    assert (qualified_name, kind) in found, sorted(found)


def test_markdown_heading_inside_a_code_fence_is_not_a_heading() -> None:
    text = (FIXTURES / "sample.md").read_text(encoding="utf-8")
    file_format = detect_format("sample.md")
    assert file_format is not None
    names = [symbol.name for symbol in chunk_file(text, "sample.md", file_format, DEFAULT_SHAPE).symbols]
    assert not any("comment" in name for name in names)
