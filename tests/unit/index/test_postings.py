"""Postings: the tail, the bulk rebuild and a save/load round trip all answer like a fresh build."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ragls.index import postings as postings_module
from ragls.index.columns import ArraySpace
from ragls.index.postings import Postings, inverted
from ragls.model import Document

WORDS = [f"w{i}" for i in range(60)]


def _document(rng: random.Random, key: str) -> tuple[Document, list[str]]:
    terms = rng.choices(WORDS, k=rng.randint(0, 12))
    return Document(key, " ".join(terms) or "empty", {"file": f"{key}.py"}), terms


def _answers(postings: Postings) -> dict[str, object]:
    """Everything a ranker reads, keyed by document id so slot numbering does not matter."""
    alive = postings.alive()
    ids = [d.id if d is not None else None for d in postings.documents]
    answers: dict[str, object] = {"n": postings.n_alive, "total": round(postings.total_length, 3)}
    for word in WORDS:
        entry = postings.term_postings(word)
        if entry is None:
            answers[word] = None
            continue
        slots, frequencies, document_frequency = entry
        live = sorted((ids[s], float(f)) for s, f in zip(slots.tolist(), frequencies.tolist(), strict=True) if alive[s])
        answers[word] = (document_frequency, live)
    for slot, key in enumerate(ids):
        if key is not None:
            answers[key] = (round(float(postings.lengths()[slot]), 3), round(float(postings.log_norms()[slot]), 4))
    return answers


def _fresh(documents: dict[str, tuple[Document, list[str]]]) -> Postings:
    postings = Postings()
    for document, terms in documents.values():
        postings.add(document, terms)
    postings.rebuild()
    return postings


@pytest.mark.parametrize("bincount_share", [0, 8, 10**9])  # count term by term, as shipped, over the vocabulary
@pytest.mark.parametrize("seed", range(8))
def test_incremental_changes_answer_like_a_fresh_build(
    seed: int, bincount_share: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings_module, "_BINCOUNT_SHARE", bincount_share)
    rng = random.Random(seed)
    live: dict[str, tuple[Document, list[str]]] = {}
    postings = Postings()
    for step in range(60):
        for _ in range(rng.randint(1, 40)):
            key = f"d{rng.randint(0, 300)}"
            if key in live and rng.random() < 0.5:
                postings.remove(key)
                del live[key]
            else:
                document, terms = _document(rng, key)
                postings.add(document, terms)
                live[key] = (document, terms)
        if step % 7 == 0:
            postings.rebuild()
        else:
            postings.refresh()
        assert _answers(postings) == _answers(_fresh(live))


@pytest.mark.parametrize("count_chunk", [1, 5, 37])
def test_slots_counted_a_range_at_a_time_count_like_all_at_once(
    count_chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(count_chunk)
    live = {f"d{i}": _document(rng, f"d{i}") for i in range(300)}
    whole = _fresh(live)
    monkeypatch.setattr(postings_module, "COUNT_CHUNK_POSTINGS", count_chunk)
    ranged = _fresh(live)
    for key in list(live)[::7]:  # dead slots inside the ranges are counted out of the frequencies
        ranged.remove(key)
        whole.remove(key)
    late = {f"late{i}": _document(rng, f"late{i}") for i in range(40)}
    for document, terms in late.values():
        ranged.add(document, terms)
        whole.add(document, terms)
    ranged.remove("late3")
    whole.remove("late3")
    ranged.refresh()
    whole.refresh()
    assert _answers(ranged) == _answers(whole)
    assert np.array_equal(ranged._document_frequency, whole._document_frequency)
    assert np.array_equal(ranged.lengths(), whole.lengths())
    np.testing.assert_allclose(ranged.log_norms(), whole.log_norms(), rtol=1e-6)


def test_small_changes_stay_in_the_tail_and_large_ones_rebuild() -> None:
    rng = random.Random(1)
    postings = Postings()
    for i in range(5000):
        postings.add(*_document(rng, f"d{i}"))
    postings.refresh()
    assert postings._base_end == 5000 and not postings._tail
    postings.add(*_document(rng, "d7"))
    postings.refresh()
    assert postings._base_end == 5000 and postings._tail and postings.n_dead == 1


def test_export_and_load_round_trip_with_a_tail_and_dead_slots() -> None:
    rng = random.Random(2)
    live = {}
    postings = Postings()
    for i in range(400):
        live[f"d{i}"] = _document(rng, f"d{i}")
        postings.add(*live[f"d{i}"])
    postings.rebuild()
    for i in range(0, 400, 9):
        postings.remove(f"d{i}")
        del live[f"d{i}"]
    live["d3"] = _document(rng, "d3")
    postings.add(*live["d3"])
    brand_new = Document("d-new", "zebra", {"file": "new.py"})
    live["d-new"] = (brand_new, ["zebra", "w1"])  # a term the base has never seen lives only in the tail
    postings.add(brand_new, ["zebra", "w1"])
    postings.refresh()
    assert postings._tail and len(postings._base_offsets) < len(postings.vocabulary) + 1
    arrays = {name: np.array(value) for name, value in postings.export().items()}
    loaded = Postings()
    loaded.load(arrays, postings.documents)
    assert _answers(loaded) == _answers(postings) == _answers(_fresh(live))
    assert loaded.term_postings("zebra") is not None
    loaded.add(*_document(rng, "new"))
    loaded.refresh()
    assert loaded.term_postings("w1") is not None


def test_streams_sharing_a_vocabulary_save_it_once_and_load_after_its_owner() -> None:
    rng = random.Random(3)
    owner = Postings()
    shared = Postings(owner.vocabulary)
    for i in range(300):
        owner.add(*_document(rng, f"d{i}"))
        shared.add(*_document(rng, f"s{i}"))
    owner.refresh()
    shared.add(Document("late", "zebra", {}), ["zebra"])  # a term the owner never counted
    shared.refresh()
    assert "terms" in owner.export() and "terms" not in shared.export()
    arrays = [{name: np.array(value) for name, value in p.export().items()} for p in (owner, shared)]
    loaded_owner = Postings()
    loaded_shared = Postings(loaded_owner.vocabulary)
    loaded_owner.load(arrays[0], owner.documents)
    loaded_shared.load(arrays[1], shared.documents)
    assert _answers(loaded_owner) == _answers(owner) and _answers(loaded_shared) == _answers(shared)
    assert loaded_shared.term_postings("zebra") is not None and loaded_owner.term_postings("zebra") is None
    loaded_shared.clear()  # a stream that shares the vocabulary leaves it to its owner
    assert _answers(loaded_owner) == _answers(owner)


def test_load_rejects_arrays_that_do_not_fit() -> None:
    postings = Postings()
    postings.add(Document("a", "x y", {}), ["x", "y"])
    postings.refresh()
    arrays = postings.export()
    arrays["lengths"] = np.zeros(5, dtype=np.float32)
    with pytest.raises(ValueError, match="do not fit"):
        Postings().load(arrays, postings.documents)


class _PassesOf(ArraySpace):
    """Memory, built a few terms' postings at a time as a space that gives pages back would have it built."""

    def __init__(self, pass_postings: int) -> None:
        self.pass_postings = pass_postings


