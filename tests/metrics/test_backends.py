"""Coding metrics against published values, and NaN-with-reason instead of crashes."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

from unitize.metrics import backends  # noqa: E402

N = np.nan

#: Krippendorff's reliability data, 4 coders × 12 units (Krippendorff 2011; Hayes & Krippendorff 2007)
K2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
        [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
    ]
).T

#: Fleiss (1971: 379): 30 subjects, 6 ratings each, 5 diagnoses
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
    ],
    dtype=float,
)


def cochran_1950() -> np.ndarray:
    """Cochran (1950), diphtheria bacilli on four media, 69 swabs (thesis Table 2)."""
    rows = [([1, 1, 1, 1], 4), ([1, 1, 0, 1], 2), ([0, 1, 1, 1], 3), ([0, 1, 0, 1], 1), ([0, 0, 0, 0], 59)]
    return np.array([r for r, n in rows for _ in range(n)], dtype=float)


def cohen_table(cells: list[tuple[int, int, int]]) -> np.ndarray:
    return np.array([[a, b] for n, a, b in cells for _ in range(n)], dtype=float)


def test_krippendorff_2011_reliability_data():
    assert backends.krippendorff_alpha(K2011, "nominal").value == pytest.approx(0.743, abs=0.0005)
    assert backends.krippendorff_alpha(K2011, "ordinal").value == pytest.approx(0.815, abs=0.0005)
    assert backends.krippendorff_alpha(K2011, "interval").value == pytest.approx(0.849, abs=0.0005)
    assert backends.krippendorff_alpha(K2011, "nominal").units_used == 11  # unit 12 has one value only


def test_fleiss_1971():
    v = backends.fleiss(FLEISS_1971)
    assert v.value == pytest.approx(0.430, abs=0.001)
    assert v.units_used == 30


def test_cochran_1950():
    v = backends.cochran_q(cochran_1950(), binary=True)
    assert v.value == pytest.approx(8.05, abs=0.005)
    assert v.df == 3
    assert v.p_value < 0.05
    assert v.units_used == 69


def test_cohen_1960_example_2():
    # Cohen (1960: 45): p_o = .70, p_c = .41, kappa = .492
    data = cohen_table([(88, 1, 1), (14, 1, 2), (18, 1, 3), (10, 2, 1), (40, 2, 2), (10, 2, 3), (2, 3, 1), (6, 3, 2), (12, 3, 3)])
    [v] = backends.cohen(data, ["a", "b"])
    assert v.value == pytest.approx(0.492, abs=0.001)
    assert v.pair == "a|b" and v.units_used == 200
    assert v.std_err is not None and 0 < v.std_err < 0.1


def test_cohen_1960_example_1_observed_and_expected():
    # Cohen (1960: 37): p_o = .29, p_c = .35, so kappa = (.29 - .35) / (1 - .35) < 0
    data = cohen_table([(25, 1, 1), (12, 1, 2), (3, 1, 3), (13, 2, 1), (2, 2, 2), (15, 2, 3), (12, 3, 1), (16, 3, 2), (2, 3, 3)])
    [v] = backends.cohen(data, ["a", "b"])
    assert v.value == pytest.approx((0.29 - 0.35) / (1 - 0.35), abs=0.02)


def test_cohen_pairs_skip_missing_units():
    vals = backends.cohen(K2011, ["A", "B", "C", "D"])
    assert [v.pair for v in vals] == ["A|B", "A|C", "A|D", "B|C", "B|D", "C|D"]
    assert vals[0].units_used == 9  # A and B both coded units 1-9


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: backends.krippendorff_alpha(x),
        lambda x: backends.fleiss(x),
        lambda x: backends.cochran_q(x, True),
        lambda x: backends.cohen(x, ["a", "b", "c"])[0],
    ],
)
def test_no_variation_is_nan_with_reason(fn):
    v = fn(np.ones((5, 3)))
    assert math.isnan(v.value) and "no variation" in v.reason


def test_one_annotator_and_no_units():
    one = np.array([[1.0, N], [0.0, N]])
    for v in (backends.krippendorff_alpha(one), backends.fleiss(one), backends.cochran_q(one, True), backends.cohen(one, ["a", "b"])[0]):
        assert math.isnan(v.value) and v.reason == "fewer than two annotators with data"
    empty = np.zeros((0, 3))
    assert math.isnan(backends.fleiss(empty).value)
    disjoint = np.array([[1.0, N], [N, 0.0]])
    assert backends.krippendorff_alpha(disjoint).reason == "no unit is coded by two annotators"
    assert backends.fleiss(disjoint).reason == "no unit is coded by every annotator"
    assert backends.cohen(disjoint, ["a", "b"])[0].reason == "the pair coded no unit in common"


def test_cochran_needs_binary():
    assert backends.cochran_q(K2011, binary=False).reason == "Cochran's Q needs binary (0/1) values"


def test_fleiss_uses_complete_units_only():
    v = backends.fleiss(K2011)
    assert v.units_used == 8  # units 1-9 minus unit 1 (coder C missing)


def test_category_counts_equal_statsmodels_aggregate_raters():
    from statsmodels.stats.inter_rater import aggregate_raters

    for data in (FLEISS_1971, cochran_1950(), np.zeros((0, 3))):
        counts, cats = backends.category_counts(data)
        expected, expected_cats = aggregate_raters(data)
        assert np.array_equal(counts, expected) and np.array_equal(cats, expected_cats)
