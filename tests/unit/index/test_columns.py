"""Growable columns: views and forks never see later appends, so indexes share them instead of copying."""

from __future__ import annotations

import numpy as np
import pytest

from ragls.index.columns import Column


def test_a_view_keeps_what_the_column_held_when_it_was_taken() -> None:
    column = Column(np.int32)
    column.extend([1, 2, 3])
    view = column.values()
    for value in range(1000):  # past several reallocations
        column.append(value)
    assert view.tolist() == [1, 2, 3]
    assert len(column) == 1003 and column.values()[:4].tolist() == [1, 2, 3, 0]
    with pytest.raises(ValueError):
        view[0] = 7  # read-only: nobody writes through a view


def test_a_fork_and_its_column_grow_apart() -> None:
    column = Column(np.float32)
    column.extend([1.0, 2.0])
    column.append(3.0)  # capacity past the end, where a fork must never write
    fork = column.fork()
    column.append(4.0)
    fork.append(9.0)
    assert column.values().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert fork.values().tolist() == [1.0, 2.0, 3.0, 9.0]


def test_an_adopted_array_is_not_copied_and_never_written() -> None:
    saved = np.arange(5, dtype=np.int64)
    column = Column.adopt(saved)
    assert np.shares_memory(column.values(), saved)
    column.extend(np.array([5, 6]))
    assert saved.tolist() == [0, 1, 2, 3, 4] and column.values().tolist() == list(range(7))
