"""Write a factgenie campaign: ``campaigns/<campaign>/`` (``metadata.json`` and ``files/<annotator>.jsonl``) and the
texts as factgenie's outputs, ``outputs/<dataset>/<split>-<setup_id>.jsonl``.

Copy ``campaigns/<campaign>`` into factgenie's ``campaigns/`` folder and ``outputs/<dataset>`` into its
``data/outputs/``: factgenie lists it as an external campaign (no assignment table) and shows, compares and
scores its annotations. The campaign's ``config`` names the span categories (the labels, sorted, each with a
colour); each annotator is one annotator group (``annotator_id`` its name, ``annotator_group`` its number), one
record per document they annotated — ``annotations`` = ``[{"type", "text", "start"}]``, ``start`` in code points
as factgenie's Python code counts them (``end = start + len(text)``), also for a document they marked nothing in
(``[]``). A document named ``dataset/split/setup_id/example_idx`` (as the factgenie reader names them) keeps
those keys; otherwise every document is an example of dataset ``unitize``, split ``all``, setup ``unitize``,
numbered in document order, its id kept in the output record's ``unitize_doc``. One layer; a span is a
category and its non-empty text, so discontinuous, unlabelled and empty spans are reported, not written.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from slugify import slugify

from ..adapters.factgenie import TEXT, Key
from ..model import Corpus
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import Texts, by_submission, colour
from .holds import holdable

TRAITS = WriterTraits(one_layer=True, discontinuous=False, empty=False, unlabelled=False, text="embedded")
#: the campaign's id and folder
CAMPAIGN = "unitize"


def keys(docs: list[str]) -> tuple[dict[str, Key], bool]:
    """Each document's (dataset, split, setup_id, example_idx), and whether they were made up (ids not factgenie's)."""
    parsed = {}
    for doc in docs:
        parts = doc.split("/")
        if len(parts) != 4 or not parts[3].isdigit() or str(int(parts[3])) != parts[3] or any(slugify(p) != p or not p for p in parts[:3]):
            break
        parsed[doc] = (parts[0], parts[1], parts[2], int(parts[3]))
    else:
        return parsed, False
    return {doc: ("unitize", "all", "unitize", k) for k, doc in enumerate(docs)}, True


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as one factgenie campaign with its outputs, and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "factgenie", preferred_layers=source.get("layers", ()))
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    submissions = {k: v for k, v in by_submission(corpus, held.spans).items() if texts.get(k[1]) is not None}
    docs = sorted({doc for _, doc in submissions})
    key, made_up = keys(docs)
    labels = sorted({str(f[0].label) for found in submissions.values() for f in found})
    types = {label: k for k, label in enumerate(labels)}
    groups = {a: g for g, a in enumerate(sorted({a for a, _ in submissions}))}
    records: dict[str, list[str]] = {a: [] for a in groups}
    for (annotator, doc), found in submissions.items():
        view = texts.get(doc)
        assert view is not None
        offsets = view.convert(np.asarray([[f[0].begin, f[0].end] for f in found], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
        dataset, split, setup, idx = key[doc]
        spans = [{"type": types[str(f[0].label)], "text": view.text[b:e], "start": b} for (b, e), f in zip(offsets, found)]
        records[annotator].append(json.dumps({"dataset": dataset, "split": split, "setup_id": setup, "example_idx": idx, "annotations": spans,
                                              "metadata": {"annotator_id": annotator, "annotator_group": groups[annotator],
                                                           "campaign_id": CAMPAIGN}}, ensure_ascii=False))
        written.spans += len(spans)
        written.relations += len(spans)
    for annotator, lines in records.items():
        _lines(target, written, f"campaigns/{CAMPAIGN}/files/{written.names('annotators', annotator)}.jsonl", lines, "annotations")
    _outputs(target, written, texts, key, made_up)
    _metadata(target, written, labels)
    written.study = {"format": "factgenie", "annotations": f"campaigns/{CAMPAIGN}", "texts": "outputs", "annotators_by": "id",
                     "layer": held.layer or "Entity"}
    return written


def _outputs(target: OutputDir, written: Written, texts: Texts, key: dict[str, Key], made_up: bool) -> None:
    """``outputs/<dataset>/<split>-<setup_id>.jsonl``: every document's text as a generated output."""
    files: dict[str, list[str]] = {}
    for doc, (dataset, split, setup, idx) in sorted(key.items(), key=lambda kv: kv[1]):
        view = texts.get(doc)
        assert view is not None
        record = {"dataset": dataset, "split": split, "setup_id": setup, "example_idx": idx, "output": view.text}
        if made_up:
            record["unitize_doc"] = doc
        files.setdefault(f"outputs/{dataset}/{split}-{setup}.jsonl", []).append(json.dumps(record, ensure_ascii=False))
    for relative, lines in files.items():
        _lines(target, written, relative, lines, "texts")


def _metadata(target: OutputDir, written: Written, labels: list[str]) -> None:
    categories = [{"name": label, "color": colour(k), "description": ""} for k, label in enumerate(labels)]
    # factgenie sorts campaigns by "created"; SOURCE_DATE_EPOCH (reproducible builds) makes the file the same on every run
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch.isdigit() else datetime.now(UTC)
    meta = {"id": CAMPAIGN, "mode": "external", "created": when.strftime("%Y-%m-%d %H:%M:%S"),
            "config": {"annotation_span_categories": categories, "annotation_granularity": "chars", "annotation_overlap_allowed": True},
            "status": "finished"}
    relative = f"campaigns/{CAMPAIGN}/metadata.json"
    target.file(relative).write_text(json.dumps(meta, indent=4, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n")
    target.record(relative, None)
    written.add_file("annotations")


def _lines(target: OutputDir, written: Written, relative: str, lines: list[str], role: str) -> None:
    target.file(relative).write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="\n")
    target.record(relative, len(lines))
    written.add_file(role)


TARGET = Target("factgenie", "a factgenie campaign (metadata.json, files/<annotator>.jsonl) and its outputs (outputs/<dataset>/…)",
                write, TRAITS, reads_as="factgenie")
