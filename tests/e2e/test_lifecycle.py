"""Progress, multi-root sessions, indexing state, cancellation and settings, over real stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from tests.e2e.conftest import SAMPLE_FILES, start_session, write_tree

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


def big_tree(root: Path, n_files: int) -> Path:
    files = {
        f"pkg{i // 200}/module_{i}.py": f"def function_{i}(value):\n    return value + {i}\n" for i in range(n_files)
    }
    return write_tree(root, files)


@pytest.mark.parametrize("client_name", ["visual-studio-code@v1.65.2", "neovim@v0.10.0"])
async def test_indexing_reports_progress(client: LanguageClient, workspace: Path, client_name: str) -> None:
    session = await start_session(client, workspace, client_name)
    await session.wait_indexed()
    await asyncio.sleep(0.2)  # the end notification follows the commit
    reports = [r for r in client.progress_reports.values() if r and getattr(r[0], "title", None) == "Indexing"]
    assert reports, client.progress_reports
    (steps,) = reports
    assert isinstance(steps[0], types.WorkDoneProgressBegin)
    assert isinstance(steps[-1], types.WorkDoneProgressEnd)
    assert "4 files" in (steps[-1].message or "")
    messages = [s.message or "" for s in steps if isinstance(s, types.WorkDoneProgressReport)]
    # Every phase is told as it starts: the walk, the files read (with a percentage), the index built.
    assert messages[0].startswith("walking the folder: "), messages
    last_read = max(i for i, message in enumerate(messages) if message.startswith("4/4 "))
    assert messages.index("building the search index of 4 files") > last_read, messages
    percentages = {s.message: s.percentage for s in steps if isinstance(s, types.WorkDoneProgressReport)}
    assert percentages[messages[last_read]] == 100 and percentages[messages[0]] is None


async def test_no_progress_for_clients_without_it(client: LanguageClient, workspace: Path) -> None:
    # Older eglot does not advertise window.workDoneProgress: creating a token would be a spec violation,
    # which the test setup turns into an error.
    capabilities = client_capabilities("neovim@v0.10.0")
    assert capabilities.window is not None
    capabilities.window.work_done_progress = False
    session = await start_session(client, workspace, capabilities)
    await session.wait_indexed()
    assert client.progress_reports == {}


async def test_multi_root_add_and_remove(client: LanguageClient, tmp_path: Path) -> None:
    first = write_tree(tmp_path / "first", SAMPLE_FILES)
    second = write_tree(tmp_path / "second", {"lib/billing.py": "def issue_refund(order):\n    return order.total\n"})
    session = await start_session(client, first, "neovim@v0.10.0")
    await session.wait_indexed()
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=second.as_uri(), name="second")], removed=[]
            )
        )
    )
    status = await session.wait_for(
        lambda s: len(s["folders"]) == 2 and all(f["generation"] >= 1 for f in s["folders"])
    )
    assert [f["folder"] for f in status["folders"]] == [first.as_uri(), second.as_uri()]
    both = (await session.search("issue refund order total"))["results"]
    assert both[0]["uri"] == (second / "lib/billing.py").as_uri()
    only_first = (await session.search("issue refund order total", folder=first.as_uri()))["results"]
    assert all(r["uri"].startswith(first.as_uri()) for r in only_first)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=first.as_uri(), name="first")]
            )
        )
    )
    status = await session.wait_for(lambda s: len(s["folders"]) == 1)
    assert status["folders"][0]["folder"] == second.as_uri()
    with pytest.raises(JsonRpcException) as caught:
        await session.search("refund", folder=first.as_uri())
    assert caught.value.code == -32602 and "folder" in str(caught.value)


async def test_status_while_indexing_and_searches_do_not_wait(client: LanguageClient, tmp_path: Path) -> None:
    root = big_tree(tmp_path / "big", 3000)
    session = await start_session(client, root, "neovim@v0.10.0")
    status = await session.request("rag/status", {})
    (folder,) = status["folders"]
    assert folder["state"] == "indexing" and folder["generation"] == 0
    early = await session.search("function_2999")
    assert early["complete"] is False and early["results"] == []
    await session.wait_indexed()
    done = await session.search("function_2999")
    assert done["complete"] is True and done["results"][0]["metadata"]["file"] == "pkg14/module_2999.py"


async def test_reindex_can_be_cancelled(client: LanguageClient, tmp_path: Path) -> None:
    root = big_tree(tmp_path / "big", 3000)
    session = await start_session(client, root, "neovim@v0.10.0")
    first = await session.wait_indexed()
    generation = first["folders"][0]["generation"]
    request = asyncio.ensure_future(
        client.protocol.send_request_async("rag/reindex", {"full": True}, msg_id="reindex-1")
    )
    await asyncio.sleep(0.3)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="reindex-1"))
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(request, 30)
    assert caught.value.code == -32800  # RequestCancelled
    status = await session.wait_for(lambda s: s["folders"][0]["state"] == "idle")
    assert status["folders"][0]["generation"] == generation  # nothing was committed
    assert (await session.search("function_17"))["results"]  # and the index still answers
    again = await session.request("rag/reindex", {})
    assert again["folders"][0]["generation"] == generation + 1


async def test_bad_settings_are_reported_and_defaulted(client: LanguageClient, workspace: Path) -> None:
    session = await start_session(
        client, workspace, "neovim@v0.10.0", init_options={"ragls": {"maxChunksPerFile": "three", "watch": "server"}}
    )
    await session.wait_indexed()
    messages = [m.message for m in client.messages]
    assert any("ragls.maxChunksPerFile" in m for m in messages), messages
    assert (await session.search("connection pool"))["results"]


async def test_limits_from_settings_fail_the_run_clearly(client: LanguageClient, workspace: Path) -> None:
    session = await start_session(client, workspace, "neovim@v0.10.0", init_options={"limits": {"maxFiles": 2}})
    status = await session.wait_for(lambda s: s["folders"] and s["folders"][0]["state"] == "failed")
    error = status["folders"][0]["error"]
    assert "maxFiles" in error and "ragls.limits.maxFiles" in error
    assert status["folders"][0]["generation"] == 0
    assert any("maxFiles" in m.message for m in client.messages)


async def test_configuration_change_rebuilds_the_index(client: LanguageClient, workspace: Path) -> None:
    session = await start_session(client, workspace, "neovim@v0.10.0")
    await session.wait_indexed()
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"ragls": {"maxChunksPerFile": 1, "limits": {"maxFiles": 1}}})
    )
    await session.wait_for(
        lambda s: (
            s["folders"][0]["state"] == "failed"
            or s["folders"][0]["error"] is not None
            or any("maxFiles" in m.message for m in client.messages)
        )
    )
    # The failed rebuild left the previous index in place and searchable.
    assert (await session.search("connection pool"))["results"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"ragls": {"maxChunksPerFile": 1}})
    )
    await session.wait_for(lambda s: s["folders"][0]["generation"] >= 1 and s["folders"][0]["state"] == "idle")
    results = (await session.search("connection pool acquire release", topK=10))["results"]
    files = [r["metadata"]["file"] for r in results]
    assert len(files) == len(set(files))  # one chunk per file now
