"""The workspace-symbol index: definitions found while chunking, matched exact > prefix > word > subsequence."""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ragls.model import Symbol

MAX_SYMBOLS = 256
_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-.\s>]+")

# Match classes, best first: the same case beats another case, the short name beats the qualified one.
EXACT_CASE, EXACT, PREFIX, QUALIFIED_PREFIX, WORD, SUBSEQUENCE = range(6)


@dataclass(frozen=True)
class _Entry:
    symbol: Symbol
    name: str
    qualified: str
    initials: str
    words: tuple[str, ...]


class SymbolIndex:
    """Symbols per file, replaced file by file; matching is case-insensitive.

    Every match class needs the query's characters in the qualified name, in order. So a
    character-set bitmask per symbol rules most symbols out in one numpy comparison, a regex
    in C keeps those that hold the characters in order, and only the rest are classified in
    Python (on Django, 5,000-12,000 symbols passed the masks for a typical query and a few
    dozen the order). The masks are computed in bulk, the per-symbol match data only for
    symbols that are classified.
    """

    def __init__(self) -> None:
        self._by_file: dict[str, list[Symbol]] = {}
        self._flat: _Flat | None = None

    def replace_files(self, removed_files: Iterable[str], symbols: Iterable[Symbol]) -> None:
        """Drop the symbols of the given files, then add the new ones (files can be in both)."""
        for file in removed_files:
            self._by_file.pop(file, None)
        for symbol in symbols:
            self._by_file.setdefault(symbol.file, []).append(symbol)
        self._flat = None

    def clear(self) -> None:
        self._by_file.clear()
        self._flat = None

    def _flattened(self) -> _Flat:
        flat = self._flat
        if flat is None:
            symbols = self.all()
            haystacks = [_haystack(symbol) for symbol in symbols]
            flat = self._flat = (symbols, _masks(haystacks), haystacks, [None] * len(symbols))
        return flat

    def all(self) -> list[Symbol]:
        return [symbol for file_symbols in self._by_file.values() for symbol in file_symbols]

    def __len__(self) -> int:
        return sum(len(symbols) for symbols in self._by_file.values())

    def search(self, query: str, limit: int = MAX_SYMBOLS) -> list[Symbol]:
        """Symbols matching the query, best match class first, then shorter names, then by path."""
        return [symbol for _, symbol in self.ranked(query, limit)]

    def ranked(self, query: str, limit: int = MAX_SYMBOLS) -> list[tuple[tuple[int, int], Symbol]]:
        """Matches with their (match class, name length) keys, best first."""
        needle = query.strip().lower()
        symbols, masks, haystacks, entries = self._flattened()
        candidates: Iterable[int] = range(len(symbols))
        if needle:
            wanted = _mask(needle)
            in_order = _in_order(needle)
            candidates = [i for i in np.flatnonzero((masks & wanted) == wanted).tolist() if in_order(haystacks[i])]
        ranked: list[tuple[int, int, str, int, Symbol]] = []
        for index in candidates:
            entry = entries[index]
            if entry is None:
                entry = entries[index] = _entry(symbols[index])
            match_class = _match(query.strip(), needle, entry) if needle else EXACT
            if match_class is not None:
                symbol = entry.symbol
                ranked.append((match_class, len(entry.qualified), symbol.file, symbol.start_line, symbol))
        best = heapq.nsmallest(limit, ranked, key=lambda item: item[:4])
        return [((item[0], item[1]), item[4]) for item in best]


# The symbols, their character masks, their haystacks, and their match data once computed.
_Flat = tuple[list[Symbol], np.ndarray, list[str], list["_Entry | None"]]


def _haystack(symbol: Symbol) -> str:
    """The lowercased text every match class finds the query's characters in, in order: the qualified name,
    which ends with the name (both before it, should a symbol ever not)."""
    name, qualified = symbol.name.lower(), symbol.qualified_name.lower()
    return qualified if name in qualified else f"{name}\x00{qualified}"


@functools.lru_cache(maxsize=256)
def _in_order(needle: str) -> Callable[[str], re.Match[str] | None]:
    """Whether a text holds the needle's characters in order, as `_is_subsequence`, run by the regex engine:
    each possessive `[^c]*+c` moves to the next c, so nothing is tried twice."""
    return re.compile("".join(f"[^{re.escape(char)}]*+{re.escape(char)}" for char in needle)).match


def _entry(symbol: Symbol) -> _Entry:
    words = tuple(w.lower() for w in _WORD_START.split(symbol.name) if w)
    qualified = symbol.qualified_name.lower()
    return _Entry(symbol, symbol.name.lower(), qualified, "".join(w[0] for w in words), words)


def _mask(text: str) -> int:
    return int(_batch_masks([text])[0])


def _masks(texts: list[str], batch: int = 4096) -> np.ndarray:
    """`_mask` of every text, over batches of texts (which bounds the temporary arrays)."""
    return np.concatenate(
        [np.zeros(0, dtype=np.int64)] + [_batch_masks(texts[i : i + batch]) for i in range(0, len(texts), batch)]
    )


def _batch_masks(texts: list[str]) -> np.ndarray:
    """Per text, a bit per character class present: a-z, 0-9, and one shared bit for everything else."""
    joined = "\x00".join(texts) + "\x00"
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    bits = np.full(codes.shape, 1 << 36, dtype=np.int64)
    letters = (codes >= 97) & (codes <= 122)
    digits = (codes >= 48) & (codes <= 57)
    bits[letters] = np.left_shift(1, codes[letters].astype(np.int64) - 97)
    bits[digits] = np.left_shift(1, codes[digits].astype(np.int64) - 48 + 26)
    bits[codes == 0] = 0
    starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum([len(text) + 1 for text in texts[:-1]], out=starts[1:])
    return np.bitwise_or.reduceat(bits, starts)


def _match(query: str, needle: str, entry: _Entry) -> int | None:
    if needle in (entry.name, entry.qualified):
        symbol = entry.symbol
        return EXACT_CASE if query in (symbol.name, symbol.qualified_name) else EXACT
    if entry.name.startswith(needle):
        return PREFIX
    if entry.qualified.startswith(needle):
        return QUALIFIED_PREFIX
    if entry.initials.startswith(needle) or _word_prefixes(needle, entry.words):
        return WORD
    if _is_subsequence(needle, entry.qualified):
        return SUBSEQUENCE
    return None


def _word_prefixes(needle: str, words: tuple[str, ...]) -> bool:
    """True when the needle is a run of prefixes of consecutive words (`getus` ~ get_user_name)."""
    for start in range(len(words)):
        rest = needle
        for word in words[start:]:
            if not rest:
                break
            common = 0
            while common < min(len(word), len(rest)) and word[common] == rest[common]:
                common += 1
            if common == 0:
                break
            rest = rest[common:]
        if not rest:
            return True
    return False


def _is_subsequence(needle: str, haystack: str) -> bool:
    position = 0
    for char in needle:
        position = haystack.find(char, position) + 1
        if position == 0:
            return False
    return True
