"""Limits over real stdio: initializationOptions set them, a bad value is named by its setting, a breach says
what was found in the editor's terms, and a folder whose .gitignore ignores everything is reported."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import start_session, write_tree

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


async def wait_message(client: LanguageClient, needle: str, timeout: float = 30.0) -> str:
    """The first showMessage that contains `needle`."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for message in client.messages:
            if needle in message.message:
                return message.message
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no message with {needle!r}: {[m.message for m in client.messages]}")
        await asyncio.sleep(0.05)


async def test_a_breach_names_the_setting_and_what_was_found(client: LanguageClient, workspace: Path) -> None:
    # The strict preset's decoded budget, lowered beside it: the preset is the base, the key wins.
    init = {"limits": {"preset": "strict", "maxDecodedBytes": 100}}
    session = await start_session(client, workspace, "visual-studio-code@v1.65.2", init_options=init)
    status = await session.wait_for(lambda s: s["folders"] and s["folders"][0]["state"] == "failed")
    error = status["folders"][0]["error"]
    assert error.startswith("maxDecodedBytes limit of 100 exceeded (") and "characters decoded by file 1 of 4" in error
    assert "raise it with the setting `ragls.limits.maxDecodedBytes`" in error
    assert status["folders"][0]["generation"] == 0
    await wait_message(client, "ragls.limits.maxDecodedBytes")


@pytest.mark.parametrize(
    ("limits", "problem"),
    [
        ({"maxFiles": "lots"}, "ragls.limits.maxFiles: expected a positive integer, got 'lots'; using the default"),
        ({"preset": "loose"}, "ragls.limits.preset: expected one of default, strict, got 'loose'; using the default"),
        ({"maxSize": 3}, "ragls.limits.maxSize: unknown limit, ignored (known: maxDecodedBytes, maxFiles, "),
    ],
)
async def test_a_bad_limit_in_initialization_options_is_named(
    client: LanguageClient, workspace: Path, limits: dict[str, object], problem: str
) -> None:
    session = await start_session(client, workspace, "neovim@v0.10.0", init_options={"ragls": {"limits": limits}})
    await wait_message(client, problem)
    await session.wait_indexed()  # with the default kept, the folder indexes
    assert (await session.search("connection pool"))["results"]


async def test_a_folder_whose_gitignore_ignores_everything_warns(client: LanguageClient, tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "kernel",
        {".gitignore": "# Debian's kernel tree\n*.o\n/*\n", "kernel/sched.c": "int schedule(void);\n", "README": ""},
    )
    session = await start_session(client, root, "neovim@v0.10.0")
    status = await session.wait_indexed()
    assert status["folders"][0]["files"] == 0 and status["folders"][0]["state"] == "idle"
    message = await wait_message(client, "no files admitted")
    assert ".gitignore:3 /* ignores 2 (README, kernel/)" in message


async def test_a_breach_while_watching_is_shown_and_keeps_the_last_index(
    client: LanguageClient, workspace: Path
) -> None:
    session = await start_session(
        client, workspace, "visual-studio-code@v1.65.2", init_options={"limits": {"maxFiles": 5}}
    )
    status = await session.wait_indexed()
    indexed = status["folders"][0]["files"]
    assert indexed <= 5
    events = []
    for index in range(6 - indexed):
        path = workspace / "src" / f"burst_{index}.py"
        path.write_text(f"def burst_function_{index}():\n    return {index}\n", encoding="utf-8")
        events.append(types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Created))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=events))
    message = await wait_message(client, "after file changes failed")
    assert "maxFiles limit of 5 exceeded" in message and "ragls.limits.maxFiles" in message
    assert "searching the last complete index" in message
    results = (await session.search("connection pool"))["results"]
    assert any(r["metadata"]["file"] == "src/db/pool.py" for r in results)
    assert not (await session.search("burst_function_0"))["results"] or all(
        not r["metadata"]["file"].startswith("src/burst_")
        for r in (await session.search("burst_function_0"))["results"]
    )
    assert (await session.request("rag/status", {}))["folders"][0]["files"] == indexed
