"""Coding coefficients from the sufficient statistics (:mod:`unitize.agree.stats`).

Every function takes a :class:`~unitize.agree.stats.Stats` and returns
:class:`~unitize.agree.backends.Value` rows; a case a coefficient cannot
measure is a NaN with the reason, never an exception. Formulas:

- Krippendorff's alpha (Krippendorff 2011): 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck
  on the coincidence matrix, with the nominal, ordinal, interval and ratio δ².
- Fleiss' kappa (Fleiss 1971) over the units every annotator with data coded (crowd
  data: the units with the most common number of raters), with the standard error
  under κ = 0 of Fleiss, Nee & Landis (1979).
- Cohen's kappa (Cohen 1960) and Scott's pi (Scott 1955) per pair from the pair's
  contingency table; Cohen's standard error as statsmodels (Fleiss, Cohen & Everitt 1969).
- Gwet's AC1 and AC2 (Gwet 2008, 2014; irrCAC's ``gwet.ac1.raw`` with missing
  ratings) and the percent agreement (AC1's p_a).
- Cochran's Q (Cochran 1950) on binary data over the units every annotator coded.
"""

from __future__ import annotations

from math import comb

import numpy as np

from .backends import Value, nan
from .stats import Stats

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _variation(s: Stats, used: int) -> Value | None:
    present = s.patterns.sum(axis=0) > 0
    if present.sum() < 2:
        value = f" {s.domain[present][0]:g}" if present.any() else ""
        return nan(f"no variation: every annotator gave every unit the value{value}", units_used=used)
    return None


def distances(s: Stats, level: str, marginals: np.ndarray) -> np.ndarray:
    """Krippendorff's squared difference δ²_ck for a level of measurement."""
    v = s.domain
    if level == "nominal":
        return 1.0 - np.eye(v.size)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        total = v[:, None] + v[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total == 0, 0.0, ((v[:, None] - v[None, :]) / total) ** 2)
    if level == "ordinal":
        cum = np.concatenate(([0.0], np.cumsum(marginals)))
        lo = np.minimum.outer(np.arange(v.size), np.arange(v.size))
        hi = np.maximum.outer(np.arange(v.size), np.arange(v.size))
        return (cum[hi + 1] - cum[lo] - (marginals[:, None] + marginals[None, :]) / 2) ** 2
    raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")


def alpha(s: Stats, level: str = "nominal") -> Value:
    """Krippendorff's alpha from the coincidence matrix."""
    if s.annotators and (s.annotator_counts().sum(axis=1) > 0).sum() < 2:
        return nan("fewer than two annotators with data", units_used=0)
    used = s.n_pairable
    if used == 0:
        return nan("no unit is coded by two annotators", units_used=0)
    o = s.coincidence()
    n_c = o.sum(axis=1)
    if (n_c > 0).sum() < 2:
        return _variation(s.with_units(s.units * (s.raters >= 2)), used) or nan("no variation", units_used=used)
    n = n_c.sum()
    d = distances(s, level, n_c)
    expected = n_c @ d @ n_c
    if expected == 0:
        return nan("no expected disagreement", units_used=used)
    return Value(float(1 - (n - 1) * (o * d).sum() / expected), units_used=used, params={"level": level})


def _complete(s: Stats) -> tuple[int, np.ndarray, np.ndarray]:
    """The rater count of the 'complete' units, their patterns and unit counts."""
    m = s.raters
    if s.annotators:
        r = int((s.annotator_counts().sum(axis=1) > 0).sum())
    else:  # crowd: the most common number of raters among units with two or more
        per = np.bincount(m, weights=s.units * (m >= 2)) if m.size else np.zeros(0)
        r = int(per.argmax()) if per.size and per.max() > 0 else 0
    keep = (m == r) & (r > 0)
    return r, s.patterns[keep], s.units[keep]


