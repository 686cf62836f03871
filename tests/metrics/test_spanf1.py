"""Span F1 between annotators: bratiaa's published reports on its example project, and a literal
implementation of the three matchings."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CORPORA, needs_shared
from tests.strategies import unitizations
from unitize.metrics import spanf1
from unitize.metrics.placed import Placed

BRATIAA = CORPORA / "bratiaa-example" / "example-files"


def report(path: Path) -> dict[str, tuple[float, float]]:
    """bratiaa's Markdown report: document or label -> (mean F1, SD F1); 'overall' too."""
    out = {}
    for name, mean, sd in re.findall(r"^\| (\S+)\s*\|\s*([\d.]+) \|\s*([\d.]+) \|$", path.read_text(encoding="utf-8"), re.M):
        out[name] = (float(mean), float(sd))
    mean, sd = re.search(r"Mean F1: ([\d.]+), SD F1: ([\d.]+)", path.read_text(encoding="utf-8")).groups()
    out["overall"] = (float(mean), float(sd))
    return out


@pytest.fixture(scope="module")
def bratiaa_results(tmp_path_factory):
    """The example project converted as bratiaa reads it — CRLF kept, whitespace tokens — with
    every label its own layer, then span F1 measured per document."""
    from unitize.agree import measure
    from unitize.cli import main

    root = tmp_path_factory.mktemp("bratiaa")
    study = root / "study.toml"
    study.write_text(
        f"""[input]
format = "brat"
annotations = {json.dumps(str(BRATIAA / "example-project"))}
newlines = "keep"

[unitize]
units = ["char", "word"]
approaches = ["interval"]
modes = ["separate"]
layers_from = "label"
tokenizer = "whitespace"
""",
        encoding="utf-8",
    )
    assert main(["convert", str(study), "--out", str(root / "out"), "-q"]) == 0
    return measure(root / "out", ["span-f1", "unit-f1"], by_doc=True).to_pylist()


def mean_row(rows, setting, layer, metric, doc=None):
    (row,) = [r for r in rows if (r["setting"], r["layer"], r["metric"], r["pair"], r["doc"]) == (setting, layer, metric, "mean", doc)]
    return round(row["value"], 3), round(json.loads(row["params"])["sd"], 3)


@needs_shared
@pytest.mark.parametrize(
    ("kind", "setting", "metric"),
    [("instance", "char-interval", "span-f1"), ("token", "word-interval", "unit-f1")],
)
def test_bratiaa_published_reports(bratiaa_results, kind, setting, metric):
    """Every number of bratiaa's instance-based (exact spans, characters) and token-based
    (whitespace tokens) reports: per document, per label and overall, mean and SD over pairs."""
    published = report(BRATIAA / f"{kind}-agreement-report.md")
    labels = ["LOC", "MISC", "ORG", "PER"]
    everything = "+".join(labels)
    assert len(published) == 7 + 4 + 1
    for name, expected in published.items():
        if name in labels:
            got = mean_row(bratiaa_results, setting, name, metric)
        elif name == "overall":
            got = mean_row(bratiaa_results, setting, everything, metric)
        else:
            got = mean_row(bratiaa_results, setting, everything, metric, doc=name.removesuffix(".ann"))
        assert got == expected, name


@needs_shared
def test_bratiaa_pairs_and_their_mean(bratiaa_results):
    rows = [r for r in bratiaa_results if (r["setting"], r["layer"], r["metric"], r["doc"]) == ("char-interval", "LOC+MISC+ORG+PER", "span-f1", None)]
    pairs = [r for r in rows if r["pair"] != "mean"]
    assert [r["pair"] for r in pairs] == ["Lisa|Maria", "Lisa|Max", "Lisa|Peter", "Maria|Max", "Maria|Peter", "Max|Peter"]
    assert all(r["annotator_a"] and r["annotator_b"] for r in pairs)
    assert np.mean([r["value"] for r in pairs]) == pytest.approx([r for r in rows if r["pair"] == "mean"][0]["value"])
    # Max marks long spans where the others mark short ones: his pairs agree least on exact spans
    assert min(pairs, key=lambda r: r["value"])["pair"].count("Max") == 1


