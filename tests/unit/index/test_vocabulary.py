"""The vocabulary: ids that never change, the same after a restart whether terms are a dict or kept packed."""

from __future__ import annotations

import random
import string
import zlib

import numpy as np
import pytest

from ragls.index import vocabulary as vocabulary_module
from ragls.index.vocabulary import STARTS_ARRAY, Vocabulary, _SavedTerms, saved_lookup


def _terms(rng: random.Random, n: int) -> list[str]:
    alphabet = string.ascii_lowercase + "_0123456789éß日"
    terms = {"".join(rng.choices(alphabet, k=rng.randint(1, 40))) for _ in range(n)}
    return sorted(terms | {"x" * 300})  # one term far longer than the rest


@pytest.mark.parametrize("seed", range(4))
def test_a_loaded_vocabulary_keeps_every_id_and_adds_after_them(seed: int) -> None:
    rng = random.Random(seed)
    words = _terms(rng, 3000)
    built = Vocabulary()
    ids = built.ids_of(words)
    assert ids == list(range(len(words)))
    loaded = Vocabulary()
    loaded.load(built.export())
    assert len(loaded) == len(words)
    assert [loaded.get(word) for word in words] == ids
    assert loaded.get("never-seen") is None and loaded.get("") is None
    # Old and new terms mixed: the old keep their ids, the new take the next ones, in order.
    fresh = ["zz-new-1", words[5], "zz-new-2", "zz-new-1", words[0]]
    assert loaded.ids_of(fresh) == [len(words), 5, len(words) + 1, len(words), 0]
    assert built.ids_of(fresh) == loaded.ids_of(fresh)
    assert np.array_equal(loaded.export(), built.export())
    again = Vocabulary()
    again.load(loaded.export())
    assert [again.get(word) for word in [*words, "zz-new-1", "zz-new-2"]] == [*ids, len(words), len(words) + 1]


@pytest.mark.parametrize(("pack_terms", "collide"), [(64, False), (500, False), (64, True)])
def test_a_vocabulary_that_packs_its_dict_as_it_grows_hands_out_the_ids_of_one_that_does_not(
    pack_terms: int, collide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `PACK_TERMS` in the dict every term is packed and the dict starts again: each id, each lookup and the
    export are those of a dict of every term, new terms and old ones (found in the packed ones) mixed in a list."""
    rng = random.Random(pack_terms)
    words = _terms(rng, 3000)
    batches = [rng.choices(words[: rng.randint(1, len(words))], k=rng.randint(0, 60)) for _ in range(400)]
    plain = Vocabulary()
    expected = [plain.ids_of(batch) for batch in batches]
    monkeypatch.setattr(vocabulary_module, "PACK_TERMS", pack_terms)
    if collide:  # a few hashes for every term: the packed lookup must tell terms apart by their bytes
        monkeypatch.setattr(vocabulary_module, "_hash", lambda data: data[-1] if data else 0)
    packing = Vocabulary()
    assert [packing.ids_of(batch) for batch in batches] == expected
    assert packing._saved is not None and len(packing._known) < pack_terms, "it has packed, and its dict is small"
    assert len(packing) == len(plain)
    assert [packing.get(word) for word in words] == [plain.get(word) for word in words]
    assert packing.get("never-seen") is None
    assert np.array_equal(packing.export(), plain.export())


@pytest.mark.parametrize("block", [1, 7, 1 << 16])
def test_hashes_computed_a_block_at_a_time_equal_one_term_at_a_time(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vocabulary_module, "_HASH_BLOCK_TERMS", block)
    words = _terms(random.Random(9), 500)
    saved = _SavedTerms(np.frombuffer("\x00".join(words).encode(), dtype=np.uint8))
    order = np.argsort(saved._order)
    assert [int(saved._hashes[order[i]]) for i in range(len(words))] == [zlib.crc32(w.encode()) for w in words]
    assert [saved.get(word) for word in words] == list(range(len(words)))


def test_terms_whose_hashes_collide_are_told_apart_by_their_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocabulary_module, "_hash", lambda data: data[-1] if data else 0)  # its last byte
    words = ["ab", "cb", "db", "zz"]
    vocabulary = Vocabulary()
    vocabulary.load(np.frombuffer("\x00".join(words).encode(), dtype=np.uint8))
    assert [vocabulary.get(word) for word in words] == [0, 1, 2, 3]
    assert vocabulary.get("eb") is None


def test_empty_and_duplicate_saved_vocabularies() -> None:
    empty = Vocabulary()
    empty.load(np.zeros(0, dtype=np.uint8))
    assert len(empty) == 0 and empty.get("a") is None and empty.ids_of(["a", "b", "a"]) == [0, 1, 0]
    assert empty.export().tobytes() == b"a\x00b"
    with pytest.raises(ValueError, match="twice"):
        Vocabulary().load(np.frombuffer(b"a\x00b\x00a", dtype=np.uint8))


def test_a_vocabulary_loaded_with_its_saved_lookup_finds_what_one_that_hashes_again_finds() -> None:
    words = _terms(random.Random(3), 2000)
    built = Vocabulary()
    built.ids_of(words)
    saved = built.export()
    with_lookup, hashed_again = Vocabulary(), Vocabulary()
    with_lookup.load(saved, saved_lookup(saved))
    hashed_again.load(saved)
    for word in [*words, "never-seen"]:
        assert with_lookup.get(word) == hashed_again.get(word) == built.get(word)


@pytest.mark.parametrize("damage", ["short", "unsorted", "not a permutation"])
def test_a_saved_lookup_that_does_not_fit_its_terms_is_refused(damage: str) -> None:
    saved = np.frombuffer(b"alpha\x00beta\x00gamma", dtype=np.uint8)
    lookup = saved_lookup(saved)
    hashes, order = lookup["term_hashes"].copy(), lookup["term_order"].copy()
    if damage == "short":
        hashes, order = hashes[:2], order[:2]
    elif damage == "unsorted":
        hashes = hashes[::-1].copy()
    else:
        order[0] = order[1]
    with pytest.raises(ValueError, match="do not fit"):
        Vocabulary().load(saved, {"term_hashes": hashes, "term_order": order})


@pytest.mark.parametrize("starts", ["saved", "missing", "past the end", "going back", "of text"])
def test_saved_term_starts_are_used_where_they_fit_and_found_again_where_not(starts: str) -> None:
    words = _terms(random.Random(4), 500)
    built = Vocabulary()
    built.ids_of(words)
    saved = built.export()
    lookup = saved_lookup(saved)
    good = lookup[STARTS_ARRAY]
    assert good.dtype == np.uint32
    damaged = {
        "saved": good,
        "missing": None,
        "past the end": good + 1,
        "going back": np.concatenate([good[:3], good[2:]]),
        "of text": np.zeros(0, dtype=np.str_),
    }[starts]
    without = {name: array for name, array in lookup.items() if name != STARTS_ARRAY}
    loaded = _SavedTerms(saved, {**without, STARTS_ARRAY: damaged} if damaged is not None else without)
    assert (loaded._starts is good) == (starts == "saved")
    assert [loaded.get(word) for word in [*words, "never-seen"]] == [built.get(w) for w in [*words, "never-seen"]]
