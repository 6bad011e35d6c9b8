"""From the `embedding` setting to a provider: "auto", "none", or an object naming one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragls.config import cache_root
from ragls.embedders.directory import OnnxDirectoryProvider
from ragls.embedders.endpoint import DEFAULT_BATCH_SIZE as ENDPOINT_BATCH_SIZE
from ragls.embedders.endpoint import DEFAULT_TIMEOUT_S, OpenAIEndpointProvider
from ragls.embedders.minilm import MODELS_DIR, REQUIRED_MODULES, MiniLMProvider, minilm_available
from ragls.embedders.options import check_keys, optional_string, positive_int
from ragls.embedders.runtime import DEFAULT_BATCH_SIZE, DENSE_HINT, missing_modules
from ragls.errors import ConfigError
from ragls.index.embedding import EmbeddingProvider

SETTING = "ragls.embedding"
PROVIDERS = ("minilm", "onnx", "openai")
_KEYS = {
    "minilm": {"provider", "threads", "queryThreads", "batchSize", "quantize"},
    "onnx": {"provider", "path", "threads", "batchSize", "maxTokens"},
    "openai": {"provider", "url", "model", "apiKey", "timeout", "batchSize"},
}


def provider_from_setting(
    setting: str | Mapping[str, Any] | None, cache_dir: str | Path | None = None
) -> EmbeddingProvider | None:
    """None for "none"; for "auto" the bundled MiniLM when the dense extra is installed, else None (silently).

    An explicitly requested provider that cannot load raises ConfigError with one message that says how to fix it.
    `cache_dir` is the `cacheDir` setting: derived model files are kept under it.
    """
    if setting is None or setting == "none":
        return None
    models_dir = cache_root(cache_dir) / MODELS_DIR
    if setting == "auto":
        return MiniLMProvider(models_dir=models_dir) if minilm_available() else None
    if not isinstance(setting, Mapping):
        raise ConfigError(f'ragls.embedding: expected "auto", "none" or an object, got {setting!r}')
    kind = setting.get("provider")
    if kind not in PROVIDERS:
        raise ConfigError(f"ragls.embedding.provider: expected one of {', '.join(PROVIDERS)}, got {kind!r}")
    check_keys(setting, _KEYS[kind], SETTING, f" for provider {kind!r}")
    if kind == "minilm":
        missing = missing_modules(*REQUIRED_MODULES)
        if missing:
            raise ConfigError(
                f"ragls.embedding: the minilm provider needs the dense extra (missing: {', '.join(missing)}); "
                f"{DENSE_HINT}"
            )
        quantize = setting.get("quantize")
        if quantize is not None and not isinstance(quantize, bool):
            raise ConfigError(f"ragls.embedding.quantize: expected true or false, got {quantize!r}")
        return MiniLMProvider(
            threads=positive_int(setting, "threads", 1, SETTING),
            query_threads=positive_int(setting, "queryThreads", 1, SETTING) if "queryThreads" in setting else None,
            batch_size=positive_int(setting, "batchSize", DEFAULT_BATCH_SIZE, SETTING)
            if "batchSize" in setting
            else None,
            quantize=quantize,
            models_dir=models_dir,
        )
    if kind == "onnx":
        path = setting.get("path")
        if not isinstance(path, str) or not path:
            raise ConfigError("ragls.embedding.path: the onnx provider needs the directory of an ONNX export")
        if missing_modules("onnxruntime"):
            raise ConfigError(f"ragls.embedding: the onnx provider needs onnxruntime; {DENSE_HINT}")
        max_tokens = setting.get("maxTokens")
        return OnnxDirectoryProvider(
            path,
            threads=positive_int(setting, "threads", 1, SETTING),
            batch_size=positive_int(setting, "batchSize", DEFAULT_BATCH_SIZE, SETTING),
            max_tokens=positive_int(setting, "maxTokens", 512, SETTING) if max_tokens is not None else None,
        )
    url, model = setting.get("url"), setting.get("model")
    if not isinstance(url, str) or not url:
        raise ConfigError(
            "ragls.embedding.url: the openai provider needs the endpoint URL, e.g. http://127.0.0.1:11434"
        )
    if not isinstance(model, str) or not model:
        raise ConfigError("ragls.embedding.model: the openai provider needs the model name, e.g. nomic-embed-text")
    return OpenAIEndpointProvider(
        url,
        model,
        optional_string(setting, "apiKey", SETTING),
        _number(setting, "timeout", DEFAULT_TIMEOUT_S),
        batch_size=positive_int(setting, "batchSize", ENDPOINT_BATCH_SIZE, SETTING),
    )


def _number(setting: Mapping[str, Any], key: str, default: float) -> float:
    value = setting.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"ragls.embedding.{key}: expected a positive number of seconds, got {value!r}")
    return float(value)
