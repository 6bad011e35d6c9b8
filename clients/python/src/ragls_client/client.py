"""RaglsClient: start `ragls serve` on some folders, wait for their first index, and call `rag/*`."""

from __future__ import annotations

import collections
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ragls_client import __version__
from ragls_client.errors import INDEX_FAILED, METHOD_NOT_FOUND, RaglsError
from ragls_client.transport import Transport

DEFAULT_TIMEOUT = 60.0
POLL_SECONDS = 0.05
NOTIFICATIONS_KEPT = 1000
PathLike = str | os.PathLike[str]

CLIENT_CAPABILITIES: dict[str, Any] = {
    "workspace": {"workspaceFolders": True, "configuration": True, "symbol": {"dynamicRegistration": False}},
    "window": {"workDoneProgress": True, "showMessage": {}},
    "general": {"positionEncodings": ["utf-16"]},
}
"""What the client advertises. It does not watch files, so the server watches the folders itself."""


class RaglsClient:
    """A ragls language server over stdio for one or more folders; use it as a context manager.

    Every method returns the result object of PROTOCOL.md as a plain dict. A request the server
    rejects raises RaglsError with the JSON-RPC code and the server's message; no answer within
    `timeout` seconds raises TimeoutError.
    """

    def __init__(
        self,
        root: PathLike | Sequence[PathLike],
        command: Sequence[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        settings: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        wait_for_index: bool = True,
        on_notification: Callable[[str, Any], None] | None = None,
    ) -> None:
        roots = [root] if isinstance(root, str | os.PathLike) else list(root)
        if not roots:
            raise ValueError("RaglsClient needs at least one folder")
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        self.command = list(command) if command is not None else default_command()
        self.timeout = timeout
        self.settings = dict(settings) if settings is not None else None
        self.env = env
        self.wait_for_index_on_start = wait_for_index
        self.on_notification = on_notification
        self.notifications: collections.deque[tuple[str, Any]] = collections.deque(maxlen=NOTIFICATIONS_KEPT)
        self.server_info: dict[str, Any] = {}
        self._transport: Transport | None = None

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self) -> RaglsClient:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    @property
    def folder_uris(self) -> list[str]:
        return [root.as_uri() for root in self.roots]

    def start(self) -> None:
        """Spawn the server, initialize it with the folders, and (by default) wait for their first index."""
        self._transport = Transport(self.command, self._answer_server, self._record, self.roots[0], self.env)
        try:
            answer = self.request("initialize", self._initialize_params())
            self.server_info = dict(answer.get("serverInfo") or {}) if isinstance(answer, dict) else {}
            self.notify("initialized", {})
            if self.wait_for_index_on_start:
                self.wait_for_index()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Ask the server to shut down and exit; kill it if it does not within the timeout."""
        transport, self._transport = self._transport, None
        if transport is None:
            return
        if transport.alive:
            try:
                transport.request("shutdown", None, min(self.timeout, 10.0))
                transport.notify("exit", None)
            except (RaglsError, TimeoutError):
                pass
        transport.close(min(self.timeout, 10.0))

    def wait_for_index(self, timeout: float | None = None) -> dict[str, Any]:
        """Poll `rag/status` until every folder has `generation >= 1`; the last status.

        A folder whose first run failed raises RaglsError(INDEX_FAILED) with the folder's error.
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            status = self.status()
            folders = status.get("folders", [])
            for folder in folders:
                if folder.get("generation", 0) < 1 and folder.get("state") == "failed":
                    raise RaglsError(INDEX_FAILED, f"indexing {folder.get('folder')} failed: {folder.get('error')}")
            if folders and all(folder.get("generation", 0) >= 1 for folder in folders):
                return status
            if time.monotonic() > deadline:
                raise TimeoutError(f"ragls: the first index did not finish in time; last status {status}")
            time.sleep(POLL_SECONDS)

    # ---------------------------------------------------------------- rag/*

    def search(
        self,
        query: str,
        top_k: int = 10,
        filters: Mapping[str, Any] | None = None,
        folder: str | None = None,
        min_score: float | None = None,
    ) -> dict[str, Any]:
        """`{results, complete, tookMs}`: the chunks and documents that best answer `query`, at least
        `min_score` (0..1 relevance) when given."""
        params = {"query": query, "topK": top_k, "filters": filters, "folder": folder, "minScore": min_score}
        return self._call("rag/search", params)

    def context_prompt(
        self,
        query: str,
        top_k: int = 5,
        format: str = "fenced",
        folder: str | None = None,
        min_score: float | None = None,
    ) -> dict[str, Any]:
        """`{prompt, results}`: a prompt with the evidence for `query` (format `fenced` or `plain`)."""
        params = {"query": query, "topK": top_k, "format": format, "folder": folder, "minScore": min_score}
        return self._call("rag/contextPrompt", params)

    def status(self, folder: str | None = None) -> dict[str, Any]:
        """`{folders: [FolderStatus]}`."""
        return self._call("rag/status", {"folder": folder})

    def reindex(self, folder: str | None = None, full: bool = False) -> dict[str, Any]:
        """`{folders}` once the run has finished; `full` re-reads every file."""
        return self._call("rag/reindex", {"folder": folder, "full": full})

    def add_document(
        self,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
        folder: str | None = None,
    ) -> dict[str, Any]:
        """`{id}`: a manual document, searchable along with the indexed files."""
        return self._call("rag/addDocument", {"content": content, "metadata": metadata, "id": id, "folder": folder})

    def remove_document(self, id: str, folder: str | None = None) -> dict[str, Any]:
        """`{removed}`."""
        return self._call("rag/removeDocument", {"id": id, "folder": folder})

    def get_document(self, id: str, folder: str | None = None) -> dict[str, Any]:
        """`{document}`: `{id, content, metadata}` or None."""
        return self._call("rag/getDocument", {"id": id, "folder": folder})

    def list_documents(self, folder: str | None = None) -> dict[str, Any]:
        """`{documents: [{id, preview, contentLength, metadata}]}`: the manually added documents."""
        return self._call("rag/listDocuments", {"folder": folder})

    def clear(self, folder: str | None = None) -> dict[str, Any]:
        """`{folders}`: every store emptied."""
        return self._call("rag/clear", {"folder": folder})

    def execute_command(self, command: str, params: Mapping[str, Any] | None = None) -> Any:
        """`workspace/executeCommand` for `ragls.search`, `ragls.contextPrompt`, `ragls.reindex` or `ragls.status`."""
        return self.request("workspace/executeCommand", {"command": command, "arguments": [dict(params or {})]})

    def workspace_symbols(self, query: str) -> list[dict[str, Any]]:
        """`workspace/symbol`: symbols fuzzy-matched on their names."""
        return list(self.request("workspace/symbol", {"query": query}) or [])

    # ---------------------------------------------------------------- JSON-RPC

    def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """Any request, for methods this class has no wrapper for."""
        if self._transport is None:
            raise RuntimeError("RaglsClient is not started: use `with RaglsClient(root) as client:`")
        return self._transport.request(method, params, self.timeout if timeout is None else timeout)

    def notify(self, method: str, params: Any = None) -> None:
        if self._transport is not None:
            self._transport.notify(method, params)

    @property
    def server_stderr(self) -> list[str]:
        """The last lines the server wrote to stderr (its log)."""
        return list(self._transport.stderr_tail) if self._transport is not None else []

    def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Optional params left out when unset, so the server applies its documented defaults."""
        result = self.request(method, {key: value for key, value in params.items() if value is not None})
        return result if isinstance(result, dict) else {"result": result}

    def _initialize_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "clientInfo": {"name": "ragls_client", "version": __version__},
            "rootUri": self.folder_uris[0],
            "rootPath": str(self.roots[0]),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name} for root in self.roots],
            "capabilities": CLIENT_CAPABILITIES,
        }
        if self.settings is not None:
            params["initializationOptions"] = {"ragls": self.settings}
        return params

    def _answer_server(self, method: str, params: Any) -> Any:
        """Answers to the server's requests; unknown ones get MethodNotFound, never silence."""
        if method in ("window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability"):
            return None
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            return [self.settings if item.get("section") == "ragls" else None for item in items]
        if method == "workspace/workspaceFolders":
            return [{"uri": root.as_uri(), "name": root.name} for root in self.roots]
        if method == "window/showMessageRequest":
            return None
        if method == "window/showDocument":
            return {"success": False}
        raise RaglsError(METHOD_NOT_FOUND, f"ragls_client does not handle {method}")

    def _record(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        if self.on_notification is not None:
            self.on_notification(method, params)


def default_command() -> list[str]:
    """`ragls serve` from PATH, else the current interpreter's `python -m ragls serve`."""
    executable = shutil.which("ragls")
    return [executable, "serve"] if executable else [sys.executable, "-m", "ragls", "serve"]
