"""An incremental inverted index built in bulk: a forward index is the truth, postings are derived.

Adding a document only appends its term ids and counts to flat arrays. `refresh()` (the end of
every batch of changes) then either folds the new documents into a small per-term tail, so a
one-file change costs what changed, or rebuilds the whole inverted index with one numpy sort,
dropping dead slots on the way. Everything is a few flat arrays, so it saves and loads in bulk; the
forward index is in growable columns (`columns.py`), so a staged copy, a snapshot's export and a loaded
snapshot share its arrays instead of copying them.
"""

from __future__ import annotations

import itertools
import operator
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from ragls.index.columns import IN_MEMORY, ArraySpace, Column, room_for
from ragls.index.tokenize import TermCounts, TermTable
from ragls.index.vocabulary import LOOKUP_ARRAYS, STARTS_ARRAY, Vocabulary
from ragls.model import Document

_TAIL_MIN_POSTINGS = 4096
_TAIL_SHARE = 0.25
_COMPACT_MIN_DEAD = 2048
_COMPACT_DEAD_SHARE = 0.3
# Document frequencies are counted over the whole vocabulary (bincount) when the new postings are at least an
# eighth of it, else term by term where they are (a one-file edit of the Linux kernel: 5.6 million terms).
_BINCOUNT_SHARE = 8
# A rebuild sorts this many postings at a time (about 30 bytes of temporaries each) and counts terms over this
# many (8 bytes each), whatever the size of the index.
SORT_CHUNK_POSTINGS = 1 << 18
COUNT_CHUNK_POSTINGS = 1 << 22
# Term frequencies are held as this type, in the forward index and in the postings: two bytes a posting where
# float32 took four (600 MB of the Linux kernel's three streams). A count past its top is held as the top: BM25
# has long saturated there, and a chunk that repeats a term 65,535 times is no chunk of code.
COUNT_TYPE = np.uint16
_COUNT_MAX = int(np.iinfo(COUNT_TYPE).max)
# In a space that can take pages back (`ArraySpace`), the forward columns let it every this many postings added.
RELEASE_POSTINGS = 1 << 23
# ... and a rebuild lets the forward pages it has read go every this many ranges of slots (`SORT_CHUNK_POSTINGS`).
_RELEASE_RANGES = 16