@pytest.mark.parametrize(
    ("chunk", "pass_postings"), [(1, None), (7, None), (64, None), (1 << 20, None), (64, 500), (7, 1)]
)
def test_the_inverted_index_is_built_in_slot_ranges_exactly_as_by_one_stable_sort(
    chunk: int, pass_postings: int | None
) -> None:
    """Also when it is written a stretch of terms at a time (`pass_postings`), as in files it gives back."""
    rng = np.random.default_rng(chunk)
    sizes = rng.integers(0, 30, size=400)
    sizes[[3, 50]] = 0, 200  # an empty slot, and one larger than a range
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    terms = rng.integers(0, 90, size=int(offsets[-1])).astype(np.int32)
    counts = rng.integers(1, 9, size=len(terms)).astype(np.float32)
    space = ArraySpace() if pass_postings is None else _PassesOf(pass_postings)
    frequency, base_offsets, base_slots, base_counts = inverted(terms, counts, offsets, 100, chunk, space)
    order = np.argsort(terms, kind="stable")
    assert frequency.tolist() == np.bincount(terms, minlength=100).tolist()
    assert base_offsets.tolist() == [0, *np.cumsum(frequency).tolist()]
    assert base_slots.tolist() == np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)[order].tolist()
    assert base_counts.tolist() == counts[order].tolist()


