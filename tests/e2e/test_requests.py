"""Every rag/* request of PROTOCOL.md, its result shape and its errors, over real stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.conftest import Session, start_session
from tests.sample_workspace import write_tree

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


async def expect_invalid(session: Session, method: str, params: dict, field: str) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await session.request(method, params)
    assert caught.value.code == -32602, caught.value
    assert field in str(caught.value), caught.value


async def test_search_finds_the_chunk_with_citations(session: Session) -> None:
    answer = await session.search("bearer token authentication middleware", topK=5)
    assert answer["complete"] is True
    assert isinstance(answer["tookMs"], float | int)
    top = answer["results"][0]
    assert top["metadata"]["file"] == "src/auth/middleware.py"
    assert top["metadata"]["language"] == "python"
    assert top["metadata"]["source"] == "file"
    assert top["uri"] == (session.root / "src/auth/middleware.py").as_uri()
    assert top["range"]["start"]["line"] == top["metadata"]["startLine"] - 1
    assert top["range"]["end"]["line"] == top["metadata"]["endLine"] - 1
    assert top["id"].startswith("src/auth/middleware.py#")


async def test_search_respects_ignore_rules_and_default_skips(session: Session) -> None:
    for query in ("swordfish launch code", "generated_code"):
        results = (await session.search(query))["results"]
        assert all(r["metadata"]["file"] not in ("secret_notes.txt", "build/generated.py") for r in results)


async def test_search_filters_by_metadata(session: Session) -> None:
    results = (await session.search("route request", filters={"language": "javascript"}))["results"]
    assert results and all(r["metadata"]["language"] == "javascript" for r in results)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": 7}, "query"),
        ({"query": "x", "topK": 0}, "topK"),
        ({"query": "x", "topK": 101}, "topK"),
        ({"query": "x", "folder": "file:///nonexistent-folder"}, "folder"),
        ({"query": "x", "filters": ["language"]}, "filters"),
        ({"query": "x", "minScore": -0.1}, "minScore"),
        ({"query": "x", "minScore": 1.5}, "minScore"),
        ({"query": "x", "minScore": "0.5"}, "minScore"),
        ({"query": "x", "minScore": True}, "minScore"),
    ],
)
async def test_search_rejects_bad_params(session: Session, params: dict, field: str) -> None:
    await expect_invalid(session, "rag/search", params, field)


async def test_min_score_leaves_out_results_scoring_less(session: Session) -> None:
    every = (await session.search("request token"))["results"]
    scores = [result["score"] for result in every]
    assert len(every) >= 2 and all(0 <= score <= 1 for score in scores) and scores[0] == 1.0
    threshold = (scores[0] + scores[1]) / 2
    kept = (await session.search("request token", minScore=threshold))["results"]
    assert [r["id"] for r in kept] == [r["id"] for r in every if r["score"] >= threshold] == [every[0]["id"]]
    assert (await session.search("request token", minScore=0))["results"] == every
    prompt = await session.request("rag/contextPrompt", {"query": "request token", "minScore": threshold})
    assert [r["id"] for r in prompt["results"]] == [every[0]["id"]]
    command = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="ragls.search", arguments=[{"query": "request token", "minScore": 1}])
    )
    assert [r["id"] for r in command["results"]] == [every[0]["id"]]
    await expect_invalid(session, "rag/contextPrompt", {"query": "x", "minScore": 2}, "minScore")


async def test_files_open_in_the_editor_rank_first_with_the_open_file_boost(
    client: LanguageClient, tmp_path: Path
) -> None:
    code = "def settle_invoice(invoice):\n    return invoice.total - invoice.discount\n"
    root = write_tree(tmp_path / "workspace", {"a_copy.py": code, "b_copy.py": code})
    session = await start_session(client, root, "neovim@v0.10.0", init_options={"openFilesBoost": True})
    assert session.initialize_result is not None
    sync = session.initialize_result.capabilities.text_document_sync
    # Clients send didOpen and didClose (never the buffers' changes: files are read from disk).
    assert isinstance(sync, types.TextDocumentSyncOptions) and sync.open_close is True
    assert sync.change == types.TextDocumentSyncKind.None_
    await session.wait_indexed()

    def files(results: list[dict[str, Any]]) -> list[str]:
        return [result["metadata"]["file"] for result in results]

    # The two copies score alike; ties go by id.
    assert files((await session.search("settle invoice total"))["results"]) == ["a_copy.py", "b_copy.py"]
    uri = (root / "b_copy.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=code))
    )
    boosted = await session.wait_search(
        "settle invoice total", lambda found: files(found) == ["b_copy.py", "a_copy.py"]
    )
    assert boosted[0]["score"] == 1.0 and boosted[1]["score"] == pytest.approx(0.8, abs=1e-6)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    await session.wait_search("settle invoice total", lambda found: files(found) == ["a_copy.py", "b_copy.py"])


async def test_context_prompt_fenced_and_plain(session: Session) -> None:
    fenced = await session.request("rag/contextPrompt", {"query": "How are tokens <checked>?", "topK": 2})
    assert fenced["prompt"].startswith("<tnsai-memory>\n<evidence>\n<document-id>")
    assert fenced["prompt"].endswith("<tnsai-user-message>\nHow are tokens <checked>?\n</tnsai-user-message>")
    # The whole module is one chunk (its class and function are small enough to pack together).
    assert [result["metadata"]["file"] for result in fenced["results"]] == ["src/auth/middleware.py"]
    plain = await session.request("rag/contextPrompt", {"query": "connection pool", "format": "plain"})
    assert plain["prompt"].startswith("[Relevant code context]\n--- file: src/db/pool.py (lines ")
    assert plain["prompt"].endswith("[User question]\nconnection pool")
    nothing = await session.request("rag/contextPrompt", {"query": "zzzqqq"})
    assert nothing == {"prompt": "zzzqqq", "results": []}
    await expect_invalid(session, "rag/contextPrompt", {"query": "x", "format": "html"}, "format")


async def test_status_reports_counts(session: Session) -> None:
    status = await session.request("rag/status", {})
    (folder,) = status["folders"]
    assert folder["folder"] == session.root.as_uri()
    assert folder["state"] == "idle"
    assert folder["files"] == 4
    assert folder["chunks"] >= 6
    assert folder["generation"] >= 1
    assert folder["indexedPath"] == str(session.root)
    assert folder["skipped"]["ignored"] >= 2
    assert folder["error"] is None
    assert folder["lastIndexedAt"].endswith("Z")


async def test_documents_add_get_list_remove(session: Session) -> None:
    added = await session.request(
        "rag/addDocument",
        {"content": "Deploys go out on Tuesdays via the blue pipeline.", "metadata": {"topic": "deploy", "my-key": 1}},
    )
    document_id = added["id"]
    got = await session.request("rag/getDocument", {"id": document_id})
    assert got["document"]["metadata"] == {"topic": "deploy", "my-key": 1, "source": "manual"}
    listed = await session.request("rag/listDocuments", {})
    assert [d["id"] for d in listed["documents"]] == [document_id]
    assert listed["documents"][0]["contentLength"] == len("Deploys go out on Tuesdays via the blue pipeline.")
    found = (await session.search("when do deploys go out"))["results"]
    assert found[0]["id"] == document_id and "uri" not in found[0]
    assert (await session.request("rag/removeDocument", {"id": document_id})) == {"removed": True}
    assert (await session.request("rag/removeDocument", {"id": document_id})) == {"removed": False}
    assert (await session.request("rag/getDocument", {"id": document_id})) == {"document": None}
    await expect_invalid(session, "rag/addDocument", {"content": "  "}, "content")
    await expect_invalid(session, "rag/removeDocument", {}, "id")


async def test_reindex_and_clear(session: Session) -> None:
    before = (await session.request("rag/status", {}))["folders"][0]["generation"]
    after = await session.request("rag/reindex", {"full": True})
    assert after["folders"][0]["generation"] == before + 1
    assert after["folders"][0]["chunks"] > 0
    cleared = await session.request("rag/clear", {})
    assert cleared["folders"][0]["chunks"] == 0
    assert (await session.search("ConnectionPool"))["results"] == []
    again = await session.request("rag/reindex", {})
    assert again["folders"][0]["chunks"] > 0
    await expect_invalid(session, "rag/reindex", {"full": "yes"}, "full")


async def test_workspace_symbol_ranks_exact_then_prefix(session: Session) -> None:
    symbols = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="check"))
    assert symbols[0].name == "check"
    assert symbols[0].container_name == "AuthMiddleware"
    assert symbols[0].kind == types.SymbolKind.Method
    assert symbols[0].location.uri == (session.root / "src/auth/middleware.py").as_uri()
    fuzzy = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="CoPo"))
    assert fuzzy[0].name == "ConnectionPool"
    every = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    assert {"AuthMiddleware", "Router", "Rate limiting"} <= {s.name for s in every}


async def test_execute_command_runs_the_requests(session: Session) -> None:
    found = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="ragls.search", arguments=[{"query": "connection pool", "topK": 1}])
    )
    assert found["results"][0]["metadata"]["file"] == "src/db/pool.py"
    status = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="ragls.status", arguments=[])
    )
    assert status["folders"][0]["state"] == "idle"
    prompt = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="ragls.contextPrompt", arguments=[{"query": "router", "format": "plain"}])
    )
    assert "web/router.js" in prompt["prompt"]
    reindexed = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="ragls.reindex", arguments=[{}])
    )
    assert reindexed["folders"][0]["generation"] >= 2
