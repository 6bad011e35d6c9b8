"""Text that is not valid Unicode never breaks persistence: a file name's undecodable bytes are saved and
loaded back, and a lone surrogate in a request is InvalidParams naming the field, before anything is saved."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ragls.config import Settings
from ragls.rag import service as service_module
from ragls.rag.service import RagService
from ragls.rag.store import list_stores
from tests.robustness.stdio_client import Server, frame_bytes

pytestmark = pytest.mark.timeout(90)

BAD_NAME = b"bad\xff.py"
INVALID_PARAMS = -32602


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pool.py").write_text("def acquire_connection():\n    return 1\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(root), BAD_NAME), "wb") as handle:
        handle.write(b"def undecodable_name_marker():\n    return 2\n")
    return root


def stored_files(cache: Path) -> int:
    (info,) = list_stores(cache / "ragls")
    return info.files


def test_a_file_name_that_is_not_utf8_is_saved_and_loaded_back(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    cache = tmp_path / "cache"
    with Server(tmp_path, cache, "first") as server:
        server.initialize(root)
        assert server.wait_indexed()["files"] == 2
        server.shutdown()
    assert stored_files(cache) == 2  # was 0: every save failed on the name
    with Server(tmp_path, cache, "second") as server:
        server.initialize(root)
        assert server.wait_indexed()["files"] == 2
        (symbol,) = server.result("workspace/symbol", {"query": "undecodable_name_marker"})
        assert symbol["location"]["uri"].endswith("/bad%FF.py")
        server.shutdown()
    for name in ("first", "second"):
        log = (tmp_path / f"{name}-stderr.txt").read_text(encoding="utf-8", errors="replace")
        assert "a job failed" not in log and "saving the index" not in log, log[-2000:]


def surrogate_request(request_id: int, method: str, params: Any) -> bytes:
    """A request as JSON text with a lone surrogate in it (json.dumps writes it as the escape `\\ud800`)."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


LONE = "\ud800"
COMMAND_SEARCH = {"command": "ragls.search", "arguments": [{"query": f"pool {LONE}"}]}
# method, params, the field the error names
SURROGATE_CASES = [
    ("workspace/symbol", {"query": LONE}, "query"),
    ("rag/status", {"folder": f"file:///tmp/{LONE}"}, "folder"),
    ("rag/search", {"query": f"pool {LONE}"}, "query"),
    ("rag/search", {"query": "pool", "filters": {"file": LONE}}, "filters.file"),
    ("rag/contextPrompt", {"query": "\udcff pool"}, "query"),
    ("rag/addDocument", {"content": f"a note {LONE}"}, "content"),
    ("rag/addDocument", {"content": "a note", "metadata": {"title": LONE}}, "metadata.title"),
    ("rag/addDocument", {"content": "a note", "metadata": {LONE: 1}}, "metadata."),
    ("rag/addDocument", {"content": "a note", "id": f"note-{LONE}"}, "id"),
    ("rag/getDocument", {"id": LONE}, "id"),
    ("workspace/executeCommand", COMMAND_SEARCH, "arguments[0].query"),
]


def test_lone_surrogates_are_invalid_params_naming_the_field(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    with Server(tmp_path) as server:
        server.initialize(root)
        server.wait_indexed()
        for request_id, (method, params, field) in enumerate(SURROGATE_CASES, start=1):
            server.send(frame_bytes(surrogate_request(request_id, method, params)))
            error = server.answer(request_id)["error"]
            assert error["code"] == INVALID_PARAMS and error["message"].startswith(field), (method, error)
            assert "surrogate" in error["message"], error
        assert server.result("rag/listDocuments", {})["documents"] == []
        server.shutdown()


def test_after_a_rejected_document_saving_still_works_across_a_restart(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    cache = tmp_path / "cache"
    with Server(tmp_path, cache, "first") as server:
        server.initialize(root)
        server.wait_indexed()
        server.send(frame_bytes(surrogate_request(1, "rag/addDocument", {"content": f"bad {LONE} note"})))
        assert server.answer(1)["error"]["code"] == INVALID_PARAMS  # was {id}, then a failed save
        added = server.result("rag/addDocument", {"content": "Deploys go out on Tuesdays", "id": "deploys"})
        assert added == {"id": "deploys"}
        server.shutdown()  # answered -32603 once the snapshot could not be written
    with Server(tmp_path, cache, "second") as server:
        server.initialize(root)
        server.wait_indexed()
        document = server.result("rag/getDocument", {"id": "deploys"})["document"]
        assert document["content"] == "Deploys go out on Tuesdays"
        server.shutdown()


def persistent_session(tmp_path: Path) -> RagService:
    return RagService(workspace(tmp_path), Settings(cache_dir=str(tmp_path / "cache"), embedding="none"), persist=True)


def surrogate_error(*args: Any) -> None:
    raise UnicodeEncodeError("utf-8", LONE, 0, 1, "surrogates not allowed")


def test_a_snapshot_that_cannot_be_written_neither_kills_its_timer_nor_fails_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uncaught: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook_args: uncaught.append(hook_args.exc_value))
    monkeypatch.setattr(service_module, "SNAPSHOT_AFTER_RUN_SECONDS", 0.05)
    attempts: list[str] = []

    def failing_write(*args: Any) -> None:
        attempts.append(threading.current_thread().name)
        surrogate_error()

    monkeypatch.setattr("ragls.rag.snapshot.write", failing_write)
    session = RagService(
        workspace(tmp_path), Settings(cache_dir=str(tmp_path / "cache"), embedding="none"), persist=True
    )
    session.index_directory()
    deadline = time.monotonic() + 10
    while not attempts and time.monotonic() < deadline:
        time.sleep(0.02)
    assert attempts and attempts[0] != threading.current_thread().name  # the timer tried, on its own thread
    session.close()  # tries once more on the way out; used to raise (and answer shutdown with -32603)
    assert len(attempts) == 2 and uncaught == []


def test_a_save_that_fails_in_any_way_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragls.rag.store.IndexStore.save", surrogate_error)
    session = RagService(
        workspace(tmp_path), Settings(cache_dir=str(tmp_path / "cache"), embedding="none"), persist=True
    )
    session.index_directory()
    (notice,) = session.take_notices()
    assert "saving the index" in notice and "UnicodeEncodeError" in notice
    assert session.add_document("still searchable afterwards", document_id="after")
    assert session.search("searchable afterwards")[0].document.id == "after"
    session.close()
