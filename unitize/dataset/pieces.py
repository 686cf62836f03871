"""A setting's cells a piece of whole documents at a time (:func:`layer_pieces`).

Regions never cross documents (:mod:`.regions`), so a large group need not be read whole: a long table's group
(crowd data) is read a batch of row groups at a time, a sparse group's dense rows are rebuilt a run of documents
at a time, and each is cut into pieces of whole documents. What is made per unit (regions, per-document figures,
votes and gold) is the same from the pieces as from the whole; the report, ``export --to disagreements`` and
``adjudicate`` read a units setting so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..layouts.sparse import Stored, dense_group, group_universe, placed
from ..model.codes import sorted_codes
from ..output.parts import partitions
from .batches import batches
from .directory import ITEM_LAYER, OutputData, Setting
from .matrix import layer_rows
from .regions import Cells, cells, not_annotated

#: rows of a long table's group read at once: a larger group (crowd data) is read in pieces of whole documents
PIECE_ROWS = 1 << 19


class Pieces(Iterator[Cells]):
    """The cells of one (group, layer) a piece at a time, with the layers its group holds (``items`` for item data):
    whoever keeps something per group can tell when the group's last layer is read."""

    def __init__(self, cells: Iterator[Cells], layer: str, layers: list[str]):
        self._cells, self.layer, self.layers = cells, layer, layers

    def __iter__(self) -> Pieces:
        return self

    def __next__(self) -> Cells:
        return next(self._cells)

    @property
    def last(self) -> bool:
        """Whether this is the group's last layer (after it, nothing more of the group is read)."""
        return self.layer == self.layers[-1]