class Postings:
    """Term -> (slots, term frequencies), with per-slot lengths, norms, liveness and documents.

    Slots `[0, base_end)` are in the sorted base arrays, `[base_end, indexed_end)` in the tail;
    slots past `indexed_end` wait for `refresh()`, which every writer calls before readers return.
    Term ids come from a `Vocabulary`: its own, or one shared with other streams (which then save it once,
    with the index that owns it).
    """

    def __init__(self, vocabulary: Vocabulary | None = None) -> None:
        self.vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        self.owns_vocabulary = vocabulary is None
        self._space = IN_MEMORY
        self._reset()

    def clear(self) -> None:
        """Forget every document; a vocabulary shared with other streams keeps its terms."""
        self._reset()
        if self.owns_vocabulary:
            self.vocabulary.clear()

    def _reset(self) -> None:
        self.documents: list[Document | None] = []
        self.slot_of: dict[str, int] = {}
        # `documents` and `slot_of` are another index's too (a load of streams over the same slots): copied
        # before the first change here.
        self._lists_shared = False
        self._forward_offsets = Column(np.int64, [0], self._space)
        self._forward_terms = Column(np.int32, (), self._space)
        self._forward_counts = Column(COUNT_TYPE, (), self._space)
        self._unreleased = 0  # postings added since the forward columns last let their pages go
        self._alive = bytearray()
        self._lengths = np.zeros(0, dtype=np.float32)
        self._norms = np.zeros(0, dtype=np.float32)
        self._document_frequency = np.zeros(0, dtype=np.int32)
        self._base_offsets = np.zeros(1, dtype=np.int64)
        self._base_slots = np.zeros(0, dtype=np.int32)
        self._base_frequencies = np.zeros(0, dtype=COUNT_TYPE)
        self._base_end = 0
        self._tail: dict[int, tuple[list[int], list[float]]] = {}
        self._tail_postings = 0
        self._indexed_end = 0
        self.total_length = 0.0
        self.n_dead = 0
        # What every query of an unchanged index computes alike, kept with what it was computed from.
        self._normalizer_memo: tuple[np.ndarray, tuple[float, int, float, float], np.ndarray] | None = None
        self._dead_memo: tuple[bytearray, tuple[int, int], np.ndarray] | None = None

    @property
    def n_alive(self) -> int:
        return len(self.slot_of)

    @property
    def n_slots(self) -> int:
        return len(self.documents)

    def copy(self) -> Postings:
        """An independent copy to change while readers keep reading this one (then `swap_in` it).

        Arrays that writers only ever replace or append to are shared; those changed in place are copied. The
        vocabulary is shared too: terms the copy adds are new ids nobody else uses yet.
        """
        other = Postings.__new__(Postings)
        other.__dict__.update(self.__dict__)
        other.documents = list(self.documents)
        other.slot_of = dict(self.slot_of)
        other._lists_shared = False
        other._forward_offsets = self._forward_offsets.fork()
        other._forward_terms = self._forward_terms.fork()
        other._forward_counts = self._forward_counts.fork()
        other._alive = bytearray(self._alive)
        other._document_frequency = self._document_frequency.copy()
        other._tail = {term: (list(slots), list(counts)) for term, (slots, counts) in self._tail.items()}
        return other

    def use_space(self, space: ArraySpace) -> None:
        """Where the arrays made from now on live (a first index's, in files: `ArraySpace`)."""
        self._space = space
        for column in (self._forward_offsets, self._forward_terms, self._forward_counts):
            column.use_space(space)

    def release(self) -> None:
        """Let the space take back the pages of the forward columns and the base postings (read the same after)."""
        for column in (self._forward_offsets, self._forward_terms, self._forward_counts):
            column.release()
        for array in (self._base_offsets, self._base_slots, self._base_frequencies):
            self._space.release(array)
        self._unreleased = 0

    def swap_in(self, other: Postings) -> None:
        """Become `other` in place, in constant time: views that share this object see the change."""
        self.__dict__.update(other.__dict__)

    def get(self, document_id: str) -> Document | None:
        slot = self.slot_of.get(document_id)
        return None if slot is None else self.documents[slot]

    def _own_lists(self) -> None:
        if self._lists_shared:
            self.documents, self.slot_of = list(self.documents), dict(self.slot_of)
            self._lists_shared = False

    # ------------------------------------------------------------------ writing

    def add(self, document: Document, terms: Iterable[str] | Mapping[str, int] | TermCounts) -> None:
        """Append a document under its terms (or term counts); an existing document with that id is replaced."""
        if document.id in self.slot_of:
            self.remove(document.id)
        self._own_lists()
        if not isinstance(terms, TermCounts):
            terms = (
                TermCounts(tuple(terms), tuple(terms.values())) if isinstance(terms, Mapping) else TermCounts.of(terms)
            )
        self._forward_terms.extend(self.vocabulary.ids_of(terms.terms))
        self._forward_counts.extend(np.minimum(terms.counts, _COUNT_MAX))
        self._forward_offsets.append(len(self._forward_terms))
        self.slot_of[document.id] = len(self.documents)
        self.documents.append(document)
        self._alive.append(1)
        self._unreleased += len(terms.terms)
        if self._unreleased >= RELEASE_POSTINGS:
            self.release()

    def remove(self, document_id: str) -> Document | None:
        """Forget a document: its slot goes dead and, once counted, its terms' frequencies drop."""
        if document_id not in self.slot_of:
            return None
        self._own_lists()
        slot = self.slot_of.pop(document_id)
        document = self.documents[slot]
        if slot < self._indexed_end:
            offsets = self._forward_offsets.values()
            self._document_frequency[self._forward_terms.values()[offsets[slot] : offsets[slot + 1]]] -= 1
            self.total_length -= float(self._lengths[slot])
        self._alive[slot] = 0
        self.documents[slot] = None
        self.n_dead += 1
        return document

    def refresh(self) -> None:
        """Count the documents added since the last refresh, then tail them or rebuild everything."""
        start, end = self._indexed_end, self.n_slots
        if start < end:
            self._count_new_slots(start, end)
        offsets = self._forward_offsets.values()
        new_postings = int(offsets[end] - offsets[start])
        tail_limit = max(_TAIL_MIN_POSTINGS, _TAIL_SHARE * len(self._base_slots))
        too_dead = self.n_dead >= _COMPACT_MIN_DEAD and self.n_dead > _COMPACT_DEAD_SHARE * self.n_slots
        if self._tail_postings + new_postings > tail_limit or too_dead:
            self.rebuild()
        elif start < end:
            self._extend_tail(start, end)

    def rebuild(self) -> None:
        """Drop dead slots and sort every posting into the base arrays: one pass of numpy work."""
        if self._indexed_end < self.n_slots:
            self._count_new_slots(self._indexed_end, self.n_slots)
        terms, counts = self._forward_terms.values(), self._forward_counts.values()
        sizes = np.diff(self._forward_offsets.values())
        if self.n_dead:
            alive = self.alive()
            keep = np.repeat(alive, sizes)
            self._forward_terms = _kept(terms, keep, self._space)
            self._forward_counts = _kept(counts, keep, self._space)
            terms, counts, sizes = self._forward_terms.values(), self._forward_counts.values(), sizes[alive]
            del keep
            live = [document for document in self.documents if document is not None]
            self.slot_of = {document.id: slot for slot, document in enumerate(live)}
            self.documents = list(live)
            self._lists_shared = False
            self._lengths, self._norms = self._lengths[alive], self._norms[alive]
            offsets = self._space.empty(len(sizes) + 1 + room_for(len(sizes) + 1), np.int64)
            offsets[0] = 0
            np.cumsum(sizes, out=offsets[1 : len(sizes) + 1])
            self._forward_offsets = Column.adopt(offsets, len(sizes) + 1, self._space)
            self._alive = bytearray(b"\x01") * len(self.documents)
            self.n_dead = 0
        offsets = self._forward_offsets.values()
        frequency, self._base_offsets, self._base_slots, self._base_frequencies = inverted(
            terms, counts, offsets, len(self.vocabulary), space=self._space
        )
        self._document_frequency = frequency.astype(np.int32)
        self._base_end = self._indexed_end = self.n_slots
        self._tail, self._tail_postings = {}, 0
        self.total_length = float(self._lengths.sum(dtype=np.float64))
        self.release()

    def _count_new_slots(self, start: int, end: int) -> None:
        """Lengths, cosine norms and document frequencies of slots `[start, end)`, in bulk.

        A range of slots (about `COUNT_CHUNK_POSTINGS` postings) at a time, in float64: the temporaries are about
        21 bytes for each posting of a range, where the whole of a first index at once held them for every
        posting (over 1.5 GB for the Linux kernel's knowledge base, at the peak of its first index).
        """
        offsets = self._forward_offsets.values()
        all_terms, all_counts = self._forward_terms.values(), self._forward_counts.values()
        alive = np.frombuffer(self._alive, dtype=bool, count=end - start, offset=start).copy()
        lengths, norms = np.empty(end - start, dtype=np.float32), np.empty(end - start, dtype=np.float32)
        for first, last in _slot_ranges(offsets[start : end + 1], COUNT_CHUNK_POSTINGS):
            low, high = int(offsets[start + first]), int(offsets[start + last])
            range_offsets = offsets[start + first : start + last + 1] - low
            counts = all_counts[low:high].astype(np.float64)
            range_lengths = _segment_sums(counts, range_offsets)
            weights = np.maximum(counts, 1.0, out=counts)
            np.log(weights, out=weights)
            weights += 1.0
            weights *= weights
            range_norms = np.sqrt(_segment_sums(weights, range_offsets))
            del counts, weights
            range_norms[range_norms == 0.0] = 1.0
            lengths[first:last], norms[first:last] = range_lengths, range_norms
            range_alive = alive[first:last]
            self._count_documents(all_terms[low:high][np.repeat(range_alive, np.diff(range_offsets))])
            self.total_length += float(range_lengths[range_alive].sum())
            for column in (self._forward_terms, self._forward_counts):
                column.release()  # read through: in a space that takes pages back, they go (no-op in memory)
        self._lengths = np.concatenate([self._lengths, lengths])
        self._norms = np.concatenate([self._norms, norms])
        self._indexed_end = end

    def _count_documents(self, terms: np.ndarray) -> None:
        """Add one to the document frequency of each term (a document's terms are distinct), growing the counts
        to the vocabulary. An edit's few thousand terms are counted where they are, not over every term."""
        n_terms = len(self.vocabulary)
        if len(terms) * _BINCOUNT_SHARE >= n_terms:
            frequency = np.bincount(terms, minlength=n_terms).astype(np.int32)
            frequency[: len(self._document_frequency)] += self._document_frequency
            self._document_frequency = frequency
            return
        if len(self._document_frequency) < n_terms:
            grown = np.zeros(n_terms, dtype=np.int32)
            grown[: len(self._document_frequency)] = self._document_frequency
            self._document_frequency = grown
        found, counts = np.unique(terms, return_counts=True)
        self._document_frequency[found] += counts.astype(np.int32)

    def _extend_tail(self, start: int, end: int) -> None:
        """Append the postings of slots `[start, end)` to the tail, term by term (a stable sort by term keeps
        each term's slots in order): Python works once a term, not once a posting (a 2,000-file change on the
        Linux kernel holds millions of postings)."""
        offsets = self._forward_offsets.values()[start : end + 1]
        first, last = int(offsets[0]), int(offsets[-1])
        if first == last:
            return
        order, run_starts, run_terms = _term_runs(self._forward_terms.values()[first:last])
        slots = np.repeat(np.arange(start, end, dtype=np.int64), np.diff(offsets))[order].tolist()
        counts = self._forward_counts.values()[first:last][order].tolist()
        bounds = [*run_starts.tolist(), len(order)]
        tail = self._tail
        for term_id, run_start, run_end in zip(run_terms.tolist(), bounds, bounds[1:], strict=False):
            entry = tail.get(term_id)
            if entry is None:
                entry = tail[term_id] = ([], [])
            entry[0].extend(slots[run_start:run_end])
            entry[1].extend(counts[run_start:run_end])
        self._tail_postings += last - first

    def ensure_room(self) -> None:
        """Room past the forward columns' ends for the next edits, so that none of them moves a column."""
        for column in (self._forward_offsets, self._forward_terms, self._forward_counts):
            column.ensure_room()

    # ------------------------------------------------------------------ reading

    def has_term(self, term: str) -> bool:
        """Whether a live document holds the term."""
        term_id = self.vocabulary.get(term)
        return term_id is not None and term_id < len(self._document_frequency) and self._document_frequency[term_id] > 0

    def term_postings(self, term: str) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(slots, frequencies as float32, live document frequency) of a term, or None when no live document has
        it."""
        term_id = self.vocabulary.get(term)
        if term_id is None or term_id >= len(self._document_frequency) or self._document_frequency[term_id] <= 0:
            return None
        if term_id + 1 < len(self._base_offsets):
            first, last = self._base_offsets[term_id], self._base_offsets[term_id + 1]
            slots, frequencies = self._base_slots[first:last], self._base_frequencies[first:last].astype(np.float32)
        else:
            slots, frequencies = self._base_slots[:0], np.zeros(0, dtype=np.float32)
        tail = self._tail.get(term_id)
        if tail is not None:
            slots = np.concatenate([slots, np.array(tail[0], dtype=np.int32)])
            frequencies = np.concatenate([frequencies, np.array(tail[1], dtype=np.float32)])
        return slots, frequencies, int(self._document_frequency[term_id])

    def lengths(self) -> np.ndarray:
        return self._lengths

    def log_norms(self) -> np.ndarray:
        """Per-slot Euclidean norm of the document's (1 + log tf) weights, for cosine scoring."""
        return self._norms

    def alive(self) -> np.ndarray:
        return np.frombuffer(self._alive, dtype=bool).copy()

    def dead_slots(self) -> np.ndarray:
        """The slots of removed documents, whose scores every ranking zeroes: computed once per change, not per
        query (a copy and a negation of 865,000 flags on the Linux kernel, for each stream)."""
        key = (len(self._alive), self.n_dead)
        memo = self._dead_memo
        if memo is not None and memo[0] is self._alive and memo[1] == key:
            return memo[2]
        dead = np.flatnonzero(np.frombuffer(self._alive, dtype=np.uint8) == 0)
        self._dead_memo = (self._alive, key, dead)
        return dead

    def bm25_normalizer(self, k1: float, b: float) -> np.ndarray:
        """k1 * (1 - b + b * length / average length) for every slot: the same for every query until the
        index changes (1.3 ms a stream a query on the Linux kernel). Lengths are only ever replaced, never
        written in place, so the array's identity and the totals say when it is stale."""
        key = (self.total_length, self.n_alive, k1, b)
        memo = self._normalizer_memo
        if memo is not None and memo[0] is self._lengths and memo[1] == key:
            return memo[2]
        average_length = max(self.total_length / max(self.n_alive, 1), 1e-9)
        normalizer = k1 * (1.0 - b + b * self._lengths / average_length)
        self._normalizer_memo = (self._lengths, key, normalizer)
        return normalizer

    # ------------------------------------------------------------------ saving

    def export(self) -> dict[str, np.ndarray]:
        """Every array that defines the index (the documents are the caller's), for a snapshot; the terms only
        when the vocabulary is this index's own."""
        arrays = {"terms": self.vocabulary.export()} if self.owns_vocabulary else {}
        return arrays | {
            # Views: these columns are only appended to, past what the views see, or replaced.
            "forward_offsets": self._forward_offsets.values(),
            "forward_terms": self._forward_terms.values(),
            "forward_counts": self._forward_counts.values(),
            "alive": np.frombuffer(self._alive, dtype=np.int8).copy(),
            # These arrays are only ever replaced, never written in place, so sharing them is safe.
            "lengths": self._lengths,
            "norms": self._norms,
            "document_frequency": self._document_frequency.copy(),
            "base_offsets": self._base_offsets,
            "base_slots": self._base_slots,
            "base_frequencies": self._base_frequencies,
            "base_end": np.array([self._base_end, self.n_dead], dtype=np.int64),
        }

    def load(
        self, arrays: Mapping[str, np.ndarray], documents: Sequence[Document | None], like: Postings | None = None
    ) -> None:
        """Become the index `export` described, over the same documents in slot order (None for dead slots).

        Loads in place, since views (a BM25 ranking of the knowledge base) share this object. An index over a
        shared vocabulary loads after the one that owns it, whose load brought the terms. `like`: an index
        loaded over the very same slots, whose documents and id -> slot map this one shares until either
        changes (on the Linux kernel, making three maps of 865,000 ids took 2.1 s of the load).
        """
        if self.owns_vocabulary != ("terms" in arrays):
            raise ValueError("the saved index and this one keep their terms differently")
        if self.owns_vocabulary:
            lookup = {name: arrays[name] for name in (*LOOKUP_ARRAYS, STARTS_ARRAY) if name in arrays}
            self.vocabulary.load(arrays["terms"], lookup if all(name in lookup for name in LOOKUP_ARRAYS) else None)
        n_terms = len(self.vocabulary)
        postings = Postings(self.vocabulary)
        postings.owns_vocabulary = self.owns_vocabulary
        if like is not None and same_documents(like.documents, documents):
            postings.documents, postings.slot_of = like.documents, like.slot_of
            postings._lists_shared = like._lists_shared = True
        else:
            postings.documents = list(documents)
            postings.slot_of = {d.id: slot for slot, d in enumerate(postings.documents) if d is not None}
        # A forward array may run past what it holds (offsets: a slot and one; terms and counts: the last
        # offset): the rest is room for the appends of later edits.
        postings._forward_offsets = _column(np.int64, arrays["forward_offsets"], len(documents) + 1)
        held = int(postings._forward_offsets.values()[-1])
        postings._forward_terms = _column(np.int32, arrays["forward_terms"], held)
        postings._forward_counts = _column(COUNT_TYPE, _counts(arrays["forward_counts"]), held)
        postings._alive = bytearray(np.ascontiguousarray(arrays["alive"], dtype=np.int8).tobytes())
        postings._lengths = arrays["lengths"].astype(np.float32, copy=False)
        postings._norms = arrays["norms"].astype(np.float32, copy=False)
        postings._document_frequency = arrays["document_frequency"].astype(np.int32, copy=False)
        postings._base_offsets = arrays["base_offsets"].astype(np.int64, copy=False)
        postings._base_slots = arrays["base_slots"].astype(np.int32, copy=False)
        postings._base_frequencies = _counts(arrays["base_frequencies"])
        postings._base_end, postings.n_dead = (int(v) for v in arrays["base_end"])
        n_slots = len(postings.documents)
        base_slots = postings._base_slots
        forward_terms = postings._forward_terms.values()
        # The forward columns' lengths were fixed above (`_column` refuses arrays too short for them).
        if not (
            len(postings._alive) == len(postings._lengths) == len(postings._norms) == n_slots
            # A stream counts the terms the vocabulary had when it last changed; terms new since are others'.
            and len(postings._document_frequency) <= n_terms
            and 1 <= len(postings._base_offsets) <= len(postings._document_frequency) + 1  # new terms: tail only
            and postings._base_offsets[-1] == len(base_slots) == len(postings._base_frequencies)
            and (len(base_slots) == 0 or int(base_slots.max()) < postings._base_end <= n_slots)
            and (
                len(forward_terms) == 0
                or (int(forward_terms.min()) >= 0 and int(forward_terms.max()) < len(postings._document_frequency))
            )
            and (n_slots == 0 or max(postings._alive) <= 1)
        ):
            raise ValueError("the saved index arrays do not fit together")
        postings._indexed_end = n_slots
        alive = postings.alive()
        postings.total_length = float(postings._lengths[alive].sum(dtype=np.float64))
        postings._extend_tail(postings._base_end, n_slots)
        self.swap_in(postings)


