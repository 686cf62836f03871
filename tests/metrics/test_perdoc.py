"""Per-document rows in bulk (``--by-doc``): the crowd documents' statistics of one pass equal those
built document by document, and alpha and Fleiss of every document at once equal the coefficients
computed one document at a time — values, standard errors, reasons and params, to the last bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from unitize import metrics
from unitize.agree.columns import _per_doc, _per_doc_each
from unitize.metrics import perdoc
from unitize.metrics.stats import from_codes, from_counts


def _crowd(rng):
    wide = rng.random() < 0.3  # many values and raters: the rows do not fit one 63-bit key
    n_docs, v = int(rng.integers(1, 30)), int(rng.integers(1, 25 if wide else 5))
    offset = np.concatenate(([0], np.cumsum(rng.integers(0, 20, n_docs))))
    top = int(rng.integers(1, 400 if wide else 6))
    counts = rng.integers(0, top, (int(offset[-1]), v)) * (rng.random((int(offset[-1]), v)) < rng.random())
    present = rng.random(int(offset[-1])) < 0.8
    domain = np.sort(rng.choice(30, v, replace=False)).astype(float)
    return counts, present, offset, [f"d{i}" for i in range(n_docs)], domain


@pytest.mark.parametrize("seed", range(80))
def test_crowd_documents_statistics_in_one_pass(seed):
    rng = np.random.default_rng(seed)
    args = _crowd(rng)
    bulk, each = _per_doc(*args), _per_doc_each(*args)
    assert [d for d, _ in bulk] == [d for d, _ in each]
    for (_, s), (_, t) in zip(bulk, each):
        assert s.equals(t) and s.patterns.flags.c_contiguous


def _same(a, b):
    def eq(x, y):
        return x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))
    return all(eq(getattr(a, f), getattr(b, f)) for f in ("value", "reason", "units_used", "std_err", "params", "doc", "pair"))


def _documents(rng):
    """Per-document statistics as ``measure`` sees them: crowd value counts, or wide codings of 1–4
    annotators with missing values (one annotator, no variation and no pairable unit included)."""
    out = []
    for d in range(60):
        if rng.random() < 0.5:
            v = int(rng.integers(1, 4))
            counts = rng.integers(0, int(rng.integers(1, 5)), (int(rng.integers(1, 12)), v))
            out.append((f"c{d}", from_counts(counts, np.arange(v, dtype=float)).trimmed()))
        else:
            a, v, n = int(rng.integers(1, 5)), int(rng.integers(1, 4)), int(rng.integers(1, 12))
            codes = [np.where(rng.random(n) < 0.2, -1, rng.integers(0, v, n)).astype(np.int16) for _ in range(a)]
            out.append((f"w{d}", from_codes(codes, np.arange(v, dtype=float), [f"a{i}" for i in range(a)]).trimmed()))
    return out


BULK = [m.name for m in metrics.METRICS if getattr(m, "bulk", None) is not None]


def test_the_bulk_metrics():
    assert BULK == ["alpha", "fleiss", "cohen", "scott"]


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("metric", BULK)
def test_bulk_coefficients_equal_one_document_at_a_time(seed, metric):
    docs = _documents(np.random.default_rng(seed))
    crowd = [x for x in docs if not x[1].annotators]
    wide = [x for x in docs if x[1].annotators]
    for part in (crowd, wide):  # measure passes one kind at a time (a cell is crowd or not)
        if not part:
            continue
        m = metrics.get(metric)
        bulk = m.bulk(part, "nominal")
        wanted = []
        for doc, s in part:  # a pairwise metric: a row per pair of each document
            for want in m.formula(s, "nominal", False):
                want.doc = doc
                wanted.append(want)
        assert len(bulk) == len(wanted)
        for got, want in zip(bulk, wanted):
            assert _same(got, want), (metric, got, want)


def test_bulk_levels():
    docs = _documents(np.random.default_rng(0))[:3]
    assert perdoc.alpha_rows(docs, "nominal") is not None and perdoc.fleiss_rows(docs, "interval") is not None
    assert perdoc.alpha_rows(docs, "interval") is None and metrics.get("ac1").bulk is None
