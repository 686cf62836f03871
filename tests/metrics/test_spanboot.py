"""Bootstrap intervals of the segment measures (documents resampled, unitize/agree/spanboot.py):
each replicate equals the measure recomputed on the drawn documents laid end to end, the intervals
are seeded and recorded, and they cover a known agreement about as often as they claim."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import unitizations
from tests.metrics.test_unitizing import placed
from unitize.agree import Options, measure
from unitize.metrics import spanboot as B
from unitize.metrics import spanf1, unitizing
from unitize.metrics.alphau import in_order, stretches


def _category(units, length, starts):
    """One category's per-annotator (begins, ends), all values together."""
    return [(np.array([b for b, _, _ in u], np.int64), np.array([e for _, e, _ in u], np.int64)) for u in units]


def _concatenated(p, order):
    """The documents of ``p`` in ``order`` (repeats allowed) laid end to end, as a new Placed."""
    sizes, doc = p.doc_lengths, p.doc
    rows, starts, at = [], [], 0
    for d in order:
        starts.append(at)
        mine = np.flatnonzero(doc == d)
        rows += [(p.annotator[i], p.begin[i] - p.starts[d] + at, p.end[i] - p.starts[d] + at, p.value[i]) for i in mine]
        at += int(sizes[d])
    units = [[(int(b), int(e), p.values[v]) for a, b, e, v in rows if a == k] for k in range(len(p.annotators))]
    return placed(units, at, starts)


@settings(max_examples=150, deadline=None)
@given(unitizations(max_docs=4), st.integers(0, 10**6))
def test_alpha_u_replicate_is_alpha_u_of_the_drawn_documents_in_order(study, seed):
    units, length, starts = study
    docs = stretches(_category(units, length, starts), length, np.array(starts))
    cat = B._Category(docs)
    rng = np.random.default_rng(seed)
    idx = np.stack([np.arange(len(docs)), rng.integers(0, len(docs), len(docs)), rng.integers(0, len(docs), len(docs))])
    d_o, d_e = cat.disagreements(idx)
    cat.cross = None  # the path for many documents: no documents × documents table
    np.testing.assert_allclose(cat.disagreements(idx), (d_o, d_e), rtol=1e-9, atol=1e-12)
    with pytest.MonkeyPatch.context() as mp:  # many documents: no table of the pairs' short gaps; products in blocks of one row
        mp.setattr(B, "_PAIR_TABLE", 0)
        mp.setattr(B, "_SINGLE_THREAD", 1)
        np.testing.assert_array_equal(B._Category(docs).disagreements(idx), (d_o, d_e))
    for r in range(idx.shape[0]):
        want = in_order([docs[i] for i in idx[r]]).disagreement()
        assert d_o[r] == pytest.approx(want.observed, rel=1e-9, abs=1e-12)
        assert d_e[r] == pytest.approx(want.expected, rel=1e-9, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(unitizations(max_docs=4))
def test_unitizing_replicates_are_the_family_on_the_weighted_documents(study):
    units, length, starts = study
    p = placed(units, length, starts)
    per = [s for _, s in unitizing.by_document(p)]
    order = [0, *range(len(per)), len(per) - 1]  # the first and last document drawn twice
    w = B.weights(np.array([np.arange(len(per)), order[: len(per)]]), len(per))
    again = unitizing.statistics(_concatenated(p, order[: len(per)]))
    for metric in unitizing.Variant:
        reps = B.unitizing_replicates(metric, per, w)
        for row, s in ((0, unitizing.statistics(p)), (1, again)):
            for v in metric.rows(s):
                got = reps[(None, v.label)][row]
                assert (math.isnan(got) and math.isnan(v.value)) or got == pytest.approx(v.value, rel=1e-9, abs=1e-9), metric


@settings(max_examples=100, deadline=None)
@given(unitizations(max_docs=4))
def test_f1_replicates_are_f1_of_the_weighted_documents(study):
    units, length, starts = study
    p = placed(units, length, starts)
    c = spanf1.counts(p)
    order = np.array([len(starts) - 1] * len(starts))  # the last document, every time
    again = spanf1.counts(_concatenated(p, order))
    w = B.weights(np.stack([np.arange(len(starts)), order]), len(starts))
    for metric in (spanf1.EXACT, spanf1.OVERLAP, spanf1.UNITS):
        reps = B.f1_replicates(c, metric, w, by_label=True)
        for row, counts in ((0, c), (1, again)):
            for v in spanf1.f1_rows(counts, metric, by_label=True):
                got = reps[(v.pair, v.label)][row]
                assert (math.isnan(got) and math.isnan(v.value)) or got == pytest.approx(v.value, abs=1e-12), (metric, v.pair, v.label)


def _study(rng, n_docs, copy):
    """Two annotators on documents of 20 positions: each marks one span of a value (x or y); the
    second copies the first's span and value with probability ``copy``, else marks its own at random."""
    units, starts = [[], []], []
    for d in range(n_docs):
        base = 20 * d
        starts.append(base)
        b = int(rng.integers(0, 15))
        first = (base + b, base + b + int(rng.integers(2, 6)), "xy"[int(rng.integers(0, 2))])
        units[0].append(first)
        if rng.random() < copy:
            units[1].append(first)
        else:
            b2 = int(rng.integers(0, 15))
            units[1].append((base + b2, base + b2 + int(rng.integers(2, 6)), "xy"[int(rng.integers(0, 2))]))
    return placed(units, 20 * n_docs, starts)


def test_document_bootstrap_coverage_on_synthetic_studies():
    """The 90% intervals of span F1 and uα cover the population value (a 20,000-document study's)
    in about 90% of 60-document studies."""
    rng = np.random.default_rng(7)
    big = _study(rng, 20_000, 0.6)
    truth = {"span-f1": spanf1.f1_rows(spanf1.counts(big), spanf1.EXACT)[0].value, "u-alpha": unitizing.u_alpha(unitizing.statistics(big)).value}
    hits = dict.fromkeys(truth, 0)
    runs = 150
    for i in range(runs):
        p = _study(rng, 60, 0.6)
        w = B.weights(B.draws(Options(replicates=300, seed=i), 60), 60)
        reps = {"span-f1": B.f1_replicates(spanf1.counts(p), spanf1.EXACT, w, False)[("a0|a1", None)],
                "u-alpha": B.unitizing_replicates(unitizing.Variant.U, [s for _, s in unitizing.by_document(p)], w)[(None, None)]}
        for metric, r in reps.items():
            low, high = np.percentile(r[np.isfinite(r)], [5, 95])
            hits[metric] += low <= truth[metric] <= high
    for metric, n in hits.items():
        assert 0.82 <= n / runs <= 0.97, (metric, n / runs)


def test_alpha_u_document_bootstrap_coverage():
    """The same for alpha-U, whose expected disagreement is rebuilt per replicate."""
    rng = np.random.default_rng(11)

    def alpha(p):
        docs = {c: stretches(u, p.length, p.starts) for c, u in _by_value(p).items()}
        return docs, 1 - sum(in_order(d).disagreement().observed for d in docs.values()) / sum(in_order(d).disagreement().expected for d in docs.values())

    _, truth = alpha(_study(rng, 5_000, 0.6))
    hits, runs = 0, 100
    for i in range(runs):
        docs, _ = alpha(_study(rng, 60, 0.6))
        r = B.alpha_u_replicates(docs, Options(replicates=300, seed=i))[(None, None)]
        low, high = np.percentile(r[np.isfinite(r)], [5, 95])
        hits += low <= truth <= high
    assert 0.8 <= hits / runs <= 0.98


def _by_value(p):
    groups = p.by_annotator()
    return {name: [(p.begin[g][p.value[g] == v], p.end[g][p.value[g] == v]) for g in groups] for v, name in enumerate(p.values)}


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    from tests.conftest import EXAMPLE
    from unitize.cli import main

    target = tmp_path_factory.mktemp("spanboot") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(target), "-q"]) == 0
    return target


