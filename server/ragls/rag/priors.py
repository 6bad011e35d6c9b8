"""Path priors: tests, prose docs and changelogs answer a question less often than the code they describe.

Measured on the bench's doc2code and hand-written question sets of five corpora (docs/benchmarks.md):
scaling the fused score of test files by 0.7, prose documents by 0.7 and changelogs by a further 0.7
lifted MRR@10 where a corpus has tests or docs and changed nothing elsewhere. A prior only reorders;
nothing is dropped, so a question that only a README answers still finds it.
"""

from __future__ import annotations

import functools
import re

TEST_FACTOR = 0.7
DOC_FACTOR = 0.7
CHANGELOG_FACTOR = 0.7
_DOC_PATH = re.compile(r"\.(md|markdown|mdx|rst|adoc|txt)$", re.IGNORECASE)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|specs?|testing)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(spec|test)\.[a-z]+$|Tests?\.[a-z]+$"
)
_CHANGELOG_PATH = re.compile(r"(^|/)(history|changelog|changes|news|releases?)(\.[a-z]+)?$", re.IGNORECASE)


@functools.lru_cache(maxsize=1 << 16)
def path_prior(file: str | None) -> float:
    """A factor in (0, 1] for a result's fused score, by what kind of file it comes from (cached: every search
    asks again for the files of its 50-200 candidates)."""
    if not file:
        return 1.0
    factor = 1.0
    if _TEST_PATH.search(file):
        factor *= TEST_FACTOR
    if _DOC_PATH.search(file):
        factor *= DOC_FACTOR
    if _CHANGELOG_PATH.search(file):
        factor *= CHANGELOG_FACTOR
    return factor
