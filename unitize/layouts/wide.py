"""The wide layout: a row per unit of every document of a group, a column per annotator (null = missing).

Item matrices: a row per item, a column per annotator (null = no label). Every reader
(pandas, polars, DuckDB, R) reads it as is; a group's matrix holds units × annotators
cells, which is why crowd data (thousands of annotators) goes long and large corpora sparse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..model.codes import constant
from ..units.unitizers import Approach, Mode, label_codes, label_dictionary, mark
from .base import AnnotatorSegments, GroupMarks, Layout, label_column
from .frames import NOT_ANNOTATED, value_array
from .item_cells import ItemCells


class Wide(Layout):
    """A column per annotator; every unit of the group's documents is a row."""

    name = "wide"
    help = "a column per annotator, a row per unit"
    columnar = True
    items_dataset: str | None = "items"  # None in Sparse, which writes no item labels

    def unit_tables(self, g: GroupMarks, schema: pa.Schema, approach: Approach, mode: Mode, layers: Sequence[str]) -> Iterator[pa.Table]:
        missing = g.missing()
        if mode == "combined":
            layer_segs = [g.segments(layer, False) for layer in g.layer_order]
            yield self._table(g, schema, approach, "+".join(g.layer_order), missing, layer_segs, False)
        else:
            for layer in layers:
                yield self._table(g, schema, approach, layer, missing, [g.segments(layer, mode == "labels")], mode == "labels")

    def _rows(self, g: GroupMarks, layer_segs: list[AnnotatorSegments], approach: Approach,
              missing: dict[str, np.ndarray]) -> tuple[np.ndarray | None, dict[str, pa.Array], int, Callable[[np.ndarray], np.ndarray]]:
        """The rows a table has: (each row's document position, or None for every unit in frame order; the
        per-row columns; how many rows; frame row → table row)."""
        return None, g.frame.columns, g.frame.total, lambda r: r

    def _table(self, g: GroupMarks, schema: pa.Schema, approach: Approach, layer: str, missing: dict[str, np.ndarray],
               layer_segs: list[AnnotatorSegments], labelled: bool) -> pa.Table:
        """One table: ``layer_segs`` holds per layer (bit) the annotators' segments."""
        row_doc, cols, total, place = self._rows(g, layer_segs, approach, missing)
        columns = [constant(g.group, total), cols["doc_id"], constant(layer, total), cols["unit"], cols["begin"], cols["end"]]
        for ai, a in enumerate(g.annotators):
            if labelled:
                r0, r1, lab = layer_segs[0][ai]
                values: Any = label_dictionary(label_codes(total, place(r0), place(r1), lab, approach), g.labels, NOT_ANNOTATED)
            else:
                values = np.zeros(total, dtype=np.uint8)
                for bit, segs in enumerate(layer_segs):
                    r0, r1, _ = segs[ai]
                    values |= mark(total, place(r0), place(r1), approach) << np.uint8(bit)
            docs = missing[a]
            nulls = None
            if docs.any():
                nulls = docs[row_doc] if row_doc is not None else np.repeat(docs, g.frame.n)
            columns.append(value_array(values, nulls))
        return pa.Table.from_arrays(columns, schema=schema)

    def item_table(self, group: str, cells: ItemCells, annotators: list[str], schema: pa.Schema) -> pa.Table:
        """``group, item, <annotator>…``: one row per item, null = no label."""
        n = cells.n_items
        columns = [
            pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([group], pa.string())),
            cells.items,
        ]
        order = np.argsort(cells.annotator, kind="stable")  # the cells of annotator 0, then 1, …
        bounds = np.searchsorted(cells.annotator[order], np.arange(len(annotators) + 1))
        for a in range(len(annotators)):
            take = np.full(n, -1, dtype=np.int64)
            mine = order[bounds[a]:bounds[a + 1]]
            take[cells.row[mine]] = mine
            columns.append(label_column(cells.value.take(pa.array(take, mask=take < 0))))
        return pa.Table.from_arrays(columns, schema=schema)


WIDE = Wide()
