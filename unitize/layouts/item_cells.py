"""A group's item cells, columnar: what a layout writes an item matrix from.

:class:`ItemCells` holds some consecutive rows (items) of one group's matrix: the item
ids in row order and, per cell, its item's row, its annotator's position (ascending
within a row) and its value (null: the annotator's record holds no label). An item can
have a row and no cell (a conditional group some annotator reached without a label of
it): the wide layout writes it as a row of nulls, the long layout writes nothing.

As stored between the steps of a run (:data:`CELLS_SCHEMA`) a cell is one row
``item, annotator, value``, with annotator ``-1`` standing for such an empty row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: cells between the steps of a run: one row per cell (annotator -1: an item row without cells)
CELLS_SCHEMA = pa.schema([("item", pa.string()), ("annotator", pa.int32()), ("value", pa.string())])
#: the annotator of an item row that holds no cell
NO_CELL = -1


@dataclass(frozen=True)
class ItemCells:
    """Consecutive rows of one group's item matrix (see the module docstring)."""

    items: pa.Array  # string, one per row
    row: np.ndarray  # int64 per cell, ascending
    annotator: np.ndarray  # int32 per cell, ascending within a row
    value: pa.Array  # string per cell, null: no label

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_cells(self) -> int:
        return int(self.row.size)

    @classmethod
    def from_batch(cls, batch: pa.RecordBatch | pa.Table) -> ItemCells:
        """Cells stored as :data:`CELLS_SCHEMA` rows (an item's rows consecutive); the empty-row marks dropped."""
        item = batch.column(0)
        n = len(item)
        if n == 0:
            return empty()
        item = item.combine_chunks() if isinstance(item, pa.ChunkedArray) else item
        new = np.ones(n, dtype=bool)
        if n > 1:
            new[1:] = pc.not_equal(item.slice(1), item.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        row = np.cumsum(new, dtype=np.int64) - 1
        annotator = np.asarray(batch.column(1).to_numpy(zero_copy_only=False), dtype=np.int32)
        value = batch.column(2)
        value = value.combine_chunks() if isinstance(value, pa.ChunkedArray) else value
        keep = annotator != NO_CELL
        items = item.take(pa.array(np.flatnonzero(new)))
        if keep.all():
            return cls(items, row, annotator, value)
        return cls(items, row[keep], annotator[keep], value.filter(pa.array(keep)))

    @classmethod
    def from_rows(cls, items: Sequence[str], cells: Sequence[dict[str, str | None]], annotators: Sequence[str]) -> ItemCells:
        """Cells of rows given as ``{annotator: value}`` per item (annotators ordered as ``annotators``)."""
        position = {a: i for i, a in enumerate(annotators)}
        rows, who, values = [], [], []
        for r, cell in enumerate(cells):
            for a in sorted(cell, key=position.__getitem__):
                rows.append(r)
                who.append(position[a])
                values.append(cell[a])
        return cls(pa.array(list(items), pa.string()), np.array(rows, dtype=np.int64), np.array(who, dtype=np.int32),
                   pa.array(values, pa.string()))

    def stored(self) -> pa.RecordBatch:
        """The cells as :data:`CELLS_SCHEMA` rows, an empty row marked by annotator -1."""
        counts = np.bincount(self.row, minlength=self.n_items) if self.n_cells else np.zeros(self.n_items, dtype=np.int64)
        empty_rows = np.flatnonzero(counts == 0)
        if empty_rows.size == 0:
            return pa.RecordBatch.from_arrays([self.items.take(pa.array(self.row)), pa.array(self.annotator, pa.int32()), self.value],
                                              schema=CELLS_SCHEMA)
        row = np.concatenate([self.row, empty_rows])
        order = np.argsort(row, kind="stable")
        annotator = np.concatenate([self.annotator, np.full(empty_rows.size, NO_CELL, dtype=np.int32)])[order]
        value = pa.concat_arrays([self.value, pa.nulls(empty_rows.size, pa.string())]).take(pa.array(order))
        return pa.RecordBatch.from_arrays([self.items.take(pa.array(row[order])), pa.array(annotator, pa.int32()), value],
                                          schema=CELLS_SCHEMA)

    def rows(self, annotators: Sequence[str]) -> tuple[list[str], list[dict[str, str | None]]]:
        """The item ids and, per item, ``{annotator: value}`` (whole, in memory: for small matrices)."""
        cells: list[dict[str, str | None]] = [{} for _ in range(self.n_items)]
        for r, a, v in zip(self.row.tolist(), self.annotator.tolist(), self.value.to_pylist()):
            cells[r][annotators[a]] = v
        return self.items.to_pylist(), cells

    def slice_items(self, start: int, stop: int) -> ItemCells:
        """Rows ``start`` to ``stop`` (exclusive) with their cells."""
        lo, hi = np.searchsorted(self.row, [start, stop])
        return ItemCells(self.items.slice(start, stop - start), self.row[lo:hi] - start, self.annotator[lo:hi], self.value.slice(lo, hi - lo))

    def slice_cells(self, start: int, stop: int) -> ItemCells:
        """Cells ``start`` to ``stop`` (exclusive) with the rows they are in (no empty row)."""
        row = self.row[start:stop]
        if row.size == 0:
            return empty()
        first, last = int(row[0]), int(row[-1])
        return ItemCells(self.items.slice(first, last - first + 1), row - first, self.annotator[start:stop], self.value.slice(start, stop - start))

    def with_values(self, value: pa.Array) -> ItemCells:
        return ItemCells(self.items, self.row, self.annotator, value)


def empty() -> ItemCells:
    return ItemCells(pa.array([], pa.string()), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32), pa.array([], pa.string()))


def concat(parts: Sequence[ItemCells]) -> ItemCells:
    """Consecutive whole rows of one group, one part after the other."""
    parts = [p for p in parts if p.n_items]
    if not parts:
        return empty()
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0] + [p.n_items for p in parts[:-1]])
    return ItemCells(pa.concat_arrays([p.items for p in parts]), np.concatenate([p.row + o for p, o in zip(parts, offsets)]),
                     np.concatenate([p.annotator for p in parts]), pa.concat_arrays([p.value for p in parts]))
