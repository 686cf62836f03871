"""Alpha-U (Krippendorff 1995/2004) against the published worked examples and a brute-force route.

The examples are those of Krippendorff (1995: 57) and Krippendorff (2004: 254) as
DKPro Agreement's unit tests reproduce them (Krippendorff1995Test,
Krippendorff2004Test, UnitizingAgreementTest), with the same tolerances.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import unitizations
from unitize.metrics.alphau import alpha_u, alpha_u_of, category_disagreement, in_order, stretches
from unitize.metrics.alphau_bulk import pair_disagreements
from unitize.metrics.overlaps import observed_matrix


def units(*pairs: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(offset, length) pairs as (begins, ends)."""
    return np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[0] + p[1] for p in pairs], dtype=np.int64)


def k2004():
    # continuum [150, 450) shifted to [0, 300)
    s = 150
    return {
        "c": [units((225 - s, 70), (370 - s, 30)), units((220 - s, 80), (355 - s, 20), (400 - s, 20))],
        "k": [units((180 - s, 60), (300 - s, 50)), units((180 - s, 60), (300 - s, 50))],
    }


def test_krippendorff_2004_example():
    res = alpha_u(k2004(), 300)
    assert res.alpha == pytest.approx(0.8591, abs=0.0005)
    c, k = res.categories["c"], res.categories["k"]
    assert c.observed == pytest.approx(0.0144, abs=0.0001)
    assert c.expected == pytest.approx(0.0532, abs=0.0001)
    assert c.alpha == pytest.approx(0.7286, abs=0.0001)
    assert k.observed == 0.0
    assert k.expected == pytest.approx(0.0490, abs=0.0001)
    assert k.alpha == 1.0


def k1995(stretch: float) -> dict:
    f = lambda x: int(x * stretch)  # noqa: E731
    return {
        "A": [units((f(2), f(8)), (f(14), f(6))), units((f(4), f(4)), (f(15), f(2)))],
        "B": [
            units((0, f(18))),
            units((0, f(2)), (f(2), f(1)), (f(3), f(1)), (f(4), f(1)), (f(5), f(1)), (f(6), f(3)), (f(9), f(1))),
        ],
        "C": [
            units((f(2), f(6)), (f(10), f(2)), (f(14), f(4)), (f(20), f(2))),
            units((0, f(2)), (f(4), f(4)), (f(10), f(4)), (f(16), f(2)), (f(20), f(2))),
        ],
        "D": [
            units((0, f(2)), (f(2), f(8)), (f(10), f(4)), (f(14), f(6)), (f(20), f(4))),
            units((0, f(4)), (f(4), f(4)), (f(8), f(7)), (f(15), f(2)), (f(17), f(7))),
        ],
    }


def test_krippendorff_1995_observed_disagreement_is_exact():
    observed = {c: category_disagreement(u, 24).observed for c, u in k1995(1).items()}
    assert observed["A"] == pytest.approx(0.03125, abs=1e-5)
    assert observed["B"] == pytest.approx(2.26736, abs=1e-5)  # 2·1306 / (2·24²)
    assert observed["C"] == pytest.approx(0.02777, abs=1e-5)
    assert observed["D"] == pytest.approx(0.38715, abs=1e-5)


def test_krippendorff_1995_expected_and_alpha_at_fine_resolution():
    stretch = 1200000 / 24
    res = {c: category_disagreement(u, int(24 * stretch)) for c, u in k1995(stretch).items()}
    for cat, de, a in (("A", 0.06990, 0.553), ("B", 1.17731, -0.926), ("C", 0.08642, 0.679), ("D", 0.41445, 0.066)):
        assert res[cat].observed == pytest.approx(k1995_observed(cat), abs=1e-5)
        assert res[cat].expected == pytest.approx(de, abs=0.005)
        assert res[cat].alpha == pytest.approx(a, abs=0.02)


def k1995_observed(cat: str) -> float:
    return {"A": 0.03125, "B": 2.26736, "C": 0.02777, "D": 0.38715}[cat]


def test_resolution_changes_expected_disagreement_only():
    # Krippendorff (1995): same relative positions on a finer grid, same D_o, rising D_e
    expected = [category_disagreement(k1995(s)["C"], int(24 * s)).expected for s in (12 / 24, 1, 5, 50)]
    assert expected == sorted(expected)
    assert category_disagreement(k1995(0.5)["C"], 12).expected == pytest.approx(0.05494, abs=1e-5)


