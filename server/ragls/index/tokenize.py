"""Tokenizers: the seed's plain one and a code-aware one that also splits identifiers into words."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import Stemmer

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "had",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "how",
        "when",
        "where",
        "why",
        "can",
        "could",
        "should",
        "would",
        "been",
        "being",
        "than",
        "so",
        "we",
        "you",
        "he",
        "she",
        "our",
        "your",
    ]
)
SUFFIXES = ("ies", "ing", "tion", "sion", "ment", "ness", "able", "ous", "ful", "less", "ly", "ed", "er", "es", "s")
SYNONYMS = {
    "db": ("database",),
    "auth": ("authentication", "authorization"),
    "config": ("configuration",),
    "perf": ("performance",),
    "impl": ("implementation",),
    "req": ("request",),
    "res": ("response",),
    "err": ("error",),
    "msg": ("message",),
    "fn": ("function",),
    "param": ("parameter",),
    "repo": ("repository",),
    "env": ("environment",),
    "async": ("asynchronous",),
    "sync": ("synchronous",),
}

_SEED_SPLIT = re.compile(r"[^a-z0-9_]+")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CACHE_LIMIT = 500_000

Tokenizer = Callable[[str], list[str]]
# Joins a document's terms into one string for storage; no tokenizer ever produces it.
TERM_SEPARATOR = "\x00"
# Term counts per document id, computed once and shared by the stores that index the same text.
TermTable = Mapping[str, "TermCounts"]


def join_terms(terms: Iterable[str]) -> str:
    """Terms as one string (for snapshots and the store); `split_terms` undoes it."""
    return TERM_SEPARATOR.join(terms)


def split_terms(text: str) -> list[str]:
    return text.split(TERM_SEPARATOR) if text else []


class TermCounts(NamedTuple):
    """A document's distinct terms and how often each occurs: two tuples, far smaller than a dict."""

    terms: tuple[str, ...]
    counts: tuple[int, ...]

    @classmethod
    def of(cls, tokens: Iterable[str]) -> TermCounts:
        counted = Counter(tokens)
        return cls(tuple(counted), tuple(counted.values()))


def stem(word: str) -> str:
    """The seed's stemmer: strip the first matching suffix from words of four or more characters."""
    if len(word) < 4:
        return word
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


# Snowball's English stemmer (PyStemmer) for the code tokenizer: "parse" meets "parsed" at "pars", "cache"
# meets "cached" at "cach", "retry" meets "retries" at "retri", where the seed's suffix list leaves the bare
# word apart (docs/benchmarks.md: part of NL MRR@10 +0.03..+0.09 on four corpora of five).
_SNOWBALL = Stemmer.Stemmer("english")
_SNOWBALL.maxCacheSize = 0  # our own caches hold the terms; its cache would be a second copy


def _snowball_stem(word: str) -> str:
    return _SNOWBALL.stemWord(word) if len(word) > 3 else word


def _normalize(word: str, stemmer: Callable[[str], str] = stem) -> str | None:
    if len(word) <= 1 or word in STOP_WORDS:
        return None
    return stemmer(word)


def seed_tokens(text: str) -> list[str]:
    """Lowercase, keep a-z0-9_, drop one-letter words and stop words, stem."""
    out = []
    for word in _SEED_SPLIT.split(text.lower()):
        term = _normalize(word)
        if term:
            out.append(term)
    return out


_identifier_cache: dict[str, tuple[str, ...]] = {}


def _identifier_terms(identifier: str) -> tuple[str, ...]:
    cached = _identifier_cache.get(identifier)
    if cached is not None:
        return cached
    lowered = identifier.lower()
    words = [lowered]
    parts = [p.lower() for piece in identifier.split("_") for p in _CAMEL_PART.findall(piece)]
    if len(parts) > 1 or (parts and parts[0] != lowered):
        words.extend(parts)
    terms = tuple(t for t in (_normalize(w, _snowball_stem) for w in words) if t)
    if len(_identifier_cache) > _CACHE_LIMIT:
        _identifier_cache.clear()
    _identifier_cache[identifier] = terms
    return terms


def code_tokens(text: str) -> list[str]:
    """Identifiers kept whole and also split at snake_case, camelCase and digits; stop words dropped, Snowball
    stems."""
    out: list[str] = []
    for identifier in _IDENTIFIER.findall(text):
        out.extend(_identifier_terms(identifier))
    return out


def tokenizer_for(name: str) -> Tokenizer:
    """The tokenizer a setting names: `code` (default) or `seed`."""
    return seed_tokens if name == "seed" else code_tokens


def expand_query(terms: Iterable[str], tokenizer: Tokenizer) -> list[str]:
    """Add the seed's coding synonyms, both ways, to query terms."""
    expanded = list(terms)
    for short, longs in _STEMMED_SYNONYMS(tokenizer).items():
        if short in expanded:
            expanded.extend(longs)
        elif any(term in expanded for term in longs):
            expanded.append(short)
    return expanded


_synonym_cache: dict[int, dict[str, tuple[str, ...]]] = {}


def _STEMMED_SYNONYMS(tokenizer: Tokenizer) -> dict[str, tuple[str, ...]]:
    key = id(tokenizer)
    if key not in _synonym_cache:
        table: dict[str, tuple[str, ...]] = {}
        for short, longs in SYNONYMS.items():
            short_terms = tokenizer(short)
            if short_terms:
                table[short_terms[0]] = tuple(t for long in longs for t in tokenizer(long)[:1])
        _synonym_cache[key] = table
    return _synonym_cache[key]


def searchable_text(content: str, metadata: Mapping[str, Any]) -> str:
    """What gets indexed for a document: its content, plus its file path and symbol name when it has them."""
    extras = [str(metadata[key]) for key in ("file", "symbol") if metadata.get(key)]
    return content if not extras else f"{content}\n{' '.join(extras)}"


def name_text(content: str, metadata: Mapping[str, Any]) -> str:
    """What the names stream indexes: the qualified symbol (and those packed with it) and the file's name
    without extension.

    Docstring-style questions share words with the name of the function that answers them far
    more often than with its body; a stream of names alone lets that signal count on its own.
    """
    file_name = str(metadata.get("file") or "").rsplit("/", 1)[-1].split(".", 1)[0]
    also = " ".join(metadata.get("alsoDefines") or ())
    return f"{metadata.get('symbol') or ''} {also} {file_name}"
