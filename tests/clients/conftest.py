"""Fixtures for the non-editor clients: a small workspace, and the Python client importable from its source."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENT_SOURCE = REPO / "clients" / "python" / "src"
if str(CLIENT_SOURCE) not in sys.path:
    sys.path.insert(0, str(CLIENT_SOURCE))

SAMPLE_FILES = {
    "src/auth/middleware.py": '''
        """Request authentication."""


        class AuthMiddleware:
            """Checks the bearer token of every request."""

            def check(self, request):
                token = request.headers.get("Authorization")
                return validate_token(token)


        def validate_token(token):
            return token is not None and token.startswith("Bearer ")
    ''',
    "src/db/pool.py": """
        class ConnectionPool:
            def acquire(self):
                return self.connections.pop()

            def release(self, connection):
                self.connections.append(connection)
    """,
    "docs/guide.md": """
        # Guide

        ## Rate limiting

        Requests over the quota get a 429 answer from the throttle.
    """,
    ".gitignore": "secret_notes.txt\n",
    "secret_notes.txt": "the launch code is swordfish\n",
}


def write_workspace(root: Path, files: dict[str, str] = SAMPLE_FILES) -> Path:
    for rel_path, content in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "project")
