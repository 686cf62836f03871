"""Write quote records (JSONL), one file per annotator: ``annotations/<annotator>.jsonl``.

One record per document the annotator annotated — ``{"doc", "annotator", "text", "spans": [{"start", "end",
"label", "quote"}, …]}`` — also for a document they marked nothing in (``"spans": []``). Every span is
written with its offsets (code points, end exclusive), which the reader takes as given rather than
locating the quote, so a round trip places each span where it was; ``quote`` is the text it covers, for
people and for tools that locate quotes. The text is the document's own, line breaks as they are. Quote
records hold one layer and no discontinuous spans (reported).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.quotes import TEXT
from ..model import Corpus
from ..output import OutputDir
from ..traits import WriterTraits
from . import Target, Written
from .common import Texts, bad_annotator, by_submission
from .holds import holdable

TRAITS = WriterTraits(one_layer=True, discontinuous=False, text="embedded")


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as quote records, one JSONL file per annotator, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "quotes", preferred_layers=source.get("layers", ()))
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    lines: dict[str, list[str]] = defaultdict(list)
    for (annotator, doc), elements in by_submission(corpus, held.spans).items():
        view = texts.get(doc)
        if view is None or bad_annotator(written, annotator, doc):
            continue
        offsets = view.convert(np.asarray([[f[0].begin, f[0].end] for f in elements], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
        spans = [{"start": b, "end": e, "label": f[0].label, "quote": view.text[b:e]} for (b, e), f in zip(offsets, elements)]
        lines[annotator].append(json.dumps({"doc": doc, "annotator": annotator, "text": view.text, "spans": spans}, ensure_ascii=False))
        written.spans += len(spans)
        written.relations += len(spans)
    for annotator, records in sorted(lines.items()):
        name = f"annotations/{annotator}.jsonl"
        target.file(name).write_text("".join(line + "\n" for line in records), encoding="utf-8", newline="\n")
        target.record(name, len(records))
        written.add_file("annotations")
    written.study = {"format": "quotes", "annotations": "annotations", "layer": held.layer or "Entity"}
    return written


TARGET = Target("quotes", "quote records (JSONL), one <annotator>.jsonl: per document its text and spans with offsets", write, TRAITS,
                reads_as="quotes")
