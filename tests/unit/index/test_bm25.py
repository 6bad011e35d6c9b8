"""BM25Stream against rank_bm25 (a reference used only here), plus its updates and filters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from ragls.index.bm25 import K1, B, BM25Stream
from ragls.index.tokenize import code_tokens, searchable_text
from ragls.model import Document

CORPUS = [
    ("auth.py", "def check_token(request): token = request.headers['Authorization']; return verify(token)"),
    ("pool.py", "class ConnectionPool: def acquire(self): return self.connections.pop()"),
    ("pool2.py", "def release(connection, pool): pool.connections.append(connection)  # return to pool"),
    ("router.js", "function matchRoute(path, routes) { return routes.find(r => r.test(path)) }"),
    ("README.md", "Install with pip. Connection pooling keeps database connections warm."),
    ("long.py", " ".join(["filler words about nothing in particular"] * 30) + " token"),
]


class LuceneIdfBM25(BM25Okapi):
    """rank_bm25's Okapi with Lucene's always-positive idf, the formula Elasticsearch uses."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


def documents() -> list[Document]:
    return [Document(f"d{i}", text, {"file": file}) for i, (file, text) in enumerate(CORPUS)]


@pytest.mark.parametrize("query", ["connection pool", "token request", "return", "route path find", "zzz"])
def test_scores_match_reference(query: str) -> None:
    docs = documents()
    stream = BM25Stream()
    stream.add_documents(docs)
    reference = LuceneIdfBM25([code_tokens(searchable_text(d.content, d.metadata)) for d in docs], k1=K1, b=B)
    terms = code_tokens(query)
    ours = stream.scores(terms)
    expected = reference.get_scores(terms)
    if ours is None:
        assert not terms or not np.any(expected)
    else:
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


def test_scores_match_reference_after_removals_and_replacements() -> None:
    docs = documents()
    stream = BM25Stream()
    stream.add_documents(docs)
    replacement = Document("d1", "class ThreadPool: def submit(self, job): self.queue.put(job)", {"file": "pool.py"})
    stream.replace_documents(["d2", "d1"], [replacement])
    live = [d for d in docs if d.id not in ("d1", "d2")] + [replacement]
    reference = LuceneIdfBM25([code_tokens(searchable_text(d.content, d.metadata)) for d in live], k1=K1, b=B)
    terms = code_tokens("pool connection job queue")
    ours = stream.scores(terms)
    assert ours is not None
    slots = [stream._postings.slot_of[d.id] for d in live]
    np.testing.assert_allclose(ours[slots], reference.get_scores(terms), rtol=1e-5, atol=1e-6)
    assert len(stream) == len(live)


def test_scores_kept_between_queries_follow_every_change() -> None:
    """The length normalizer and the dead slots are kept between queries: each change must renew them."""
    docs = documents()
    stream = BM25Stream()
    stream.add_documents(docs)
    terms = code_tokens("pool connection token job")
    live = list(docs)
    changes = [
        (["d2"], []),  # a removal
        ([], [Document("d9", "def submit(job): queue.put(job) token token", {"file": "jobs.py"})]),  # an addition
        (["d0"], [Document("d0", "def check(token): return pool", {"file": "auth.py"})]),  # a replacement
    ]
    for remove, add in changes:
        assert stream.scores(terms) is not None  # fills what is kept
        stream.replace_documents(remove, add)
        live = [d for d in live if d.id not in remove] + add
        reference = LuceneIdfBM25([code_tokens(searchable_text(d.content, d.metadata)) for d in live], k1=K1, b=B)
        ours = stream.scores(terms)
        assert ours is not None
        slots = [stream._postings.slot_of[d.id] for d in live]
        np.testing.assert_allclose(ours[slots], reference.get_scores(terms), rtol=1e-5, atol=1e-6)
        dead = sorted(set(range(len(ours))) - set(slots))
        assert not np.any(ours[dead])
    stream._postings.rebuild()
    ours = stream.scores(terms)
    assert ours is not None and len(ours) == len(live)
    np.testing.assert_allclose(sorted(ours), sorted(reference.get_scores(terms)), rtol=1e-5, atol=1e-6)


def test_search_ranks_filters_and_expands_synonyms() -> None:
    stream = BM25Stream()
    stream.add_documents(documents())
    assert stream.search("connection pool", 2)[0].document.id in ("d1", "d2", "d4")
    assert [r.document.id for r in stream.search("connection", 5, {"file": "README.md"})] == ["d4"]
    # `db` expands to `database` at query time only.
    assert [r.document.id for r in stream.search("db", 3)] == ["d4"]


def test_failed_replace_rolls_back() -> None:
    stream = BM25Stream()
    stream.add_documents(documents())
    before = [r.document.id for r in stream.search("connection pool", 6)]

    class Exploding(Document):
        @property
        def content(self) -> str:  # type: ignore[override]
            raise RuntimeError("boom")

    bad = Document("new", "fresh content about pools", {"file": "x.py"})
    broken = object.__new__(Exploding)
    object.__setattr__(broken, "id", "broken")
    object.__setattr__(broken, "_metadata", {})
    with pytest.raises(RuntimeError):
        stream.replace_documents(["d1"], [bad, broken])
    assert [r.document.id for r in stream.search("connection pool", 6)] == before


def test_compaction_keeps_scores() -> None:
    stream = BM25Stream()
    docs = [Document(f"x{i}", f"alpha beta gamma{i % 7} delta", {"file": f"f{i}.py"}) for i in range(3000)]
    stream.add_documents(docs)
    for i in range(0, 3000, 2):
        stream.remove(f"x{i}")
    before = {r.document.id: r.score for r in stream.search("gamma3 delta", 20)}
    stream._postings.rebuild()
    after = {r.document.id: r.score for r in stream.search("gamma3 delta", 20)}
    assert before.keys() == after.keys()
    for key, value in before.items():
        assert after[key] == pytest.approx(value, rel=1e-5)


def test_compounds_add_glued_query_words_the_index_holds() -> None:
    texts = ["func NotFound(w Writer) {}", "the value was not found", "unrelated text here", "more filler words"]
    docs = [Document(f"d{i}", text, {}) for i, text in enumerate(texts)]
    plain, glued = BM25Stream(), BM25Stream(compounds=True)
    plain.add_documents(docs)
    glued.add_documents(docs)
    # "not" is a stop word: alone, "found" decides and the shorter document wins; glued, `notfound` names d0.
    assert plain.search("not found", 1)[0].document.id == "d1"
    assert glued.search("not found", 1)[0].document.id == "d0"
    assert glued.search("zzz qqq", 1) == []
