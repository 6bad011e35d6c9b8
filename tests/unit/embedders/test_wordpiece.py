"""The pure-Python WordPiece against ids checked with the real vocab (and against `tokenizers` when installed)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ragls.embedders.minilm import VOCAB_PATH, minilm_tokenizer
from ragls.embedders.wordpiece import WordPieceTokenizer

# Verified against tokenizers.BertWordPieceTokenizer(vocab.txt, lowercase=True) and the model's tokenizer.json.
KNOWN_IDS = {
    "Hello, world!": [101, 7592, 1010, 2088, 999, 102],
    "def parse_settings(raw):": [101, 13366, 11968, 3366, 1035, 10906, 1006, 6315, 1007, 1024, 102],
    "HTTPServer tokenization": [101, 16770, 2121, 6299, 19204, 3989, 102],
    "naïve café": [101, 15743, 7668, 102],
    "中文 text": [101, 1746, 1861, 3793, 102],
    "self.embed_calls += 1": [101, 2969, 1012, 7861, 8270, 1035, 4455, 1009, 1027, 1015, 102],
    "": [101, 102],
    "x" * 101: [101, 100, 102],  # longer than max_input_chars_per_word: one [UNK]
}

# Edge cases of BERT normalization: controls vanish, Unicode spaces split, accents strip, CJK is isolated.
TRICKY = [
    "Héllo Wörld naïve café",
    "中文字符测试 and 日本語",
    "\uff26\uff35\uff2c\uff2c width \uff71\uff72\uff73",  # full-width Latin, half-width katakana
    "a\x0cb c\x1cd e\u2028f g\u00a0h i\x85j",
    "İstanbul Straße ΟΔΟΣ",
    "emoji 🎉 test ⟨x⟩ “quotes” — dash",
    "\ufeffbom\u200bzero",
    "ﬁ ligature ½ ² ①",
    "한국어 텍스트",
    "tab\there\r\nnew",
    "snake_case_name CamelCaseName __init__ self.foo(bar)->baz",
]


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return minilm_tokenizer()


@pytest.mark.parametrize(("text", "ids"), KNOWN_IDS.items())
def test_known_ids(tokenizer: WordPieceTokenizer, text: str, ids: list[int]) -> None:
    assert tokenizer.encode(text) == ids


def test_pieces_read_as_expected(tokenizer: WordPieceTokenizer) -> None:
    pieces = ["def", "par", "##se", "_", "settings", "(", "raw", ")", ":"]
    assert tokenizer.tokenize("def parse_settings(raw):") == pieces
    assert tokenizer.tokenize("HTTPServer") == ["https", "##er", "##ver"]


def test_truncates_to_max_length_keeping_the_separator() -> None:
    short = WordPieceTokenizer.from_file(VOCAB_PATH, max_length=8)
    ids = short.encode("one two three four five six seven eight nine ten")
    assert len(ids) == 8
    assert ids[0] == short.cls_id and ids[-1] == short.sep_id
    assert ids[1:-1] == short.encode("one two three four five six")[1:-1]
    assert len(minilm_tokenizer().encode("word " * 1000)) == 256


def test_special_token_text_is_plain_text(tokenizer: WordPieceTokenizer) -> None:
    # Unlike `tokenizers`, a literal "[SEP]" in a chunk is punctuation and letters, never a separator.
    assert tokenizer.encode("[SEP]")[1:-1] == tokenizer.encode("[ sep ]")[1:-1]


def test_cased_vocabulary_keeps_case() -> None:
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "Hello", "hello", "##s"]
    cased = WordPieceTokenizer(vocab, lowercase=False)
    assert cased.encode("Hello hellos") == [2, 4, 5, 6, 3]
    with pytest.raises(ValueError, match=r"\[CLS\]"):
        WordPieceTokenizer(["[PAD]", "[UNK]"])


def _python_functions(limit: int) -> list[str]:
    root = Path(__file__).resolve().parents[3] / "server" / "ragls"
    texts: list[str] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                texts.append(ast.get_source_segment(source, node) or "")
    return texts[:limit]


def test_matches_the_tokenizers_package(tokenizer: WordPieceTokenizer) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.BertWordPieceTokenizer(str(VOCAB_PATH), lowercase=True)
    reference.enable_truncation(256)
    # `tokenizers` turns a literal "[SEP]" in the text into the special token; we do not (see above).
    specials = ("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")
    texts = [t for t in (*KNOWN_IDS, *TRICKY, *_python_functions(300)) if not any(s in t for s in specials)]
    assert len(texts) > 250
    mismatched = [t[:60] for t in texts if tokenizer.encode(t) != reference.encode(t).ids]
    assert mismatched == []
