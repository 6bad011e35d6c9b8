"""The workspace-symbol index: definitions found while chunking, matched exact > prefix > word > subsequence."""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable
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

    Every match class needs all of the query's characters in the qualified name, so a
    character-set bitmask per symbol rules most symbols out in one numpy comparison. The
    masks are computed in bulk and the per-symbol match data only for symbols that pass.
    """

    def __init__(self) -> None:
        self._by_file: dict[str, list[Symbol]] = {}
        self._flat: tuple[list[Symbol], np.ndarray, list[_Entry | None]] | None = None

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

    def _flattened(self) -> tuple[list[Symbol], np.ndarray, list[_Entry | None]]:
        flat = self._flat
        if flat is None:
            symbols = self.all()
            flat = self._flat = (symbols, _masks([s.qualified_name.lower() for s in symbols]), [None] * len(symbols))
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
        symbols, masks, entries = self._flattened()
        wanted = _mask(needle)
        candidates = np.flatnonzero((masks & wanted) == wanted).tolist() if needle else range(len(symbols))
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
