"""The protocol stays honest: the spec, the server and every editor client list the same methods."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragls.config import _TOP_LEVEL
from ragls.server import protocol

REPO = Path(__file__).resolve().parents[2]
METHOD = re.compile(r'"(rag/[A-Za-z]+)"')
COMMAND = re.compile(r'"(ragls\.(?:search|contextPrompt|reindex|status))"')


def spec_methods() -> set[str]:
    text = (REPO / "docs/protocol.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `(rag/[A-Za-z]+)` \|", text, re.MULTILINE))


def spec_commands() -> set[str]:
    text = (REPO / "docs/protocol.md").read_text(encoding="utf-8")
    return set(re.findall(r"`(ragls\.(?:search|contextPrompt|reindex|status))`", text))


@pytest.mark.parametrize("client", ["editors/vscode/src/protocol.ts", "editors/nvim/lua/ragls/protocol.lua"])
def test_clients_list_the_spec_methods(client: str) -> None:
    text = (REPO / client).read_text(encoding="utf-8")
    assert set(METHOD.findall(text)) == spec_methods()
    assert set(COMMAND.findall(text)) == spec_commands()


def test_server_lists_the_spec_methods() -> None:
    assert len(spec_methods()) == 9
    assert set(protocol.METHODS) == spec_methods()
    assert set(protocol.COMMANDS) == spec_commands()


def test_every_setting_is_documented() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    spec = (REPO / "docs/protocol.md").read_text(encoding="utf-8")
    for key in _TOP_LEVEL:
        assert f"`{key}" in readme, f"README does not document the setting {key}"
        assert f"`{key}`" in spec, f"docs/protocol.md does not document the setting {key}"


def test_every_cli_command_is_documented() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for command in ("serve", "mcp", "index", "search", "context", "symbols", "cache", "watch"):
        assert f"`ragls {command}" in readme, command
