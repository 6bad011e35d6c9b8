"""Fixtures for the non-editor clients: a small workspace, and the Python client importable from its source."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.sample_workspace import write_tree

REPO = Path(__file__).resolve().parents[2]
CLIENT_SOURCE = REPO / "clients" / "python" / "src"
if str(CLIENT_SOURCE) not in sys.path:
    sys.path.insert(0, str(CLIENT_SOURCE))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "project")
