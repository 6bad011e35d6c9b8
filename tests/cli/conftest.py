"""What the CLI tests share: a small project of three files and a binary one, written as its bytes say."""

from __future__ import annotations

from pathlib import Path

import pytest

FILES = {
    "src/auth.py": 'def check_token(request):\n    """Validate the bearer token."""\n    return request.token\n',
    "src/pool.js": "function acquireConnection(pool) {\n  return pool.pop();\n}\n",
    "README.md": "# Project\n\n## Usage\n\nRun the server.\n",
    "logo.png": "\x89PNG\x00\x00",
}


def write_files(root: Path, files: dict[str, str] = FILES) -> Path:
    """Each file's text exactly as given (no dedent: some tests count bytes); returns root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """src/auth.py (88 bytes), src/pool.js (58), README.md (37) and logo.png (binary): 5 entries, 4 files."""
    return write_files(tmp_path)
