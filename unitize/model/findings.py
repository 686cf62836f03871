"""Stable finding codes of the validation report and helpers to make findings."""

from __future__ import annotations

from .corpus import Finding, Span
from .text import natural_key

ERROR = "error"
WARNING = "warning"
INFO = "info"

#: code -> (severity, what it means). Codes are a public contract: never rename one.
CODES: dict[str, tuple[str, str]] = {
    "file-unreadable": (ERROR, "an input file or folder could not be read or parsed (malformed XML, empty file, wrong root, no permission)"),
    "filename-pattern": (ERROR, "a file name does not match the configured pattern, leaves a part empty, or is not UTF-8"),
    "duplicate-file": (ERROR, "two annotation files for the same (document, annotator, group)"),
    "raw-text-missing": (ERROR, "no raw text file for a document that has annotations"),
    "encoding-error": (ERROR, "a raw text could be decoded neither as UTF-8 nor with the fallback encoding"),
    "encoding-fallback": (INFO, "a raw text was not UTF-8 and was decoded with the fallback encoding"),
    "duplicate-text": (WARNING, "two raw text files for one document id; the first in path order is used"),
    "offset-invalid": (ERROR, "a span's offsets are missing, not integers, negative, reversed or past the end of the text"),
    "text-mismatch": (WARNING, "a span's stored text differs from the raw text slice (offsets win)"),
    "text-length-mismatch": (WARNING, "without the raw text, a span's stored text is longer than its offsets allow"),
    "unknown-element": (INFO, "an element the format reader does not know; kept in the record's attrs"),
    "annotator-missing": (WARNING, "an annotator has no file for a (document, group) that other annotators have"),
    "relation-count-mismatch": (WARNING, "annotators have different numbers of records for one (document, group)"),
    "discontinuous-dropped": (WARNING, "a discontinuous element left out (discontinuous = \"drop\")"),
    "empty-segment": (WARNING, "a segment that covers no coding unit (zero length, or whitespace only for word units)"),
    "word-snapped": (INFO, "a selection that cuts a word was extended to whole words"),
    "segments-merged": (INFO, "overlapping segments of one annotator in one layer were merged into one"),
    "span-missing": (WARNING, "a relation without an Arg1 or Arg2 span (a placeholder or rejected relation); kept without it"),
    "token-offsets-missing": (ERROR, "token indices that cannot be mapped to characters (no parses.json, or an index past its tokens)"),
    "span-boundary": (WARNING, "a span begins or ends inside a word or on whitespace (checked for formats that store no text copy)"),
    "not-convertible": (WARNING, "format conversion: a span or attribute the target format cannot hold was not written"),
    "text-changed": (INFO, "format conversion: the target rebuilds a document's text and cannot keep it exactly (TSV ends it with a line break)"),
    "record-malformed": (ERROR, "a record (line, row, JSON object) of an annotation file could not be parsed"),
    "fragments-overlap": (WARNING, "fragments of one discontinuous annotation overlap each other"),
    "text-copy-differs": (WARNING, "annotators' copies of one document's text differ; the first copy is used"),
    "duplicate-record": (ERROR, "a second annotation record for the same (document, annotator)"),
    "labels-ignored": (WARNING, "the spans carry several labels but no setting has the labels mode: the matrices ignore which label a span has"),
    "tag-sequence": (WARNING, "a BIO tag that does not continue a span of its type (I- without B-); read as a span start"),
    # quotes located in the text (format quotes): every quote's outcome
    "quote-exact": (INFO, "a quote found verbatim in the text"),
    "quote-normalized": (INFO, "a quote found once whitespace, typographic quotes and dashes, and case were normalized"),
    "quote-fuzzy": (WARNING, "a quote placed at its best fuzzy match (the message gives the score)"),
    "quote-ambiguous": (WARNING, "a quote found at several places with nothing saying which; placed by the left-to-right rule"),
    "quote-not-found": (ERROR, "a quote found nowhere in the text (exactly, normalized or fuzzily, as far as [input] matching goes)"),
    # flat labels (items × annotators)
    "item-set-mismatch": (WARNING, "an annotator file lacks items other annotator files have (null for that annotator)"),
    "duplicate-label": (INFO, "the same (group, item, annotator) label given twice with the same value; kept once"),
    "conflicting-labels": (ERROR, "one (group, item, annotator) given different labels; the cell is left null"),
    "label-undeclared": (ERROR, "a label outside the values declared for its group; the cell is left null"),
    "label-not-numeric": (ERROR, "a label of an ordinal or interval group that is not a number nor a declared value; left null"),
    "label-too-long": (ERROR, "a label longer than the bound (1,000 characters; flat labels: max_label_chars): the span left out, the cell left null"),
    "label-not-applicable": (WARNING, "a label for a conditional group the annotator's upper-level answer did not open; set to not applicable"),
    "not-applicable": (INFO, "a conditional group does not apply to an item for some annotators (their upper-level answer did not open it)"),
    "items-kept": (INFO, "how many items of a group every annotator labelled, and how many the item-set choice keeps"),
}

