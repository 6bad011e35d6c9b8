"""An incremental inverted index: documents get slots, terms get growable posting arrays.

Removing a document only marks its slot dead and updates document frequencies, so a
one-file change costs what changed; dead slots are compacted away once they pile up.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

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
        self.document_frequency = array("i")
        self.documents: list[Document | None] = []
        self._slot_terms: list[tuple[np.ndarray, np.ndarray] | None] = []
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

    def add(self, document: Document, terms: Iterable[str] | Mapping[str, int]) -> None:
        """Index a document under its terms (or term counts); an existing document with that id is replaced."""
        if document.id in self.slot_of:
            self.remove(document.id)
        slot = len(self.documents)
        counts = terms if isinstance(terms, Mapping) else Counter(terms)
        term_ids = np.empty(len(counts), dtype=np.int32)
        term_counts = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        for position, (term, count) in enumerate(counts.items()):
            term_id = self._term_ids.get(term)
            if term_id is None:
                term_id = self._term_ids[term] = len(self._slots)
                self._slots.append(array("i"))
                self._frequencies.append(array("f"))
                self.document_frequency.append(0)
            self._slots[term_id].append(slot)
            self._frequencies[term_id].append(count)
            self.document_frequency[term_id] += 1
            term_ids[position] = term_id
        length = float(sum(counts.values()))
        self.documents.append(document)
        self._slot_terms.append((term_ids, term_counts))
        self._lengths.append(length)
        self._norms.append(float(np.sqrt(np.sum(np.square(1.0 + np.log(term_counts))))) or 1.0)
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

    def _terms_of(self, slot: int, names: list[str]) -> Counter[str]:
        slot_terms = self._slot_terms[slot]
        if slot_terms is None:
            return Counter()
        return Counter({names[t]: int(c) for t, c in zip(slot_terms[0].tolist(), slot_terms[1].tolist(), strict=True)})

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
