"""A numpy column that grows at its end, whose views of what it held stay valid: no copy to save or to stage.

The forward index of every stream is a few of these. Appends write only past the end, so a view taken
earlier (a snapshot being written) never sees them change. A fork shares the buffer and its room: the first
of the column and its forks to append past their common end claims that room and writes in place, and any
other that appends later moves to a buffer of its own. A staged commit so copies nothing, however large the
index (the Linux kernel's forward arrays are over a gigabyte), and neither do a snapshot's export and the
adoption of a loaded snapshot's arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

GROWTH = 1.25  # at most a fifth of a column unused; appends stay amortized O(1)
MIN_CAPACITY = 256
# The room an array made or read whole (a rebuild's, a loaded snapshot's) is given past its values, so that the
# edits after it append without moving a forward index of a gigabyte.
ROOM_SHARE = 16
ROOM_MIN = 4096


class ArraySpace:
    """Where an index's large arrays live: in memory (this class), or in files whose pages the system can take
    back (`ragls.rag.spill.MappedArrays`), so that a first index of a million chunks need not hold them all."""

    # How many postings a build that writes them all over (`postings.inverted`) writes before it gives the pages
    # back, in a space that can; None: all at once.
    pass_postings: int | None = None

    def empty(self, size: int, dtype: np.dtype | type) -> np.ndarray:
        return np.empty(size, dtype=dtype)

    def regrown(self, array: np.ndarray, size: int) -> np.ndarray | None:
        """The same values with room for `size`, without a copy; None where this space cannot (then they move)."""
        return None

    def release(self, array: np.ndarray) -> None:
        """Let the system take back the pages of `array` that this process holds; it reads the same after."""


IN_MEMORY = ArraySpace()


def room_for(size: int) -> int:
    """How many values of room to leave past `size` values made or read at once."""
    return max(size // ROOM_SHARE, ROOM_MIN)


class _Buffer:
    """An array and how much of it has been written: past `written`, the room is free to claim."""

    __slots__ = ("array", "written")

    def __init__(self, array: np.ndarray, written: int) -> None:
        self.array = array
        self.written = written


class Column:
    """Values of one dtype; `values()` is a read-only view of them as they are now."""

    __slots__ = ("_buffer", "_size", "_space")

    def __init__(
        self, dtype: np.dtype | type, values: np.ndarray | Sequence[float] = (), space: ArraySpace = IN_MEMORY
    ) -> None:
        data = np.asarray(values, dtype=dtype)
        self._buffer = _Buffer(data, len(data))
        self._size = len(data)
        self._space = space

    @classmethod
    def adopt(cls, values: np.ndarray, size: int | None = None, space: ArraySpace = IN_MEMORY) -> Column:
        """A column over an array nobody else writes to (a loaded snapshot's, a rebuild's result), without a copy.

        With `size`, the column holds the array's first `size` values and the rest is its room to grow into (a
        snapshot's arrays are read with room, so the first edit after a restart copies nothing). `space`: where it
        grows to.
        """
        held = len(values) if size is None else size
        if not 0 <= held <= len(values):
            raise ValueError(f"a column of {len(values)} values cannot hold {held}")
        column = cls.__new__(cls)
        column._buffer, column._size, column._space = _Buffer(values, held), held, space
        return column

    def __len__(self) -> int:
        return self._size

    @property
    def capacity(self) -> int:
        """How many values the buffer holds room for (what this column could reach without moving)."""
        return len(self._buffer.array)

    def values(self) -> np.ndarray:
        view = self._buffer.array[: self._size]
        view.flags.writeable = False
        return view

    def fork(self) -> Column:
        """An independent column with the same values, sharing the buffer: neither ever writes where the other
        reads (see the module docstring)."""
        column = Column.__new__(Column)
        column._buffer, column._size, column._space = self._buffer, self._size, self._space
        return column

    def use_space(self, space: ArraySpace) -> None:
        """Where this column's values go when it next grows (they stay where they are until then)."""
        self._space = space

    def release(self) -> None:
        """Let the system take back the pages this column holds, where its space can (`ArraySpace.release`)."""
        self._space.release(self._buffer.array)

    def ensure_room(self) -> None:
        """Move to a buffer of this column's own with `room_for` its size past the end, unless it has room to
        claim already: an array mapped from a snapshot has none, and the first edit should not copy it."""
        buffer = self._buffer
        if len(buffer.array) - self._size >= room_for(self._size) and buffer.written == self._size:
            return
        self._move(self._size + room_for(self._size))

    def append(self, value: float) -> None:
        self._reserve(self._size + 1)
        self._buffer.array[self._size] = value
        self._grow_to(self._size + 1)

    def extend(self, values: Sequence[float] | np.ndarray) -> None:
        end = self._size + len(values)
        self._reserve(end)
        self._buffer.array[self._size : end] = values
        self._grow_to(end)

    def _grow_to(self, size: int) -> None:
        self._size = self._buffer.written = size

    def _reserve(self, size: int) -> None:
        """Room for `size` values in a buffer that nobody else has written past this column's end."""
        buffer = self._buffer
        if size <= len(buffer.array) and buffer.written == self._size:
            return
        capacity = max(size, int(self._size * GROWTH), MIN_CAPACITY)
        if buffer.written == self._size:  # the room is this column's to claim: its forks see the same buffer grow
            regrown = self._space.regrown(buffer.array, capacity)
            if regrown is not None:
                buffer.array = regrown
                return
        self._move(capacity)

    def _move(self, capacity: int) -> None:
        """To a buffer of this column's own, of `capacity` values, holding what this column holds."""
        grown = self._space.empty(capacity, self._buffer.array.dtype)
        grown[: self._size] = self._buffer.array[: self._size]
        self._buffer = _Buffer(grown, self._size)
