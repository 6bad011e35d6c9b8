"""Hand freed memory back to the operating system after the large, short-lived work of a session.

A full index run and a snapshot write free tens of megabytes of temporary objects, but glibc keeps
freed heap pages mapped, so the process's resident size stays at its peak. `malloc_trim` returns
them (measured on a 6,800-file folder: 302 MB -> 250 MB). Elsewhere this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return trim


def release_free_memory() -> None:
    """Return freed heap memory to the OS where the C library can (glibc)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
