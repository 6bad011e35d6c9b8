"""How much of a mapped array this process holds, read from /proc/self/smaps (Linux)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

SMAPS = Path("/proc/self/smaps")


def resident_kb(array: np.ndarray) -> int:
    """The resident size of the mapping that holds the array's first value."""
    address, resident, inside = array.__array_interface__["data"][0], 0, False
    for line in SMAPS.read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            start, end = (int(bound, 16) for bound in head.split("-"))
            inside = start <= address < end
        elif inside and head == "Rss:":
            resident = int(line.split()[1])
    return resident
