"""The seed tokenizer's exact rules and the code-aware additions."""

from __future__ import annotations

import pytest

from ragls.index.tokenize import code_tokens, expand_query, seed_tokens, stem


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


def test_code_tokens_meet_at_one_stem_for_word_forms() -> None:
    assert code_tokens("redirects redirected redirecting") == ["redirect"] * 3
    assert code_tokens("handles handled handling") == ["handl"] * 3
    # One-character parts (`v`, `2`) are dropped like any one-character word.
    assert code_tokens("parse_url_v2") == ["parse_url_v2", "pars", "url"]


def test_synonyms_expand_both_ways() -> None:
    assert code_tokens("database") == ["databas"]
    assert "databas" in expand_query(code_tokens("db pool"), code_tokens)
    assert "db" in expand_query(code_tokens("database pool"), code_tokens)
