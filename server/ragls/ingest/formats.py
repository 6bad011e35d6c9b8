"""Format detection and decoding: which language a file is, and its text or why it has none."""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import PurePosixPath

CODE_LANGUAGES_BY_EXTENSION = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".lua": "lua",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
}
MARKDOWN_EXTENSIONS = {".md", ".markdown", ".mdx", ".mkd"}
TEXT_LANGUAGES_BY_EXTENSION = {
    ".txt": "text",
    ".rst": "rst",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".xml": "xml",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".sql": "sql",
    ".csv": "csv",
    ".proto": "proto",
    ".graphql": "graphql",
    ".vue": "vue",
    ".svelte": "svelte",
    ".tex": "latex",
    ".r": "r",
    ".pl": "perl",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".clj": "clojure",
    ".dart": "dart",
    ".zig": "zig",
    ".nim": "nim",
    ".jl": "julia",
    ".vim": "vim",
    ".el": "elisp",
}
TEXT_FILE_NAMES = {
    "makefile": "make",
    "dockerfile": "dockerfile",
    "license": "text",
    "readme": "text",
    "changelog": "text",
    "authors": "text",
    "contributing": "text",
    "gemfile": "ruby",
    "rakefile": "ruby",
}
# Extensions that are never text, skipped without reading their bytes.
BINARY_EXTENSIONS = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".bmp",
    ".ico",
    ".webp",
    ".zip",
    ".gz",
    ".tgz",
    ".bz2",
    ".xz",
    ".7z",
    ".tar",
    ".jar",
    ".war",
    ".class",
    ".so",
    ".dylib",
    ".dll",
    ".exe",
    ".o",
    ".a",
    ".pyc",
    ".pyo",
    ".whl",
    ".woff",
    ".woff2",
    ".ttf",
    ".otf",
    ".eot",
    ".mp3",
    ".mp4",
    ".wav",
    ".ogg",
    ".mov",
    ".avi",
    ".sqlite",
    ".db",
    ".bin",
    ".dat",
    ".npy",
    ".npz",
    ".pkl",
    ".parquet",
}
# Binary documents whose text an extractor reads (`documents.py`), page by page or heading by heading.
DOCUMENT_LANGUAGES_BY_EXTENSION = {".pdf": "pdf", ".docx": "docx"}
SNIFF_BYTES = 8192


@dataclass(frozen=True)
class Format:
    """A file's format: the chunker family (`code`, `markdown`, `text`, `document`) and its language."""

    family: str
    language: str


def detect_format(rel_path: str) -> Format | None:
    """The format implied by a path, or None when the extension says it is binary."""
    path = PurePosixPath(rel_path)
    suffix = path.suffix.lower()
    if suffix in BINARY_EXTENSIONS:
        return None
    if suffix in DOCUMENT_LANGUAGES_BY_EXTENSION:
        return Format("document", DOCUMENT_LANGUAGES_BY_EXTENSION[suffix])
    if suffix in CODE_LANGUAGES_BY_EXTENSION:
        return Format("code", CODE_LANGUAGES_BY_EXTENSION[suffix])
    if suffix in MARKDOWN_EXTENSIONS:
        return Format("markdown", "markdown")
    if suffix in TEXT_LANGUAGES_BY_EXTENSION:
        return Format("text", TEXT_LANGUAGES_BY_EXTENSION[suffix])
    return Format("text", TEXT_FILE_NAMES.get(path.name.lower(), "text"))


def decode(data: bytes) -> str | None:
    """Text of a file's bytes, honouring a BOM; None when the bytes are binary or not valid text."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:SNIFF_BYTES] or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
