"""Every annotator expected on every document: the bounds that keep a crowd read that way from flooding the report."""

from __future__ import annotations

import pytest

from unitize.errors import ConfigError
from unitize.model import Corpus, Document, Submission
from unitize.validate import rules


def names(annotators: int) -> list[str]:
    return [f"w{i:03d}" for i in range(annotators)]


def crowd(docs: int, annotators: int, per_doc: int) -> Corpus:
    """``docs`` documents, each with submissions of ``per_doc`` of ``annotators`` annotators, in turn."""
    workers = names(annotators)
    subs = [Submission(f"{workers[(d + k) % annotators]}.csv", workers[(d + k) % annotators], f"d{d}", "all", 1)
            for d in range(docs) for k in range(per_doc)]
    return Corpus(format="span-table", documents={f"d{d}": Document(f"d{d}", "text") for d in range(docs)}, submissions=subs)


def test_a_crowd_read_with_every_annotator_expected_is_refused_with_the_figures(monkeypatch):
    monkeypatch.setattr(rules, "MISSING_PAIRS_BOUND", 100)
    corpus = crowd(docs=20, annotators=40, per_doc=3)  # 800 expected pairs, 60 present
    with pytest.raises(ConfigError) as caught:
        rules.apply_rules(corpus, [], annotators=names(40), keep_missing=True)
    message = str(caught.value)
    assert "every one of the 40 annotators is expected on each of the 20 documents" in message
    assert "740 of those 800 (document, annotator) pairs have no submission (3.0 annotators per document" in message
    assert 'assignment = "per-document"' in message


def test_per_document_assignment_and_a_study_under_the_bound_are_not_refused(monkeypatch):
    monkeypatch.setattr(rules, "MISSING_PAIRS_BOUND", 740)
    corpus = crowd(docs=20, annotators=40, per_doc=3)
    findings, universe, _ = rules.apply_rules(corpus, [], annotators=names(40), keep_missing=True)  # exactly at the bound
    assert len([f for f in findings if f.code == "annotator-missing"]) == 740
    assert len(universe["all"]) == 20
    monkeypatch.setattr(rules, "MISSING_PAIRS_BOUND", 0)
    findings, universe, _ = rules.apply_rules(corpus, [], annotators=names(40), per_document=True)
    assert findings == [] and len(universe["all"]) == 20


def test_an_excluded_file_names_ten_missing_annotators_and_counts_the_rest():
    corpus = crowd(docs=1, annotators=14, per_doc=2)  # w000, w001 present; 12 missing
    findings, universe, _ = rules.apply_rules(corpus, [], annotators=names(14))
    assert universe == {}
    assert [f.annotator for f in findings] == ["w000", "w001"]
    assert findings[0].message == (
        "no file from w002, w003, w004, w005, w006, w007, w008, w009, w010, w011 and 2 more for document d0, group all; "
        "other annotators have one")
    corpus = crowd(docs=1, annotators=12, per_doc=2)  # 10 missing: every name
    findings, _, _ = rules.apply_rules(corpus, [], annotators=names(12))
    assert findings[0].message.startswith("no file from w002, w003, w004, w005, w006, w007, w008, w009, w010, w011 for document d0")
