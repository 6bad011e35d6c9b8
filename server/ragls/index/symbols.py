"""The workspace-symbol index: definitions found while chunking, matched exact > prefix > word > subsequence."""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ragls.index.symbol_table import ChainedSymbols, SymbolColumns
from ragls.model import Symbol

MAX_SYMBOLS = 256
# Changed files' symbols live in an overlay of this many or a twentieth of the index before the base is rebuilt.
OVERLAY_MIN = 4096
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

    Exact and prefix matches come from the names and qualified names kept sorted: two bisections each, however
    many symbols there are. Only when they do not fill the limit are the word and in-order classes sought: a
    character-set bitmask per symbol rules most symbols out in one numpy comparison, a regex in C keeps those
    that hold the query's characters in order (on Django, `Media._css` passed the masks for 8,647 symbols and
    the order for 11), and only those are told apart in Python, in rank order, until enough are found.

    The joined columns of every file (the base) are built on the first query. A change does not rebuild them:
    the changed files' symbols go dead in the base and live in a small overlay, joined again on the next query,
    and the answers of the two are merged. The base is rebuilt once the overlay holds a twentieth of the
    symbols (on the Linux kernel's 868,594 symbols, joining them all takes about a second).
    """

    def __init__(self) -> None:
        # A file's symbols: a list where they were added, a run of the loaded columns where they were loaded; never
        # changed in place, so that an image can hold them.
        self._by_file: dict[str, Sequence[Symbol]] = {}
        self._columns: dict[str, _Columns] = {}  # per file, so that a rebuild joins only changed files' columns anew
        self._base: _Flat | None = None
        self._changed: set[str] = set()  # files changed since the base was built: dead there, live in the overlay
        self._overlay: _Flat | None = None

    def replace_files(self, removed_files: Iterable[str], symbols: Iterable[Symbol]) -> None:
        """Drop the symbols of the given files, then add the new ones (files can be in both)."""
        touched = set(removed_files)
        for file in touched:
            self._by_file.pop(file, None)
        added: dict[str, list[Symbol]] = {}
        for symbol in symbols:
            added.setdefault(symbol.file, []).append(symbol)
        for file, file_symbols in added.items():  # a new list: a captured one never changes (`captured`)
            before = self._by_file.get(file)
            self._by_file[file] = [*before, *file_symbols] if before else file_symbols
        touched.update(added)
        for file in touched:
            self._columns.pop(file, None)
        if self._base is None or not touched:
            return
        self._base.kill(touched)
        self._changed |= touched
        self._overlay = None
        if sum(len(self._by_file.get(file, ())) for file in self._changed) > max(OVERLAY_MIN, len(self._base) // 20):
            self._base = None

    def load(self, symbols: Sequence[Symbol]) -> None:
        """Hold these symbols instead of any before; columns (a snapshot's) are kept as they are, file by file."""
        self.clear()
        self._by_file.update(SymbolColumns.of(symbols).runs())

    def clear(self) -> None:
        self._by_file.clear()
        self._columns.clear()
        self._base = self._overlay = None
        self._changed.clear()

    def prepare(self) -> None:
        """Join the columns now, so that the first query does not wait for it (a second on the Linux kernel)."""
        self._flats()

    def _flats(self) -> list[_Flat]:
        """The base and, when files changed since it was built, the overlay of their symbols."""
        if self._base is None:
            self._base = self._joined(list(self._by_file))
            self._changed.clear()
            self._overlay = None
        if not self._changed:
            return [self._base]
        if self._overlay is None:
            self._overlay = self._joined([file for file in self._changed if file in self._by_file])
        return [self._base, self._overlay]

    def _joined(self, files: list[str]) -> _Flat:
        missing = [file for file in files if file not in self._columns]
        if missing:
            built = _Columns.of(SymbolColumns.joined([self._by_file[file] for file in missing]))
            start = 0
            for file in missing:
                end = start + len(self._by_file[file])
                self._columns[file] = built.slice(start, end)
                start = end
        symbols = ChainedSymbols([self._by_file[file] for file in files])
        return _Flat.of(symbols, files, [self._columns[file] for file in files])

    def captured(self) -> ChainedSymbols:
        """Every symbol, file by file, as they are now, nothing copied (an image is taken under the index lock; a
        snapshot makes columns of it later, `SymbolColumns.of`): a file's symbols are replaced, never changed."""
        return ChainedSymbols(list(self._by_file.values()))

    def __len__(self) -> int:
        return sum(len(symbols) for symbols in self._by_file.values())

    def search(self, query: str, limit: int = MAX_SYMBOLS) -> list[Symbol]:
        """Symbols matching the query, best match class first, then shorter names, then by path."""
        return [symbol for _, symbol in self.ranked(query, limit)]

    def ranked(self, query: str, limit: int = MAX_SYMBOLS) -> list[tuple[tuple[int, int], Symbol]]:
        """Matches with their (match class, name length) keys, best first; within a class in rank order."""
        if limit <= 0:
            return []
        query = query.strip()
        flats = self._flats()
        found = [(match_class, flat, i) for flat in flats for match_class, i in flat.matches(query, limit)]
        if len(flats) > 1:  # each flat's matches are in (class, rank) order: merge them by the same key
            found.sort(key=lambda item: (item[0], *item[1].rank_key(item[2])))
            del found[limit:]
        return [((match_class, len(flat.qualified[i])), flat.symbols[i]) for match_class, flat, i in found]


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
    def of(symbols: SymbolColumns) -> _Columns:
        names = _lowered(symbols.names)
        qualified = _lowered(symbols.qualified)
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
            symbols.start_lines,
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
    """Symbols with what matching needs, joined from their files' columns, and which of them are still live."""

    symbols: Sequence[Symbol]
    names: list[str]
    qualified: list[str]
    haystacks: list[str]
    masks: np.ndarray
    order: np.ndarray  # symbol indices by (qualified length, file, line): the order within a match class
    rank: np.ndarray  # each symbol's place in `order`
    name_lengths: np.ndarray
    qualified_lengths: np.ndarray
    by_name: _Sorted
    by_qualified: _Sorted
    spans: dict[str, tuple[int, int]]  # each file's symbols, start and end
    alive: np.ndarray
    entries: list[_Entry | None]  # the match data, made when first needed

    @staticmethod
    def of(symbols: Sequence[Symbol], files: list[str], columns: list[_Columns]) -> _Flat:
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
        ends = np.cumsum(per_file).tolist()
        spans = {file: (end - size, end) for file, end, size in zip(files, ends, per_file.tolist(), strict=True)}
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
            _Sorted.of(names),
            _Sorted.of(qualified),
            spans,
            np.ones(count, dtype=bool),
            [None] * count,
        )

    def __len__(self) -> int:
        return len(self.symbols)

    def kill(self, files: Iterable[str]) -> None:
        """The symbols of these files no longer match (their files changed; the overlay holds them now)."""
        for file in files:
            span = self.spans.get(file)
            if span is not None:
                self.alive[span[0] : span[1]] = False

    def rank_key(self, index: int) -> tuple[int, str, int]:
        """What `order` sorts by, comparable across flats."""
        symbol = self.symbols[index]
        return int(self.qualified_lengths[index]), symbol.file, symbol.start_line

    def matches(self, query: str, limit: int) -> list[tuple[int, int]]:
        """The first `limit` live matches as (match class, index), best class first, each class in rank order."""
        needle = query.lower()
        if not needle:
            return [(EXACT, i) for i in self._live(self.order, limit)]
        qualified = self.qualified
        exact = self._by_rank(np.union1d(self.by_name.equal(needle), self.by_qualified.equal(needle)))
        by_class: list[list[int]] = [[] for _ in range(SUBSEQUENCE + 1)]
        for i in exact:
            by_class[_exact_class(query, self.symbols[i])].append(i)
        taken = set(exact)
        # Prefix matches rank before the rest, in rank order: take no more than the limit needs.
        for match_class, sorted_texts in ((PREFIX, self.by_name), (QUALIFIED_PREFIX, self.by_qualified)):
            wanted = limit - len(taken)
            if wanted > 0:
                candidates = self._by_rank(sorted_texts.starting(needle), wanted + len(taken))
                by_class[match_class] = _first(wanted, iter(candidates), taken)
        found = len(taken)
        if found < limit:  # every exact and prefix match is in `taken`
            haystacks = self.haystacks
            for i in self._in_order(needle):
                if i in taken:
                    continue
                entry = self.entry(i)  # not exact, not a prefix: a word match or the letters in order
                if _is_word_match(needle, entry):
                    by_class[WORD].append(i)
                    found += 1
                    if found == limit:
                        break  # the rest are word matches of later rank, or worse
                elif haystacks[i] is qualified[i] or _is_subsequence(needle, qualified[i]):
                    by_class[SUBSEQUENCE].append(i)  # the in-order regex ran on the qualified name itself
        return [(match_class, i) for match_class, indices in enumerate(by_class) for i in indices][:limit]

    def _live(self, indices: np.ndarray, limit: int) -> list[int]:
        """The first `limit` of `indices` whose symbols are live."""
        if self.alive.all():
            return indices[:limit].tolist()
        return indices[self.alive[indices]][:limit].tolist()

    def _by_rank(self, indices: np.ndarray, count: int | None = None) -> list[int]:
        """The live ones of `indices` in rank order; with `count`, only the first `count` (only those are sorted)."""
        indices = indices[self.alive[indices]]
        if count is not None and len(indices) > count:
            indices = indices[np.argpartition(self.rank[indices], count - 1)[:count]]
        return indices[np.argsort(self.rank[indices], kind="stable")].tolist()

    def _in_order(self, needle: str) -> list[int]:
        """The live symbols whose haystack holds the needle's characters in order, in rank order."""
        wanted = _mask(needle)
        indices = np.flatnonzero(((self.masks & wanted) == wanted) & self.alive)
        if len(needle) > 1 or not (needle.isascii() and needle.isalnum()):  # one letter or digit: the mask says it
            matches = _in_order(needle)
            haystacks = self.haystacks
            indices = np.array([i for i in indices.tolist() if matches(haystacks[i])], dtype=np.int64)
        return self._by_rank(indices)

    def entry(self, index: int) -> _Entry:
        entry = self.entries[index]
        if entry is None:
            entry = self.entries[index] = _entry(self.symbols[index])
        return entry


@dataclass
class _Sorted:
    """Lowercased names in sorted order with the symbol index of each: a prefix is two bisections away."""

    texts: list[str]
    indices: np.ndarray

    @staticmethod
    def of(texts: list[str]) -> _Sorted:
        order = sorted(range(len(texts)), key=texts.__getitem__)
        return _Sorted([texts[i] for i in order], np.array(order, dtype=np.int64))

    def equal(self, text: str) -> np.ndarray:
        return self.indices[bisect.bisect_left(self.texts, text) : bisect.bisect_right(self.texts, text)]

    def starting(self, prefix: str) -> np.ndarray:
        """The indices of the texts that start with `prefix` (it included)."""
        start = bisect.bisect_left(self.texts, prefix)
        last = ord(prefix[-1])
        if last == sys.maxunicode:  # no character sorts after it: test each from the start
            end = start
            while end < len(self.texts) and self.texts[end].startswith(prefix):
                end += 1
        else:
            end = bisect.bisect_left(self.texts, prefix[:-1] + chr(last + 1), start)
        return self.indices[start:end]


def _lowered(texts: Iterable[str]) -> list[str]:
    """Each text in lower case, the text itself where it is already: most names are, and a lowered copy of each
    would cost a million symbols 60 MB."""
    return [text if (lower := text.lower()) == text else lower for text in texts]


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
