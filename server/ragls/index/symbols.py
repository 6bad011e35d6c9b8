"""The workspace-symbol index: definitions found while chunking, matched exact > prefix > word > subsequence."""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Iterator
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
    character-set bitmask per symbol rules most symbols out in one numpy comparison and a regex
    in C keeps those that hold the characters in order (on Django, `Media._css` passed the masks
    for 8,647 symbols and the order for 11). Exact and prefix matches are then
    found by string tests in C; only the word and in-order classes are told apart in Python, in
    rank order, and only until enough matches are found (a one-letter query on Django matched
    18,000 symbols by prefix: classifying all 40,000 in Python took 290 ms).
    """

    def __init__(self) -> None:
        self._by_file: dict[str, list[Symbol]] = {}
        self._columns: dict[str, _Columns] = {}  # per file, so that a change rebuilds only its files' columns
        self._flat: _Flat | None = None

    def replace_files(self, removed_files: Iterable[str], symbols: Iterable[Symbol]) -> None:
        """Drop the symbols of the given files, then add the new ones (files can be in both)."""
        for file in removed_files:
            self._by_file.pop(file, None)
            self._columns.pop(file, None)
        for symbol in symbols:
            self._by_file.setdefault(symbol.file, []).append(symbol)
            self._columns.pop(symbol.file, None)
        self._flat = None

    def clear(self) -> None:
        self._by_file.clear()
        self._columns.clear()
        self._flat = None

    def _flattened(self) -> _Flat:
        if self._flat is None:
            missing = [file for file in self._by_file if file not in self._columns]
            if missing:
                built = _Columns.of([symbol for file in missing for symbol in self._by_file[file]])
                start = 0
                for file in missing:
                    end = start + len(self._by_file[file])
                    self._columns[file] = built.slice(start, end)
                    start = end
            files = list(self._by_file)
            self._flat = _Flat.of(self.all(), files, [self._columns[file] for file in files])
        return self._flat

    def all(self) -> list[Symbol]:
        return [symbol for file_symbols in self._by_file.values() for symbol in file_symbols]

    def __len__(self) -> int:
        return sum(len(symbols) for symbols in self._by_file.values())

    def search(self, query: str, limit: int = MAX_SYMBOLS) -> list[Symbol]:
        """Symbols matching the query, best match class first, then shorter names, then by path."""
        return [symbol for _, symbol in self.ranked(query, limit)]

    def ranked(self, query: str, limit: int = MAX_SYMBOLS) -> list[tuple[tuple[int, int], Symbol]]:
        """Matches with their (match class, name length) keys, best first; within a class in rank order."""
        if limit <= 0:
            return []
        flat = self._flattened()
        query = query.strip()
        needle = query.lower()
        if not needle:
            return [((EXACT, len(flat.qualified[i])), flat.symbols[i]) for i in flat.order[:limit].tolist()]
        names, qualified, haystacks = flat.names, flat.qualified, flat.haystacks
        survivors = flat.in_order(needle)
        exact = [i for i in flat.of_length(survivors, len(needle)) if names[i] == needle or qualified[i] == needle]
        by_class: list[list[int]] = [[] for _ in range(SUBSEQUENCE + 1)]
        for i in exact:
            by_class[_exact_class(query, flat.symbols[i])].append(i)
        taken = set(exact)
        # Prefix matches rank before the rest, in rank order: take no more than the limit needs.
        by_class[PREFIX] = _first(limit - len(taken), (i for i in survivors if names[i].startswith(needle)), taken)
        by_class[QUALIFIED_PREFIX] = _first(
            limit - len(taken), (i for i in survivors if qualified[i].startswith(needle)), taken
        )
        found = len(taken)
        if found < limit:  # every exact and prefix match is in `taken`
            for i in survivors:
                if i in taken:
                    continue
                entry = flat.entry(i)  # not exact, not a prefix: a word match or the letters in order
                if _is_word_match(needle, entry):
                    by_class[WORD].append(i)
                    found += 1
                    if found == limit:
                        break  # the rest are word matches of later rank, or worse
                elif haystacks[i] is qualified[i] or _is_subsequence(needle, qualified[i]):
                    by_class[SUBSEQUENCE].append(i)  # the in-order regex ran on the qualified name itself
        best = [(match_class, i) for match_class, indices in enumerate(by_class) for i in indices][:limit]
        return [((match_class, len(qualified[i])), flat.symbols[i]) for match_class, i in best]


@dataclass
class _Columns:
    """What matching needs of a run of symbols, column by column (built in bulk, kept per file)."""

    names: list[str]  # lowercased
    qualified: list[str]  # lowercased
    haystacks: list[str]  # the qualified names, which end with the names (both, for a symbol that did not)
    masks: np.ndarray  # the character classes in each haystack
    name_lengths: np.ndarray
    qualified_lengths: np.ndarray
    start_lines: np.ndarray

    @staticmethod
    def of(symbols: list[Symbol]) -> _Columns:
        names = [symbol.name.lower() for symbol in symbols]
        qualified = [symbol.qualified_name.lower() for symbol in symbols]
        haystacks = (
            qualified
            if all(map(operator.contains, qualified, names))
            else [q if n in q else f"{n}\x00{q}" for n, q in zip(names, qualified, strict=True)]
        )
        count = len(symbols)
        return _Columns(
            names,
            qualified,
            haystacks,
            _masks(haystacks),
            np.fromiter(map(len, names), dtype=np.int64, count=count),
            np.fromiter(map(len, qualified), dtype=np.int64, count=count),
            np.fromiter((symbol.start_line for symbol in symbols), dtype=np.int64, count=count),
        )

    def slice(self, start: int, end: int) -> _Columns:
        return _Columns(
            self.names[start:end],
            self.qualified[start:end],
            self.haystacks[start:end],
            self.masks[start:end],
            self.name_lengths[start:end],
            self.qualified_lengths[start:end],
            self.start_lines[start:end],
        )


@dataclass
class _Flat:
    """Every symbol with what matching needs, joined from the files' columns on the first query after a change."""

    symbols: list[Symbol]
    names: list[str]
    qualified: list[str]
    haystacks: list[str]
    masks: np.ndarray
    order: np.ndarray  # symbol indices by (qualified length, file, line): the order within a match class
    rank: np.ndarray  # each symbol's place in `order`
    name_lengths: np.ndarray
    qualified_lengths: np.ndarray
    entries: list[_Entry | None]  # the match data, made when first needed

    @staticmethod
    def of(symbols: list[Symbol], files: list[str], columns: list[_Columns]) -> _Flat:
        """`symbols` are the files' symbols, file after file; `columns` are theirs, in the same order."""
        count = len(symbols)

        def joined(column: Callable[[_Columns], list[str]]) -> list[str]:
            return list(itertools.chain.from_iterable(map(column, columns)))

        def stacked(column: Callable[[_Columns], np.ndarray]) -> np.ndarray:
            return np.concatenate([np.zeros(0, dtype=np.int64), *map(column, columns)])

        names, qualified = joined(lambda c: c.names), joined(lambda c: c.qualified)
        haystacks = joined(lambda c: c.haystacks)
        qualified_lengths = stacked(lambda c: c.qualified_lengths)
        per_file = np.fromiter((len(c.names) for c in columns), dtype=np.int64, count=len(columns))
        position = {file: i for i, file in enumerate(sorted(files))}
        file_ranks = np.fromiter(map(position.__getitem__, files), dtype=np.int64, count=len(files))
        order = np.lexsort((stacked(lambda c: c.start_lines), np.repeat(file_ranks, per_file), qualified_lengths))
        rank = np.empty(count, dtype=np.int64)
        rank[order] = np.arange(count)
        return _Flat(
            symbols,
            names,
            qualified,
            haystacks,
            stacked(lambda c: c.masks),
            order,
            rank,
            stacked(lambda c: c.name_lengths),
            qualified_lengths,
            [None] * count,
        )

    def in_order(self, needle: str) -> list[int]:
        """The symbols whose haystack holds the needle's characters in order, in rank order."""
        wanted = _mask(needle)
        indices = np.flatnonzero((self.masks & wanted) == wanted)
        if len(needle) > 1 or not (needle.isascii() and needle.isalnum()):  # one letter or digit: the mask says it
            matches = _in_order(needle)
            haystacks = self.haystacks
            indices = np.array([i for i in indices.tolist() if matches(haystacks[i])], dtype=np.int64)
        return indices[np.argsort(self.rank[indices], kind="stable")].tolist()

    def of_length(self, indices: list[int], length: int) -> list[int]:
        """The symbols among `indices` whose name or qualified name has `length` characters (in that order)."""
        array = np.array(indices, dtype=np.int64)
        same = (self.name_lengths[array] == length) | (self.qualified_lengths[array] == length)
        return array[same].tolist()

    def entry(self, index: int) -> _Entry:
        entry = self.entries[index]
        if entry is None:
            entry = self.entries[index] = _entry(self.symbols[index])
        return entry


