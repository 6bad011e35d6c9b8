"""The rerank stage: the top N fused candidates reordered by a provider's (query, document) scores.

A provider that is loading, slow or failing never costs a search its answer: the fused order stands, the
first failure is told once (logged and kept as a notice for the user), and the provider rests for a while.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from ragls.embedders.rerankers import reranker_from_setting
from ragls.errors import ConfigError
from ragls.model import SearchResult

log = logging.getLogger(__name__)
T = TypeVar("T")
Report = Callable[[str], None]
# After a failure a provider is left alone this long, so a server that is down does not cost every search its
# timeout; the next search after that tries it again.
RETRY_AFTER_S = 30.0


class Reranker(Protocol):
    """Scores (query, document) pairs, higher is more relevant; `prepare` loads what `ready` says is missing."""

    name: str
    ready: bool

    def prepare(self) -> None: ...

    def scores(self, query: str, documents: Sequence[str]) -> list[float]: ...


def rerank_stage(setting: str | Mapping[str, Any] | None, report: Report) -> RerankStage | None:
    """The stage the `reranker` setting asks for; a setting that cannot be used is reported and means none."""
    try:
        chosen = reranker_from_setting(setting)
    except ConfigError as error:
        report(f"{error}; searching without a reranker")
        return None
    return None if chosen is None else RerankStage(chosen.provider, chosen.top_n, chosen.timeout, report)


def call_within(seconds: float, work: Callable[[], T], name: str) -> T:
    """`work()` on a thread of its own; TimeoutError when it takes longer than `seconds` (it runs on, unheard)."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except Exception as error:  # handed to the caller, which decides what a failure means
            outcome.append((False, error))

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise TimeoutError(f"no answer within {seconds:g} s")
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    result: T = value
    return result


class Outages:
    """Tells the first failure of an outage once; after any failure the provider rests `retry_after` seconds."""

    def __init__(self, report: Report, retry_after: float = RETRY_AFTER_S) -> None:
        self.report = report
        self.retry_after = retry_after
        self._failing = False
        self._resting_until = 0.0

    def available(self) -> bool:
        return time.monotonic() >= self._resting_until

    def failed(self, message: str) -> None:
        self._resting_until = time.monotonic() + self.retry_after
        if self._failing:
            log.debug("%s", message)
            return
        self._failing = True
        self.report(message)

    def succeeded(self) -> None:
        self._failing = False


class RerankStage:
    """Reorders the first `top_n` results by the provider's scores; the results past them keep their places.

    The reordered results take the fused scores of the places they move to, so scores still fall down the
    list and stay on the fused scale (a threshold or a merge across folders reads them as before).
    """

    def __init__(
        self, provider: Reranker, top_n: int, timeout: float, report: Report, retry_after: float = RETRY_AFTER_S
    ) -> None:
        self.provider = provider
        self.top_n = top_n
        self.timeout = timeout
        self.outages = Outages(report, retry_after)
        self.prepared = threading.Event()
        self._broken = False
        if provider.ready:
            self.prepared.set()
        else:
            threading.Thread(target=self._prepare, name="ragls-rerank-load", daemon=True).start()

    def depth(self, top_k: int) -> int:
        """How many fused results a search of `top_k` should hand the stage."""
        return max(top_k, self.top_n)

    def rerank(self, query: str, results: Sequence[SearchResult]) -> list[SearchResult]:
        candidates, rest = list(results[: self.top_n]), list(results[self.top_n :])
        if len(candidates) < 2 or self._broken or not self.prepared.is_set() or not self.outages.available():
            return [*candidates, *rest]
        texts = [result.document.content for result in candidates]
        try:
            scores = call_within(self.timeout, lambda: self.provider.scores(query, texts), "ragls-rerank")
            if len(scores) != len(candidates) or not all(math.isfinite(score) for score in scores):
                raise ValueError(f"{len(scores)} scores (finite or not) for {len(candidates)} documents")
        except TimeoutError:
            self.outages.failed(
                f"the reranker {self.provider.name} did not answer within {self.timeout:g} s; "
                "showing the fused order (raise ragls.reranker.timeout or lower ragls.reranker.topN)"
            )
            return [*candidates, *rest]
        except Exception as error:  # any provider failure: the fused order stands
            self.outages.failed(f"reranking with {self.provider.name} failed ({error}); showing the fused order")
            return [*candidates, *rest]
        self.outages.succeeded()
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])  # stable: ties keep the fused order
        reordered = [SearchResult(candidates[i].document, candidates[place].score) for place, i in enumerate(order)]
        return [*reordered, *rest]

    def _prepare(self) -> None:
        try:
            self.provider.prepare()
        except Exception as error:  # a model that cannot load: told once, and searches go on without it
            self._broken = True
            self.outages.report(f"the reranker {self.provider.name} cannot load ({error}); searching without it")
            return
        self.prepared.set()
