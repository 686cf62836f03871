"""Write span tables (CSV or Parquet): ``texts``, ``roster`` and ``spans``, the relational shape of crowd exports.

In ``annotations/``: ``texts.<ext>`` has ``doc_id, text`` (the document's own text, every character kept);
``roster.<ext>`` one row per annotator and document they annotated (``key, doc_id, annotator``),
so an annotator who marked nothing in a document is *not annotated* there, not missing;
``spans.<ext>`` one row per span (``key, label, begin, end``, code points, end exclusive).
Option ``table_format``: ``csv`` (default) or ``parquet``. A span table holds one layer, no
discontinuous spans, and labels without surrounding spaces (the reader trims cells).
"""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..adapters.span_table import TEXT
from ..cells import may_change, row
from ..config import Option
from ..model import Corpus
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import Texts, by_submission
from .holds import holdable

TRAITS = WriterTraits(one_layer=True, discontinuous=False, label=r"(?s)\S(?:.*\S)?", text="embedded")
TABLE_FORMATS = ("csv", "parquet")
_TYPES = {"doc_id": pa.string(), "text": pa.string(), "key": pa.string(), "annotator": pa.string(), "label": pa.string(),
          "begin": pa.int64(), "end": pa.int64()}


def write_table(target: OutputDir, relative: str, columns: dict[str, list[Any]], types: dict[str, pa.DataType]) -> bool:
    """One table as CSV (UTF-8, a header, quoted where needed; cells a spreadsheet would run neutralised,
    :mod:`unitize.cells`) or Parquet, by ``relative``'s suffix; recorded. Whether a cell was neutralised (the
    study that reads it back then says ``spreadsheet_safe = true``)."""
    changed = False
    if relative.endswith(".parquet"):
        table = pa.table({name: pa.array(values, type=types[name]) for name, values in columns.items()})
        pq.write_table(table, target.file(relative))
        rows = table.num_rows
    else:
        buffer = io.StringIO(newline="")
        out = csv.writer(buffer, lineterminator="\n")
        rows = -1  # the header is a row too
        for values in itertools.chain([list(columns)], zip(*columns.values())):
            if may_change(values):
                safe = row(values)
                changed = changed or safe != list(values)
                values = safe
            out.writerow(values)
            rows += 1
        target.file(relative).write_bytes(buffer.getvalue().encode("utf-8"))
    target.record(relative, rows)
    return changed


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any], *, table_format: str = "csv") -> Written:
    """Write the corpus as texts, roster and spans tables and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "span-table", preferred_layers=source.get("layers", ()))
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    docs: dict[str, str] = {}
    roster: dict[str, list[Any]] = {"key": [], "doc_id": [], "annotator": []}
    spans: dict[str, list[Any]] = {"key": [], "label": [], "begin": [], "end": []}
    for (annotator, doc), elements in by_submission(corpus, held.spans).items():
        view = texts.get(doc)
        if view is None:
            continue
        docs[doc] = view.text
        key = f"k{len(roster['key']) + 1}"
        roster["key"].append(key)
        roster["doc_id"].append(doc)
        roster["annotator"].append(annotator)
        offsets = view.convert(np.asarray([[f[0].begin, f[0].end] for f in elements], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
        for (b, e), frags in zip(offsets, elements):
            spans["key"].append(key)
            spans["label"].append(frags[0].label)
            spans["begin"].append(b)
            spans["end"].append(e)
    ext = table_format
    changed = [write_table(target, f"annotations/texts.{ext}", {"doc_id": list(docs), "text": list(docs.values())}, _TYPES),
               write_table(target, f"annotations/roster.{ext}", roster, _TYPES),
               write_table(target, f"annotations/spans.{ext}", spans, _TYPES)]
    written.files["tables"] = 3
    written.spans = written.relations = len(spans["key"])
    written.study = {"format": "span-table", "annotations": f"annotations/spans.{ext}", "texts": f"annotations/texts.{ext}",
                     "roster": f"annotations/roster.{ext}",
                     "layer": held.layer or "span", **({"spreadsheet_safe": True} if any(changed) else {})}
    if not corpus.assigned:
        written.unitize["assignment"] = source.get("assignment_in_effect", "all")
    return written


TARGET = Target(
    "span-table", "span tables: texts, roster and spans as CSV or Parquet (crowd exports)", write, TRAITS, reads_as="span-table",
    options={"table_format": Option("str", "csv", "csv or parquet", choices=TABLE_FORMATS)},
)
