"""The optional search stages over real stdio: a reranker that fails is told once, and searches still answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import start_session
from tests.e2e.test_limits import wait_message

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


async def test_a_failing_reranker_is_told_once_and_the_search_still_answers(
    client: LanguageClient, workspace: Path
) -> None:
    init = {"reranker": {"provider": "http", "url": "http://127.0.0.1:9", "model": "m"}}
    session = await start_session(client, workspace, "visual-studio-code@v1.65.2", init_options=init)
    await session.wait_for(lambda s: s["folders"] and s["folders"][0]["state"] == "idle")
    for _ in range(2):
        assert (await session.search("def"))["results"]
    message = await wait_message(client, "showing the fused order")
    assert "cannot reach http://127.0.0.1:9/v1/rerank" in message
    assert sum("showing the fused order" in m.message for m in client.messages) == 1
