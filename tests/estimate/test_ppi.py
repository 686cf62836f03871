"""PPI and PPI++ means, their intervals and the power analysis: equal to ppi_py (the ppi-python package) itself."""

from __future__ import annotations

import numpy as np
import pytest

from unitize.metrics import ppi

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test dependency (make test installs it)")
from ppi_py.baselines import classical_mean_ci  # noqa: E402
from ppi_py.ppi import _calc_lam_glm  # noqa: E402
from ppi_py.ppi_power_analysis import ppi_mean_power  # noqa: E402


def sample(seed: int, n: int, big_n: int, flip: float, binary: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human values Y of n observations, a model's Ŷ of them (wrong with probability ``flip``), and Ŷ of N more."""
    rng = np.random.default_rng(seed)
    if binary:
        y = rng.binomial(1, 0.3, n).astype(float)
        yhat = np.where(rng.random(n) < flip, 1 - y, y)
        return y, yhat, rng.binomial(1, 0.3, big_n).astype(float)
    y = rng.normal(2.0, 1.0, n)  # ppi_py's own tests: a noisy prediction of a continuous value
    return y, y + rng.normal(0.2, flip, n), rng.normal(2.2, 1.0 + flip, big_n)


CASES = [(0, 50, 500, 0.1, True), (1, 200, 2_000, 0.3, True), (2, 20, 80, 0.05, True), (3, 100, 1_000, 0.5, False),
         (4, 1_000, 10_000, 1.0, False), (5, 13, 7, 0.2, True)]


@pytest.mark.parametrize(("seed", "n", "big_n", "flip", "binary"), CASES)
@pytest.mark.parametrize("alpha", [0.1, 0.05])
def test_the_mean_and_its_interval_equal_ppi_py(seed: int, n: int, big_n: int, flip: float, binary: bool, alpha: float) -> None:
    y, yhat, unlabeled = sample(seed, n, big_n, flip, binary)
    tuned = ppi.mean_estimate(y, yhat, unlabeled, alpha=alpha)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=alpha)
    assert tuned.estimate[0] == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled))[0]), abs=1e-12)
    assert (tuned.low[0], tuned.high[0]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    plain = ppi.mean_estimate(y, yhat, unlabeled, alpha=alpha, lam=1.0)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=alpha, lam=1)
    assert (plain.low[0], plain.high[0]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    low, high = classical_mean_ci(y, alpha=alpha)
    assert (tuned.classical_low[0], tuned.classical_high[0]) == pytest.approx((float(low), float(high)), abs=1e-9)
    centred = y - 0.0
    lam = _calc_lam_glm(centred - centred.mean(), yhat - centred.mean(), unlabeled - centred.mean(), np.eye(1), clip=True)
    assert tuned.lam[0] == pytest.approx(float(lam), abs=1e-12)


def test_each_column_is_its_own_estimand() -> None:
    """A column per label: each with its own λ, as ppi_py on that column alone."""
    y, yhat, unlabeled = sample(7, 80, 600, 0.2)
    y2, yhat2, unlabeled2 = sample(8, 80, 600, 0.4)
    both = ppi.mean_estimate(np.c_[y, y2], np.c_[yhat, yhat2], np.c_[unlabeled, unlabeled2])
    for k, (a, b, c) in enumerate([(y, yhat, unlabeled), (y2, yhat2, unlabeled2)]):
        low, high = ppi_py.ppi_mean_ci(a, b, c, alpha=0.05)
        assert (both.low[k], both.high[k]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    assert both.lam[0] != both.lam[1]


def test_where_ppi_py_gives_nan_the_answer_is_the_classical_one() -> None:
    """No observation without a human value, or a model that says the same everywhere: λ = 0, the humans' mean."""
    y, yhat, _ = sample(9, 40, 0, 0.1)
    alone = ppi.mean_estimate(y, yhat, np.zeros(0))
    assert alone.lam[0] == 0 and alone.estimate[0] == y.mean() and alone.low[0] == alone.classical_low[0]
    constant = ppi.mean_estimate(y, np.ones(40), np.ones(100))
    assert constant.lam[0] == 0 and constant.estimate[0] == pytest.approx(y.mean())
    assert alone.effective_n[0] == pytest.approx(40)


@pytest.mark.parametrize(("seed", "flip", "cost_model", "effective_n"), [(0, 0.05, 0.1, 300), (1, 0.1, 0.01, 1_000), (2, 0.3, 0.1, 300),
                                                                          (3, 0.02, 0.5, 50), (4, 0.0001, 0.001, 2_000)])
def test_the_cheapest_pair_equals_ppi_py_power_analysis(seed: int, flip: float, cost_model: float, effective_n: int) -> None:
    y, yhat, _ = sample(seed, 400, 0, flip)
    expected = ppi_mean_power(y, yhat, 1.0, cost_model, effective_n=effective_n)
    corr = ppi.correlation(y, yhat)
    assert corr == pytest.approx(expected["ppi_corr"], abs=1e-12)
    pair = ppi.cheapest_pair(corr, effective_n, 1.0, cost_model)
    assert (pair.n, pair.N, pair.effective_n) == (expected["n"], expected["N"], expected["effective_n"])
    assert pair.cost == pytest.approx(expected["cost"], abs=1e-9)


def test_a_weak_model_is_not_worth_labels() -> None:
    """A correlation of 0 (or a model label dearer than the saving): all human labels, none from the model only — as
    ppi_py.ppi_power says (with ρ = 0 it still counts the model's labels of the n)."""
    from ppi_py.ppi_power_analysis import ppi_power

    for corr, cost_model in [(0.0, 0.01), (0.3, 2.0)]:
        expected = ppi_power(corr, 0, 1.0, cost_model, effective_n=100)
        pair = ppi.cheapest_pair(corr, 100, 1.0, cost_model)
        assert (pair.n, pair.N, pair.cost, pair.effective_n) == (100, 0, expected["cost"], 100) and expected["N"] == 0
    with pytest.raises(ValueError, match="strictly between"):
        ppi.cheapest_pair(1.0, 100, 1.0, 0.1)


def test_classical_sample_size_for_a_width() -> None:
    """(2·z·σ / width)² rounded up: σ = 0.5 (a half-half label), width 0.1 at 95 %: 384.1… → 385."""
    y = np.array([0.0, 1.0] * 10)
    assert ppi.classical_n(y, 0.1, 0.05) == 385
    assert ppi.classical_n(np.ones(5), 0.1) == 2
