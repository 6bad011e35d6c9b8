"""Memory around the large, short-lived work of a session: bulk loads, full runs, snapshots.

Building tens of thousands of objects at once wakes the cyclic collector again and again to scan
a heap that holds no cycles; pausing it saves 6% of a full run and a third of a snapshot load
(measured on a 6,800-file folder). Afterwards glibc keeps freed heap pages mapped, so the resident
size stays at its peak; `malloc_trim` returns them (302 MB -> 250 MB). Elsewhere that does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_pause_lock = threading.Lock()
_pauses = 0
_collector_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside; nested and concurrent pauses resume only when the last ends.

    What was built inside is then frozen (`gc.freeze`): a large index is a million long-lived
    objects, and rescanning them at every later allocation burst would pause searches for 100+ ms.
    """
    global _pauses, _collector_was_enabled
    with _pause_lock:
        if _pauses == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0:
                gc.freeze()
                if _collector_was_enabled:
                    gc.enable()


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