def test_a_rebuild_that_drops_dead_slots_leaves_room_for_the_next_edit() -> None:
    rng = random.Random(5)
    postings = Postings()
    documents = [_document(rng, f"d{index}") for index in range(50)]
    for document, terms in documents:
        postings.add(document, terms)
    for document, _ in documents[:25]:
        postings.remove(document.id)
    postings.rebuild()
    columns = (postings._forward_offsets, postings._forward_terms, postings._forward_counts)
    assert all(column.capacity > len(column) for column in columns)
    before = [column.values() for column in columns]
    late = _document(rng, "late")
    postings.add(*late)
    postings.refresh()
    assert all(np.shares_memory(view, column.values()) for view, column in zip(before, columns, strict=True))
    live = {document.id: (document, terms) for document, terms in [*documents[25:], late]}
    assert _answers(postings) == _answers(_fresh(live))


def test_indexes_loaded_over_the_same_slots_share_their_documents_until_one_changes() -> None:
    rng = random.Random(5)
    first = Postings()
    second = Postings(first.vocabulary)
    for i in range(200):
        document, terms = _document(rng, f"d{i}")
        first.add(document, terms)
        second.add(document, terms[:3])
    first.refresh()
    second.refresh()
    arrays = [{name: np.array(value) for name, value in p.export().items()} for p in (first, second)]
    loaded_first = Postings()
    loaded_second = Postings(loaded_first.vocabulary)
    loaded_first.load(arrays[0], first.documents)
    loaded_second.load(arrays[1], second.documents, like=loaded_first)
    assert loaded_second.documents is loaded_first.documents and loaded_second.slot_of is loaded_first.slot_of
    assert _answers(loaded_first) == _answers(first) and _answers(loaded_second) == _answers(second)

    loaded_second.remove("d7")  # a change in place: the other index keeps its documents
    loaded_second.add(Document("late", "zebra", {}), ["zebra"])
    loaded_second.refresh()
    assert loaded_first.get("d7") is not None and loaded_first.get("late") is None
    assert loaded_second.get("d7") is None and loaded_second.get("late") is not None
    assert _answers(loaded_first) == _answers(first)
    loaded_first.remove("d8")
    assert loaded_second.get("d8") is not None and loaded_first.n_alive == 199


def test_a_load_over_other_slots_keeps_its_own_documents() -> None:
    rng = random.Random(6)
    first, other = Postings(), Postings()
    for i in range(50):
        first.add(*_document(rng, f"d{i}"))
        other.add(*_document(rng, f"o{i}"))
    first.refresh()
    other.refresh()
    loaded = Postings()
    loaded.load({name: np.array(value) for name, value in first.export().items()}, first.documents)
    loaded_other = Postings()
    loaded_other.load({name: np.array(value) for name, value in other.export().items()}, other.documents, like=loaded)
    assert loaded_other.documents is not loaded.documents and loaded_other.get("o3") is not None
    assert loaded.get("o3") is None


def test_counts_are_held_in_two_bytes_the_top_holding_any_larger_count() -> None:
    postings = Postings()
    postings.add(Document("many", "x", {"file": "m.py"}), {"often": 70_000, "once": 1})
    postings.add(Document("few", "x", {"file": "f.py"}), {"often": 3})
    postings.refresh()
    often = postings.term_postings("often")
    assert often is not None and often[1].dtype == np.float32
    assert often[1].tolist() == [65_535.0, 3.0] and postings.lengths().tolist() == [65_536.0, 3.0]
    arrays = postings.export()
    assert arrays["forward_counts"].dtype == arrays["base_frequencies"].dtype == np.uint16


def test_a_snapshot_that_saved_counts_as_float32_loads_as_it_answered() -> None:
    rng = random.Random(5)
    postings = Postings()
    for i in range(200):
        postings.add(*_document(rng, f"d{i}"))
    postings.refresh()
    arrays = dict(postings.export())
    for name in ("forward_counts", "base_frequencies"):
        arrays[name] = arrays[name].astype(np.float32)  # as a snapshot written before counts took two bytes
    loaded = Postings()
    loaded.load(arrays, postings.documents)
    assert _answers(loaded) == _answers(postings)
    assert loaded.export()["forward_counts"].dtype == np.uint16