#: findings whose rows take span records out of the output (for the accounting invariant)
EXCLUDING = {
    "file-unreadable",
    "filename-pattern",
    "duplicate-file",
    "raw-text-missing",
    "encoding-error",
    "offset-invalid",
    "annotator-missing",
    "relation-count-mismatch",
    "discontinuous-dropped",
    "empty-segment",
    "token-offsets-missing",
    "record-malformed",
    "duplicate-record",
    "quote-not-found",
    "label-too-long",
}

#: a quote's outcome (:data:`unitize.adapters.locate.OUTCOMES`) -> its finding code
QUOTE_CODES = {outcome: f"quote-{outcome}" for outcome in ("exact", "normalized", "fuzzy", "ambiguous", "not-found")}
QUOTE_OUTCOME = {code: outcome for outcome, code in QUOTE_CODES.items()}
#: the attribute of a span its adapter could not place: the finding code that says why (the span's fate)
UNPLACED = "unplaced"


def finding(code: str, message: str, action: str, **where: str | None) -> Finding:
    """Make a finding with the severity registered for ``code``."""
    severity, _ = CODES[code]
    return Finding(code=code, severity=severity, message=message, action=action, **where)


def span_finding(code: str, span: Span, message: str, action: str, *, unit: str | None = None, record: str | None = None) -> Finding:
    """A finding about one span record, located by its file, record, document, group, annotator and layer."""
    return finding(
        code,
        message,
        action,
        file=span.source,
        record=record if record is not None else span.record,
        doc=span.doc_id,
        group=span.group,
        annotator=span.annotator,
        layer=span.layer,
        unit=unit,
    )


def sort_key(f: Finding) -> tuple:
    """A total, stable order for report rows (so report.jsonl is byte-identical across runs)."""
    return (
        f.unit or "",
        f.group or "",
        f.doc or "",
        f.file or "",
        f.annotator or "",
        f.layer or "",
        _natural(f.record),
        f.code,
        f.message,
    )


def _natural(record: str | None) -> tuple:
    if record is None:
        return (0,)
    return (1, natural_key(record.split("/", 1)[0]), record)


def count_by_severity(findings: list[Finding]) -> dict[str, int]:
    counts = {ERROR: 0, WARNING: 0, INFO: 0}
    for f in findings:
        counts[f.severity] += 1
    return counts


def top_codes(findings: list[Finding], limit: int = 5) -> list[str]:
    """The most frequent finding codes, each with its count and its first message, one line each."""
    counts: dict[str, int] = {}
    first: dict[str, Finding] = {}
    for f in findings:
        counts[f.code] = counts.get(f.code, 0) + 1
        first.setdefault(f.code, f)
    return ranked_codes(counts, first, limit)


def ranked_codes(counts: dict[str, int], first: dict[str, Finding], limit: int = 5) -> list[str]:
    """:func:`top_codes` from each code's count and first finding (codes of equal counts in the order of ``counts``)."""
    ranked = sorted(counts, key=lambda code: -counts[code])[:limit]

    def where(f: Finding) -> str:
        return f"{f.file}: " if f.file else ""

    return [f"{code} ×{counts[code]:,}, e.g. {where(first[code])}{first[code].message}" for code in ranked]
