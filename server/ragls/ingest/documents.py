"""PDF and DOCX: a document's text page by page (PDF) or heading by heading (DOCX), from its bytes.

The extractors are the `docs` extra (pypdf, python-docx), imported the first time such a file is read; without
them the file is skipped as `needsExtra`. A document they cannot read (broken, encrypted, a zip bomb) is skipped
as `unextractable`: one file never fails a run.
"""

from __future__ import annotations

import importlib
import io
import logging
import re
import zipfile
from dataclasses import dataclass
from types import ModuleType
from typing import Any

EXTRA_INSTALL = "pip install 'ragls[docs]'"
NEEDS_EXTRA = "needsExtra"
UNEXTRACTABLE = "unextractable"
# The module each document language is read with, and the package that provides it.
MODULES_BY_LANGUAGE = {"pdf": "pypdf", "docx": "docx"}
PACKAGES_BY_LANGUAGE = {"pdf": "pypdf", "docx": "python-docx"}
# A DOCX is a zip: its parts may hold at most this many times the file's size limit once inflated, so a
# small zip bomb is refused before python-docx inflates it. XML compresses about 5-10 to one.
DOCX_MAX_EXPANSION = 10
_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_loaded: dict[str, ModuleType | None] = {}


@dataclass(frozen=True)
class Section:
    """One page of a PDF, or the part of a DOCX under one heading, as lines of text.

    `heading` is the heading path (`Install > Linux`), `title` its last step; both None before the first heading.
    """

    lines: tuple[str, ...]
    page: int | None = None
    heading: str | None = None
    title: str | None = None


class DocumentSkipped(Exception):
    """The document has no text to index; `reason` is its skip reason (`unextractable`, `tooLarge`)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def has_extractor(language: str) -> bool:
    """Whether the module that reads this document language imports (the `docs` extra is installed)."""
    return _module(language) is not None


def needs_extra_notice(n_files: int) -> str:
    """What the user is told once when PDF or DOCX files were skipped for want of the extra."""
    files = "1 PDF or DOCX file was" if n_files == 1 else f"{n_files:,} PDF and DOCX files were"
    return f"{files} skipped ({NEEDS_EXTRA}): to index them, install the docs extra: {EXTRA_INSTALL}"


def extract_sections(data: bytes, language: str, max_chars: int) -> list[Section]:
    """The document's text as sections; raises DocumentSkipped when it cannot be read or holds more than
    `max_chars` characters of text (the file size limit, applied to what the file decodes to)."""
    module = _module(language)
    if module is None:
        raise DocumentSkipped(NEEDS_EXTRA, PACKAGES_BY_LANGUAGE[language])
    try:
        sections = _pdf_sections(module, data) if language == "pdf" else _docx_sections(module, data, max_chars)
    except DocumentSkipped:
        raise
    except Exception as exc:  # The parsers raise many kinds of errors on a broken file; none may fail the run.
        raise DocumentSkipped(UNEXTRACTABLE, f"{type(exc).__name__}: {exc}") from exc
    if sum(len(line) + 1 for section in sections for line in section.lines) > max_chars:
        raise DocumentSkipped("tooLarge")
    return sections


def _module(language: str) -> ModuleType | None:
    name = MODULES_BY_LANGUAGE[language]
    if name not in _loaded:
        try:
            _loaded[name] = importlib.import_module(name)
        except ImportError:
            _loaded[name] = None
        if name == "pypdf":
            # pypdf logs a warning for every oddity of a damaged file; a broken file is counted, not narrated.
            logging.getLogger("pypdf").setLevel(logging.ERROR)
    return _loaded[name]


def _pdf_sections(pypdf: Any, data: bytes) -> list[Section]:
    reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted and not reader.decrypt(""):
        raise DocumentSkipped(UNEXTRACTABLE, "encrypted")
    return [
        Section(tuple((page.extract_text() or "").splitlines()), page=number)
        for number, page in enumerate(reader.pages, start=1)
    ]


def _docx_sections(docx: Any, data: bytes, max_chars: int) -> list[Section]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        inflated = sum(info.file_size for info in archive.infolist())
    if inflated > DOCX_MAX_EXPANSION * max_chars:
        raise DocumentSkipped("tooLarge", f"{inflated:,} bytes inflated")
    sections: list[Section] = []
    trail: list[tuple[int, str]] = []
    lines: list[str] = []
    for block in docx.Document(io.BytesIO(data)).iter_inner_content():
        if hasattr(block, "rows"):
            lines.extend(_table_lines(block))
            continue
        level = _heading_level(block)
        if level is not None and block.text.strip():
            sections.append(_section(lines, trail))
            title = " ".join(block.text.split())
            trail = [(lvl, name) for lvl, name in trail if lvl < level] + [(level, title)]
            lines = []
        lines.extend(block.text.splitlines() or [""])
    sections.append(_section(lines, trail))
    return sections


def _section(lines: list[str], trail: list[tuple[int, str]]) -> Section:
    if not trail:
        return Section(tuple(lines))
    return Section(tuple(lines), heading=" > ".join(name for _, name in trail), title=trail[-1][1])


def _heading_level(paragraph: Any) -> int | None:
    """`Title` is level 0 and `Heading N` level N, the styles python-docx's `add_heading` and Word use."""
    style = getattr(paragraph.style, "name", None) or ""
    if style.lower() == "title":
        return 0
    match = _HEADING_STYLE.match(style)
    return int(match.group(1)) if match else None


def _table_lines(table: Any) -> list[str]:
    """One line per row, its cells joined by ` | ` (a merged cell, which repeats in every row it spans, once)."""
    lines = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or cells[-1] != text:
                cells.append(text)
        if any(cells):
            lines.append(" | ".join(cells))
    return lines
