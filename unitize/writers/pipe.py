"""Write PDTB pipe files (PDTB-3's 34 fields, PDTB-2's 48): one file per (annotator, document), a relation a line.

Files go to ``annotations/<annotator>/<doc><suffix>`` with the raw texts in ``texts/``; the
generated ``study.toml`` maps the annotators back. Offsets are in the format's convention (its
adapter's :class:`~unitize.model.text.TextConventions`: PDTB-3 counts line breaks as one character, a BOM
as character 0, UTF-16 code units; PDTB-2 bytes of the Latin-1 WSJ files). A relation read from a
file of the same format keeps all its other fields; otherwise the type, senses, inserted
connective, identifier and span fields (and PDTB-2's raw-text fields) are filled in. Layers the
format has no field for (``Mod``, ``Shared``) and an implicit relation's connective position
placeholder are reported per record, not written.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.pdtb3 import PipeLines
from ..model import Corpus, Finding
from ..model.text import TextConventions
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import RelationOut, Texts, encodings, relations
from .holds import holdable, not_held
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
_CONNECTIVE_TYPES = {"Explicit", "AltLex", "AltLexC"}


@dataclass(frozen=True)
class PipeFormat:
    """A pipe format as a writer needs it: its declared ``lines`` (the reader's), its texts' conventions, the
    field of the computed identifier (``None``: none) and the suffix of its annotation files."""

    lines: PipeLines
    text: TextConventions
    identifier: int | None
    suffix: str

    @property
    def traits(self) -> WriterTraits:
        return WriterTraits(layers=tuple(self.lines.spans), groups=True, relations=True, text="raw")


def _line(fmt: PipeFormat, rel: RelationOut, view: TargetText, dropped: list[Finding]) -> tuple[str, int]:
    """The relation's pipe line and how many spans it holds."""
    lines = fmt.lines
    source = rel.attrs.get(lines.name)
    fields = list(source[: lines.fields]) if isinstance(source, list) and len(source) >= lines.fields else [""] * lines.fields
    rtype = str(rel.attrs.get("type") or fields[0] or "")
    rtype = TYPES.get(rtype.upper(), rtype)
    fields[0] = rtype
    written: dict[str, list[tuple[int, int]]] = {}
    for layer, index in lines.spans.items():
        spans = rel.layers.get(layer, [])
        if layer == "Conn" and spans and rtype not in _CONNECTIVE_TYPES:
            dropped.append(not_held(lines.name, spans, f"it only marks the position of an {rtype} relation"))
            spans = []
        if spans:
            offsets = view.convert(np.asarray([[s.begin, s.end] for s in spans]).ravel()).reshape(-1, 2)
            written[layer] = [(int(b), int(e)) for b, e in offsets]
        fields[index] = ";".join(f"{b}..{e}" for b, e in written.get(layer, []))
        if layer in lines.stored and written.get(layer):
            fields[lines.stored[layer]] = " ".join(view.text[b:e] for b, e in written[layer])
    if not isinstance(source, list):
        senses = list(rel.attrs.get("senses") or ([rel.label] if rel.label else []))
        for index, sense in zip(lines.senses, senses):
            fields[index] = sense
        fields[lines.inserted[0]] = str(rel.attrs.get("inserted") or "")
        fields[lines.inserted[1]] = str(rel.attrs.get("inserted2") or "")
        if fmt.identifier is not None and rtype in _CONNECTIVE_TYPES and written.get("Conn"):
            fields[fmt.identifier] = "{}..{}".format(*written["Conn"][0])
        elif fmt.identifier is not None and written.get("Arg2"):
            fields[fmt.identifier] = str(written["Arg2"][0][0])
    line = "|".join(f.replace("|", "/").replace("\n", " ").replace("\r", " ") for f in fields)
    return line, sum(len(v) for v in written.values())


def _order(name: str, rel: RelationOut) -> tuple[int, str]:
    """Pipe relations keep their line order; others go in text order."""
    if name in rel.attrs and rel.line is not None:
        return (rel.line, rel.record)
    begins = [s.begin for spans in rel.layers.values() for s in spans if s.valid]
    return (min(begins) if begins else -1, rel.record)


def write(fmt: PipeFormat, corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as pipe files of ``fmt`` plus raw texts and a study.toml."""
    written = Written()
    held = holdable(corpus, fmt.traits, fmt.lines.name)
    written.take(held)
    texts = Texts(corpus, base, target, written, fmt.text)
    per_file: dict[tuple[str, str], list[RelationOut]] = defaultdict(list)
    for (annotator, doc, _group), rels in relations(replace(corpus, spans=held.spans)).items():
        per_file[(annotator, doc)].extend(rels)
    annotators: dict[str, str] = {}
    for (annotator, doc), rels in sorted(per_file.items()):
        view = texts.get(doc)
        if view is None:
            continue
        rels.sort(key=lambda rel: _order(fmt.lines.name, rel))
        folder = f"annotations/{written.names('annotators', annotator)}"
        name = f"{folder}/{written.names('documents', doc)}{fmt.suffix}"
        made = [_line(fmt, rel, view, written.findings) for rel in rels]
        lines = [line for line, _ in made]
        target.file(name).write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="\n")
        target.record(name, len(lines))
        annotators[annotator] = folder
        written.add_file("annotations")
        written.relations += len(lines)
        written.spans += sum(n for _, n in made)
    group_by = source.get("group_by")
    written.study = {
        "format": fmt.lines.name,
        "annotators": dict(sorted(annotators.items())),
        "texts": "texts",
        **encodings(corpus),
        **({"group_by": group_by} if group_by else {}),
        **({"sense_level": source["sense_level"]} if source.get("sense_level") else {}),
    }
    return written


def pipe_target(fmt: PipeFormat, description: str) -> Target:
    """The writer declaration of a pipe format."""
    return Target(fmt.lines.name, description, functools.partial(write, fmt), fmt.traits, reads_as=fmt.lines.name)
