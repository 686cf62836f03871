"""Write doccano JSONL, one file per user: ``annotations/<user>.jsonl`` (the per-user export ZIP's members).

One record per document the user annotated — ``{"id", "text", "label": [[start, end, "LABEL"], …]}``,
the current sequence-labelling export shape, spans sorted — also for a document the user marked
nothing in (``"label": []``). The text is the document's own, every character kept; offsets are
code points (current doccano). doccano holds one layer and no discontinuous spans (reported);
overlapping spans are legal there.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.doccano import TEXT
from ..model import Corpus
from ..output import OutputDir
from ..traits import WriterTraits
from . import Target, Written
from .common import Texts, bad_annotator, by_submission, numeric_id
from .holds import holdable

TRAITS = WriterTraits(one_layer=True, discontinuous=False, text="embedded")


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as doccano JSONL files, one per user, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "doccano", preferred_layers=source.get("layers", ()))
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    lines: dict[str, list[str]] = defaultdict(list)
    for (annotator, doc), elements in by_submission(corpus, held.spans).items():
        view = texts.get(doc)
        if view is None or bad_annotator(written, annotator, doc):
            continue
        offsets = view.convert(np.asarray([[f[0].begin, f[0].end] for f in elements], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
        labels = [[b, e, f[0].label] for (b, e), f in zip(offsets, elements)]
        lines[annotator].append(json.dumps({"id": numeric_id(doc), "text": view.text, "label": labels}, ensure_ascii=False))
        written.spans += len(labels)
        written.relations += len(labels)
    for annotator, records in sorted(lines.items()):
        name = f"annotations/{annotator}.jsonl"
        target.file(name).write_text("".join(line + "\n" for line in records), encoding="utf-8", newline="\n")
        target.record(name, len(records))
        written.add_file("annotations")
    written.study = {"format": "doccano", "annotations": "annotations", "layer": held.layer or "Entity"}
    return written


TARGET = Target("doccano", "doccano JSONL, one <user>.jsonl per annotator (id, text, label tuples)", write, TRAITS, reads_as="doccano")
