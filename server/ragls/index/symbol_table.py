"""Symbols held column by column: a restart reads them as a few arrays and strings, not one tuple each.

The Linux kernel has 868,594 symbols. As named tuples parsed from JSON they took 2.4 s and about 350 MB to load;
as columns, their strings are cut from one decoded text and their lines stay numpy arrays. A `Symbol` is made only
for what a query returns (`SymbolColumns[i]`).
"""

from __future__ import annotations

import bisect
import itertools
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from ragls.model import Symbol

# Strings are saved as UTF-8 with lone surrogates passed through (a file name's undecodable bytes), so every
# string comes back as it went in.
_ENCODING = ("utf-8", "surrogatepass")


class SymbolColumns(Sequence[Symbol]):
    """Symbols as parallel columns; kinds and files are shared strings, lines are int64 arrays."""

    __slots__ = ("containers", "end_lines", "files", "kinds", "names", "qualified", "start_lines")

    def __init__(
        self,
        names: list[str],
        qualified: list[str],
        kinds: list[str],
        files: list[str],
        start_lines: np.ndarray,
        end_lines: np.ndarray,
        containers: list[str | None],
    ) -> None:
        count = len(names)
        if not all(len(column) == count for column in (qualified, kinds, files, start_lines, end_lines, containers)):
            raise ValueError("the symbol columns differ in length")
        self.names, self.qualified, self.kinds, self.files = names, qualified, kinds, files
        self.start_lines, self.end_lines, self.containers = start_lines, end_lines, containers

    @staticmethod
    def of(symbols: Iterable[Symbol]) -> SymbolColumns:
        """The symbols as columns (columns already are; a chain's runs are sliced, not made into symbols)."""
        if isinstance(symbols, SymbolColumns):
            return symbols
        if isinstance(symbols, ChainedSymbols):
            return SymbolColumns.joined(symbols.parts)
        rows = list(symbols)
        intern = sys.intern
        return SymbolColumns(
            [s.name for s in rows],
            [s.name if s.qualified_name == s.name else s.qualified_name for s in rows],
            [intern(s.kind) for s in rows],
            [intern(s.file) for s in rows],
            np.fromiter((s.start_line for s in rows), dtype=np.int64, count=len(rows)),
            np.fromiter((s.end_line for s in rows), dtype=np.int64, count=len(rows)),
            [s.container for s in rows],
        )

    @staticmethod
    def joined(parts: Sequence[Sequence[Symbol]]) -> SymbolColumns:
        """Runs of symbols (columns, runs of columns, or lists) as one set of columns, in order."""
        pieces = _pieces(parts)
        return SymbolColumns(
            _chained(p.names for p in pieces),
            _chained(p.qualified for p in pieces),
            _chained(p.kinds for p in pieces),
            _chained(p.files for p in pieces),
            np.concatenate([np.zeros(0, dtype=np.int64), *(p.start_lines for p in pieces)]),
            np.concatenate([np.zeros(0, dtype=np.int64), *(p.end_lines for p in pieces)]),
            _chained(p.containers for p in pieces),
        )

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, index: int) -> Symbol: ...

    @overload
    def __getitem__(self, index: slice) -> SymbolColumns: ...

    def __getitem__(self, index: int | slice) -> Symbol | SymbolColumns:
        if isinstance(index, slice):
            start, end, step = index.indices(len(self))
            return (
                self.slice(start, max(start, end))
                if step == 1
                else SymbolColumns.of(map(self.__getitem__, range(start, end, step)))
            )
        return Symbol(
            self.names[index],
            self.qualified[index],
            self.kinds[index],
            self.files[index],
            int(self.start_lines[index]),
            int(self.end_lines[index]),
            self.containers[index],
        )

    def __iter__(self) -> Iterator[Symbol]:
        return map(self.__getitem__, range(len(self)))

    def slice(self, start: int, end: int) -> SymbolColumns:
        return SymbolColumns(
            self.names[start:end],
            self.qualified[start:end],
            self.kinds[start:end],
            self.files[start:end],
            self.start_lines[start:end],
            self.end_lines[start:end],
            self.containers[start:end],
        )

    def runs(self) -> Iterator[tuple[str, SymbolRun]]:
        """Each file with its symbols, in order; a file whose symbols are not together gets them gathered."""
        files = self.files
        if not files:
            return
        bounds = [0, *(i for i in range(1, len(files)) if files[i] is not files[i - 1] and files[i] != files[i - 1])]
        bounds.append(len(files))
        seen: dict[str, SymbolRun] = {}
        for start, end in itertools.pairwise(bounds):
            file = files[start]
            if file in seen:  # not saved together (a hand-made set): this file's symbols as a list of their own
                yield from self._gathered()
                return
            seen[file] = SymbolRun(self, start, end)
        yield from seen.items()

    def _gathered(self) -> Iterator[tuple[str, SymbolRun]]:
        by_file: dict[str, list[int]] = {}
        for i, file in enumerate(self.files):
            by_file.setdefault(file, []).append(i)
        order = [i for indices in by_file.values() for i in indices]
        gathered = SymbolColumns.joined([[self[i] for i in order]])
        start = 0
        for file, indices in by_file.items():
            yield file, SymbolRun(gathered, start, start + len(indices))
            start += len(indices)

    def to_saved(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Arrays and a JSON-able table that `from_saved` turns back into these columns."""
        kinds, kind_codes = _codes(self.kinds)
        files, file_codes = _codes(self.files)
        own_qualified = np.fromiter(
            (q is not n for n, q in zip(self.names, self.qualified, strict=True)), dtype=np.bool_, count=len(self)
        )
        has_container = np.fromiter((c is not None for c in self.containers), dtype=np.bool_, count=len(self))
        strings = [
            *self.names,
            *itertools.compress(self.qualified, own_qualified.tolist()),
            *(c for c in self.containers if c is not None),
        ]
        text = "".join(strings)
        lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
        arrays = {
            "text": np.frombuffer(text.encode(*_ENCODING), dtype=np.uint8),
            "lengths": _narrowed(lengths),
            "kinds": _narrowed(kind_codes),
            "files": _narrowed(file_codes),
            "start_lines": _narrowed(self.start_lines),
            "end_lines": _narrowed(self.end_lines),
            "own_qualified": own_qualified,
            "has_container": has_container,
        }
        return arrays, {"kinds": kinds, "files": files}

    @staticmethod
    def from_saved(arrays: dict[str, np.ndarray], table: dict[str, Any]) -> SymbolColumns:
        """The columns `to_saved` wrote; raises ValueError where the parts do not fit together."""
        own_qualified, has_container = arrays["own_qualified"], arrays["has_container"]
        count = len(own_qualified)
        text = bytes(arrays["text"]).decode(*_ENCODING)
        ends = np.cumsum(arrays["lengths"]).tolist()
        if (ends[-1] if ends else 0) != len(text):
            raise ValueError("the symbols' text and its lengths disagree")
        strings = [text[start:end] for start, end in zip([0, *ends], ends, strict=False)]
        n_qualified, n_containers = int(own_qualified.sum()), int(has_container.sum())
        if len(strings) != count + n_qualified + n_containers:
            raise ValueError("the symbols' strings do not fit their columns")
        names = strings[:count]
        qualified_strings = iter(strings[count : count + n_qualified])
        container_strings = iter(strings[count + n_qualified :])
        intern = sys.intern
        kinds = [intern(str(kind)) for kind in table["kinds"]]
        files = [intern(str(file)) for file in table["files"]]
        return SymbolColumns(
            names,
            [next(qualified_strings) if own else name for name, own in zip(names, own_qualified.tolist(), strict=True)],
            [kinds[code] for code in arrays["kinds"].tolist()],
            [files[code] for code in arrays["files"].tolist()],
            np.asarray(arrays["start_lines"], dtype=np.int64),
            np.asarray(arrays["end_lines"], dtype=np.int64),
            [next(container_strings) if has else None for has in has_container.tolist()],
        )


class SymbolRun(Sequence[Symbol]):
    """One file's symbols: a stretch of a `SymbolColumns`, nothing copied."""

    __slots__ = ("columns", "end", "start")

    def __init__(self, columns: SymbolColumns, start: int, end: int) -> None:
        self.columns, self.start, self.end = columns, start, end

    def __len__(self) -> int:
        return self.end - self.start

    @overload
    def __getitem__(self, index: int) -> Symbol: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Symbol]: ...

    def __getitem__(self, index: int | slice) -> Symbol | Sequence[Symbol]:
        if isinstance(index, slice):
            start, end, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, end, step)]
            return self.columns.slice(self.start + start, self.start + max(start, end))
        if not -len(self) <= index < len(self):
            raise IndexError("symbol index out of range")
        return self.columns[self.start + index % len(self)]

    def __iter__(self) -> Iterator[Symbol]:
        return map(self.columns.__getitem__, range(self.start, self.end))


