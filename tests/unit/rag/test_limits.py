"""Limits through RagService: a breach stops the run at the file that crosses it, before the next is read, and
the previous generation stays searchable; a folder whose ignore file excludes everything is reported."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ragls.config import Limits, Settings
from ragls.errors import LimitExceeded
from ragls.model import Progress
from ragls.rag.service import RagService

FIRST = {
    "a.py": "def alpha_handler(request):\n    return request.alpha\n",
    "b.py": "def beta_store(key):\n    return key\n",
}
# Each new file decodes to the same number of characters, so the budget is crossed at a file we choose.
NEW = {f"c{index}.py": f"def gamma_{index}(value):\n    return value * {index}\n" for index in range(6)}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


def top_id(service: RagService, query: str) -> str:
    return service.search(query, 5)[0].document.id


def test_a_decoded_budget_breach_stops_before_the_next_file_is_read(tmp_path: Path) -> None:
    first_chars = sum(len(text) for text in FIRST.values())
    new_chars = len(NEW["c0.py"])
    # Files are staged in path order: a.py, b.py (reused), then c0.py... The budget holds two new files, not three.
    budget = first_chars + 2 * new_chars + new_chars // 2
    service = RagService(write(tmp_path, FIRST), Settings(limits=replace(Limits(), max_decoded_bytes=budget)))
    service.index_directory()
    assert top_id(service, "alpha_handler") == "a.py#alpha_handler"
    write(tmp_path, NEW)
    chunked_before = service.chunk_calls
    progress: list[Progress] = []
    with pytest.raises(LimitExceeded) as caught:
        service.index_directory(progress=progress.append)
    # File 5 of 8 (c2.py) crossed the budget: it was read, c3.py was not.
    assert service.chunk_calls - chunked_before == 3
    assert [p.current_file for p in progress if p.phase == "read"] == ["a.py", "b.py", "c0.py", "c1.py"]
    assert progress[0].phase == "walk" and "index" not in {p.phase for p in progress}
    total = first_chars + 3 * new_chars
    assert str(caught.value).startswith(
        f"maxDecodedBytes limit of {budget:,} exceeded ({total:,} characters decoded by file 5 of 8, c2.py); "
        "raise it with the setting `ragls.limits.maxDecodedBytes`"
    )
    # Nothing of the failed run is searchable; the previous generation is.
    status = service.status()
    assert (status.state, status.generation, status.files) == ("failed", 1, 2)
    assert "maxDecodedBytes" in (status.error or "")
    assert top_id(service, "alpha_handler") == "a.py#alpha_handler"
    assert all(not r.document.id.startswith("c") for r in service.search("gamma value", 10))


def test_a_file_count_breach_fails_in_the_walk_before_any_file_is_read(tmp_path: Path) -> None:
    service = RagService(write(tmp_path, FIRST), Settings(limits=replace(Limits(), max_files=4)))
    service.index_directory()
    write(tmp_path, NEW)
    chunked_before = service.chunk_calls
    progress: list[Progress] = []
    with pytest.raises(LimitExceeded, match=r"^maxFiles limit of 4 exceeded \(8 files found\); raise it with"):
        service.index_directory(progress=progress.append)
    assert service.chunk_calls == chunked_before and {p.phase for p in progress} <= {"walk"}
    assert service.status().generation == 1 and top_id(service, "beta_store") == "b.py#beta_store"


def test_a_folder_whose_gitignore_ignores_everything_is_reported(tmp_path: Path) -> None:
    write(tmp_path, {**FIRST, ".gitignore": "# like Debian's kernel tree\n/*\n"})
    service = RagService(tmp_path)
    summary = service.index_directory()
    assert summary.committed and service.status().files == 0
    assert service.take_notices() == [
        "no files admitted, though the folder has 2 entries: .gitignore:2 /* ignores 2 (a.py, b.py). "
        "Edit that ignore-file line, or add `!` patterns after it, to index them."
    ]
    (tmp_path / ".gitignore").write_text("/*\n!*.py\n", encoding="utf-8")
    service.index_directory()
    assert service.status().files == 2 and service.take_notices() == []


def test_an_edit_that_crosses_the_decoded_budget_is_refused_and_the_total_follows_every_change(tmp_path: Path) -> None:
    first_chars = sum(len(text) for text in FIRST.values())
    budget = first_chars + 2 * len(NEW["c0.py"])
    service = RagService(write(tmp_path, FIRST), Settings(limits=replace(Limits(), max_decoded_bytes=budget)))
    service.index_directory()
    assert service.state.decoded_chars == first_chars
    write(tmp_path, {"c0.py": NEW["c0.py"], "a.py": "def alpha(x):\n    return x\n"})
    service.update_paths(["c0.py", "a.py"])
    (tmp_path / "b.py").unlink()
    service.update_paths(["b.py"])
    expected = sum(record.decoded_chars for record in service.state.files.values())
    assert service.state.decoded_chars == expected == len("def alpha(x):\n    return x\n") + len(NEW["c0.py"])
    write(tmp_path, {"big.py": "x = 1\n" * budget})
    with pytest.raises(LimitExceeded, match="after the change"):
        service.update_paths(["big.py"])
    assert service.state.decoded_chars == expected and "big.py" not in service.state.files
