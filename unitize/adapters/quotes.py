"""Quotes: model outputs (or any annotator's) given as quoted text and a label, located in the document.

JSONL, one record per document and annotator (or run)::

    {"doc": "d1", "annotator": "gpt-run1", "spans": [{"quote": "Barack Obama", "label": "PER"},
                                                      {"quote": "Obama", "label": "PER", "occurrence": 2},
                                                      {"quote": "the senate", "label": "ORG", "hint": 140},
                                                      {"start": 0, "end": 7, "label": "LOC"}]}

- ``doc`` (or ``doc_id``, ``id``) names the document; its text is the record's ``text`` when given
  (code points, line breaks as they are), else ``<texts>/<doc>.txt``;
- ``annotator`` names who quoted; without it, the file name without extension (one file per run:
  ``gpt-run1.jsonl``);
- each span gives ``quote`` (or ``text``) and ``label``, optionally ``occurrence`` (1-based: the
  k-th place of the quote) or ``hint`` (a character offset near the quote); a span with ``start`` and
  ``end`` (code points, end exclusive) is taken as given, not located.

Each quote is located by :mod:`.locate` — exact, then normalized, then fuzzy (``matching`` says how far,
``threshold`` the least fuzzy score) — and every quote's outcome is a finding of the report
(``quote-exact``, ``quote-normalized``, ``quote-fuzzy`` with its score, ``quote-ambiguous``,
``quote-not-found``), counted in the manifest's accounting (``quotes``). A quote found nowhere is
counted and left out; none is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..model import Corpus, Span, Submission
from ..model.findings import QUOTE_CODES, UNPLACED, finding
from ..model.text import TextConventions
from ..runtime.progress import Progress, no_progress
from . import Adapter, AdapterError, Option
from ._safe import offset_value
from ._spans import GROUP, SPAN_TRAITS, decoded_sources, first_record, json_lines, malformed, put_document
from .files import index_texts, read_texts
from .locate import AMBIGUOUS, EXACT, FUZZY, MATCHING, NORMALIZED, NOT_FOUND, Locator
from .sources import annotation_sources

#: the records' own texts (and ``<doc>.txt`` files): line breaks as they are, a BOM dropped, code points
TEXT = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(".txt",), encoding="utf-8")
_DOC_KEYS = ("doc", "doc_id", "id")


@dataclass
class _Quote:
    """One span of a record: a quote to locate, or given offsets."""

    record: str
    label: str | None
    quote: str | None
    occurrence: int | None
    hint: int | None
    start: Any = None
    end: Any = None


@dataclass
class _Record:
    source: str
    line: int
    doc: str
    annotator: str
    spans: list[_Quote] = field(default_factory=list)


def _int(value: Any) -> int | None:
    return offset_value(value)


def _spans(obj: dict, number: int) -> list[_Quote] | str:
    """The record's spans, or why they cannot be read."""
    spans = obj.get("spans", [])
    if not isinstance(spans, list):
        return "'spans' is not a list"
    out = []
    for k, item in enumerate(spans, 1):
        record = f"line {number}/{k}"
        if isinstance(item, str):
            item = {"quote": item}
        if not isinstance(item, dict):
            return f"span {k} is neither an object nor a string"
        quote = item.get("quote", item.get("text"))
        label = item.get("label")
        given = "start" in item or "end" in item
        if not given and not isinstance(quote, str):
            return f"span {k} has no 'quote' (or 'text') string and no 'start'/'end' offsets"
        out.append(_Quote(record, None if label is None else str(label), quote if isinstance(quote, str) else None,
                          _int(item.get("occurrence")), _int(item.get("hint")), item.get("start"), item.get("end")))
    return out


