"""Big commits are built on copies while searches go on, then swapped in: same answers as changing in place."""

from __future__ import annotations

import threading

import pytest

from ragls.index.bm25 import BM25Stream
from ragls.index.knowledge_base import InMemoryKnowledgeBase
from ragls.index.tokenize import TermCounts, code_tokens, name_text, searchable_text
from ragls.model import Document
from ragls.rag.generation import STAGE_MIN_DOCUMENTS, Delta, IndexState, StagedChange


def documents(prefix: str, n: int, word: str) -> list[Document]:
    return [
        Document(f"{prefix}{i}", f"def {word}_{i % 50}():\n    return {word} + {i}", {"file": f"{prefix}{i}.py"})
        for i in range(n)
    ]


def new_state() -> IndexState:
    knowledge_base = InMemoryKnowledgeBase()
    return IndexState(knowledge_base, BM25Stream.over(knowledge_base), BM25Stream(text=name_text, name="names"))


def answers(state: IndexState, query: str) -> list[list[tuple[str, float]]]:
    streams = (state.knowledge_base, state.bm25, state.names)
    return [[(r.document.id, r.score) for r in stream.search(query, 20)] for stream in streams if stream is not None]


@pytest.mark.parametrize("staged", [True, False])
def test_a_big_delta_answers_like_the_same_delta_applied_in_place(staged: bool) -> None:
    n = STAGE_MIN_DOCUMENTS if staged else 50
    first, second = documents("a", n, "alpha"), documents("b", n, "beta")
    reference = new_state()
    reference.commit(Delta(add=second))
    state = new_state()
    state.commit(Delta(add=first))
    state.commit(Delta(remove_ids=[d.id for d in first], add=second))
    for query in ("alpha", "beta", "beta_7", "return"):
        assert answers(state, query) == answers(reference, query)
    assert state.knowledge_base.size() == n and len(state.bm25) == n


@pytest.mark.parametrize("staged", [True, False])
def test_the_knowledge_base_takes_the_counts_tokenized_ahead_out_of_the_delta(staged: bool) -> None:
    # A full run's counts are never all held beside the index built from them: each goes once it is indexed.
    added = documents("a", STAGE_MIN_DOCUMENTS if staged else 50, "alpha")
    terms = {d.id: TermCounts.of(code_tokens(searchable_text(d.content, d.metadata))) for d in added}
    reference, state = new_state(), new_state()
    reference.commit(Delta(add=added))
    state.commit(Delta(add=added, terms=terms))
    assert terms == {}
    assert answers(state, "alpha_7 return") == answers(reference, "alpha_7 return")


def counted(added: list[Document]) -> dict[str, TermCounts]:
    return {d.id: TermCounts.of(code_tokens(searchable_text(d.content, d.metadata))) for d in added}


