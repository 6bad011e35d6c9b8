"""PDF and DOCX from the command line: `ragls search --json` cites the page and heading; without the docs extra
(its modules blocked from importing in the subprocess) they are counted as `needsExtra`, with one notice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.document_files import write_docx, write_pdf

pytestmark = pytest.mark.timeout(120)
CACHE_HOME = tempfile.mkdtemp(prefix="ragls-cli-docs-cache-")
# The docs extra as if it were not installed: `import pypdf` and `import docx` raise ImportError.
BLOCK_DOCS_EXTRA = "import sys; sys.modules['pypdf'] = None; sys.modules['docx'] = None; "
WITHOUT_DOCS_EXTRA = BLOCK_DOCS_EXTRA + "from ragls.cli import main; raise SystemExit(main(sys.argv[1:]))"


def ragls(*args: str, blocked: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": CACHE_HOME, "RAGLS_EMBEDDING": "none"}
    command = [sys.executable, "-c", WITHOUT_DOCS_EXTRA] if blocked else [sys.executable, "-m", "ragls"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=90, env=env)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_pdf(tmp_path / "manual.pdf", [["Flux capacitor installation."], ["The gigawatt relay hums when worn."]])
    write_docx(tmp_path / "notes.docx", [("h1", "Setup"), ("p", "Install the sprocket daemon."), ("h1", "Usage")])
    (tmp_path / "main.py").write_text("def main():\n    return 0\n", encoding="utf-8")
    return tmp_path


def test_search_json_cites_pdf_pages_and_docx_headings(project: Path) -> None:
    done = ragls("search", str(project), "gigawatt relay hums", "--json", "-k", "1", "-q", "--no-cache")
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert result["metadata"]["file"] == "manual.pdf" and result["metadata"]["page"] == 2
    assert result["content"] == "The gigawatt relay hums when worn."
    done = ragls("search", str(project), "sprocket daemon", "--json", "-k", "1", "-q", "--no-cache")
    [result] = json.loads(done.stdout)
    assert (result["metadata"]["file"], result["metadata"]["heading"]) == ("notes.docx", "Setup")
    text = ragls("search", str(project), "gigawatt relay", "-k", "1", "-q", "--no-cache")
    assert text.stdout.splitlines()[0].endswith("manual.pdf:2-2  page 2")


def test_without_the_extra_documents_are_counted_as_needs_extra(project: Path) -> None:
    done = ragls("index", str(project), "-q", "--no-cache", blocked=True)
    assert done.returncode == 0, done.stderr
    assert "files 1, chunks 1" in done.stdout
    assert "skipped: needsExtra 2" in done.stdout
    notices = [line for line in done.stderr.splitlines() if "needsExtra" in line]
    assert notices == [
        "ragls: warning: 2 PDF and DOCX files were skipped (needsExtra): to index them, install the docs extra: "
        "pip install 'ragls[docs]'"
    ]
    # Installing the extra (here: no longer blocking it) indexes them on the next run, even from a warm store.
    assert ragls("index", str(project), "-q", blocked=True).returncode == 0
    done = ragls("index", str(project), "-q")
    assert "files 3, chunks 5" in done.stdout and "read 2 changed files, reused 1" in done.stdout
    assert "needsExtra" not in done.stdout + done.stderr


def test_without_the_extra_the_status_counts_needs_extra(project: Path) -> None:
    """What `rag/status` and MCP's index_status send: the FolderStatus of a session without the extra."""
    script = BLOCK_DOCS_EXTRA + (
        "import json; from pathlib import Path; from ragls.rag.service import RagService; "
        "from ragls.wire import status_to_wire; service = RagService(Path(sys.argv[1])); "
        "report = service.index_directory().report; "
        "print(json.dumps([dict(report.skipped), status_to_wire('file:///x', service.status())['skipped'], "
        "service.take_notices()]))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": CACHE_HOME, "RAGLS_EMBEDDING": "none"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(project)], capture_output=True, text=True, timeout=90, env=env
    )
    assert done.returncode == 0, done.stderr
    report_skipped, status_skipped, notices = json.loads(done.stdout)
    assert report_skipped == status_skipped == {"needsExtra": 2}
    assert len(notices) == 1 and "pip install 'ragls[docs]'" in notices[0]
