"""Settings parsing: good values apply, bad ones are reported by path and their defaults kept."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from ragls.config import (
    LIMIT_PRESETS,
    MIB,
    Limits,
    Recency,
    Settings,
    Weights,
    parse_limit_assignment,
    parse_settings,
)


def test_good_settings_apply() -> None:
    settings, problems = parse_settings(
        {
            "weights": {"bm25": 0.5, "vector": 0.5, "names": 0, "dense": 0.7, "code": 0.3},
            "maxChunksPerFile": 2,
            "limits": {"maxFiles": 10000, "maxEntries": 20000},
            "watch": "server",
            "cacheDir": "/tmp/cache",
            "tokenizer": "seed",
        }
    )
    assert problems == []
    assert settings.weights == Weights(0.5, 0.5, 0.0, 0.7, 0.3)
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


def test_the_default_limits_admit_a_large_workspace_and_strict_keeps_the_seeds() -> None:
    # Issue 16: a developer's own repository of 100,000 files and 2 GB indexes with no settings.
    limits = Limits()
    assert limits.max_files >= 100_000 and limits.max_entries >= 2 * 100_000
    assert limits.max_decoded_bytes >= 2 * 1024**3
    # The seeds' admission caps (FileIngestionService.Limits.defaults()), for shared deployments.
    assert LIMIT_PRESETS["strict"] == Limits(64 * MIB, 4096, 8192, 64, 16 * MIB)
    assert LIMIT_PRESETS["default"] == limits


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"preset": "strict"}, LIMIT_PRESETS["strict"]),
        # The preset applies first whatever the key order; the limits named beside it win over it.
        ({"maxFiles": 10_000, "preset": "strict"}, replace(LIMIT_PRESETS["strict"], max_files=10_000)),
        ({"preset": "default", "maxDepth": 9}, replace(Limits(), max_depth=9)),
    ],
)
def test_a_limits_preset_is_the_base_of_the_limits_beside_it(raw: dict[str, Any], expected: Limits) -> None:
    settings, problems = parse_settings({"limits": raw})
    assert problems == [] and settings.limits == expected


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"preset": "lax"}, "ragls.limits.preset: expected one of default, strict, got 'lax'; using the default"),
        ({"maxFiles": "many"}, "ragls.limits.maxFiles: expected a positive integer, got 'many'; using the default"),
        ({"maxDecodedBytes": 1.5}, "ragls.limits.maxDecodedBytes: expected a positive integer, got 1.5"),
        ({"maxDepth": True}, "ragls.limits.maxDepth: expected a positive integer, got True"),
        ({"maxFileBytes": 0}, "ragls.limits.maxFileBytes: expected a positive integer, got 0"),
    ],
)
def test_a_bad_limit_is_named_by_its_setting(raw: dict[str, Any], problem: str) -> None:
    settings, problems = parse_settings({"limits": raw})
    assert settings.limits == Limits()
    assert len(problems) == 1 and problems[0].startswith(problem), problems


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("maxFiles=400000", ("max_files", 400_000)),
        ("maxEntries=1_000_000", ("max_entries", 1_000_000)),
        ("maxDecodedBytes=8GiB", ("max_decoded_bytes", 8 * 1024**3)),
        ("maxFileBytes=512k", ("max_file_bytes", 512 * 1024)),
        ("maxDepth = 128", ("max_depth", 128)),
    ],
)
def test_limit_assignments_from_the_command_line(text: str, expected: tuple[str, int]) -> None:
    assert parse_limit_assignment(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("maxFiles", "expected NAME=VALUE with NAME one of maxDecodedBytes, maxFiles, maxEntries, maxDepth"),
        ("max_files=3", "expected NAME=VALUE with NAME one of"),
        ("maxFiles=-1", "maxFiles: expected a positive integer (optionally with KiB, MiB or GiB), got '-1'"),
        ("maxFiles=2.5", "maxFiles: expected a positive integer"),
        ("maxDecodedBytes=1TiB", "maxDecodedBytes: expected a positive integer"),
    ],
)
def test_bad_limit_assignments_say_what_is_accepted(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_limit_assignment(text)


def test_recency_and_the_open_file_boost_are_off_by_default_with_the_seed_s_values() -> None:
    assert Settings().recency == Recency(enabled=False, half_life_days=30.0, floor=0.8)
    assert Settings().open_files_boost is False
    settings, problems = parse_settings(
        {"recency": {"enabled": True, "halfLifeDays": 7, "floor": 0.5}, "openFilesBoost": True}
    )
    assert problems == []
    assert settings.recency == Recency(enabled=True, half_life_days=7.0, floor=0.5)
    assert settings.open_files_boost is True
    assert parse_settings({"recency": {"enabled": True}})[0].recency == Recency(enabled=True)


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ({"recency": True}, "ragls.recency:"),
        ({"recency": {"enabled": "yes"}}, "ragls.recency.enabled"),
        ({"recency": {"halfLifeDays": 0}}, "ragls.recency.halfLifeDays"),
        ({"recency": {"halfLifeDays": float("nan")}}, "ragls.recency.halfLifeDays"),
        ({"recency": {"floor": 1.5}}, "ragls.recency.floor"),
        ({"recency": {"floor": True}}, "ragls.recency.floor"),
        ({"recency": {"halfLife": 3}}, "ragls.recency.halfLife"),
        ({"openFilesBoost": 1.2}, "ragls.openFilesBoost"),
    ],
)
def test_bad_recency_settings_are_named_and_defaulted(raw: dict[str, Any], path: str) -> None:
    settings, problems = parse_settings(raw)
    assert settings == Settings()
    assert len(problems) == 1 and problems[0].startswith(path), problems
