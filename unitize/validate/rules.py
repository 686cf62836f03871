"""RAT's cross-annotator rules: which (group, document) enters the matrices, and who is missing where.

RAT (Yalçınkaya 2010, §5.4) excluded an annotation file when its raw text was
missing, or when annotators had different numbers of annotations for the same
source file. Here every such decision is a report row, and the rules can be
relaxed (keep a document whose annotator is missing, with that annotator null).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..model import Absent, Corpus, Finding, Submission, Universe
from ..model.findings import finding
from .offsets import check_spans

#: more (document, annotator) pairs without a submission than this, with every annotator expected on every document,
#: is a study whose documents each have their own annotators: refused, as its report would hold a row for each pair
MISSING_PAIRS_BOUND = 1_000_000
#: annotators named in one annotator-missing message; the rest are counted
NAMES_SHOWN = 10


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
    by_key = _submissions_by_document(corpus)
    study = sorted(annotators) if annotators else sorted({sub.annotator for sub in corpus.submissions})
    expected = {group: study for group, _ in by_key}
    studied = frozenset(study)
    if not per_document:
        _refuse_crowd(by_key, studied)

    universe: defaultdict[str, dict[str, AbstractSet[str]]] = defaultdict(dict)
    excluded: dict[tuple[str, str], str] = {}
    docs = corpus.documents
    for (group, doc_id), subs in sorted(by_key.items()):
        doc = docs.get(doc_id)
        if doc is None or doc.text is None:
            reason = "no raw text was found" if doc is None or doc.source is None else "its raw text could not be read or decoded"
            findings += _each_file(subs, "raw-text-missing", f"document {doc_id}: {reason}",
                                   f"file left out of group {group}; put {doc_id}.txt in the texts directory", doc_id, group)
            excluded[(group, doc_id)] = "raw-text-missing"
            continue
        missing: AbstractSet[str] = Absent(studied, subs) if per_document else frozenset(a for a in expected[group] if a not in subs)
        if missing and not per_document:
            findings += _missing(subs, missing, doc_id, group, keep_missing)
            if not keep_missing:
                excluded[(group, doc_id)] = "annotator-missing"
                continue
        counts = {a: s.records for a, s in subs.items()}
        if count_rule and len(set(counts.values())) > 1:
            listing = ", ".join(f"{a} {n}" for a, n in sorted(counts.items()))
            action = "kept (keep_mismatched)" if keep_mismatched else f"file left out of group {group} (RAT rule); use keep_mismatched to keep it"
            findings += _each_file(subs, "relation-count-mismatch", f"relations per annotator for document {doc_id}, group {group}: {listing}",
                                   action, doc_id, group)
            if not keep_mismatched:
                excluded[(group, doc_id)] = "relation-count-mismatch"
                continue
        universe[group][doc_id] = missing
    _mark_excluded(corpus, fate, excluded)
    return findings, dict(universe), expected


def _submissions_by_document(corpus: Corpus) -> dict[tuple[str, str], dict[str, Submission]]:
    """Per (group, document): each annotator's submission."""
    by_key: dict[tuple[str, str], dict[str, Submission]] = defaultdict(dict)
    for sub in corpus.submissions:
        by_key[(sub.group, sub.doc_id)][sub.annotator] = sub
    return by_key


def _refuse_crowd(by_key: dict[tuple[str, str], dict[str, Submission]], studied: frozenset[str]) -> None:
    """Refuse a study that expects every annotator on every document when most of them have none of its documents
    (crowd data read with ``assignment = "all"``): millions of annotator-missing rows help no one."""
    present = sum(len(studied.intersection(subs)) for subs in by_key.values())
    missing = len(by_key) * len(studied) - present
    if missing > MISSING_PAIRS_BOUND:
        raise ConfigError(
            f"every one of the {len(studied):,} annotators is expected on each of the {len(by_key):,} documents, but {missing:,} "
            f"of those {len(by_key) * len(studied):,} (document, annotator) pairs have no submission ({present / len(by_key):.1f} "
            f"annotators per document on average). Each document has its own annotators here: "
            f'set [unitize] assignment = "per-document" (or leave it "auto" with a roster), so an annotator without a '
            f"document was not assigned it, rather than missing from it")


def _each_file(subs: dict[str, Submission], code: str, message: str, action: str, doc_id: str, group: str) -> list[Finding]:
    """One finding per annotator's file of a (group, document), in annotator order."""
    return [finding(code, message, action, file=sub.source, doc=doc_id, group=group, annotator=annotator)
            for annotator, sub in sorted(subs.items())]


def _missing(subs: dict[str, Submission], missing: AbstractSet[str], doc_id: str, group: str, keep_missing: bool) -> list[Finding]:
    """``annotator-missing``: one finding per missing annotator when the document is kept, else one per file left out."""
    if keep_missing:
        return [finding("annotator-missing", f"annotator {annotator} has no file for document {doc_id}, group {group}",
                        "document kept; that annotator's column is null for it", doc=doc_id, group=group, annotator=annotator)
                for annotator in sorted(missing)]
    names = _listed(sorted(missing))
    return _each_file(subs, "annotator-missing", f"no file from {names} for document {doc_id}, group {group}; other annotators have one",
                      f"file left out of group {group} (RAT rule); use keep_missing to keep it", doc_id, group)


def _listed(names: list[str]) -> str:
    """Names joined by commas, the first :data:`NAMES_SHOWN` of a longer list followed by how many more there are."""
    if len(names) <= NAMES_SHOWN:
        return ", ".join(names)
    return f"{', '.join(names[:NAMES_SHOWN])} and {len(names) - NAMES_SHOWN:,} more"


def _mark_excluded(corpus: Corpus, fate: list[str | None], excluded: dict[tuple[str, str], str]) -> None:
    """The spans of an excluded (group, document) that were still to be unitized take its exclusion's code."""
    if not excluded:
        return
    for i, span in enumerate(corpus.spans):
        code = excluded.get((span.group, span.doc_id))
        if code is not None and fate[i] is None:
            fate[i] = code


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
