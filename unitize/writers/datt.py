"""Write DATT / TDB stand-off XML: one file per (document, annotator, group).

Files are named ``<doc>_<annotator>_<group>.xml`` (the DATT convention) when
every name can be read back by the default pattern, else
``<annotator>/<group>/<doc>.xml`` with a matching ``filename_pattern`` in the
generated ``study.toml``. Offsets count ``\\r\\n`` as two characters of the
copied raw text; ``<Text>`` holds the raw slice. Relation attributes are kept
as XML attributes (``type``, ``sense`` = the label, ``sense2``, and the
source's own string attributes); layers DATT has no element for (attribution
spans) are reported, not written.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from lxml import etree

from ..adapters.datt import DEFAULT_PATTERN, TEXT
from ..model import Corpus
from ..model.findings import finding
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, Written
from .common import XML_INVALID, RelationOut, Texts, encodings, relations
from .holds import holdable

#: canonical layer -> DATT element, in DATT's child order
ELEMENTS = {
    "Conn": "Conn",
    "Mod": "Mod",
    "Arg1": "Arg1",
    "Arg2": "Arg2",
    "Sup1": "Supp1",
    "Sup2": "Supp2",
    "Shared": "Shared",
    "Sup_Shared": "Supp_Shared",
}
TRAITS = WriterTraits(layers=tuple(ELEMENTS), groups=True, relations=True, text="raw")
NESTED_PATTERN = r"(?:^|/)(?P<annotator>[^/]+)/(?P<connective>[^/]+)/(?P<doc>[^/]+)\.xml$"
_XML_NAME = re.compile(r"^[A-Za-z_][\w.-]*$")


def _attributes(rel: RelationOut) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key, value in rel.attrs.items():
        if isinstance(value, str) and _XML_NAME.match(key) and key not in ("connective",):
            attrs[key] = value
    senses = rel.attrs.get("senses") or []
    if rel.label:
        attrs["sense"] = rel.label
    if len(senses) > 1 and "sense2" not in attrs:
        attrs["sense2"] = senses[1]
    return dict(sorted(attrs.items()))


#: bytes of each name in a flat file name (``<doc>_<annotator>_<group>.xml``: three of them in one component)
_FLAT_NAME_BYTES = 80


def _file_name(doc: str, annotator: str, group: str, flat: bool) -> str:
    """The file of (``doc``, ``annotator``, ``group``), each given in its file form (:mod:`unitize.names`)."""
    return f"annotations/{doc}_{annotator}_{group}.xml" if flat else f"annotations/{annotator}/{group}/{doc}.xml"


def _document(rels: list[Any], view: Any, name: str, doc: str, written: Written, dropped: Counter[tuple[str, str, str]]) -> Any:
    """One DATT file's ``<Document>``: a ``<Relation>`` per relation, its spans as code-point offsets of the text
    written; what has no DATT element, or no valid offsets, is counted in ``dropped``."""
    root = etree.Element("Document")
    for rel in rels:
        element = etree.SubElement(root, "Relation", _attributes(rel))
        for layer in rel.layers:
            if layer not in ELEMENTS:
                dropped[(name, layer, doc)] += len(rel.layers[layer])
        for layer, tag in ELEMENTS.items():
            child = etree.SubElement(element, tag)
            spans = [s for s in rel.layers.get(layer, []) if s.valid]
            dropped_invalid = len(rel.layers.get(layer, [])) - len(spans)
            if dropped_invalid:
                dropped[(name, f"{layer} (invalid offsets)", doc)] += dropped_invalid
            if not spans:
                continue
            offsets = view.convert(np.asarray([[s.begin, s.end] for s in spans]).ravel()).reshape(-1, 2)
            for b, e in offsets.tolist():
                span = etree.SubElement(child, "Span")
                etree.SubElement(span, "Text").text = _xml_safe(view.text[b:e])
                etree.SubElement(span, "BeginOffset").text = str(b)
                etree.SubElement(span, "EndOffset").text = str(e)
                written.spans += 1
        written.relations += 1
    return root


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as DATT XML files plus raw texts and a study.toml."""
    written = Written()
    held = holdable(corpus, TRAITS, "datt")
    written.take(held)
    texts = Texts(corpus, base, target, written, TEXT)
    files = relations(replace(corpus, spans=held.spans))
    pattern = re.compile(DEFAULT_PATTERN)
    names = written.names
    forms = {
        (a, d, g): (names("documents", d, limit=_FLAT_NAME_BYTES), names("annotators", a, limit=_FLAT_NAME_BYTES),
                    names("groups", g, limit=_FLAT_NAME_BYTES))
        for a, d, g in files
    }
    flat = all(
        (m := pattern.search(_file_name(*form, True))) is not None and (m["doc"], m["annotator"], m["connective"]) == form
        for form in forms.values()
    )
    dropped: Counter[tuple[str, str, str]] = Counter()
    for (annotator, doc, group), rels in files.items():
        view = texts.get(doc)
        if view is None:
            continue
        name = _file_name(*forms[(annotator, doc, group)], flat)
        root = _document(rels, view, name, doc, written, dropped)
        data = etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True)
        target.file(name).write_bytes(data)
        target.record(name, len(rels))
        written.files["annotations"] = written.files.get("annotations", 0) + 1
    for (name, layer, doc), count in sorted(dropped.items()):
        written.findings.append(finding("not-convertible", f"{count} {layer} span(s) have no DATT element", "not written",
                                        file=name, doc=doc, layer=layer.split(" ")[0]))
    written.study = {
        "format": "datt",
        "annotations": "annotations",
        "texts": "texts",
        **encodings(corpus),
        **({} if flat else {"filename_pattern": NESTED_PATTERN}),
    }
    return written


def _xml_safe(text: str) -> str:
    """Text with the characters XML 1.0 cannot hold replaced (``<Text>`` is only a check copy)."""
    return XML_INVALID.sub("\ufffd", text)



TARGET = Target("datt", "DATT / TDB stand-off XML, one file per document, annotator and group, with the raw texts", write, TRAITS, reads_as="datt")
