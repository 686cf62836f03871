"""Every pair at once (metrics/pairwise.py) equals each pair alone (Stats.pair and the coefficient): alpha at every level,
Fleiss' kappa and Cochran's Q, on random codings with missing values, an annotator who coded nothing, a pair with no
unit in common and pairs without variation (those left to the pair alone, which says why)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from unitize.metrics import coefficients as C
from unitize.metrics import pairwise
from unitize.metrics import stats as S
from unitize.metrics.value import Value


def coding(seed: int, values: int, binary: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    units, coders = int(rng.integers(3, 40)), int(rng.integers(2, 7))
    data = rng.integers(0 if binary else 1, 2 if binary else values + 1, size=(units, coders)).astype(float)
    agree = rng.random(units) < 0.5
    data[agree] = data[agree, :1]
    data[rng.random(data.shape) < rng.choice([0.0, 0.3, 0.6])] = np.nan
    if coders > 2 and seed % 3 == 0:
        data[:, -1] = np.nan  # an annotator who coded nothing
    if coders > 3 and seed % 4 == 1:
        data[: units // 2, 0], data[units // 2:, 1] = np.nan, np.nan  # a pair with no unit in common
    if seed % 5 == 2:
        data[:, 2 % coders] = data[:, 0]  # a pair that always agrees (one value only, on small data)
    return data


def alone(s: S.Stats, formula, pairs) -> list[Value]:
    return [formula(s.pair(i, j)) for i, j in pairs]


def same(batched: list[Value | None], single: list[Value]) -> int:
    """How many pairs the batch measured; each equals the pair alone, and a pair it left is a NaN alone."""
    measured = 0
    for got, want in zip(batched, single, strict=True):
        if got is None:
            assert np.isnan(want.value) and want.reason, want
            continue
        measured += 1
        assert got.value == pytest.approx(want.value, rel=1e-12, abs=1e-14)
        assert (got.units_used, got.params, got.df) == (want.units_used, want.params, want.df)
        for field in ("std_err", "p_value"):
            a, b = getattr(got, field), getattr(want, field)
            assert (a is None and b is None) or a == pytest.approx(b, rel=1e-12, abs=1e-14)
    return measured


def test_every_pair_at_once_equals_each_pair_alone() -> None:
    measured = left = 0
    for seed in range(40):
        data = coding(seed, values=4, binary=False)
        s = S.from_codes(*S.codes(data, None), [f"c{i}" for i in range(data.shape[1])])
        pairs = list(combinations(range(data.shape[1]), 2)) + [(1, 0)]
        for level in C.LEVELS:
            got = pairwise.alpha(s, level, False, pairs)
            measured += same(got, alone(s, lambda p, lv=level: C.alpha(p, lv), pairs))
            left += got.count(None)
        got = pairwise.fleiss(s, "nominal", False, pairs)
        measured += same(got, alone(s, C.fleiss, pairs))
        left += got.count(None)
    assert (measured, left) == (MEASURED, LEFT)  # both kinds met: most pairs at once, the NaN cases alone


#: of the 40 random codings' pairs × 5 coefficients: measured at once, and left to the pair alone
MEASURED, LEFT = 1330, 305


@pytest.mark.parametrize("seed", range(30))
def test_cochrans_q_of_every_pair_at_once_equals_each_pair_alone(seed: int) -> None:
    data = coding(seed, values=2, binary=True)
    s = S.from_codes(*S.codes(data, None), [f"c{i}" for i in range(data.shape[1])])
    pairs = list(combinations(range(data.shape[1]), 2))
    same(pairwise.cochran_q(s, "nominal", True, pairs), alone(s, lambda p: C.cochran_q(p, True), pairs))
    not_binary = pairwise.cochran_q(s, "nominal", False, pairs)  # not 0/1 data: what each pair alone says
    assert [(v.reason, v.units_used) for v in not_binary] == [(C.cochran_q(s.pair(i, j), False).reason, None) for i, j in pairs]


def test_a_published_table_as_one_pair_of_many() -> None:
    """Cohen (1960)'s 200 units coded by two annotators, beside a third who coded other units: the pair's alpha and
    Fleiss' kappa at once are those of the two alone."""
    rows = [(1, 1)] * 88 + [(1, 2)] * 14 + [(1, 3)] * 18 + [(2, 1)] * 10 + [(2, 2)] * 40 + [(2, 3)] * 10 + [(3, 1)] * 2 + [(3, 2)] * 6 + [(3, 3)] * 12
    data = np.full((220, 3), np.nan)
    data[:200, :2] = rows
    data[200:, 2], data[200:, 0] = 1, 2
    s = S.from_codes(*S.codes(data, None), ["a", "b", "c"])
    (got,) = pairwise.fleiss(s, "nominal", False, [(0, 1)])
    assert got is not None and got.units_used == 200
    assert got.value == pytest.approx(C.fleiss(s.pair(0, 1)).value, rel=1e-12)
    (a,) = pairwise.alpha(s, "nominal", False, [(0, 1)])
    assert a is not None and a.value == pytest.approx(C.alpha(s.pair(0, 1), "nominal").value, rel=1e-12)
