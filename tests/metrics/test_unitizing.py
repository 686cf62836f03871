"""Krippendorff's unitizing family (uα, |uα, cuα, (k)uα): the book's worked example, a literal
implementation of the definitions, and the additivity of the statistics.

Krippendorff (2019), *Content Analysis*, 4th ed., §12.6, Figure 12.11 (p. 340): three observers
(Alex, Paul, Suzan) unitize a continuum of 60 positions with values 1–7. The data and the
published values are those of the R package quallmer's tests (``tests/testthat/test-alpha_u.R``,
which cite the book): uα = .510, |uα = .413 (asserted there within ±.002), cuα = .724, (k)uα = 1
for values 1, 5 and 6 and 0 for 2, 3 and 4, value 5 covering 8 of its 18 positions and value 7
none. The book itself was not at hand, nor the 2016 paper (Krippendorff, Mathet, Bouvry &
Widlöcher, *Quality & Quantity* 50); no other implementation reproduces the example: the Python
ports (lindanna/unitized_alpha, zeljkobekcic/KrippendorffUnitizedAlpha) have no test on it, and
the R package krippendorffsalpha has no unitizing coefficient. These are the published numbers as
that test suite quotes them (``SOURCES`` below). quallmer's own cuα (.728) takes a unit's pairable length against the union of the
other observers' units; the one here (the mean over the other observers, the unit's share of the
sub-matrix's margin) gives the book's .724.
"""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings

from tests.strategies import unitizations
from unitize.metrics import unitizing as U
from unitize.metrics.placed import Placed

GAP = "φ"

# (first, last) positions, 1-based and inclusive as in the book's figure
BOOK = {
    "Alex": [(1, 7, "1"), (8, 13, "2"), (31, 32, "5"), (33, 37, "6"), (38, 44, "6"), (45, 60, "7")],
    "Paul": [(1, 7, "1"), (8, 13, "3"), (14, 21, "5"), (33, 44, "6")],
    "Suzan": [(1, 7, "1"), (8, 13, "4"), (14, 21, "5"), (33, 37, "6"), (38, 41, "6"), (42, 44, "6")],
}


def placed(units: list[list[tuple[int, int, str]]], length: int, starts=(0,), annotators=None) -> Placed:
    """Segments given as (begin, end exclusive, value) per annotator."""
    values = tuple(sorted({v for u in units for *_, v in u}))
    rows = [(k, b, e, values.index(v)) for k, u in enumerate(units) for b, e, v in u]
    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    names = tuple(annotators or (f"a{k}" for k in range(len(units))))
    docs = tuple(f"d{i}" for i in range(len(starts)))
    return Placed(names, docs, np.array(starts, np.int64), length, values, a[:, 0], a[:, 1], a[:, 2], a[:, 3])


def book() -> Placed:
    return placed([[(b - 1, e, v) for b, e, v in s] for s in BOOK.values()], 60, annotators=tuple(BOOK))


#: where each expected value comes from: cran/quallmer tests/testthat/test-alpha_u.R (commit b54c54b9,
#: "Book example: Figure 12.11 from Krippendorff (2019, p. 340)"); its R/alpha_u.R cites §12.6.3 eq. 34
#: (uα), §12.6.4 eq. 35 (|uα), §12.6.5 eqs. 36–37 (cuα), §12.6.6 eq. 38 ((k)uα)
SOURCES = {
    "u-alpha .510": "test 'compute_alpha_u nominal matches book example': round(alpha, 3) == 0.510",
    "|u-alpha .413": "test 'compute_alpha_u binary matches book example': 0.413, tolerance 0.002 (exactly .41360 here)",
    "cu-alpha .724": "test 'cu_nominal matches book example', comment: the book's 0.724 (quallmer's own .728 lies above it)",
    "(k)u-alpha": "test 'per_value matches book example': 1 for 1, 5, 6; 0 for 2, 3, 4; coverage of 5 = 8/18; of 7 = 0",
}


def test_krippendorff_2019_book_example_figure_12_11():
    s = U.statistics(book())
    assert round(U.u_alpha(s).value, 3) == 0.510  # SOURCES["u-alpha .510"]
    # SOURCES["|u-alpha .413"]: 1 − 52 / 88.677 = .41360; the book's .413 is this value to its rounding
    # of the expected coincidences (to two decimals: 1 − 52 / 88.66 = .4135)
    assert U.binary_u_alpha(s).value == pytest.approx(0.413, abs=0.002)
    assert U.binary_u_alpha(s).value == pytest.approx(1 - 52 / 88.67655, abs=1e-6)
    cu = U.cu_alpha(s)
    assert round(cu.value, 3) == 0.724  # SOURCES["cu-alpha .724"]
    assert cu.params["coverage"] == pytest.approx(83 / 180)  # ℓ*.. / ℓ..: derived here, no published figure
    ku = {v.label: v for v in U.ku_alpha(s)}
    assert [ku[k].value for k in "123456"] == [1.0, 0.0, 0.0, 0.0, 1.0, 1.0]  # SOURCES["(k)u-alpha"]
    assert ku["5"].params["coverage"] == pytest.approx(8 / 18)
    assert math.isnan(ku["7"].value) and ku["7"].params["coverage"] == 0.0
    assert "coverage 0" in ku["7"].reason


