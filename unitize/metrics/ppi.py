"""Prediction-powered inference of a mean: many model labels, few human ones, a valid interval.

Angelopoulos et al. (2023, PPI) and its power-tuned form PPI++ (Angelopoulos, Duchi & Zrnic 2023): a
quantity's mean over a corpus is estimated from a model's value ``Ŷ`` on every observation and the humans'
value ``Y`` on a random subset of ``n`` of them (the other ``N`` have the model's only):

    θ̂ = mean(λ·Ŷ over the N)  +  mean(Y − λ·Ŷ over the n)

``λ = 1`` is PPI, ``λ = 0`` the humans alone (classical), and PPI++ picks the λ in [0, 1] that makes the
interval narrowest. The interval is the normal one, ``θ̂ ± z·√(var(λŶ)/N + var(Y − λŶ)/n)``. Each column of
the arrays (a label) is its own estimand with its own λ. The numbers equal those of ``ppi_py`` (the
``ppi-python`` package: ``ppi_mean_pointestimate``, ``ppi_mean_ci``, ``classical_mean_ci``,
``ppi_mean_power``), which the tests check; two cases it leaves as NaN have an answer here: no observation
without a human value (``N = 0``: the classical estimate, λ = 0) and a model that gives every observation
the same value (λ = 0 too: it carries nothing).

The power analysis (Broska, Howes & van Loon 2024, as ``ppi_py.ppi_power`` with no cost of the data itself)
answers the planning question: for the interval a classical estimate from ``n0`` human labels would give,
the cheapest pair of ``n`` human labels and ``N`` more model labels, from the correlation of ``Y`` and ``Ŷ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np


@dataclass(frozen=True)
class MeanEstimate:
    """Per column: the PPI++ estimate and interval beside the classical (humans-only) ones."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lam: np.ndarray  # the power-tuning λ used
    classical: np.ndarray
    classical_low: np.ndarray
    classical_high: np.ndarray
    effective_n: np.ndarray  # how many human labels a classical interval this narrow would need
    n: int
    N: int


def _columns(x: np.ndarray) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    return a.reshape(-1, 1) if a.ndim == 1 else a


def z_value(alpha: float) -> float:
    """The normal quantile of a two-sided interval of coverage ``1 − alpha``."""
    return NormalDist().inv_cdf(1 - alpha / 2)


def tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> np.ndarray:
    """PPI++'s λ per column (``ppi_py``'s ``_calc_lam_glm`` for a mean, clipped to [0, 1]): the covariance of ``Y``
    and ``Ŷ`` over ``(1 + n/N)`` times the variance of every ``Ŷ``; 0 where there is no ``N`` or ``Ŷ`` is constant."""
    y, yhat, unl = _columns(y), _columns(yhat), _columns(yhat_unlabeled)
    n, big_n = y.shape[0], unl.shape[0]
    if big_n == 0 or n == 0:
        return np.zeros(y.shape[1])
    cov = ((y - y.mean(0)) * (yhat - yhat.mean(0))).sum(0) / n
    every = np.concatenate([yhat, unl])
    var = every.var(0, ddof=1) if every.shape[0] > 1 else np.zeros(y.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var > 0, cov / ((1 + n / big_n) * var), 0.0)
    return np.clip(lam, 0.0, 1.0)


def mean_estimate(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, alpha: float = 0.05,
                  lam: float | None = None) -> MeanEstimate:
    """The PPI++ mean of each column (``lam=None``; ``lam=1``: plain PPI) with its two-sided ``1 − alpha`` interval,
    beside the classical mean of the human values ``y``. ``y`` and ``yhat`` are the same ``n`` observations."""
    y, yhat, unl = _columns(y), _columns(yhat), _columns(yhat_unlabeled)
    n, big_n = y.shape[0], unl.shape[0]
    if n < 1:
        raise ValueError("a mean needs at least one observation with a human value")
    lams = tuned_lambda(y, yhat, unl) if lam is None else np.full(y.shape[1], float(lam) if big_n else 0.0)
    rectified = y - lams * yhat
    imputed = lams * unl
    estimate = rectified.mean(0) + (imputed.mean(0) if big_n else 0.0)
    imputed_var = (imputed.std(0) / math.sqrt(big_n)) ** 2 if big_n else 0.0
    se = np.sqrt(imputed_var + (rectified.std(0) / math.sqrt(n)) ** 2)
    classical = y.mean(0)
    classical_se = y.std(0) / math.sqrt(n)
    z = z_value(alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(se > 0, n * (classical_se / se) ** 2, float(n))
    return MeanEstimate(estimate, estimate - z * se, estimate + z * se, lams, classical, classical - z * classical_se,
                        classical + z * classical_se, effective, n, big_n)


def correlation(y: np.ndarray, yhat: np.ndarray) -> float:
    """The PPI correlation of one column (``ppi_py``'s ``_get_ppi_corr`` for a mean): Pearson's r of ``Y`` and ``Ŷ``,
    at most ``1 − 1/n``; 0 where either is constant."""
    y, yhat = _columns(y)[:, 0], _columns(yhat)[:, 0]
    n = y.shape[0]
    dy, dh = y - y.mean(), yhat - yhat.mean()
    denominator = math.sqrt(float((dy * dy).sum() / n) * float((dh * dh).sum() / n))
    if denominator == 0:
        return 0.0
    return min(float((dy * dh).sum() / n) / denominator, 1 - 1 / n)


@dataclass(frozen=True)
class Pair:
    """The cheapest design of a PPI estimate as precise as a classical one from ``effective_n`` human labels."""

    n: int  # human labels (the model labels these too)
    N: int  # observations only the model labels
    cost: float
    effective_n: int
    corr: float


def cheapest_pair(corr: float, effective_n: float, cost_human: float, cost_model: float) -> Pair:
    """``ppi_py.ppi_power(corr, 0, cost_human, cost_model, effective_n=…)``: the pair (n, N) of least cost whose PPI
    interval is as narrow as the classical one of ``effective_n`` human labels; all human labels (N = 0) when the
    model is too weakly correlated or too dear to pay off."""
    if not -1 < corr < 1:
        raise ValueError("the PPI correlation must be strictly between -1 and 1")
    if cost_human <= 0 or cost_model < 0:
        raise ValueError("a human label costs more than 0 and a model label at least 0")
    gamma = cost_model / cost_human
    r2 = corr * corr
    ppi_cost = cost_human * (1 - r2 + gamma * r2 + 2 * math.sqrt(gamma * r2 * (1 - r2)))
    n_float = effective_n * (1 - r2 + math.sqrt(gamma * r2 * (1 - r2)))
    denominator = n_float - (1 - r2) * effective_n
    big_float = n_float * (effective_n - n_float) / denominator if corr != 0 and denominator != 0 else (math.inf if corr else 0.0)
    if cost_human < ppi_cost or big_float < 0 or not math.isfinite(big_float):
        n = round(effective_n)
        return Pair(n, 0, n * cost_human, n, corr)
    n, big_n = round(n_float), round(big_float)
    achieved = round(n * (n + big_n) / (n + (1 - r2) * big_n))
    return Pair(n, big_n, n * cost_human + (n + big_n) * cost_model, achieved, corr)


def classical_n(y: np.ndarray, width: float, alpha: float = 0.05) -> int:
    """Human labels a classical interval of total ``width`` needs, with the spread of the pilot values ``y``
    (``(2·z·σ / width)²``, rounded up; at least 2)."""
    sigma = float(_columns(y)[:, 0].std())
    return max(2, math.ceil((2 * z_value(alpha) * sigma / width) ** 2))
