"""Any sentence-transformers ONNX export in a local directory (bge-small, a code model, ...), on onnxruntime."""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragls.embedders.runtime import (
    DEFAULT_BATCH_SIZE,
    DENSE_HINT,
    OnnxSentenceEncoder,
    Tokenize,
    file_sha256,
    import_onnxruntime,
    make_session,
)
from ragls.embedders.wordpiece import PAD, WordPieceTokenizer
from ragls.errors import ConfigError

MODEL_CANDIDATES = ("model.onnx", "onnx/model.onnx")
DEFAULT_MAX_TOKENS = 512


class OnnxDirectoryProvider:
    """`model.onnx` (or `onnx/model.onnx`) plus `tokenizer.json` or `vocab.txt`; pooled as the export says.

    Pooling follows `1_Pooling/config.json` when present (CLS for bge, mean otherwise) and rows are L2
    normalized; the length limit is `sentence_bert_config.json`'s max_seq_length (else the tokenizer's, else 512).
    `model` names the directory and the model file's sha256, so replacing the file re-embeds.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        threads: int = 1,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int | None = None,
    ) -> None:
        root = Path(path).expanduser()
        if not root.is_dir():
            raise ConfigError(
                f"ragls.embedding.path: {root} is not a directory; point it at a sentence-transformers ONNX export"
            )
        if threads < 1:
            raise ConfigError(f"ragls.embedding.threads must be a positive integer, got {threads}")
        model_path = next((root / c for c in MODEL_CANDIDATES if (root / c).is_file()), None)
        if model_path is None:
            raise ConfigError(
                f"ragls.embedding.path: {root} has neither {' nor '.join(MODEL_CANDIDATES)}; "
                "export the model with `optimum-cli export onnx --model NAME DIR` or download its ONNX files there"
            )
        config = _read_json(root / "sentence_bert_config.json")
        tokenizer_config = _read_json(root / "tokenizer_config.json")
        limit = max_tokens or _max_tokens(config, tokenizer_config)
        tokenize, pad_id = _tokenizer(root, model_path.parent, limit, tokenizer_config)
        ort = import_onnxruntime(f"the ONNX model in {root}")
        try:
            session = make_session(ort, model_path, threads)
        except Exception as error:  # onnxruntime raises its own exception types for unreadable graphs
            raise ConfigError(f"onnxruntime could not load {model_path}: {error}") from None
        self._encoder = OnnxSentenceEncoder(
            session, tokenize, pad_id=pad_id, pooling=_pooling(root), batch_size=batch_size
        )
        self.path = root
        self.model_path = model_path
        self.max_tokens = limit
        self.dims = self._encoder.dims
        self.model = f"onnx:{root.name}@{file_sha256(model_path)[:12]}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._encoder.embed(texts)


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"ragls.embedding.path: cannot read {path}: {error}") from None
    return value if isinstance(value, dict) else {}


def _max_tokens(config: dict[str, Any], tokenizer_config: dict[str, Any]) -> int:
    for value in (config.get("max_seq_length"), tokenizer_config.get("model_max_length")):
        if isinstance(value, int) and not isinstance(value, bool) and 3 <= value <= 100_000:
            return value
    return DEFAULT_MAX_TOKENS


def _pooling(root: Path) -> str:
    config = _read_json(root / "1_Pooling" / "config.json")
    return "cls" if config.get("pooling_mode_cls_token") and not config.get("pooling_mode_mean_tokens") else "mean"


def _tokenizer(root: Path, model_dir: Path, limit: int, tokenizer_config: dict[str, Any]) -> tuple[Tokenize, int]:
    """tokenizer.json through `tokenizers` when installed; else vocab.txt through our WordPiece."""
    folders = [root] if model_dir == root else [root, model_dir]
    tokenizer_json = next((d / "tokenizer.json" for d in folders if (d / "tokenizer.json").is_file()), None)
    vocab = next((d / "vocab.txt" for d in folders if (d / "vocab.txt").is_file()), None)
    if tokenizer_json is not None and (vocab is None or _has_tokenizers()):
        return _hf_tokenizer(tokenizer_json, limit)
    if vocab is not None:
        lowercase = tokenizer_config.get("do_lower_case", True) is not False
        try:
            wordpiece = WordPieceTokenizer.from_file(vocab, lowercase=lowercase, max_length=limit)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise ConfigError(f"ragls.embedding.path: {vocab} is not a BERT vocabulary: {error}") from None
        return wordpiece.encode, wordpiece.pad_id
    raise ConfigError(f"ragls.embedding.path: {root} has neither tokenizer.json nor vocab.txt next to the model")


def _has_tokenizers() -> bool:
    try:
        importlib.import_module("tokenizers")
    except ImportError:
        return False
    return True


def _hf_tokenizer(path: Path, limit: int) -> tuple[Tokenize, int]:
    try:
        tokenizers = importlib.import_module("tokenizers")
    except ImportError:
        raise ConfigError(
            f"ragls.embedding.path: {path.parent} has only tokenizer.json, which needs the `tokenizers` package; "
            f"install it with: pip install tokenizers (or add the model's vocab.txt); {DENSE_HINT}"
        ) from None
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises a bare Exception for malformed files
        raise ConfigError(f"ragls.embedding.path: cannot load {path}: {error}") from None
    tokenizer.no_padding()  # exports often pin fixed padding (e.g. 128); we pad per batch instead
    tokenizer.enable_truncation(limit)
    pad_id = tokenizer.token_to_id(PAD)
    if pad_id is None:
        pad_id = tokenizer.token_to_id("<pad>")

    def tokenize(text: str) -> list[int]:
        ids: list[int] = tokenizer.encode(text).ids
        return ids

    return tokenize, pad_id if pad_id is not None else 0
