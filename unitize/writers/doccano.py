"""Write doccano JSONL, one file per user: ``annotations/<user>.jsonl`` (the per-user export ZIP's members).

One record per document the user annotated — ``{"id", "text", "label": [[start, end, "LABEL"], …]}``,
the current sequence-labelling export shape, spans sorted — also for a document the user marked
nothing in (``"label": []``). The text is the document's own, every character kept; offsets are
code points (current doccano). doccano holds one layer and no discontinuous spans (reported);
overlapping spans are legal there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..adapters.doccano import TEXT
from ..model import Corpus, Span
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import numeric_id, write_jsonl_per_annotator
from .holds import holdable
from .offsets import TargetText

TRAITS = WriterTraits(one_layer=True, discontinuous=False, text="embedded")


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as doccano JSONL files, one per user, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "doccano", preferred_layers=source.get("layers", ()))
    written.take(held)

    def record(annotator: str, doc: str, view: TargetText, offsets: list[list[int]], found: list[list[Span]]) -> tuple[dict[str, Any], int]:
        labels = [[b, e, f[0].label] for (b, e), f in zip(offsets, found)]
        return {"id": numeric_id(doc), "text": view.text, "label": labels}, len(labels)

    write_jsonl_per_annotator(corpus, target, base, written, held.spans, TEXT, record)
    written.study = {"format": "doccano", "annotations": "annotations", "layer": held.layer or "Entity"}
    return written


TARGET = Target("doccano", "doccano JSONL, one <user>.jsonl per annotator (id, text, label tuples)", write, TRAITS, reads_as="doccano")
