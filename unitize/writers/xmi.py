"""Write UIMA CAS XMI as INCEpTION exports it: ``annotations/annotation/<doc>/<annotator>.xmi`` and the type system
``annotations/TypeSystem.xml``, with the INCEpTION team's ``dkpro-cassis`` (the ``xmi`` extra).

One CAS per document and annotator: the sofa is the document's text (every character kept), with DKPro Core's
``DocumentMetaData`` (title and id: the document), ``Sentence`` (each line's text) and ``Token`` annotations (the
study tokenizer's words, or the format's own tokens) and, per layer, the spans as annotations of a custom span
layer ``webanno.custom.<Layer>`` with a string feature ``value`` holding the label — ``NamedEntity`` is DKPro's own
type. cassis writes offsets in UTF-16 code units, as UIMA counts. It holds every layer whose name is a Java
identifier, overlapping and stacked spans; no discontinuous span (reported). Read back by format ``xmi``, and by
cassis in the tests.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.xmi import TEXT, TOKEN, TYPESYSTEM_NAMES
from ..model import Corpus
from ..model.traits import WriterTraits
from ..output import OutputDir
from . import Target, WriterError, Written
from .common import XML_LABEL, Texts, by_submission, word_tokens, xml_ok
from .holds import holdable, not_held

TRAITS = WriterTraits(discontinuous=False, label=XML_LABEL, text="embedded")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
DKPRO = "de.tudarmstadt.ukp.dkpro.core.api"
NAMED_ENTITY = f"{DKPRO}.ner.type.NamedEntity"


def write(corpus: Corpus, target: OutputDir, base: Path, source: dict[str, Any]) -> Written:
    """Write the corpus as one XMI file per annotator and document, the type system beside them, and a study.toml."""
    try:
        import cassis
    except ImportError:
        raise WriterError("write XMI with the xmi extra: pip install 'unitize[xmi]' (the INCEpTION team's dkpro-cassis)") from None
    written = Written()
    held = holdable(corpus, TRAITS, "xmi")
    written.take(held)
    for frags in held.elements.values():
        if not _IDENTIFIER.match(frags[0].layer):
            written.findings.append(not_held("xmi", frags, "its layer name is not a UIMA type name (letters, digits and _)"))
    system = cassis.load_dkpro_core_typesystem()
    kinds = {layer: _span_type(system, layer) for layer in sorted({s.layer for s in held.spans if _IDENTIFIER.match(s.layer)})}
    texts = Texts(corpus, base, target, written, TEXT, copy=False)
    for (annotator, doc), elements in by_submission(corpus, [s for s in held.spans if s.layer in kinds]).items():
        view = texts.get(doc)
        if view is None:
            continue
        if not xml_ok(view.text):
            written.findings += [not_held("xmi", frags, "its document's text holds characters XML 1.0 cannot (control characters)")
                                 for frags in elements]
            elements = []
        cas = cassis.Cas(typesystem=system)
        cas.sofa_string = view.text
        tokens = word_tokens(corpus.documents[doc], source.get("tokenizer"))  # offsets of the model's text: the view's
        folder = written.names("documents", doc)
        _structure(cas, system, folder, view.convert(np.column_stack(tokens).ravel()).reshape(-1, 2) if len(tokens[0]) else np.zeros((0, 2), np.int64))
        pairs = view.convert(np.asarray([[f[0].begin, f[0].end] for f in elements], dtype=np.int64).ravel()).reshape(-1, 2).tolist()
        for (b, e), frags in zip(pairs, elements):
            cas.add(kinds[frags[0].layer](begin=b, end=e, value=frags[0].label))
        name = f"annotations/annotation/{folder}/{written.names('annotators', annotator)}.xmi"
        cas.to_xmi(target.file(name))
        target.record(name, len(elements))
        written.add_file("annotations")
        written.spans += len(elements)
        written.relations += len(elements)
    relative = f"annotations/{TYPESYSTEM_NAMES[0]}"
    system.to_xml(target.file(relative))
    target.record(relative, None)
    written.add_file("annotations")
    written.study = {"format": "xmi", "annotations": "annotations"}
    written.unitize["tokenizer"] = "given"
    return written


def _span_type(system: Any, layer: str) -> Any:
    """The UIMA type of a layer's spans: DKPro's NamedEntity, else a custom span layer with a ``value`` feature."""
    if layer == "NamedEntity":
        return system.get_type(NAMED_ENTITY)
    name = f"webanno.custom.{layer}"
    if system.contains_type(name):
        return system.get_type(name)
    kind = system.create_type(name, supertypeName="uima.tcas.Annotation")
    system.create_feature(kind, "value", "uima.cas.String")
    return kind


def _metadata_type(system: Any) -> Any:
    """DKPro Core's DocumentMetaData (cassis's copy of DKPro's type system lacks it): a DocumentAnnotation with its
    title, id, URIs and collection."""
    name = f"{DKPRO}.metadata.type.DocumentMetaData"
    if system.contains_type(name):
        return system.get_type(name)
    kind = system.create_type(name, supertypeName="uima.tcas.DocumentAnnotation")
    for feature in ("documentTitle", "documentId", "documentUri", "collectionId", "documentBaseUri"):
        system.create_feature(kind, feature, "uima.cas.String")
    system.create_feature(kind, "isLastSegment", "uima.cas.Boolean")
    return kind


def _structure(cas: Any, system: Any, doc: str, tokens: np.ndarray) -> None:
    """DocumentMetaData (title and id: the document's folder name), a Sentence per line holding text, and the Tokens: what
    INCEpTION shows a document by."""
    text = cas.sofa_string
    cas.add(_metadata_type(system)(begin=0, end=len(text), documentTitle=doc, documentId=doc))
    sentence = system.get_type(f"{DKPRO}.segmentation.type.Sentence")
    for match in re.finditer(r"[^\n]*\S[^\n]*", text):
        cas.add(sentence(begin=match.start(), end=match.end()))
    token = system.get_type(TOKEN)
    for b, e in tokens.tolist():
        cas.add(token(begin=b, end=e))


TARGET = Target("xmi", "UIMA CAS XMI as INCEpTION exports it: annotation/<doc>/<user>.xmi and TypeSystem.xml (dkpro-cassis)", write, TRAITS,
                reads_as="xmi")
