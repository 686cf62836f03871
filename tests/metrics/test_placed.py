"""Placed segments: the order of a layer's units by annotator (and value), in any row order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from unitize.metrics.placed import run_order


@st.composite
def runs(draw):
    """Units as (run, begin): each run's begins in order (as segments are written) or shuffled."""
    n = draw(st.integers(0, 40))
    run = np.array(draw(st.lists(st.integers(0, draw(st.sampled_from([3, 40_000]))), min_size=n, max_size=n)), np.int64)
    begin = np.array(draw(st.lists(st.integers(0, 50), min_size=n, max_size=n)), np.int64)
    if draw(st.booleans()):  # positions in order within each run (the runs interleaved), as segments are written
        begin = np.sort(begin)
    return run, begin


@settings(max_examples=400, deadline=None)
@given(runs())
def test_units_are_ordered_by_run_then_position_as_a_stable_sort_orders_them(units):
    run, begin = units
    assert run_order(run, begin).tolist() == np.lexsort((begin, run)).tolist()


def test_runs_whose_positions_come_in_order_take_the_stable_sort_by_run():
    run = np.array([1, 0, 1, 0, 2], np.int64)
    begin = np.array([0, 1, 5, 7, 3], np.int64)
    assert run_order(run, begin).tolist() == [1, 3, 0, 2, 4]
    assert run_order(run, np.array([9, 1, 5, 7, 3], np.int64)).tolist() == [1, 3, 2, 0, 4]  # run 1 out of order
