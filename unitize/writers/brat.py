"""Write brat standoff: ``annotations/<annotator>/<doc>.ann`` with ``<doc>.txt`` beside it (bratiaa's layout).

One ``.ann`` per annotator and document (an annotator who marked nothing gets an empty one),
the raw text copied byte for byte beside each. ``T`` lines hold the spans, the label as the
type, discontinuous fragments joined with ``;``; offsets are code points of the text as the
brat server reads it (universal newlines: ``\\r\\n`` is one character; a BOM is character 0).
A corpus read from brat keeps its ids and writes back its ``A``, ``N``, ``R``, ``E``, ``#`` and
``*`` lines whose targets are written. brat holds one layer (the study's ``layer``) and types
without spaces; spans without a label have no type and are reported.

Beside the documents, ``annotations/annotation.conf`` declares the entity types, relations, events and
attributes written (brat shows no type it was not told of) and ``annotations/visual.conf`` gives each entity
type its own colour; a rerun keeps either one when you edited it (:class:`~unitize.output.OutputDir`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.brat import TEXT
from ..model import Corpus, Span
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import Texts, by_submission, colour, encodings
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
    submissions = by_submission(corpus, held.spans)
    for (annotator, doc), elements in submissions.items():
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
    _configuration(target, written, submissions.values())
    written.study = {"format": "brat", "annotations": "annotations", **encodings(corpus, utf8_first=True), "layer": held.layer or "Entity"}
    return written


#: the configuration files beside the documents, kept by a rerun when the user edited them
CONFIGURATION = ("annotations/annotation.conf", "annotations/visual.conf")
def _configuration(target: OutputDir, written: Written, submissions: Any) -> None:
    """``annotation.conf`` and ``visual.conf`` for the types, relations, events and attributes written."""
    entities: set[str] = set()
    relations: set[str] = set()
    events: dict[str, set[str]] = {}
    attributes: dict[str, set[str]] = {}
    for elements in submissions:
        for frags in elements:
            if frags[0].label:
                entities.add(frags[0].label)
            attrs = frags[0].attrs
            for name, value in (attrs.get("attributes") or {}).items():
                attributes.setdefault(name, set()).update(() if value is True else {str(value)})
            for line in attrs.get("relations") or ():
                relations.update(line.split("\t")[1].split()[:1] if line.count("\t") else ())
            for line in attrs.get("events") or ():
                fields = line.split("\t")[1].split() if line.count("\t") else []
                if fields:
                    events.setdefault(fields[0].split(":")[0], set()).update(f.split(":")[0].rstrip("0123456789") for f in fields[1:])
    entity_types = sorted(entities - set(events))
    lines = ["# the types unitize wrote; edit freely: a rerun of unitize keeps your version", "", "[entities]", "", *entity_types, "",
             "[relations]", "", *(f"{r}\tArg1:<ENTITY>, Arg2:<ENTITY>" for r in sorted(relations)), "", "[events]", "",
             *(f"{e}\t" + ", ".join(f"{role}*:<ENTITY>" for role in sorted(roles)) if roles else e for e, roles in sorted(events.items())),
             "", "[attributes]", "",
             *(f"{a}\tArg:<ENTITY>" + (f", Value:{'|'.join(sorted(v))}" if v else "") for a, v in sorted(attributes.items()))]
    visual = ["# a colour per entity type; edit freely: a rerun of unitize keeps your version", "", "[labels]", "", "[drawing]", "",
              *(f"{t}\tbgColor:{colour(k)}" for k, t in enumerate(entity_types)), "",
              "SPAN_DEFAULT\tfgColor:black, bgColor:lightgreen, borderColor:darken",
              "ARC_DEFAULT\tcolor:black, arrowHead:triangle-5"]
    for relative, text in zip(CONFIGURATION, (lines, visual)):
        target.file(relative).write_text("\n".join(text) + "\n", encoding="utf-8", newline="\n")
        target.record(relative, None)
        written.add_file("configuration")


TARGET = Target("brat", "brat standoff: <annotator>/<doc>.ann with the raw <doc>.txt beside it, annotation.conf and visual.conf", write, TRAITS,
                reads_as="brat", editable=CONFIGURATION)