def test_book_example_coincidences():
    """The observed coincidences sum to mL; value 5 meets the gaps on 10 positions, 7 on 16."""
    s = U.statistics(book())
    ell = s.observed()
    assert ell.sum() == 3 * 60
    at = {v: i + 1 for i, v in enumerate(s.values)}
    assert ell[0, at["5"]] == 10 and ell[0, at["7"]] == 16 and ell[at["6"], at["6"]] == 36
    assert s.expected().sum() == pytest.approx(180)


def test_identical_unitizations_agree_perfectly():
    seg = [(0, 10, "a"), (10, 20, "b"), (20, 30, "c")]
    s = U.statistics(placed([seg, seg], 30))
    assert U.u_alpha(s).value == 1.0 and U.cu_alpha(s).value == 1.0
    assert math.isnan(U.binary_u_alpha(s).value)  # no gap anywhere: nothing to distinguish
    assert [v.value for v in U.ku_alpha(s)] == [1.0, 1.0, 1.0]


def test_edge_cases_are_nan_with_a_reason():
    nothing = U.statistics(placed([[], [], []], 20))
    assert math.isnan(U.u_alpha(nothing).value) and "no annotator marked" in U.u_alpha(nothing).reason
    assert math.isnan(U.cu_alpha(nothing).value) and U.cu_alpha(nothing).params["coverage"] == 0.0
    assert U.ku_alpha(nothing) == []
    apart = U.statistics(placed([[(0, 3, "a")], [(10, 12, "a")]], 20))
    assert "intersect" in U.cu_alpha(apart).reason
    one_value = U.statistics(placed([[(0, 3, "x")], [(1, 4, "x")]], 20))
    assert "one value only" in U.cu_alpha(one_value).reason
    assert U.binary_u_alpha(one_value).value == U.u_alpha(one_value).value  # one value: |uα is uα


# --- the definitions, literally: partitions with gaps, every pair of segments of every pair of observers ---


def partition(units: list[tuple[int, int, str]], length: int) -> list[tuple[int, int, str]]:
    out, at = [], 0
    for b, e, v in sorted(units):
        if b > at:
            out.append((at, b, GAP))
        out.append((b, e, v))
        at = e
    if at < length:
        out.append((at, length, GAP))
    return out


def literal(units: list[list[tuple[int, int, str]]], length: int) -> dict:
    m = len(units)
    parts = [partition(u, length) for u in units]
    values = [GAP] + sorted({v for u in units for *_, v in u})
    at = {v: i for i, v in enumerate(values)}
    n = len(values)
    inter = lambda g, h: max(0, min(g[1], h[1]) - max(g[0], h[0]))  # noqa: E731
    ell = np.zeros((n, n))
    for i, j in permutations(range(m), 2):
        for g in parts[i]:
            for h in parts[j]:
                ell[at[g[2]], at[h[2]]] += inter(g, h) / (m - 1)
    self_pairs = np.zeros(n)
    for p in parts:
        for b, e, v in p:
            self_pairs[at[v]] += (e - b) if v == GAP else (e - b) ** 2

    def expected(o, sp):
        t, r = o.sum(), o.sum(axis=1)
        return np.array([[t * (r[c] * r[k] - (sp[c] if c == k else 0)) / (t * t - sp.sum()) for k in range(len(r))] for c in range(len(r))])

    def alpha(o, e):
        d_e = e.sum() - np.trace(e)
        return float("nan") if d_e == 0 else 1 - (o.sum() - np.trace(o)) / d_e

    eps = expected(ell, self_pairs)
    collapse = lambda x: np.array([[x[0, 0], x[0, 1:].sum()], [x[1:, 0].sum(), x[1:, 1:].sum()]])  # noqa: E731
    out = {"u": alpha(ell, eps), "|u": alpha(collapse(ell), collapse(eps))}
    star = ell[1:, 1:]
    pairable = np.zeros(n - 1)
    for i in range(m):
        for g in parts[i]:
            if g[2] != GAP:
                p = sum(inter(g, h) for j in range(m) if j != i for h in parts[j] if h[2] != GAP) / (m - 1)
                pairable[at[g[2]] - 1] += p * p
    out["cu"] = float("nan")
    out["ku"] = {}
    if star.sum() > 0:
        es = expected(star, pairable)
        out["cu"] = alpha(star, es)
        for k in range(n - 1):
            l_k, e_k = star[:, k].sum(), es[:, k].sum()
            ok = l_k > 0 and e_k - es[k, k] != 0
            out["ku"][values[k + 1]] = 1 - (e_k / l_k) * (l_k - star[k, k]) / (e_k - es[k, k]) if ok else float("nan")
    else:
        out["ku"] = {v: float("nan") for v in values[1:]}
    out["coverage"] = star.sum() / ell.sum()
    return out


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(unitizations())
def test_statistics_equal_the_literal_definitions(study):
    units, length, _ = study
    s = U.statistics(placed(units, length))
    want = literal(units, length)
    assert same(U.u_alpha(s).value, want["u"])
    assert same(U.binary_u_alpha(s).value, want["|u"])
    assert same(U.cu_alpha(s).value, want["cu"])
    assert U.cu_alpha(s).params["coverage"] == pytest.approx(want["coverage"])
    got = {v.label: v.value for v in U.ku_alpha(s)}
    assert got.keys() == want["ku"].keys()
    assert all(same(got[k], want["ku"][k]) for k in got)


