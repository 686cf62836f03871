"""Write quote records (JSONL), one file per annotator: ``annotations/<annotator>.jsonl``.

One record per document the annotator annotated — ``{"doc", "annotator", "text", "spans": [{"start", "end",
"label", "quote"}, …]}`` — also for a document they marked nothing in (``"spans": []``). Every span is
written with its offsets (code points, end exclusive), which the reader takes as given rather than
locating the quote, so a round trip places each span where it was; ``quote`` is the text it covers, for
people and for tools that locate quotes. The text is the document's own, line breaks as they are. Quote
records hold one layer and no discontinuous spans (reported).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..adapters.quotes import TEXT
from ..model import Corpus, Span
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import write_jsonl_per_annotator
from .holds import holdable
from .offsets import TargetText

TRAITS = WriterTraits(one_layer=True, discontinuous=False, text="embedded")


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as quote records, one JSONL file per annotator, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "quotes", preferred_layers=source.get("layers", ()))
    written.take(held)

    def record(annotator: str, doc: str, view: TargetText, offsets: list[list[int]], found: list[list[Span]]) -> tuple[dict[str, Any], int]:
        spans = [{"start": b, "end": e, "label": f[0].label, "quote": view.text[b:e]} for (b, e), f in zip(offsets, found)]
        return {"doc": doc, "annotator": annotator, "text": view.text, "spans": spans}, len(spans)

    write_jsonl_per_annotator(corpus, target, base, written, held.spans, TEXT, record)
    written.study = {"format": "quotes", "annotations": "annotations", "layer": held.layer or "Entity"}
    return written


TARGET = Target("quotes", "quote records (JSONL), one <annotator>.jsonl: per document its text and spans with offsets", write, TRAITS,
                reads_as="quotes")
