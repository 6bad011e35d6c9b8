"""Settings parsing: good values apply, bad ones are reported by path and their defaults kept."""

from __future__ import annotations

from typing import Any

import pytest

from ragls.config import Limits, Settings, Weights, parse_settings


def test_good_settings_apply() -> None:
    settings, problems = parse_settings(
        {
            "weights": {"bm25": 0.5, "vector": 0.5, "names": 0, "dense": 0.7},
            "maxChunksPerFile": 2,
            "limits": {"maxFiles": 10000, "maxEntries": 20000},
            "watch": "server",
            "cacheDir": "/tmp/cache",
            "tokenizer": "seed",
        }
    )
    assert problems == []
    assert settings.weights == Weights(0.5, 0.5, 0.0, 0.7)
    assert settings.max_chunks_per_file == 2
    assert settings.limits == Limits(max_files=10000, max_entries=20000)
    assert (settings.watch, settings.cache_dir, settings.tokenizer) == ("server", "/tmp/cache", "seed")


def test_bad_settings_are_named_and_defaulted() -> None:
    settings, problems = parse_settings(
        {
            "weights": {"bm25": "high", "sparse": 1},
            "maxChunksPerFile": 0,
            "limits": {"maxFiles": -1, "maxSize": 3},
            "watch": "sometimes",
            "colour": "blue",
        }
    )
    assert settings == Settings()
    joined = "\n".join(problems)
    for path in (
        "ragls.weights.bm25",
        "ragls.weights.sparse",
        "ragls.maxChunksPerFile",
        "ragls.limits.maxFiles",
        "ragls.limits.maxSize",
        "ragls.watch",
    ):
        assert path in joined, path
    assert parse_settings("nonsense")[1] == ["ragls: expected an object, got str; using defaults"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("none", "none"),
        ("  auto ", "auto"),
        ('{"provider": "minilm", "quantize": false}', {"provider": "minilm", "quantize": False}),
        ("{not json", "{not json"),  # passed on, so the provider setting refuses it by name
        ("[1]", "[1]"),
    ],
)
def test_the_environment_sets_the_default_embedding(monkeypatch: pytest.MonkeyPatch, value: str, expected: Any) -> None:
    monkeypatch.setenv("RAGLS_EMBEDDING", value)
    assert Settings().embedding == expected
    monkeypatch.delenv("RAGLS_EMBEDDING")
    assert Settings().embedding == "auto"
