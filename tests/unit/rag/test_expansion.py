"""Multi-query expansion against an OpenAI-compatible chat server in a thread: rewrites searched and fused by RRF."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from ragls.config import Settings, parse_settings
from ragls.embedders.chat import expansion_from_setting, parse_rewrites
from ragls.errors import ConfigError
from ragls.model import Document, SearchResult
from ragls.rag.expansion import fuse_rankings
from ragls.rag.service import RagService
from tests.unit.rag.model_servers import model_server

pytestmark = pytest.mark.timeout(60)

# The question's words are in none of the files; the rewrites name what the code calls it.
FILES = {
    "retry.py": "def backoff_delay(attempt):\n    return min(2 ** attempt, 60)\n",
    "pool.py": "class ConnectionPool:\n    def acquire(self):\n        return self.idle.pop()\n",
    "notes.md": "# Release notes\n\nNothing about networking here.\n",
}
QUESTION = "how long do we wait before trying again"
REWRITES = '1. backoff delay\n- "retry attempt"\nhow long do we wait before trying again\n\nbackoff delay\n'


def workspace(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def chat(content: str) -> Any:
    def reply(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        message = {"role": "assistant", "content": content}
        return 200, {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}

    return reply


def session(root: Path, **settings: Any) -> RagService:
    parsed, problems = parse_settings(settings)
    assert not problems
    service = RagService(root, parsed)
    service.index_directory()
    return service


def files_found(service: RagService, query: str = QUESTION) -> list[str]:
    return [result.document.metadata["file"] for result in service.search(query, 5)]


def test_without_expansion_the_question_alone_finds_nothing_about_retries(tmp_path: Path) -> None:
    service = session(workspace(tmp_path))
    assert service.expansion is None
    assert "retry.py" not in files_found(service)


def test_rewrites_are_searched_and_fused_with_the_question(tmp_path: Path) -> None:
    with model_server(chat(REWRITES)) as server:
        setting = {"url": server.url, "model": "qwen2.5-coder", "apiKey": "secret", "count": 2}
        service = session(workspace(tmp_path), queryExpansion=setting)
        results = service.search(QUESTION, 5)
    assert results[0].document.metadata["file"] == "retry.py"
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    request = server.requests[-1]
    assert request["path"] == "/v1/chat/completions"
    assert request["model"] == "qwen2.5-coder"
    assert request["messages"][-1] == {"role": "user", "content": QUESTION}
    assert "2 different search queries" in request["messages"][0]["content"]
    assert server.headers[-1]["Authorization"] == "Bearer secret"
    assert service.take_notices() == []


def test_a_slow_endpoint_gives_way_to_the_plain_search(tmp_path: Path) -> None:
    with model_server(chat(REWRITES), delay=3.0) as server:
        service = session(workspace(tmp_path), queryExpansion={"url": server.url, "model": "m", "timeout": 0.3})
        plain = RagService(service.root, Settings())
        plain.index_directory()
        started = time.monotonic()
        found = files_found(service)
        assert time.monotonic() - started < 2.0
        assert found == files_found(plain)
    notices = service.take_notices()
    assert len(notices) == 1 and "did not answer within 0.3 s" in notices[0], notices
    assert "searching with the question alone" in notices[0]


@pytest.mark.parametrize("answer", [(500, {"error": "no such model"}), (200, {"choices": []})])
def test_a_failing_endpoint_is_told_once(tmp_path: Path, answer: tuple[int, Any]) -> None:
    with model_server(lambda path, body: answer) as server:
        service = session(workspace(tmp_path), queryExpansion={"url": server.url + "/v1", "model": "m"})
        assert service.expansion is not None
        service.expansion.outages.retry_after = 0.0
        for _ in range(3):
            assert "retry.py" not in files_found(service)
    assert len(server.requests) == 3
    notices = service.take_notices()
    assert len(notices) == 1 and "query expansion with chat:m failed" in notices[0], notices


def test_rewrites_are_read_from_lines_without_markers_or_repeats() -> None:
    assert parse_rewrites(REWRITES, QUESTION, 3) == ["backoff delay", "retry attempt"]
    assert parse_rewrites("a\nb\nc\nd", "q", 2) == ["a", "b"]
    assert parse_rewrites("  \n", "q", 3) == []


def test_rrf_fusion_keeps_the_question_first_on_ties_and_caps_files() -> None:
    def results(*names: str, score: float = 1.0) -> list[SearchResult]:
        return [SearchResult(Document(n, n, {"file": n[0]}), score - i / 10) for i, n in enumerate(names)]

    fused = fuse_rankings([results("a1", "b1"), results("b1", "a1"), results("c1", "a2", "a3", "a4")], 3, 10)
    assert [r.document.id for r in fused] == ["a1", "b1", "c1", "a2", "a3"]  # a4 is a's fourth chunk
    assert [r.score for r in fused] == [1.0, 1.0, 1.0, 0.9, 0.8]
    assert len(fuse_rankings([results("a1", "b1", "c1")], 3, 2)) == 2


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"model": "m"}, "ragls.queryExpansion.url"),
        ({"url": "http://h"}, "ragls.queryExpansion.model"),
        ({"url": "http://h", "model": "m", "count": 9}, "ragls.queryExpansion.count: expected 1..8"),
        ({"url": "http://h", "model": "m", "timeout": -1}, "ragls.queryExpansion.timeout"),
        ({"url": "http://h", "model": "m", "provider": "x"}, "unknown key(s) provider"),
    ],
)
def test_bad_settings_name_the_key(setting: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        expansion_from_setting(setting)


def test_the_setting_parses_and_is_off_by_default(tmp_path: Path) -> None:
    assert Settings().query_expansion is None
    assert expansion_from_setting(None) is None
    chosen = expansion_from_setting({"url": "http://h:1/v1/chat/completions", "model": "m"})
    assert chosen is not None and chosen.timeout == 5.0 and chosen.expander.count == 3
    assert chosen.expander.url == "http://h:1/v1/chat/completions"
    parsed, problems = parse_settings({"queryExpansion": "always"})
    assert parsed.query_expansion is None and "ragls.queryExpansion" in problems[0]
    service = session(workspace(tmp_path), queryExpansion={"model": "m"})
    assert service.expansion is None
    assert any("searching without query expansion" in notice for notice in service.take_notices())