TermsOf = Callable[[Document, TermTable | None], Iterable[str] | TermCounts]


class StagedPostings:
    """A change built on a copy of an index while readers keep reading the index; `install` swaps it in.

    It may come in parts (a full run adds each file's documents as the file is read, so its term counts are never
    all held at once), then `finish` counts and sorts what was added, readers still carrying on, and `install`
    takes constant time. Only one writer stages at a time, and nothing else changes the index meanwhile (the index
    state serializes its commits); until `install` the index is as it was, whatever fails.
    """

    def __init__(
        self, live: Postings, lock: threading.RLock, terms_of: TermsOf, space: ArraySpace | None = None
    ) -> None:
        """`space`: where the copy's new arrays live, and the index's once installed (`ArraySpace`)."""
        self._live, self._lock, self._terms_of = live, lock, terms_of
        self._copy = live.copy()
        if space is not None:
            self._copy.use_space(space)

    def replace(self, remove_ids: Collection[str], add: Sequence[Document], terms: TermTable | None = None) -> None:
        """Drop then add, on the copy; `terms` may carry each added document's counts (each taken out as used)."""
        for document_id in remove_ids:
            self._copy.remove(document_id)
        for document in add:
            self._copy.add(document, self._terms_of(document, terms))

    def finish(self) -> None:
        self._copy.refresh()

    def install(self) -> None:
        with self._lock:
            self._live.swap_in(self._copy)


