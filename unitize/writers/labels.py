"""Write flat labels as one long table: ``annotations/labels.<csv|parquet>``, a row per (item, annotator).

Columns ``item``, ``annotator`` (``@item``/``@annotator`` when a group takes the name), then one
column per group holding the annotator's label (an empty cell: the annotator's record has no
label). Values are written as text, exactly as read. A long table gives every group of a row a
cell, so an annotator who labelled an item in one group but never saw it in another (possible in
``lists`` and ``dict`` inputs) reads back as *not labelled* there: each such cell is reported.
Option ``table_format``: ``csv`` (default) or ``parquet``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from ..config import Option
from ..model import Corpus
from ..model.findings import finding
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .span_table import TABLE_FORMATS, write_table

TRAITS = WriterTraits(kind="items", text="embedded")


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any], *, table_format: str = "csv") -> Written:
    """Write the corpus's flat labels as a long table and a study.toml."""
    written = Written()
    groups = list(dict.fromkeys(label.group for label in corpus.items))
    item_col = "@item" if "item" in groups else "item"
    annotator_col = "@annotator" if "annotator" in groups else "annotator"
    rows: dict[tuple[str, str], dict[str, str | None]] = {}
    where: dict[tuple[str, str], tuple[str, int | None]] = {}
    for label in corpus.items:
        key = (label.item, label.annotator)
        rows.setdefault(key, {})[label.group] = label.label
        where.setdefault(key, (label.source, label.line))
    columns: dict[str, list[Any]] = {item_col: [], annotator_col: [], **{g: [] for g in groups}}
    for (item, annotator), cells in rows.items():
        columns[item_col].append(item)
        columns[annotator_col].append(annotator)
        for group in groups:
            columns[group].append(cells.get(group))
            if group not in cells:
                file, line = where[(item, annotator)]
                written.findings.append(
                    finding("not-convertible", f"{annotator} labelled item {item} in other groups but never saw it in {group}; "
                            "a long table has a cell for every group", "written as an empty cell: it reads back as not labelled",
                            file=file or None, record=None if line is None else str(line), doc=item, group=group, annotator=annotator)
                )
    name = f"annotations/labels.{table_format}"
    changed = write_table(target, name, columns, {c: pa.string() for c in columns})
    written.add_file("annotations")
    written.items = len(corpus.items)
    written.study = {"format": "labels", "annotations": name, "shape": "long", "item": item_col, "annotator": annotator_col, "labels": groups,
                     **({"spreadsheet_safe": True} if changed else {})}
    return written


TARGET = Target(
    "labels", "flat labels as a long table (item, annotator, a column per group), CSV or Parquet", write, TRAITS, reads_as="labels",
    options={"table_format": Option("str", "csv", "csv or parquet", choices=TABLE_FORMATS)},
)