def read(
    *,
    annotations: Path,
    texts: Path | None = None,
    layer: str,
    matching: str,
    threshold: float,
    encoding: str,
    annotators: list[str] | None = None,
    base: Path | None = None,
    progress: Progress | None = None,
) -> Corpus:
    """Read quote files (a ``.jsonl`` file or a directory of them) and locate every quote."""
    annotations = Path(annotations)
    if not annotations.exists():
        raise AdapterError(f"quotes input not found: {annotations}")
    if matching not in MATCHING:
        raise AdapterError(f"[input] matching must be one of {', '.join(MATCHING)}, not {matching!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 100:
        raise AdapterError(f"[input] threshold must be a fuzzy score above 0 and at most 100, not {threshold!r}")
    base = Path(base) if base is not None else Path.cwd()
    wanted = set(annotators) if annotators else None
    corpus = Corpus(format="quotes")
    records: list[_Record] = []
    seen: dict[tuple[str, str], str] = {}
    sources = annotation_sources(annotations, base, corpus, (".jsonl",))
    for source, decoded in decoded_sources((progress or no_progress)(sources, "reading quotes"), corpus, TEXT, encoding=encoding):
        name, inner = source.name, source.inner
        for number, obj in json_lines(decoded.text):
            doc = next((obj.get(k) for k in _DOC_KEYS if isinstance(obj, dict) and obj.get(k) is not None), None)
            if isinstance(obj, Exception) or not isinstance(obj, dict) or doc is None:
                why = str(obj) if isinstance(obj, Exception) else "not an object with a 'doc' (or 'doc_id', 'id')"
                malformed(corpus, name, number, f"record {why}", "record left out; correct the line")
                continue
            doc, who = str(doc), str(obj.get("annotator") or Path(inner).stem)
            spans = _spans(obj, number)
            if isinstance(spans, str):
                malformed(corpus, name, number, f"record of {doc}: {spans}", "record left out; correct the line", doc=doc, annotator=who)
                continue
            if not first_record(corpus, seen, wanted, doc, who, name, f"line {number}"):
                continue
            if isinstance(obj.get("text"), str):
                put_document(corpus, doc, obj["text"], name)
            records.append(_Record(name, number, doc, who, spans))
    _texts(corpus, records, texts, base, encoding)
    locators: dict[str, Locator] = {}
    for rec in records:
        text = corpus.documents[rec.doc].text
        if text is not None and rec.doc not in locators:
            locators[rec.doc] = Locator(text, matching, float(threshold))
        _place(corpus, rec, layer, locators.get(rec.doc))
        corpus.submissions.append(Submission(rec.source, rec.annotator, rec.doc, GROUP, len(rec.spans)))
    return corpus


def _texts(corpus: Corpus, records: list[_Record], texts: Path | None, base: Path, encoding: str) -> None:
    """The documents without a text in their records: from ``<texts>/<doc>.txt`` (or none: reported by validation)."""
    wanted = {r.doc for r in records if r.doc not in corpus.documents}
    if not wanted:
        return
    if texts is None:
        raise AdapterError(f"the quote records of {', '.join(sorted(wanted)[:3])} hold no 'text': set [input] texts (a directory of <doc>.txt)")
    texts = Path(texts)
    if not texts.is_dir():
        raise AdapterError(f"[input] texts is not a directory: {texts}")
    read_texts(wanted, index_texts(texts, base, corpus), base, corpus, TEXT, encoding=encoding)


def _place(corpus: Corpus, rec: _Record, layer: str, locator: Locator | None) -> None:
    """Every span of a record placed in its document (or counted and reported)."""
    if locator is not None:
        locator.expect(q.quote for q in rec.spans if q.quote is not None and q.start is None and q.end is None)
    for q in rec.spans:
        where = {"file": rec.source, "record": q.record, "doc": rec.doc, "group": GROUP, "annotator": rec.annotator, "layer": layer}
        span = Span(rec.annotator, rec.doc, GROUP, q.record, layer, 0, -1, -1, label=q.label, source=rec.source, line=rec.line)
        if q.start is not None or q.end is not None:  # offsets given: validation checks them
            begin, end = _int(q.start), _int(q.end)
            if begin is None or end is None:
                corpus.findings.append(finding("offset-invalid", f"offsets {q.start!r}, {q.end!r} are not non-negative integers",
                                               "span left out", **where))
            else:
                span.begin, span.end = begin, end
            corpus.spans.append(span)
            continue
        if locator is None:  # no text: validation reports the span (raw-text-missing)
            span.begin = span.end = 0
            corpus.spans.append(span)
            continue
        assert q.quote is not None
        found = locator.locate(q.quote, q.occurrence, q.hint)
        code = QUOTE_CODES[found.outcome]
        span.attrs["quote"] = q.quote
        if found.outcome == NOT_FOUND:
            span.attrs[UNPLACED] = code
            why = f"; {found.note}" if found.note else ""
            corpus.findings.append(finding(code, f"{_shown(q.quote)} is not in the text of {rec.doc}" + _how(q, locator.matching) + why,
                                           "span left out; correct the quote, or give start and end", **where))
        else:
            span.begin, span.end = found.begin, found.end
            corpus.findings.append(finding(code, _message(q, found.outcome, found.begin, found.end, found.score, found.places),
                                           _action(found.outcome), **where))
        corpus.spans.append(span)


def _how(q: _Quote, matching: str) -> str:
    steps = {EXACT: "exactly", NORMALIZED: "exactly or normalized", FUZZY: "exactly, normalized or fuzzily"}[matching]
    extra = f" as occurrence {q.occurrence}" if q.occurrence is not None else ""
    return f"{extra} (searched {steps})"


def _shown(quote: str | None, most: int = 200) -> str:
    """A quote for a message: its first ``most`` characters and how many more."""
    if quote is None or len(quote) <= most:
        return repr(quote)
    return f"{quote[:most]!r}… ({len(quote):,} characters)"


def _message(q: _Quote, outcome: str, begin: int, end: int, score: float | None, places: int) -> str:
    text = f"{_shown(q.quote)} at {begin}-{end}: {outcome}"
    if score is not None:
        text += f", score {score:g}"
    if places > 1:
        text += f", one of {places} places"
    return text


def _action(outcome: str) -> str:
    return {
        EXACT: "placed",
        NORMALIZED: "placed (whitespace, quotes, dashes or case differ)",
        FUZZY: "placed at the best fuzzy match; check it",
        AMBIGUOUS: "placed at the first place not yet used (left to right); give occurrence or hint to choose",
    }[outcome]


ADAPTER = Adapter(
    name="quotes",
    description="quoted text + label per span (JSONL, e.g. model outputs), located in the text: exact, normalized, fuzzy",
    read=read,
    suffixes=(".jsonl",),
    text=TEXT,
    options={
        "annotations": Option("path", None, "a .jsonl file of quote records, or a directory of them (one per annotator or run)",
                              example="quotes", required=True),
        "texts": Option("path", None, "directory of <doc>.txt for records without a 'text'", example="texts"),
        "layer": Option("str", "Entity", "layer name of the spans", example="NER"),
        "matching": Option("str", FUZZY, "how far the search for a quote goes: exact, normalized (whitespace, quotes, dashes, "
                           "case) or fuzzy (rapidfuzz)", choices=MATCHING),
        "threshold": Option("float", 85.0, "the least fuzzy score (0-100) a quote's best match must reach"),
        "encoding": Option("str", TEXT.encoding, "encoding of the files"),
        "annotators": Option("list", None, "only these annotators (and expect all of them)", example=["ann1", "gpt-run1"]),
    },
    traits=replace(SPAN_TRAITS, layers=("Entity",)),
)
