"""Write PDTB-3 pipe files: one file per (annotator, document), 34 fields a relation.

Files go to ``annotations/<annotator>/<doc>.txt`` with the raw texts in
``texts/``; the generated ``study.toml`` maps the annotators back. Offsets are
in the PDTB annotation tool's convention: line breaks count as one character,
a BOM is character 0, UTF-16 code units. A relation read from a PDTB-3 file
keeps all its other fields; otherwise the type, senses, inserted connective,
identifier (field 31) and span fields are filled in. Layers the pipe format
has no field for (``Mod``, ``Shared``) are reported, not written.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.pdtb3 import FIELDS, INSERTED, SENSE_FIELDS, SPAN_FIELDS, TEXT
from ..findings import finding
from ..model import Corpus
from ..output import OutputDir
from . import Written
from .common import RelationOut, Texts, encodings, relations, safe_name
from .offsets import TargetText

#: TDB's upper-case relation types -> PDTB spelling
TYPES = {
    "EXPLICIT": "Explicit",
    "IMPLICIT": "Implicit",
    "ALTLEX": "AltLex",
    "ALTLEXC": "AltLexC",
    "ENTREL": "EntRel",
    "NOREL": "NoRel",
    "HYPOPHORA": "Hypophora",
}
IDENTIFIER = 31
_CONNECTIVE_TYPES = {"Explicit", "AltLex", "AltLexC"}


def _line(rel: RelationOut, view: TargetText, dropped: Counter) -> tuple[str, int]:
    """The relation's pipe line and how many spans it holds."""
    source = rel.attrs.get("pdtb3")
    fields = list(source[:FIELDS]) if isinstance(source, list) and len(source) >= FIELDS else [""] * FIELDS
    rtype = str(rel.attrs.get("type") or fields[0] or "")
    rtype = TYPES.get(rtype.upper(), rtype)
    fields[0] = rtype
    for layer, spans in rel.layers.items():
        if layer not in SPAN_FIELDS:
            dropped[layer] += len(spans)
    written: dict[str, list[tuple[int, int]]] = {}
    for layer, index in SPAN_FIELDS.items():
        spans = [s for s in rel.layers.get(layer, []) if s.valid]
        if layer == "Conn" and spans and rtype not in _CONNECTIVE_TYPES:
            dropped[f"Conn (position placeholder of an {rtype} relation)"] += len(spans)
            spans = []
        invalid = len(rel.layers.get(layer, [])) - len(spans)
        if invalid:
            dropped[f"{layer} (invalid offsets)"] += invalid
        if spans:
            offsets = view.convert(np.asarray([[s.begin, s.end] for s in spans]).ravel()).reshape(-1, 2)
            written[layer] = [(int(b), int(e)) for b, e in offsets]
        fields[index] = ";".join(f"{b}..{e}" for b, e in written.get(layer, []))
    if not isinstance(source, list):
        senses = list(rel.attrs.get("senses") or ([rel.label] if rel.label else []))
        for index, sense in zip(SENSE_FIELDS, senses):
            fields[index] = sense
        fields[INSERTED] = str(rel.attrs.get("inserted") or "")
        if rtype in _CONNECTIVE_TYPES and written.get("Conn"):
            fields[IDENTIFIER] = "{}..{}".format(*written["Conn"][0])
        elif written.get("Arg2"):
            fields[IDENTIFIER] = str(written["Arg2"][0][0])
    line = "|".join(f.replace("|", "/").replace("\n", " ").replace("\r", " ") for f in fields)
    return line, sum(len(v) for v in written.values())


def _order(rel: RelationOut) -> tuple[int, str]:
    """Pipe relations keep their line order; others go in text order."""
    if "pdtb3" in rel.attrs and rel.line is not None:
        return (rel.line, rel.record)
    begins = [s.begin for spans in rel.layers.values() for s in spans if s.valid]
    return (min(begins) if begins else -1, rel.record)


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as PDTB-3 pipe files plus raw texts and a study.toml."""
    written = Written()
    texts = Texts(corpus, base, target, written, TEXT)
    per_file: dict[tuple[str, str], list[RelationOut]] = defaultdict(list)
    for (annotator, doc, _group), rels in relations(corpus).items():
        per_file[(annotator, doc)].extend(rels)
    annotators: dict[str, str] = {}
    for (annotator, doc), rels in sorted(per_file.items()):
        view = texts.get(doc)
        if view is None:
            continue
        if not safe_name(annotator):
            written.findings.append(
                finding("not-convertible", f"annotator {annotator!r} cannot be a directory name", "that file was not written", doc=doc, annotator=annotator)
            )
            continue
        rels.sort(key=_order)
        name = f"annotations/{annotator}/{doc}.txt"
        dropped: Counter[str] = Counter()
        made = [_line(rel, view, dropped) for rel in rels]
        lines = [line for line, _ in made]
        target.file(name).write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="\n")
        target.record(name, len(lines))
        annotators[annotator] = f"annotations/{annotator}"
        written.files["annotations"] = written.files.get("annotations", 0) + 1
        written.relations += len(lines)
        written.spans += sum(n for _, n in made)
        for layer, count in sorted(dropped.items()):
            written.findings.append(
                finding(
                    "not-convertible",
                    f"{count} {layer} span(s) have no PDTB-3 field",
                    "not written",
                    file=name,
                    doc=doc,
                    annotator=annotator,
                    layer=layer.split(" ")[0],
                )
            )
    group_by = source.get("group_by")
    written.study = {
        "format": "pdtb3",
        "annotators": dict(sorted(annotators.items())),
        "texts": "texts",
        **encodings(corpus),
        **({"group_by": group_by} if group_by else {}),
        **({"sense_level": source["sense_level"]} if source.get("sense_level") else {}),
    }
    return written
