"""Smoke test of the VS Code extension in a real VS Code (code-server from npm, driven by Chromium).

Installs what it needs on a fresh machine (code-server into .cache/code-server, Debian's chromium),
installs the built .vsix into a throwaway profile, searches a fixture workspace through
"ragls: Search Workspace" and checks the editor lands on the expected line. The screenshots are
kept in test-artifacts/vscode-smoke.png and test-artifacts/vscode-smoke-quickpick.png.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.editors.test_vscode import EXTENSION, REPO, build_vsix, run

INSTALL_SCRIPT = EXTENSION / "test" / "smoke" / "install-code-server.sh"
SMOKE_SCRIPT = EXTENSION / "test" / "smoke" / "smoke.cjs"
CODE_SERVER_CACHE = REPO / ".cache" / "code-server"
SCREENSHOT = REPO / "test-artifacts" / "vscode-smoke.png"


@pytest.mark.timeout(900)
def test_search_workspace_in_code_server() -> None:
    # The script prints the binary's path on stdout and logs on stderr (run() returns both).
    installed = run(["bash", str(INSTALL_SCRIPT), str(CODE_SERVER_CACHE)], timeout=720)
    code_server = next((line for line in installed.splitlines() if line.endswith("/.bin/code-server")), None)
    assert code_server, f"install-code-server.sh printed no code-server path:\n{installed}"
    vsix = build_vsix()
    SCREENSHOT.unlink(missing_ok=True)
    output = run(
        [
            "node",
            str(SMOKE_SCRIPT),
            "--code-server",
            code_server,
            "--vsix",
            str(vsix),
            "--server-command",
            json.dumps([sys.executable, "-m", "ragls", "serve"]),
            "--screenshot",
            str(SCREENSHOT),
        ],
        timeout=300,
    )
    assert "smoke: PASSED" in output, output
    assert "editor position: Ln 36," in output, output
    assert SCREENSHOT.is_file() and SCREENSHOT.stat().st_size > 10_000