def fleiss(s: Stats) -> Value:
    """Fleiss' kappa with its analytic standard error under κ = 0 (Fleiss, Nee & Landis 1979)."""
    r, pat, w = _complete(s)
    n = int(w.sum())
    if r < 2:
        return nan("fewer than two annotators with data", units_used=0)
    if n == 0:
        return nan("no unit is coded by every annotator", units_used=0)
    p = (w @ pat) / (n * r)
    if (p > 0).sum() < 2:
        return nan(f"no variation: every annotator gave every unit the value {s.domain[p > 0][0]:g}", units_used=n)
    p_bar = (w @ (pat * (pat - 1)).sum(axis=1)) / (n * r * (r - 1))
    p_e = (p**2).sum()
    kappa = (p_bar - p_e) / (1 - p_e)
    pq = p * (1 - p)
    se = np.sqrt(2) / (pq.sum() * np.sqrt(n * r * (r - 1))) * np.sqrt(pq.sum() ** 2 - (pq * (1 - 2 * p)).sum())
    params = {} if s.annotators else {"raters_per_unit": r, "from": "value counts"}
    return Value(float(kappa), units_used=n, std_err=float(se), params=params)


def _pairs(s: Stats) -> list[tuple[int, int, str, np.ndarray]]:
    idx = np.flatnonzero(s.annotator_counts().sum(axis=1) > 0)
    return [(int(i), int(j), f"{s.annotators[i]}|{s.annotators[j]}", s.pairs[i, j].astype(np.float64))
            for x, i in enumerate(idx) for j in idx[x + 1:]]


def kappa_table(table: np.ndarray) -> tuple[float, float]:
    """Cohen's kappa and its standard error (statsmodels' formula) of a V × V contingency table."""
    n = table.sum()
    p = table / n
    row, col = p.sum(axis=1), p.sum(axis=0)
    p_o, p_e = np.trace(p), float(row @ col)
    kappa = (p_o - p_e) / (1 - p_e)
    a = (np.diag(p) * (1 - (row + col) * (1 - kappa)) ** 2).sum()
    b = p * (col[:, None] + row[None, :]) ** 2
    np.fill_diagonal(b, 0)
    c = (kappa - p_e * (1 - kappa)) ** 2
    var = (a + (1 - kappa) ** 2 * b.sum() - c) / (1 - p_e) ** 2 / n
    return float(kappa), float(np.sqrt(var)) if var >= 0 else float("nan")


def scott_table(table: np.ndarray) -> float:
    """Scott's pi of a V × V contingency table (expected agreement from the pooled marginals)."""
    p = table / table.sum()
    pooled = (p.sum(axis=0) + p.sum(axis=1)) / 2
    p_e = (pooled**2).sum()
    return float((np.trace(p) - p_e) / (1 - p_e))


def _per_pair(s: Stats, name: str, fn) -> list[Value]:
    if not s.annotators:
        return [nan(f"{name} needs each annotator's own coding; crowd data has value counts only")]
    pairs = _pairs(s)
    if not pairs:
        return [nan("fewer than two annotators with data", units_used=0)]
    out = []
    for _, _, pair, table in pairs:
        n = int(table.sum())
        used = np.flatnonzero(table.sum(axis=0) + table.sum(axis=1))
        if n == 0:
            out.append(nan("the pair coded no unit in common", units_used=0, pair=pair))
        elif used.size < 2:
            out.append(nan(f"no variation: both gave every unit the value {s.domain[used[0]]:g}", units_used=n, pair=pair))
        else:
            value, se = fn(table[np.ix_(used, used)])
            if not np.isfinite(value):
                out.append(nan(f"{name} is undefined: one annotator used a single value", units_used=n, pair=pair))
            else:
                out.append(Value(value, units_used=n, std_err=se, pair=pair))
    return out


def cohen(s: Stats) -> list[Value]:
    """Cohen's kappa (with its standard error) for every pair of annotators with data."""
    return _per_pair(s, "Cohen's kappa", kappa_table)


def scott(s: Stats) -> list[Value]:
    """Scott's pi for every pair of annotators with data."""
    return _per_pair(s, "Scott's pi", lambda t: (scott_table(t), None))


def mean_of(values: list[Value], what: str) -> Value:
    """The mean of per-pair values (NaN pairs left out), as one row with pair ``mean``."""
    ok = [v.value for v in values if v.pair is not None and np.isfinite(v.value)]
    if not ok:
        return nan(f"no pair has a {what}", pair="mean")
    return Value(float(np.mean(ok)), units_used=None, pair="mean", params={"pairs": len(ok)})


