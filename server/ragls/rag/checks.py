"""What a session accepts from a caller: strings of bounded size that are valid Unicode.

A query is matched against every symbol and term, so its cost grows with its length: a 10 MB
`workspace/symbol` query took 120 s and 6.6 GB. A lone surrogate (JSON `"\\ud800"`) is a valid
JSON string but not text: it cannot be written to the store, the snapshot or the symbol matcher.
The limits are part of the wire contract (docs/protocol.md). Each check returns what is wrong,
worded to follow the field's name ("must be ..."), or None; no message echoes a long value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ragls.errors import InvalidArgument

# A question with some pasted context; a search over 4,096 characters takes a few milliseconds.
MAX_QUERY_CHARS = 4096
# Symbol names are short, and matching costs the query's length times the number of symbols.
MAX_SYMBOL_QUERY_CHARS = 256
MAX_CONTENT_CHARS = 1024 * 1024
MAX_ID_CHARS = 512
MAX_URI_CHARS = 8192
# `metadata` and `filters`, measured as JSON.
MAX_OBJECT_CHARS = 64 * 1024
SHOWN_CHARS = 60
# File chunk ids are `path#symbol` or `path#L1-L9`: an added document's id never holds one, so the two never meet.
CHUNK_ID_MARK = "#"


def text_problem(value: Any, max_chars: int, allow_empty: bool = False) -> str | None:
    """A string of at most `max_chars` characters, without lone surrogates (and not blank, unless allowed)."""
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        return f"must be {'a' if allow_empty else 'a non-empty'} string, got {shown(value)}"
    if len(value) > max_chars:
        return f"must be at most {max_chars:,} characters, got {len(value):,}"
    index = lone_surrogate(value)
    if index is not None:
        return f"must be valid Unicode, got a lone surrogate U+{ord(value[index]):04X} at {index}"
    return None


def object_problem(value: Any) -> str | None:
    """None or an object of at most MAX_OBJECT_CHARS as JSON, whose keys and strings are valid Unicode."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return f"must be an object, got {shown(value)}"
    try:
        encoded = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"must be plain JSON ({type(exc).__name__})"
    if len(encoded) > MAX_OBJECT_CHARS:
        return f"must be at most {MAX_OBJECT_CHARS:,} characters as JSON, got {len(encoded):,}"
    index = lone_surrogate(encoded)
    if index is not None:
        return f"must be valid Unicode, got a lone surrogate U+{ord(encoded[index]):04X}"
    return None


def score_problem(value: Any) -> str | None:
    """A `minScore`: a number from 0 to 1, the range of every result's score."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= 1:
        return f"must be a number from 0 to 1, got {shown(value)}"
    return None


def document_id_problem(value: Any) -> str | None:
    """An added document's id: bounded, and never one a file chunk could have."""
    problem = text_problem(value, MAX_ID_CHARS)
    if problem is None and CHUNK_ID_MARK in value:
        problem = (
            f"must not contain {CHUNK_ID_MARK!r}, which marks file chunk ids (path#symbol, path#L1-L9), "
            f"got {shown(value)}"
        )
    return problem


def require(field: str, problem: str | None) -> None:
    """Raise the engine's InvalidArgument for a problem one of the checks found."""
    if problem is not None:
        raise InvalidArgument(field, f"{field} {problem}")


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in `text`, or None when it is valid Unicode."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def shown(value: Any) -> str:
    """A value as an error message shows it: its repr, cut to SHOWN_CHARS so a huge one is never echoed."""
    if isinstance(value, (list, dict)) and len(value) > SHOWN_CHARS:
        return f"a {type(value).__name__} of {len(value):,} items"
    text = repr(value[: SHOWN_CHARS + 1] if isinstance(value, str) else value)
    if len(text) <= SHOWN_CHARS:
        return text
    length = f"{len(value):,} characters" if isinstance(value, str) else type(value).__name__
    return f"{text[:SHOWN_CHARS]}... ({length})"
