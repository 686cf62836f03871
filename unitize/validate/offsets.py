"""Offsets checked against the texts: a span whose offsets cannot be placed is left out, with a finding.

Every span of a corpus gets a *fate*: ``None`` when it may be unitized, else the code of the
finding that left it out (``offset-invalid``, ``raw-text-missing``, ``label-too-long``, or what the
adapter reported). A stored text copy that differs from the raw text, or (for formats without
one) a span that begins or ends inside a word, is reported and kept.
"""

from __future__ import annotations

from ..adapters._safe import MAX_LABEL_CHARS
from ..model import Corpus, Document, Finding, Span
from ..model.findings import UNPLACED, span_finding
from ..model.text import collapse_whitespace


def check_spans(corpus: Corpus, *, boundaries: bool = False) -> tuple[list[Finding], list[str | None]]:
    """Check every span's offsets against its document's text; return findings and fates.

    With ``boundaries``, spans that begin or end inside a word or on whitespace
    are reported too (for formats that store no text copy to check against).
    """
    findings: list[Finding] = []
    docs = corpus.documents
    held: dict[str, Document | None] = {}  # each document looked up once (a text table makes one when asked)
    fate = []
    for span in corpus.spans:
        if span.doc_id not in held:
            held[span.doc_id] = docs.get(span.doc_id)
        fate.append(check_span(span, held[span.doc_id], findings, boundaries=boundaries))
    return findings, fate


def check_span(span: Span, doc: Document | None, findings: list[Finding], *, boundaries: bool = False) -> str | None:
    """One span's fate (``None``: it may be unitized); what is worth saying about it is added to ``findings``."""
    if not span.valid:
        return span.attrs.get(UNPLACED, "offset-invalid")  # the adapter reported it
    if span.label is not None and len(span.label) > MAX_LABEL_CHARS:
        findings.append(span_finding(
            "label-too-long", span,
            f"label of {len(span.label):,} characters (more than {MAX_LABEL_CHARS:,}): {_short(span.label)!r}",
            "span left out; a label is a category name: check the record",
        ))
        return "label-too-long"
    text = doc.text if doc is not None else None
    if text is None:
        findings.extend(_without_text(span))
        return "raw-text-missing"
    if span.begin > span.end or span.end > len(text):
        findings.append(_offset_finding(span, len(text)))
        return "offset-invalid"
    if boundaries:
        problem = boundary_problem(text, span.begin, span.end)
        if problem:
            findings.append(span_finding(
                "span-boundary", span,
                f"{_span_name(span)} {span.begin}..{span.end} (line {span.line}) {problem}: {_short(text[span.begin : span.end])!r}",
                "kept; check the offsets (word units snap a cut word to the whole word)",
            ))
    mismatch = _stored_text_mismatch(span, text)
    if mismatch is not None:
        findings.append(mismatch)
    return None


def _without_text(span: Span) -> list[Finding]:
    """What can still be said of a span whose document has no raw text: its own offsets and stored copy."""
    out = []
    if span.stored_text is not None and span.begin <= span.end:
        stored = collapse_whitespace(span.stored_text)
        if len(stored) > span.end - span.begin:
            out.append(span_finding(
                "text-length-mismatch", span,
                f"stored text ({len(stored)} characters after collapsing whitespace) is longer than its offsets "
                f"{span.begin}..{span.end} allow",
                "reported only (no raw text to check against)",
            ))
    if span.begin > span.end:
        out.append(_offset_finding(span, None))
    return out


def _stored_text_mismatch(span: Span, text: str) -> Finding | None:
    """A ``text-mismatch`` finding when the span's stored copy differs from the raw text (whitespace aside)."""
    if span.stored_text is None or span.stored_text == text[span.begin : span.end]:
        return None  # equal copies (the usual case) need no collapsing
    stored = collapse_whitespace(span.stored_text)
    actual = collapse_whitespace(text[span.begin : span.end])
    if stored == actual:
        return None
    return span_finding(
        "text-mismatch", span,
        f"stored text {_short(stored)!r} differs from the raw text {_short(actual)!r} at {span.begin}..{span.end}",
        "kept; the offsets are used",
    )


def boundary_problem(text: str, begin: int, end: int) -> str | None:
    """Why ``text[begin:end]`` has an odd boundary (starts or ends inside a word, or on whitespace), or ``None``."""
    if begin >= end:
        return None
    problems = []
    if text[begin].isspace():
        problems.append("starts on whitespace")
    elif begin > 0 and text[begin - 1].isalnum() and text[begin].isalnum():
        problems.append("starts inside a word")
    if text[end - 1].isspace():
        problems.append("ends on whitespace")
    elif end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        problems.append("ends inside a word")
    return " and ".join(problems) or None


def _short(s: str, limit: int = 60) -> str:
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _span_name(span: Span) -> str:
    """How a message names a span: ``Arg1 span``, ``Entity span``; a layer named span is not said twice."""
    return "span" if span.layer.lower() == "span" else f"{span.layer} span"


def _offset_finding(span: Span, length: int | None) -> Finding:
    if span.begin > span.end:
        problem = f"begin {span.begin} is after end {span.end}"
    else:
        problem = f"offsets {span.begin}..{span.end} run past the end of the text ({length} characters)"
    return span_finding(
        "offset-invalid",
        span,
        f"{_span_name(span)} {span.fragment + 1} (line {span.line}): {problem}",
        "span left out; correct its offsets (is the raw text the one that was annotated?)",
    )
