"""Context prompts: results fenced as untrusted, XML-escaped evidence, or the older plain layout."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from ragls.model import SearchResult

FORMATS = ("fenced", "plain")
# The plain layout's markers. In content, ids and file names a backslash neutralizes each (`[User question]`
# becomes `\[User question]`), so a file cannot open a question section, or a result, of its own.
_PLAIN_MARKER = re.compile(
    r"\[\s*(?:user\s+question|relevant\s+code\s+context)\s*\]|-{3,}\s*(?:file|document)\s*:", re.IGNORECASE
)
# A header is one line: line breaks (every kind `str.splitlines` knows) and other controls in a name are escaped.
_HEADER_BREAK = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def build_prompt(query: str, results: list[SearchResult], prompt_format: str = "fenced") -> str:
    """The query with its context; the query alone when there is no context."""
    if not results:
        return query
    if prompt_format == "plain":
        return _plain(query, results)
    return _fenced(query, results)


def _fenced(query: str, results: list[SearchResult]) -> str:
    parts = ["<tnsai-memory>"]
    for result in results:
        document = result.document
        parts.append("<evidence>")
        parts.append(f"<document-id>{escape(document.id)}</document-id>")
        parts.append("<provenance>")
        for key, value in document.metadata.items():
            parts.append(f"<entry><key>{escape(str(key))}</key><value>{escape(str(value))}</value></entry>")
        parts.append("</provenance>")
        parts.append(f"<content>{escape(document.content)}</content>")
        parts.append("</evidence>")
    parts.append("</tnsai-memory>")
    parts.append("")
    parts.append("<tnsai-user-message>")
    parts.append(query)
    parts.append("</tnsai-user-message>")
    return "\n".join(parts)


def _plain(query: str, results: list[SearchResult]) -> str:
    parts = ["[Relevant code context]"]
    for result in results:
        metadata = result.document.metadata
        if metadata.get("file"):
            lines = f"{metadata.get('startLine')}-{metadata.get('endLine')}"
            header = f"--- file: {_header_value(metadata['file'])} ({_where(metadata)}lines {_header_value(lines)}) ---"
        else:
            header = f"--- document: {_header_value(result.document.id)} ---"
        parts.append(header)
        parts.append(_neutralized(result.document.content))
        parts.append("")
    parts.append("[User question]")
    parts.append(query)
    return "\n".join(parts)


def _where(metadata: Mapping[str, Any]) -> str:
    """A PDF chunk's page or a DOCX chunk's heading, cited before its lines (`page 3, `); empty for other files."""
    if metadata.get("page") is not None:
        return f"page {_header_value(metadata['page'])}, "
    if metadata.get("heading"):
        return f"heading {_header_value(metadata['heading'])}, "
    return ""


def _neutralized(text: str) -> str:
    return _PLAIN_MARKER.sub(lambda match: "\\" + match.group(0), text)


def _header_value(value: object) -> str:
    """A name as it may appear in a header line: on that line, and without markers."""
    text = _HEADER_BREAK.sub(lambda match: json.dumps(match.group(0))[1:-1], str(value))
    return _neutralized(text)
