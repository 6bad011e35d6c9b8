"""Ignore-file lines as git reads them, and one line as a regex: pathspec translates it, once the points where it
reads a line otherwise than git are handled.

Git (dir.c, wildmatch.c) and pathspec disagree on these, each handled before pathspec sees the line:
- git splits lines at `\\n` only and drops one `\\r` before it, and a UTF-8 BOM; `str.splitlines` splits at `\\f`,
  `\\x85` or U+2028 too, and keeps a lone `\\r` apart from its line;
- git trims only unescaped trailing spaces; pathspec strips every kind of whitespace at both ends (`Icon\\r` lost
  its `\\r`), so the whitespace it would strip is handed to it as stand-in characters;
- inside `[...]` git reads `\\` as an escape and `[:alpha:]` as a class, and a class never matches `/`; pathspec
  copies the brackets into the regex as they are, so each bracket expression is translated here and stands in;
- git matches bytes (`?` or `[!a]` is one byte of a two-byte `é`): each byte is read as one character (latin-1), and
  the regex matches a path's UTF-8 bytes;
- git reads `***` between slashes as `**`, a `**/` right after a pattern's literal start (`a**/b`) as matching any
  directories, and `!/` as nothing; pathspec reads one segment, one segment, and every directory.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import pathspec

_UTF8_BOM = b"\xef\xbb\xbf"
# pathspec's class for one gitignore line (whichever version is installed); its `pattern_to_regex` translates it.
_PATHSPEC_PATTERN = type(pathspec.GitIgnoreSpec.from_lines(["x"]).patterns[0])
# Characters from a private-use plane stand in for what pathspec must not read (a line read byte by byte has none).
_FIRST_STAND_IN = 0xF0000
# What git's `**` matches where pathspec would not read it as `**`: with the `/` after it (`**/`: no directory or any;
# `**\\/`: one or more), and at the end of a pattern.
_ANY_DIRECTORIES = "(?:(?s:.*)/)?"
_SOME_DIRECTORIES = "(?:(?s:.*)/)"
_ANYTHING = "(?s:.*)"
_TAKING_SLASH = (_ANY_DIRECTORIES, _SOME_DIRECTORIES)
# Git's POSIX classes (`[[:alpha:]]`), ASCII only as in git's sane_ctype.
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r",  # git's isspace: no vertical tab nor form feed
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


@dataclass(frozen=True, slots=True)
class Pattern:
    """One ignore-file line as a regex over a relative path's UTF-8 bytes (`path_bytes`); `include` False is a
    `!` line, which re-includes."""

    include: bool
    regex: re.Pattern[bytes]


def ignore_file_lines(data: bytes) -> list[str]:
    """The lines of an ignore file as git reads them, one per `\\n`, blanks and comments included (so an index is a
    line number): a UTF-8 BOM dropped, one `\\r` before each `\\n` dropped, unescaped trailing spaces trimmed.

    Bytes that are not UTF-8 decode as the walk's file names do (surrogate escapes), so they still match."""
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    lines = data.decode("utf-8", errors="surrogateescape").split("\n")
    if lines[-1] == "":
        lines.pop()  # the last `\n` ends a line; it does not start one
    return [_trim_trailing_spaces(line[:-1] if line.endswith("\r") else line) for line in lines]


def path_bytes(rel_path: str) -> bytes:
    """A relative path as the patterns match it: the bytes git sees (a name that is not UTF-8 as it was on disk)."""
    return rel_path.encode("utf-8", errors="surrogateescape")


def is_pattern_line(line: str) -> bool:
    """Whether a line from `ignore_file_lines` is a pattern (not a blank or a comment); the caps count these."""
    return bool(line) and not line.startswith("#")


@functools.lru_cache(maxsize=16384)
def compile_line(line: str) -> Pattern | None:
    """A line from `ignore_file_lines` as a regex; None for a blank, a comment, or a line git never matches
    (a lone `\\` at the end, an unclosed `[`, an unknown `[:class:]`, `!` alone)."""
    if not is_pattern_line(line):
        return None
    prepared = _for_pathspec(path_bytes(line).decode("latin-1"))
    if prepared is None:
        return None
    text, meanings = prepared
    try:
        regex, include = _PATHSPEC_PATTERN.pattern_to_regex(_dirs_below(text))
        if regex is None or include is None:
            return None
        for index, meaning in enumerate(meanings):
            regex = regex.replace(chr(_FIRST_STAND_IN + index), meaning)
        return Pattern(include, re.compile(regex.encode("latin-1")))
    except (ValueError, re.error):
        return None


