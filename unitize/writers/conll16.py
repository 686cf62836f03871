"""Write CoNLL-2015/2016 ``relations.json``: ``annotations/<annotator>/relations.json`` over ``texts/<DocID>.txt``.

One JSON object per line, one per relation: ``DocID``, ``ID``, ``Type``, ``Sense`` (a list) and
``Arg1``/``Arg2``/``Connective`` with ``CharacterSpanList`` (code points of the raw text as it is,
``\\r\\n`` two characters, end exclusive, one pair per fragment) and ``RawText`` (the fragments
joined with a space; an implicit relation's inserted connective); ``TokenList`` is left empty (the
reader takes the character spans). The format has no place for supplements, attribution or an
implicit relation's connective position placeholder: those are reported per record.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.conll16 import PARTS, TEXT
from ..model import Corpus
from ..model.findings import finding
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import RelationOut, Texts, encodings, relations
from .holds import holdable, not_held
from .offsets import TargetText
from .pipe import TYPES

TRAITS = WriterTraits(layers=tuple(PARTS), groups=True, relations=True, text="raw")
_CONNECTIVE_TYPES = {"Explicit", "AltLex", "AltLexC"}


def _relation(rel: RelationOut, ident: int | str, doc: str, view: TargetText, written: Written) -> tuple[dict[str, Any], int]:
    """The relation's JSON object and how many spans it holds."""
    rtype = str(rel.attrs.get("type") or "")
    rtype = TYPES.get(rtype.upper(), rtype)
    out: dict[str, Any] = {}
    n = 0
    for layer, key in PARTS.items():
        spans = rel.layers.get(layer, [])
        if layer == "Conn" and spans and rtype not in _CONNECTIVE_TYPES:
            written.findings.append(not_held("conll16", spans, f"it only marks the position of an {rtype} relation"))
            spans = []
        pairs = view.convert(np.asarray([[s.begin, s.end] for s in spans], dtype=np.int64).ravel()).reshape(-1, 2).tolist() if spans else []
        raw = " ".join(view.text[b:e] for b, e in pairs)
        if layer == "Conn" and not pairs:
            raw = str(rel.attrs.get("inserted") or "")
        out[key] = {"CharacterSpanList": pairs, "RawText": raw, "TokenList": []}
        n += len(pairs)
    senses = list(rel.attrs.get("senses") or ([rel.label] if rel.label else []))
    return {**out, "DocID": doc, "ID": ident, "Sense": senses, "Type": rtype}, n


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as one relations.json per annotator plus raw texts and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "conll16")
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT)
    lines: dict[str, list[str]] = defaultdict(list)
    for (annotator, doc, _group), rels in relations(replace(corpus, spans=held.spans)).items():
        view = texts.get(doc)
        if view is None:
            continue
        lines.setdefault(annotator, [])
        if not rels:
            written.findings.append(
                finding("not-convertible", f"{annotator} marked no relation in {doc}; relations.json has no place for a document without one",
                        "nothing written for it: the annotator reads back as missing there, not as having marked nothing",
                        doc=doc, group=_group, annotator=annotator)
            )
        for rel in rels:
            obj, n = _relation(rel, len(lines[annotator]) + 1, doc, view, written)
            lines[annotator].append(json.dumps(obj, ensure_ascii=False))
            written.spans += n
            written.relations += 1
    for annotator, records in sorted(lines.items()):
        name = f"annotations/{written.names('annotators', annotator)}/relations.json"
        target.file(name).write_text("".join(line + "\n" for line in records), encoding="utf-8", newline="\n")
        target.record(name, len(records))
        written.add_file("annotations")
    group_by = source.get("group_by")
    written.study = {
        "format": "conll16",
        "annotators": {a: f"annotations/{written.names('annotators', a)}" for a in sorted(lines)},
        "texts": "texts",
        **encodings(corpus),
        **({"group_by": group_by} if group_by else {}),
        **({"sense_level": source["sense_level"]} if source.get("sense_level") else {}),
    }
    return written


TARGET = Target("conll16", "CoNLL-2016 relations.json (JSON Lines), one per annotator, with the raw texts", write, TRAITS, reads_as="conll16")
