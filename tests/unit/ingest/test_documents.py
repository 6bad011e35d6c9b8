"""PDF and DOCX: text per page or heading, with the page or heading in metadata, citations and fingerprints;
broken, oversized and linked documents are skipped and counted, never a failed run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragls.config import ChunkShape, Limits, Settings
from ragls.ingest.formats import Format, detect_format
from ragls.ingest.reader import read_file
from ragls.rag.service import RagService
from ragls.wire import search_result_to_wire
from tests.document_files import pdf_bytes, write_docx, write_pdf

MANUAL_PAGES = [
    ["Installing the flux capacitor", "Mount it behind the driver seat."],
    ["Troubleshooting", "A gigawatt relay that hums needs a reset."],
    [],  # a page without text (a scanned image, say) gives no chunk
    ["Warranty voids after time travel."],
]
NOTES_BLOCKS = [
    ("p", "Preface about the widget factory."),
    ("h1", "Setup"),
    ("p", "Install the sprocket daemon first."),
    ("h2", "Linux"),
    ("p", "Use the package manager for the sprocket daemon."),
    ("h1", "Usage"),
    ("p", "Call the frobnicator every morning."),
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_pdf(tmp_path / "docs/manual.pdf", MANUAL_PAGES)
    write_docx(tmp_path / "docs/notes.docx", NOTES_BLOCKS)
    (tmp_path / "src.py").write_text("def sprocket():\n    return 1\n", encoding="utf-8")
    return tmp_path


def _service(root: Path, settings: Settings | None = None) -> RagService:
    service = RagService(root, settings)
    service.index_directory()
    return service


def test_formats() -> None:
    assert detect_format("a/B.PDF") == Format("document", "pdf")
    assert detect_format("notes.docx") == Format("document", "docx")
    assert detect_format("old.doc") == Format("text", "text")  # Word 97 is not read: its bytes are binary


def test_pdf_chunks_per_page_with_page_metadata(folder: Path) -> None:
    service = _service(folder)
    ids = service.state.files["docs/manual.pdf"].chunk_ids
    chunks = sorted((dict(service.get_document(i).metadata) for i in ids), key=lambda m: m["page"])
    assert [(m["page"], m["startLine"], m["endLine"], m["language"]) for m in chunks] == [
        (1, 1, 2, "pdf"),
        (2, 3, 4, "pdf"),
        (4, 5, 5, "pdf"),
    ]
    best = service.search("gigawatt relay hums", 1)[0]
    assert best.document.metadata["page"] == 2
    assert "gigawatt relay" in best.document.content
    wire = search_result_to_wire(best, service.root)
    assert wire["metadata"]["page"] == 2 and wire["uri"].endswith("/docs/manual.pdf")
    service.close()


def test_docx_chunks_per_heading_with_heading_metadata_and_symbols(folder: Path) -> None:
    service = _service(folder)
    best = service.search("package manager sprocket daemon linux", 1)[0]
    metadata = best.document.metadata
    assert (metadata["file"], metadata["heading"], metadata["symbol"]) == (
        "docs/notes.docx",
        "Setup > Linux",
        "Setup > Linux",
    )
    assert best.document.content == "Linux\nUse the package manager for the sprocket daemon."
    preface = service.search("preface widget factory", 1)[0].document.metadata
    assert preface["file"] == "docs/notes.docx" and "heading" not in preface and "page" not in preface
    symbols = {(s.qualified_name, s.container) for s in service.symbols("", 50) if s.file == "docs/notes.docx"}
    assert symbols == {("Setup", None), ("Setup > Linux", "Setup"), ("Usage", None)}
    service.close()


def test_citations_name_the_page_and_heading(folder: Path) -> None:
    service = _service(folder)
    plain, _ = service.build_context_prompt("gigawatt relay hums", 1, "plain")
    assert "--- file: docs/manual.pdf (page 2, lines 3-4) ---" in plain
    plain, _ = service.build_context_prompt("frobnicator every morning", 1, "plain")
    assert "--- file: docs/notes.docx (heading Usage, lines " in plain
    fenced, _ = service.build_context_prompt("gigawatt relay hums", 1)
    assert "<entry><key>page</key><value>2</value></entry>" in fenced
    service.close()


def test_documents_are_fingerprinted_like_other_files(folder: Path) -> None:
    service = _service(folder)
    calls = service.chunk_calls
    pdf = folder / "docs/manual.pdf"
    os.utime(pdf, ns=(1, 1))  # a new stat key, the same bytes: read again, not re-chunked
    service.index_directory()
    assert service.chunk_calls == calls
    write_pdf(pdf, [["A brand new tachyon chapter."]])
    service.update_paths(["docs/manual.pdf"])
    assert service.chunk_calls == calls + 1
    assert service.search("tachyon chapter", 1)[0].document.metadata["page"] == 1
    assert not service.search("gigawatt relay", 5, {"file": "docs/manual.pdf"})
    service.close()


def test_broken_documents_are_skipped_and_counted(folder: Path) -> None:
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf at all\n")
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 a zip cut short")
    (folder / "empty.docx").write_bytes(b"")
    (folder / "truncated.pdf").write_bytes(pdf_bytes(MANUAL_PAGES)[:200])
    service = _service(folder)
    status = service.status()
    assert status.skipped == {"unextractable": 4}
    assert status.files == 3 and status.error is None
    assert service.search("flux capacitor", 1)[0].document.metadata["file"] == "docs/manual.pdf"
    service.close()


def test_documents_respect_max_file_bytes(tmp_path: Path) -> None:
    data = pdf_bytes(MANUAL_PAGES)
    (tmp_path / "manual.pdf").write_bytes(data)
    outcome = read_file(tmp_path / "manual.pdf", "manual.pdf", Limits(max_file_bytes=len(data) - 1), ChunkShape(), None)
    assert outcome.skip_reason == "tooLarge"
    # The extracted text counts too: a small file that inflates past the limit is refused.
    outcome = read_file(tmp_path / "manual.pdf", "manual.pdf", Limits(max_file_bytes=len(data)), ChunkShape(), None)
    assert outcome.skip_reason is None and outcome.decoded_chars < len(data)
    write_docx(tmp_path / "big.docx", [("p", "word " * 5000)])
    size = (tmp_path / "big.docx").stat().st_size
    outcome = read_file(tmp_path / "big.docx", "big.docx", Limits(max_file_bytes=size + 10), ChunkShape(), None)
    assert outcome.skip_reason == "tooLarge"  # its 25,000 characters are more than the limit


def test_a_linked_folder_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_pdf(outside / "secret.pdf", [["classified payload"]])
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(outside, target_is_directory=True)
    outcome = read_file(root / "linked/secret.pdf", "linked/secret.pdf", Limits(), ChunkShape(), None, root)
    assert outcome.skip_reason == "symlink"
    (root / "doc.pdf").symlink_to(outside / "secret.pdf")
    assert read_file(root / "doc.pdf", "doc.pdf", Limits(), ChunkShape(), None, root).skip_reason == "symlink"