def _first(count: int, indices: Iterator[int], taken: set[int]) -> list[int]:
    """Up to `count` of `indices` not yet in `taken`, added to it."""
    kept: list[int] = []
    if count > 0:
        for i in indices:
            if i not in taken:
                taken.add(i)
                kept.append(i)
                if len(kept) == count:
                    break
    return kept


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
    """The match class of one symbol: the whole rule, which `SymbolIndex.ranked` applies in stages (the tests
    hold it to this)."""
    if needle in (entry.name, entry.qualified):
        return _exact_class(query, entry.symbol)
    if entry.name.startswith(needle):
        return PREFIX
    if entry.qualified.startswith(needle):
        return QUALIFIED_PREFIX
    if _is_word_match(needle, entry):
        return WORD
    if _is_subsequence(needle, entry.qualified):
        return SUBSEQUENCE
    return None


def _exact_class(query: str, symbol: Symbol) -> int:
    """For a symbol the needle names exactly: whether the query's case matches too."""
    return EXACT_CASE if query in (symbol.name, symbol.qualified_name) else EXACT


def _is_word_match(needle: str, entry: _Entry) -> bool:
    """The needle starts the initials, or is a run of word prefixes. Both start with a word's first letter,
    so a needle whose first letter starts no word skips the word-by-word walk."""
    return needle[0] in entry.initials and (entry.initials.startswith(needle) or _word_prefixes(needle, entry.words))


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
