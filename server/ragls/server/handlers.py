"""Thin request handlers: check params, call the sessions, convert results to the wire."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ragls.errors import InvalidArgument
from ragls.rag.store import remove_stale_stores
from ragls.server import protocol
from ragls.server.app import RaglsServer, settings_section
from ragls.server.convert import symbol_to_wire
from ragls.server.folders import Folder, uri_path
from ragls.wire import document_info_to_wire, search_result_to_wire, status_to_wire

T = TypeVar("T")
log = logging.getLogger(__name__)
SYMBOL_CAP = 200


def create_server() -> RaglsServer:
    """A server with every feature of PROTOCOL.md registered."""
    server = RaglsServer()
    _register_lifecycle(server)
    _register_rag(server)
    _register_workspace(server)
    return server


def checked(call: Callable[[], T]) -> T:
    """Run an engine call, turning its InvalidArgument into InvalidParams naming the field."""
    try:
        return call()
    except InvalidArgument as exc:
        raise protocol.invalid(exc.field, str(exc)) from exc


# ---------------------------------------------------------------- lifecycle


def _register_lifecycle(server: RaglsServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: RaglsServer, params: types.InitializeParams) -> None:
        ls.initialization_options = settings_section(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RaglsServer, params: types.InitializedParams) -> None:
        ls.apply_settings(settings_section(await ls.pull_configuration()))
        await ls.load_embedding()
        await _choose_watching(ls)
        for uri in _initial_folder_uris(ls):
            ls.open_folder(uri)
        ls.ready.set()
        asyncio.get_running_loop().run_in_executor(None, remove_stale_stores, ls.settings.cache_dir)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RaglsServer, params: Any) -> None:
        ls.shutdown_work()


async def _choose_watching(ls: RaglsServer) -> None:
    """Client-side watching when the client can register it (and the setting allows), else our own."""
    mode = ls.settings.watch
    workspace = ls.client_capabilities.workspace
    dynamic = bool(
        workspace and workspace.did_change_watched_files and workspace.did_change_watched_files.dynamic_registration
    )
    if mode in ("auto", "client") and dynamic:
        registration = types.Registration(
            id=str(uuid.uuid4()),
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
            ),
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            ls.client_watching = True
        except Exception as exc:
            ls.warn(f"ragls: the client refused file watching ({exc}); watching folders from the server")
    elif mode == "client":
        ls.warn('ragls: watch is "client" but the client cannot watch files; watching from the server')


def _initial_folder_uris(ls: RaglsServer) -> list[str]:
    workspace = ls.workspace
    uris = [folder.uri for folder in workspace.folders.values()]
    if not uris and workspace.root_uri:
        uris = [workspace.root_uri]
    return uris


# ---------------------------------------------------------------- rag/*


def _register_rag(server: RaglsServer) -> None:
    @server.feature(protocol.SEARCH)
    async def search(ls: RaglsServer, params: Any) -> dict[str, Any]:
        return await _search(ls, params)

    @server.feature(protocol.CONTEXT_PROMPT)
    async def context_prompt(ls: RaglsServer, params: Any) -> dict[str, Any]:
        return await _context_prompt(ls, params)

    @server.feature(protocol.STATUS)
    async def status(ls: RaglsServer, params: Any) -> dict[str, Any]:
        return await _status(ls, params)

    @server.feature(protocol.REINDEX)
    async def reindex(ls: RaglsServer, params: Any) -> dict[str, Any]:
        return await _reindex(ls, params)

    @server.feature(protocol.ADD_DOCUMENT)
    async def add_document(ls: RaglsServer, params: Any) -> dict[str, Any]:
        p = protocol.parse_add_document(params)
        await ls.until_ready()
        service = ls.folders.target(p.folder).service
        # Off the event loop: the call returns once the document is saved, and saves wait for searches to pause.
        return {"id": await asyncio.to_thread(checked, partial(service.add_document, p.content, p.metadata, p.id))}

    @server.feature(protocol.REMOVE_DOCUMENT)
    async def remove_document(ls: RaglsServer, params: Any) -> dict[str, Any]:
        p = protocol.parse_document_id(params)
        await ls.until_ready()
        folders = ls.folders.select(p.folder)
        removed = await asyncio.to_thread(lambda: [f.service.remove_document(p.id) for f in folders])
        return {"removed": any(removed)}

    @server.feature(protocol.GET_DOCUMENT)
    async def get_document(ls: RaglsServer, params: Any) -> dict[str, Any]:
        p = protocol.parse_document_id(params)
        await ls.until_ready()
        for folder in ls.folders.select(p.folder):
            document = folder.service.get_document(p.id)
            if document is not None:
                return {
                    "document": {"id": document.id, "content": document.content, "metadata": dict(document.metadata)}
                }
        return {"document": None}

    @server.feature(protocol.LIST_DOCUMENTS)
    async def list_documents(ls: RaglsServer, params: Any) -> dict[str, Any]:
        folder_uri = protocol.folder_of(protocol.as_object(params))
        await ls.until_ready()
        folders = ls.folders.select(folder_uri)
        return {"documents": [document_info_to_wire(info) for f in folders for info in f.service.list_documents()]}

    @server.feature(protocol.CLEAR)
    async def clear(ls: RaglsServer, params: Any) -> dict[str, Any]:
        folder_uri = protocol.folder_of(protocol.as_object(params))
        await ls.until_ready()
        folders = ls.folders.select(folder_uri)
        for folder in folders:
            await asyncio.get_running_loop().run_in_executor(ls.index_executor, folder.service.clear)
        return _statuses(folders)

    @server.command(protocol.COMMAND_SEARCH)
    async def command_search(ls: RaglsServer, *args: Any) -> dict[str, Any]:
        return await _search(ls, _command_params(args))

    @server.command(protocol.COMMAND_CONTEXT_PROMPT)
    async def command_context_prompt(ls: RaglsServer, *args: Any) -> dict[str, Any]:
        return await _context_prompt(ls, _command_params(args))

    @server.command(protocol.COMMAND_REINDEX)
    async def command_reindex(ls: RaglsServer, *args: Any) -> dict[str, Any]:
        return await _reindex(ls, _command_params(args))

    @server.command(protocol.COMMAND_STATUS)
    async def command_status(ls: RaglsServer, *args: Any) -> dict[str, Any]:
        return await _status(ls, _command_params(args))


def _command_params(args: tuple[Any, ...]) -> Any:
    """executeCommand passes the request's params object as the first argument.

    A bare string (what palettes substitute for the selection) is taken as the query.
    """
    if not args:
        return None
    return {"query": args[0]} if isinstance(args[0], str) else args[0]


async def _status(ls: RaglsServer, params: Any) -> dict[str, Any]:
    folder_uri = protocol.folder_of(protocol.as_object(params))
    await ls.until_ready()
    return _statuses(ls.folders.select(folder_uri))


async def _search(ls: RaglsServer, params: Any) -> dict[str, Any]:
    started = time.perf_counter()
    p = protocol.parse_search(params)
    await ls.until_ready()
    folders = ls.folders.select(p.folder)

    def run() -> list[dict[str, Any]]:
        scored = []
        for folder in folders:
            service = folder.service
            for result in checked(partial(service.search, p.query, p.top_k, p.filters, p.min_score)):
                scored.append((result, folder))
        scored.sort(key=lambda item: -item[0].score)
        return [search_result_to_wire(result, folder.root) for result, folder in scored[: p.top_k]]

    results = await asyncio.to_thread(run)
    _tell_notices(ls, folders)
    return {
        "results": results,
        "complete": all(f.service.complete for f in folders),
        "tookMs": round((time.perf_counter() - started) * 1000, 3),
    }


async def _context_prompt(ls: RaglsServer, params: Any) -> dict[str, Any]:
    p = protocol.parse_context_prompt(params)
    await ls.until_ready()
    folders = ls.folders.select(p.folder)
    if len(folders) == 1:
        folder = folders[0]
        prompt, results = await asyncio.to_thread(
            lambda: checked(lambda: folder.service.build_context_prompt(p.query, p.top_k, p.format, p.min_score))
        )
        _tell_notices(ls, folders)
        return {"prompt": prompt, "results": [search_result_to_wire(r, folder.root) for r in results]}
    found = await _search(ls, {"query": p.query, "topK": p.top_k, "minScore": p.min_score})
    from ragls.model import Document, SearchResult
    from ragls.rag.prompt import build_prompt  # multi-folder prompts rebuild from the merged results

    merged = [SearchResult(Document(r["id"], r["content"], r["metadata"]), r["score"]) for r in found["results"]]
    return {"prompt": build_prompt(p.query, merged, p.format), "results": found["results"]}


def _tell_notices(ls: RaglsServer, folders: Iterable[Folder]) -> None:
    """What a search found worth telling (a reranker or query expansion that failed), once each."""
    for folder in folders:
        for notice in folder.service.take_notices():
            ls.warn(f"ragls: {notice}")


async def _reindex(ls: RaglsServer, params: Any) -> dict[str, Any]:
    p = protocol.parse_reindex(params)
    await ls.until_ready()
    folders = ls.folders.select(p.folder)
    for folder in folders:
        await ls.index_folder(folder, full=p.full)
    return _statuses(folders)


def _statuses(folders: list[Folder]) -> dict[str, Any]:
    return {"folders": [status_to_wire(f.uri, f.service.status()) for f in folders]}


# ---------------------------------------------------------------- workspace


def _register_workspace(server: RaglsServer) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: RaglsServer, params: types.WorkspaceSymbolParams) -> list[dict[str, Any]]:
        await ls.until_ready()

        def run() -> list[dict[str, Any]]:
            ranked = [
                (key, symbol, folder)
                for folder in ls.folders.all()
                for key, symbol in checked(partial(folder.service.ranked_symbols, params.query, SYMBOL_CAP))
            ]
            ranked.sort(key=lambda item: item[0])
            return [symbol_to_wire(symbol, folder.root) for _, symbol, folder in ranked[:SYMBOL_CAP]]

        return await asyncio.to_thread(run)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: RaglsServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed or []:
            ls.close_folder(removed.uri)
        for added in params.event.added or []:
            ls.open_folder(added.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: RaglsServer, params: types.DidChangeConfigurationParams) -> None:
        section = settings_section(params.settings) if isinstance(params.settings, dict) else {}
        if not section:
            section = settings_section(await ls.pull_configuration())
        if ls.apply_settings(section):
            await ls.load_embedding()
            await ls.rebuild_for_settings()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: RaglsServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.paths_changed(_local_paths(change.uri for change in params.changes))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RaglsServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.paths_changed(_local_paths([params.text_document.uri]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RaglsServer, params: types.DidOpenTextDocumentParams) -> None:
        _editor_file(ls, params.text_document.uri, is_open=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RaglsServer, params: types.DidCloseTextDocumentParams) -> None:
        _editor_file(ls, params.text_document.uri, is_open=False)


def _editor_file(ls: RaglsServer, uri: str, is_open: bool) -> None:
    """Which files are open in the editor, per folder, for the open-file boost (`openFilesBoost`)."""
    for path in _local_paths([uri]):
        owner = ls.folders.owner_of(path)
        if owner is not None and owner[1] not in ("", "."):
            freshness = owner[0].service.freshness
            (freshness.opened if is_open else freshness.closed)(owner[1])


def _local_paths(uris: Iterable[str]) -> list[Path]:
    """The paths of file events; a URI that names no local file (`untitled:`, `http:`, garbage) is skipped."""
    paths = []
    for uri in uris:
        try:
            paths.append(uri_path(uri))
        except (JsonRpcInvalidParams, ValueError, OSError):
            log.debug("skipped an event for %s: not a local file", uri[:200])
    return paths