def test_a_change_built_as_it_grows_answers_like_the_whole_delta_committed_at_once() -> None:
    """A full run hands each file's documents to the copies as it stages them: the counts leave the delta at once,
    readers see the old index until the commit, and the commit answers as one of the whole delta would."""
    old = documents("a", 300, "alpha")
    reference, state = new_state(), new_state()
    for each in (reference, state):
        each.commit(Delta(add=old))
    parts = [documents(f"b{part}_", STAGE_MIN_DOCUMENTS // 2, "beta") for part in range(3)]
    whole = Delta(remove_ids=[d.id for d in old[:100]], add=[d for part in parts for d in part])
    reference.commit(whole)
    change = StagedChange(state)
    for number, part in enumerate(parts):
        change.delta.remove_ids.extend(d.id for d in (old[number * 50 : number * 50 + 50] if number < 2 else []))
        change.delta.add.extend(part)
        change.delta.terms.update(counted(part))
        change.catch_up()
        held = len(change.delta.terms)
        assert held == (len(part) if number == 0 else 0), "once large, each part's counts are taken as it comes"
        assert state.knowledge_base.search("beta", 5) == [] and state.knowledge_base.size() == 300
    state.commit(change)
    for query in ("alpha", "beta", "beta_7", "alpha_3 return", "b1_4"):
        assert answers(state, query) == answers(reference, query)
    assert state.knowledge_base.size() == reference.knowledge_base.size() == 200 + 3 * (STAGE_MIN_DOCUMENTS // 2)


def test_readers_see_the_old_index_until_the_staged_one_is_installed() -> None:
    knowledge_base = InMemoryKnowledgeBase()
    knowledge_base.add_documents(documents("a", 10, "alpha"))
    staged = knowledge_base.staged()
    staged.replace([f"a{i}" for i in range(10)], documents("b", 10, "beta"))
    staged.finish()
    assert len(knowledge_base.search("alpha", 5)) == 5 and knowledge_base.search("beta", 5) == []
    staged.install()
    assert knowledge_base.search("alpha", 5) == [] and len(knowledge_base.search("beta", 5)) == 5


def test_searches_are_not_blocked_while_a_big_delta_is_staged() -> None:
    state = new_state()
    state.commit(Delta(add=documents("a", STAGE_MIN_DOCUMENTS, "alpha")))
    staging, release = threading.Event(), threading.Event()
    terms_of = state.knowledge_base._terms

    def slow_terms(document: Document, terms: object = None) -> object:
        staging.set()
        release.wait(10)  # hold the staging open until the reader below has searched
        return terms_of(document)

    state.knowledge_base._terms = slow_terms  # type: ignore[method-assign]
    writer = threading.Thread(target=state.commit, args=(Delta(add=documents("b", STAGE_MIN_DOCUMENTS, "beta")),))
    writer.start()
    assert staging.wait(10)
    searched = threading.Event()

    def reader() -> None:
        with state.lock.reading():
            assert state.knowledge_base.search("beta", 5) == []
        searched.set()

    threading.Thread(target=reader).start()
    assert searched.wait(5), "a search waited for a commit still being staged"
    release.set()
    writer.join(30)
    assert len(state.knowledge_base.search("beta", 5)) == 5


def test_a_failure_while_staging_changes_nothing() -> None:
    state = new_state()
    old = documents("a", STAGE_MIN_DOCUMENTS, "alpha")
    state.commit(Delta(add=old))
    before = answers(state, "alpha")
    terms_of = state.knowledge_base._terms

    def failing_terms(document: Document, terms: object = None) -> object:
        if document.id == "b1999":
            raise MemoryError("out of memory while staging")
        return terms_of(document)

    state.knowledge_base._terms = failing_terms  # type: ignore[method-assign]
    with pytest.raises(MemoryError):
        state.commit(Delta(remove_ids=[d.id for d in old], add=documents("b", STAGE_MIN_DOCUMENTS, "beta")))
    assert answers(state, "alpha") == before and state.knowledge_base.search("beta", 5) == []


def test_an_image_installs_the_same_answers_when_a_stream_holds_its_slots_in_another_order() -> None:
    """Usually every stream holds the knowledge base's documents in the same slots, and an image takes their
    positions as they are; a stream compacted apart from the others is matched by id instead."""
    state = new_state()
    added = documents("a", 60, "alpha")
    state.commit(Delta(add=added))
    state.commit(Delta(remove_ids=[d.id for d in added[:20]]))
    assert state.names is not None
    state.names._postings.rebuild()  # drops the dead slots of this stream alone
    for same_slots in (False, True):
        image = state.image()
        restored = new_state()
        restored.install(image)
        for query in ("alpha_7", "alpha_33 return", "a41", "a25 alpha_1"):
            assert answers(restored, query) == answers(state, query)
        assert [r[0] for r in answers(restored, "a41")[2]] == ["a41"]  # the names stream, from the slots it loaded
        state.knowledge_base._postings.rebuild()  # now all three hold the live documents in the same slots
        assert same_slots or len(image.names_slots) != len(image.index_slots)
