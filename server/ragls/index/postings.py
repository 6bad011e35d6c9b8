"""An incremental inverted index: documents get slots, terms get growable posting arrays.

Removing a document only marks its slot dead and updates document frequencies, so a
one-file change costs what changed; dead slots are compacted away once they pile up.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping

import numpy as np

from ragls.index.tokenize import TermCounts
from ragls.model import Document

_COMPACT_MIN_DEAD = 2048
_COMPACT_DEAD_SHARE = 0.3


class Postings:
    """Term -> (slots, term frequencies), with per-slot lengths, liveness and documents."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._term_ids: dict[str, int] = {}
        self._slots: list[array] = []
        self._frequencies: list[array] = []
        self.document_frequency: list[int] = []
        self.documents: list[Document | None] = []
        self._slot_terms: list[tuple[array, array] | None] = []
        self._lengths = array("f")
        self._norms = array("f")
        self._alive = array("b")
        self.slot_of: dict[str, int] = {}
        self.total_length = 0.0
        self.n_dead = 0

    @property
    def n_alive(self) -> int:
        return len(self.slot_of)

    @property
    def n_slots(self) -> int:
        return len(self.documents)

    def add(self, document: Document, terms: Iterable[str] | Mapping[str, int] | TermCounts) -> None:
        """Index a document under its terms (or term counts); an existing document with that id is replaced."""
        if document.id in self.slot_of:
            self.remove(document.id)
        slot = len(self.documents)
        if not isinstance(terms, TermCounts):
            terms = (
                TermCounts(tuple(terms), tuple(terms.values())) if isinstance(terms, Mapping) else TermCounts.of(terms)
            )
        # The hot loop of indexing: locals and plain lists keep it tight.
        known, slots, frequencies, document_frequency = (
            self._term_ids,
            self._slots,
            self._frequencies,
            self.document_frequency,
        )
        term_ids = []
        for term, count in zip(terms.terms, terms.counts, strict=True):
            term_id = known.get(term)
            if term_id is None:
                term_id = known[term] = len(slots)
                slots.append(array("i"))
                frequencies.append(array("f"))
                document_frequency.append(0)
            slots[term_id].append(slot)
            frequencies[term_id].append(count)
            document_frequency[term_id] += 1
            term_ids.append(term_id)
        values = terms.counts
        length = float(sum(values))
        self.documents.append(document)
        self._slot_terms.append((array("i", term_ids), array("f", values)))
        self._lengths.append(length)
        self._norms.append(math.sqrt(sum((1.0 + math.log(count)) ** 2 for count in values)) or 1.0)
        self._alive.append(1)
        self.slot_of[document.id] = slot
        self.total_length += length

    def remove(self, document_id: str) -> Document | None:
        """Forget a document: its slot goes dead and its terms' frequencies drop."""
        slot = self.slot_of.pop(document_id, None)
        if slot is None:
            return None
        document = self.documents[slot]
        slot_terms = self._slot_terms[slot]
        if slot_terms is not None:
            for term_id in slot_terms[0].tolist():
                self.document_frequency[term_id] -= 1
        self.total_length -= self._lengths[slot]
        self._alive[slot] = 0
        self.documents[slot] = None
        self._slot_terms[slot] = None
        self.n_dead += 1
        return document

    def maybe_compact(self) -> None:
        """Rebuild without dead slots once they are a large share; amortized over many updates."""
        if self.n_dead >= _COMPACT_MIN_DEAD and self.n_dead > _COMPACT_DEAD_SHARE * self.n_slots:
            self.compact()

    def compact(self) -> None:
        names = [""] * len(self._term_ids)
        for term, term_id in self._term_ids.items():
            names[term_id] = term
        live = [(doc, self._terms_of(slot, names)) for slot, doc in enumerate(self.documents) if doc is not None]
        self.clear()
        for document, terms in live:
            self.add(document, terms)

    def _terms_of(self, slot: int, names: list[str]) -> TermCounts:
        slot_terms = self._slot_terms[slot]
        if slot_terms is None:
            return TermCounts((), ())
        return TermCounts(tuple(names[t] for t in slot_terms[0]), tuple(int(c) for c in slot_terms[1]))

    def term_postings(self, term: str) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(slots, frequencies, live document frequency) of a term, or None when no live document has it."""
        term_id = self._term_ids.get(term)
        if term_id is None or self.document_frequency[term_id] <= 0:
            return None
        slots = np.array(self._slots[term_id], dtype=np.int32)
        frequencies = np.array(self._frequencies[term_id], dtype=np.float32)
        return slots, frequencies, self.document_frequency[term_id]

    def lengths(self) -> np.ndarray:
        return np.array(self._lengths, dtype=np.float32)

    def log_norms(self) -> np.ndarray:
        """Per-slot Euclidean norm of the document's (1 + log tf) weights, for cosine scoring."""
        return np.array(self._norms, dtype=np.float32)

    def alive(self) -> np.ndarray:
        return np.array(self._alive, dtype=bool)
