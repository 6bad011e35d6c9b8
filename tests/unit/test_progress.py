"""ProgressGate: each new phase and the last file pass at once, the rest at most once an interval."""

from __future__ import annotations

from ragls.model import Progress, ProgressGate


def test_new_phases_and_the_last_file_pass_the_rest_wait_for_the_interval() -> None:
    gate = ProgressGate(interval=3600.0)
    assert gate.admit(Progress(3, 0, "", "walk"))
    assert not gate.admit(Progress(9, 0, "", "walk"))
    assert gate.admit(Progress(1, 4, "a.py", "read"))
    assert not gate.admit(Progress(2, 4, "b.py", "read"))
    assert gate.admit(Progress(4, 4, "d.py", "read"))
    assert gate.admit(Progress(0, 4, "", "index"))
    every = ProgressGate(interval=0.0)
    assert all(every.admit(Progress(n, 9, "x.py")) for n in range(1, 5))
