"""The item kind of run: a corpus of flat labels → :class:`ItemsUnitized` (item matrices).

:func:`unitize_items` builds the matrices of a corpus of
:class:`~unitize.model.ItemLabel` records (:mod:`unitize.items`); the writer
puts them in ``units/setting=items/`` (wide) and/or ``long/setting=items-long/`` (long); ``auto`` picks one by
the shape of the data (:func:`unitize.layouts.choose_items`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .. import layouts
from ..config import ConfigError, Settings
from ..layouts import WIDE, ItemCells, Layout
from ..layouts.item_cells import concat
from ..model import Corpus, Finding
from ..model.item_records import ItemRecords
from ..model.report_rows import Findings
from ..output.parts import PartSpec, PartTasks, Slice, item_slices
from ..schema import FORMAT_VERSION
from . import NOT_APPLICABLE, GroupMatrix, ItemOptions, ItemResult, build, item_key, parse_options

#: column names of a columnar item matrix an annotator may not take
RESERVED = {"group", "item"}


@dataclass
class ItemsUnitized:
    """A corpus of flat labels turned into item matrices."""

    settings: Settings
    corpus: Corpus
    options: ItemOptions
    result: ItemResult
    #: the report's rows, sorted and packed (:mod:`unitize.model.report_rows`)
    findings: Findings
    accounting: dict[str, Any]
    item_layouts: list[Layout]  # the layouts the item matrices are written in ([items] layouts, auto decided)

    @property
    def annotators(self) -> list[str]:
        return self.result.annotators

    @property
    def groups(self) -> list[str]:
        return [m.name for m in self.result.groups]

    @property
    def errors(self) -> list[Finding]:
        return self.findings.errors()

    def metadata(self, layout: Layout) -> dict[str, Any]:
        """The ``unitize`` schema metadata of a layout's matrix (see schemas/items.arrow.json)."""
        groups = self.result.groups
        meta: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "kind": "items",
            "layout": layout.name,
            "annotators": self.annotators,
            "groups": [m.name for m in groups],
            "levels": {m.name: m.spec.level for m in groups},
            "not_applicable": NOT_APPLICABLE,
            "numbers": {m.name: m.numbers for m in groups if m.numbers is not None},
            "order": {m.name: m.order for m in groups if m.order is not None},
            "multi": {m.name: "set" for m in groups if m.spec.multi == "set"},
            "split_of": {m.name: m.split_of for m in groups if m.split_of},
            "applies_when": {
                m.name: {"level": m.spec.applies_when[0], "values": list(m.spec.applies_when[1]), "reach": m.spec.reach}
                for m in groups
                if m.spec.applies_when
            },
            "items": self.result.items_by_group,
            "complete": self.options.complete,
            "settings": self.settings.resolved(with_output=False),
        }
        return meta

    def schema(self, layout: Layout) -> pa.Schema:
        return layout.items_schema(self.annotators, self.metadata(layout))

    def tables(self, layout: Layout) -> Iterator[pa.Table]:
        """One table per group, in row order (a group's rows held at once)."""
        schema = self.schema(layout)
        for m in self.result.groups:
            yield layout.item_table(m.name, m.cells(), self.annotators, schema)

    def table(self, layout: Layout | str = WIDE) -> pa.Table:
        """The whole item matrix of a layout (or a layout's name) as one table."""
        layout = layouts.get(layout) if isinstance(layout, str) else layout
        return pa.concat_tables(list(self.tables(layout))) if self.result.groups else self.schema(layout).empty_table()

    # -- what the writer takes (unitize.output.RunResult) --

    def part_tasks(self, staging: Path) -> PartTasks[PartSpec]:
        """One task per part of at most :data:`~unitize.output.parts.PART_ROWS` consecutive rows of each dataset;
        a task reads its rows when it runs."""
        chosen = {layout.items_name(): layout for layout in self.item_layouts}
        specs: list[PartSpec] = [(name, self.schema(layout)) for name, layout in chosen.items()]
        rows = [(name, [_group_rows(layout, m) for m in self.result.groups]) for name, layout in chosen.items()]
        return PartTasks(str(staging), specs, [partial(ItemPart, slices, chosen, self.result.groups, self.annotators)
                                               for slices in item_slices(rows)])

    def dense_rows(self, written: dict[str, int]) -> dict[str, int]:
        """Item matrices are written whole: every row is a dense row."""
        return dict(written)

    def side_tables(self) -> Iterator[tuple[str, pa.Table, None]]:
        """Flat labels have no segments, documents or tokens."""
        return iter(())

    def nothing_kept(self) -> str | None:
        """What was read, when no label reached the matrices (the run then writes nothing); else None."""
        if self.accounting["labels"].get("labelled", 0):
            return None
        return f"none of the {self.accounting['labels']['read']:,} label records holds a label that was kept"

    def summary(self) -> dict[str, Any]:
        return {
            "kind": "items",
            "groups": len(self.groups),
            "annotators": self.annotators,
            "items": self.result.items_by_group,
            "findings": self.findings.by_severity(),
            "findings_by_code": self.findings.by_code(),
        }


