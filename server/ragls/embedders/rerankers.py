"""Rerank providers: a cross-encoder ONNX export on onnxruntime, or an HTTP `/rerank` endpoint.

Both score (query, document) pairs; `ragls.rag.rerank` orders the fused candidates by those scores. Nothing
here imports onnxruntime or tokenizers at import time, and the ONNX model loads in `prepare`, off the thread
that asked for it.
"""

from __future__ import annotations

import importlib
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragls.embedders.directory import MODEL_CANDIDATES
from ragls.embedders.http_json import ProviderError, endpoint_url, post_json
from ragls.embedders.options import check_keys, optional_string, positive_int, seconds
from ragls.embedders.runtime import file_sha256, import_onnxruntime, make_session
from ragls.embedders.wordpiece import WordPieceTokenizer
from ragls.errors import ConfigError

SETTING = "ragls.reranker"
PROVIDERS = ("onnx", "http")
DEFAULT_TOP_N = 30
MAX_TOP_N = 100
DEFAULT_TIMEOUT_S = {"onnx": 10.0, "http": 5.0}
DEFAULT_MAX_TOKENS = 512
DEFAULT_BATCH_SIZE = 8
# What one candidate may send: a chunk is at most 4,000 characters, a long unit is shown as its 80-line window.
MAX_DOCUMENT_CHARS = 4000
_KEYS = {
    "onnx": {"provider", "path", "topN", "timeout", "threads", "maxTokens", "batchSize"},
    "http": {"provider", "url", "model", "apiKey", "topN", "timeout"},
}


@dataclass(frozen=True)
class RerankerSetting:
    """The `reranker` setting read: a provider, how many fused candidates it reorders, and how long it may take."""

    provider: Any
    top_n: int
    timeout: float


def reranker_from_setting(setting: str | Mapping[str, Any] | None) -> RerankerSetting | None:
    """None for null or "none"; else the provider the object names. A bad object raises ConfigError."""
    if setting is None or setting == "none":
        return None
    if not isinstance(setting, Mapping):
        raise ConfigError(f'{SETTING}: expected "none" or an object, got {setting!r}')
    kind = setting.get("provider")
    if kind not in PROVIDERS:
        raise ConfigError(f"{SETTING}.provider: expected one of {', '.join(PROVIDERS)}, got {kind!r}")
    check_keys(setting, _KEYS[kind], SETTING, f" for provider {kind!r}")
    top_n = positive_int(setting, "topN", DEFAULT_TOP_N, SETTING, maximum=MAX_TOP_N)
    timeout = seconds(setting, "timeout", DEFAULT_TIMEOUT_S[kind], SETTING)
    provider: OnnxCrossEncoder | HttpReranker
    if kind == "onnx":
        provider = OnnxCrossEncoder(
            setting.get("path"),
            threads=positive_int(setting, "threads", 1, SETTING),
            max_tokens=positive_int(setting, "maxTokens", DEFAULT_MAX_TOKENS, SETTING),
            batch_size=positive_int(setting, "batchSize", DEFAULT_BATCH_SIZE, SETTING),
        )
    else:
        api_key = optional_string(setting, "apiKey", SETTING)
        provider = HttpReranker(setting.get("url"), setting.get("model"), api_key, timeout)
    return RerankerSetting(provider, top_n, timeout)


class HttpReranker:
    """POSTs `{model, query, documents, top_n}` and reads `{results: [{index, relevance_score}]}`.

    That is the shape of Jina's and Cohere's `/v1/rerank`, which vLLM and llama.cpp serve too; TEI's own answer
    (a list of `{index, score}`) is read as well. A URL without a path gets `/v1/rerank` (TEI: give `.../rerank`).
    """

    ready = True

    def __init__(self, url: Any, model: Any, api_key: str | None = None, timeout: float = 5.0) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigError(f"{SETTING}.model: the http provider needs the model name, e.g. bge-reranker-v2-m3")
        if not isinstance(url, str) or not url:
            raise ConfigError(f"{SETTING}.url: the http provider needs the endpoint URL, e.g. http://127.0.0.1:8080")
        self.url = endpoint_url(url, f"{SETTING}.url", "/v1/rerank")
        self.endpoint_model = model
        self.name = f"http:{model}"
        self.timeout = timeout
        self._api_key = api_key

    def prepare(self) -> None:
        """Nothing to load: a server that is down is found (and reported) at the first search."""

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        payload = {
            "model": self.endpoint_model,
            "query": query,
            "documents": [_clipped(text) for text in documents],
            "top_n": len(documents),
        }
        answer = post_json(self.url, payload, self._api_key, self.timeout, SETTING)
        return _read_scores(answer, len(documents), self.url)


