"""An environment in which `git` ignores the user's own configuration, for tests that compare with git."""

from __future__ import annotations

import os
from pathlib import Path


def isolated_git_env(home: Path) -> dict[str, str]:
    """No global or system config, a throwaway home and the C locale: git as any machine would run it."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
        "LC_ALL": "C",
    }
