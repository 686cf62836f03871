"""Write a multi-annotator span data set that Hugging Face ``datasets`` loads: ``annotations/data/train.parquet``.

A row per document: ``id``, ``text`` (the document's own, every character kept) and
``annotations``, per annotator of the document ``{"annotator", "spans": [{"id", "group", "layer",
"label", "start", "end"}, …]}`` (an empty list: marked nothing). Offsets are code points of the text
(Python string indices), end exclusive; the fragments of a discontinuous span share its ``id``.
``datasets.load_dataset("parquet", data_files="annotations/data/train.parquet")`` reads it, and
so does format ``huggingface`` (both checked in the tests). Option ``file_format``: ``parquet`` (default) or
``jsonl``; the rows are written :data:`BATCH` documents at a time (Parquet row groups), so memory holds a batch. It
holds every span record (discontinuous, overlapping, empty, unlabelled, in any group), but not
the attributes of discourse relations (type, senses).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..adapters.huggingface import TEXT
from ..config import Option
from ..model import Corpus, Span
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import Texts
from .holds import holdable

TRAITS = WriterTraits(groups=True, text="embedded")
FILE_FORMATS = ("parquet", "jsonl")
SPAN = pa.struct([("id", pa.string()), ("group", pa.string()), ("layer", pa.string()), ("label", pa.string()),
                  ("start", pa.int64()), ("end", pa.int64())])
SCHEMA = pa.schema([("id", pa.string()), ("text", pa.string()),
                    ("annotations", pa.list_(pa.struct([("annotator", pa.string()), ("spans", pa.list_(SPAN))])))])


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any], *, file_format: str = "parquet") -> Written:
    """Write the corpus as one Parquet (or JSON-lines) file of a row per document, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "huggingface")
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    per_doc: dict[str, dict[str, list[list[Span]]]] = defaultdict(dict)
    for sub in sorted(corpus.submissions, key=lambda s: (s.doc_id, s.annotator)):
        per_doc[sub.doc_id].setdefault(sub.annotator, [])
    for frags in held.elements.values():
        per_doc[frags[0].doc_id].setdefault(frags[0].annotator, []).append(frags)
    name = f"annotations/data/train.{file_format}"
    path = target.file(name)
    written_rows = 0
    with _Rows(path, file_format) as out:
        for doc in sorted(per_doc):
            view = texts.get(doc)
            if view is None:
                continue
            found = {a: sorted(elements, key=lambda f: (f[0].begin, f[-1].end, f[0].record)) for a, elements in per_doc[doc].items()}
            every = [s for elements in found.values() for frags in elements for s in frags]
            pairs = iter(view.convert(np.asarray([[s.begin, s.end] for s in every], dtype=np.int64).ravel()).reshape(-1, 2).tolist())
            annotations = []
            for annotator, elements in found.items():
                spans = [{"id": s.record, "group": s.group, "layer": s.layer, "label": s.label, "start": b, "end": e}
                         for frags in elements for s, (b, e) in zip(frags, pairs)]
                written.relations += len(elements)
                written.spans += len(spans)
                annotations.append({"annotator": annotator, "spans": spans})
            out.add({"id": doc, "text": view.text, "annotations": annotations})
            written_rows += 1
    target.record(name, written_rows)
    written.add_file("annotations")
    written.study = {"format": "huggingface", "annotations": "annotations/data"}
    return written


#: documents per Parquet row group (and per batch of JSON lines): memory holds one batch of rows, not the data set
BATCH = 2_000


class _Rows:
    """The data set's file, written a batch of rows at a time: Parquet row groups, or JSON lines."""

    def __init__(self, path: Path, file_format: str) -> None:
        self.rows: list[dict[str, Any]] = []
        self.parquet = pq.ParquetWriter(path, SCHEMA) if file_format == "parquet" else None
        self.lines: TextIO | None = None if self.parquet is not None else path.open("w", encoding="utf-8", newline="\n")

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if len(self.rows) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if self.parquet is not None:
            self.parquet.write_table(pa.Table.from_pylist(self.rows, schema=SCHEMA))
        elif self.lines is not None:
            self.lines.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in self.rows))
        self.rows = []

    def __enter__(self) -> _Rows:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.rows or (self.parquet is not None and exc[0] is None):
            self.flush()  # the last batch (a Parquet file of no row: its schema)
        if self.parquet is not None:
            self.parquet.close()
        if self.lines is not None:
            self.lines.close()


TARGET = Target(
    "huggingface", "a Hugging Face-loadable data set: Parquet (or JSON lines), a row per document, text + per-annotator span lists", write, TRAITS,
    reads_as="huggingface", options={"file_format": Option("str", "parquet", "parquet or jsonl", choices=FILE_FORMATS)},
)
