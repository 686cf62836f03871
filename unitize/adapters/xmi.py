"""UIMA CAS XMI: INCEpTION's and DKPro Core's lossless interchange format, read with the INCEpTION team's
``dkpro-cassis`` (the ``xmi`` extra: ``pip install 'unitize[xmi]'``).

Layout as INCEpTION exports it: ``annotation/<doc>/<user>.xmi`` (a folder or the export ZIP) with the type system
as ``TypeSystem.xml`` beside the files or in a folder above them (added to DKPro Core's type system; option
``typesystem`` names one instead). A file with a type its type system does not declare is reported, not read in
part. **Annotator = file name, doc = folder**; ``curation/`` is skipped; a file not in a ``<doc>/<user>.xmi``
layout is document ``<file>`` of annotator ``annotator``.

The text is the CAS's sofa; offsets are UTF-16 code units in the file (UIMA counts as Java does), converted to
code points by cassis. Every annotation type but DKPro Core's segmentation and metadata (tokens, sentences,
lemmas, POS, document metadata) is a span layer named by the last dotted part of its type (``NamedEntity``, a custom layer
``webanno.custom.Claim`` is ``Claim``; option ``types`` keeps only some), its label the ``value`` feature (option
``feature``), else the type's first string feature; relation and chain layers (features pointing at other
annotations) are not spans and are reported once per file. The ``Token`` annotations are the word units
(tokenizer ``"given"``).
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from ..model import Corpus, Document, Span, Submission
from ..model.findings import finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import MAX_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT, MIN_UNZIPPED_MB
from ._spans import GROUP, SPAN_TRAITS, read_source
from .sources import Source, annotation_sources

#: the sofa is the text; cassis gives code points (the file counts UTF-16 units)
TEXT = TextConventions(newlines="keep", bom="keep", offsets="codepoint", suffixes=(), encoding="utf-8")
TYPESYSTEM_NAMES = ("TypeSystem.xml", "typesystem.xml")
TOKEN = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Token"
#: annotation types that are not annotators' spans: DKPro Core's and UIMA's segmentation, morphology, metadata (short names)
NOT_SPANS = frozenset({"Token", "Sentence", "Paragraph", "Lemma", "POS", "Stem", "MorphologicalFeatures", "TokenForm", "Heading", "Div",
                       "DocumentMetaData", "DocumentAnnotation", "TagsetDescription", "NGram", "Compound", "Split", "Document"})
_SKIP_DIRS = {"curation", "annotation_ser", "curation_ser"}
#: the namespaces of those types (a custom layer of the same short name, ``webanno.custom.POS``, is a span layer)
_BUILT_IN = ("de.tudarmstadt.ukp.dkpro.core.", "org.dkpro.core.", "uima.")
_INSTALL = "read XMI with the xmi extra: pip install 'unitize[xmi]' (the INCEpTION team's dkpro-cassis)"


def read(
    *,
    annotations: Path,
    base: Path | None = None,
    typesystem: Path | None = None,
    types: list[str] | None = None,
    feature: str | None = None,
    annotator: str,
    annotators: list[str] | None = None,
    max_unzipped_mb: float,
    progress: Progress | None = None,
) -> Corpus:
    """Read UIMA CAS XMI files: an INCEpTION project export (directory or ZIP), a folder, or one file."""
    try:
        import cassis
    except ImportError:
        raise AdapterError(_INSTALL) from None
    annotations = Path(annotations)
    if not annotations.exists():
        raise AdapterError(f"XMI input not found: {annotations}")
    base = Path(base) if base is not None else Path.cwd()
    wanted = set(annotators) if annotators else None
    corpus = Corpus(format="xmi")
    sources = annotation_sources(annotations, base, corpus, (".xmi", *TYPESYSTEM_NAMES), max_unzipped_mb)
    systems = _typesystems([s for s in sources if PurePosixPath(s.inner).name in TYPESYSTEM_NAMES], typesystem, corpus, cassis)
    for source in (progress or no_progress)([s for s in sources if s.inner.endswith(".xmi")], "reading annotations"):
        parts = source.inner.split("/")
        if _SKIP_DIRS & set(parts[:-1]):
            continue
        doc, who = (parts[-2], parts[-1][: -len(".xmi")]) if len(parts) >= 2 else (parts[-1][: -len(".xmi")], annotator)
        if wanted is not None and who not in wanted:
            corpus.skipped_by_selection += 1
            corpus.not_selected.add(who)
            continue
        cas = _load(source, _system_of(source.inner, systems), corpus, cassis, doc)
        if cas is not None:
            _spans(corpus, cas, source.name, doc, who, set(types) if types else None, feature)
    return corpus


def _typesystems(found: list[Source], given: Path | None, corpus: Corpus, cassis: Any) -> dict[str, Any]:
    """Type systems by the folder (inside the input) they apply to: ``""`` for the whole input (``typesystem``, else
    DKPro Core's), each ``TypeSystem.xml`` for its folder and those below it."""
    out: dict[str, Any] = {}
    try:
        out[""] = cassis.load_typesystem(io.BytesIO(Path(given).read_bytes())) if given is not None else cassis.load_dkpro_core_typesystem()
    except OSError as exc:
        raise AdapterError(f"cannot read [input] typesystem {given}: {exc.strerror or exc}") from None
    except Exception as exc:  # cassis reports a bad type system with the parser's or its own errors
        raise AdapterError(f"[input] typesystem {given} is not a UIMA type system: {_said(exc)}") from None
    if given is not None:
        return out
    for source in found:
        raw = read_source(source, corpus)
        if raw is None:
            continue
        try:
            out[_folder(PurePosixPath(source.inner).parent)] = cassis.merge_typesystems(out[""], cassis.load_typesystem(io.BytesIO(raw)))
        except Exception as exc:  # a malformed type system: its files fall back to the one above
            corpus.findings.append(finding("file-unreadable", f"not a UIMA type system: {_said(exc)}", "the files below it are read with "
                                           "the type system above it (DKPro Core's at the top); correct it or give [input] typesystem",
                                           file=source.name))
    return out


def _said(exc: Exception) -> str:
    """What a parser's error says, in one line of at most 300 characters."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 300 else text[:300] + "…"


def _system_of(inner: str, systems: dict[str, Any]) -> Any:
    """The type system of the nearest folder at or above a file (``systems[""]`` at the top)."""
    folder = PurePosixPath(inner).parent
    for up in [folder, *folder.parents]:
        if _folder(up) in systems:
            return systems[_folder(up)]
    return systems[""]


def _folder(path: PurePosixPath) -> str:
    return "" if str(path) == "." else str(path)


def _load(source: Source, system: Any, corpus: Corpus, cassis: Any, doc: str) -> Any | None:
    """The CAS of one file, or a finding saying why it cannot be read."""
    raw = read_source(source, corpus)
    if raw is None:
        return None
    try:
        return cassis.load_cas_from_xmi(io.BytesIO(raw), typesystem=system)
    except Exception as exc:  # lxml's syntax errors, cassis's type errors: the file is reported, the run goes on
        corpus.findings.append(finding("file-unreadable", f"not a UIMA CAS XMI file its type system reads: {_said(exc)}",
                                       "file left out; correct it, or give its type system ([input] typesystem)", file=source.name, doc=doc))
        return None


def _spans(corpus: Corpus, cas: Any, name: str, doc: str, who: str, types: set[str] | None, feature: str | None) -> None:
    """The document (from the first file of it) and every span annotation of one CAS."""
    text = cas.sofa_string or ""
    if doc not in corpus.documents:
        tokens = [(t.begin, t.end) for t in cas.select(TOKEN)] if cas.typesystem.contains_type(TOKEN) else []
        arr = np.array(sorted(tokens), dtype=np.int64).reshape(-1, 2)
        corpus.documents[doc] = Document(doc_id=doc, text=text, source=name, encoding="utf-8", newline="lf", size=len(text.encode()),
                                         sha256=corpus.inputs[-1].sha256,
                                         # a CAS without tokens has none to give, unless its text has no word at all
                                         tokens=(np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])) if tokens or not text.strip() else None)
    elif corpus.documents[doc].text != text:
        corpus.findings.append(finding("text-copy-differs", f"the text in {name} differs from {corpus.documents[doc].source}",
                                       f"offsets checked against {corpus.documents[doc].source}", file=name, doc=doc))
    skipped: set[str] = set()
    n = 0
    for fs in sorted(cas.select("uima.tcas.Annotation"), key=lambda a: (a.begin, a.end, a.xmiID or 0)):
        short = fs.type.name.rsplit(".", 1)[-1]
        if (short in NOT_SPANS and fs.type.name.startswith(_BUILT_IN)) or (types is not None and fs.type.name not in types and short not in types):
            continue
        features = [f for f in fs.type.all_features if f.name not in ("begin", "end", "sofa")]
        if any(not f.rangeType.name.startswith("uima.cas.") or f.rangeType.name.endswith("Array") for f in features if f.name != "value"):
            skipped.add(short)  # a relation or chain link: it points at other annotations
            continue
        label = _label(fs, features, feature)
        n += 1
        corpus.spans.append(Span(who, doc, GROUP, f"xmi:id {fs.xmiID}", short, 0, int(fs.begin), int(fs.end), label=label, source=name))
    for short in sorted(skipped):
        corpus.findings.append(finding("unknown-element", f"{short} annotations point at other annotations (a relation or chain layer): "
                                       "not spans", "not read", file=name, doc=doc, annotator=who))
    corpus.submissions.append(Submission(name, who, doc, GROUP, n))


def _label(fs: Any, features: list[Any], feature: str | None) -> str | None:
    """The value of ``feature``, else of ``value``, else of the type's first string feature (None when unset)."""
    names = [f.name for f in features if f.rangeType.name == "uima.cas.String"]
    chosen = feature if feature in names else "value" if "value" in names else names[0] if names else None
    value = fs.get(chosen) if chosen is not None else None
    return None if value is None else str(value)


ADAPTER = Adapter(
    suffixes=(".xmi", ".zip"),
    text=TEXT,
    name="xmi",
    description="UIMA CAS XMI (INCEpTION, DKPro Core): annotation/<doc>/<user>.xmi with TypeSystem.xml, read with dkpro-cassis",
    read=read,
    options={
        "annotations": Option("path", None, "an INCEpTION project export in XMI (directory or .zip), a folder of .xmi files, or one .xmi",
                              example="export.zip", required=True),
        "typesystem": Option("path", None, "the type system (default: TypeSystem.xml beside or above the files, else DKPro Core's)",
                             example="TypeSystem.xml"),
        "types": Option("list", None, "only these annotation types (full or short names)", example=["NamedEntity"]),
        "feature": Option("str", None, "feature whose value is the label (default: value, else the type's first string feature)",
                          example="value"),
        "annotator": Option("str", "annotator", "annotator of .xmi files not in a <doc>/<user>.xmi layout"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
        "max_unzipped_mb": Option(
            "float", MAX_UNZIPPED_MB, "the most an export ZIP may inflate to, in MB; larger or bomb-like members are reported, not read",
            minimum=MIN_UNZIPPED_MB, maximum=MAX_UNZIPPED_MB_LIMIT,
        ),
    },
    traits=replace(SPAN_TRAITS, tokenizer="given"),
)
