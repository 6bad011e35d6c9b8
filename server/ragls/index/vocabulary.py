"""Term ids shared by the streams of one session, and the saved terms of a restart kept packed.

A vocabulary made by indexing is a dict. One loaded from a snapshot keeps its terms as the one array of bytes
they were saved as, with a hash of each term sorted beside it: a term is found by bisection and a comparison
of bytes, and no Python string exists for the millions of terms nobody asks for (the Linux kernel has 5.6
million; as a dict they cost about 500 MB at each restart). The hash is CRC-32, the same in every process, so
the snapshot saves the sorted hashes (`saved_lookup`, computed by its writer outside the index lock) and a
restart maps them instead of hashing and sorting every term again (4.9 s on the Linux kernel).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np

from ragls.index.tokenize import TERM_SEPARATOR, join_terms

_SEPARATOR = TERM_SEPARATOR.encode()
# Terms are hashed a block at a time, so the bytes objects of only one block exist at once.
_HASH_BLOCK_TERMS = 1 << 16
# The names of the saved lookup's arrays (`saved_lookup`), beside the saved terms.
LOOKUP_ARRAYS = ("term_hashes", "term_order")
# Where each saved term starts, saved beside them too (a snapshot of format 4 has none: they are found again).
STARTS_ARRAY = "term_starts"


def _hash(data: bytes) -> int:
    return zlib.crc32(data)


def saved_lookup(saved: np.ndarray) -> dict[str, np.ndarray]:
    """The sorted hashes of saved terms and the term id of each, and where each term starts, to save beside them
    (`LOOKUP_ARRAYS`, `STARTS_ARRAY`): a restart then need not read all the terms (145 MB on the Linux kernel)."""
    data = np.ascontiguousarray(saved, dtype=np.uint8)
    starts = _starts(data)
    narrow = np.uint32 if len(data) + 1 <= np.iinfo(np.uint32).max else np.int64
    return {**_lookup(data, starts), STARTS_ARRAY: starts.astype(narrow)}


def _lookup(data: np.ndarray, starts: np.ndarray) -> dict[str, np.ndarray]:
    hashes = _hashes(data, starts)
    order = np.argsort(hashes, kind="stable").astype(np.int32 if len(hashes) < 2**31 else np.int64)
    return {"term_hashes": hashes[order], "term_order": order}


def _starts(data: np.ndarray) -> np.ndarray:
    """Term t is data[starts[t] : starts[t + 1] - 1]: each start follows a separator, the last past the end."""
    if len(data) == 0:
        return np.zeros(1, dtype=np.int64)
    separators = np.flatnonzero(data == _SEPARATOR[0])
    return np.concatenate([[0], separators + 1, [len(data) + 1]]).astype(np.int64)


def _fit(starts: np.ndarray, data: np.ndarray) -> bool:
    """Whether saved starts can be those of these terms: from 0 to past the end, each after the last. A start that
    is still wrong only fails to find its term (`get` compares the term's bytes)."""
    if starts.ndim != 1 or len(starts) == 0 or starts.dtype.kind not in "iu":
        return False
    return int(starts[0]) == 0 and int(starts[-1]) == len(data) + 1 and bool(np.all(starts[1:] > starts[:-1]))


class _SavedTerms:
    """Terms saved joined by the separator, id = position, looked up by their sorted hashes."""

    __slots__ = ("_bytes", "_hashes", "_order", "_starts")

    def __init__(self, saved: np.ndarray, lookup: Mapping[str, np.ndarray] | None = None) -> None:
        """`lookup`: the saved `saved_lookup` of these terms, checked for shape; computed here when absent."""
        data = np.ascontiguousarray(saved, dtype=np.uint8)
        saved_starts = lookup.get(STARTS_ARRAY) if lookup is not None else None
        starts = saved_starts if saved_starts is not None and _fit(saved_starts, data) else _starts(data)
        self._bytes, self._starts = data, starts
        if lookup is None:
            lookup = _lookup(data, self._starts)
        self._hashes, self._order = lookup["term_hashes"], lookup["term_order"]
        n_terms = len(self._starts) - 1
        if not (
            len(self._hashes) == len(self._order) == n_terms
            and (n_terms == 0 or (int(self._order.min()) >= 0 and int(self._order.max()) < n_terms))
            and bool(np.all(self._hashes[1:] >= self._hashes[:-1]))
            and (n_terms == 0 or int(np.bincount(self._order, minlength=n_terms).max()) == 1)
        ):
            raise ValueError("the saved terms and their lookup do not fit together")
        same = np.flatnonzero(self._hashes[1:] == self._hashes[:-1])
        if any(self.term_bytes(int(self._order[i])) == self.term_bytes(int(self._order[i + 1])) for i in same):
            raise ValueError("a saved vocabulary holds a term twice")

    def __len__(self) -> int:
        return len(self._starts) - 1

    def term_bytes(self, term_id: int) -> bytes:
        return self._bytes[self._starts[term_id] : self._starts[term_id + 1] - 1].tobytes()

    def get(self, term: str) -> int | None:
        data = term.encode()
        wanted = _hash(data)
        position = int(np.searchsorted(self._hashes, np.uint32(wanted)))  # a Python int would copy them as int64
        while position < len(self._hashes) and int(self._hashes[position]) == wanted:
            term_id = int(self._order[position])
            if self.term_bytes(term_id) == data:
                return term_id
            position += 1
        return None

    def get_many(self, terms: Sequence[str]) -> list[int | None]:
        """`get` of each term, hashed and looked up at once (a first index asks for a million at a time): the first
        term of each hash is checked here, and only where its bytes differ is the rest of the run searched."""
        if not terms or not len(self._hashes):
            return [None] * len(terms)
        encoded = [term.encode() for term in terms]
        wanted = np.fromiter(map(_hash, encoded), dtype=np.uint32, count=len(encoded))
        positions = np.minimum(np.searchsorted(self._hashes, wanted), len(self._hashes) - 1)
        candidates = self._order[positions]
        hit = (self._hashes[positions] == wanted).tolist()
        starts, ends = self._starts[candidates].tolist(), (self._starts[candidates + 1] - 1).tolist()
        data = self._bytes
        found: list[int | None] = []
        for term, term_bytes, is_hit, candidate, start, end in zip(
            terms, encoded, hit, candidates.tolist(), starts, ends, strict=True
        ):
            if not is_hit:
                found.append(None)
            elif data[start:end].tobytes() == term_bytes:
                found.append(candidate)
            else:  # another term of the same hash comes first
                found.append(self.get(term))
        return found

    def packed(self) -> np.ndarray:
        return self._bytes


def _hashes(data: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """`_hash` of every saved term, in id order."""
    n_terms = len(starts) - 1
    hashes = np.empty(n_terms, dtype=np.uint32)
    for first in range(0, n_terms, _HASH_BLOCK_TERMS):
        last = min(first + _HASH_BLOCK_TERMS, n_terms)
        terms = data[starts[first] : starts[last] - 1].tobytes().split(_SEPARATOR)
        hashes[first:last] = np.fromiter(map(_hash, terms), dtype=np.uint32, count=last - first)
    return hashes


# A first index adds millions of terms (the Linux kernel: 5.6 million, 0.82 GB as a dict of strings to ids). Once the
# dict holds this many, every term is packed as a saved vocabulary's are (`_SavedTerms`: 0.15 GB for the kernel's),
# and the dict starts again, a cache of the terms asked for since.
PACK_TERMS = 1 << 20


class Vocabulary:
    """Term ids shared by the streams of one session: each term is in one table, where every stream held its
    own (the Linux kernel has about 5.6 million terms).

    Append-only: a term keeps its id, so a staged copy of an index adds to it while readers read, and a term no
    document holds any more costs its entry and ranks nothing (its document frequency is 0). One writer at a
    time adds terms (commits are serialized); readers and `export` only look, each step atomic under the GIL.
    After `load`, the saved terms stay packed (`_SavedTerms`); `_known` holds the terms added since and those
    of the saved ones an edit asked for, and `_added` the added ones in id order. A first index packs its terms
    the same way each time the dict reaches `PACK_TERMS`, so that it never holds millions of them as strings.
    """

    __slots__ = ("_added", "_known", "_saved")

    def __init__(self) -> None:
        self._saved: _SavedTerms | None = None
        self._known: dict[str, int] = {}
        self._added: list[str] = []

    def __len__(self) -> int:
        return len(self._known) if self._saved is None else len(self._saved) + len(self._added)

    def get(self, term: str) -> int | None:
        """A term's id, or None when no document ever held it."""
        found = self._known.get(term)
        if found is None and self._saved is not None:
            found = self._saved.get(term)
        return found

    def ids_of(self, terms: Sequence[str]) -> list[int]:
        """Each term's id, new terms taking the next ones; past `PACK_TERMS` held in the dict, they are packed."""
        known = self._known
        if self._saved is None:
            # setdefault hands a new term the next id (the dict's size before it is inserted).
            ids = [known.setdefault(term, len(known)) for term in terms]
        else:
            found_ids = list(map(known.get, terms))
            if None in found_ids:
                self._add_missing(terms, found_ids)
            ids = cast("list[int]", found_ids)
        if len(self._known) >= PACK_TERMS:
            self.load(self.export())
        return ids

    def _add_missing(self, terms: Sequence[str], found_ids: list[int | None]) -> None:
        """Fill in the ids the dict lacks: a saved term's, kept in the dict from now on, or the next id."""
        assert self._saved is not None
        missing = list(dict.fromkeys(term for term, found in zip(terms, found_ids, strict=True) if found is None))
        known, added = self._known, self._added
        for term, saved_id in zip(missing, self._saved.get_many(missing), strict=True):
            if saved_id is None:
                saved_id = len(self)
                added.append(term)
            known[term] = saved_id
        for position, found in enumerate(found_ids):
            if found is None:
                found_ids[position] = known[terms[position]]

    def export(self) -> np.ndarray:
        if self._saved is None:
            # str.join takes the keys in one step, so a term added meanwhile is either all in or not at all.
            return np.frombuffer(join_terms(self._known).encode(), dtype=np.uint8).copy()
        # One copy of the saved bytes (145 MB on the Linux kernel), not one for bytes and another for the array.
        saved, added = self._saved.packed(), join_terms(self._added).encode()
        if not added:
            return saved.copy()
        if len(saved) == 0:
            return np.frombuffer(added, dtype=np.uint8).copy()
        return np.concatenate([saved, np.frombuffer(_SEPARATOR + added, dtype=np.uint8)])

    def load(self, saved: np.ndarray, lookup: Mapping[str, np.ndarray] | None = None) -> None:
        """Become a saved vocabulary (ids by position), its terms kept packed; `lookup` is its `saved_lookup`
        where the snapshot has it."""
        self._saved, self._known, self._added = _SavedTerms(saved, lookup), {}, []

    def clear(self) -> None:
        self._saved, self._known, self._added = None, {}, []