def test_unit_against_several_small_units():
    # r0: -11111111-   r1: --1-1-1---
    d = category_disagreement([units((1, 8)), units((2, 1), (4, 1), (6, 1))], 10)
    assert d.observed == pytest.approx(0.9100, abs=1e-4)
    assert d.expected == pytest.approx(0.5351, abs=1e-4)
    assert d.alpha == pytest.approx(-0.7003, abs=1e-4)


def test_edge_cases():
    assert alpha_u({"X": [units((0, 1)), units(), units()]}, 20).alpha == 0.0  # a single unit: chance
    assert math.isnan(alpha_u({"X": [units(), units(), units()]}, 20).alpha)  # nothing marked
    assert alpha_u({"X": [units((3, 4)), units((3, 4))]}, 20).alpha == 1.0
    with pytest.raises(ValueError, match="two annotators"):
        category_disagreement([units((0, 1))], 5)
    with pytest.raises(ValueError, match="overlap"):
        category_disagreement([units((0, 3), (2, 2)), units()], 10)
    with pytest.raises(ValueError, match="outside"):
        category_disagreement([units((8, 3)), units()], 10)


# --- an independent, literal implementation of the formula over explicit units and gaps ---


def _segments(b: np.ndarray, e: np.ndarray, length: int) -> list[tuple[int, int, int]]:
    """(begin, length, v): the annotator's units (v=1) and the gaps between them (v=0)."""
    out, at = [], 0
    for x, y in sorted(zip(b.tolist(), e.tolist())):
        if x > at:
            out.append((at, x - at, 0))
        out.append((x, y - x, 1))
        at = y
    if at < length:
        out.append((at, length - at, 0))
    return out


def _delta(a, b) -> float:
    (ba, la, va), (bb, lb, vb) = a, b
    if va and vb and -la < ba - bb < lb:
        return (ba - bb) ** 2 + (ba + la - bb - lb) ** 2
    if va and not vb and lb - la >= ba - bb >= 0:
        return la**2
    if not va and vb and lb - la <= ba - bb <= 0:
        return lb**2
    return 0.0


def brute_force(per_annotator: list[tuple[np.ndarray, np.ndarray]], length: int) -> tuple[float, float]:
    segs = [_segments(b, e, length) for b, e in per_annotator]
    m, L = len(segs), length
    do = sum(_delta(g, h) for i in range(m) for j in range(m) if i != j for g in segs[i] for h in segs[j])
    do /= m * (m - 1) * L * L
    all_segs = [s for ss in segs for s in ss]
    n_c = sum(v for _, _, v in all_segs)
    num = 0.0
    for _, l, v in all_segs:
        if not v:
            continue
        fit = sum(g - l + 1 for _, g, w in all_segs if w == 0 and g >= l)
        num += (n_c - 1) / 3 * (2 * l**3 - 3 * l**2 + l) + l * l * fit
    num *= 2 / L
    den = m * L * (m * L - 1) - sum(l * (l - 1) for _, l, v in all_segs if v)
    return do, num / den


@st.composite
def studies(draw):
    length = draw(st.integers(min_value=1, max_value=40))
    m = draw(st.integers(min_value=2, max_value=4))
    out = []
    for _ in range(m):
        cuts = sorted(set(draw(st.lists(st.integers(0, length), max_size=8))))
        pairs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
        out.append((np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64)))
    return out, length


@settings(max_examples=200, deadline=None)
@given(studies())
def test_vectorised_equals_literal_formula(study):
    per, length = study
    d = category_disagreement(per, length)
    do, de = brute_force(per, length)
    assert d.observed == pytest.approx(do, rel=1e-9, abs=1e-12)
    assert d.expected == pytest.approx(de, rel=1e-9, abs=1e-12)


def test_literal_formula_reproduces_krippendorff_2004():
    do, de = brute_force(k2004()["c"], 300)
    assert (round(do, 4), round(de, 4)) == (0.0144, 0.0532)


@settings(max_examples=100, deadline=None)
@given(studies())
def test_unit_length_units_give_nominal_alpha(study):
    """Units of length one (the boundary approach) make alpha-U Krippendorff's nominal alpha on 0/1."""
    krippendorff = pytest.importorskip("krippendorff")
    per, length = study
    points = []
    matrix = np.zeros((len(per), length))
    for k, (b, _) in enumerate(per):
        points.append((b, b + 1))
        matrix[k, b] = 1
    if np.unique(matrix).size < 2:
        return
    assert category_disagreement(points, length).alpha == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"), abs=1e-9
    )


