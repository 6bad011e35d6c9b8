"""The seed tokenizer's exact rules and the code-aware additions."""

from __future__ import annotations

import pytest

from ragls.index import tokenize as tokenize_module
from ragls.index.tokenize import (
    ChunkTerms,
    TermCounts,
    Tokenizer,
    code_text,
    code_tokens,
    compound_terms,
    counts_within,
    expand_query,
    limit_identifier_cache,
    name_text,
    present,
    searchable_text,
    seed_tokens,
    stem,
    strip_comments,
)


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("libraries", "librar"),
        ("running", "runn"),
        ("connection", "connec"),
        ("cats", "cat"),
        ("was", "was"),
        ("fully", "ful"),
        ("careful", "care"),
        ("ab", "ab"),
    ],
)
def test_seed_stemmer(word: str, stemmed: str) -> None:
    assert stem(word) == stemmed


def test_seed_tokens_lowercase_drop_short_and_stop_words() -> None:
    assert seed_tokens("The Auth-Token is a JWT; x = 1") == ["auth", "token", "jwt"]


def test_code_tokens_split_identifiers_and_keep_them_whole() -> None:
    # Snowball stems each word: `getusername` -> `getusernam`, but `user` stays `user` (the seed made it `us`).
    assert code_tokens("getUserName") == ["getusernam", "get", "user", "name"]
    assert code_tokens("HTTPServer") == ["httpserver", "http", "server"]


def test_code_tokens_hold_one_string_per_term() -> None:
    # A large index keeps every term in many documents' counts: each term is one shared string.
    first, second = code_tokens("redirects")[0], code_tokens("redirected")[0]
    assert first == second == "redirect"
    assert first is second


def test_code_tokens_meet_at_one_stem_for_word_forms() -> None:
    assert code_tokens("redirects redirected redirecting") == ["redirect"] * 3
    assert code_tokens("handles handled handling") == ["handl"] * 3
    # One-character parts (`v`, `2`) are dropped like any one-character word.
    assert code_tokens("parse_url_v2") == ["parse_url_v2", "pars", "url"]


def test_synonyms_expand_both_ways() -> None:
    assert code_tokens("database") == ["databas"]
    assert "databas" in expand_query(code_tokens("db pool"), code_tokens)
    assert "db" in expand_query(code_tokens("database pool"), code_tokens)


def test_strip_comments_keeps_code_lines_only() -> None:
    python = 'def f(x):\n    """Docstring\n    more."""\n    # note\n    y = x  # trailing\n    return "a # b"\n'
    assert strip_comments(python, "python") == 'def f(x):\n    y = x \n    return "a # b"\n'
    # A triple-quoted string that code opens is code to its end, docstring-like lines included.
    query = 'SQL = """\nselect 1  # not a comment\n"""\ndef g():\n    return SQL\n'
    assert strip_comments(query, "python") == query
    rust = '/// Docs.\nfn f() { // why\n    /* a\n       b */\n    let u = "http://x";\n}'
    assert strip_comments(rust, "rust") == 'fn f() {\n    let u = "http://x";\n}'
    # Prose and languages without a known comment syntax are kept whole.
    assert strip_comments("# Title\n// text", "markdown") == "# Title\n// text"


def test_code_text_adds_path_and_symbol_like_searchable_text() -> None:
    metadata = {"file": "pool.go", "language": "go", "symbol": "Pool.Get"}
    assert code_text("// Get takes a connection.\nfunc (p *Pool) Get() {}", metadata) == (
        "func (p *Pool) Get() {}\npool.go Pool.Get"
    )


def test_compound_terms_glue_adjacent_words_as_identifiers() -> None:
    assert compound_terms("a one-shot channel", code_tokens) == ["oneshot", "one_shot", "shotchannel", "shot_channel"]
    # Stop words glue too ("not found" names `NotFound`), one-letter words do not.
    assert "notfound" in compound_terms("not found", code_tokens)
    assert compound_terms("a b", code_tokens) == []


CHUNK = 'def parse_config(path):\n    """Read the configuration file."""\n    return load(path)  # cached\n'
METADATA = {"file": "app/settings.py", "language": "python", "symbol": "parse_config"}


@pytest.mark.parametrize("tokenizer", [code_tokens, seed_tokens], ids=["code", "seed"])
def test_chunk_terms_are_each_streams_terms_as_it_would_tokenize_them(tokenizer: Tokenizer) -> None:
    terms = ChunkTerms.of(CHUNK, METADATA, tokenizer)
    assert terms.all == TermCounts.of(tokenizer(searchable_text(CHUNK, METADATA)))
    assert terms.names == TermCounts.of(tokenizer(name_text(CHUNK, METADATA)))
    assert present(terms.code) == TermCounts.of(tokenizer(code_text(CHUNK, METADATA)))
    # The code counts share the chunk's tuple of terms, a byte a term, while they wait to be indexed.
    assert terms.code.terms is terms.all.terms and isinstance(terms.code.counts, bytes)


def test_counts_within_are_the_whole_itself_when_equal_and_the_part_where_it_does_not_fit() -> None:
    whole = TermCounts.of(["a", "b", "b"])
    assert counts_within(TermCounts.of(["a", "b", "b"]), whole) is whole
    outside = TermCounts.of(["a", "z"])
    assert counts_within(outside, whole) is outside
    many = TermCounts.of(["b"] * 300)
    assert counts_within(many, TermCounts.of(["b"] * 301)) is many
    assert present(counts_within(TermCounts.of(["b"]), whole)) == TermCounts(("b",), (1,))


def test_a_small_identifier_cache_tokenizes_as_a_large_one() -> None:
    """A reading worker keeps fewer split identifiers; starting the cache over changes no term."""
    text = "def parseHTTPResponse(raw_bytes):\n    return HTTPResponseParser(raw_bytes).parse_all()\n" * 3
    expected = code_tokens(text)
    default = tokenize_module._CACHE_LIMIT
    try:
        limit_identifier_cache(2)
        assert len(tokenize_module._identifier_cache) <= 3
        assert code_tokens(text) == expected
        assert len(tokenize_module._identifier_cache) <= 3
    finally:
        limit_identifier_cache(default)