@settings(max_examples=200, deadline=None)
@given(unitizations(max_docs=4))
def test_document_statistics_add_up_to_the_continuum(study):
    units, length, starts = study
    p = placed(units, length, starts)
    whole = U.statistics(p)
    parts = [s for _, s in U.by_document(p)]
    total = sum(parts[1:], parts[0])
    assert total.length == whole.length == length
    assert np.array_equal(total.squares, whole.squares)
    for field in ("coincidences", "pairable"):
        assert np.allclose(getattr(total, field), getattr(whole, field), rtol=1e-12, atol=0)


def test_adding_aligns_the_values():
    a = U.statistics(placed([[(0, 2, "x")], [(0, 2, "x")]], 5))
    b = U.statistics(placed([[(1, 3, "y")], [(0, 3, "z")]], 4))
    both = a + b
    assert both.values == ("x", "y", "z") and both.length == 9
    assert both.observed().sum() == 2 * 9
    assert np.array_equal(both.relabeled(("w", "x", "y", "z")).coincidences[1:, 1:].sum(), both.coincidences[1:, 1:].sum())
    three = a + U.statistics(placed([[], [], []], 3))  # a document of three coders beside two of two: ℓ.. = Σ m_d L_d
    assert three.observed().sum() == 2 * 5 + 3 * 3 and three.annotators == 3


@settings(max_examples=100, deadline=None)
@given(unitizations())
def test_units_of_length_one_make_u_alpha_nominal_alpha_over_positions(study):
    """With every unit one position long (a gap's positions are single choices too), uα is
    Krippendorff's nominal alpha on the positions × annotators matrix, gaps a value of their own."""
    krippendorff = pytest.importorskip("krippendorff")
    units, length, _ = study
    points = [[(b, b + 1, v) for b, _, v in u] for u in units]
    values = sorted({v for u in points for *_, v in u})
    matrix = np.zeros((len(points), length))
    for k, u in enumerate(points):
        for b, _, v in u:
            matrix[k, b] = 1 + values.index(v)
    if np.unique(matrix).size < 2:
        return
    assert U.u_alpha(U.statistics(placed(points, length))).value == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"), abs=1e-9
    )


def test_each_document_counts_its_own_coders():
    """An annotator who did not code a document is left out there (not read as marking nothing): the continuum's
    statistics are the sum of each document's, measured with the annotators who coded it."""
    # d0 (length 10): a0, a1 coded it, a2 did not; d1 (length 8): all three coded it
    units = [[(0, 4, "x"), (12, 15, "y")], [(1, 4, "x"), (12, 16, "y")], [(10, 15, "y")]]
    partial = placed(units, 18, starts=(0, 10))
    partial = Placed(**{**partial.__dict__, "presence": np.array([[True, True, False], [True, True, True]])})
    alone0 = placed([[(0, 4, "x")], [(1, 4, "x")]], 10)
    alone1 = placed([[(2, 5, "y")], [(2, 6, "y")], [(0, 5, "y")]], 8)
    whole = U.statistics(partial)
    parts = U.statistics(alone0) + U.statistics(alone1)
    assert whole.observed().sum() == 2 * 10 + 3 * 8
    assert np.allclose(whole.coincidences, parts.relabeled(whole.values).coincidences)
    assert np.array_equal(whole.squares, parts.relabeled(whole.values).squares)
    assert U.u_alpha(whole).value == pytest.approx(U.u_alpha(parts).value, abs=1e-12)
    # read as "a2 marked nothing in d0" the value would differ: that is the bug this rule removes
    assert U.u_alpha(U.statistics(placed(units, 18, starts=(0, 10)))).value != pytest.approx(U.u_alpha(whole).value)