def layer_pieces(data: OutputData, setting: Setting, limit: int | None = None, groups: Sequence[str] | None = None,
                 implicit: bool = False) -> Iterator[tuple[str, str, Pieces]]:
    """Every (group, layer) of a setting (all, or of ``groups``), groups sorted, layers in the manifest's order, with
    its cells a piece of whole documents (items) at a time: a group of a long table holding more than ``limit`` rows
    (:data:`PIECE_ROWS`) in batches of about ``limit`` rows (:func:`.batches.batches`, a layer at a time: such a
    units group is read once per layer), a sparse group of more cells (units × annotators) than ``limit`` a run of
    whole documents of about that many cells at a time, its dense rows rebuilt for them alone, any other group whole,
    in one piece. The pieces come in document (stored item) order; regions never cross documents: the pieces'
    regions are the whole's. With ``implicit``, a sparse group's cells are its stored rows, its other units counted
    in :attr:`Cells.implicit`, not built."""
    limit = PIECE_ROWS if limit is None else limit
    items = setting.kind == "items"
    empty = None if items else not_annotated(setting)
    for group in data.groups(setting):
        if groups is not None and group not in groups:
            continue
        if implicit and setting.layout.implicit_rows and empty is not None:
            for _, stored, layers, codes in data.group_tables(setting, [group], implicit=True):
                for i, layer in enumerate(layers):
                    rows = layer_rows(stored.table, codes, i)
                    yield group, layer, Pieces(iter([_stored_cells(setting, stored, layer, rows, empty)]), layer, layers)
            continue
        if setting.layout.implicit_rows and empty is not None:
            docs, n = group_universe(setting, data.universe, group)
            units = max(limit // max(len(setting.annotators), 1), 1)  # a unit holds a cell per annotator
            if int(n.sum()) > units:  # the dense rows rebuilt a run of documents at a time, not the group's at once
                layers = data.layer_order(setting.layers)
                for layer, runs in _sparse_layers(data, setting, group, layers, docs, n, units, empty):
                    yield group, layer, Pieces(runs, layer, layers)
                continue
        if setting.layout.columnar or data.parts(setting).rows(group) <= limit:
            _, table, layers, codes = data.group_table(setting, group, data._read_group(setting, group))
            for i, layer in enumerate(layers):
                yield group, layer, Pieces(iter([cells(setting, group, layer, layer_rows(table, codes, i), empty)]), layer, layers)
            continue
        layers = [ITEM_LAYER] if items else data.layer_order(_group_layers(data, setting, group))
        for layer in layers:
            yield group, layer, Pieces(_layer_batches(data, setting, group, layer, limit, empty), layer, layers)


def _sparse_layers(data: OutputData, setting: Setting, group: str, layers: list[str], docs: list[str], n: np.ndarray, limit: int,
                   empty: str) -> Iterator[tuple[str, Iterator[Cells]]]:
    """Each layer of a sparse group with its cells a run of whole documents of about ``limit`` units at a time (a run
    closes at the document that fills it): the dense rows of a run's documents alone are rebuilt from their stored
    rows, the same rows the whole group's dense table holds for them."""
    stored = data._stored_rows(setting, group, None)
    di, li = placed(stored, group, docs, layers)
    runs = [(d0, d1) for d0, d1 in partitions(n.tolist(), limit) if n[d0:d1].any()]  # runs of documents with units
    for i, layer in enumerate(layers):
        rows = np.flatnonzero(li == i)
        rows = rows[np.argsort(di[rows], kind="stable")]  # the layer's rows by document
        yield layer, _layer_runs(data, setting, group, layer, stored, rows, di[rows], runs, docs, n, empty)


def _layer_runs(data: OutputData, setting: Setting, group: str, layer: str, stored: pa.Table, rows: np.ndarray, row_doc: np.ndarray,
                runs: list[tuple[int, int]], docs: list[str], n: np.ndarray, empty: str) -> Iterator[Cells]:
    """The cells of one layer of a sparse group a run of documents at a time (``rows``: the layer's stored rows, by
    document, ``row_doc`` their documents)."""
    for d0, d1 in runs:
        lo, hi = np.searchsorted(row_doc, [d0, d1]).tolist()
        yield _dense_cells(data, setting, group, layer, stored.take(pa.array(rows[lo:hi], pa.int64())), docs[d0:d1], n[d0:d1], empty)


def _dense_cells(data: OutputData, setting: Setting, group: str, layer: str, rows: pa.Table, docs: list[str], n: np.ndarray,
                empty: str) -> Cells:
    """The cells of one layer of a sparse group's documents ``docs`` (``n`` units each) from their stored ``rows``."""
    return cells(setting, group, layer, dense_group(setting, [layer], data.universe, group, rows, None, (docs, n)), empty)


def _stored_cells(setting: Setting, stored: Stored, layer: str, rows: pa.Table, empty: str) -> Cells:
    """The cells of one layer's stored rows of a sparse group, over all the group's documents, with the units not
    stored counted per document (every annotator gave them ``empty``)."""
    c = cells(setting, stored.group, layer, rows, empty)
    row_doc = stored.documents(pa.array(c.docs, pa.string()))[c.row_doc] if c.docs else c.row_doc
    implicit = stored.units - np.bincount(row_doc, minlength=len(stored.docs))
    values, code, at = c.values, c.cell_code, c.empty
    if at is None and implicit.any():  # the empty value only among the units not stored: it comes first
        values, code, at = [empty, *values], code + 1, 0
    return Cells(setting, c.group, layer, stored.docs, row_doc, c.row_unit, c.begin, c.end, c.annotators, values,
                 c.cell_row, c.cell_annotator, code, empty=at, implicit=implicit)


def _group_layers(data: OutputData, setting: Setting, group: str) -> set[str]:
    """The layers a group's rows hold, from their ``layer`` column alone, a part at a time."""
    found: set[str] = set()
    for k, ids in data._row_groups(setting).get(group, []):
        found.update(sorted_codes(data._read_part(setting, k, ids, group, ["layer"]).column("layer"))[0])
    return found


def _layer_batches(data: OutputData, setting: Setting, group: str, layer: str, limit: int, empty: str | None) -> Iterator[Cells]:
    """The cells of one layer of a group, batch by batch, each cut into pieces of about ``limit`` rows."""
    columns = [c for c in data.schema(setting).names if c != "group"]  # the group is known: no column of it made
    key = "item" if setting.kind == "items" else "doc_id"
    for table in batches(data, setting, group, columns, limit):
        _, table, layers, codes = data.group_table(setting, group, table)
        if layer in layers:
            for piece in _whole_documents(layer_rows(table, codes, layers.index(layer)), limit, key):
                yield cells(setting, group, layer, piece, empty)


def _whole_documents(table: pa.Table, limit: int, key: str = "doc_id") -> Iterator[pa.Table]:
    """One layer's rows (each document's rows together; items: each item's, ``key`` ``item``) in slices of whole
    documents of about ``limit`` rows: a batch is whole row groups, which may be larger; a document larger than
    ``limit`` is a slice of its own."""
    if table.num_rows <= limit:
        yield table
        return
    _, doc = sorted_codes(table.column(key))
    bounds = np.r_[0, np.flatnonzero(np.diff(doc)) + 1, table.num_rows]  # where each document's rows begin, and the end
    at = 0
    while at < table.num_rows:
        i = int(np.searchsorted(bounds, at + limit, side="right")) - 1
        stop = int(bounds[i]) if bounds[i] > at else int(bounds[np.searchsorted(bounds, at, side="right")])
        yield table.slice(at, stop - at)
        at = stop