# --- the statistics: per category and per document, added up in document order ---


@settings(max_examples=300, deadline=None)
@given(unitizations(max_docs=4, values="x"))
def test_document_statistics_added_in_order_are_the_continuum(study):
    """Gaps that run across a document boundary are one gap: the ordered sum joins them."""
    units, length, cuts = study
    per = [(np.array([b for b, _, _ in u], dtype=np.int64), np.array([e for _, e, _ in u], dtype=np.int64)) for u in units]
    starts = np.array(cuts, dtype=np.int64)
    whole = stretches(per, length)[0]
    folded = in_order(stretches(per, length, starts))
    assert (folded.length, folded.observed) == (whole.length, whole.observed)
    for field in ("units", "gaps"):
        assert all(np.array_equal(a, b) for a, b in zip(getattr(folded, field), getattr(whole, field)))
    for field in ("lead", "trail", "marked"):
        assert np.array_equal(getattr(folded, field), getattr(whole, field))
    ref = category_disagreement(per, length)
    got = folded.disagreement()
    assert got.observed == pytest.approx(ref.observed, rel=1e-12, abs=1e-15)
    assert got.expected == pytest.approx(ref.expected, rel=1e-12, abs=1e-15)


def test_statistics_reproduce_krippendorff_2004():
    res = alpha_u_of({c: stretches(u, 300)[0] for c, u in k2004().items()})
    assert res.alpha == pytest.approx(0.8591, abs=0.0005)
    assert (round(res.categories["c"].observed, 4), round(res.categories["c"].expected, 4)) == (0.0144, 0.0532)
    assert res.alpha == pytest.approx(alpha_u(k2004(), 300).alpha, rel=1e-12)


def test_a_unit_may_not_cross_a_document():
    with pytest.raises(ValueError, match="crosses a document"):
        stretches([units((3, 4)), units()], 10, np.array([0, 5]))


