"""Growable columns: views and forks never see later appends, so indexes share them instead of copying."""

from __future__ import annotations

import numpy as np
import pytest

from ragls.index.columns import Column, room_for


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


def test_the_first_fork_to_append_writes_in_place_and_the_next_one_moves() -> None:
    column = Column(np.int32)
    column.extend(np.arange(100))
    staged = column.fork()
    staged.append(100)  # the room past the end is free: claimed without a copy
    assert np.shares_memory(staged.values(), column.values())
    other = column.fork()
    other.append(-1)  # staged has written past column's end: this one must move
    assert not np.shares_memory(other.values(), column.values())
    column.append(-2)  # and so must the column itself
    assert staged.values()[-2:].tolist() == [99, 100]
    assert other.values()[-2:].tolist() == [99, -1]
    assert column.values()[-2:].tolist() == [99, -2]
    assert len(column) == len(other) == len(staged) == 101


def test_room_past_an_adopted_arrays_values_takes_appends_without_moving() -> None:
    buffer = np.zeros(20, dtype=np.int64)
    buffer[:10] = np.arange(10)
    column = Column.adopt(buffer, 10)
    assert column.capacity == 20 and len(column) == 10
    before = column.values()
    column.extend(np.arange(10, 20))
    assert np.shares_memory(before, column.values()) and column.values().tolist() == list(range(20))
    assert before.tolist() == list(range(10))


def test_ensure_room_moves_a_full_column_once_and_leaves_one_with_room_alone() -> None:
    full = np.arange(10_000, dtype=np.int32)  # as a mapped snapshot's array: no room past its values
    full.flags.writeable = False
    column = Column.adopt(full, len(full))
    view = column.values()
    column.ensure_room()
    assert column.capacity >= len(column) + room_for(len(column)) and not np.shares_memory(view, column.values())
    assert column.values().tolist() == full.tolist() and view.tolist() == full.tolist()
    moved = column.values()
    column.ensure_room()  # room enough already: nothing moves
    column.extend(np.arange(5, dtype=np.int32))
    assert np.shares_memory(moved, column.values()) and column.values().tolist()[-6:] == [9_999, 0, 1, 2, 3, 4]
