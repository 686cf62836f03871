"""A large group's statistics accumulated batch by batch and reduced: memory bounded by a batch.

Crowd data put every document in one group (a span table without groups, item labels),
so reading a group whole costs memory in proportion to the corpus. A group of a long
table (crowd spans, item labels) or of a wide item table holding more than
:data:`BATCH_ROWS` rows is read instead in batches of consecutive row groups of at most
:data:`BATCH_ROWS` rows (:func:`unitize.dataset.batches.batches`: no unit split between
two), each batch reduced to the statistics of its layers (:class:`LayerPart`) before the
next is read; the statistics of disjoint units add up
(:meth:`~unitize.metrics.stats.Stats.__add__`), so the sum is what the whole group gives.

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

from ..dataset.batches import batches
from ..dataset.directory import OutputData
from ..dataset.matrix import matrix
from ..dataset.model import Setting
from ..layouts import long as long_layout
from ..metrics.stats import Stats, from_matrix
from ..model.codes import sorted_codes
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


def group_part(data: OutputData, setting: Setting, group: str, columns: Sequence[str] | None, by_doc: bool,
               parts: tuple[int, int] | None = None) -> dict[str, LayerPart]:
    """Per layer name, the statistics of a group's rows (of the parts ``[k0, k1)``), batch by batch."""
    out: dict[str, LayerPart] = {}
    for table in batches(data, setting, group, columns, BATCH_ROWS, parts):
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
