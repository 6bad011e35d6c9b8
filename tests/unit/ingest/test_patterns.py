"""Ignore-file lines and patterns as git reads them, without git (tests/robustness/test_ignore_parity.py checks
the same edges against git itself)."""

from __future__ import annotations

import pytest

from ragls.ingest.patterns import compile_line, ignore_file_lines, path_bytes

LINE_CASES: dict[str, tuple[bytes, list[str]]] = {
    "lf": (b"a\nb\n", ["a", "b"]),
    "crlf": (b"a\r\nb\r\n", ["a", "b"]),
    "no-final-newline": (b"a\nb", ["a", "b"]),
    "cr-only-is-one-line": (b"a\rb\r", ["a\rb"]),
    "one-cr-dropped-of-two": (b"Icon\r\r\n", ["Icon\r"]),
    "form-feed-and-unicode-breaks-stay": ("a\fb\x85c\u2028d\n".encode(), ["a\fb\x85c\u2028d"]),
    "bom-dropped-at-the-start-only": (b"\xef\xbb\xbfa\n\xef\xbb\xbfb\n", ["a", "\ufeffb"]),
    "blank-and-comment-lines-kept-for-numbering": (b"# c\n\na\n", ["# c", "", "a"]),
    "trailing-spaces-trimmed": (b"a   \n", ["a"]),
    "escaped-space-kept": (b"a\\   \n", ["a\\ "]),
    "trailing-tab-kept": (b"a\t\n", ["a\t"]),
    "not-utf8-kept-as-surrogates": (b"caf\xe9\n", ["caf\udce9"]),
}


@pytest.mark.parametrize("case", sorted(LINE_CASES))
def test_lines(case: str) -> None:
    data, lines = LINE_CASES[case]
    assert ignore_file_lines(data) == lines


# (line, paths it matches, paths it does not), paths relative to the ignore file's directory.
MATCH_CASES: dict[str, tuple[str, list[str], list[str]]] = {
    "cr-kept": ("Icon\r", ["Icon\r"], ["Icon"]),
    "cr-in-brackets": ("Icon[\r]", ["Icon\r"], ["Icon", "Iconr"]),
    "trailing-tab": ("a\t", ["a\t"], ["a"]),
    "trailing-nbsp": ("a\u00a0", ["a\u00a0"], ["a"]),
    "escaped-space": ("a\\ ", ["a "], ["a"]),
    "escape-in-brackets": ("x[\\]a]", ["x]", "xa"], ["x\\"]),
    "posix-class": ("f[[:digit:]]", ["f1"], ["fa"]),
    "reversed-range-keeps-its-start": ("j[z-a]", ["jz"], ["ja", "jm"]),
    "question-mark-is-one-byte": ("caf?", ["cafe"], ["café"]),
    "three-stars-are-two": ("***/b", ["b", "d/b", "d/e/b"], ["c"]),
    "stars-glued-to-a-literal-start": ("a**/b", ["ab", "a/b", "ax/y/b"], ["axb", "c/ab"]),
    "not-utf8": ("caf\udce9", ["caf\udce9"], ["café"]),
}


def _matches(line: str, path: str) -> bool:
    pattern = compile_line(line)
    assert pattern is not None
    return pattern.regex.search(path_bytes(path)) is not None


@pytest.mark.parametrize("case", sorted(MATCH_CASES))
def test_matches(case: str) -> None:
    line, matching, other = MATCH_CASES[case]
    assert [p for p in matching if not _matches(line, p)] == []
    assert [p for p in other if _matches(line, p)] == []


@pytest.mark.parametrize("line", ["", "# comment", "a\\", "!", "/", "!/", "c[\\]", "a[b", "h[[:nope:]]"])
def test_lines_git_never_matches_compile_to_nothing(line: str) -> None:
    assert compile_line(line) is None
