"""The item kind of run: a corpus of flat labels → :class:`ItemsUnitized` (item matrices).

:func:`unitize_items` builds the matrices of a corpus of
:class:`~unitize.model.ItemLabel` records (:mod:`unitize.items`); the writer
puts them in ``units/items/`` (wide) and/or ``units/items-long/`` (long).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pyarrow as pa

from .config import ConfigError, Settings
from .findings import ERROR, count_by_severity, sort_key
from .items import NOT_APPLICABLE, ItemOptions, ItemResult, build, item_key, long_table, parse_options, wide_table
from .model import Corpus, Finding
from .schema import FORMAT_VERSION, items_schema

#: column names of the wide layout an annotator may not take
RESERVED = {"group", "item"}
#: output dataset of each layout
DATASETS = {"wide": "items", "long": "items-long"}


@dataclass
class ItemsUnitized:
    """A corpus of flat labels turned into item matrices."""

    settings: Settings
    corpus: Corpus
    options: ItemOptions
    result: ItemResult
    findings: list[Finding]
    accounting: dict[str, Any]
    kind: str = "items"

    @property
    def annotators(self) -> list[str]:
        return self.result.annotators

    @property
    def groups(self) -> list[str]:
        return [m.name for m in self.result.groups]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    def metadata(self, layout: str) -> dict[str, Any]:
        """The ``unitize`` schema metadata of a layout's matrix (see schemas/items.arrow.json)."""
        groups = self.result.groups
        meta: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "kind": "items",
            "layout": layout,
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

    def schema(self, layout: str) -> pa.Schema:
        return items_schema(layout, self.annotators, self.metadata(layout))

    def tables(self, layout: str) -> Iterator[pa.Table]:
        """One table per group, in row order."""
        schema = self.schema(layout)
        make = wide_table if layout == "wide" else long_table
        for m in self.result.groups:
            yield make(m, self.annotators, schema)

    def table(self, layout: str = "wide") -> pa.Table:
        """The whole item matrix of a layout as one table."""
        return pa.concat_tables([t for t in self.tables(layout)]) if self.result.groups else self.schema(layout).empty_table()

    def datasets(self) -> list[tuple[str, pa.Schema, Callable[[], Iterator[pa.Table]]]]:
        """The ``units/`` datasets of the run: (name, schema, its tables), one per layout."""
        return [(DATASETS[layout], self.schema(layout), lambda layout=layout: self.tables(layout)) for layout in self.options.layouts]

    def summary(self) -> dict[str, Any]:
        by_code = Counter(f.code for f in self.findings)
        return {
            "kind": "items",
            "groups": len(self.groups),
            "annotators": self.annotators,
            "items": self.result.items_by_group,
            "findings": count_by_severity(self.findings),
            "findings_by_code": dict(sorted(by_code.items())),
        }


def unitize_items(corpus: Corpus, settings: Settings) -> ItemsUnitized:
    """Item matrices of a corpus of flat labels."""
    options = parse_options(settings.items)
    annotators = list(settings.input.get("annotators") or sorted({r.annotator for r in corpus.items}, key=item_key))
    clash = RESERVED & set(annotators)
    if clash and "wide" in options.layouts:
        raise ConfigError(
            f"annotator name(s) {', '.join(sorted(clash))} clash with the wide item matrix's columns; use layouts = [\"long\"]"
        )
    if "" in annotators:
        raise ConfigError("a record has an empty annotator; check [input] annotator (the annotator column)")
    result = build(corpus.items, annotators, options)
    findings = sorted(corpus.findings + result.findings, key=sort_key)
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
    return ItemsUnitized(settings=settings, corpus=corpus, options=options, result=result, findings=findings, accounting=accounting)
