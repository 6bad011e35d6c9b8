"""Reading in worker processes: the same index as reading inline, handed over in the walk's order, and never a
file read ahead past the point where the decoded budget could be crossed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ragls import model
from ragls.config import ChunkShape, Limits, Settings
from ragls.errors import LimitExceeded
from ragls.model import Progress
from ragls.rag import indexer
from ragls.rag.reading import PlannedRead, ReadAhead, read_and_tokenize
from ragls.rag.service import RagService
from tests.sample_workspace import write_tree

pytestmark = pytest.mark.timeout(120)

PYTHON = 'def handler_{0}(request):\n    """Answer request {0}."""\n    return {0}\n'
GO = "package web\n\nfunc (s *Server) Route{0}() int {{\n\treturn {0}\n}}\n"
FILES = {
    **{f"pkg/module_{i}.py": PYTHON.format(i) for i in range(40)},
    **{f"web/route_{i}.go": GO.format(i) for i in range(20)},
    "docs/guide.md": "# Guide\n\nHow requests are answered.\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    write_tree(root, files)
    (root / "blob.bin").write_bytes(b"\x00\x01" * 100)
    (root / "latin.txt").write_bytes(b"caf\xe9 \xff\xfe broken")
    return root


def test_workers_read_what_inline_reading_reads(tmp_path: Path) -> None:
    root = write(tmp_path, FILES)
    names = sorted([*FILES, "blob.bin", "latin.txt"])
    limits, shape = Limits(), ChunkShape()
    plan = [PlannedRead(name, (root / name).stat().st_size, None) for name in names]
    ahead = ReadAhead(root, limits, shape, "code", plan, 0, workers=2)
    try:
        assert ahead.parallel
        for name in names:
            read = ahead.read(name, None)
            inline = read_and_tokenize(root, name, limits, shape, None, "code")
            assert read == inline
            # Documents come back packed as they were made, text and metadata alike.
            assert [(d.packed_content, d.metadata) for d in read.documents] == [
                (d.packed_content, d.metadata) for d in inline.documents
            ]
            # Terms come back interned, as this process's tokenizer gives them: one string per term.
            every_counts = [counts for chunk_terms in read.terms for counts in chunk_terms]
            assert all(term is sys.intern(term) for counts in every_counts for term in counts.terms)
            # Code counts within a chunk's terms still share its tuple of terms.
            assert all(t.code is t.all or t.code.terms is t.all.terms for t in read.terms if t.code != t.all)
    finally:
        ahead.close()


def test_a_parallel_run_indexes_as_a_serial_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write(tmp_path / "w", FILES)
    serial = RagService(root, Settings())
    serial.index_directory()
    monkeypatch.setattr(indexer, "PARALLEL_MIN_FILES", 1)
    parallel = RagService(root, Settings())
    progress: list[Progress] = []
    parallel.index_directory(progress=progress.append)
    assert [p.current_file for p in progress if p.phase == "read"] == sorted([*FILES, "blob.bin", "latin.txt"])
    assert parallel.status() == replace(serial.status(), last_indexed_at=parallel.status().last_indexed_at)
    for query in ("answer request 7", "Server Route12", "guide"):
        expected = [(r.document.id, r.score) for r in serial.search(query, 10)]
        assert [(r.document.id, r.score) for r in parallel.search(query, 10)] == expected


def test_a_change_of_many_files_read_in_workers_indexes_as_a_serial_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A branch switch: edits, a new file, a removal, a new folder and an ignore file among the changed paths.
    services = {}
    for label, threshold in (("serial", 10_000), ("parallel", 1)):
        root = write(tmp_path / label, FILES)
        service = RagService(root, Settings())
        service.index_directory()
        changed = {f"pkg/module_{i}.py": PYTHON.format(i + 100) for i in range(0, 40, 3)}
        write_tree(root, {**changed, "web/new_route.go": GO.format(77), "extra/more.py": PYTHON.format(55)})
        (root / "pkg/module_1.py").unlink()
        (root / ".gitignore").write_text("web/route_1*.go\n")
        monkeypatch.setattr(indexer, "PARALLEL_MIN_FILES", threshold)
        paths = [*changed, "web/new_route.go", "extra", "pkg/module_1.py", ".gitignore"]
        summary = service.update_paths(paths)
        assert summary is not None
        services[label] = (service, summary)
    (serial, serial_summary), (parallel, parallel_summary) = services["serial"], services["parallel"]
    assert parallel_summary.report.chunked_files == serial_summary.report.chunked_files > 10
    status = parallel.status()
    assert status == replace(serial.status(), last_indexed_at=status.last_indexed_at, indexed_path=status.indexed_path)
    for query in ("answer request 103", "Server Route77", "request 55", "Route12"):
        expected = [(r.document.id, r.score) for r in serial.search(query, 10)]
        assert [(r.document.id, r.score) for r in parallel.search(query, 10)] == expected


def test_nothing_is_read_ahead_past_where_the_budget_could_be_crossed(tmp_path: Path) -> None:
    root = write(tmp_path, FILES)
    names = sorted(FILES)
    sizes = [(root / name).stat().st_size for name in names]
    # Room for 2 KB of reused files and the first ten planned files at full size, not the eleventh.
    budget = 2000 + sum(sizes[:10]) + sizes[10] // 2
    limits = replace(Limits(), max_decoded_bytes=budget)
    plan = [PlannedRead(name, size, None) for name, size in zip(names, sizes, strict=True)]
    ahead = ReadAhead(root, limits, ChunkShape(), "code", plan, 2000, workers=2)
    try:
        assert [planned.rel_path for planned in ahead._within_budget(plan, 2000)] == names[:10]
    finally:
        ahead.close()


def test_a_document_counts_as_much_text_as_a_file_may_hold(tmp_path: Path) -> None:
    # A PDF's text can outgrow its bytes, up to maxFileBytes; a file over maxFileBytes is skipped unread.
    limits = replace(Limits(), max_file_bytes=1000, max_decoded_bytes=1500)
    plan = [PlannedRead("a.py", 10, None), PlannedRead("huge.py", 5000, None), PlannedRead("paper.pdf", 100, None)]
    ahead = ReadAhead(tmp_path, limits, ChunkShape(), "code", [], 0, workers=1)
    assert [p.rel_path for p in ahead._within_budget([*plan, PlannedRead("b.py", 10, None)], 0)] == [
        "a.py",
        "huge.py",
        "paper.pdf",
        "b.py",
    ]
    assert [p.rel_path for p in ahead._within_budget(plan, 600)] == ["a.py", "huge.py"]


def test_a_budget_breach_in_a_parallel_run_stops_at_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(tmp_path, FILES)
    chars = sum(len(text) for text in FILES.values()) + len("café \ufffd\ufffd broken")
    limits = replace(Limits(), max_decoded_bytes=chars // 2)
    messages = []
    for threshold in (10_000, 1):
        monkeypatch.setattr(indexer, "PARALLEL_MIN_FILES", threshold)
        with pytest.raises(LimitExceeded) as caught:
            RagService(root, Settings(limits=limits)).index_directory()
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "maxDecodedBytes" in messages[0]


def test_a_script_without_a_main_guard_runs_once(tmp_path: Path) -> None:
    # Spawned workers would run such a script's top level again, indexing once more in each of them.
    root = write(tmp_path / "w", FILES)
    script = tmp_path / "embed.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from pathlib import Path
            from ragls.config import Settings
            from ragls.rag import indexer
            from ragls.rag.service import RagService

            print("top level ran", flush=True)
            indexer.PARALLEL_MIN_FILES = 1
            service = RagService(Path({str(root)!r}), Settings())
            service.index_directory()
            print("chunks", service.status().chunks, flush=True)
            """
        )
    )
    env = {**os.environ, "RAGLS_EMBEDDING": "none"}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=90, env=env, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("top level ran") == 1, done.stdout
    assert "failed" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert f"chunks {len(FILES)}" in done.stdout, done.stdout


