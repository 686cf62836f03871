"""The long layout: a row per (unit, annotator) that exists — crowd data, a few annotators per document.

Writing: only annotators with a submission for a document have rows there; a group's tables
come in batches of whole documents of about :data:`LONG_BATCH_ROWS` rows, sorted by (doc,
annotator, unit), so memory stays bounded for crowd data sets. Item matrices: a row per
(item, annotator) with a record.

Reading: a (group, layer)'s rows are pivoted to a column per annotator (:func:`pivot`), or —
too wide for that (more than :data:`DENSE_CELLS` cells) — counted per unit
(:func:`value_counts`): how many annotators gave each value, the annotators' identity left
behind. Pure NumPy and Arrow, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import DataError
from ..model.codes import constant, look_up, sorted_codes
from ..units.unitizers import Approach, Mode, cumulative, label_codes, label_dictionary, mark
from .base import GroupMarks, Layout, label_column
from .frames import NOT_ANNOTATED, value_array
from .item_cells import ItemCells

#: rows per table written (whole documents per table)
LONG_BATCH_ROWS = 1 << 20


class Long(Layout):
    """A row per (unit, annotator) that exists: only the annotators with a submission for a document."""

    name = "long"
    help = "a row per unit and annotator who has the document (crowd data)"
    columnar = False
    items_dataset = "items-long"

    def unit_tables(self, g: GroupMarks, schema: pa.Schema, approach: Approach, mode: Mode, layers: Sequence[str]) -> Iterator[pa.Table]:
        yield from LongRows(g, schema, approach).tables(mode, list(layers))

    def item_table(self, group: str, cells: ItemCells, annotators: list[str], schema: pa.Schema) -> pa.Table:
        """``group, item, annotator, value``: one row per cell with a record (or the not-applicable value)."""
        n = cells.n_cells
        columns = [
            pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([group], pa.string())),
            cells.items.take(pa.array(cells.row)),
            pa.DictionaryArray.from_arrays(pa.array(cells.annotator, pa.int32()), pa.array(annotators, pa.string())),
            label_column(cells.value),
        ]
        return pa.Table.from_arrays(columns, schema=schema)


LONG = Long()


class LongRows:
    """The long tables of one group: a row per (unit, annotator) that exists, sorted by (doc, annotator, unit).

    A *pair* is a (document, annotator) with rows: the annotators with a submission for the document.
    """

    def __init__(self, g: GroupMarks, schema: pa.Schema, approach: Approach):
        self.g, self.schema, self.approach = g, schema, approach
        frame = g.frame
        self.n_a = len(g.annotators)
        present = g.present
        self.p_pos = np.array([pos for pos, d in enumerate(frame.docs) for _ in present.get(d, ())], dtype=np.int64)
        self.p_ann = np.array([a for d in frame.docs for a in present.get(d, ())], dtype=np.int64)
        self.n = frame.n[self.p_pos]
        self.pair_base = cumulative(self.n)
        self.pair_code = self.p_pos * self.n_a + self.p_ann  # ascending: documents in order, annotators sorted within

    def batches(self) -> list[tuple[int, int]]:
        """Ranges of pairs ``[a, b)`` of about :data:`LONG_BATCH_ROWS` rows that never split a document."""
        p_pos = self.p_pos
        cuts = [0]
        for p in np.flatnonzero(np.r_[True, p_pos[1:] != p_pos[:-1]]).tolist() if p_pos.size else []:
            if self.pair_base[p] - self.pair_base[cuts[-1]] >= LONG_BATCH_ROWS:
                cuts.append(p)
        cuts.append(p_pos.size)
        return list(zip(cuts[:-1], cuts[1:]))

    def segments(self, layer: str, labelled: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(pair, u0, u1 local to the document, label) of a layer's segments that have rows."""
        per = self.g.segments(layer, labelled)
        r0 = np.concatenate([s[0] for s in per]).astype(np.int64) if per else np.zeros(0, np.int64)
        r1 = np.concatenate([s[1] for s in per]).astype(np.int64) if per else np.zeros(0, np.int64)
        lab = np.concatenate([s[2] for s in per]).astype(np.int64) if per else np.zeros(0, np.int64)
        ann = np.concatenate([np.full(len(s[0]), a, np.int64) for a, s in enumerate(per)]) if per else np.zeros(0, np.int64)
        if self.pair_code.size == 0 or r0.size == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty, empty, empty
        row_base = self.g.frame.row_base
        pos = np.searchsorted(row_base, r0, side="right") - 1  # documents without units share the next one's row_base
        code = pos * self.n_a + ann
        p, ok = look_up(self.pair_code, code)
        return p[ok], (r0 - row_base[pos])[ok], (r1 - row_base[pos])[ok], lab[ok]

    def values(self, segs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], a: int, b: int, labelled: bool) -> Any:
        """The values of the rows of pairs ``[a, b)``."""
        p, u0, u1, lab = segs
        sel = (p >= a) & (p < b)
        offset = self.pair_base[p[sel]] - self.pair_base[a]
        total = int(self.pair_base[b - 1] + self.n[b - 1] - self.pair_base[a]) if b > a else 0
        if labelled:
            codes = label_codes(total, u0[sel] + offset, u1[sel] + offset, lab[sel], self.approach)
            return label_dictionary(codes, self.g.labels, NOT_ANNOTATED)
        return mark(total, u0[sel] + offset, u1[sel] + offset, self.approach)

    def table(self, layer_name: str, a: int, b: int, vals: Any) -> pa.Table:
        """The long table of pairs ``[a, b)``."""
        nb = self.n[a:b]
        total = int(nb.sum())
        frame = self.g.frame
        # a batch's columns built in 32 bits where they fit: a writing thread holds a million rows of each
        index = np.int32 if len(frame.columns["unit"]) < 1 << 31 else np.int64
        rows = np.repeat((frame.row_base[self.p_pos[a:b]] - (self.pair_base[a:b] - self.pair_base[a])).astype(index), nb)
        rows += np.arange(total, dtype=index)
        columns = [
            constant(self.g.group, total),
            pa.DictionaryArray.from_arrays(pa.array(np.repeat(self.p_pos[a:b].astype(np.int32), nb)), pa.array(frame.docs, pa.string())),
            constant(layer_name, total),
            frame.columns["unit"].take(rows),
            frame.columns["begin"].take(rows),
            frame.columns["end"].take(rows),
            pa.DictionaryArray.from_arrays(pa.array(np.repeat(self.p_ann[a:b].astype(np.int32), nb)), pa.array(self.g.annotators, pa.string())),
            value_array(vals, None),
        ]
        del rows
        return pa.Table.from_arrays(columns, schema=self.schema)

    def tables(self, mode: Mode, layers: list[str]) -> Iterator[pa.Table]:
        batches = self.batches()
        if mode == "combined":
            layer_order = self.g.layer_order
            per_layer = [self.segments(layer, False) for layer in layer_order]
            for a, b in batches:
                combined = np.zeros(int(self.n[a:b].sum()), dtype=np.uint8)
                for bit, s in enumerate(per_layer):
                    combined |= self.values(s, a, b, False) << np.uint8(bit)
                yield self.table("+".join(layer_order), a, b, combined)
            return
        labelled = mode == "labels"
        for layer in layers:
            segs = self.segments(layer, labelled)
            for a, b in batches:
                yield self.table(layer, a, b, self.values(segs, a, b, labelled))