def gwet_weights(s: Stats, level: str) -> np.ndarray:
    """Gwet's (irrCAC) agreement weights: identity, ordinal, quadratic (interval) or ratio."""
    v, q = s.domain, s.domain.size
    if level == "nominal":
        return np.eye(q)
    if level == "interval":
        span = v.max() - v.min()
        return 1 - (v[:, None] - v[None, :]) ** 2 / span**2
    if level == "ordinal":
        k = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) + 1
        m = np.vectorize(lambda x: comb(int(x), 2))(k).astype(np.float64)
        return 1 - m / m.max()
    if level == "ratio":
        total = v[:, None] + v[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(total == 0, 0.0, ((v[:, None] - v[None, :]) / total) ** 2)
        return 1 - r / r.max()
    raise ValueError(f"unknown level {level!r}")


def _gwet(s: Stats, weights: np.ndarray) -> tuple[float, float, int] | Value:
    m = s.raters
    pair = m >= 2
    n2 = int(s.units[pair].sum())
    if n2 == 0:
        return nan("no unit is coded by two annotators", units_used=0)
    c = s.patterns[pair].astype(np.float64)
    w = s.units[pair] / (m[pair] * (m[pair] - 1))
    p_a = float(((c * w[:, None]) * (c @ weights.T - 1)).sum() / n2)
    rated = m >= 1
    pi = (s.units[rated] / m[rated]) @ s.patterns[rated] / s.units[rated].sum()
    q = s.domain.size
    p_e = float(weights.sum() * (pi * (1 - pi)).sum() / (q * (q - 1))) if q > 1 else 1.0
    return p_a, p_e, n2


def ac2(s: Stats, level: str = "nominal") -> Value:
    """Gwet's AC2 (AC1 at the nominal level) with missing ratings, as irrCAC's ``gwet.ac1.raw``."""
    res = _gwet(s, gwet_weights(s, level) if s.domain.size else np.eye(0))
    if isinstance(res, Value):
        return res
    p_a, p_e, n2 = res
    bad = _variation(s, n2)
    if bad:
        return bad
    return Value(float((p_a - p_e) / (1 - p_e)), units_used=n2, params={"level": level, "pa": p_a, "pe": p_e})


def ac1(s: Stats) -> Value:
    """Gwet's AC1 (nominal)."""
    return ac2(s, "nominal")


def percent(s: Stats) -> Value:
    """Percent agreement: the share of agreeing pairs of values within units (Gwet's p_a)."""
    res = _gwet(s, np.eye(s.domain.size))
    if isinstance(res, Value):
        return res
    return Value(res[0], units_used=res[2])


def cochran_q(s: Stats, binary: bool) -> Value:
    """Cochran's Q with df and p-value, over units every annotator with data coded; binary data only."""
    from scipy.stats import chi2

    if not binary or not set(s.domain.tolist()) <= {0.0, 1.0}:
        return nan("Cochran's Q needs binary (0/1) values")
    if not s.annotators:
        return nan("Cochran's Q needs each annotator's own coding; crowd data has value counts only")
    k, pat, w = _complete(s)
    n = int(w.sum())
    if k < 2:
        return nan("fewer than two annotators with data", units_used=0)
    if n == 0:
        return nan("no unit is coded by every annotator", units_used=0)
    one = np.flatnonzero(s.domain == 1.0)
    rows = pat[:, one[0]] if one.size else np.zeros(len(w), np.int64)
    if np.all((rows == 0) | (rows == k)):
        return nan("no variation: every unit got the same value from every annotator", units_used=n)
    data = s.by_raters[k][s.annotator_counts().sum(axis=1) > 0]
    cols = data[:, one[0]].astype(np.float64)
    total = cols.sum()
    q = (k - 1) * (k * (cols**2).sum() - total**2) / (k * total - (w * rows.astype(np.float64) ** 2).sum())
    return Value(float(q), units_used=n, df=float(k - 1), p_value=float(chi2.sf(q, k - 1)))
