"""Reading the keys of a provider object (`embedding`, `reranker`, `queryExpansion`), with errors that name the key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragls.errors import ConfigError

MAX_SECONDS = 600


def positive_int(setting: Mapping[str, Any], key: str, default: int, prefix: str, maximum: int | None = None) -> int:
    value = setting.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{prefix}.{key}: expected a positive integer, got {value!r}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{prefix}.{key}: expected 1..{maximum}, got {value}")
    return value


def optional_string(setting: Mapping[str, Any], key: str, prefix: str) -> str | None:
    """The key's string, or None when it is absent or empty (an `apiKey` left blank means none)."""
    value = setting.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{prefix}.{key}: expected a string")
    return value or None


def seconds(setting: Mapping[str, Any], key: str, default: float, prefix: str) -> float:
    value = setting.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_SECONDS:
        raise ConfigError(f"{prefix}.{key}: expected a number of seconds from 0 to {MAX_SECONDS}, got {value!r}")
    return float(value)


def check_keys(setting: Mapping[str, Any], allowed: set[str], prefix: str, what: str) -> None:
    unknown = sorted(set(setting) - allowed)
    if unknown:
        raise ConfigError(f"{prefix}: unknown key(s) {', '.join(unknown)}{what}; allowed: {', '.join(sorted(allowed))}")
