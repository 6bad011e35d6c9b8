"""Settings as frozen dataclasses with defaults, and a parser that reports bad values by path."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
GIB = 1024 * MIB

WATCH_MODES = ("auto", "client", "server", "off")
TOKENIZERS = ("code", "seed")
# A shared index's name: it is a value in every query (never spliced into SQL), and still kept to a plain word
# so that a name holding SQL or shell metacharacters is refused before anything connects.
SHARED_INDEX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
MAX_HALF_LIFE_DAYS = 36500


def embedding_from_environment() -> str | Mapping[str, Any]:
    """RAGLS_EMBEDDING sets the default for every session: `none` on a machine that should stay lexical, or a
    provider object as JSON. A value that is not JSON is passed on as it is, to be refused by name later."""
    value = os.environ.get("RAGLS_EMBEDDING", "auto").strip()
    if value.startswith("{"):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        return parsed if isinstance(parsed, dict) else value
    return value


def cache_root(cache_dir: str | Path | None) -> Path:
    """The `cacheDir` setting, or the platform's user cache directory: stores and derived models live here."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("ragls"))


@dataclass(frozen=True)
class Limits:
    """One admission policy shared by the walk and ingestion.

    The defaults admit a developer's own workspace of 100,000 files and 2 GB with room to spare (the Linux
    kernel is 86,679 files and 1.4 GB); they stop only a runaway walk. `LIMIT_PRESETS["strict"]` keeps the
    seeds' values for shared deployments that index folders they do not trust.
    """

    max_decoded_bytes: int = 4 * GIB
    max_files: int = 250_000
    max_entries: int = 500_000
    max_depth: int = 64
    max_file_bytes: int = 16 * MIB


LIMIT_PRESETS = {
    "default": Limits(),
    "strict": Limits(
        max_decoded_bytes=64 * MIB, max_files=4096, max_entries=8192, max_depth=64, max_file_bytes=16 * MIB
    ),
}


@dataclass(frozen=True)
class Weights:
    """Fusion weights: BM25, the knowledge base's TF-IDF vectors, symbol names, dense vectors, and BM25 over the
    code without its comments.

    `code` joined at 0.4 with `bm25` 0.6 -> 0.4 and `vector` 0.4 -> 0.5, which kept doc2code within 0.012 of
    where it was; `bm25` went back to 0.5 when the names stream's contributions were squared (docs/benchmarks.md).
    `dense` counts only where an embedding provider is active; the streams then fuse by normalized scores.
    1.2 did best before the names stream was squared; since then 0.5 does (MiniLM on the five NL sets: above
    lexical on four, express within 0.003, where 1.2 cost gin 0.03 and express 0.02; docs/benchmarks.md).
    """

    bm25: float = 0.5
    vector: float = 0.5
    names: float = 0.4
    dense: float = 0.5
    code: float = 0.4


@dataclass(frozen=True)
class ChunkShape:
    """What shapes chunks; it is part of every file's fingerprint, so changing it re-chunks."""

    max_lines: int = 80
    max_chars: int = 4000
    overlap_lines: int = 10
    min_merge_lines: int = 6
    # Small neighbouring definitions and the code between them are packed into one chunk up to this many lines.
    pack_lines: int = 30
    # A function or method up to this size is one chunk, however long (results show its best window).
    max_unit_lines: int = 1000
    max_unit_chars: int = 60000


@dataclass(frozen=True)
class Recency:
    """Seed 003's temporal strategy: a file's score times a factor from `floor` (long unchanged) to 1 (just
    changed), halving its distance to the floor every `half_life_days`. Off by default: a release tree has no
    history, so it measured neutral on the bench (docs/benchmarks.md)."""

    enabled: bool = False
    half_life_days: float = 30.0
    floor: float = 0.8


@dataclass(frozen=True)
class SharedIndex:
    """A team index published to PostgreSQL (`ragls publish`); `url` None means libpq's environment (PGHOST...)."""

    name: str
    url: str | None = None


def shared_index_name_problem(name: object) -> str | None:
    """Why a shared index name is refused, or None: 1 to 63 letters, digits, `.`, `_` or `-`."""
    if isinstance(name, str) and SHARED_INDEX_NAME.fullmatch(name):
        return None
    return (
        "a shared index name is 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit "
        f"(no quotes, spaces or SQL), got {name!r}"
    )


@dataclass(frozen=True)
class Settings:
    """Everything a session can be configured with; defaults are the documented ones."""

    weights: Weights = field(default_factory=Weights)
    max_chunks_per_file: int = 3
    embedding: str | Mapping[str, Any] = field(default_factory=lambda: embedding_from_environment())
    limits: Limits = field(default_factory=Limits)
    watch: str = "auto"
    cache_dir: str | None = None
    tokenizer: str = "code"
    chunk_shape: ChunkShape = field(default_factory=ChunkShape)
    shared_index: SharedIndex | None = None
    recency: Recency = field(default_factory=Recency)
    # Files open in the editor rank as just changed (factor 1); the others keep at most their recency factor.
    open_files_boost: bool = False
    # A provider object that reorders the top fused results (`ragls.rag.rerank`); None is off.
    reranker: Mapping[str, Any] | None = None
    # A chat endpoint object whose rewrites of the question are searched too (`ragls.rag.expansion`); None is off.
    query_expansion: Mapping[str, Any] | None = None


