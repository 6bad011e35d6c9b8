"""Reading one file: skip reasons, decoding, fingerprints and reuse; and format detection."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from ragls.config import ChunkShape, Limits
from ragls.ingest.formats import Format, detect_format
from ragls.ingest.reader import ReadOutcome, read_file

SHAPE = ChunkShape()


def _read(
    root: Path,
    name: str,
    data: bytes | None,
    limits: Limits | None = None,
    shape: ChunkShape = SHAPE,
    previous: str | None = None,
) -> ReadOutcome:
    path = root / name
    if data is not None:
        path.write_bytes(data)
    return read_file(path, name, limits or Limits(), shape, previous)


def _text(outcome: ReadOutcome) -> str:
    assert outcome.chunked is not None
    return "\n".join(chunk.content for chunk in outcome.chunked.chunks)


READ_CASES: dict[str, tuple[str, bytes | None, Limits | None, str | None, str | None]] = {
    # name, bytes (None: the file does not exist), limits, expected skip reason, text the chunks must hold
    "plain-utf8": ("a.py", "def f():\n    return 'é'\n".encode(), None, None, "return 'é'"),
    "nul-bytes": ("a.txt", b"abc\x00def\n", None, "binary", None),
    "nul-late-in-file": ("a.txt", b"x" * 20_000 + b"\x00", None, "binary", None),
    "invalid-utf8": ("a.txt", b"caf\xe9 au lait\n", None, "undecodable", None),
    "truncated-utf8": ("a.md", b"# title\n\xe2\x82", None, "undecodable", None),
    "utf8-bom": ("a.md", codecs.BOM_UTF8 + "# Titre é\n".encode(), None, None, "# Titre é"),
    "utf16-le-bom": ("a.txt", codecs.BOM_UTF16_LE + "héllo wörld\n".encode("utf-16-le"), None, None, "héllo wörld"),
    "utf16-be-bom": ("a.py", codecs.BOM_UTF16_BE + "x = 'ü'\n".encode("utf-16-be"), None, None, "x = 'ü'"),
    "binary-extension-not-read": ("image.png", None, None, "binary", None),
    "binary-extension-any-case": ("IMAGE.PNG", b"text really\n", None, "binary", None),
    "over-max-file-bytes": ("a.txt", b"0123456789A", Limits(max_file_bytes=10), "tooLarge", None),
    "at-max-file-bytes": ("a.txt", b"012345678\n", Limits(max_file_bytes=10), None, "012345678"),
    "missing-file": ("gone.py", None, None, "unreadable", None),
}


@pytest.mark.parametrize("case", sorted(READ_CASES))
def test_read_file(tmp_path: Path, case: str) -> None:
    name, data, limits, reason, text = READ_CASES[case]
    outcome = _read(tmp_path, name, data, limits)
    assert outcome.skip_reason == reason
    if reason is not None:
        assert outcome.fingerprint is None
        assert outcome.chunked is None
        return
    assert outcome.fingerprint is not None
    content = _text(outcome)
    assert text is not None and text in content
    assert "\ufeff" not in content
    assert outcome.decoded_chars > 0


def test_same_fingerprint_reuses_without_chunking(tmp_path: Path) -> None:
    first = _read(tmp_path, "a.py", b"def f():\n    pass\n")
    assert first.fingerprint is not None and first.chunked is not None and first.chunked.chunks
    again = _read(tmp_path, "a.py", None, previous=first.fingerprint)
    assert again.skip_reason is None
    assert again.fingerprint == first.fingerprint
    assert again.chunked is None
    assert again.decoded_chars == first.decoded_chars


def test_a_stale_previous_fingerprint_chunks_again(tmp_path: Path) -> None:
    outcome = _read(tmp_path, "a.py", b"x = 1\n", previous="0" * 64)
    assert outcome.chunked is not None and outcome.chunked.chunks


FINGERPRINT_CASES: dict[str, tuple[str, bytes, ChunkShape, str, bytes, ChunkShape, bool]] = {
    # name, bytes, shape; second name, bytes, shape; whether the fingerprints are equal
    "same-everything": ("a.py", b"x = 1\n", SHAPE, "a.py", b"x = 1\n", SHAPE, True),
    "path-alone-does-not-matter": ("a.py", b"x = 1\n", SHAPE, "b.py", b"x = 1\n", SHAPE, True),
    "content-changes": ("a.py", b"x = 1\n", SHAPE, "a.py", b"x = 2\n", SHAPE, False),
    "whitespace-changes": ("a.py", b"x = 1\n", SHAPE, "a.py", b"x = 1\n\n", SHAPE, False),
    "max-lines-changes": ("a.py", b"x = 1\n", SHAPE, "a.py", b"x = 1\n", ChunkShape(max_lines=81), False),
    "overlap-changes": ("a.py", b"x = 1\n", SHAPE, "a.py", b"x = 1\n", ChunkShape(overlap_lines=3), False),
    "max-chars-changes": ("a.py", b"x = 1\n", SHAPE, "a.py", b"x = 1\n", ChunkShape(max_chars=100), False),
    "format-changes": ("a.py", b"x = 1\n", SHAPE, "a.txt", b"x = 1\n", SHAPE, False),
}


@pytest.mark.parametrize("case", sorted(FINGERPRINT_CASES))
def test_fingerprint(tmp_path: Path, case: str) -> None:
    name1, data1, shape1, name2, data2, shape2, equal = FINGERPRINT_CASES[case]
    (tmp_path / "1").mkdir()
    (tmp_path / "2").mkdir()
    first = _read(tmp_path / "1", name1, data1, shape=shape1).fingerprint
    second = _read(tmp_path / "2", name2, data2, shape=shape2).fingerprint
    assert first is not None and second is not None
    assert (first == second) is equal


FORMAT_CASES: dict[str, Format | None] = {
    "a.py": Format("code", "python"),
    "pkg/mod.PY": Format("code", "python"),
    "types.pyi": Format("code", "python"),
    "app.tsx": Format("code", "tsx"),
    "app.ts": Format("code", "typescript"),
    "index.mjs": Format("code", "javascript"),
    "main.go": Format("code", "go"),
    "lib.rs": Format("code", "rust"),
    "run.sh": Format("code", "bash"),
    "README.md": Format("markdown", "markdown"),
    "doc.mdx": Format("markdown", "markdown"),
    "Makefile": Format("text", "make"),
    "sub/Dockerfile": Format("text", "dockerfile"),
    "LICENSE": Format("text", "text"),
    "conf.yml": Format("text", "yaml"),
    "notes": Format("text", "text"),
    "weird.unknownext": Format("text", "text"),
    ".bashrc": Format("text", "text"),
    "logo.png": None,
    "photo.JPG": None,
    "lib.so": None,
    "archive.tar.gz": None,
}


@pytest.mark.parametrize("path", sorted(FORMAT_CASES))
def test_detect_format(path: str) -> None:
    assert detect_format(path) == FORMAT_CASES[path]