def _trim_trailing_spaces(line: str) -> str:
    """Git's trim_trailing_spaces: unescaped spaces at the end go; tabs, `\\r` and an escaped space (`\\ `) stay."""
    if not line.endswith(" "):
        return line
    last_space: int | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if char == " ":
            last_space = index if last_space is None else last_space
        elif char == "\\":
            index += 1
            if index == len(line):
                return line
            last_space = None
        else:
            last_space = None
        index += 1
    return line if last_space is None else line[:last_space]


def _for_pathspec(line: str) -> tuple[str, list[str]] | None:
    """The line as pathspec should read it, and the regex each stand-in means; None when git never matches it.

    Stand-ins replace each bracket expression, the whitespace pathspec would strip from either end (leading,
    trailing or escaped), and the `*` runs git reads as `**` where pathspec would not.
    """
    if not line.lstrip("!").strip("/"):
        return None  # `/` or `!/`: git matches nothing with it; pathspec would read `!/` as every directory
    rewrite = _Rewrite(lead=len(line) - len(line.lstrip()), tail=len(line.rstrip()))
    index = 0
    while index < len(line):
        next_index = rewrite.step(line, index)
        if next_index is None:
            return None
        index = next_index
    text = "".join(rewrite.pieces)
    return (_anchored(text) if rewrite.hidden_slash else text), rewrite.meanings


@dataclass
class _Rewrite:
    """A line being rewritten for pathspec, piece by piece."""

    lead: int  # where leading whitespace ends
    tail: int  # where trailing whitespace starts
    pieces: list[str] = field(default_factory=list)
    meanings: list[str] = field(default_factory=list)
    hidden_slash: bool = False  # a `/` inside a stand-in, which still makes git match from the directory
    took_slash: bool = False  # the last piece stands in for a `/` too: a `**` after it starts a segment to git

    def step(self, line: str, index: int) -> int | None:
        """Rewrite what starts at `index`; the index after it, or None when git never matches the line."""
        char, following = line[index], line[index + 1 : index + 2]
        if char == "\\" and following.isspace():
            return self._stand_in(re.escape(following), index + 2)
        if char == "\\" and following == "/":
            if _escaped_slash_never_matches(line, index):
                return None
            return self._text("/", index + 2)  # `\/` is a `/` to git: pathspec would split the segment before it
        if char == "\\":
            # A lone `\` at the end: git never matches a pattern that ends in an escape with nothing to escape.
            return self._text(line[index : index + 2], index + 2) if following else None
        if char == "[":
            bracket = _bracket(line, index)
            if bracket is None:
                return None
            meaning, end, names_slash = bracket
            self.hidden_slash = self.hidden_slash or names_slash
            return self._stand_in(meaning, end)
        if char == "*":
            text, star_meaning, end = _star_run(line, index, self.took_slash)
            if star_meaning is None:
                return self._text(text, end)
            self.hidden_slash = self.hidden_slash or star_meaning in _TAKING_SLASH
            return self._stand_in(star_meaning, end, took_slash=star_meaning in _TAKING_SLASH)
        if char.isspace() and (index < self.lead or index >= self.tail):
            return self._stand_in(re.escape(char), index + 1)
        return self._text(char, index + 1)

    def _text(self, text: str, end: int) -> int:
        self.pieces.append(text)
        self.took_slash = False
        return end

    def _stand_in(self, meaning: str, end: int, took_slash: bool = False) -> int:
        self.pieces.append(chr(_FIRST_STAND_IN + len(self.meanings)))
        self.meanings.append(meaning)
        self.took_slash = took_slash
        return end


def _star_run(line: str, start: int, after_hidden_slash: bool = False) -> tuple[str, str | None, int]:
    """A run of `*` at `start`: the text pathspec should read for it, or the regex a stand-in for it means; and the
    index after what it covers (a `/` after it, too, when the regex holds one).

    Git reads two or more stars as `**` when a `/` (or the pattern's start) is before them and a `/` (or its end)
    after; and, in a pattern with a `/`, right after the literal start (`a**/b`), since git matches that first and
    the rest from there. pathspec knows `**` only as a whole segment.
    """
    stars = len(line) - start - len(line[start:].lstrip("*"))
    end = start + stars
    after = line[end:]
    glued = stars > 1 and (after_hidden_slash or _glued_to_prefix(line, start))
    bounded = stars > 1 and (glued or line[:start] in ("", "!") or line[:start].endswith("/"))
    if bounded and after.startswith("\\/") and after != "\\/":
        return "", _SOME_DIRECTORIES, end + 2  # no zero-directory shortcut before an escaped `/`, as in git
    if glued and after.startswith("/") and after != "/":
        return "", _ANY_DIRECTORIES, end + 1
    if glued and after in ("", "/"):
        return "", _ANYTHING, end
    if stars > 2 and bounded and (after == "" or after.startswith("/")):
        return "**", None, end
    return "*" * stars, None, end