def parse_settings(raw: Mapping[str, Any] | None, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from the wire's `ragls` section; each bad value is reported by path and its default kept."""
    settings = base or Settings()
    problems: list[str] = []
    if raw is None:
        return settings, problems
    if not isinstance(raw, Mapping):
        return settings, [f"ragls: expected an object, got {type(raw).__name__}; using defaults"]
    for key, value in raw.items():
        parser = _TOP_LEVEL.get(key)
        if parser is None:
            continue  # Clients keep their own keys in the same section (e.g. `server.command`).
        settings = parser(settings, value, f"ragls.{key}", problems)
    return settings, problems


def _positive_int(value: Any, path: str, problems: list[str]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.append(f"{path}: expected a positive integer, got {value!r}; using the default")
        return None
    return value


def _weight(value: Any, path: str, problems: list[str]) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 10:
        problems.append(f"{path}: expected a number from 0 to 10, got {value!r}; using the default")
        return None
    return float(value)


def _parse_weights(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    if not isinstance(value, Mapping):
        problems.append(f'{path}: expected an object like {{"bm25": 0.4, "vector": 0.5}}, got {value!r}')
        return settings
    weights = settings.weights
    for key, raw_weight in value.items():
        if key not in ("bm25", "code", "vector", "names", "dense"):
            problems.append(f"{path}.{key}: unknown weight, ignored (use bm25, code, vector, names or dense)")
            continue
        parsed = _weight(raw_weight, f"{path}.{key}", problems)
        if parsed is not None:
            weights = replace(weights, **{key: parsed})
    return replace(settings, weights=weights)


_LIMIT_KEYS = {
    "maxDecodedBytes": "max_decoded_bytes",
    "maxFiles": "max_files",
    "maxEntries": "max_entries",
    "maxDepth": "max_depth",
    "maxFileBytes": "max_file_bytes",
}


def _parse_limits(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    """A `preset` ("default" or "strict") first, whatever the key order; the limits named beside it win over it."""
    if not isinstance(value, Mapping):
        problems.append(f"{path}: expected an object, got {value!r}; using the defaults")
        return settings
    limits = settings.limits
    if "preset" in value:
        preset = LIMIT_PRESETS.get(value["preset"]) if isinstance(value["preset"], str) else None
        if preset is None:
            problems.append(
                f"{path}.preset: expected one of {', '.join(LIMIT_PRESETS)}, got {value['preset']!r}; using the default"
            )
        limits = preset or limits
    for key, raw_limit in value.items():
        if key == "preset":
            continue
        attribute = _LIMIT_KEYS.get(key)
        if attribute is None:
            problems.append(f"{path}.{key}: unknown limit, ignored (known: {', '.join(_LIMIT_KEYS)})")
            continue
        parsed = _positive_int(raw_limit, f"{path}.{key}", problems)
        if parsed is not None:
            limits = replace(limits, **{attribute: parsed})
    return replace(settings, limits=limits)


def _parse_max_chunks(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    parsed = _positive_int(value, path, problems)
    return settings if parsed is None else replace(settings, max_chunks_per_file=parsed)


def _choice(name: str, choices: tuple[str, ...]) -> Callable[[Settings, Any, str, list[str]], Settings]:
    def parse(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
        if value not in choices:
            problems.append(f"{path}: expected one of {', '.join(choices)}, got {value!r}; using the default")
            return settings
        return replace(settings, **{name: value})

    return parse


def _parse_embedding(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    if value in ("auto", "none", None) or isinstance(value, Mapping):
        return replace(settings, embedding=value if value is not None else "none")
    problems.append(f'{path}: expected "auto", "none" or an object, got {value!r}; using the default')
    return settings


def _parse_cache_dir(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    if value is None or (isinstance(value, str) and value):
        return replace(settings, cache_dir=value)
    problems.append(f"{path}: expected a directory path or null, got {value!r}; using the default")
    return settings


def _parse_recency(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    if not isinstance(value, Mapping):
        problems.append(f'{path}: expected an object like {{"enabled": true, "halfLifeDays": 30}}, got {value!r}')
        return settings
    recency = settings.recency
    for key, raw in value.items():
        if key == "enabled":
            if isinstance(raw, bool):
                recency = replace(recency, enabled=raw)
            else:
                problems.append(f"{path}.enabled: expected true or false, got {raw!r}; using the default")
        elif key == "halfLifeDays":
            if _is_number(raw) and 0 < raw <= MAX_HALF_LIFE_DAYS:
                recency = replace(recency, half_life_days=float(raw))
            else:
                problems.append(
                    f"{path}.halfLifeDays: expected days above 0, at most {MAX_HALF_LIFE_DAYS:,}, got {raw!r}; "
                    "using the default"
                )
        elif key == "floor":
            if _is_number(raw) and 0 <= raw <= 1:
                recency = replace(recency, floor=float(raw))
            else:
                problems.append(f"{path}.floor: expected a number from 0 to 1, got {raw!r}; using the default")
        else:
            problems.append(f"{path}.{key}: unknown key, ignored (use enabled, halfLifeDays or floor)")
    return replace(settings, recency=recency)


def _parse_open_files_boost(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    if not isinstance(value, bool):
        problems.append(f"{path}: expected true or false, got {value!r}; using the default")
        return settings
    return replace(settings, open_files_boost=value)


def _is_number(value: Any) -> bool:
    """A finite int or float, not a bool."""
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _parse_shared_index(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
    """`{"name": ..., "url": ...}` or null; a bad one is reported and the folder indexed locally."""
    if value is None:
        return replace(settings, shared_index=None)
    if not isinstance(value, Mapping):
        problems.append(f'{path}: expected an object like {{"url": "postgresql://reader@db/ragls", "name": "app"}}')
        return settings
    for key in value:
        if key not in ("name", "url"):
            problems.append(f"{path}.{key}: unknown key, ignored (use name and url)")
    name, url = value.get("name"), value.get("url")
    problem = shared_index_name_problem(name)
    if problem is not None:
        problems.append(f"{path}.name: {problem}; indexing locally")
        return replace(settings, shared_index=None)
    if url is not None and not isinstance(url, str):
        problems.append(f"{path}.url: expected a connection URL or null, got {type(url).__name__}; indexing locally")
        return replace(settings, shared_index=None)
    return replace(settings, shared_index=SharedIndex(str(name), url or None))


def _provider_object(name: str) -> Callable[[Settings, Any, str, list[str]], Settings]:
    """An object naming a provider, or "none"/null for off; its keys are checked where the provider is built."""

    def parse(settings: Settings, value: Any, path: str, problems: list[str]) -> Settings:
        if value in ("none", None) or isinstance(value, Mapping):
            chosen: Any = value if isinstance(value, Mapping) else None
            return replace(settings, **{name: chosen})
        problems.append(f'{path}: expected an object or "none", got {value!r}; using the default (off)')
        return settings

    return parse


_TOP_LEVEL: dict[str, Callable[[Settings, Any, str, list[str]], Settings]] = {
    "weights": _parse_weights,
    "maxChunksPerFile": _parse_max_chunks,
    "embedding": _parse_embedding,
    "limits": _parse_limits,
    "watch": _choice("watch", WATCH_MODES),
    "cacheDir": _parse_cache_dir,
    "tokenizer": _choice("tokenizer", TOKENIZERS),
    "recency": _parse_recency,
    "openFilesBoost": _parse_open_files_boost,
    "reranker": _provider_object("reranker"),
    "queryExpansion": _provider_object("query_expansion"),
    "sharedIndex": _parse_shared_index,
}


def limit_setting_path(attribute: str) -> str:
    """The user-facing setting path of a Limits field, for error messages."""
    return f"ragls.limits.{limit_name(attribute)}"


def limit_name(attribute: str) -> str:
    """The setting's (and the `--limit` flag's) name of a Limits field: `max_files` is `maxFiles`."""
    return {python: wire for wire, python in _LIMIT_KEYS.items()}[attribute]


def limit_flag(name: str) -> str:
    """How the command line raises a limit (by its setting's name), for the CLI's and MCP server's messages."""
    flag = f"--limit {name}=N"
    return f"--max-files N or {flag}" if name == "maxFiles" else flag


def parse_limit_assignment(text: str) -> tuple[str, int]:
    """`NAME=VALUE` from `--limit` as a Limits field and its value; VALUE may end in KiB, MiB or GiB (or K, M, G).

    Raises ValueError with a message that says what is accepted.
    """
    name, separator, raw_value = text.partition("=")
    attribute = _LIMIT_KEYS.get(name.strip())
    if not separator or attribute is None:
        raise ValueError(f"expected NAME=VALUE with NAME one of {', '.join(_LIMIT_KEYS)}, got {text!r}")
    match = _LIMIT_VALUE.fullmatch(raw_value.strip().replace("_", ""))
    value = int(match.group(1)) * 1024 ** _UNIT_POWERS[(match.group(2) or "").lower()] if match else 0
    if value < 1:
        raise ValueError(f"{name}: expected a positive integer (optionally with KiB, MiB or GiB), got {raw_value!r}")
    return attribute, value


# Binary units: K, KB and KiB are all 1024.
_LIMIT_VALUE = re.compile(r"(\d+)\s*(?:([kmg])(?:i?b)?)?", re.IGNORECASE)
_UNIT_POWERS = {"": 0, "k": 1, "m": 2, "g": 3}


assert {f.name for f in fields(Limits)} == set(_LIMIT_KEYS.values())
