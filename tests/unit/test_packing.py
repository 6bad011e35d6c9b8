"""Chunk texts held packed: every text comes back as it was given, and a document reads as it always did."""

from __future__ import annotations

import pickle
import sys
from dataclasses import FrozenInstanceError

import pytest

from ragls.model import Document
from ragls.packing import MIN_PACKED_CHARS, pack, unpack

CODE = "def handler(request):\n    return request.user.is_authenticated\n" * 20
TEXTS = {
    "code": CODE,
    "unicode": "# Überschrift: 日本語のテキスト, emoji 🎉, combining é\n" * 10,
    "surrogate-escaped": "bad bytes \udcff\udcfe kept as lone surrogates\n" * 10,
    "one character": "x",
    "just under the threshold": "y" * (MIN_PACKED_CHARS - 1),
    "incompressible": "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(300)),
    "crlf and nul": "line\r\nwith\x00nul\r\n" * 30,
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_every_text_comes_back_as_it_was_given(text: str) -> None:
    packed = pack(text)
    assert unpack(packed) == text
    # Held packed only where that is smaller than the string itself.
    assert sys.getsizeof(packed) <= sys.getsizeof(text)


def test_short_texts_stay_plain_and_code_is_a_third_of_its_size_or_less() -> None:
    assert pack("y" * (MIN_PACKED_CHARS - 1)) == "y" * (MIN_PACKED_CHARS - 1)
    packed = pack(CODE)
    assert isinstance(packed, bytes) and sys.getsizeof(packed) * 3 < sys.getsizeof(CODE)


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_a_document_reads_its_content_as_given(text: str) -> None:
    document = Document("a.py#handler", text, {"file": "a.py"})
    assert document.content == text
    assert Document.from_packed(document.id, document.packed_content, document.metadata).content == text
    copied = pickle.loads(pickle.dumps(document))
    assert (copied.id, copied.content, dict(copied.metadata)) == (document.id, text, {"file": "a.py"})
    assert document.with_embedding((1.0, 0.0)).content == text


@pytest.mark.parametrize("content", ["", "   \n\t", None, b"bytes are not text"])
def test_empty_or_blank_content_is_refused_before_packing(content: object) -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        Document("d", content)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty string"):
        Document.from_packed("d", b"" if content == b"bytes are not text" else content)  # type: ignore[arg-type]


def test_an_empty_id_is_refused() -> None:
    with pytest.raises(ValueError, match="id must be"):
        Document("", CODE)
    with pytest.raises(ValueError, match="id must be"):
        Document.from_packed("", pack(CODE))


def test_a_document_is_frozen_and_equal_by_id() -> None:
    document = Document("d", CODE, {"file": "a.py"})
    with pytest.raises(FrozenInstanceError):
        document.id = "e"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        document.content = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        document.metadata["file"] = "b.py"  # type: ignore[index]
    assert document == Document("d", "other text") and hash(document) == hash(Document("d", "x"))
    assert document != Document("e", CODE)


def test_a_loaded_document_is_the_document_that_was_saved() -> None:
    original = Document("a.py#f", "def f():\n    return 'value'\n" * 20, {"file": "a.py", "startLine": 1})
    packed = original.packed_content
    assert isinstance(packed, bytes)
    loaded = Document.loaded(original.id, packed, dict(original.metadata))
    assert loaded == original and loaded.content == original.content
    assert dict(loaded.metadata) == dict(original.metadata) and loaded.embedding is None
    with pytest.raises(TypeError):
        loaded.metadata["file"] = "b.py"  # type: ignore[index]
    for bad_id, bad_text in (("", packed), ("a.py#f", b"")):
        with pytest.raises(ValueError):
            Document.loaded(bad_id, bad_text, {})
