"""The VS Code extension (editors/vscode): install, strict tsc, eslint, unit tests against the real server, .vsix.

The unit tests are `node --test` over the pure models, each talking to a real `ragls serve`
(this Python's) over vscode-jsonrpc on a fixture workspace they create.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
VSIX = EXTENSION / "dist" / "ragls.vsix"
SERVER_COMMAND = [sys.executable, "-m", "ragls", "serve"]
INSTALL_STAMP = EXTENSION / "node_modules" / ".ragls-installed"

pytestmark = pytest.mark.timeout(900)


def run(command: list[str], timeout: float, env: dict[str, str] | None = None, cwd: Path = EXTENSION) -> str:
    """Run a command, fail the test with its output unless it exits 0; returns stdout and stderr."""
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env={**os.environ, "npm_config_update_notifier": "false", **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(command)} ran over {timeout} s\n{exc.stdout or ''}\n{exc.stderr or ''}")
    output = f"{done.stdout}\n{done.stderr}"
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {done.returncode}:\n{output[-20000:]}")
    return output


def npm_install() -> None:
    """`npm ci` once per package-lock.json (`npm install` while there is none); idempotent."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), f"{tool} is not on PATH: install Node.js 20 (Debian: apt-get install nodejs npm)"
    lock = EXTENSION / "package-lock.json"
    wanted = (
        hashlib.sha256(lock.read_bytes() + (EXTENSION / "package.json").read_bytes()).hexdigest()
        if lock.exists()
        else None
    )
    if wanted is not None and INSTALL_STAMP.exists() and INSTALL_STAMP.read_text() == wanted:
        return
    run(["npm", "ci" if wanted else "install", "--no-audit", "--no-fund"], timeout=600)
    if wanted is not None:
        INSTALL_STAMP.write_text(wanted)


def bin_path(name: str) -> str:
    return str(EXTENSION / "node_modules" / ".bin" / name)


def build_vsix() -> Path:
    """Install, bundle and package; returns dist/ragls.vsix."""
    npm_install()
    VSIX.unlink(missing_ok=True)
    run(["node", "scripts/build.mjs", "--production"], timeout=120)
    run(
        [bin_path("vsce"), "package", "--no-dependencies", "--allow-missing-repository", "--out", str(VSIX)],
        timeout=300,
    )
    assert VSIX.is_file(), "vsce did not write the .vsix"
    return VSIX


@pytest.fixture(scope="module")
def installed() -> None:
    npm_install()


def test_typescript_is_strict_and_clean(installed: None) -> None:
    config = json.loads((EXTENSION / "tsconfig.json").read_text())
    assert config["compilerOptions"]["strict"] is True
    run([bin_path("tsc"), "--noEmit", "-p", "."], timeout=300)


def test_eslint_is_clean(installed: None) -> None:
    run([bin_path("eslint"), "--max-warnings", "0", "."], timeout=300)


def test_models_against_the_real_server(installed: None) -> None:
    shutil.rmtree(EXTENSION / "out", ignore_errors=True)
    run([bin_path("tsc"), "-p", "tsconfig.test.json"], timeout=300)
    output = run(
        ["node", "--test", "--test-reporter=spec", "out/test/unit/"],
        timeout=600,
        env={"RAGLS_SERVER": json.dumps(SERVER_COMMAND)},
    )
    passed = re.search(r"^\S*\s*pass (\d+)$", output, re.MULTILINE)
    failed = re.search(r"^\S*\s*fail (\d+)$", output, re.MULTILINE)
    assert passed and failed, output
    assert int(failed.group(1)) == 0, output
    assert int(passed.group(1)) >= 30, output


def test_protocol_ts_names_the_servers_methods_and_commands() -> None:
    from ragls.server import protocol

    source = (EXTENSION / "src" / "protocol.ts").read_text()
    methods = set(re.findall(r'export const METHOD_\w+ = "([^"]+)";', source))
    commands = set(re.findall(r'export const COMMAND_\w+ = "([^"]+)";', source))
    assert methods == set(protocol.METHODS)
    assert commands == set(protocol.COMMANDS)


def test_manifest_follows_the_house_rules() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    assert manifest["engines"]["vscode"] == "^1.82.0"
    assert manifest["devDependencies"]["@types/vscode"] == "1.82.0"
    assert manifest["dependencies"]["vscode-languageclient"] == "9.0.1"
    commands = manifest["contributes"]["commands"]
    assert {c["title"] for c in commands} >= {
        "Search Workspace",
        "Copy Context Prompt",
        "Open Context Prompt",
        "Reindex",
        "Show Status",
        "Restart Server",
    }
    for command in commands:
        assert command["category"] == "ragls", command
        assert command["command"] not in protocol_commands(), f"{command['command']} clashes with a server command"
    properties = manifest["contributes"]["configuration"]["properties"]
    for key in ("weights", "maxChunksPerFile", "embedding", "limits", "watch", "cacheDir", "server.command"):
        assert f"ragls.{key}" in properties, key
    for key, schema in properties.items():
        assert "default" in schema, f"{key} has no default"
        assert schema.get("description") or schema.get("markdownDescription"), f"{key} has no description"


def protocol_commands() -> set[str]:
    from ragls.server import protocol

    return set(protocol.COMMANDS)


def test_vsix_holds_the_bundle_and_docs_only() -> None:
    vsix = build_vsix()
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
    for needed in (
        "extension/dist/extension.js",
        "extension/package.json",
        "extension/readme.md",
        "extension/changelog.md",
        "extension/LICENSE.txt",
        "extension/media/icon.png",
    ):
        assert needed in names, f"{needed} missing from the .vsix: {sorted(names)}"
    assert not [n for n in names if "/src/" in n or "node_modules" in n or "/test/" in n or n.endswith(".map")], names
    assert manifest["icon"] == "media/icon.png"
    assert vsix.stat().st_size < 2_000_000


def test_manifest_has_keys_menus_view_walkthrough_and_ordered_settings() -> None:
    contributes = json.loads((EXTENSION / "package.json").read_text())["contributes"]
    configuration = contributes["configuration"]
    assert configuration["title"] == "ragls"
    orders = [schema.get("order") for schema in configuration["properties"].values()]
    assert all(isinstance(order, int) for order in orders), orders
    assert orders == sorted(orders) and len(set(orders)) == len(orders), orders
    assert next(iter(configuration["properties"])) == "ragls.server.command"
    keys = {binding["command"]: binding for binding in contributes["keybindings"]}
    assert keys["ragls.searchWorkspace"]["key"] == keys["ragls.searchSelection"]["key"] == "ctrl+alt+r"
    context_menu = {entry["command"] for entry in contributes["menus"]["editor/context"]}
    assert context_menu == {"ragls.searchSelection", "ragls.copyContextPromptForSelection"}
    assert [view["id"] for view in contributes["views"]["ragls"]] == ["ragls.results"]
    (walkthrough,) = contributes["walkthroughs"]
    assert walkthrough["id"] == "ragls.firstRun"
    for step in walkthrough["steps"]:
        assert (EXTENSION / step["media"]["markdown"]).is_file(), step
