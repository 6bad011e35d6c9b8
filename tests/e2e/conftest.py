"""End-to-end fixtures: the real `ragls serve` over stdio, driven by pytest-lsp's client."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from tests.sample_workspace import SAMPLE_FILES, write_tree

# Recorded capabilities of the two editors we ship clients for.
CLIENTS = ["visual-studio-code@v1.65.2", "neovim@v0.10.0"]
SERVER_COMMAND = [sys.executable, "-m", "ragls", "serve"]
WAIT_SECONDS = 30.0
SHUTDOWN_SECONDS = 10.0
CACHE_HOME = tempfile.mkdtemp(prefix="ragls-e2e-cache-")


def dict_params_converter() -> Any:
    converter = default_converter()
    for message_type in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message_type, lambda obj, cls: cls(**obj))
    return converter


def make_client() -> LanguageClient:
    """pytest-lsp's client, keeping custom params and results as dicts."""
    client = LanguageClient(converter_factory=dict_params_converter)
    register_lsp_features(client)
    return client


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "workspace", SAMPLE_FILES)


class Session:
    """A started server plus helpers: requests, waiting for an index, recorded registrations."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.registrations: list[types.Registration] = []
        self.initialize_result: types.InitializeResult | None = None

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.client.protocol.send_request_async(method, params)

    async def search(self, query: str, **extra: Any) -> dict[str, Any]:
        return await self.request("rag/search", {"query": query, **extra})

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = WAIT_SECONDS) -> dict:
        """Poll rag/status until the predicate holds for it."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            status = await self.request("rag/status", {})
            if predicate(status):
                return status
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"status never matched: {status}")
            await asyncio.sleep(0.05)

    async def wait_indexed(self, generation: int = 1) -> dict[str, Any]:
        return await self.wait_for(
            lambda s: bool(s["folders"]) and all(f["generation"] >= generation for f in s["folders"])
        )

    async def wait_search(self, query: str, predicate: Callable[[list[dict]], bool], **extra: Any) -> list[dict]:
        """Poll rag/search until its results satisfy the predicate."""
        deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
        while True:
            results = (await self.search(query, **extra))["results"]
            if predicate(results):
                return results
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"search {query!r} never matched: {[r['id'] for r in results]}")
            await asyncio.sleep(0.05)


async def start_session(
    lsp_client: LanguageClient,
    root: Path,
    client_name: str | types.ClientCapabilities,
    folders: list[Path] | None = None,
    init_options: dict[str, Any] | None = None,
) -> Session:
    session = Session(lsp_client, root)

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        session.registrations.extend(params.registrations)

    folder_list = folders if folders is not None else [root]
    session.initialize_result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(client_name) if isinstance(client_name, str) else client_name,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folder_list],
            # Lexical unless a test asks for dense vectors: results stay deterministic and the CPU free.
            initialization_options={"embedding": "none", **(init_options or {})},
        )
    )
    return session


def server_config() -> ClientServerConfig:
    # Each test run keeps its persisted indexes in a throwaway cache directory.
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "XDG_CACHE_HOME": CACHE_HOME}
    return ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client, server_env=env)


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    """A started server the test initializes itself (pytest-lsp yields the client)."""
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), SHUTDOWN_SECONDS)


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def indexed_client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Path
) -> AsyncIterator[None]:
    """A server indexing the sample workspace, once per recorded editor (pytest-lsp yields the client)."""
    started = await start_session(lsp_client, workspace, request.param)
    await started.wait_indexed()
    lsp_client.ragls_session = started  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), SHUTDOWN_SECONDS)


@pytest.fixture
def session(indexed_client: LanguageClient) -> Session:
    return indexed_client.ragls_session  # type: ignore[attr-defined]
