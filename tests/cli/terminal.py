"""Run the real `ragls` with stderr on a pseudo-terminal, as a person sees it: progress bars are drawn there."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

import pytest


@dataclass
class OnTerminal:
    returncode: int
    stdout: str
    terminal: str  # everything written to stderr, with the terminal's \r\n for \n


def ragls_on_terminal(*args: str, env: Mapping[str, str], timeout: float = 90) -> OnTerminal:
    if sys.platform == "win32":
        pytest.skip("needs a POSIX pseudo-terminal")
    import pty

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "ragls", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
        env=dict(env),
    )
    os.close(terminal)
    written = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.2)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            written += chunk
        assert process.stdout is not None
        stdout = process.stdout.read().decode()
        returncode = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
            process.wait()
    return OnTerminal(returncode, stdout, written.decode(errors="replace"))
