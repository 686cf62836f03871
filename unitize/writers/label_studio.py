"""Write a Label Studio JSON export: ``annotations/export.json``, one task per document.

A task is ``{"id", "data": {"text"}, "annotations": [...]}`` with one annotation per annotator
(``completed_by``: the annotator's number, or ``{"email": name}``), its ``result`` one
``labels`` region per span: ``from_name`` is the layer, ``value`` holds ``start``, ``end``, the
``text`` slice and the label. The text is the document's own; offsets are code points (current
Label Studio). Label Studio holds every layer and overlapping regions, but no discontinuous spans
(reported). Beside it, ``annotations/label_config.xml`` is the project's labeling configuration: a ``Labels``
tag per layer (the regions' ``from_name``) with a ``Label`` per label written, each its own colour, over a
``Text`` tag ``text`` — what a Label Studio project needs to show the export; a rerun keeps it when you edited it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.label_studio import TEXT
from ..model import Corpus
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import XML_LABEL, Texts, by_submission, colour, numeric_id, xml_ok
from .holds import holdable, not_held

TRAITS = WriterTraits(discontinuous=False, label=XML_LABEL, text="embedded")  # labels: the labeling configuration is XML


def _completed_by(annotator: str) -> int | dict[str, str]:
    number = numeric_id(annotator)
    return number if isinstance(number, int) else {"email": annotator}


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as one Label Studio JSON export and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "label-studio")
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    tasks: dict[str, dict[str, Any]] = {}
    layers: dict[str, set[str]] = {}  # per layer written: its labels, for the labeling configuration
    for (annotator, doc), elements in by_submission(corpus, held.spans).items():
        view = texts.get(doc)
        if view is None:
            continue
        if not all(xml_ok(frags[0].layer) for frags in elements):
            written.findings += [not_held("label-studio", frags, "its layer name holds characters the labeling configuration (XML 1.0) "
                                          "cannot (control characters)") for frags in elements if not xml_ok(frags[0].layer)]
            elements = [frags for frags in elements if xml_ok(frags[0].layer)]
        task = tasks.setdefault(doc, {"id": numeric_id(doc), "data": {"text": view.text}, "annotations": []})
        offsets = view.convert(np.asarray([[f[0].begin, f[0].end] for f in elements], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
        result = [
            {
                "id": f"r{k + 1}",
                "from_name": frags[0].layer,
                "to_name": "text",
                "type": "labels",
                "value": {"start": b, "end": e, "text": view.text[b:e], "labels": [] if frags[0].label is None else [frags[0].label]},
            }
            for k, ((b, e), frags) in enumerate(zip(offsets, elements))
        ]
        task["annotations"].append({"id": len(task["annotations"]) + 1, "completed_by": _completed_by(annotator), "was_cancelled": False, "result": result})
        for frags in elements:
            layers.setdefault(frags[0].layer, set()).update(() if frags[0].label is None else (frags[0].label,))
        written.spans += len(result)
        written.relations += len(result)
    _label_config(target, written, layers)
    name = "annotations/export.json"
    target.file(name).write_text(json.dumps(list(tasks.values()), ensure_ascii=False, indent=1) + "\n", encoding="utf-8", newline="\n")
    target.record(name, len(tasks))
    written.add_file("annotations")
    written.study = {"format": "label-studio", "annotations": "annotations/export.json"}
    return written


#: the labeling configuration beside the export, kept by a rerun when the user edited it
CONFIG = "annotations/label_config.xml"


def _label_config(target: OutputDir, written: Written, layers: dict[str, set[str]]) -> None:
    """``label_config.xml``: a Labels tag per layer, a Label per label, over the Text tag ``text``."""
    from lxml import etree

    view = etree.Element("View")
    view.append(etree.Comment(" the labels unitize wrote; edit freely: a rerun of unitize keeps your version "))
    k = 0
    for layer, labels in sorted(layers.items()):
        tag = etree.SubElement(view, "Labels", name=layer, toName="text")
        for label in sorted(labels):
            etree.SubElement(tag, "Label", value=label, background=colour(k))
            k += 1
    etree.SubElement(view, "Text", name="text", value="$text")
    target.file(CONFIG).write_bytes(etree.tostring(view, pretty_print=True, encoding="utf-8"))
    target.record(CONFIG, None)
    written.add_file("configuration")


TARGET = Target("label-studio", "Label Studio JSON export: one task per document, one annotation per annotator, and label_config.xml",
                write, TRAITS, reads_as="label-studio", editable=(CONFIG,))
