"""The small workspace that end-to-end and client tests index: Python, JavaScript, Markdown, an ignored file."""

from __future__ import annotations

import textwrap
from pathlib import Path

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
    "web/router.js": """
        function matchRoute(path, routes) {
          return routes.find((route) => route.pattern.test(path));
        }

        class Router {
          dispatch(request) {
            return matchRoute(request.url, this.routes);
          }
        }
    """,
    "docs/guide.md": """
        # Guide

        ## Installing

        Run the installer with pip.

        ## Rate limiting

        Requests over the quota get a 429 answer from the throttle.
    """,
    "build/generated.py": "def generated_code(): pass\n",
    ".gitignore": "secret_notes.txt\n",
    "secret_notes.txt": "the launch code is swordfish\n",
}


def write_tree(root: Path, files: dict[str, str] = SAMPLE_FILES) -> Path:
    """Write files (dedented) under root; returns root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root
