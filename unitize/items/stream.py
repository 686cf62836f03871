"""Flat labels → item matrices a bucket of items at a time: memory set by the bucket, not by the corpus.

:func:`build` cuts the records into buckets of whole items in natural item order —
every record of an item in one bucket, about :data:`BUCKET_RECORDS` records a bucket
— builds each (:func:`~.build.build_bucket`) and joins them: each group's rows
spooled in order (:class:`~unitize.runtime.spool.Spool`: on disk when large), counts and
findings added up, value numbers and split labels decided once every bucket is in.
A study of at most ``bucket_records`` records is one bucket, and the matrices do not
depend on the bucket size (``tests/items/test_stream.py``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..layouts import ItemCells
from ..layouts.item_cells import CELLS_SCHEMA, concat
from ..model import Finding, ItemLabel
from ..model.findings import finding
from ..model.item_records import SCHEMA, ItemRecords, records_of
from ..runtime.spool import Spool
from .build import GroupCounts, build_bucket, check_groups, item_key
from .options import NOT_APPLICABLE, SET_JOIN, SPLIT_JOIN, SPLIT_VALUES, GroupSpec, ItemOptions
from .values import numbers

#: label records per bucket of items (about: a bucket holds whole items)
BUCKET_RECORDS = 1 << 17
#: records sampled to place the bucket boundaries
SAMPLE = 1 << 15


@dataclass
class GroupMatrix:
    """One group of the item matrices: its reading, its counts and its rows (spooled, read chunk by chunk).

    A split group (``split_of``) reads the rows of the group it splits, each value made
    ``"1"``/``"0"`` for ``split_label``.
    """

    name: str
    spec: GroupSpec
    source: Spool  # CELLS_SCHEMA rows, a batch per bucket
    chunk_items: list[int]  # per batch of ``source``: its rows (items)
    chunk_cells: list[int]  # per batch: its cells
    numbers: dict[str, float] | None = None
    order: list[str] | None = None
    split_of: str | None = None
    split_label: str | None = None

    @property
    def n_items(self) -> int:
        return sum(self.chunk_items)

    @property
    def n_cells(self) -> int:
        return sum(self.chunk_cells)

    def chunk(self, index: int) -> ItemCells:
        """The rows of batch ``index`` of the source."""
        return self._read(self.source.batch(index))

    def chunks(self) -> Iterator[ItemCells]:
        """The rows, a bucket at a time, in order."""
        for batch in self.source.batches():
            yield self._read(batch)

    def cells(self) -> ItemCells:
        """Every row at once (in memory: for small matrices)."""
        return concat(list(self.chunks()))

    @property
    def items(self) -> list[str]:
        """The item ids in row order (in memory)."""
        return self.cells().items.to_pylist()

    def rows(self, annotators: list[str]) -> list[dict[str, str | None]]:
        """Per item, ``{annotator: value}`` (in memory)."""
        return self.cells().rows(annotators)[1]

    def _read(self, batch: pa.RecordBatch) -> ItemCells:
        cells = ItemCells.from_batch(batch)
        return cells if self.split_label is None else split_cells(cells, self.split_label)


@dataclass
class ItemResult:
    """Every group's matrix, the findings, and what became of every input record."""

    annotators: list[str]
    groups: list[GroupMatrix]
    findings: list[Finding]
    accounting: dict[str, Any]
    items_by_group: dict[str, dict[str, int]]
    spools: list[Spool] = field(default_factory=list)

    def close(self) -> None:
        """Free the spooled rows."""
        for spool in self.spools:
            spool.close()


def split_cells(cells: ItemCells, label: str) -> ItemCells:
    """A multi-label group's cells as one label's: ``"1"`` when the value holds ``label``, else ``"0"``
    (no label and not-applicable stay as they are)."""
    encoded = cells.value.dictionary_encode()
    values = [v if v == NOT_APPLICABLE else SPLIT_VALUES[label in v.split(SET_JOIN)] for v in encoded.dictionary.to_pylist()]
    return cells.with_values(pa.array(values, pa.string()).take(encoded.indices))