SPAN = ["alpha-u", "u-alpha", "|u-alpha", "cu-alpha", "ku-alpha", "span-f1", "span-f1-overlap", "unit-f1"]


def test_segment_metrics_get_seeded_recorded_intervals(out):
    opts = Options(level=0.9, replicates=200, seed=3, method="bootstrap")
    rows = measure(out, SPAN, settings=["word-interval"], ci=opts, by_doc=True).to_pylist()
    again = measure(out, SPAN, settings=["word-interval"], ci=opts, by_doc=True).to_pylist()
    assert [(r["ci_low"], r["ci_high"]) for r in rows] == [(r["ci_low"], r["ci_high"]) for r in again]
    with_ci = [r for r in rows if r["ci_low"] is not None]
    assert {r["metric"] for r in with_ci} >= {"alpha-u", "u-alpha", "|u-alpha", "span-f1", "unit-f1"}
    assert not [r for r in with_ci if r["doc"] is not None]  # no interval per document
    for r in with_ci:
        record = json.loads(r["params"])["ci"]
        assert (record["level"], record["replicates"], record["seed"]) == (0.9, 200, 3)
        assert record["method"] == B.METHOD and record["documents"] >= 2
        assert r["ci_low"] <= r["ci_high"]
    assert {r["pair"] for r in with_ci if r["metric"] == "span-f1"} >= {"mean"}
    plain = measure(out, SPAN, settings=["word-interval"]).to_pylist()
    np.testing.assert_array_equal([r["value"] for r in plain], [r["value"] for r in rows if r["doc"] is None])
    auto = measure(out, SPAN, settings=["word-interval"], ci=Options(level=0.9)).to_pylist()  # fewer than 30 documents
    assert {json.loads(r["params"])["ci"]["method"] for r in auto if r["ci_low"] is not None} == {B.JACKKNIFE}
