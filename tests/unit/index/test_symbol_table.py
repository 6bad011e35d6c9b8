"""Symbols as columns: saved and read back as they were, one file's symbols kept together, read without copies."""

from __future__ import annotations

import numpy as np
import pytest

from ragls.index.symbol_table import ChainedSymbols, SymbolColumns, SymbolRun
from ragls.model import Symbol

SYMBOLS = [
    Symbol("load", "load", "function", "app.py", 1, 4),
    Symbol("get", "Store.get", "method", "app.py", 6, 9, "Store"),
    Symbol("Store", "Store", "class", "app.py", 5, 20),
    Symbol("", "", "heading", "docs/guide.md", 1, 1),  # an empty name is kept as it is
    Symbol("caf\u00e9", "m\u00f3dulo.caf\u00e9", "function", "b\udcff.py", 3, 3, "m\u00f3dulo"),  # a file name's byte
    Symbol("x", "x", "variable", "b\udcff.py", 2**40, 2**40 + 1, ""),  # an empty container is not None
]


def saved_and_read(symbols: list[Symbol]) -> SymbolColumns:
    arrays, table = SymbolColumns.of(symbols).to_saved()
    return SymbolColumns.from_saved(arrays, table)


@pytest.mark.parametrize("symbols", [SYMBOLS, SYMBOLS[:1], []])
def test_saved_columns_read_back_every_symbol_as_it_was(symbols: list[Symbol]) -> None:
    columns = saved_and_read(symbols)
    assert list(columns) == symbols and len(columns) == len(symbols)
    assert [columns[i] for i in range(-len(symbols), 0)] == symbols
    assert all(type(value) is int for symbol in columns for value in (symbol.start_line, symbol.end_line))


def test_read_columns_share_the_strings_they_repeat() -> None:
    columns = saved_and_read(SYMBOLS)
    assert columns[0].qualified_name is columns[0].name  # the qualified name where it is the name
    assert columns[0].file is columns[1].file and columns[4].file is columns[5].file


def test_read_columns_refuse_parts_that_do_not_fit() -> None:
    arrays, table = SymbolColumns.of(SYMBOLS).to_saved()
    with pytest.raises(ValueError, match="lengths"):
        SymbolColumns.from_saved({**arrays, "lengths": arrays["lengths"] + 1}, table)
    with pytest.raises(ValueError, match="fit"):
        SymbolColumns.from_saved({**arrays, "own_qualified": np.ones(len(SYMBOLS), dtype=np.bool_)}, table)
    with pytest.raises(ValueError, match="differ in length"):
        SymbolColumns.from_saved({**arrays, "end_lines": arrays["end_lines"][:-1]}, table)


def test_runs_give_each_file_its_symbols_in_order_even_where_they_were_not_together() -> None:
    together = saved_and_read(SYMBOLS)
    assert {file: list(run) for file, run in together.runs()} == {
        "app.py": SYMBOLS[:3],
        "docs/guide.md": SYMBOLS[3:4],
        "b\udcff.py": SYMBOLS[4:],
    }
    assert list(SymbolColumns.of([]).runs()) == []
    apart = SymbolColumns.of([SYMBOLS[0], SYMBOLS[3], SYMBOLS[1]])
    assert {file: list(run) for file, run in apart.runs()} == {
        "app.py": [SYMBOLS[0], SYMBOLS[1]],
        "docs/guide.md": [SYMBOLS[3]],
    }


def test_runs_and_chains_read_the_columns_in_place() -> None:
    columns = saved_and_read(SYMBOLS)
    run = SymbolRun(columns, 1, 4)
    assert list(run) == SYMBOLS[1:4] and run[-1] == SYMBOLS[3] and list(run[1:]) == SYMBOLS[2:4]
    assert list(run[::-2]) == SYMBOLS[3:0:-2] and list(run[5:1]) == []
    assert list(columns[::2]) == SYMBOLS[::2] and list(columns[4:2]) == [] and list(columns[-2:]) == SYMBOLS[-2:]
    with pytest.raises(IndexError):
        run[3]
    chained = ChainedSymbols([run, [], [SYMBOLS[0]], SymbolRun(columns, 5, 6)])
    expected = [*SYMBOLS[1:4], SYMBOLS[0], SYMBOLS[5]]
    assert len(chained) == 5 and list(chained) == expected
    assert [chained[i] for i in range(-5, 5)] == expected * 2
    assert list(SymbolColumns.joined([run, [SYMBOLS[0]], SymbolRun(columns, 5, 6)])) == expected
    assert list(SymbolColumns.of(chained)) == expected
    lists = [[SYMBOLS[0]], [SYMBOLS[1], SYMBOLS[2]], columns.slice(3, 4), [SYMBOLS[4]], [SYMBOLS[5]]]
    assert list(SymbolColumns.joined(lists)) == SYMBOLS
