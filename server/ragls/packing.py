"""Chunk text kept compressed while it is resident: a large index holds every chunk's text, and reads a few.

Every chunk's text stays in memory so that results, excerpts and prompts need no file reads, yet a search
shows only the ten or so it returns. zlib (level 6) keeps code at about a third of its size as a Python
string (Django: 42.8 MB of strings, 13.2 MB packed; level 1 saves a little less for 20 % less work, level 9
nothing more) and unpacks a 1 KB chunk in about 10 µs. A text whose packed form would not be smaller (a
short one, or one that does not compress) stays a plain string.

The same bytes go into the SQLite store and the snapshot, so a restart never compresses again.
"""

from __future__ import annotations

import sys
import zlib

# A text is a `str` when kept plain, else `bytes`: its UTF-8 (lone surrogates passed through) compressed.
PackedText = str | bytes
LEVEL = 6
# Shorter texts are never worth compressing: zlib's header and checksum alone are 6 bytes.
MIN_PACKED_CHARS = 64
# Lone surrogates (a file's undecodable bytes, escaped) round-trip: UTF-8 cannot encode them otherwise.
_ERRORS = "surrogatepass"


def pack(text: str) -> PackedText:
    """The text compressed, or the text itself where compressing would not make it smaller in memory."""
    if len(text) < MIN_PACKED_CHARS:
        return text
    packed = zlib.compress(text.encode("utf-8", _ERRORS), LEVEL)
    return packed if sys.getsizeof(packed) < sys.getsizeof(text) else text


def unpack(packed: PackedText) -> str:
    """The text `pack` was given."""
    if isinstance(packed, str):
        return packed
    return zlib.decompress(packed).decode("utf-8", _ERRORS)