def _pieces(parts: Sequence[Sequence[Symbol]]) -> list[SymbolColumns]:
    """The parts as columns: runs and columns as slices, each stretch of other parts (one list per changed file)
    made into columns at once, since columns per file cost the Linux kernel's 86,000 files 2.1 s against 0.5 s."""
    pieces: list[SymbolColumns] = []
    pending: list[Symbol] = []
    for part in parts:
        if isinstance(part, SymbolRun | SymbolColumns):
            if pending:
                pieces.append(SymbolColumns.of(pending))
                pending = []
            pieces.append(part.columns.slice(part.start, part.end) if isinstance(part, SymbolRun) else part)
        else:
            pending.extend(part)
    if pending:
        pieces.append(SymbolColumns.of(pending))
    return pieces


def _chained(columns: Iterable[list[Any]]) -> list[Any]:
    return list(itertools.chain.from_iterable(columns))


def _narrowed(values: np.ndarray) -> np.ndarray:
    """Whole numbers in 4 bytes each where they fit (they always do but for a line past 2**31), else 8."""
    small = np.iinfo(np.int32)
    fits = not len(values) or (small.min <= int(values.min()) and int(values.max()) <= small.max)
    return values.astype(np.int32) if fits else values


def _codes(values: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct values in first-seen order, and each value's place among them."""
    table: dict[str, int] = {}
    codes = np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int64, count=len(values))
    return list(table), codes


class ChainedSymbols(Sequence[Symbol]):
    """Runs of symbols read as one sequence, nothing copied: the joined symbols of many files."""

    __slots__ = ("_starts", "parts")

    def __init__(self, parts: Sequence[Sequence[Symbol]]) -> None:
        self.parts = [part for part in parts if len(part)]
        self._starts = list(itertools.accumulate((len(part) for part in self.parts), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    @overload
    def __getitem__(self, index: int) -> Symbol: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Symbol]: ...

    def __getitem__(self, index: int | slice) -> Symbol | Sequence[Symbol]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError("symbol index out of range")
        index %= len(self)
        part = bisect.bisect_right(self._starts, index) - 1
        return self.parts[part][index - self._starts[part]]

    def __iter__(self) -> Iterator[Symbol]:
        return itertools.chain.from_iterable(self.parts)
