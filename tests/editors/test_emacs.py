"""editors/emacs: ragls.el's ERT tests in batch Emacs against the real server.

Debian's emacs-nox and elpa-eglot, with the completion packages users pair with Eglot
(elpa-consult, elpa-vertico, elpa-marginalia), so the tests prove ragls.el works with them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EMACS_TESTS = REPO / "editors" / "emacs" / "test" / "ragls-test.el"
ELPA = Path("/usr/share/emacs/site-lisp/elpa")
PACKAGES = ["emacs-nox", "elpa-eglot", "elpa-consult", "elpa-vertico", "elpa-marginalia"]
ELPA_NAMES = ["eglot", "consult", "vertico", "marginalia"]


def ensure_emacs() -> str:
    """`emacs` with Debian's Eglot, consult, vertico and marginalia, installed with apt-get when missing.

    The test machines run as root.
    """
    emacs = shutil.which("emacs")
    if emacs and all(any(ELPA.glob(f"{name}-[0-9]*")) for name in ELPA_NAMES):
        return emacs
    apt_env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]
    if subprocess.run(install, env=apt_env, capture_output=True, timeout=600, check=False).returncode != 0:
        subprocess.run(["apt-get", "update"], env=apt_env, capture_output=True, timeout=300, check=True)
        subprocess.run(install, env=apt_env, capture_output=True, timeout=600, check=True)
    emacs = shutil.which("emacs")
    assert emacs, f"apt-get installed {PACKAGES} but `emacs` is not on PATH"
    missing = [name for name in ELPA_NAMES if not any(ELPA.glob(f"{name}-[0-9]*"))]
    assert not missing, f"apt-get installed {PACKAGES} but {ELPA} lacks {missing}"
    return emacs


@pytest.mark.timeout(900)
def test_ragls_el_in_batch_emacs() -> None:
    emacs = ensure_emacs()
    env = {**os.environ, "RAGLS_SERVER_COMMAND": shlex.join([sys.executable, "-m", "ragls", "serve"])}
    completed = subprocess.run(
        [emacs, "--batch", "-Q", "-l", str(EMACS_TESTS), "-f", "ert-run-tests-batch-and-exit"],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "0 unexpected" in output, output
