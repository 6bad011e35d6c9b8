"""Live freshness through both watch paths: the client's registered watcher and the server's own."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import Session, start_session

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]

CLIENT_WATCH = "visual-studio-code@v1.65.2"  # registers workspace/didChangeWatchedFiles dynamically
SERVER_WATCH = "neovim@v0.10.0"  # cannot, so the server watches the folder itself


class Editor:
    """Changes files on disk and, when the client watches, tells the server like an editor would."""

    def __init__(self, session: Session, client_watches: bool) -> None:
        self.session = session
        self.client_watches = client_watches

    def notify(self, rel: str, change: types.FileChangeType) -> None:
        if self.client_watches:
            uri = (self.session.root / rel).as_uri()
            self.session.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri, type=change)])
            )

    def write(self, rel: str, text: str) -> None:
        path = self.session.root / rel
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.notify(rel, types.FileChangeType.Changed if existed else types.FileChangeType.Created)

    def delete(self, rel: str) -> None:
        (self.session.root / rel).unlink()
        self.notify(rel, types.FileChangeType.Deleted)

    def rename(self, old: str, new: str) -> None:
        (self.session.root / old).rename(self.session.root / new)
        self.notify(old, types.FileChangeType.Deleted)
        self.notify(new, types.FileChangeType.Created)


def files_of(results: list[dict]) -> set[str]:
    return {r["metadata"]["file"] for r in results}


@pytest.fixture(params=[CLIENT_WATCH, SERVER_WATCH])
def watch_client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture
async def editor(client: LanguageClient, workspace: Path, watch_client: str) -> Editor:
    session = await start_session(client, workspace, watch_client)
    await session.wait_indexed()
    client_watches = watch_client == CLIENT_WATCH
    methods = [r.method for r in session.registrations]
    assert (types.WORKSPACE_DID_CHANGE_WATCHED_FILES in methods) == client_watches
    if not client_watches:
        await asyncio.sleep(0.5)  # let the server's watcher arm itself before the first change
    return Editor(session, client_watches)


async def test_edit_create_delete_rename(editor: Editor) -> None:
    session = editor.session
    editor.write("src/db/pool.py", "class ConnectionPool:\n    def drain_quietly(self):\n        return []\n")
    await session.wait_search("drain_quietly", lambda r: "src/db/pool.py" in files_of(r))
    editor.write("src/new_module.py", "def freshly_created_helper():\n    return 42\n")
    await session.wait_search("freshly_created_helper", lambda r: "src/new_module.py" in files_of(r))
    symbols = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="freshly_created"))
    assert symbols and symbols[0].name == "freshly_created_helper"
    editor.rename("src/new_module.py", "src/renamed_module.py")
    await session.wait_search("freshly_created_helper", lambda r: files_of(r) == {"src/renamed_module.py"})
    editor.delete("src/renamed_module.py")
    await session.wait_search("freshly_created_helper", lambda r: "src/renamed_module.py" not in files_of(r))


async def test_ignore_rules_apply_to_events(editor: Editor) -> None:
    session = editor.session
    editor.write(".#lockfile.py", "def lock_file_content(): pass\n")
    editor.write("node_modules/pkg/index.js", "function vendoredThing() {}\n")
    editor.write("src/visible.py", "def visible_marker(): pass\n")
    await session.wait_search("visible_marker", lambda r: "src/visible.py" in files_of(r))
    for query in ("lock_file_content", "vendoredThing"):
        assert (await session.search(query))["results"] == [] or all(
            f in ("src/visible.py",) for f in files_of((await session.search(query))["results"])
        )
    # An edited ignore file re-evaluates its subtree: newly ignored files go, re-included ones come back.
    editor.write(".gitignore", "secret_notes.txt\nsrc/visible.py\n")
    await session.wait_search("visible_marker", lambda r: "src/visible.py" not in files_of(r))
    editor.write(".gitignore", "")
    await session.wait_search("swordfish launch code", lambda r: "secret_notes.txt" in files_of(r))
    await session.wait_search("visible_marker", lambda r: "src/visible.py" in files_of(r))


async def test_did_save_triggers_when_watching_is_off(client: LanguageClient, workspace: Path) -> None:
    session = await start_session(client, workspace, CLIENT_WATCH, init_options={"watch": "off"})
    await session.wait_indexed()
    assert session.registrations == []
    path = workspace / "src/saved.py"
    path.write_text("def saved_by_the_editor(): pass\n", encoding="utf-8")
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()))
    )
    await session.wait_search("saved_by_the_editor", lambda r: "src/saved.py" in files_of(r))
