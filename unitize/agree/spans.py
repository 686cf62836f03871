"""The segments of a cell, for the segment metrics (:mod:`unitize.metrics.segment`): read, and laid on a continuum.

The segments of one unit type are read once per run (:class:`Segments`); a
(group, layer)'s continuum is the group's documents two annotators or more coded,
laid end to end (L = their units), with who coded which; :func:`segment_cell` hands a cell's segments
to the metrics, placed on it when first asked. ``stack`` lays a group's layer
matrices end to end for the "both" row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import compress
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from ..dataset.directory import Matrix, Setting
from ..metrics import SegmentCell
from ..metrics.placed import Placed
from ..metrics.value import Value, nan
from ..model.codes import value_codes
from ..units.relations import Counts, look_up

T = TypeVar("T")


def stack(mats: list[Matrix], layer: str) -> Matrix:
    """Layers of one group laid end to end (the RAT's "both" for coding metrics)."""
    first = mats[0]
    crowd = [m.crowd for m in mats if m.crowd is not None]
    counts = domain = None
    if crowd:  # value counts per layer, on the union of their value domains
        counted = [c for m in mats if (c := m.value_counts()) is not None]
        assert len(counted) == len(mats), "the layers of a group are stored alike: all crowd data or none"
        domain = np.unique(np.concatenate([values for _, values in counted]))
        counts = np.concatenate([_on_domain(c, values, domain) for c, values in counted])
    return Matrix(
        setting=first.setting,
        group=first.group,
        layer=layer,
        annotators=first.annotators,
        values=np.concatenate([m.values for m in mats]),
        categories=first.categories,
        docs=first.docs,
        row_doc=np.concatenate([m.row_doc for m in mats]),
        row_unit=np.concatenate([m.row_unit for m in mats]),
        continuum=first,
        crowd=max(crowd) if crowd else None,
        counts=counts,
        value_domain=domain,
    )


def _on_domain(counts: np.ndarray, values: np.ndarray, domain: np.ndarray) -> np.ndarray:
    out = np.zeros((counts.shape[0], domain.size), dtype=counts.dtype)
    out[:, np.searchsorted(domain, values)] = counts
    return out


class Segments:
    """Per (group, layer): segment rows of one unit type, for alpha-U, gamma and the relation counts —
    in ``unitize agree``, one group's (:meth:`~unitize.dataset.directory.OutputData.segment_file`).

    ``table`` may be a function reading it: it is read when a span metric first asks for the segments
    (not at all when none does, as on crowd data, whose span metrics are NaN before any segment).
    ``counts``: discourse data's relations per set of layers (:mod:`unitize.units.relations`), of the group
    the segments are (or, with no table, would be) of. The per-segment arrays are built only when a span
    metric first asks for them. ``shared`` outlives the object (what a run keeps across cells and
    groups: alpha-U's bootstrap per category, spanboot). ``group`` names the group the segments are of, and
    ``held`` is where :meth:`per_group` keeps what is derived from them: the settings of one unit type measured
    group by group together share it (:func:`~.measure.measured`), so a group's segments are read and placed once
    for all of them. ``labelled`` False: the table has no ``label`` column (read for a setting whose values are not
    labels), every segment then named after its layer.
    """

    def __init__(self, table: pa.Table | Callable[[], pa.Table] | None, shared: dict[Any, Any] | None = None,
                 counts: Counts | None = None, group: str | None = None, held: dict[Any, Any] | None = None,
                 labelled: bool = True):
        self._table = table
        self.labelled = labelled
        self._counts = counts
        self._by_key: dict[tuple[str, str], KeySegments] | None = None
        self._memo: dict[Any, Any] = {}
        self._held: dict[Any, Any] = {} if held is None else held
        self.group = group
        self.shared: dict[Any, Any] = {} if shared is None else shared

    def per_group(self, group: str, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        """What is derived from one layer's segments on one continuum, built once for the cells of ``group`` (a layer
        alone, the layers together; the settings that share :attr:`_held`), let go when another group comes."""
        if self._held.get("group") != group:
            self._held.clear()
            self._held["group"] = group
        if key not in self._held:
            self._held[key] = build()
        return self._held[key]

    def memo(self, m: Matrix | Continuum, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        """What the span metrics derive from one cell (placed segments, statistics), built once while
        the metrics of that cell's continuum (or matrix) are measured."""
        if self._memo.get("matrix") is not m:
            self._memo = {"matrix": m}
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    @property
    def table(self) -> pa.Table | None:
        if callable(self._table):
            self._table = self._table()
        return self._table

    @property
    def by_key(self) -> dict[tuple[str, str], KeySegments]:
        if self._by_key is None:
            build = lambda: _segment_arrays(self.table, self.group)  # noqa: E731
            self._by_key = build() if self.group is None else self.per_group(self.group, ("segment arrays", self.labelled), build)
        return self._by_key

    def relations(self, layers: Sequence[str]) -> int | None:
        """The most relations (distinct source records) any annotator has in ``layers`` of the group; None
        when they were not counted (not discourse data, or a set of layers :mod:`unitize.units.relations` does not count)."""
        return look_up(self._counts, layers) if self._counts is not None else None


@dataclass
class KeySegments:
    """One (group, layer)'s segments: per segment codes into the name lists, and unit extents."""

    docs: list[str]
    doc: np.ndarray  # (S,) int64 into docs
    annotators: list[str]
    annotator: np.ndarray  # (S,) int64 into annotators
    labels: list[str]  # sorted; a segment without a label has its layer's name
    label: np.ndarray  # (S,) int64 into labels
    u0: np.ndarray
    u1: np.ndarray


def _segment_arrays(table: pa.Table | None, group: str | None = None) -> dict[tuple[str, str], KeySegments]:
    """Per (group, layer): the segments' documents, annotators, labels (as codes) and unit extents (rows in
    table order; a (group, layer)'s rows are one slice after a stable sort of their codes). A table without a
    ``group`` column holds the rows of ``group``."""
    out: dict[tuple[str, str], KeySegments] = {}
    if table is None or table.num_rows == 0:
        return out
    if "group" in table.column_names or group is None:
        groups, g = value_codes(table.column("group"))
    else:
        groups, g = [group], np.zeros(table.num_rows, np.int64)
    layers, lay = value_codes(table.column("layer"))
    key = g * len(layers) + lay
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    docs, doc = value_codes(table.column("doc_id"))
    annotators, ann = value_codes(table.column("annotator"))
    # no label (or no label column): code len(labels)
    labels, label = value_codes(table.column("label")) if "label" in table.column_names else ([], np.zeros(table.num_rows, np.int64))
    u0 = table.column("unit_begin").to_numpy().astype(np.int64)
    u1 = table.column("unit_end").to_numpy().astype(np.int64)
    for ix in np.split(order, bounds):
        k = int(key[ix[0]])
        layer = layers[k % len(layers)]
        named = [x or layer for x in [*labels, None]]  # no label (or an empty one): the layer's name
        kept = sorted(set(named))
        lut = np.array([kept.index(x) for x in named], dtype=np.int64)
        out[(groups[k // len(layers)], layer)] = KeySegments(docs, doc[ix], annotators, ann[ix], kept, lut[label[ix]], u0[ix], u1[ix])
    return out


@dataclass
class Continuum:
    """What a span metric needs of a (group, layer) besides its segments: the group's documents,
    each one's number of units and which annotators have data for it. Built from the Arrow
    columns on the fast path (no matrix), or from a :class:`Matrix`."""

    setting: Setting
    group: str
    docs: list[str]
    units: np.ndarray  # (D,) units per document
    presence: np.ndarray  # (D, A) bool: the annotator has data for the document
    annotators: list[str]

    @classmethod
    def of(cls, m: Matrix | Continuum) -> Continuum:
        if isinstance(m, Continuum):
            return m
        return cls(m.setting, m.group, list(m.docs), m.doc_units(), m.doc_presence(), list(m.annotators))


class Hashed:
    """A key of many parts (a continuum's documents, units and presence) whose hash is worked out once: the cells of a
    group look what was placed on a continuum up by it many times."""

    __slots__ = ("parts", "_hash")

    def __init__(self, parts: tuple[Any, ...]):
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hashed) and self._hash == other._hash and self.parts == other.parts


@dataclass(frozen=True)
class _Laid:
    """A continuum's documents two annotators or more coded, laid end to end (:func:`_laid`)."""

    offset: np.ndarray  # (D,) each document's first position, −1: left out
    annotators: list[str]  # those with data
    length: int  # L
    reason: str | None  # why there is no continuum
    docs: tuple[str, ...] = ()  # the documents laid
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # their first positions
    presence: np.ndarray | None = None  # (laid documents, annotators with data) bool; None: everyone coded everything


def _laid(m: Continuum) -> _Laid:
    """Documents at least two annotators coded, their offsets on the continuum, annotators, L (or a reason)."""
    presence = m.presence
    cols = np.asarray(presence.any(axis=0))  # (A,); asarray: NumPy's stubs type it "a scalar or an array"
    annotators = [a for a, c in zip(m.annotators, cols) if c]
    if len(annotators) < 2:
        return _Laid(np.zeros(0, np.int64), annotators, 0, "fewer than two annotators with data")
    paired = presence[:, cols].sum(axis=1) >= 2
    if not paired.any():
        return _Laid(np.zeros(0, np.int64), annotators, 0, "no document is coded by two annotators")
    n = np.where(paired, m.units, 0)
    offset = np.concatenate(([0], np.cumsum(n)[:-1]))
    offset = np.where(paired, offset, -1)
    coded = presence[paired][:, cols]
    return _Laid(offset, annotators, int(n.sum()), None, tuple(compress(m.docs, paired.tolist())), offset[paired],
                 None if coded.all() else coded)


def _doc_places(seg: KeySegments, docs: list[str]) -> np.ndarray:
    """Per document of the segments (:attr:`KeySegments.docs`), its index in ``docs`` (−1: not among them)."""
    index = {d: i for i, d in enumerate(docs)}
    return np.array([index.get(d, -1) for d in seg.docs], dtype=np.int64)


def _unit_positions(seg: KeySegments, places: np.ndarray, offset: np.ndarray,
                    approach: str | None) -> tuple[np.ndarray | slice, np.ndarray, np.ndarray]:
    """Segments of used documents as (rows, begin, end) on the continuum (``places``: :func:`_doc_places`; rows: their
    indices, or every row as a slice); boundary: the end units."""
    doc_offset = np.where(places >= 0, offset[np.maximum(places, 0)], -1) if offset.size else np.full(places.size, -1)
    base = doc_offset[seg.doc]  # each segment's document's first position, −1: the document is not laid
    rows: np.ndarray | slice = slice(None)
    if base.size and int(base.min()) < 0:
        rows = np.flatnonzero(base >= 0)
        base = base[rows]
    b, e = seg.u0[rows] + base, seg.u1[rows] + base
    if approach == "boundary":
        rows = np.arange(seg.doc.size)[rows]
        last = e - 1
        two = last > b
        rows = np.concatenate([rows, rows[two]])
        b, e = np.concatenate([b, last[two]]), np.concatenate([b + 1, e[two]])
    return rows, b, e


def place(segs: Segments, m: Matrix | Continuum, layers: Sequence[str], approach: str | None) -> list[Placed] | Value:
    """Each layer's segments on the continuum of the documents two annotators or more coded (or the NaN saying why),
    with who coded which (:attr:`Placed.presence`: a measure of a pair takes the pair's documents, uα each document's coders).

    ``m`` is the cell's :class:`Continuum` (from the columns, no matrix) or its :class:`Matrix`.
    The value of a segment is its label for label data; otherwise one value for every layer,
    named after the cell's layer(s);
    ``approach`` "boundary" places each segment's first and last unit instead. What is placed is kept for the
    group's other cells on the same continuum (its layers, its settings).
    """
    m = Continuum.of(m)
    on = Hashed((tuple(m.docs), m.units.tobytes(), m.presence.tobytes(), tuple(m.annotators)))  # the continuum
    laid = segs.per_group(m.group, ("laid", on), partial(_laid, m))
    if laid.reason:
        return nan(laid.reason, units_used=laid.length)
    if laid.length == 0:
        return nan("empty continuum: the documents have no units", units_used=0)
    marked = "+".join(layers)  # 0/1 data: one value in every layer, named after the cell's layers (as the stacked matrices)
    out = []
    for layer in layers:
        key = (layer, approach, m.setting.value, on)
        p = segs.per_group(m.group, ("placed", key), partial(_place_layer, segs, m, layer, laid, approach, key))
        if m.setting.value != "label" and p.values and p.values != (marked,):
            p = segs.per_group(m.group, ("placed as", key, marked), partial(replace, p, values=(marked,)))
        out.append(p)
    return out


def _place_layer(segs: Segments, m: Continuum, layer: str, laid: _Laid, approach: str | None, key: tuple[Any, ...]) -> Placed:
    """One layer's segments on the continuum (0/1 data: one value, named after the layer; :func:`place` names it after
    the layers together for their cell)."""
    annotators = laid.annotators
    seg = segs.by_key.get((m.group, layer))
    if seg is None:
        b, e = np.zeros(0, np.int64), np.zeros(0, np.int64)
        names, label, who = [layer], np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        # a group's segments name the same documents in every layer: looked up once for its layers and settings
        places = segs.per_group(m.group, ("doc places", segs.labelled, key[-1].parts[0]), partial(_doc_places, seg, m.docs))
        rows, b, e = _unit_positions(seg, places, laid.offset, approach)
        names, label = (seg.labels, seg.label[rows]) if m.setting.value == "label" else ([layer], np.zeros(b.size, np.int64))
        index = {a: k for k, a in enumerate(annotators)}
        who = np.array([index.get(a, -1) for a in seg.annotators], dtype=np.int64)[seg.annotator[rows]]
    keep = who >= 0
    if not keep.all():  # an annotator without data on this continuum
        who, b, e, label = who[keep], b[keep], e[keep], label[keep]
    if m.setting.value == "label":
        used, code = np.unique(label, return_inverse=True)  # the names are sorted: so are the values
    else:  # one value
        used, code = np.zeros(1 if who.size else 0, np.int64), label
    return Placed(tuple(annotators), laid.docs, laid.starts, laid.length, tuple(names[i] for i in used.tolist()),
                  who, b, e, code.astype(np.int64).reshape(-1), laid.presence, key=key)


def segment_cell(segs: Segments | None, m: Matrix | Continuum, layers: Sequence[str]) -> SegmentCell:
    """A cell's segments as the segment metrics take them (:class:`~unitize.metrics.SegmentCell`):
    placed on the cell's continuum when a metric first asks, once per approach."""

    def place_on(name: str, approach: str | None) -> list[Placed] | Value:
        if segs is None:
            return nan(f"no segments/{m.setting.unit}.parquet in the output directory")
        return segs.memo(m, ("placed", tuple(layers), approach), lambda: place(segs, m, layers, approach))

    def memo(key: tuple[Any, ...], build: Callable[[], T]) -> T:
        return segs.memo(m, key, build) if segs is not None else build()

    def layer_memo(key: tuple[Any, ...], build: Callable[[], T]) -> T:
        return segs.per_group(m.group, key, build) if segs is not None else build()

    return SegmentCell(group=m.group, layers=tuple(layers), approach=m.setting.approach, labelled=m.setting.value == "label",
                       place=place_on, memo=memo, shared=segs.shared if segs is not None else {}, layer_memo=layer_memo)
