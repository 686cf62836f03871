"""Disagreement regions: where the annotators' values differ, as maximal runs of units.

A (setting, group, layer) table is read into :class:`Cells` — its units in
(document, unit) order and one cell per (unit, annotator) with a value — from
the wide or the long layout alike, crowd data included (cells are never a
units × annotators array). Then, per unit:

* **coded**: how many annotators have a value (an annotator missing for the
  document, or an item label that did not apply, has none);
* **disagrees**: at least two annotators coded the unit and their values are not
  all equal. With one annotator there is nothing to compare.

A **disagreement region** is a maximal run of consecutive units of one document
that all disagree; its character extent runs from the first unit's begin to the
last unit's end. Regions never cross documents, groups or layers; for item data
each item whose labels differ is a region of its own (items are not a sequence).
Within a region an annotator's values form *runs* (consecutive units with one
value); an annotator *marked* the region when one of its runs is not the empty
value (0 for 0/1 and bit-mask matrices, the ``not_annotated`` value, ``O``, for
label matrices; item labels have no empty value).

Since regions never cross documents, a crowd group (every document in one group,
a long table) need not be read whole: :func:`layer_pieces` hands out its cells a
piece of whole documents at a time, so memory holds a piece, not the corpus. What
is made per unit (regions, per-document figures, votes and gold) is the same from
the pieces as from the whole; the report, ``export --to disagreements`` and
``adjudicate`` read a units setting so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..model.codes import sorted_codes, text_codes
from .directory import OutputData, Setting


@dataclass
class Cells:
    """One (setting, group, layer) as units and the values annotators gave them."""

    setting: Setting
    group: str
    layer: str
    docs: list[str]  # documents (items: the items, in stored order)
    row_doc: np.ndarray  # per unit: index into docs; units sorted by (doc, unit)
    row_unit: np.ndarray  # per unit: unit index within its document (items: 0)
    begin: np.ndarray  # per unit: character extent (items: -1)
    end: np.ndarray
    annotators: list[str]
    values: list[str]  # value code -> its text as stored
    cell_row: np.ndarray  # per cell: its unit; cells sorted by unit
    cell_annotator: np.ndarray  # per cell: index into annotators
    cell_code: np.ndarray  # per cell: index into values
    empty: int | None = None  # the code of "not marked", if the data has one
    #: per document: units not among the rows, where every annotator gave the empty value (a sparse group read as
    #: stored, :func:`layer_pieces` with ``implicit``); None: every unit is a row
    implicit: np.ndarray | None = None

    @property
    def items(self) -> bool:
        return self.setting.kind == "items"

    def name(self, code: int) -> str:
        """A value as a reader says it (:func:`value_name`)."""
        return value_name(self.setting, self.values[code])


def value_name(setting: Setting, text: str) -> str:
    """A stored value as a reader says it: layer names for bit masks, the label otherwise."""
    if setting.value == "bitmask" and setting.layer_bits and text.isdigit():
        bits = int(text)
        named = [layer for layer, bit in setting.layer_bits.items() if bits & bit]
        return "+".join(named) if named else text
    return text


def not_annotated(setting: Setting) -> str:
    """The value of a label matrix meaning "not annotated" (schema metadata ``not_annotated``; ``O``)."""
    if setting.value != "label" or setting.kind != "units":
        return "0"
    raw = (pq.read_schema(setting.path).metadata or {}).get(b"unitize", b"{}")
    return json.loads(raw).get("not_annotated") or "O"


def multi_groups(setting: Setting) -> set[str]:
    """Item groups whose labels are sets (schema metadata ``multi``: ``a+b`` holds ``a`` and ``b``)."""
    if setting.kind != "items":
        return set()
    raw = (pq.read_schema(setting.path).metadata or {}).get(b"unitize", b"{}")
    return {g for g, how in (json.loads(raw).get("multi") or {}).items() if how == "set"}


def _natural(value: str) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", value) if p)


def annotator_order(setting: Setting, found: Iterable[str]) -> list[str]:
    """Annotators in the order cells list them: those the setting declares, in its order, then any other by name."""
    found = set(found)
    declared = [a for a in setting.annotators if a in found]
    return declared + sorted(found.difference(declared))


def value_order(found: Iterable[str], empty: str | None) -> list[str]:
    """Values in the order cells code them: natural order (``2`` before ``10``), the empty value first."""
    ordered = sorted(set(found), key=_natural)
    if empty is not None and empty in ordered:
        ordered.remove(empty)
        ordered.insert(0, empty)
    return ordered


def cells(setting: Setting, group: str, layer: str, table: pa.Table, empty: str | None = None) -> Cells:
    """The cells of one (setting, group, layer)'s rows (wide or long, units or items)."""
    items = setting.kind == "items"
    if items:
        names = table.column("item").to_pylist()
        docs = list(dict.fromkeys(names))
        position = {n: i for i, n in enumerate(docs)}
        key = np.array([position[n] for n in names], dtype=np.int64)
    else:
        docs, doc_code = sorted_codes(table.column("doc_id"))
        unit = table.column("unit").to_numpy().astype(np.int64)
        key = doc_code * (int(unit.max()) + 1 if unit.size else 1) + unit
    uniq, first, row = _distinct(key)
    if not setting.layout.columnar:
        annotators, ann = sorted_codes(table.column("annotator")) if table.num_rows else ([], np.zeros(0, np.int64))
        ordered = annotator_order(setting, annotators)
        position = {a: i for i, a in enumerate(ordered)}
        rank = np.array([position[a] for a in annotators], dtype=np.int64)
        annotators, ann = ordered, rank[ann] if ann.size else ann
        columns = [(text_codes(table.column("value"), setting.not_applicable), row, ann)]
    else:
        annotators = [a for a in setting.annotators if a in table.column_names]
        columns = [(text_codes(table.column(a), setting.not_applicable), row, np.full(len(row), k, np.int64)) for k, a in enumerate(annotators)]
    found = value_order((v for (_, names), _, _ in columns for v in names), empty)
    position = {v: i for i, v in enumerate(found)}
    # an item label that did not apply counts as missing; local −1 (missing) takes the last code, −1
    coded = [np.append(np.array([position[v] for v in names], np.int64), -1)[local] for (local, names), _, _ in columns]
    cell_row, cell_ann, cell_code = _in_unit_order(coded, [r for _, r, _ in columns], [a for _, _, a in columns])
    if items:
        row_doc, row_unit = uniq, np.zeros(len(uniq), np.int64)
        begin = end = np.full(len(uniq), -1, np.int64)
    else:
        stride = int(unit.max()) + 1 if unit.size else 1
        row_doc, row_unit = uniq // stride, uniq % stride
        begin = table.column("begin").to_numpy()[first].astype(np.int64)
        end = table.column("end").to_numpy()[first].astype(np.int64)
    return Cells(
        setting, group, layer, docs, row_doc, row_unit, begin, end, annotators, found, cell_row, cell_ann, cell_code,
        empty=0 if empty is not None and found and found[0] == empty else None,
    )