class OnnxCrossEncoder:
    """A sequence-classification export (`model.onnx` and `tokenizer.json` or `vocab.txt`): one logit a pair.

    The directory is checked when the setting is read; the tokenizer and the session load in `prepare`.
    Pairs are encoded as the model was trained, `[CLS] query [SEP] document [SEP]` with token type ids 0 then 1
    (`tokenizer.json`'s own template where that file is used), truncated to `max_tokens`.
    """

    def __init__(self, path: Any, *, threads: int = 1, max_tokens: int = DEFAULT_MAX_TOKENS, batch_size: int = 8):
        if not isinstance(path, str) or not path:
            raise ConfigError(f"{SETTING}.path: the onnx provider needs the directory of a cross-encoder ONNX export")
        root = Path(path).expanduser()
        if not root.is_dir():
            raise ConfigError(f"{SETTING}.path: {root} is not a directory; point it at a cross-encoder ONNX export")
        model_path = next((root / c for c in MODEL_CANDIDATES if (root / c).is_file()), None)
        if model_path is None:
            raise ConfigError(
                f"{SETTING}.path: {root} has neither {' nor '.join(MODEL_CANDIDATES)}; export the model with "
                "`optimum-cli export onnx --model BAAI/bge-reranker-base --task text-classification DIR`"
            )
        if not any((d / name).is_file() for d in (root, model_path.parent) for name in ("tokenizer.json", "vocab.txt")):
            raise ConfigError(f"{SETTING}.path: {root} has neither tokenizer.json nor vocab.txt next to the model")
        self.path = root
        self.model_path = model_path
        self.threads = threads
        self.max_tokens = max(max_tokens, 8)
        self.batch_size = batch_size
        self.name = f"onnx:{root.name}"
        self.ready = False
        self._lock = threading.Lock()
        self._session: Any = None
        self._encode: Any = None
        self._input_names: set[str] = set()

    def prepare(self) -> None:
        """Load the tokenizer and the session; ConfigError when either cannot be used."""
        with self._lock:
            if self.ready:
                return
            self._encode = _pair_encoder(self.path, self.model_path.parent, self.max_tokens)
            ort = import_onnxruntime(f"the reranker in {self.path}")
            try:
                self._session = make_session(ort, self.model_path, self.threads)
            except Exception as error:  # onnxruntime raises its own exception types for unreadable graphs
                raise ConfigError(f"onnxruntime could not load {self.model_path}: {error}") from None
            self._input_names = {i.name for i in self._session.get_inputs()}
            missing = {"input_ids", "attention_mask"} - self._input_names
            if missing:
                raise ConfigError(f"{SETTING}.path: the graph in {self.model_path} has no {', '.join(sorted(missing))}")
            self.name = f"onnx:{self.path.name}@{file_sha256(self.model_path)[:12]}"
            self.ready = True

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        self.prepare()
        pairs = [self._encode(query, _clipped(text)) for text in documents]
        result = [0.0] * len(pairs)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            for row, score in zip(rows, self._run([pairs[i] for i in rows]), strict=True):
                result[row] = score
        return result

    def _run(self, batch: list[tuple[list[int], list[int]]]) -> list[float]:
        width = max(len(ids) for ids, _ in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # padding is masked out, so any id does
        types = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, (ids, type_ids) in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            types[row, : len(ids)] = type_ids
            mask[row, : len(ids)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = types
        logits = np.asarray(self._session.run(None, feed)[0], dtype=np.float32).reshape(len(batch), -1)
        # One logit per pair, or two classes (irrelevant, relevant): the last column is "relevant".
        return [float(value) for value in logits[:, -1]]


def _pair_encoder(root: Path, model_dir: Path, limit: int) -> Any:
    """(query, document) -> (ids, type ids): tokenizer.json through `tokenizers` when installed, else vocab.txt."""
    folders = [root] if model_dir == root else [root, model_dir]
    tokenizer_json = next((d / "tokenizer.json" for d in folders if (d / "tokenizer.json").is_file()), None)
    vocab = next((d / "vocab.txt" for d in folders if (d / "vocab.txt").is_file()), None)
    if tokenizer_json is not None:
        try:
            tokenizers = importlib.import_module("tokenizers")
        except ImportError:
            tokenizers = None
            if vocab is None:
                raise ConfigError(
                    f"{SETTING}.path: {root} has only tokenizer.json, which needs the `tokenizers` package; "
                    "install it with: pip install 'ragls[rerank]'"
                ) from None
        if tokenizers is not None:
            return _hf_pair_encoder(tokenizers, tokenizer_json, limit)
    assert vocab is not None
    try:
        wordpiece = WordPieceTokenizer.from_file(vocab, max_length=limit)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigError(f"{SETTING}.path: {vocab} is not a BERT vocabulary: {error}") from None

    def encode(query: str, document: str) -> tuple[list[int], list[int]]:
        query_ids = wordpiece.encode(query)[: limit // 2]  # [CLS] query [SEP], at most half the budget
        if query_ids[-1] != wordpiece.sep_id:
            query_ids[-1] = wordpiece.sep_id
        document_ids = wordpiece.encode(document)[1:][: limit - len(query_ids)]  # document [SEP]
        if document_ids and document_ids[-1] != wordpiece.sep_id:
            document_ids[-1] = wordpiece.sep_id
        return query_ids + document_ids, [0] * len(query_ids) + [1] * len(document_ids)

    return encode


def _hf_pair_encoder(tokenizers: Any, path: Path, limit: int) -> Any:
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises a bare Exception for malformed files
        raise ConfigError(f"{SETTING}.path: cannot load {path}: {error}") from None
    tokenizer.no_padding()
    tokenizer.enable_truncation(limit, strategy="longest_first")

    def encode(query: str, document: str) -> tuple[list[int], list[int]]:
        encoding = tokenizer.encode(query, document)
        return list(encoding.ids), list(encoding.type_ids)

    return encode


def _read_scores(answer: Any, expected: int, url: str) -> list[float]:
    items = answer.get("results") if isinstance(answer, Mapping) else answer
    try:
        if not isinstance(items, list):
            raise ValueError("no `results` list")
        scores = [math.nan] * expected
        for item in items:
            index = item["index"]
            value = item.get("relevance_score", item.get("score"))
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected:
                raise ValueError(f"index {index!r} for {expected} documents")
            scores[index] = float(value)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ProviderError(f"{url} gave an answer that is not a rerank response ({error})") from None
    if not all(math.isfinite(score) for score in scores):
        raise ProviderError(f"{url} scored {sum(math.isfinite(s) for s in scores)} of {expected} documents")
    return scores


def _clipped(text: str) -> str:
    return text if len(text) <= MAX_DOCUMENT_CHARS else text[:MAX_DOCUMENT_CHARS]