# --- reading -------------------------------------------------------------------------------------


#: a long table whose wide form would exceed this many cells (rows × annotators) is measured
#: from value counts per unit (crowd data: thousands of annotators, a few per unit)
DENSE_CELLS = 20_000_000


def counted_per_unit(keys: int, annotators: int) -> bool:
    """Whether a long matrix of ``keys`` units (or items) and ``annotators`` is counted per unit (crowd data), not
    pivoted: its wide form would exceed :data:`DENSE_CELLS` cells."""
    return keys * annotators > DENSE_CELLS


class LongIndex:
    """A long table's keys and annotators as indexes, computed once per matrix.

    ``row[i]``: the index of row i's key among the sorted distinct keys;
    ``first[k]``: the first row of key k; ``annotators``/``ann_code``: the
    sorted distinct annotators and each row's index into them.
    """

    def __init__(self, table: pa.Table, keys: list[str]):
        row_key = np.zeros(table.num_rows, dtype=np.int64)
        for k in keys:
            column = table.column(k)
            if pa.types.is_integer(column.type):
                values = column.to_numpy().astype(np.int64)
                values = values - (values.min() if values.size else 0)
                radix = int(values.max()) + 1 if values.size else 1
            else:
                names, values = sorted_codes(column)
                radix = max(len(names), 1)
            row_key = row_key * radix + values
        _, self.first, row = np.unique(row_key, return_index=True, return_inverse=True)
        self.row = row.reshape(-1)
        self.annotators, self.ann_code = sorted_codes(table.column("annotator"))

    @property
    def too_wide(self) -> bool:
        """Whether one column per annotator would exceed :data:`DENSE_CELLS` (:func:`counted_per_unit`)."""
        return counted_per_unit(len(self.first), len(self.annotators))


