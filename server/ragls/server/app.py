"""The ragls language server: folders as sessions, background indexing, settings and freshness."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)

from ragls import __version__
from ragls.config import Settings, parse_settings
from ragls.embedders.settings import provider_from_setting
from ragls.errors import ConfigError, RaglsError
from ragls.ingest.watch import FolderWatcher
from ragls.rag.freshness import FreshnessQueue
from ragls.rag.indexer import Cancelled
from ragls.rag.service import RagService
from ragls.server import envelope
from ragls.server.folders import Folder, Folders, folder_key
from ragls.server.progress import IndexProgress
from ragls.server.protocol import bounded

log = logging.getLogger(__name__)


def dict_params_converter() -> Any:
    """pygls's converter, but custom params and results stay plain dicts (keys are never renamed)."""
    converter = default_converter()

    def keep(obj: Any, cls: type) -> Any:
        # JSON-RPC lets a request or notification leave out `params`; treat that as null.
        if "method" in obj and "params" not in obj:
            obj = {**obj, "params": None}
        return cls(**obj)

    for message_type in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message_type, keep)
    return converter


class RaglsProtocol(LanguageServerProtocol):
    """Replies whose results we build as JSON go out without cattrs walking them.

    Our own methods answer with plain dicts (see `wire.py`) and workspace/symbol with a list of them; cattrs
    walking one first took as long as encoding it (a search's reply on flask, 18 KB: 0.48 ms with the walk,
    0.23 ms without). Anything in such a result that JSON cannot write still reaches `_serialize_message`
    through `json.dumps`'s `default`. Other replies (lsprotocol values) go the usual way.
    """

    def _serialize_message(self, data: Any) -> Any:
        result = getattr(data, "result", None)
        if type(result) is dict or (type(result) is list and result and type(result[0]) is dict):
            return {"id": data.id, "jsonrpc": data.jsonrpc, "result": result}
        return super()._serialize_message(data)

    def receive(self, body: bytes) -> None:
        """One framed body from the client: handled, or answered with the error that says why it cannot be.

        pygls's own reading would answer nothing for most bad messages and pop up "Error in server" instead.
        """
        try:
            message = envelope.read(body)
            if self._shutdown and "id" in message and message.get("method", types.EXIT) != types.EXIT:
                raise envelope.Rejected(envelope.INVALID_REQUEST, "the server is shutting down", [message["id"]])
            structured = self._structured(message)
        except envelope.Rejected as rejected:
            log.warning("rejected a message from the client: %s", rejected.message)
            for answer in rejected.answers():
                self._send_data(answer)
            return
        self.handle_message(structured)

    def _structured(self, message: dict[str, Any]) -> Any:
        """The message as pygls's types; params that cannot be read are rejected (a response fails its request)."""
        if "method" not in message:
            try:
                return self.structure_message(message)
            except Exception as exc:
                error = types.ResponseError(code=envelope.INVALID_REQUEST, message=f"unreadable response: {exc}")
                self._handle_response(message["id"], None, error)
                raise envelope.Rejected(envelope.INVALID_REQUEST, "an unreadable response", []) from None
        is_request = "id" in message
        generic = JsonRPCRequestMessage if is_request else JsonRPCNotification
        try:
            return self._converter.structure(message, self.get_message_type(message["method"]) or generic)
        except Exception as exc:
            raise envelope.Rejected(
                envelope.INVALID_PARAMS, envelope.unreadable(exc), [message["id"]] if is_request else []
            ) from None

    def _send_response(self, msg_id: Any, result: Any | None = None, error: types.ResponseError | None = None) -> None:
        """Errors go out without pygls's traceback in `data`, and with a message of bounded length."""
        if error is not None:
            data = None if error.code == JsonRpcInternalError.CODE else error.data
            error = types.ResponseError(code=error.code, message=bounded(error.message), data=data)
        super()._send_response(msg_id, result, error)


