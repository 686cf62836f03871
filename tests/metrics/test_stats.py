"""Sufficient statistics: additivity, crowd and wide forms, and coefficients against published values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

import krippendorff  # noqa: E402
from statsmodels.stats.inter_rater import fleiss_kappa  # noqa: E402

from unitize.metrics import coefficients as C  # noqa: E402
from unitize.metrics import stats as S  # noqa: E402

from tests.metrics.test_backends import FLEISS_1971, K2011, cochran_1950, cohen_table  # noqa: E402


def wide(values: np.ndarray, names: list[str] | None = None, domain: np.ndarray | None = None) -> S.Stats:
    cols, dom = S.codes(values, domain)
    return S.from_codes(cols, dom, names or [f"c{i}" for i in range(values.shape[1])])


#: Cohen (1960: 45), 200 units, 3 categories
COHEN_1960 = cohen_table([(88, 1, 1), (14, 1, 2), (18, 1, 3), (10, 2, 1), (40, 2, 2), (10, 2, 3), (2, 3, 1), (6, 3, 2), (12, 3, 3)])
#: irrCAC's ``cont3x3abstractors`` (Gwet 2014): 100 subjects, 2 raters, 3 categories
ABSTRACTORS = cohen_table([(13, 0, 0), (20, 1, 1), (7, 1, 2), (4, 2, 1), (56, 2, 2)])


# -- published values --


@pytest.mark.parametrize("level, value", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorff_2011_all_levels(level, value):
    v = C.alpha(wide(K2011), level)
    assert v.value == pytest.approx(value, abs=0.0005)
    assert v.units_used == 11


def test_fleiss_1971_with_analytic_se():
    v = C.fleiss(wide(FLEISS_1971))
    assert v.value == pytest.approx(0.430, abs=0.0005)
    assert v.units_used == 30
    assert v.std_err is not None and 0 < v.std_err < 0.1


def test_fleiss_se_matches_the_spread_under_chance():
    rng = np.random.default_rng(7)
    ks, ses = [], []
    for _ in range(300):
        v = C.fleiss(wide(rng.integers(0, 3, size=(150, 4)).astype(float)))
        ks.append(v.value)
        ses.append(v.std_err)
    assert np.std(ks) == pytest.approx(np.mean(ses), rel=0.12)


def test_cohen_1960_and_scott():
    [k] = C.cohen(wide(COHEN_1960, ["a", "b"]))
    assert k.value == pytest.approx(0.492, abs=0.0005) and k.pair == "a|b" and k.units_used == 200


def test_gwet_2014_abstractors_table():
    # irrCAC: kappa2.table 0.7964094, scott2.table 0.7962397, gwet.ac1.table 0.8493305, pa2.table 0.89
    s = wide(ABSTRACTORS, ["a", "b"])
    assert C.cohen(s)[0].value == pytest.approx(0.7964094, abs=1e-7)
    assert C.scott(s)[0].value == pytest.approx(0.7962397, abs=1e-7)
    assert C.ac1(s).value == pytest.approx(0.8493305, abs=1e-7)
    assert C.percent(s).value == pytest.approx(0.89)


def test_gwet_ac1_with_missing_ratings_on_krippendorffs_data():
    # irrCAC's gwet.ac1.raw(cac.raw4raters): pa 0.8181818, pe 0.1903212, AC1 0.77544
    v = C.ac1(wide(K2011))
    assert v.params["pa"] == pytest.approx(0.8181818, abs=1e-7)
    assert v.params["pe"] == pytest.approx(0.1903212, abs=1e-7)
    assert v.value == pytest.approx(0.77544, abs=1e-5)
    assert C.ac2(wide(K2011), "nominal").value == v.value


def test_cochran_1950():
    v = C.cochran_q(wide(cochran_1950()), binary=True)
    assert v.value == pytest.approx(8.05, abs=0.005)
    assert v.df == 3 and v.units_used == 69 and v.p_value < 0.05


# -- independent implementations --


def random_coding(rng: np.random.Generator, units: int, coders: int, values: int, missing: float) -> np.ndarray:
    data = rng.integers(1, values + 1, size=(units, coders)).astype(float)
    agree = rng.random(units) < 0.6
    data[agree] = data[agree, :1]
    data[rng.random(data.shape) < missing] = np.nan
    return data


@pytest.mark.parametrize("seed", range(5))
def test_alpha_matches_krippendorff_package(seed):
    data = random_coding(np.random.default_rng(seed), 80, 4, 5, 0.2)
    s = wide(data)
    for level in C.LEVELS:
        expected = krippendorff.alpha(reliability_data=data.T, level_of_measurement=level)
        assert C.alpha(s, level).value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_and_cohen_match_statsmodels(seed):
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa

    data = random_coding(np.random.default_rng(seed), 60, 3, 4, 0.0)
    s = wide(data, ["a", "b", "c"])
    assert C.fleiss(s).value == pytest.approx(fleiss_kappa(aggregate_raters(data)[0]), abs=1e-12)
    for v, (i, j) in zip(C.cohen(s), [(0, 1), (0, 2), (1, 2)]):
        table = np.zeros((4, 4))
        np.add.at(table, (data[:, i].astype(int) - 1, data[:, j].astype(int) - 1), 1)
        res = cohens_kappa(table, return_results=True)
        assert v.value == pytest.approx(res.kappa, abs=1e-12)
        assert v.std_err == pytest.approx(res.std_kappa, abs=1e-12)


def test_crowd_counts_give_the_same_unit_statistics():
    data = random_coding(np.random.default_rng(3), 50, 5, 3, 0.3)
    s = wide(data)
    cols, dom = S.codes(data)
    counts = np.stack([sum((c == v).astype(int) for c in cols) for v in range(dom.size)], axis=1)
    crowd = S.from_counts(counts, dom)
    assert np.array_equal(crowd.patterns, s.patterns) and np.array_equal(crowd.units, s.units)
    assert C.alpha(crowd).value == C.alpha(s).value


# -- the reduction --

codings = st.integers(0, 10_000).flatmap(
    lambda seed: st.tuples(st.just(seed), st.integers(1, 40), st.integers(1, 4), st.integers(1, 5), st.integers(0, 40))
)


@settings(max_examples=60, deadline=None)
@given(codings)
def test_statistics_of_a_union_are_the_sum(case):
    seed, units, coders, values, cut = case
    data = random_coding(np.random.default_rng(seed), units, coders, values, 0.3)
    cut = min(cut, units)
    whole = wide(data)
    # each part on its own domain (what a per-group read sees); the sum aligns them
    a, b = wide(data[:cut]), wide(data[cut:])
    assert (a + b).equals(whole)
    assert sum([a, b]).equals(whole)
    assert np.allclose((a + b).coincidence(), whole.coincidence())


@settings(max_examples=30, deadline=None)
@given(codings)
def test_crowd_statistics_add_up(case):
    seed, units, coders, values, cut = case
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, coders + 1, size=(units, values))
    dom = np.arange(values, dtype=float)
    cut = min(cut, units)
    assert (S.from_counts(counts[:cut], dom) + S.from_counts(counts[cut:], dom)).patterns.tolist() == S.from_counts(counts, dom).patterns.tolist()


def test_annotators_of_two_parts_are_united_by_name():
    x = wide(np.array([[1.0, 2.0]]), ["a", "b"])
    y = wide(np.array([[1.0, 1.0]]), ["b", "c"])
    z = x + y
    assert z.annotators == ("a", "b", "c")
    assert z.annotator_counts().tolist() == [[1, 0], [1, 1], [1, 0]]
    assert z.pairs[1, 2].tolist() == [[1, 0], [0, 0]]


@pytest.mark.parametrize("seed", range(4))
def test_profile_histogram_and_per_column_paths_agree(seed, monkeypatch):
    data = random_coding(np.random.default_rng(seed), 70, 4, 3, 0.25)
    fast = wide(data)
    monkeypatch.setattr(S, "PROFILES", 0)
    general = wide(data)
    assert fast.equals(general)


def test_trimmed_drops_values_no_unit_has():
    s = wide(np.array([[0.0, 0.0], [2.0, 2.0]]), domain=np.array([0.0, 1.0, 2.0]))
    t = s.trimmed()
    assert t.domain.tolist() == [0.0, 2.0] and t.pairs.shape == (2, 2, 2, 2)
    assert C.alpha(t).value == C.alpha(s).value == 1.0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 60), st.integers(1, 25), st.sampled_from([2, 5, 400, 1 << 40]))
def test_distinct_rows_are_the_sorted_unique_rows(seed, n, v, top):
    counts = np.random.default_rng(seed).integers(0, top, size=(n, v)) // np.random.default_rng(seed + 1).integers(1, 50, size=(n, v))
    patterns, units = S._distinct_rows(counts)
    expected, total = np.unique(counts, axis=0, return_counts=True) if n else (counts, np.zeros(0, int))
    assert patterns.tolist() == expected.tolist() and units.tolist() == total.tolist()


def test_one_vs_rest_is_the_indicator_coding():
    s = wide(K2011)
    for i, value in enumerate(s.domain):
        indicator = np.where(np.isnan(K2011), np.nan, (K2011 == value).astype(float))
        expected = krippendorff.alpha(reliability_data=indicator.T, level_of_measurement="nominal")
        assert C.alpha(s.one_vs_rest(i)).value == pytest.approx(expected, abs=1e-12)
        assert C.ac1(s.one_vs_rest(i)).value == pytest.approx(C.ac1(wide(indicator)).value, abs=1e-12)


def test_relabeled_statistics_are_those_of_the_renamed_values():
    data = random_coding(np.random.default_rng(9), 30, 3, 4, 0.2)
    rename = {1.0: 7.0, 2.0: 3.0, 3.0: 5.0, 4.0: 1.0}
    renamed = np.vectorize(lambda x: rename.get(x, x))(data)
    s = wide(data)
    assert s.relabeled(np.array([rename[v] for v in s.domain])).equals(wide(renamed))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_pairs_statistics_are_those_of_its_two_columns(data):
    """Stats.pair(a, b) — from the pairwise tables of every annotator's statistics — equals the statistics of the two
    columns alone, field for field: roles measure every pair in the one pass over the study."""
    n_annotators = data.draw(st.integers(2, 5))
    n_units = data.draw(st.integers(1, 30))
    n_values = data.draw(st.integers(1, 4))
    cell = st.integers(-1, n_values - 1)
    cols = [np.array(data.draw(st.lists(cell, min_size=n_units, max_size=n_units)), np.int8) for _ in range(n_annotators)]
    a, b = data.draw(st.lists(st.integers(0, n_annotators - 1), min_size=2, max_size=2, unique=True))
    domain = np.arange(n_values, dtype=np.float64)
    names = [f"a{k}" for k in range(n_annotators)]
    got = S.from_codes(cols, domain, names).pair(a, b)
    want = S.from_codes([cols[a], cols[b]], domain, [names[a], names[b]]).trimmed()
    assert got.annotators == want.annotators
    for field in ("domain", "patterns", "units", "by_raters", "pairs"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
