"""Workspace-symbol matching: match classes in order, and the prefilters never drop a match."""

from __future__ import annotations

import random

import pytest

import ragls.index.symbols as symbols_module
from ragls.index.symbol_table import SymbolColumns
from ragls.index.symbols import EXACT, SUBSEQUENCE, SymbolIndex, _entry, _match
from ragls.model import Symbol


def symbol(qualified: str, file: str = "app.py", line: int = 1) -> Symbol:
    container, _, name = qualified.rpartition(".")
    return Symbol(name, qualified, "function", file, line, line + 1, container or None)


def names(index: SymbolIndex, query: str) -> list[str]:
    return [s.qualified_name for s in index.search(query)]


def test_match_classes_rank_exact_then_prefix_then_words_then_subsequence() -> None:
    index = SymbolIndex()
    index.replace_files(
        [],
        [
            symbol("Config.load_file"),
            symbol("loader"),
            symbol("Load"),
            symbol("load"),
            symbol("lazy_object_attr_dict"),
            symbol("LiveOnlyAppData", file="b.py"),
            symbol("unload_all"),
        ],
    )
    # exact case, exact, name prefixes, word initials (shorter first), then the letters in order
    assert names(index, "load") == [
        "load",
        "Load",
        "loader",
        "Config.load_file",
        "LiveOnlyAppData",
        "lazy_object_attr_dict",
        "unload_all",
    ]
    assert index.ranked("load")[-1][0][0] == SUBSEQUENCE
    assert names(index, "config.lo") == ["Config.load_file"]  # a qualified prefix
    assert names(index, "zz") == []
    assert index.ranked("load", limit=0) == [] and index.ranked("load", limit=-1) == []


def test_queries_with_regex_characters_match_them_literally() -> None:
    index = SymbolIndex()
    index.replace_files([], [symbol("a[b]"), symbol("x^y-z"), symbol("back\\slash"), symbol("Guide > Install")])
    assert names(index, "[b]") == ["a[b]"]
    assert names(index, "^-") == ["x^y-z"]
    assert names(index, "\\") == ["back\\slash"]
    assert names(index, "e > i") == ["Guide > Install"]
    assert names(index, ".*") == []


def test_ranked_matches_classifying_every_symbol() -> None:
    """The masks and the in-order regex only skip symbols no match class would take."""
    rng = random.Random(11)
    words = ["get", "set", "query", "Set", "user", "Name", "HTTP", "handler", "_private", "x2", "data", "é"]
    symbols = []
    for n in range(600):
        parts = ["".join(rng.choice(words) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
        symbols.append(symbol(".".join(parts), file=f"f{n % 7}.py", line=n))
    # Symbols whose qualified name does not end with their name (none of ours, but a store could hold one).
    symbols += [Symbol("getUser", "Legacy.fetch_user", "function", "f9.py", n, n + 1, "Legacy") for n in (1, 2)]
    sigma = "\u03a3"  # "A.Σ".lower() ends with the final form of sigma, "Σ".lower() is the other one
    symbols.append(Symbol(sigma, f"A.{sigma}", "function", "f9.py", 3, 4, "A"))
    index = SymbolIndex()
    index.replace_files([], symbols)
    queries = [
        "getuser",
        "leg",
        "\u03c3",
        "gu",
        sigma,
        "gqs",
        "getus",
        "Set",
        "set",
        "http",
        "hn",
        "é",
        "_p",
        "x2d",
        "u.n",
        "ndl",
        "q u",
        "qq",
        "g",
        "s",
        "",
    ]
    queries += [rng.choice(symbols).qualified_name[: rng.randint(1, 6)] for _ in range(40)]
    for query in queries:
        needle = query.strip().lower()
        expected = []
        for candidate in symbols:
            match_class = _match(query.strip(), needle, _entry(candidate)) if needle else EXACT
            if match_class is not None:
                expected.append((match_class, len(candidate.qualified_name), candidate.file, candidate.start_line))
        expected.sort()
        for limit in (1, 3, 20, 1000):  # small limits stop the classifying early
            got = [(key[0], key[1], s.file, s.start_line) for key, s in index.ranked(query, limit)]
            assert got == expected[:limit], (query, limit)


@pytest.mark.parametrize("loaded", [False, True])
@pytest.mark.parametrize("overlay_min", [0, 4096])
def test_an_index_changed_file_by_file_answers_as_one_built_at_once(
    overlay_min: int, loaded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Changed files answer from an overlay merged with the base (or a rebuilt base, once the overlay is
    large): either way as a fresh index would, also where the first symbols were loaded as saved columns."""
    monkeypatch.setattr(symbols_module, "OVERLAY_MIN", overlay_min)
    rng = random.Random(5)
    words = ["load", "save", "User", "query", "get", "set", "x"]

    def file_symbols(file: str) -> list[Symbol]:
        made = []
        for line in range(1, rng.randint(2, 12)):
            name = "".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
            made.append(symbol(f"{rng.choice(['Model', 'View', ''])}.{name}".lstrip("."), file=file, line=line))
        return made

    files = {f"pkg/m{n}.py": file_symbols(f"pkg/m{n}.py") for n in range(30)}
    index = SymbolIndex()
    first = [s for made in files.values() for s in made]
    if loaded:
        index.load(SymbolColumns.from_saved(*SymbolColumns.of(first).to_saved()))
    else:
        index.replace_files([], first)
    queries = ["load", "us", "gq", "x", "Model.s", "vie", ""]
    for step in range(25):
        for query in queries:
            index.ranked(query, 5)  # joins the columns of the files unchanged so far
        changed = rng.choice(sorted(files))
        if step % 5 == 4:
            del files[changed]
            index.replace_files([changed], [])
        else:
            files[changed] = file_symbols(changed)
            index.replace_files([changed], files[changed])
        if step % 7 == 6:
            added = f"new/f{step}.py"
            files[added] = file_symbols(added)
            index.replace_files([], files[added])
        if step % 3 == 2:  # more symbols for a file that stays
            grown = rng.choice(sorted(files))
            more = file_symbols(grown)
            files[grown] += more
            index.replace_files([], more)
        fresh = SymbolIndex()
        fresh.replace_files([], [s for made in files.values() for s in made])
        for query in queries:
            assert index.ranked(query, 50) == fresh.ranked(query, 50), (step, query)


def test_sorted_names_find_every_text_with_a_prefix() -> None:
    """Two bisections find a prefix's run, also for a prefix ending in the last code point."""
    top = chr(0x10FFFF)
    texts = ["get", "getuser", "gets", "geu", "ge", f"g{top}", f"g{top}a", f"g{top}{top}", "h", ""]
    found = symbols_module._Sorted.of(texts)
    for prefix in ["g", "ge", "get", "gets", "x", f"g{top}", f"g{top}{top}", "h"]:
        expected = sorted(i for i, text in enumerate(texts) if text.startswith(prefix))
        assert sorted(found.starting(prefix).tolist()) == expected, prefix
    assert found.equal("get").tolist() == [0]


def test_captured_symbols_stay_as_they_were_when_the_index_changes_after() -> None:
    index = SymbolIndex()
    index.load(SymbolColumns.of([symbol("load", "a.py"), symbol("Store.get", "b.py")]))
    index.replace_files(["b.py"], [symbol("Store.put", "b.py")])
    captured = index.captured()
    index.replace_files([], [symbol("Store.drop", "b.py", 9)])  # appends to b.py's list
    index.replace_files(["a.py"], [])
    assert [s.qualified_name for s in captured] == ["load", "Store.put"]
    assert [s.qualified_name for s in SymbolColumns.of(captured)] == ["load", "Store.put"]