def _group_rows(layout: Layout, m: GroupMatrix) -> int:
    return m.n_items if layout.columnar else m.n_cells


@dataclass
class ItemPart:
    """The data of one part of the item matrices: its slices (dataset, group, rows), read from the groups'
    spooled rows when the part is written."""

    slices: list[Slice]
    layouts: dict[str, Layout]  # dataset name -> its layout
    groups: list[GroupMatrix]
    annotators: list[str]

    def tables_of(self, specs: Sequence[PartSpec]) -> Iterable[tuple[str, pa.Table]]:
        for name, schema, *_ in specs:
            layout = self.layouts[name]
            for dataset, group, start, stop in self.slices:
                if dataset == name:
                    yield name, layout.item_table(self.groups[group].name, self._cells(layout, self.groups[group], start, stop),
                                                  self.annotators, schema)

    @staticmethod
    def _cells(layout: Layout, m: GroupMatrix, start: int, stop: int) -> ItemCells:
        """Rows ``start`` to ``stop`` of a group as ``layout`` counts rows (items, or cells)."""
        sizes = m.chunk_items if layout.columnar else m.chunk_cells
        bounds = np.cumsum([0, *sizes])
        first = int(np.searchsorted(bounds, start, side="right")) - 1
        parts = []
        for index in range(first, len(sizes)):
            if bounds[index] >= stop:
                break
            cells = m.chunk(index)
            lo, hi = max(start - bounds[index], 0), min(stop, bounds[index + 1]) - bounds[index]
            parts.append(cells.slice_items(lo, hi) if layout.columnar else cells.slice_cells(lo, hi))
        return concat(parts)


def unitize_items(corpus: Corpus, settings: Settings) -> ItemsUnitized:
    """Item matrices of a corpus of flat labels."""
    options = parse_options(settings.items)
    found = corpus.items.annotators if isinstance(corpus.items, ItemRecords) else {r.annotator for r in corpus.items}
    annotators = list(settings.input.get("annotators") or sorted(found, key=item_key))
    clash = RESERVED & set(annotators)
    if clash and any(name != layouts.AUTO and layouts.get(name).columnar for name in options.layouts):
        raise ConfigError(
            f"annotator name(s) {', '.join(sorted(clash))} clash with the wide item matrix's columns; use layouts = [\"long\"]"
        )
    if "" in annotators:
        raise ConfigError("a record has an empty annotator; check [input] annotator (the annotator column)")
    result = build(corpus.items, annotators, options)
    items = sum(m.n_items for m in result.groups)
    chosen = layouts.choose_items(
        options.layouts, annotators=len(annotators), items=items, cells=sum(m.n_cells for m in result.groups), clash=bool(clash),
    )
    layouts.refuse_too_wide_items(chosen, annotators=len(annotators), items=items)
    findings = Findings.of(corpus.findings + result.findings)
    accounting = {
        "files": {
            "read": len(corpus.inputs),
            "unreadable": sum(1 for f in corpus.findings if f.code == "file-unreadable"),
        },
        "records": {
            "unreadable": sum(1 for f in corpus.findings if f.code == "record-malformed"),
            "labels_not_selected": corpus.skipped_by_selection,
        },
        "labels": result.accounting,
    }
    too_long = sum(1 for f in corpus.findings if f.code == "label-too-long")
    if too_long:  # (counted among not_labelled in "labels": the reader left those cells null)
        accounting["records"]["labels_too_long"] = too_long
    return ItemsUnitized(settings=settings, corpus=corpus, options=options, result=result, findings=findings, accounting=accounting,
                         item_layouts=chosen)