# --- a literal implementation ------------------------------------------------------------


def max_matching(edges: list[tuple[int, int]]) -> int:
    """Kuhn's augmenting paths: the size of a maximum bipartite matching."""
    adj: dict[int, list[int]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
    owner: dict[int, int] = {}

    def augment(a: int, seen: set[int]) -> bool:
        for b in adj.get(a, []):
            if b not in seen:
                seen.add(b)
                if b not in owner or augment(owner[b], seen):
                    owner[b] = a
                    return True
        return False

    return sum(augment(a, set()) for a in adj)


def literal(units: list[list[tuple[int, int, str]]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"span-f1": [], "span-f1-overlap": [], "unit-f1": []}
    for a, b in combinations(units, 2):
        exact = len(set(a) & set(b))
        edges = [(i, j) for i, x in enumerate(a) for j, y in enumerate(b) if x[2] == y[2] and x[0] < y[1] and y[0] < x[1]]
        ua = {(p, v) for s, e, v in a for p in range(s, e)}
        ub = {(p, v) for s, e, v in b for p in range(s, e)}
        for name, tp, n in (("span-f1", exact, len(a) + len(b)), ("span-f1-overlap", max_matching(edges), len(a) + len(b)),
                            ("unit-f1", len(ua & ub), len(ua) + len(ub))):
            out[name].append(2 * tp / n if n else float("nan"))
    return out


def placed(units, length) -> Placed:
    values = tuple(sorted({v for u in units for *_, v in u}))
    rows = np.array([(k, b, e, values.index(v)) for k, u in enumerate(units) for b, e, v in u], dtype=np.int64).reshape(-1, 4)
    return Placed(tuple(f"a{k}" for k in range(len(units))), ("d",), np.zeros(1, np.int64), length, values,
                  rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])


@settings(max_examples=300, deadline=None)
@given(unitizations(values="ab"))
def test_counts_equal_the_literal_matchings(study):
    units, length, _ = study
    counts = spanf1.counts(placed(units, length))
    want = literal(units)
    for metric, expected in want.items():
        rows = spanf1.f1_rows(counts, {"span-f1": spanf1.EXACT, "span-f1-overlap": spanf1.OVERLAP, "unit-f1": spanf1.UNITS}[metric])
        got = [r.value for r in rows if r.pair != "mean"]
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e)
        finite = [e for e in expected if not math.isnan(e)]
        mean = rows[-1]
        assert mean.pair == "mean"
        assert (math.isnan(mean.value) and not finite) or mean.value == pytest.approx(np.mean(finite))


@settings(max_examples=300, deadline=None)
@given(unitizations(values="ab"))
def test_one_to_one_matching_is_maximum(study):
    units, _, _ = study
    a, b = (sorted(u) for u in units[:2])
    edges = [(i, j) for i, x in enumerate(a) for j, y in enumerate(b) if x[0] < y[1] and y[0] < x[1]]
    ii = np.array([e[0] for e in edges], dtype=np.int64)
    jj = np.array([e[1] for e in edges], dtype=np.int64)
    chosen = spanf1.one_to_one(ii, jj)
    assert int(chosen.sum()) == max_matching(edges)
    assert len(set(ii[chosen].tolist())) == len(set(jj[chosen].tolist())) == int(chosen.sum())


def test_two_short_spans_inside_one_long_span_are_one_overlap_match():
    counts = spanf1.counts(placed([[(0, 3, "x"), (4, 8, "x")], [(0, 8, "x")]], 8))
    overlap = spanf1.f1_rows(counts, spanf1.OVERLAP)[0]
    assert (overlap.value, overlap.params) == (2 * 1 / 3, {"matched": 1, "a": 2, "b": 1})
    assert spanf1.f1_rows(counts, spanf1.EXACT)[0].value == 0.0
    assert spanf1.f1_rows(counts, spanf1.UNITS)[0].value == pytest.approx(2 * 7 / 15)


