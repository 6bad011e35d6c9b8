"""An ignore file over a cap is a warning the user hears, and a count in the status; the run succeeds."""

from __future__ import annotations

from pathlib import Path

from ragls.rag.service import RagService

N_PATTERNS = 1100  # over the cap of 1,024
LATE = "p1050.txt"  # its pattern is on line 1,051, past the cap


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _long_gitignore() -> str:
    return "".join(f"p{i}.txt\n" for i in range(N_PATTERNS))


def test_a_full_run_warns_and_counts_an_ignore_file_cut_short(tmp_path: Path) -> None:
    _write(tmp_path, {".gitignore": _long_gitignore(), "main.py": "x = 1\n", "p1.txt": "early\n", LATE: "late\n"})
    service = RagService(tmp_path)
    service.index_directory()
    status = service.status()
    assert (status.state, status.error, status.files) == ("idle", None, 2)
    assert status.skipped == {"ignoreFileTruncated": 1, "ignored": 1}
    notices = service.take_notices()
    assert len(notices) == 1
    assert notices[0].startswith(".gitignore has more than 1,024 patterns: those from line 1,025 on are not applied")
    assert [r.document.metadata["file"] for r in service.search("late")] == [LATE]
    service.close()


def test_an_edited_ignore_file_over_a_cap_warns_when_its_change_is_indexed(tmp_path: Path) -> None:
    _write(tmp_path, {"sub/.gitignore": "*.log\n", "sub/a.log": "log\n", "main.py": "x = 1\n"})
    service = RagService(tmp_path)
    service.index_directory()
    assert service.take_notices() == []
    _write(tmp_path, {"sub/.gitignore": "# " + "x" * (64 * 1024) + "\n*.log\n"})
    service.update_paths(["sub/.gitignore"])
    notices = service.take_notices()
    assert len(notices) == 1 and notices[0].startswith("sub/.gitignore is 65,545 bytes, over the limit"), notices
    assert service.status().files == 2  # the cut-off `*.log` no longer applies: sub/a.log is indexed
    service.close()
