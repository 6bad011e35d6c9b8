"""A generated 20,000-file tree indexes with the default settings (no raised limit), inside a time box.

Speed is measured in the benchmark, not here: the box only catches a run that stalls or goes quadratic.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.rag.service import RagService

pytestmark = pytest.mark.timeout(180)

N_FILES = 20_000


def test_twenty_thousand_files_index_with_the_defaults(tmp_path: Path) -> None:
    root = tmp_path / "monorepo"
    for index in range(N_FILES):
        folder = root / f"pkg{index % 40}" / f"mod{index % 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file_{index}.py").write_text(
            f"def handler_{index}(request):\n    '''Serve route {index}.'''\n    return request.route({index})\n",
            encoding="utf-8",
        )
    service = RagService(root, Settings(cache_dir=str(tmp_path / "cache")), persist=True)
    summary = service.index_directory()
    assert summary.report.files == N_FILES
    status = service.status()
    assert status.files == N_FILES and status.state == "idle"
    top = service.search("handler_12345 serve route", 3)
    assert top[0].document.metadata["file"] == "pkg25/mod345/file_12345.py"
    assert [symbol.name for symbol in service.symbols("handler_19999", 1)] == ["handler_19999"]
    service.close()
