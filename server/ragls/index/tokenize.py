"""Tokenizers: the seed's plain one and a code-aware one that also splits identifiers into words."""

from __future__ import annotations

import itertools
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, MutableMapping
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
# Term counts per document id, computed once, outside the generation lock. The knowledge base takes each
# document's counts out as it indexes them, so a full run never holds them all beside the index it builds.
TermTable = MutableMapping[str, "TermCounts"]


def join_terms(terms: Iterable[str]) -> str:
    """Terms as one string, for a snapshot's vocabulary (`ragls.index.vocabulary` reads it back packed)."""
    return TERM_SEPARATOR.join(terms)


class TermCounts(NamedTuple):
    """A document's distinct terms and how often each occurs: two tuples, far smaller than a dict.

    `counts` is bytes in the counts `counts_within` makes: a term counted zero there is not in the document.
    """

    terms: tuple[str, ...]
    counts: tuple[int, ...] | bytes

    @classmethod
    def of(cls, tokens: Iterable[str]) -> TermCounts:
        counted = Counter(tokens)
        return cls(tuple(counted), tuple(counted.values()))


def counts_within(part: TermCounts, whole: TermCounts) -> TermCounts:
    """`part` as counts of `whole`'s terms, a byte each, sharing `whole`'s tuple of terms (or `whole` itself
    when they are equal): the code stream's terms are the document's less its comments', and this keeps them
    at about a byte a term while a run's counts wait to be indexed. `part` as it is where it does not fit."""
    if part == whole:
        return whole
    position = {term: i for i, term in enumerate(whole.terms)}
    aligned = bytearray(len(whole.terms))
    for term, count in zip(part.terms, part.counts, strict=True):
        i = position.get(term)
        if i is None or count > 255:
            return part
        aligned[i] = count
    return TermCounts(whole.terms, bytes(aligned))


def present(counts: TermCounts) -> TermCounts:
    """The terms a document holds, as `TermCounts.of` counts them: `counts_within`'s zeros left out."""
    if not isinstance(counts.counts, bytes):
        return counts
    kept = [(term, count) for term, count in zip(counts.terms, counts.counts, strict=True) if count]
    return TermCounts(tuple(term for term, _ in kept), tuple(count for _, count in kept))


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


def limit_identifier_cache(limit: int) -> None:
    """Hold at most about `limit` split identifiers (the cache starts over past it): a reading worker's is
    smaller than a session's, which keeps its cache for every later edit and query."""
    global _CACHE_LIMIT
    _CACHE_LIMIT = limit
    if len(_identifier_cache) > limit:
        _identifier_cache.clear()


def _identifier_terms(identifier: str) -> tuple[str, ...]:
    cached = _identifier_cache.get(identifier)
    if cached is not None:
        return cached
    lowered = identifier.lower()
    words = [lowered]
    parts = [p.lower() for piece in identifier.split("_") for p in _CAMEL_PART.findall(piece)]
    if len(parts) > 1 or (parts and parts[0] != lowered):
        words.extend(parts)
    # Interned: the stemmer returns a new string per call, and a large index holds each term's string in
    # every document's term counts and in three term tables (Linux: one copy per term, not three or more).
    terms = tuple(sys.intern(t) for t in (_normalize(w, _snowball_stem) for w in words) if t)
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


# Comment syntax by the chunk's language, for the code stream (`code_text`). A language not listed keeps
# every line (prose, data files, and languages whose comments we do not strip).
_SLASH_COMMENT_LANGUAGES = frozenset(
    {
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "csharp",
        "php",
        "kotlin",
        "swift",
        "scala",
        "dart",
        "zig",
        "proto",
    }
)
_HASH_COMMENT_LANGUAGES = frozenset({"python", "ruby", "bash", "perl", "r", "elixir", "yaml", "toml"})
_DOCSTRING_QUOTES = ('"""', "'''")
_STRING_PREFIX = "rRbBuUfF"
# A comment after code on the same line: the marker with whitespace on both sides (not `http://x`).
_TRAILING_SLASH_COMMENT = re.compile(r"\s//(\s|$)")
_TRAILING_HASH_COMMENT = re.compile(r"\s#(\s|$)")