def _glued_to_prefix(line: str, start: int) -> bool:
    """Whether `start` is where the literal start of a pattern with a `/` ends (`a` in `a**/b`; not `a/`, `a?` nor
    an empty start). Git matches that literal start first, so what follows is matched as a pattern's start."""
    body = line[1:] if line.startswith("!") else line
    offset = len(line) - len(body)
    if "/" not in (body[:-1] if body.endswith("/") else body):
        return False  # matched against the name alone, where `*` and `**` are the same
    first_special = min((i for i in (body.find(c) for c in "*?[\\") if i >= 0), default=-1)
    literal = body[1:first_special] if body.startswith("/") else body[:first_special]
    return first_special == start - offset and literal != "" and not literal.endswith("/")


def _escaped_slash_never_matches(line: str, start: int) -> bool:
    """`\\/` first (a path never starts with `/`) or last (git drops the `/` as "directories only", leaving a lone
    `\\`): git never matches such a pattern."""
    body_start = 1 if line.startswith("!") else 0
    at_start = start == body_start or (start == body_start + 1 and line[body_start] == "/")
    return at_start or start + 2 == len(line)


def _anchored(text: str) -> str:
    """A `/` inside brackets makes git match the pattern from its directory, as a `/` outside them does: say so."""
    negation = "!" if text.startswith("!") else ""
    body = text[len(negation) :]
    if "/" in (body[:-1] if body.endswith("/") else body):
        return text
    return f"{negation}/{body}"


def _bracket(line: str, start: int) -> tuple[str, int, bool] | None:
    """Git's bracket expression at `line[start]` (a `[`) as a regex, the index after it, and whether a `/` is
    written in it (which it never matches); None when git aborts on it (no closing `]`, an unknown `[:class:]`)."""
    index = start + 1
    negated = line[index : index + 1] in ("!", "^")
    index += negated
    members: list[str] = []
    previous: str | None = None  # the last single character, which a `-` makes the start of a range
    first = True
    while index < len(line) and (first or line[index] != "]"):
        first = False
        char = line[index]
        if char == "\\":
            if index + 1 == len(line):
                return None
            char, index = line[index + 1], index + 2
            members.append(re.escape(char))
            previous = char
        elif char == "-" and previous is not None and index + 1 < len(line) and line[index + 1] != "]":
            high, index = _range_end(line, index + 1)
            if high is None:
                return None
            # The start was a member on its own already (`[z-a]` still matches `z`), as in git.
            if previous <= high:
                members.append(f"{re.escape(previous)}-{re.escape(high)}")
            previous = None
        elif char == "[" and line[index + 1 : index + 2] == ":":
            posix = _posix_class(line, index)
            if posix is None:
                members.append(re.escape("["))
                previous, index = "[", index + 1
                continue
            if posix[0] is None:
                return None
            members.append(posix[0])
            previous, index = None, posix[1]
        else:
            members.append(re.escape(char))
            previous, index = char, index + 1
    if index >= len(line):
        return None
    # Git tells a pattern matched from its directory by a `/` written in it, even in brackets; not by a range.
    return _class_regex(members, negated), index + 1, "/" in line[start:index]


def _range_end(line: str, index: int) -> tuple[str | None, int]:
    """The character that ends a range (`a-z`, or an escaped `a-\\]`) and the index after it."""
    if line[index] == "\\":
        if index + 1 == len(line):
            return None, index
        return line[index + 1], index + 2
    return line[index], index + 1


def _posix_class(line: str, start: int) -> tuple[str | None, int] | None:
    """`[:name:]` at `start`: its members (None for an unknown name, on which git aborts) and the index after it;
    None when there is no `:]`, so the `[` is an ordinary member."""
    close = line.find("]", start + 2)
    if close == -1:
        return None, len(line)
    name = line[start + 2 : close]
    if not name.endswith(":"):
        return None
    return _POSIX_CLASSES.get(name[:-1]), close + 1


def _class_regex(members: list[str], negated: bool) -> str:
    """A class that never matches `/`, as git's classes never do in a path."""
    if negated:
        return f"[^/{''.join(members)}]"
    if not members:
        return "(?!)"
    return f"(?:(?!/)[{''.join(members)}])"


def _dirs_below(line: str) -> str:
    """`src/**/` names the directories below `src`, but pathspec reads it as `src/`: spell it `src/**/*/`."""
    stripped = line.rstrip(" ")
    if stripped.endswith("/**/") and stripped[:-4].strip("!*/"):
        return stripped + "*/"
    return line