def test_per_label_and_per_document_rows_add_up():
    p = Placed(("a", "b"), ("d0", "d1"), np.array([0, 10]), 20, ("x", "y"),
               np.array([0, 0, 1, 1]), np.array([0, 12, 0, 12]), np.array([3, 15, 3, 14]), np.array([0, 1, 0, 1]))
    rows = spanf1.f1_rows(spanf1.counts(p), spanf1.EXACT, by_label=True, by_doc=True)
    by = {(r.label, r.doc, r.pair): r for r in rows}
    assert by[(None, None, "a|b")].params == {"matched": 1, "a": 2, "b": 2}
    assert by[("x", None, "a|b")].value == 1.0 and by[("y", None, "a|b")].value == 0.0
    assert by[(None, "d0", "a|b")].value == 1.0 and by[(None, "d1", "a|b")].value == 0.0
    assert by[(None, None, "mean")].params == {"pairs": 1, "sd": 0.0}


def test_a_partial_annotator_never_changes_another_pairs_value():
    """A pair is measured on the documents both coded: adding c, who coded d1 only, leaves (a, b) as it was."""
    a = [(0, 2, 0), (12, 14, 0)]  # (begin, end, value) on the continuum: d0 = [0, 10), d1 = [10, 20)
    b = [(0, 2, 0), (12, 15, 0)]
    two = _placed_on_docs([a, b], presence=None)
    three = _placed_on_docs([a, b, [(12, 14, 0)]], presence=np.array([[True, True, False], [True, True, True]]))
    f_two = {r.pair: r for r in spanf1.f1_rows(spanf1.counts(two), spanf1.EXACT)}
    f_three = {r.pair: r for r in spanf1.f1_rows(spanf1.counts(three), spanf1.EXACT)}
    assert f_three["a|b"].value == f_two["a|b"].value == 0.5
    assert f_three["a|c"].value == 1.0 and f_three["a|c"].params == {"matched": 1, "a": 1, "b": 1}  # d1 only
    assert f_three["b|c"].value == 0.0
    none = _placed_on_docs([a, b, []], presence=np.array([[True, True, False], [True, True, False]]))
    assert {r.pair: r.reason for r in spanf1.f1_rows(spanf1.counts(none), spanf1.EXACT)}["a|c"] == (
        "the two annotators coded no document in common here")


def _placed_on_docs(units, presence):
    rows = np.array([(k, b, e, v) for k, u in enumerate(units) for b, e, v in u], np.int64).reshape(-1, 4)
    names = tuple("abc"[: len(units)])
    return Placed(names, ("d0", "d1"), np.array([0, 10]), 20, ("x",), rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], presence)


@settings(max_examples=200, deadline=None)
@given(unitizations(values="ab"), st.randoms(use_true_random=False))
def test_counts_do_not_depend_on_the_order_of_the_rows(study, rnd):
    units, length, _ = study
    p = placed(units, length)
    order = np.array(rnd.sample(range(p.begin.size), p.begin.size), dtype=np.int64)
    shuffled = replace(p, annotator=p.annotator[order], begin=p.begin[order], end=p.end[order], value=p.value[order])
    a, b = spanf1.counts(p), spanf1.counts(shuffled)
    assert np.array_equal(a.matched, b.matched) and np.array_equal(a.sizes, b.sizes)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=60))
def test_the_mean_and_sd_of_the_pairs_are_numpys_bit_for_bit(scores):
    x = np.array(scores)
    assert spanf1._mean_sd(x) == (float(x.mean()), float(x.std()))


def test_unit_sums_past_two_to_the_53_are_added_exactly():
    keys = np.array([0, 0, 1], np.int64)
    weights = np.array([1 << 53, 1, 3], np.int64)  # bincount's float64 sum would be 2⁵³, one short
    assert spanf1._sum(keys, weights, 3).tolist() == [(1 << 53) + 1, 3, 0]
    assert spanf1._sum(keys[:2], np.array([7, 9], np.int64), 2).tolist() == [16, 0]