def strip_comments(content: str, language: str | None) -> str:
    """The chunk's code lines without its comments and docstrings, by the language's comment syntax.

    Line by line, no parsing: whole-line `//`, `/* ... */` and `#` comments, Python docstrings (a line
    that opens with triple quotes, to the line that closes them) and a comment after code on its line.
    """
    slash = language in _SLASH_COMMENT_LANGUAGES
    hash_marks = language in _HASH_COMMENT_LANGUAGES
    if not slash and not hash_marks:
        return content
    python = language == "python"
    trailing = _TRAILING_SLASH_COMMENT if slash else _TRAILING_HASH_COMMENT
    marker = "//" if slash else "#"
    code: list[str] = []
    closing: str | None = None  # what ends the block comment or docstring we are in
    open_string: str | None = None  # the quotes of a triple-quoted Python string that code opened
    for line in content.split("\n"):
        stripped = line.strip()
        if open_string is not None:  # string content is code's, comment markers and all
            code.append(line)
            if open_string in line:
                open_string = None
            continue
        if closing is not None:
            if closing in stripped:
                closing = None
            continue
        if stripped.startswith(marker):
            continue
        if slash and stripped.startswith("/*"):
            if "*/" not in stripped[2:]:
                closing = "*/"
            continue
        if python:
            unprefixed = stripped.lstrip(_STRING_PREFIX)
            if unprefixed.startswith(_DOCSTRING_QUOTES) and len(stripped) - len(unprefixed) <= 2:
                if unprefixed[:3] not in unprefixed[3:]:
                    closing = unprefixed[:3]
                continue
        if marker in line:
            found = trailing.search(line)
            # Outside a string as far as quotes tell: an even number of them before the marker.
            if found is not None and not _inside_string(line[: found.start()], python):
                line = line[: found.start()]
        if python:
            open_string = next((quotes for quotes in _DOCSTRING_QUOTES if line.count(quotes) % 2 == 1), None)
        code.append(line)
    return "\n".join(code)


def _inside_string(before: str, python: bool) -> bool:
    return before.count('"') % 2 == 1 or (python and before.count("'") % 2 == 1)


def code_text(content: str, metadata: Mapping[str, Any]) -> str:
    """What the code stream indexes: a document's text as `searchable_text`, less its comments and docstrings.

    Questions about how something works share words with the code that does it; long API comments (a
    Rust `///` block with examples, a Python docstring) share them with everything they mention. Ranking
    the code alone as a stream of its own lifts the implementation (docs/benchmarks.md).
    """
    language = metadata.get("language")
    return searchable_text(strip_comments(content, language if isinstance(language, str) else None), metadata)


_QUERY_WORD = re.compile(r"[A-Za-z0-9]+")


def compound_terms(query: str, tokenizer: Tokenizer) -> list[str]:
    """Each pair of adjacent query words glued as an identifier would be, as the tokenizer's terms.

    "one-shot channel" asks for `oneshot`, "run queue" for `run_queue`, "not found" for `NotFound`:
    an identifier is indexed whole as well as by its parts, so the glued pair (as one word and in
    snake_case) names it. Only terms the index holds are worth adding; the caller checks.
    """
    words = [word.lower() for word in _QUERY_WORD.findall(query)]
    terms: list[str] = []
    for first, second in itertools.pairwise(words):
        if len(first) <= 1 or len(second) <= 1:
            continue
        parts = {*tokenizer(first), *tokenizer(second)}
        for glued in (first + second, f"{first}_{second}"):
            whole = tokenizer(glued)[:1]
            if whole and whole[0] not in parts and whole[0] not in terms:
                terms.append(whole[0])
    return terms


def name_text(content: str, metadata: Mapping[str, Any]) -> str:
    """What the names stream indexes: the qualified symbol (and those packed with it) and the file's name
    without extension.

    Docstring-style questions share words with the name of the function that answers them far
    more often than with its body; a stream of names alone lets that signal count on its own.
    """
    file_name = str(metadata.get("file") or "").rsplit("/", 1)[-1].split(".", 1)[0]
    also = " ".join(metadata.get("alsoDefines") or ())
    return f"{metadata.get('symbol') or ''} {also} {file_name}"


class ChunkTerms(NamedTuple):
    """A chunk's term counts for each text a stream indexes, tokenized where its file was read, so that no
    stream reads (and unpacks) the chunk's text again to index it."""

    all: TermCounts  # `searchable_text`: the knowledge base and BM25
    names: TermCounts  # `name_text`
    code: TermCounts  # `code_text`, as `counts_within` the first: `present` gives its terms

    @classmethod
    def of(cls, content: str, metadata: Mapping[str, Any], tokenizer: Tokenizer) -> ChunkTerms:
        every = TermCounts.of(tokenizer(searchable_text(content, metadata)))
        code = TermCounts.of(tokenizer(code_text(content, metadata)))
        return cls(every, TermCounts.of(tokenizer(name_text(content, metadata))), counts_within(code, every))