def same_documents(documents: Sequence[Document | None], others: Sequence[Document | None]) -> bool:
    """The very same document objects in the same slots (no comparison by id: identity is what is shared)."""
    return len(documents) == len(others) and all(map(operator.is_, documents, others))


def inverted(
    terms: np.ndarray,
    counts: np.ndarray,
    offsets: np.ndarray,
    n_terms: int,
    chunk: int = SORT_CHUNK_POSTINGS,
    space: ArraySpace = IN_MEMORY,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The forward index inside out: (frequency, offsets, slots, counts) of each term's postings in slot order.

    The order a stable sort of every posting by term gives, built a range of slots (about `chunk` postings) at
    a time: each range is sorted and scattered into place behind a cursor per term, so the temporaries are
    about 30 bytes for each posting of a range, where one sort of everything held 16 bytes for each posting
    of the index (a Linux-sized one has 72 million in the knowledge base alone).

    The arrays it returns are `space`'s. Where it gives pages back (`ArraySpace.pass_postings`), the terms are
    taken a range of ids at a time, each a pass over the forward index that writes one stretch of the postings,
    so that only that stretch, not every page of the result, is held before it is released.
    """
    frequency = np.zeros(n_terms, dtype=np.int64)
    for start in range(0, len(terms), COUNT_CHUNK_POSTINGS):  # bincount copies its input as int64
        frequency += np.bincount(terms[start : start + COUNT_CHUNK_POSTINGS], minlength=n_terms)
    base_offsets = space.empty(n_terms + 1, np.int64)
    base_offsets[0] = 0
    np.cumsum(frequency, out=base_offsets[1:])
    cursor = base_offsets[:-1].copy()
    base_slots = space.empty(len(terms), np.int32)
    base_counts = space.empty(len(terms), counts.dtype)
    passes, ranges = _term_passes(base_offsets, space.pass_postings), _slot_ranges(offsets, chunk)
    for low, high in passes:
        for index, (first, last) in enumerate(ranges):
            if index % _RELEASE_RANGES == _RELEASE_RANGES - 1:  # a pass reads the forward index through once
                space.release(terms)
                space.release(counts)
            start, end = int(offsets[first]), int(offsets[last])
            if start == end:
                continue
            range_terms, range_counts = terms[start:end], counts[start:end]
            slots = np.repeat(np.arange(first, last, dtype=np.int32), np.diff(offsets[first : last + 1]))
            if len(passes) > 1:
                inside = (range_terms >= low) & (range_terms < high)
                range_terms, range_counts, slots = range_terms[inside], range_counts[inside], slots[inside]
                if not len(range_terms):
                    continue
            order, run_starts, run_terms = _term_runs(range_terms)
            run_lengths = np.diff(run_starts, append=len(order))
            # The i-th posting of the sorted range goes to its term's cursor plus its place in the term's run.
            destinations = np.arange(len(order), dtype=np.int64)
            destinations -= np.repeat(run_starts - cursor[run_terms], run_lengths)
            base_slots[destinations] = slots[order]
            base_counts[destinations] = range_counts[order]
            cursor[run_terms] += run_lengths
        for array in (base_slots, base_counts, terms, counts):
            space.release(array)
    return frequency, base_offsets, base_slots, base_counts


def _term_passes(base_offsets: np.ndarray, pass_postings: int | None) -> list[tuple[int, int]]:
    """Ranges of term ids `[low, high)` whose postings add up to about `pass_postings` each (one for None)."""
    n_terms = len(base_offsets) - 1
    total = int(base_offsets[-1])
    if pass_postings is None or total <= pass_postings:
        return [(0, n_terms)]
    bounds = np.searchsorted(base_offsets, np.arange(pass_postings, total, pass_postings), side="left")
    edges = [0, *sorted({int(bound) for bound in bounds if 0 < bound < n_terms}), n_terms]
    return list(itertools.pairwise(edges))


def _term_runs(terms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A stable sort of postings by term (`order`, so each term keeps its slots in order), where each term's
    run starts in the sorted postings, and the term of each run. `terms` must not be empty."""
    order = np.argsort(terms, kind="stable")
    sorted_terms = terms[order]
    boundaries = np.empty(len(order), dtype=bool)
    boundaries[0] = True
    np.not_equal(sorted_terms[1:], sorted_terms[:-1], out=boundaries[1:])
    run_starts = np.flatnonzero(boundaries)
    return order, run_starts, sorted_terms[run_starts]


def _slot_ranges(offsets: np.ndarray, chunk: int) -> list[tuple[int, int]]:
    """Slot ranges `[first, last)` of at most `chunk` postings each (a slot with more is a range of its own)."""
    n_slots = len(offsets) - 1
    ranges, first = [], 0
    while first < n_slots:
        last = int(np.searchsorted(offsets, offsets[first] + chunk, side="right")) - 1
        last = min(max(last, first + 1), n_slots)
        ranges.append((first, last))
        first = last
    return ranges


def _kept(values: np.ndarray, keep: np.ndarray, space: ArraySpace) -> Column:
    """The values where `keep` is true, as a column of `space` with room to grow (`room_for`)."""
    size = int(np.count_nonzero(keep))
    buffer = space.empty(size + room_for(size), values.dtype)
    np.compress(keep, values, out=buffer[:size])
    return Column.adopt(buffer, size, space)


def _column(dtype: type, values: np.ndarray, size: int) -> Column:
    """A saved array as a growable column of its first `size` values, the rest its room, without a copy where
    it already has the column's type."""
    if values.ndim != 1:
        raise ValueError("a saved index array is not flat")
    if size > len(values):
        raise ValueError("the saved index arrays do not fit together")
    return Column.adopt(np.ascontiguousarray(values, dtype=dtype), size)


def _counts(values: np.ndarray) -> np.ndarray:
    """Saved term frequencies as `COUNT_TYPE`, without a copy where they are already (a snapshot written before
    counts were held so kept them as float32)."""
    if values.dtype == COUNT_TYPE:
        return values
    return np.clip(values, 0, _COUNT_MAX).astype(COUNT_TYPE)


def _segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of `values[offsets[i]:offsets[i + 1]]` for every i (empty segments sum to 0)."""
    cumulative = np.zeros(len(values) + 1, dtype=np.float64)
    np.cumsum(values, out=cumulative[1:])
    return cumulative[offsets[1:]] - cumulative[offsets[:-1]]
