"""Scores are relevance, 0..1, on every folder and query; `minScore` leaves out what scores less."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.errors import InvalidArgument
from ragls.rag.service import RagService
from tests.sample_workspace import SAMPLE_FILES, write_tree

QUERIES = ["request token", "route request", "how does the router dispatch a request"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> RagService:
    root = write_tree(tmp_path_factory.mktemp("min_score") / "workspace", SAMPLE_FILES)
    service = RagService(root, Settings(embedding="none"))
    service.index_directory()
    return service


def test_scores_are_relevance_from_0_to_1(service: RagService) -> None:
    for query in QUERIES:
        scores = [result.score for result in service.search(query, 20)]
        assert scores and all(0.0 <= score <= 1.0 for score in scores), (query, scores)
        assert scores == sorted(scores, reverse=True)
    # A file every stream ranks first scores 1 (ConnectionPool is its own file: no path prior).
    assert service.search("ConnectionPool acquire release", 1)[0].score == pytest.approx(1.0)


@pytest.mark.parametrize("query", QUERIES)
def test_min_score_keeps_exactly_the_results_scoring_at_least_it(service: RagService, query: str) -> None:
    every = service.search(query, 20)
    threshold = (every[0].score + every[-1].score) / 2
    kept = service.search(query, 20, min_score=threshold)
    assert [r.document.id for r in kept] == [r.document.id for r in every if r.score >= threshold]
    assert 0 < len(kept) < len(every)
    assert [r.document.id for r in service.search(query, 20, min_score=0.0)] == [r.document.id for r in every]
    assert service.search(query, 20, min_score=1.0) == [r for r in every if r.score >= 1.0]


def test_context_prompt_is_built_from_the_results_over_min_score(service: RagService) -> None:
    every = service.search("request token", 5)
    assert len(every) > 1
    prompt, results = service.build_context_prompt("request token", 5, "plain", min_score=every[0].score)
    assert [r.document.id for r in results] == [every[0].document.id]
    assert prompt.count("--- file:") == 1


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), float("inf"), "0.5", True, None])
def test_min_score_out_of_range_or_not_a_number_names_the_field(service: RagService, bad: object) -> None:
    with pytest.raises(InvalidArgument) as caught:
        service.search("connection pool", 5, min_score=bad)  # type: ignore[arg-type]
    assert caught.value.field == "minScore"
    assert str(caught.value).startswith("minScore must be a number from 0 to 1")
    with pytest.raises(InvalidArgument, match="minScore"):
        service.build_context_prompt("connection pool", 5, min_score=bad)  # type: ignore[arg-type]


def test_relevance_means_the_same_with_or_without_a_stream(tmp_path: Path) -> None:
    """Turning a stream off (weight 0) changes what the most is, not the 0..1 scale."""
    root = write_tree(tmp_path / "workspace", SAMPLE_FILES)
    for weights in ({}, {"names": 0.0, "code": 0.0}):
        settings = Settings(embedding="none")
        service = RagService(root, replace(settings, weights=replace(settings.weights, **weights)))
        service.index_directory()
        assert service.search("ConnectionPool acquire release", 1)[0].score == pytest.approx(1.0)
        service.close()
