"""A numpy column that grows at its end, whose views of what it held stay valid: no copy to save or to stage.

The forward index of every stream is a few of these. Appends write only past the end, so a view taken
earlier (a snapshot being written) never sees them change; a fork shares the buffer up to its end, so its
first append moves it to a buffer of its own. Copying an index for a staged commit, exporting it for a
snapshot and adopting a loaded snapshot's arrays are so all free, where `array.array` copied each time
(three streams' forward arrays, eight bytes a posting).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

GROWTH = 1.25  # at most a fifth of a column unused; appends stay amortized O(1)
MIN_CAPACITY = 256


class Column:
    """Values of one dtype; `values()` is a read-only view of them as they are now."""

    __slots__ = ("_data", "_size")

    def __init__(self, dtype: np.dtype | type, values: np.ndarray | Sequence[float] = ()) -> None:
        self._data = np.asarray(values, dtype=dtype)
        self._size = len(self._data)

    @classmethod
    def adopt(cls, values: np.ndarray) -> Column:
        """A column over an array nobody writes to (a loaded snapshot's, a rebuild's result), without a copy."""
        column = cls.__new__(cls)
        column._data, column._size = values, len(values)
        return column

    def __len__(self) -> int:
        return self._size

    def values(self) -> np.ndarray:
        view = self._data[: self._size]
        view.flags.writeable = False
        return view

    def fork(self) -> Column:
        """An independent column with the same values; neither ever writes where the other reads."""
        return Column.adopt(self._data[: self._size])

    def append(self, value: float) -> None:
        self._reserve(self._size + 1)
        self._data[self._size] = value
        self._size += 1

    def extend(self, values: Sequence[float] | np.ndarray) -> None:
        end = self._size + len(values)
        self._reserve(end)
        self._data[self._size : end] = values
        self._size = end

    def _reserve(self, size: int) -> None:
        """Room for `size` values. A buffer that ends at the column's end (adopted, forked) is never written
        past: the first append moves to a new one, so what others view of it never changes."""
        if size <= len(self._data):
            return
        grown = np.empty(max(size, int(self._size * GROWTH), MIN_CAPACITY), dtype=self._data.dtype)
        grown[: self._size] = self._data[: self._size]
        self._data = grown