def _alive(pid: int) -> bool:
    """Running, not gone nor a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status and "State:\tX" not in status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process states from /proc")
def test_workers_end_with_a_parent_killed_with_sigkill(tmp_path: Path) -> None:
    root = write(tmp_path / "w", FILES)
    script = tmp_path / "killed.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import time
            from pathlib import Path
            from ragls.config import ChunkShape, Limits
            from ragls.rag.reading import PlannedRead, ReadAhead

            root = Path({str(root)!r})
            plan = [PlannedRead(p.relative_to(root).as_posix(), p.stat().st_size, None) for p in root.rglob("*.py")]
            ahead = ReadAhead(root, Limits(), ChunkShape(), "code", plan, 0, workers=2)
            ahead.read(plan[0].rel_path, None)  # the workers are up
            print(*ahead._pool._processes, flush=True)
            time.sleep(120)
            """
        )
    )
    env = {**os.environ, "RAGLS_EMBEDDING": "none"}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert parent.stdout is not None
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(pid) for pid in workers)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers), "a reading worker outlived its killed parent"


def test_indexing_reads_no_chunk_text_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stream's terms come with the read, so no chunk is unpacked to be indexed (a search reads its own)."""
    root = write(tmp_path / "w", FILES)
    read_texts: list[object] = []
    unpack = model.unpack
    monkeypatch.setattr(model, "unpack", lambda packed: read_texts.append(packed) or unpack(packed))
    service = RagService(root, Settings())
    service.index_directory()
    assert read_texts == []
    found = service.search("handler_7", 1)[0].document
    assert found.content == FILES[found.metadata["file"]].rstrip("\n") and read_texts
