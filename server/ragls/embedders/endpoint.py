"""An OpenAI-compatible `/v1/embeddings` endpoint (Ollama, llama.cpp, LM Studio, vLLM, ...) over urllib."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence

import numpy as np

from ragls.embedders.http_json import opener_for as _opener_for
from ragls.embedders.runtime import EmbeddingError
from ragls.errors import ConfigError

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_BATCH_SIZE = 32
_SNIPPET = 300


def embeddings_url(url: str) -> str:
    """`http://host:port`, `.../v1` and `.../v1/embeddings` all mean the same endpoint."""
    base = url.strip().rstrip("/")
    parsed = urllib.parse.urlparse(base)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(f"ragls.embedding.url: expected an http(s) URL such as http://127.0.0.1:11434, got {url!r}")
    if base.endswith("/v1/embeddings"):
        return base
    if base.endswith("/v1"):
        return base + "/embeddings"
    return base + "/v1/embeddings"


class OpenAIEndpointProvider:
    """POSTs `{"model", "input": [...]}` in batches; rows are L2 normalized; `dims` comes from the first answer.

    The constructor asks the endpoint once (one short input) so a wrong URL, model or key is a ConfigError at
    configuration time rather than a failure in the background later.
    """

    def __init__(
        self,
        url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigError("ragls.embedding.model: expected the endpoint's model name, e.g. nomic-embed-text")
        if timeout <= 0 or batch_size < 1:
            raise ConfigError("ragls.embedding: timeout and batchSize must be positive")
        self.url = embeddings_url(url)
        self.endpoint_model = model
        self.model = f"openai:{model}"
        self.timeout = timeout
        self.batch_size = batch_size
        self._api_key = api_key
        self._opener = _opener_for(self.url)
        try:
            probe = self._request(["dimension probe"])
        except EmbeddingError as error:
            raise ConfigError(f"ragls.embedding: {error}") from None
        self.dims = int(probe.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        result = np.vstack(parts)
        if result.shape[1] != self.dims:
            raise EmbeddingError(
                f"{self.url} answered {result.shape[1]}-dimensional vectors for model {self.endpoint_model!r}, "
                f"earlier {self.dims}; did the served model change?"
            )
        return result

    def _request(self, texts: Sequence[str]) -> np.ndarray:
        # Several servers reject empty strings; a lone space embeds the same "nothing".
        payload = {"model": self.endpoint_model, "input": [text if text.strip() else " " for text in texts]}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode(), headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            detail = _snippet(error.read())
            hint = " (check ragls.embedding.apiKey)" if error.code in (401, 403) else ""
            raise EmbeddingError(
                f"{self.url} answered HTTP {error.code} for model {self.endpoint_model!r}{hint}: {detail}"
            ) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, TimeoutError):
                raise EmbeddingError(
                    f"the embedding endpoint {self.url} did not answer within {self.timeout:g} s; "
                    "check the server or raise ragls.embedding.timeout"
                ) from None
            raise EmbeddingError(
                f"cannot reach the embedding endpoint {self.url} ({reason}); "
                "start the server or fix ragls.embedding.url"
            ) from None
        return _parse(body, len(texts), self.url)


def _parse(body: bytes, expected: int, url: str) -> np.ndarray:
    try:
        answer = json.loads(body)
        data = answer["data"]
        if not isinstance(data, list) or len(data) != expected:
            count = len(data) if isinstance(data, list) else type(data).__name__
            raise ValueError(f"{count} embeddings for {expected} inputs")
        items = sorted(data, key=lambda item: item.get("index", 0)) if all("index" in d for d in data) else data
        rows = [item["embedding"] for item in items]
        matrix = np.asarray(rows, dtype=np.float32)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise EmbeddingError(
            f"{url} gave an answer that is not an OpenAI embeddings response ({error}): {_snippet(body)}"
        ) from None
    if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
        raise EmbeddingError(f"{url} gave embeddings of shape {matrix.shape} or with non-finite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise EmbeddingError(f"{url} gave an all-zero embedding")
    return (matrix / norms).astype(np.float32, copy=False)


def _snippet(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "..."