def _in_unit_order(coded: list[np.ndarray], rows: list[np.ndarray], anns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells of each column (``coded``: a value code per table row, −1 none; ``rows``: the row's unit;
    ``anns``: its annotator) as (unit, annotator, code), by unit, annotators in column (wide) or stored (long)
    order within a unit. A wide table's columns, one row per unit in unit order, are interleaved, not sorted."""
    if not coded:
        none = np.zeros(0, np.int64)
        return none, none, none
    one = rows[0]
    if len(coded) > 1 and all(r is one for r in rows) and bool(np.all(one[1:] > one[:-1])):
        grid = np.stack(coded, axis=1)
        keep = grid >= 0  # a 2-D mask takes row by row: unit, then column
        return np.broadcast_to(one[:, None], grid.shape)[keep], np.broadcast_to(np.arange(len(coded)), grid.shape)[keep], grid[keep]
    kept = [(r, a, c) if bool((c >= 0).all()) else (r[c >= 0], a[c >= 0], c[c >= 0]) for c, r, a in zip(coded, rows, anns)]
    row, ann, code = (x[0] if len(x) == 1 else np.concatenate(x) for x in zip(*kept))
    order = np.argsort(row, kind="stable")
    return row[order], ann[order], code[order]


def _distinct(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(key, return_index=True, return_inverse=True)``, without its sort when ``key`` is in order
    already (a columnar table is stored sorted by document and unit)."""
    if not np.all(key[1:] >= key[:-1]):
        uniq, first, row = np.unique(key, return_index=True, return_inverse=True)
        return uniq, first, row.reshape(-1)
    new = np.empty(key.size, dtype=bool)
    new[:1] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    first = np.flatnonzero(new)
    return key[first], first, np.cumsum(new, dtype=np.int64) - 1


def unit_flags(c: Cells) -> tuple[np.ndarray, np.ndarray]:
    """Per unit: how many annotators coded it, and whether it disagrees (≥ 2 coded, values not all equal)."""
    n = len(c.row_doc)
    coded = np.bincount(c.cell_row, minlength=n)
    disagrees = np.zeros(n, dtype=bool)
    if c.cell_row.size:
        starts = np.flatnonzero(np.r_[True, c.cell_row[1:] != c.cell_row[:-1]])
        low = np.minimum.reduceat(c.cell_code, starts)
        high = np.maximum.reduceat(c.cell_code, starts)
        disagrees[c.cell_row[starts]] = low != high
    return coded, disagrees & (coded >= 2)


def runs(flags: np.ndarray, row_doc: np.ndarray, row_unit: np.ndarray, *, separate: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(starts, stops) of the maximal runs of flagged rows that are consecutive units of one document
    (``separate``: every flagged row a run of its own)."""
    idx = np.flatnonzero(flags)
    if not idx.size:
        return idx, idx
    if separate:
        return idx, idx + 1
    new = np.r_[True, (np.diff(idx) != 1) | (np.diff(row_doc[idx]) != 0) | (np.diff(row_unit[idx]) != 1)]
    starts = idx[new]
    stops = np.r_[idx[np.flatnonzero(new)[1:] - 1], idx[-1]] + 1
    return starts, stops


@dataclass
class Region:
    """One disagreement region (see the module docstring)."""

    setting: str
    group: str
    layer: str
    doc: str
    unit_begin: int
    unit_end: int  # exclusive
    begin: int | None  # characters, end exclusive; None for items
    end: int | None
    #: annotator -> its runs in the region: (value as named, begin, end (characters; None for items), empty?)
    runs: dict[str, list[tuple[str, int | None, int | None, bool]]] = field(default_factory=dict)

    @property
    def marked_by(self) -> list[str]:
        return [a for a, rs in self.runs.items() if any(not e for *_, e in rs)]

    @property
    def not_marked_by(self) -> list[str]:
        return [a for a, rs in self.runs.items() if all(e for *_, e in rs)]

    @property
    def partial(self) -> list[str]:
        """Annotators who marked some units of the region and left others unmarked."""
        return [a for a, rs in self.runs.items() if any(e for *_, e in rs) and any(not e for *_, e in rs)]

    def labels(self) -> dict[str, list[str]]:
        """Per marking annotator, its values in the region (first appearance order)."""
        return {a: list(dict.fromkeys(v for v, _, _, e in rs if not e)) for a, rs in self.runs.items() if any(not e for *_, e in rs)}


def regions(c: Cells, flags: np.ndarray | None = None) -> list[Region]:
    """The disagreement regions of one (setting, group, layer), in (document, unit) order; with ``flags``
    (a bool per unit) the maximal runs of flagged units instead (e.g. the review queue of an adjudication)."""
    if flags is None:
        _, flags = unit_flags(c)
    starts, stops = runs(flags, c.row_doc, c.row_unit, separate=c.items)
    out: list[Region] = []
    if not starts.size:
        return out
    region_of = np.full(len(c.row_doc), -1, np.int64)
    region_of[np.concatenate([np.arange(s, e) for s, e in zip(starts.tolist(), stops.tolist())])] = np.repeat(
        np.arange(starts.size), stops - starts
    )
    for s, e in zip(starts.tolist(), stops.tolist()):
        out.append(Region(
            c.setting.name, c.group, c.layer, c.docs[c.row_doc[s]], int(c.row_unit[s]), int(c.row_unit[e - 1]) + 1,
            None if c.items else int(c.begin[s]), None if c.items else int(c.end[e - 1]),
        ))
    rid = region_of[c.cell_row]
    sel = np.flatnonzero(rid >= 0)
    order = sel[np.lexsort((c.cell_row[sel], c.cell_annotator[sel], rid[sel]))]
    r, a, code, row = rid[order], c.cell_annotator[order], c.cell_code[order], c.cell_row[order]
    if not order.size:
        return out
    new = np.r_[True, (np.diff(r) != 0) | (np.diff(a) != 0) | (np.diff(code) != 0) | (np.diff(row) != 1)]
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(order)] - 1
    for i, j in zip(first.tolist(), last.tolist()):
        region = out[r[i]]
        value = int(code[i])
        b, e = (None, None) if c.items else (int(c.begin[row[i]]), int(c.end[row[j]]))
        region.runs.setdefault(c.annotators[a[i]], []).append((c.name(value), b, e, value == c.empty))
    return out


def setting_cells(data: OutputData, setting: Setting, groups: list[str] | None = None) -> Iterator[Cells]:
    """Every (group, layer) of a setting as cells, groups sorted, layers in the manifest's order."""
    empty = None if setting.kind == "items" else not_annotated(setting)
    for group, layer, table in data.tables(setting, groups):
        yield cells(setting, group, layer, table, empty)
