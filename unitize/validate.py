"""Format-independent validation: offsets against texts, and RAT's cross-annotator rules.

RAT (Yalçınkaya 2010, §5.4) excluded an annotation file when its raw text was
missing, or when annotators had different numbers of annotations for the same
source file. Here every such decision is a report row, and the rules can be
relaxed (keep a document whose annotator is missing, with that annotator null).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from .adapters._safe import MAX_LABEL_CHARS
from .findings import UNPLACED, finding, span_finding
from .model import Absent, Corpus, Finding, Span, Submission, Universe
from .text import collapse_whitespace


@dataclass
class Validation:
    """The outcome of validating a corpus.

    ``fate[i]`` is ``None`` when span ``i`` of the corpus may be unitized, else
    the code of the finding that left it out. ``universe[group][doc]`` is the set
    of annotators missing for that document (empty when all are present); a
    document absent from ``universe[group]`` is excluded from that group.
    ``annotators[group]`` are the annotators expected in the group (the study's annotators).
    """

    findings: list[Finding] = field(default_factory=list)
    fate: list[str | None] = field(default_factory=list)
    universe: Universe = field(default_factory=dict)
    annotators: dict[str, list[str]] = field(default_factory=dict)


def check_spans(corpus: Corpus, *, boundaries: bool = False) -> tuple[list[Finding], list[str | None]]:
    """Check every span's offsets against its document's text; return findings and fates.

    With ``boundaries``, spans that begin or end inside a word or on whitespace
    are reported too (for formats that store no text copy to check against).
    """
    findings: list[Finding] = []
    fate: list[str | None] = [None] * len(corpus.spans)
    docs = corpus.documents
    for i, span in enumerate(corpus.spans):
        if not span.valid:
            fate[i] = span.attrs.get(UNPLACED, "offset-invalid")  # the adapter reported it
            continue
        if span.label is not None and len(span.label) > MAX_LABEL_CHARS:
            fate[i] = "label-too-long"
            findings.append(
                span_finding(
                    "label-too-long",
                    span,
                    f"label of {len(span.label):,} characters (more than {MAX_LABEL_CHARS:,}): {_short(span.label)!r}",
                    "span left out; a label is a category name: check the record",
                )
            )
            continue
        doc = docs.get(span.doc_id)
        text = doc.text if doc is not None else None
        if text is None:
            fate[i] = "raw-text-missing"
            if span.stored_text is not None and span.begin <= span.end:
                stored = collapse_whitespace(span.stored_text)
                if len(stored) > span.end - span.begin:
                    findings.append(
                        span_finding(
                            "text-length-mismatch",
                            span,
                            f"stored text ({len(stored)} characters after collapsing whitespace) is longer "
                            f"than its offsets {span.begin}..{span.end} allow",
                            "reported only (no raw text to check against)",
                        )
                    )
            if span.begin > span.end:
                findings.append(_offset_finding(span, None))
            continue
        if span.begin > span.end or span.end > len(text):
            fate[i] = "offset-invalid"
            findings.append(_offset_finding(span, len(text)))
            continue
        if boundaries:
            problem = boundary_problem(text, span.begin, span.end)
            if problem:
                findings.append(
                    span_finding(
                        "span-boundary",
                        span,
                        f"{_span_name(span)} {span.begin}..{span.end} (line {span.line}) {problem}: "
                        f"{_short(text[span.begin : span.end])!r}",
                        "kept; check the offsets (word units snap a cut word to the whole word)",
                    )
                )
        if span.stored_text is not None and span.stored_text != text[span.begin : span.end]:
            # equal copies (the usual case) need no collapsing
            stored = collapse_whitespace(span.stored_text)
            actual = collapse_whitespace(text[span.begin : span.end])
            if stored != actual:
                findings.append(
                    span_finding(
                        "text-mismatch",
                        span,
                        f"stored text {_short(stored)!r} differs from the raw text {_short(actual)!r} "
                        f"at {span.begin}..{span.end}",
                        "kept; the offsets are used",
                    )
                )
    return findings, fate


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


def apply_rules(
    corpus: Corpus,
    fate: list[str | None],
    *,
    annotators: list[str] | None = None,
    keep_missing: bool = False,
    keep_mismatched: bool = False,
    per_document: bool = False,
    count_rule: bool = True,
) -> tuple[list[Finding], Universe, dict[str, list[str]]]:
    """Decide, per (group, document), whether it enters the matrices (RAT's rules).

    The study's annotators are ``annotators`` when given, else every annotator
    with a submission anywhere in the corpus; each is expected in every group, so
    an annotator with no file at all for a group is missing there too. Marks the fates of spans of
    excluded documents in place. ``per_document`` (crowd data: each document has
    its own few annotators) keeps every document with no annotator-missing
    finding: an annotator without a submission for a document was not assigned
    it, and is missing there; ``count_rule=False``
    (entity-style formats, where counts differ by nature) skips the
    relation-count rule.
    """
    findings: list[Finding] = []
    by_key: dict[tuple[str, str], dict[str, Submission]] = defaultdict(dict)
    for sub in corpus.submissions:
        by_key[(sub.group, sub.doc_id)][sub.annotator] = sub
    study = sorted(annotators) if annotators else sorted({sub.annotator for sub in corpus.submissions})
    expected = {group: study for group, _ in by_key}
    studied = frozenset(study)

    universe: Universe = defaultdict(dict)
    excluded: dict[tuple[str, str], str] = {}
    docs = corpus.documents
    for (group, doc_id), subs in sorted(by_key.items()):
        doc = docs.get(doc_id)
        if doc is None or doc.text is None:
            reason = "no raw text was found" if doc is None or doc.source is None else "its raw text could not be read or decoded"
            for annotator, sub in sorted(subs.items()):
                findings.append(
                    finding(
                        "raw-text-missing",
                        f"document {doc_id}: {reason}",
                        f"file left out of group {group}; put {doc_id}.txt in the texts directory",
                        file=sub.source,
                        doc=doc_id,
                        group=group,
                        annotator=annotator,
                    )
                )
            excluded[(group, doc_id)] = "raw-text-missing"
            continue
        missing: AbstractSet[str] = Absent(studied, frozenset(subs)) if per_document else frozenset(a for a in expected[group] if a not in subs)
        if missing and not per_document:
            names = ", ".join(sorted(missing))
            if keep_missing:
                for annotator in sorted(missing):
                    findings.append(
                        finding(
                            "annotator-missing",
                            f"annotator {annotator} has no file for document {doc_id}, group {group}",
                            "document kept; that annotator's column is null for it",
                            doc=doc_id,
                            group=group,
                            annotator=annotator,
                        )
                    )
            else:
                for annotator, sub in sorted(subs.items()):
                    findings.append(
                        finding(
                            "annotator-missing",
                            f"no file from {names} for document {doc_id}, group {group}; other annotators have one",
                            f"file left out of group {group} (RAT rule); use keep_missing to keep it",
                            file=sub.source,
                            doc=doc_id,
                            group=group,
                            annotator=annotator,
                        )
                    )
                excluded[(group, doc_id)] = "annotator-missing"
                continue
        counts = {a: s.records for a, s in subs.items()}
        if count_rule and len(set(counts.values())) > 1:
            listing = ", ".join(f"{a} {n}" for a, n in sorted(counts.items()))
            keep = keep_mismatched
            for annotator, sub in sorted(subs.items()):
                findings.append(
                    finding(
                        "relation-count-mismatch",
                        f"relations per annotator for document {doc_id}, group {group}: {listing}",
                        "kept (keep_mismatched)"
                        if keep
                        else f"file left out of group {group} (RAT rule); use keep_mismatched to keep it",
                        file=sub.source,
                        doc=doc_id,
                        group=group,
                        annotator=annotator,
                    )
                )
            if not keep:
                excluded[(group, doc_id)] = "relation-count-mismatch"
                continue
        universe[group][doc_id] = missing

    if excluded:
        for i, span in enumerate(corpus.spans):
            code = excluded.get((span.group, span.doc_id))
            if code is not None and fate[i] is None:
                fate[i] = code
    return findings, dict(universe), expected


def validate(
    corpus: Corpus,
    *,
    annotators: list[str] | None = None,
    keep_missing: bool = False,
    keep_mismatched: bool = False,
    boundaries: bool = False,
    per_document: bool = False,
    count_rule: bool = True,
) -> Validation:
    """Run every check; the corpus itself is not changed."""
    span_findings, fate = check_spans(corpus, boundaries=boundaries)
    rule_findings, universe, expected = apply_rules(
        corpus,
        fate,
        annotators=annotators,
        keep_missing=keep_missing,
        keep_mismatched=keep_mismatched,
        per_document=per_document,
        count_rule=count_rule,
    )
    return Validation(
        findings=corpus.findings + span_findings + rule_findings,
        fate=fate,
        universe=universe,
        annotators=expected,
    )
