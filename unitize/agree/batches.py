"""A large group's statistics accumulated batch by batch and reduced: memory bounded by a batch.

Crowd data put every document in one group (a span table without groups, item labels),
so reading a group whole costs memory in proportion to the corpus. A group of a long
table (crowd spans, item labels) or of a wide item table holding more than
:data:`BATCH_ROWS` rows is read instead in batches of consecutive row groups of at most
:data:`BATCH_ROWS` rows, each batch reduced to the statistics of its layers
(:class:`LayerPart`) before the next is read; the statistics of disjoint units add up
(:meth:`~unitize.metrics.stats.Stats.__add__`), so the sum is what the whole group gives.
No unit is split between two batches: the rows of the batch's last key — a (layer,
document) for units, an item for items, whose rows the writers keep together — are
carried over to the next batch.

A whole long group is counted per unit (crowd data) when its wide form would exceed
:data:`~unitize.layouts.long.DENSE_CELLS` cells, and pivoted otherwise (the annotators
keep their identity). The batches always count, and keep per layer the units and the
annotators seen; when the reduced group turns out narrow enough to pivot, :func:`finish`
returns None and the group is read whole (at most ``DENSE_CELLS`` cells: small).

The same partial statistics are what an executor's task returns when a setting's one huge
group is split by parts (:func:`group_part` with ``parts``); the driver adds them up.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ..codes import sorted_codes
from ..dataset.directory import OutputData
from ..dataset.matrix import matrix
from ..dataset.model import Setting
from ..errors import DataError
from ..layouts import long as long_layout
from ..metrics.stats import Stats, from_matrix
from . import columns as _columns

#: rows of a group read at once (more are read in batches and their statistics added up)
BATCH_ROWS = 1 << 21


@dataclass
class LayerPart:
    """The additive statistics of one layer of some of a group's units (a batch, a task's parts)."""

    stats: Stats
    categories: list[str] | None  # label data: the label of each value code of ``stats``
    raters: frozenset[str] | None  # long tables: the annotators with a row in the layer
    docs: int | None  # documents with a row in the layer (units data)
    per_doc: dict[str, Stats] | None  # with ``by_doc``: each document's statistics

    def __add__(self, other: LayerPart) -> LayerPart:
        mine, theirs, categories = self, other, None
        if self.categories is not None or other.categories is not None:  # codes into the union of the labels
            categories = sorted(set(self.categories or ()) | set(other.categories or ()))
            mine, theirs = self.on(categories), other.on(categories)
        per_doc = None
        if mine.per_doc is not None and theirs.per_doc is not None:
            per_doc = dict(mine.per_doc)
            for doc, s in theirs.per_doc.items():
                per_doc[doc] = per_doc[doc] + s if doc in per_doc else s
        raters = mine.raters | theirs.raters if mine.raters is not None and theirs.raters is not None else None
        docs = (mine.docs or 0) + (theirs.docs or 0) if mine.docs is not None or theirs.docs is not None else None
        return LayerPart(mine.stats + theirs.stats, categories, raters, docs, per_doc)

    def on(self, categories: list[str]) -> LayerPart:
        """The same statistics with value codes into ``categories`` (a superset of this part's)."""
        if self.categories == categories:
            return self
        index = {c: i for i, c in enumerate(categories)}
        lut = np.array([index[c] for c in self.categories or ()], dtype=np.float64)

        def move(s: Stats) -> Stats:
            return s.relabeled(lut[s.domain.astype(np.int64)]) if s.domain.size else s

        per_doc = {d: move(s) for d, s in self.per_doc.items()} if self.per_doc is not None else None
        return LayerPart(move(self.stats), categories, self.raters, self.docs, per_doc)


def batched(setting: Setting) -> bool:
    """Whether a setting's groups are read in batches when large: long tables and item tables."""
    return not setting.layout.columnar or setting.kind == "items"


def group_rows(data: OutputData, setting: Setting, group: str, parts: tuple[int, int] | None = None) -> int:
    """Rows of a group (in the parts ``[k0, k1)``), as the part files' index counts them."""
    return data.parts(setting).rows(group, parts)


def batches(data: OutputData, setting: Setting, group: str, columns: Sequence[str] | None, parts: tuple[int, int] | None = None,
            limit: int | None = None) -> Iterator[pa.Table]:
    """A group's rows in batches of whole keys: consecutive row groups of at most ``limit`` rows
    (default :data:`BATCH_ROWS`), the rows of each batch's last key carried to the next.

    With ``parts`` (k0, k1): the keys that begin in those parts — the rows of a key begun in an
    earlier part are left to that part's reader, and the last key's rows that go on into the
    following parts are read from them (item parts are cut by rows, not by items).
    """
    limit = BATCH_ROWS if limit is None else limit
    if columns is not None:
        columns = list(dict.fromkeys([*columns, *_KEYS[setting.kind]]))
    index = data._row_groups(setting).get(group, [])
    lo, hi = parts if parts is not None else (0, len(setting.parts))
    skip = None
    prior = [(k, ids) for k, ids in index if k < lo]
    if prior:  # the key the previous part ends with
        last = data._read_part(setting, prior[-1][0], prior[-1][1][-1:], group, columns)
        skip = _key_at(setting, last, last.num_rows - 1) if last.num_rows else None
    carried: pa.Table | None = None
    for k, ids in index:
        if not lo <= k < hi:
            continue
        files = data.parts(setting)
        runs: list[list[int]] = [[]]
        held = 0
        for i in ids:
            rows = files.row_group_rows(k, i)
            if runs[-1] and held + rows > limit:
                runs.append([])
                held = 0
            runs[-1].append(i)
            held += rows
        for run in runs:
            table = data._read_part(setting, k, run, group, columns)
            if skip is not None:
                start = _leading(setting, table, skip)
                table, skip = table.slice(start), skip if start == table.num_rows else None
            if carried is not None:
                table = pa.concat_tables([carried, table.cast(carried.schema) if table.schema != carried.schema else table])
            cut = _last_key(setting, table)
            carried = table.slice(cut)
            if cut:
                yield table.slice(0, cut)
    if carried is not None and carried.num_rows and hi < len(setting.parts):  # the last key may go on
        key = _key_at(setting, carried, carried.num_rows - 1)
        for k, ids in index:
            if k < hi:
                continue
            for i in ids:
                table = data._read_part(setting, k, [i], group, columns)
                n = _leading(setting, table, key)
                if n:
                    carried = pa.concat_tables([carried, table.slice(0, n).cast(carried.schema)])
                if n < table.num_rows:
                    break
            else:
                continue
            break
    if carried is not None and carried.num_rows:
        yield carried


#: the columns that name a key (rows of one key are never split between batches)
_KEYS = {"items": ("item",), "units": ("layer", "doc_id")}


def _key_at(setting: Setting, table: pa.Table, i: int) -> tuple:
    return tuple(table.column(c)[i].as_py() for c in _KEYS[setting.kind])


def _leading(setting: Setting, table: pa.Table, key: tuple) -> int:
    """How many rows at the start of ``table`` have the key ``key``."""
    n = 0
    if table.num_rows and _key_at(setting, table, 0) == key:
        starts = _starts(setting, table)
        n = int(starts[0]) if starts.size else table.num_rows
    return n


def _starts(setting: Setting, table: pa.Table) -> np.ndarray:
    """The rows where a new key begins (after the first); refuses keys that are not each one run of rows."""
    if setting.kind == "items":
        names, key = sorted_codes(table.column("item"))
    else:
        docs, doc = sorted_codes(table.column("doc_id"))
        layers, layer = sorted_codes(table.column("layer"))
        key = layer.astype(np.int64) * max(len(docs), 1) + doc
    starts = np.flatnonzero(np.diff(key)) + 1
    if starts.size + 1 != np.unique(key).size:
        raise DataError(f"{setting.path}: the rows of a {'item' if setting.kind == 'items' else 'document'} are not "
                        "together in the file; it cannot be read in batches")
    return starts


def _last_key(setting: Setting, table: pa.Table) -> int:
    """Where the rows of a table's last key begin."""
    if table.num_rows == 0:
        return 0
    starts = _starts(setting, table)
    return int(starts[-1]) if starts.size else 0


def group_part(data: OutputData, setting: Setting, group: str, columns: Sequence[str] | None, by_doc: bool,
               parts: tuple[int, int] | None = None) -> dict[str, LayerPart]:
    """Per layer name, the statistics of a group's rows (of the parts ``[k0, k1)``), batch by batch."""
    out: dict[str, LayerPart] = {}
    for table in batches(data, setting, group, columns, parts):
        _, table, layers, codes = data.group_table(setting, group, table)
        for layer, part in zip(layers, _batch(setting, group, table, layers, codes, by_doc)):
            out[layer] = out[layer] + part if layer in out else part
    return out


def _batch(setting: Setting, group: str, table: pa.Table, layers: list[str], codes: np.ndarray, by_doc: bool) -> list[LayerPart]:
    """The statistics of each layer of one batch, counted per unit for long tables."""
    raters: list[frozenset[str] | None] = [None] * len(layers)
    if not setting.layout.columnar:
        names, ann = sorted_codes(table.column("annotator"))
        seen = np.bincount(codes * len(names) + ann, minlength=len(layers) * len(names)).reshape(len(layers), -1) > 0
        raters = [frozenset(names[j] for j in np.flatnonzero(row)) for row in seen]
    if setting.kind == "items":
        m = matrix(setting, group, "items", table, crowd=True if not setting.layout.columnar else None)
        crowd = m.value_counts()
        return [LayerPart(_empty(crowd[0].shape[0]) if crowd is not None and not crowd[1].size else from_matrix(m),
                          m.categories, raters[0], None, None)]
    counted = _columns.long_stats(setting, table, codes, len(layers), -1, by_doc)
    assert counted is not None  # no layer holds fewer than -1 cells: none is left to pivot
    per, categories = counted
    return [LayerPart(s, categories, r, docs, dict(pd) if pd is not None else None)
            for (s, _, docs, pd), r in zip(per, raters)]


def _empty(units: int) -> Stats:
    """Crowd statistics of ``units`` units nobody gave a value (a batch of not-applicable items): the empty pattern."""
    return Stats(np.zeros(0), (), np.zeros((1, 0), np.int64), np.array([units], np.int64),
                 np.zeros((1, 0, 0), np.int64), np.zeros((0, 0, 0, 0), np.int64))


def finish(data: OutputData, setting: Setting, found: dict[str, LayerPart]) -> list[tuple[str, LayerPart]] | None:
    """The reduced layers in the manifest's order — or None when the whole group would be pivoted
    (long data narrow enough for a column per annotator: the caller reads it whole)."""
    if not found or not setting.layout.columnar and any(p.stats.n_units * len(p.raters or ()) <= long_layout.DENSE_CELLS for p in found.values()):
        return None  # units × annotators per layer (items: items × annotators), as the whole group decides
    order = {layer: i for i, layer in enumerate(data.layers)}
    return [(layer, found[layer]) for layer in sorted(found, key=lambda x: (order.get(x, len(order)), x))]


#: what :func:`group_tables` yields: (group, its rows as read, or its layers' statistics reduced, layer names, layer codes)
GroupRows = tuple[str, Any, list[str], np.ndarray | None]


def group_tables(data: OutputData, setting: Setting, groups: Sequence[str] | None, columns: Sequence[str] | None,
                 by_doc: bool, implicit: bool = False) -> Iterator[GroupRows]:
    """:meth:`OutputData.group_tables`, but a large group of a long or item table comes reduced: (group,
    its layers' :class:`LayerPart`, layer names, None) instead of (group, rows, layer names, layer codes);
    under ``implicit`` a sparse group comes as stored (:class:`~.sparse.Stored`)."""
    wanted = set(groups) if groups is not None else None
    for group in data.groups(setting):
        if wanted is not None and group not in wanted:
            continue
        reduced = None
        if batched(setting) and group_rows(data, setting, group) > BATCH_ROWS:
            reduced = finish(data, setting, group_part(data, setting, group, columns, by_doc))
        if reduced is not None:
            yield group, reduced, [layer for layer, _ in reduced], None
        elif implicit and setting.layout.implicit_rows:
            stored, codes = data._stored_group(setting, group, columns)
            yield group, stored, stored.layers, codes
        else:
            yield data.group_table(setting, group, data._read_group(setting, group, columns))
