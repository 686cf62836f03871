"""Alpha-U of a cell's values on the whole continuum at once (:mod:`unitize.metrics.alphau_whole`): the same values, bit
for bit, as each value's stretch (:func:`~unitize.metrics.alphau.stretches`), in any row order, with units of one unit
(the boundary approach's) and without."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import unitizations
from unitize.metrics import alphau
from unitize.metrics.alphau import category_disagreement, stretches
from unitize.metrics.alphau_whole import whole_disagreements
from unitize.metrics.placed import Placed


def placed(units: list[list[tuple[int, int, str]]], length: int, order: np.ndarray | None = None) -> Placed:
    """Per annotator (begin, end, value) segments as one layer's :class:`Placed` (rows in ``order``)."""
    values = tuple(sorted({v for mine in units for _, _, v in mine}))
    rows = [(a, b, e, values.index(v)) for a, mine in enumerate(units) for b, e, v in mine]
    who, begin, end, value = (np.array([r[k] for r in rows], dtype=np.int64) for k in range(4))
    if order is not None:
        who, begin, end, value = who[order], begin[order], end[order], value[order]
    return Placed(tuple(f"a{k}" for k in range(len(units))), ("d",), np.zeros(1, np.int64), length, values, who, begin, end, value)


def per_value(units: list[list[tuple[int, int, str]]], value: str) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(np.array([b for b, _, v in mine if v == value], np.int64), np.array([e for _, e, v in mine if v == value], np.int64))
            for mine in units]


@settings(max_examples=300, deadline=None)
@given(unitizations(), st.randoms(use_true_random=False))
def test_every_value_is_its_stretch_bit_for_bit(study, rnd):
    units, length, _ = study
    if not any(units):
        return
    p = placed(units, length)
    order = np.array(rnd.sample(range(p.begin.size), p.begin.size), dtype=np.int64)  # any row order
    for got in (whole_disagreements(p), whole_disagreements(placed(units, length, order))):
        assert len(got) == len(p.values)
        for value, whole in zip(p.values, got):
            units_of = per_value(units, value)
            assert whole.disagreement == stretches(units_of, length)[0].disagreement()
            assert whole.marked == any(np.any(e > b) for b, e in units_of)
            reference = category_disagreement(units_of, length)
            assert whole.disagreement.observed == pytest.approx(reference.observed, rel=1e-12, abs=1e-15)
            assert whole.disagreement.expected == pytest.approx(reference.expected, rel=1e-12, abs=1e-15)


@st.composite
def single_units(draw):
    """Per annotator, units one unit long (each segment's first and last unit, as the boundary approach places them)."""
    length = draw(st.integers(min_value=1, max_value=40))
    m = draw(st.integers(min_value=2, max_value=5))
    return [[(x, x + 1, draw(st.sampled_from("xy"))) for x in sorted(set(draw(st.lists(st.integers(0, length - 1), max_size=12))))]
            for _ in range(m)], length


@settings(max_examples=300, deadline=None)
@given(single_units())
def test_units_of_one_unit_take_the_short_route_to_the_same_values(study):
    units, length = study
    if not any(units):
        return
    p = placed(units, length)
    for value, whole in zip(p.values, whole_disagreements(p)):
        assert whole.disagreement == stretches(per_value(units, value), length)[0].disagreement()
        assert whole.marked


def test_a_hand_computed_boundary_cell():
    # three annotators on 10 units: positions 2 (all three), 5 (two), 7 (one)
    units = [[(2, 3, "x"), (5, 6, "x"), (7, 8, "x")], [(2, 3, "x"), (5, 6, "x")], [(2, 3, "x")]]
    [whole] = whole_disagreements(placed(units, 10))
    m, L, n_c = 3, 10, 6
    observed = 3 * 0 + 2 * 1 + 1 * 2  # c (m − c) at each position
    assert whole.disagreement.observed == 2 * observed / (m * (m - 1) * L * L)
    assert whole.disagreement.expected == 2 * n_c * (m * L - n_c) / (L * (m * L * (m * L - 1)))


def test_zero_length_units_are_left_out_and_a_value_without_units_is_unmarked():
    units = [[(2, 2, "x"), (4, 6, "y")], [(5, 6, "y")]]
    x, y = whole_disagreements(placed(units, 10))
    assert not x.marked and x.disagreement.observed == 0.0 and x.disagreement.expected == 0.0
    assert y.marked and y.disagreement == stretches(per_value(units, "y"), 10)[0].disagreement()


def test_large_sums_go_through_python_integers_with_the_same_values(monkeypatch):
    units = [[(0, 40, "x"), (50, 90, "x")], [(10, 45, "x")], [(60, 100, "x")]]
    fast = whole_disagreements(placed(units, 100))
    monkeypatch.setattr(alphau, "SAFE", 1.0)  # every sum "might not fit": term by term in Python integers
    assert whole_disagreements(placed(units, 100)) == fast


@pytest.mark.parametrize("units, length, message", [
    ([[(0, 4, "x"), (3, 6, "x")], [(1, 2, "x")]], 10, "overlap"),
    ([[(2, 3, "x"), (2, 3, "x")], [(1, 2, "x")]], 10, "overlap"),  # one unit long, twice at one position
    ([[(0, 4, "x")], [(8, 12, "x")]], 10, "outside"),
    ([[(0, 4, "x")]], 10, "two annotators"),
    ([[(0, 0, "x")], []], 0, "positive length"),
])
def test_what_alpha_u_cannot_measure_is_refused(units, length, message):
    with pytest.raises(ValueError, match=message):
        whole_disagreements(placed(units, length))

