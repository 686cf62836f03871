"""Coding metrics on a unit matrix through established packages, and the shared ``Value`` row.

``measure`` derives every coding metric from the sufficient statistics
(:mod:`unitize.metrics.coefficients`); the functions here are the independent,
package-backed implementations the tests check those against (and ``export``
uses :func:`category_counts` and :func:`complete_rows`).

Krippendorff's alpha through ``krippendorff`` (GPL-3.0-or-later: used as a
dependency, never copied), Fleiss' kappa, Cohen's kappa and Cochran's Q
through statsmodels. Each function takes a float matrix units × annotators
(NaN = annotator missing) and returns :class:`Value` rows; a case the metric
cannot measure (one annotator, no variation, no units) is a NaN with the reason,
never an exception.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import numpy as np

from .value import Value, nan, require

P = ParamSpec("P")
T = TypeVar("T")


def _annotators_with_data(values: np.ndarray) -> np.ndarray:
    return ~np.all(np.isnan(values), axis=0) if values.size else np.zeros(values.shape[1], dtype=bool)


def complete_rows(values: np.ndarray) -> np.ndarray:
    """Rows every annotator with data coded (the annotators with no data at all are not expected)."""
    cols = _annotators_with_data(values)
    return values[:, cols][~np.any(np.isnan(values[:, cols]), axis=1)]


def quiet(fn: Callable[P, T], *args: P.args, **kw: P.kwargs) -> T:
    """``fn(*args, **kw)`` with its warnings and NumPy floating-point warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args, **kw)


def krippendorff_alpha(values: np.ndarray, level: str = "nominal") -> Value:
    """Krippendorff's alpha over units coded by at least two annotators."""
    krippendorff = require("krippendorff", "agree")
    cols = _annotators_with_data(values)
    if cols.sum() < 2:
        return nan("fewer than two annotators with data", units_used=0)
    data = values[:, cols]
    pairable = int(np.sum(np.sum(~np.isnan(data), axis=1) >= 2))
    if pairable == 0:
        return nan("no unit is coded by two annotators", units_used=0)
    values = domain(data)
    if values.size < 2:
        return nan(f"no variation: every annotator gave every unit the value {values[0]:g}", units_used=pairable)
    try:
        a = quiet(krippendorff.alpha, reliability_data=data.T, level_of_measurement=level, value_domain=values)
    except ValueError as exc:
        return nan(f"krippendorff: {exc}", units_used=pairable)
    return Value(float(a), units_used=pairable, params={"level": level})


def domain(values: np.ndarray) -> np.ndarray:
    """The sorted distinct non-NaN values; a counting pass instead of a sort for small integer codes."""
    flat = values[~np.isnan(values)] if values.size else values.ravel()
    if flat.size and flat.min() >= 0 and flat.max() < 4096 and np.array_equal(flat, np.floor(flat)):
        return np.flatnonzero(np.bincount(flat.astype(np.int64))).astype(values.dtype)
    return np.unique(flat)


def category_counts(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Subjects × categories counts of a complete matrix, and the categories.

    What statsmodels' ``aggregate_raters`` returns, vectorised over categories
    instead of a Python loop over subjects (which takes seconds per million units).
    """
    cats = domain(data)
    inv = np.searchsorted(cats, data)
    counts = np.empty((data.shape[0], cats.size), dtype=np.int64)
    for c in range(cats.size):
        counts[:, c] = np.count_nonzero(inv == c, axis=1)
    return counts, cats


def fleiss(values: np.ndarray) -> Value:
    """Fleiss' kappa over the units every annotator coded."""
    fleiss_kappa = require("statsmodels.stats.inter_rater", "agree").fleiss_kappa
    data = complete_rows(values)
    if data.shape[1] < 2:
        return nan("fewer than two annotators with data", units_used=0)
    if data.shape[0] == 0:
        return nan("no unit is coded by every annotator", units_used=0)
    table, cats = category_counts(data)
    if len(cats) < 2:
        return nan(f"no variation: every annotator gave every unit the value {cats[0]:g}", units_used=data.shape[0])
    k = quiet(fleiss_kappa, table, method="fleiss")
    if not np.isfinite(k):
        return nan("Fleiss' kappa is undefined for these data", units_used=data.shape[0])
    return Value(float(k), units_used=int(data.shape[0]))


def cohen(values: np.ndarray, annotators: list[str]) -> list[Value]:
    """Cohen's kappa with its standard error for every pair of annotators, over units both coded."""
    cohens_kappa = require("statsmodels.stats.inter_rater", "agree").cohens_kappa
    cols = np.nonzero(_annotators_with_data(values))[0]
    if cols.size < 2:
        return [nan("fewer than two annotators with data", units_used=0)]
    out = []
    for x in range(cols.size):
        for y in range(x + 1, cols.size):
            i, j = cols[x], cols[y]
            pair = f"{annotators[i]}|{annotators[j]}"
            both = ~np.isnan(values[:, i]) & ~np.isnan(values[:, j])
            a, b = values[both, i], values[both, j]
            if a.size == 0:
                out.append(nan("the pair coded no unit in common", units_used=0, pair=pair))
                continue
            cats = domain(np.concatenate([a, b]))
            k = cats.size
            ia, ib = np.searchsorted(cats, a), np.searchsorted(cats, b)
            table = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k).astype(np.float64)
            if k < 2:
                out.append(nan(f"no variation: both gave every unit the value {cats[0]:g}", units_used=int(a.size), pair=pair))
                continue
            res = quiet(cohens_kappa, table, return_results=True)
            if not np.isfinite(res.kappa):
                out.append(nan("Cohen's kappa is undefined: one annotator used a single value", units_used=int(a.size), pair=pair))
                continue
            out.append(Value(float(res.kappa), units_used=int(a.size), std_err=float(res.std_kappa), pair=pair))
    return out


def cochran_q(values: np.ndarray, binary: bool) -> Value:
    """Cochran's Q (with df and p-value) over units every annotator coded; binary data only."""
    cochrans_q = require("statsmodels.stats.contingency_tables", "agree").cochrans_q
    if not binary:
        return nan("Cochran's Q needs binary (0/1) values")
    data = complete_rows(values)
    if data.shape[1] < 2:
        return nan("fewer than two annotators with data", units_used=0)
    if data.shape[0] == 0:
        return nan("no unit is coded by every annotator", units_used=0)
    if np.all(data == data[:, :1]):
        return nan("no variation: every unit got the same value from every annotator", units_used=int(data.shape[0]))
    res = quiet(cochrans_q, data)
    if not np.isfinite(res.statistic):
        return nan("Cochran's Q is undefined for these data", units_used=int(data.shape[0]))
    return Value(float(res.statistic), units_used=int(data.shape[0]), df=float(res.df), p_value=float(res.pvalue))
