"""Gwet's AC1 and AC2 against irrCAC, the Python port of Gwet's R package (``gwet.ac1.raw``).

irrCAC 0.4.4 pins ``scipy==1.12.0`` and ``pandas<3`` (installing it would downgrade what
statsmodels brings), so it is not in the ``test`` extra: this test runs where it is installed
(``pip install --no-deps irrCAC`` beside the project's scipy and pandas works) and skips cleanly
elsewhere. All four levels agree to 1e-12, on Gwet's ``raw_4raters`` (AC1 .775444, his published
.77544) and on random data with missing ratings.
"""

from __future__ import annotations

import numpy as np
import pytest

irr = pytest.importorskip("irrCAC.raw")
pd = pytest.importorskip("pandas")

from unitize.metrics import coefficients as C  # noqa: E402
from unitize.metrics import stats as S  # noqa: E402

#: our level -> irrCAC's weights
WEIGHTS = {"nominal": "identity", "ordinal": "ordinal", "interval": "quadratic", "ratio": "ratio"}


def _datasets():
    from irrCAC import datasets

    yield "raw_4raters", datasets.raw_4raters().to_numpy(dtype=float)
    rng = np.random.default_rng(12)
    for i in range(4):
        values = rng.integers(1, 6, size=(60, 4)).astype(float)
        values[rng.random(values.shape) < 0.2] = np.nan  # missing ratings
        values[:, 1] = np.where(rng.random(60) < 0.6, values[:, 0], values[:, 1])  # some agreement
        yield f"random-{i}", values


@pytest.mark.parametrize("level", list(WEIGHTS))
def test_ac1_and_ac2_equal_irrcac(level):
    checked = 0
    for name, values in _datasets():
        values = values[~np.all(np.isnan(values), axis=1)]
        cols, dom = S.codes(values)
        mine = C.ac2(S.from_codes(cols, dom, [f"r{k}" for k in range(values.shape[1])]), level)
        # categories given: with pandas 3, irrCAC's own list (stack().unique()) would count NaN as one
        theirs = irr.CAC(pd.DataFrame(values), weights=WEIGHTS[level], categories=dom.tolist(), digits=15).gwet()["est"]
        assert mine.value == pytest.approx(float(theirs["coefficient_value"]), abs=1e-12), name
        assert mine.params["pa"] == pytest.approx(float(theirs["pa"]), abs=1e-12), name
        assert mine.params["pe"] == pytest.approx(float(theirs["pe"]), abs=1e-12), name
        checked += 1
    assert checked == 5
