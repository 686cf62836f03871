"""Write brat standoff: ``annotations/<annotator>/<doc>.ann`` with ``<doc>.txt`` beside it (bratiaa's layout).

One ``.ann`` per annotator and document (an annotator who marked nothing gets an empty one),
the raw text copied byte for byte beside each. ``T`` lines hold the spans, the label as the
type, discontinuous fragments joined with ``;``; offsets are code points of the text as the
brat server reads it (universal newlines: ``\\r\\n`` is one character; a BOM is character 0).
A corpus read from brat keeps its ids and writes back its ``A``, ``N``, ``R``, ``E``, ``#`` and
``*`` lines whose targets are written. brat holds one layer (the study's ``layer``) and types
without spaces; spans without a label have no type and are reported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.brat import TEXT
from ..model import Corpus, Span
from ..output import OutputDir
from ..traits import WriterTraits
from . import Target, Written
from .common import Texts, by_submission, encodings
from .holds import holdable

TRAITS = WriterTraits(one_layer=True, unlabelled=False, label=r"\S+", text="raw")
_T_ID = re.compile(r"^T[0-9]+$")
_REFS = re.compile(r"\bT[0-9]+\b")
_STORED_LINES = ("notes", "normalizations", "relations", "events", "equivalences")


def _t_line(ident: str, frags: list[Span], offsets: list[list[int]], text: str) -> str:
    where = ";".join(f"{b} {e}" for b, e in offsets)
    stored = " ".join(text[b:e] for b, e in offsets).replace("\r", " ").replace("\n", " ")
    return f"{ident}\t{frags[0].label} {where}\t{stored}"


def _other_lines(elements: list[list[Span]], ids: list[str], keep_ids: bool) -> list[str]:
    """The A lines of every element, and (ids kept) the source's other lines whose targets are all written."""
    lines: list[str] = []
    for frags, ident in zip(elements, ids):
        for name, value in sorted((frags[0].attrs.get("attributes") or {}).items()):
            lines.append(f"A{len(lines) + 1}\t{name} {ident}" + ("" if value is True else f" {value}"))
    if not keep_ids:
        return lines
    written = set(ids)
    seen: set[str] = set()
    for frags in elements:
        for key in _STORED_LINES:
            for line in frags[0].attrs.get(key) or ():
                if isinstance(line, str) and line not in seen and set(_REFS.findall(line.partition("\t")[2])) <= written:
                    seen.add(line)
                    lines.append(line)
    return lines


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as a brat project (``.ann`` + ``.txt`` per annotator and document) and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "brat", preferred_layers=source.get("layers", ()))
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT, copy=False, nested=True)
    for (annotator, doc), elements in by_submission(corpus, held.spans).items():
        view = texts.get(doc)
        if view is None:
            continue
        records = [frags[0].record for frags in elements]
        keep_ids = corpus.format == "brat" and all(_T_ID.match(r) for r in records) and len(set(records)) == len(records)
        ids = records if keep_ids else [f"T{i + 1}" for i in range(len(elements))]
        lines = []
        for frags, ident in zip(elements, ids):
            offsets = view.convert(np.asarray([[s.begin, s.end] for s in frags]).ravel()).reshape(-1, 2).tolist()
            lines.append(_t_line(ident, frags, offsets, view.text))
            written.spans += len(frags)
        lines += _other_lines(elements, ids, keep_ids)
        stem = f"annotations/{written.names('annotators', annotator)}/{written.names('documents', doc, nested=True)}"
        target.file(f"{stem}.txt").write_bytes(view.raw)
        target.record(f"{stem}.txt", None)
        target.file(f"{stem}.ann").write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="\n")
        target.record(f"{stem}.ann", len(elements))
        written.add_file("annotations")
        written.add_file("texts")
        written.relations += len(elements)
    written.study = {"format": "brat", "annotations": "annotations", **encodings(corpus, utf8_first=True), "layer": held.layer or "Entity"}
    return written


TARGET = Target("brat", "brat standoff: <annotator>/<doc>.ann with the raw <doc>.txt beside it", write, TRAITS, reads_as="brat")
