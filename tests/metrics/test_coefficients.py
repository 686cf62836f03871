"""Cochran's Q's p-value without scipy: the chi-square survival function in closed form (coefficients.chi2_sf).

scipy is the reference where it is installed (it comes with statsmodels, of the ``agree`` extra);
the closed forms at df 1, 2 and 4 and a Q worked by hand need nothing. Cochran's (1950) published
Q = 8.05 is checked in test_stats.py and test_published.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from unitize import metrics
from unitize.metrics import coefficients as C
from unitize.metrics import stats as S

#: degrees of freedom: every panel up to 120 annotators, and some large ones
DFS = [*range(1, 121), 150, 201, 300, 501, 1000, 1001, 2000]
#: statistics from 1e-10 to 3,000: p-values from 1 down to below 1e-300, both ways of summing the terms
QS = sorted({*np.geomspace(1e-10, 3000.0, 300).tolist(), *np.arange(0.25, 200.0, 0.25).tolist(), 1399.9, 1400.0, 1400.1})


@pytest.mark.parametrize("df", DFS)
def test_chi2_sf_equals_scipy(df: int) -> None:
    chi2 = pytest.importorskip("scipy.stats").chi2
    for q, expected in zip(QS, chi2.sf(QS, df).tolist()):
        got = C.chi2_sf(q, df)
        if expected < 1e-300:  # below the normal floats, where scipy's own digits thin out
            assert got < 1e-290, (q, df, expected, got)
        else:
            assert got == pytest.approx(expected, rel=1e-12, abs=0), (q, df)


def test_chi2_sf_closed_forms_and_edges() -> None:
    for q in (1e-6, 0.5, 2.0, 8.05, 40.0, 1000.0, 2000.0):
        assert C.chi2_sf(q, 2) == pytest.approx(math.exp(-q / 2), rel=1e-15)
        assert C.chi2_sf(q, 1) == pytest.approx(math.erfc(math.sqrt(q / 2)), rel=1e-15)
        assert C.chi2_sf(q, 4) == pytest.approx(math.exp(-q / 2) * (1 + q / 2), rel=1e-14)
    assert C.chi2_sf(0.0, 3) == C.chi2_sf(-1.0, 3) == 1.0
    assert C.chi2_sf(math.inf, 3) == 0.0
    assert math.isnan(C.chi2_sf(math.nan, 3))
    for df in (0, -1, 2.5):
        with pytest.raises(ValueError, match="positive integer"):
            C.chi2_sf(1.0, df)  # type: ignore[arg-type]


def test_cochran_q_needs_no_package() -> None:
    """Three annotators, five units: column sums 4, 2, 2 (T = 8), row sums 2, 1, 3, 0, 2 (Σ R² = 18), so
    Q = 2 (3 · 24 − 64) / (3 · 8 − 18) = 8/3 on 2 df, and p = e^(−Q/2)."""
    data = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 1]], dtype=float)
    cols, domain = S.codes(data)
    v = C.cochran_q(S.from_codes(cols, domain, ["a", "b", "c"]), binary=True)
    assert v.value == pytest.approx(8 / 3, rel=1e-15) and v.df == 2 and v.units_used == 5
    assert v.p_value == pytest.approx(math.exp(-4 / 3), rel=1e-15)


def test_the_default_metrics_need_no_extra() -> None:
    """``unitize agree`` without --metric installs nothing beyond unitize (Cochran's Q included)."""
    assert [m.name for m in metrics.resolve(metrics.default()) if m.requires is not None] == []