def value_counts(table: pa.Table, index: LongIndex, numeric: bool) -> tuple[pa.Table, np.ndarray, np.ndarray, list[str] | None]:
    """A long table as per-key value counts: (key rows, counts, value domain, categories).

    A null value (a label that did not apply) counts for nothing.
    """
    import pyarrow.compute as pc  # here, not at the top: see unitize.layouts

    value = table.column("value")
    if numeric:
        v = np.asarray(pc.cast(value, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        keep = ~np.isnan(v)
        values = np.unique(v[keep])
        code = np.searchsorted(values, v[keep])
        categories = None
    else:
        keep = pc.is_valid(value).to_numpy(zero_copy_only=False)
        categories, code = sorted_codes(pc.cast(value.filter(pa.array(keep)), pa.string()))
        values = np.arange(len(categories), dtype=np.float64)
    n_rows, n_values = len(index.first), len(values)
    if n_values:
        counts = np.bincount(index.row[keep] * n_values + code, minlength=n_rows * n_values).reshape(n_rows, n_values)
    else:
        counts = np.zeros((n_rows, 0), np.int64)
    return table.take(pa.array(index.first)), counts, values, categories


def pivot(
    table: pa.Table, index: LongIndex, keys: list[str], carried: list[str], declared: Sequence[str]
) -> tuple[pa.Table, list[str]]:
    """A long table (one row per key × annotator) as a wide one; absent rows become nulls."""
    found, row, first = index.annotators, index.row, index.first
    present = set(found)
    annotators = [a for a in declared if a in present] + [a for a in found if a not in set(declared)]
    annotators += [a for a in declared if a not in present]  # declared, without a row: all null
    position = {a: i for i, a in enumerate(annotators)}
    rank = np.array([position[a] for a in found], dtype=np.int64)
    col = rank[index.ann_code] if index.ann_code.size else index.ann_code.astype(np.int64)
    key_rows = table.select(keys + carried).take(pa.array(first))
    for c in carried:
        extents = table.column(c).to_numpy()
        if not np.array_equal(extents[first][row], extents):
            raise DataError(f"a long table gives one {'/'.join(keys)} two different extents")
    if np.unique(row * max(len(annotators), 1) + col).size != table.num_rows:
        raise DataError("a long table has two values for one unit and annotator")
    value = table.column("value")
    wide = key_rows
    for i, name in enumerate(annotators):
        take = np.full(key_rows.num_rows, -1, dtype=np.int64)
        sel = np.flatnonzero(col == i)
        take[row[sel]] = sel
        wide = wide.append_column(name, value.take(pa.array(take, mask=take < 0)))
    return wide, annotators
