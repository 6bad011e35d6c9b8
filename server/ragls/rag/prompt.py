"""Context prompts: results fenced as untrusted, XML-escaped evidence, or the older plain layout."""

from __future__ import annotations

from xml.sax.saxutils import escape

from ragls.model import SearchResult

FORMATS = ("fenced", "plain")


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
            header = f"--- file: {metadata['file']} (lines {metadata.get('startLine')}-{metadata.get('endLine')}) ---"
        else:
            header = f"--- document: {result.document.id} ---"
        parts.append(header)
        parts.append(result.document.content)
        parts.append("")
    parts.append("[User question]")
    parts.append(query)
    return "\n".join(parts)
