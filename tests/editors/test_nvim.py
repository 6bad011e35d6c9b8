"""The Neovim plugin's specs (editors/nvim/tests), run in a real headless Neovim against the real server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
INSTALLER = PLUGIN / "scripts" / "install-nvim.sh"
NVIM_CACHE = REPO / ".cache" / "nvim"
SERVER_COMMAND = [sys.executable, "-m", "ragls", "serve"]
INSTALL_TIMEOUT_S = 300
SPECS_TIMEOUT_S = 240


def install_nvim() -> str:
    """Install (or reuse) the project's Neovim under .cache/nvim; returns the nvim path."""
    proc = subprocess.run(
        ["bash", str(INSTALLER), str(NVIM_CACHE)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, f"installing Neovim failed (exit {proc.returncode}):\n{proc.stderr}"
    return proc.stdout.strip().splitlines()[-1]


def isolated_env(tmp_path: Path) -> dict[str, str]:
    """The environment for the specs: the server command, and XDG dirs that keep $HOME clean."""
    env = {**os.environ, "RAGLS_TEST_SERVER_CMD": json.dumps(SERVER_COMMAND)}
    env["RAGLS_TEST_TIMEOUT_S"] = str(SPECS_TIMEOUT_S - 20)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(tmp_path / name.lower())
    return env


@pytest.mark.timeout(600)
def test_nvim_specs(tmp_path: Path) -> None:
    nvim = install_nvim()
    proc = subprocess.run(
        [nvim, "--clean", "--headless", "-l", "tests/run.lua"],
        cwd=PLUGIN,
        env=isolated_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=SPECS_TIMEOUT_S,
        check=False,
    )
    output = f"{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    if proc.returncode != 0:
        print(output)
    assert proc.returncode == 0, f"{proc.returncode} Neovim spec(s) failed or the run broke:\n{output}"
    assert " passed, 0 failed" in proc.stdout, output


@pytest.mark.timeout(600)
def test_installer_reuses_its_install() -> None:
    first = install_nvim()
    started = time.monotonic()
    second = install_nvim()
    assert second == first
    assert time.monotonic() - started < 10, "a second install-nvim.sh run should reuse the install"
    version = subprocess.run([second, "--version"], capture_output=True, text=True, timeout=30, check=True)
    assert version.stdout.startswith("NVIM v0.1"), version.stdout