class RaglsServer(LanguageServer):
    """Holds the open folders and runs their index work off the event loop."""

    protocol: RaglsProtocol

    def __init__(self) -> None:
        # Documents are read from disk, never from the editor's buffers: ask for no change events (didOpen and
        # didClose say which files are open, for the open-file boost).
        super().__init__(
            "ragls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.None_,
            protocol_cls=RaglsProtocol,
            converter_factory=dict_params_converter,
        )
        self.ready = asyncio.Event()
        self.shutting_down = False
        self.active_runs: set[threading.Event] = set()
        self.settings = Settings()
        self.initialization_options: dict[str, Any] = {}
        self.client_settings: dict[str, Any] = {}
        self.folders = Folders(self.settings)
        self.index_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ragls-index")
        self.queues: dict[str, FreshnessQueue] = {}
        self.watchers: dict[str, FolderWatcher] = {}
        self.client_watching = False
        self.reported_problems: set[str] = set()

    # ---------------------------------------------------------------- settings

    def apply_settings(self, raw: dict[str, Any] | None) -> bool:
        """Parse settings (init options overlaid by client configuration); True when they changed."""
        merged = _deep_merge(self.initialization_options, raw or {})
        settings, problems = parse_settings(merged)
        for problem in problems:
            self.warn(f"ragls: bad setting {problem}")
        changed = settings != self.settings
        self.settings = settings
        self.folders.settings = settings
        return changed

    async def pull_configuration(self) -> dict[str, Any] | None:
        """The client's `ragls` section, when it supports workspace/configuration."""
        workspace = self.client_capabilities.workspace
        if not (workspace and workspace.configuration):
            return None
        try:
            answer = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="ragls")])
            )
        except Exception as exc:
            log.info("workspace/configuration failed: %s", exc)
            return None
        section = answer[0] if answer else None
        return section if isinstance(section, dict) else None

    async def until_ready(self, timeout: float = 30.0) -> None:
        """Requests that arrive before `initialized` has opened the folders wait for it."""
        if self.ready.is_set():
            return  # every request after the first few: no task for wait_for to start
        try:
            await asyncio.wait_for(self.ready.wait(), timeout)
        except TimeoutError:
            log.warning("answering before the workspace folders were opened")

    async def load_embedding(self) -> None:
        """The dense provider the settings ask for, loaded off the event loop; none means lexical only."""
        setting = self.settings.embedding
        try:
            provider = await asyncio.get_running_loop().run_in_executor(
                None, provider_from_setting, setting, self.settings.cache_dir
            )
        except ConfigError as exc:
            self.warn(f"ragls: {exc}; searching without dense vectors")
            provider = None
        self.folders.embedding = provider

    def warn(self, message: str) -> None:
        """Tell the user once, through showMessage and the log."""
        log.warning("%s", message)
        if message in self.reported_problems:
            return
        self.reported_problems.add(message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=message))

    # ---------------------------------------------------------------- folders

    def open_folder(self, uri: str) -> Folder:
        folder = self.folders.add(uri)
        key = folder_key(uri)
        if key not in self.queues:
            loop = asyncio.get_running_loop()
            self.queues[key] = FreshnessQueue(
                lambda: folder.service, on_done=lambda summary, error: self.after_refresh(loop, folder, error)
            )
        if self.server_watching_wanted():
            self.start_server_watcher(folder)
        folder.service.mark_pending()
        asyncio.get_running_loop().create_task(self.index_folder(folder))
        return folder

    def after_refresh(self, loop: asyncio.AbstractEventLoop, folder: Folder, error: Exception | None) -> None:
        """After file events were re-ingested (on the freshness thread): tell the user what went wrong, on the loop.

        A failed update leaves the last good generation searchable; the user hears why once per message.
        """
        notices = [f"ragls: {notice}" for notice in folder.service.take_notices()]
        if error is not None:
            notices.append(
                f"ragls: updating {folder.root} after file changes failed: {error}; searching the last complete index"
            )
        for notice in notices:
            try:
                loop.call_soon_threadsafe(self.warn, notice)
            except RuntimeError:  # the loop is closed: the server is shutting down
                log.warning("%s", notice)

    def close_folder(self, uri: str) -> None:
        key = folder_key(uri)
        queue = self.queues.pop(key, None)
        if queue is not None:
            queue.close()
        watcher = self.watchers.pop(key, None)
        if watcher is not None:
            watcher.stop()
        self.folders.remove(uri)

    def server_watching_wanted(self) -> bool:
        mode = self.settings.watch
        return mode == "server" or (mode in ("auto", "client") and not self.client_watching)

    def start_server_watcher(self, folder: Folder) -> None:
        key = folder_key(folder.uri)
        if key in self.watchers:
            return
        queue = self.queues[key]
        watcher = FolderWatcher(folder.root, self.settings.limits, queue.submit)
        self.watchers[key] = watcher
        watcher.start()

    def stop_server_watchers(self) -> None:
        for watcher in self.watchers.values():
            watcher.stop()
        self.watchers.clear()

    def paths_changed(self, paths: list[Path]) -> None:
        """File events and saves: route each path to the innermost folder's freshness queue."""
        by_folder: dict[str, list[str]] = {}
        for path in paths:
            owner = self.folders.owner_of(path)
            if owner is not None and owner[1] not in ("", "."):
                by_folder.setdefault(folder_key(owner[0].uri), []).append(owner[1])
        for key, rel_paths in by_folder.items():
            queue = self.queues.get(key)
            if queue is not None:
                queue.submit(rel_paths)

    # ---------------------------------------------------------------- indexing

    async def index_folder(self, folder: Folder, full: bool = False, service: RagService | None = None) -> None:
        """Index one folder in the background with progress; failures are reported, never raised."""
        service = service or folder.service
        loop = asyncio.get_running_loop()
        progress = IndexProgress(self, loop, "Indexing")
        await progress.begin()
        cancel = threading.Event()
        self.active_runs.add(cancel)
        try:
            summary = await loop.run_in_executor(
                self.index_executor, partial(service.index_directory, folder.root, progress.report, cancel, full)
            )
        except asyncio.CancelledError:
            cancel.set()
            progress.end("cancelled")
            raise
        except Cancelled:
            progress.end("cancelled")
            return
        except RaglsError as exc:
            progress.end(f"failed: {exc}")
            self.warn(f"ragls: indexing {folder.root} failed: {exc}")
            return
        except Exception as exc:
            log.exception("indexing %s crashed", folder.root)
            progress.end(f"failed: {exc}")
            self.warn(f"ragls: indexing {folder.root} failed: {type(exc).__name__}: {exc}")
            return
        finally:
            self.active_runs.discard(cancel)
        for notice in service.take_notices():
            self.warn(f"ragls: {notice}")
        status = service.status()
        progress.end(f"{status.files} files, {status.chunks} chunks in {summary.seconds:.1f}s")

    async def rebuild_for_settings(self) -> None:
        """New settings: build each folder's index anew in the background and swap it in when done."""
        for folder in self.folders.all():
            fresh = RagService(folder.root, self.settings, embedding=self.folders.embedding, persist=True)
            await self.index_folder(folder, service=fresh)
            if fresh.complete:
                old = folder.service
                self.folders.replace_service(folder, fresh)
                old.close()
                old.clear()
            else:
                fresh.close()
        if self.server_watching_wanted():
            self.stop_server_watchers()
            for folder in self.folders.all():
                self.start_server_watcher(folder)
        elif self.settings.watch == "off":
            self.stop_server_watchers()

    def shutdown_work(self) -> None:
        """Stop everything in the background so the process can exit promptly."""
        self.shutting_down = True
        for cancel in self.active_runs:
            cancel.set()
        for queue in self.queues.values():
            queue.close()
        self.stop_server_watchers()
        for folder in self.folders.all():
            try:
                folder.service.close()
            except Exception:  # shutdown still answers, and the other folders still close
                log.exception("closing the session of %s failed", folder.root)
        self.index_executor.shutdown(wait=False, cancel_futures=True)


def _deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def settings_section(options: Any) -> dict[str, Any]:
    """The `ragls` section of initializationOptions or a configuration payload (flat is accepted too)."""
    if not isinstance(options, dict):
        return {}
    section = options.get("ragls", options)
    return section if isinstance(section, dict) else {}


class _QuietInvalidParams(logging.Filter):
    """A bad request is the client's mistake and is answered as such; it needs no traceback in the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], JsonRpcInvalidParams))


def run_server(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087) -> None:
    """Start serving on stdio (default) or TCP."""
    from ragls.server.handlers import create_server
    from ragls.server.stdio import serve_stdio, serve_tcp

    logging.getLogger("pygls.protocol.json_rpc").addFilter(_QuietInvalidParams())
    server = create_server()
    if tcp:
        serve_tcp(server, host, port)
    else:
        serve_stdio(server)