def test_every_pairs_disagreement_at_once_equals_each_pair_measured_alone():
    """pair_disagreements (roles: every pair of annotators from each one's stretch) equals category_disagreement of the
    two annotators' units alone, pair by pair, on random studies (empty annotators, touching and nested units)."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        length, m = int(rng.integers(5, 60)), int(rng.integers(2, 6))
        units = []
        for _ in range(m):
            cuts = np.sort(rng.choice(np.arange(length + 1), size=2 * int(rng.integers(0, 4)), replace=False))
            units.append((cuts[0::2].astype(np.int64), cuts[1::2].astype(np.int64)))
        pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
        got = pair_disagreements(units, length, pairs)
        for (i, j), d in zip(pairs, got):
            want = category_disagreement([units[i], units[j]], length)
            assert d.observed == pytest.approx(want.observed, rel=1e-12, abs=1e-15)
            assert d.expected == pytest.approx(want.expected, rel=1e-12, abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(studies())
def test_every_pairs_observed_disagreement_from_one_sort_is_the_literal_formula(study):
    """observed_matrix (all annotators' units sorted once) gives each pair the Σ δ of the literal formula on the two alone."""
    per, length = study
    got = observed_matrix(per)
    assert np.array_equal(got, got.T) and not np.diagonal(got).any()
    for i in range(len(per)):
        for j in range(i + 1, len(per)):
            observed, _ = brute_force([per[i], per[j]], length)
            assert got[i, j] / length**2 == pytest.approx(observed, rel=1e-12, abs=1e-15)


def _same_whole(a, b) -> bool:
    """A category's disagreement on the whole continuum (``alphau_whole.Whole``) is its stretch's, to the bit."""
    return a.disagreement == b.disagreement() and a.marked == bool(b.marked.any())


@settings(max_examples=200, deadline=None)
@given(unitizations(max_docs=3), st.booleans(), st.booleans())
def test_every_category_at_once_equals_each_category_alone(study, by_label, two_layers):
    """A cell's categories in one pass (``segment._whole``: every value of a layer at once) give each category's
    disagreement on the whole continuum, its stretch's to the bit, in the order and under the names ``_study`` gives them."""
    from unitize.metrics.placed import Placed
    from unitize.metrics.segment import _study, _whole

    units, length, starts = study
    values = sorted({v for u in units for _, _, v in u}) or ["a"]
    rows = [(a, b, e, values.index(v)) for a, u in enumerate(units) for b, e, v in u]
    who, begin, end, value = (np.array([r[k] for r in rows], dtype=np.int64) for k in range(4))
    names = tuple(f"m{i}" for i in range(len(units)))
    layer = Placed(names, ("d",), np.zeros(1, np.int64), length, tuple(values), who, begin, end, value)
    placed = [layer, Placed(names, ("d",), np.zeros(1, np.int64), length, tuple(values), who[::-1], begin[::-1], end[::-1],
                            value[::-1])] if two_layers else [layer]
    layers = ["Arg1", "Arg2"][: len(placed)]
    whole = _whole(placed, layers, by_label)
    alone = {c: stretches(u, length)[0] for c, u in _study(placed, layers, by_label).items()}
    assert list(whole) == list(alone)
    assert all(_same_whole(whole[c], alone[c]) for c in alone)
    # the cells of a group keep a layer's disagreements (``layer_memo``, by the placed layer's key): the layer alone first,
    # then the layers together take them, each layer's built once, the same values
    kept: dict = {}
    built: list = []

    def memo(key, build):
        if key not in kept:
            built.append(key)
            kept[key] = build()
        return kept[key]

    keyed = [replace(p, key=(name,)) for p, name in zip(placed, layers)]
    first = _whole(keyed[:1], layers[:1], by_label, memo)
    together = _whole(keyed, layers, by_label, memo)
    assert built == [("alpha-u whole", (name,)) for name in layers]
    assert list(together) == list(alone) and all(_same_whole(together[c], alone[c]) for c in alone)
    assert all(first[c] is together[c] for c in first)


@settings(max_examples=300, deadline=None)
@given(unitizations(max_docs=6, values="x"), st.sampled_from([float(1 << 60), 50.0]))
def test_every_documents_disagreement_at_once_is_each_ones_to_the_bit(study, safe):
    """``alphau_bulk.disagreements`` (a ``--by-doc`` row per document) gives each stretch's own
    :meth:`Stretch.disagreement`, exactly — also where some documents' sums go through the method (``SAFE`` lowered)."""
    from unitize.metrics import alphau_bulk

    units, length, starts = study
    per = [(np.array([b for b, _, _ in u], dtype=np.int64), np.array([e for _, e, _ in u], dtype=np.int64)) for u in units]
    parts = stretches(per, length, np.array(starts, dtype=np.int64))
    old, alphau_bulk.SAFE = alphau_bulk.SAFE, safe
    try:
        got = alphau_bulk.disagreements(parts)
    finally:
        alphau_bulk.SAFE = old
    assert [(d.observed, d.expected) for d in got] == [(d.observed, d.expected) for d in (p.disagreement() for p in parts)]


@settings(max_examples=300, deadline=None)
@given(unitizations(max_docs=6, values="x"))
def test_a_stretchs_sums_in_int64_are_its_sums_in_python_integers(study):
    """:meth:`Stretch.disagreement` sums its units in int64 where a bound says they fit: the same values as in Python
    integers (``SAFE`` 0 sends every stretch there)."""
    from unitize.metrics import alphau

    units, length, starts = study
    per = [(np.array([b for b, _, _ in u], dtype=np.int64), np.array([e for _, e, _ in u], dtype=np.int64)) for u in units]
    fast = [s.disagreement() for s in stretches(per, length, np.array(starts, dtype=np.int64))]
    old, alphau.SAFE = alphau.SAFE, 0.0
    try:
        exact = [s.disagreement() for s in stretches(per, length, np.array(starts, dtype=np.int64))]
    finally:
        alphau.SAFE = old
    assert [(d.observed, d.expected) for d in fast] == [(d.observed, d.expected) for d in exact]


def test_long_units_go_through_the_exact_method():
    """A unit of 2²⁰ positions or more would overflow int64 in the cubic term: such documents are summed in Python integers."""
    from unitize.metrics.alphau_bulk import disagreements

    length = (1 << 21) + 10
    parts = stretches([units((0, 1 << 20), (1 << 21, 5)), units((3, 1 << 20))], length, np.array([0, 1 << 21]))
    assert [(d.observed, d.expected) for d in disagreements(parts)] == [(d.observed, d.expected) for d in (p.disagreement() for p in parts)]
