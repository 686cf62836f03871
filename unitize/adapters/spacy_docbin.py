"""spaCy ``DocBin`` files (``.spacy``): one ``Doc`` per document and annotator, spans in ``doc.spans``.

Every span group ``doc.spans[<layer>]`` is a layer; a span's ``label_`` is its label (empty: none).
The document and the annotator are named by ``doc.user_data["unitize"]`` (``{"doc_id", "annotator"}``,
as ``unitize convert-format --to spacy`` writes them); a Doc without it is document
``<file>-<n>`` of the ``annotator`` option. Offsets are the spans' character offsets into
``doc.text`` (code points), which is the document's text.

A DocBin is a zlib stream: what it inflates to is measured before spaCy reads it, and a file that
would inflate past ``max_unzipped_mb`` is reported and left out, as a ZIP member is; a damaged
file, whatever spaCy, msgpack or zlib raise for it, is a ``file-unreadable`` finding.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from ..model import Corpus, Span, Submission
from ..model.findings import finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, Option
from ._safe import MAX_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT, MIN_UNZIPPED_MB, inflated_size
from ._spans import GROUP, SPAN_TRAITS, first_record, put_document, read_input
from .files import input_files

#: the text is each Doc's own; offsets are code points of it
TEXT = TextConventions(newlines="keep", bom="keep", offsets="codepoint", suffixes=(), encoding="utf-8")
#: the key of ``doc.user_data`` that names the document and the annotator
USER_DATA = "unitize"


@cache
def blank_vocab() -> Any:
    """A vocabulary for reading and making Docs (spaCy's blank multi-language pipeline; no model download)."""
    import spacy

    return spacy.blank("xx").vocab


def read(
    *,
    annotations: Path,
    base: Path | None = None,
    annotator: str,
    annotators: list[str] | None = None,
    max_unzipped_mb: float,
    progress: Progress | None = None,
) -> Corpus:
    """Read ``.spacy`` DocBin files (one file, or every ``*.spacy`` under a directory)."""
    annotations = Path(annotations)
    base = Path(base) if base is not None else Path.cwd()
    corpus = Corpus(format="spacy")
    files = input_files(annotations, base, corpus, lambda name: name.endswith(".spacy"), "spaCy DocBin input")
    wanted = set(annotators) if annotators else None
    seen: dict[tuple[str, str], str] = {}
    for path in (progress or no_progress)(files, "reading annotations"):
        name, raw = read_input(path, base, corpus, "annotations")
        if raw is None:
            continue
        inflated = inflated_size(raw, int(max_unzipped_mb * 1_000_000))
        if inflated is None:
            corpus.findings.append(finding(
                "file-unreadable", f"inflates past max_unzipped_mb = {max_unzipped_mb:g} ({len(raw):,} bytes on disk)",
                "file left out; raise [input] max_unzipped_mb if the file is genuine", file=name))
            continue
        try:
            docs = _docs(raw)
        except Exception as exc:  # a damaged or foreign file: msgpack, zlib and spaCy raise their own kinds
            corpus.findings.append(finding("file-unreadable", f"not a spaCy DocBin ({type(exc).__name__}: {exc})", "file left out", file=name))
            continue
        for n, (user_data, text, spans) in enumerate(docs, 1):
            named: dict[str, Any] = user_data if isinstance(user_data, dict) else {}
            doc_id = str(named.get("doc_id") or f"{path.stem}-{n}")
            who = str(named.get("annotator") or annotator)
            if not first_record(corpus, seen, wanted, doc_id, who, name, f"doc {n}", "this Doc left out"):
                continue
            put_document(corpus, doc_id, text, name)
            for layer, k, begin, end, label in spans:
                corpus.spans.append(Span(who, doc_id, GROUP, f"{layer}/{k + 1}", layer, 0, begin, end, label=label, source=name, line=None))
            corpus.submissions.append(Submission(name, who, doc_id, GROUP, len(spans)))
    return corpus


def _docs(raw: bytes) -> list[tuple[Any, str, list[tuple[str, int, int, int, str | None]]]]:
    """Each Doc of a DocBin as plain data: (its user data, its text, its spans as (layer, index, begin, end, label)),
    so every error of a damaged file is raised here."""
    from spacy.tokens import DocBin

    out = []
    for doc in DocBin().from_bytes(raw).get_docs(blank_vocab()):
        spans = [(str(layer), k, int(s.start_char), int(s.end_char), s.label_ or None)
                 for layer, group in sorted(doc.spans.items()) for k, s in enumerate(group)]
        out.append((doc.user_data.get(USER_DATA), str(doc.text), spans))
    return out


ADAPTER = Adapter(
    suffixes=(".spacy",),
    name="spacy",
    text=TEXT,
    description="spaCy DocBin (.spacy): one Doc per document and annotator, spans in doc.spans[<layer>]",
    read=read,
    options={
        "annotations": Option("path", None, "a .spacy file, or a directory of them", example="docs.spacy", required=True),
        "annotator": Option("str", "annotator", "annotator of Docs whose user_data names none"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ayse", "burak"]),
        "max_unzipped_mb": Option(
            "float", MAX_UNZIPPED_MB, "the most a .spacy file may inflate to, in MB; a larger one is reported, not read",
            minimum=MIN_UNZIPPED_MB, maximum=MAX_UNZIPPED_MB_LIMIT,
        ),
    },
    traits=replace(SPAN_TRAITS, layers=()),
)