def build(records: Iterable[ItemLabel], annotators: list[str], options: ItemOptions, *, bucket_records: int | None = None,
          memory_rows: int | None = None) -> ItemResult:
    """Item matrices of every group (sorted by name, split groups in place), items in natural order; buckets of about
    ``bucket_records`` records (default :data:`BUCKET_RECORDS`), each group's rows in memory up to ``memory_rows``."""
    bucket_records = bucket_records or BUCKET_RECORDS
    stored = records if isinstance(records, ItemRecords) else ItemRecords(records)
    present, sample = _survey(stored, max(1, len(stored) // SAMPLE))
    joined = _Joined(annotators, options, present, check_groups(present, options), memory_rows)
    if len(stored) <= bucket_records:
        joined.add(list(stored))
    else:
        for bucket in _buckets(stored, sample, math.ceil(2 * len(stored) / bucket_records)):
            joined.add(bucket)
    return joined.finish(len(stored))


def _survey(stored: ItemRecords, every: int) -> tuple[list[str], list[str]]:
    """The groups (sorted) and every ``every``-th record's item."""
    groups: set[str] = set()
    sample: list[str] = []
    seen = 0
    for batch in stored.batches():
        groups.update(pc.unique(batch.column(0)).to_pylist())
        first = (-seen) % every
        sample += batch.column(1).take(pa.array(np.arange(first, batch.num_rows, every))).to_pylist()
        seen += batch.num_rows
    return sorted(groups), sample


def _buckets(stored: ItemRecords, sample: list[str], wanted: int) -> Iterator[list[ItemLabel]]:
    """The records in buckets of whole items, buckets in natural item order, records in reading order."""
    keys = sorted(item_key(i) for i in sample)
    bounds: list[tuple] = []
    for j in range(1, wanted):
        key = keys[j * len(keys) // wanted]
        if not bounds or key > bounds[-1]:
            bounds.append(key)
    spools = [Spool(SCHEMA, memory_rows=0) for _ in range(len(bounds) + 1)]
    try:
        for batch in stored.batches():
            items = batch.column(1)
            unique = pc.unique(items)
            where = np.array([bisect_right(bounds, item_key(i)) for i in unique.to_pylist()], dtype=np.int64)
            bucket = where[pc.index_in(items, value_set=unique).to_numpy()]
            order = np.argsort(bucket, kind="stable")
            taken = batch.take(pa.array(order))
            cuts = np.searchsorted(bucket[order], np.arange(len(spools) + 1))
            for j, spool in enumerate(spools):
                if cuts[j + 1] > cuts[j]:
                    spool.append(taken.slice(cuts[j], cuts[j + 1] - cuts[j]))
        for spool in spools:
            yield [r for b in spool.batches() for r in records_of(b)]
            spool.close()
    finally:
        for spool in spools:
            spool.close()


class _Joined:
    """The buckets' matrices joined: rows spooled per group, counts, values, findings and fates added up."""

    def __init__(self, annotators: list[str], options: ItemOptions, present: list[str], order: list[str], memory_rows: int | None):
        self.annotators, self.options, self.present, self.order = annotators, options, present, order
        self.spools = {g: Spool(CELLS_SCHEMA, memory_rows) for g in present}
        self.chunk_items: dict[str, list[int]] = {g: [] for g in present}
        self.chunk_cells: dict[str, list[int]] = {g: [] for g in present}
        self.counts = {g: GroupCounts(reached_by_any=0 if options.spec(g).applies_when else None) for g in present}
        self.values: dict[str, set[str]] = {g: set() for g in present}
        self.findings: list[Finding] = []
        self.fate: Counter[str] = Counter()

    def add(self, labels: list[ItemLabel]) -> None:
        bucket = build_bucket(labels, self.annotators, self.options, self.order)
        for g, cells in bucket.cells.items():
            if cells.n_items:
                self.spools[g].append(cells.stored())
                self.chunk_items[g].append(cells.n_items)
                self.chunk_cells[g].append(cells.n_cells)
            self.counts[g].add(bucket.counts[g])
            self.values[g] |= bucket.values[g]
        self.findings += bucket.findings
        self.fate.update(bucket.fate)

    def finish(self, read: int) -> ItemResult:
        annotators, options = self.annotators, self.options
        items_by_group: dict[str, dict[str, int]] = {}
        for group in self.order:
            c = self.counts[group]
            spec = options.spec(group)
            counted = {"items": c.items, "complete": c.complete}
            if c.reached_by_any is not None:
                counted["reached_by_any"] = c.reached_by_any
            counted["kept"] = c.kept
            items_by_group[group] = counted
            reach = f"; reach = {spec.reach}: {c.items} of {c.reached_by_any} items some annotator reached" if c.reached_by_any is not None else ""
            self.findings.append(
                finding(
                    "items-kept",
                    f"group {group}: {c.items} items{reach}; {c.complete} labelled by every annotator "
                    + (f"({', '.join(annotators)})" if len(annotators) <= 10 else f"(all {len(annotators)})"),
                    f"complete = {'true' if options.complete else 'false'} keeps {c.kept}",
                    group=group,
                )
            )
        out: list[GroupMatrix] = []
        for name in self.present:
            spec = options.spec(name)
            m = GroupMatrix(name, spec, self.spools[name], self.chunk_items[name], self.chunk_cells[name])
            nums = numbers(spec, self.values[name])
            if nums:
                m.numbers, m.order = nums
            if spec.multi != "split":
                out.append(m)
                continue
            labels = list(spec.values) if spec.values else sorted({p for v in self.values[name] for p in v.split(SET_JOIN)})
            out += [GroupMatrix(f"{name}{SPLIT_JOIN}{label}", GroupSpec(), m.source, m.chunk_items, m.chunk_cells, split_of=name,
                                split_label=label) for label in labels]
        accounting = {"read": read, **dict(sorted(self.fate.items()))}
        return ItemResult(annotators=list(annotators), groups=out, findings=self.findings, accounting=accounting,
                          items_by_group=items_by_group, spools=list(self.spools.values()))
