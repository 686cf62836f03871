"""Coding coefficients from the sufficient statistics (:mod:`unitize.metrics.stats`).

Every function takes a :class:`~unitize.metrics.stats.Stats` and returns
:class:`~unitize.metrics.value.Value` rows; a case a coefficient cannot
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
- Cochran's Q (Cochran 1950) on binary data over the units every annotator coded, its
  p-value the chi-square survival function at k − 1 degrees of freedom (:func:`chi2_sf`,
  closed form for integer degrees of freedom: no scipy).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from math import comb
from typing import NamedTuple

import numpy as np

from .stats import Stats
from .value import Value, nan

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _variation(s: Stats, used: int) -> Value | None:
    present = (s.units @ s.patterns) > 0
    if present.sum() < 2:
        value = f" {s.domain[present][0]:g}" if present.any() else ""
        return nan(f"no variation: every annotator gave every unit the value{value}", units_used=used)
    return None


def distances(domain: np.ndarray, level: str, marginals: np.ndarray) -> np.ndarray:
    """Krippendorff's squared difference δ²_ck for a level of measurement (batched over leading axes of ``marginals``)."""
    v = domain
    if level == "nominal":
        return 1.0 - np.eye(v.size)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        total = v[:, None] + v[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total == 0, 0.0, ((v[:, None] - v[None, :]) / total) ** 2)
    if level == "ordinal":
        zero = np.zeros(marginals.shape[:-1] + (1,))
        cum = np.concatenate((zero, np.cumsum(marginals, axis=-1)), axis=-1)
        idx = np.arange(v.size)
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        return (cum[..., hi + 1] - cum[..., lo] - (marginals[..., :, None] + marginals[..., None, :]) / 2) ** 2
    raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")


def alpha_from(o: np.ndarray, domain: np.ndarray, level: str) -> np.ndarray:
    """Alpha of coincidence matrices (..., V, V)."""
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d = distances(domain, level, n_c)
    expected = np.einsum("...c,...ck,...k->...", n_c, d, n_c)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1 - (n - 1) * (o * d).sum(axis=(-2, -1)) / expected


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
        return nan(f"no variation: every annotator gave every unit the value {s.domain[n_c > 0][0]:g}", units_used=used)
    value = float(alpha_from(o, s.domain, level))
    if not np.isfinite(value):
        return nan("no expected disagreement", units_used=used)
    return Value(value, units_used=used, params={"level": level})


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


def fleiss_from(w: np.ndarray, pat: np.ndarray, r: int) -> np.ndarray:
    """Fleiss' kappa of the complete units' patterns ``pat`` weighted by unit counts ``w`` (..., P)."""
    n = w.sum(axis=-1)[..., None]
    p = (w @ pat) / (n * r)
    p_bar = (w @ (pat * (pat - 1)).sum(axis=1)) / (n[..., 0] * r * (r - 1))
    p_e = (p**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p_bar - p_e) / (1 - p_e)


def _complete_or_reason(s: Stats) -> tuple[int, np.ndarray, np.ndarray, int] | Value:
    """:func:`_complete` and the number of complete units, or the NaN saying why there are none."""
    r, pat, w = _complete(s)
    n = int(w.sum())
    if r < 2:
        return nan("fewer than two annotators with data", units_used=0)
    if n == 0:
        return nan("no unit is coded by every annotator", units_used=0)
    return r, pat, w, n


def fleiss(s: Stats) -> Value:
    """Fleiss' kappa with its analytic standard error under κ = 0 (Fleiss, Nee & Landis 1979)."""
    complete = _complete_or_reason(s)
    if isinstance(complete, Value):
        return complete
    r, pat, w, n = complete
    p = (w @ pat) / (n * r)
    if (p > 0).sum() < 2:
        return nan(f"no variation: every annotator gave every unit the value {s.domain[p > 0][0]:g}", units_used=n)
    kappa = fleiss_from(w, pat, r)
    pq = p * (1 - p)
    se = np.sqrt(2) / (pq.sum() * np.sqrt(n * r * (r - 1))) * np.sqrt(pq.sum() ** 2 - (pq * (1 - 2 * p)).sum())
    params = {} if s.annotators else {"raters_per_unit": r, "from": "value counts"}
    return Value(float(kappa), units_used=n, std_err=float(se), params=params)


def _pairs(s: Stats) -> list[tuple[int, int, str, np.ndarray]]:
    idx = np.flatnonzero(s.annotator_counts().sum(axis=1) > 0)
    return [(int(i), int(j), f"{s.annotators[i]}|{s.annotators[j]}", s.pairs[i, j].astype(np.float64))
            for x, i in enumerate(idx) for j in idx[x + 1:]]


def kappa_table(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa and its standard error (statsmodels' formula) of V × V contingency tables (batched)."""
    n = table.sum(axis=(-2, -1))
    p = table / n[..., None, None]
    row, col = p.sum(axis=-1), p.sum(axis=-2)
    p_o = np.trace(p, axis1=-2, axis2=-1)
    p_e = (row * col).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (p_o - p_e) / (1 - p_e)
        k = kappa[..., None]
        a = (np.diagonal(p, axis1=-2, axis2=-1) * (1 - (row + col) * (1 - k)) ** 2).sum(axis=-1)
        off = 1 - np.eye(table.shape[-1])
        b = (p * (col[..., :, None] + row[..., None, :]) ** 2 * off).sum(axis=(-2, -1))
        c = (kappa - p_e * (1 - kappa)) ** 2
        var = (a + (1 - kappa) ** 2 * b - c) / (1 - p_e) ** 2 / n
        return kappa, np.sqrt(np.where(var >= 0, var, np.nan))


def scott_table(table: np.ndarray) -> np.ndarray:
    """Scott's pi of V × V contingency tables (expected agreement from the pooled marginals; batched)."""
    p = table / table.sum(axis=(-2, -1))[..., None, None]
    pooled = (p.sum(axis=-1) + p.sum(axis=-2)) / 2
    p_e = (pooled**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.trace(p, axis1=-2, axis2=-1) - p_e) / (1 - p_e)


class PairTables(NamedTuple):
    """A statistics' pairs ready for a pairwise coefficient."""

    pairs: list[tuple[int, int, str, np.ndarray]]
    tables: np.ndarray  # (P, V, V)
    n: np.ndarray  # (P,) units each pair coded in common
    used: np.ndarray  # (P, V) the values each pair gave
    regular: np.ndarray  # (P,) a unit in common and two values: the coefficient applies

PairFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray | None]]


def pair_tables(s: Stats, name: str) -> PairTables | list[Value]:
    """Every pair's table of ``s`` and what :func:`pair_values` needs of them; the one NaN row when there is no pair."""
    if not s.annotators:
        return [nan(f"{name} needs each annotator's own coding; crowd data has value counts only")]
    pairs = _pairs(s)
    if not pairs:
        return [nan("fewer than two annotators with data", units_used=0)]
    tables = np.stack([table for *_, table in pairs])
    n = tables.sum(axis=(1, 2))
    used = (tables.sum(axis=1) + tables.sum(axis=2)) > 0  # (P, V): the values each pair gave
    return PairTables(pairs, tables, n, used, (n > 0) & (used.sum(axis=1) >= 2))


def pair_values(s: Stats, name: str, prepared: PairTables, values: np.ndarray, errors: np.ndarray | None) -> list[Value]:
    """Each pair's row from the coefficient of its regular tables (``values``, ``errors``: of the regular pairs, in
    order); a pair with no unit in common or no variation is a NaN with the reason."""
    pairs, _, n, used, regular = prepared
    at = np.cumsum(regular) - 1
    out = []
    for k, (_, _, pair, _) in enumerate(pairs):
        units = int(n[k])
        if units == 0:
            out.append(nan("the pair coded no unit in common", units_used=0, pair=pair))
        elif not regular[k]:
            out.append(nan(f"no variation: both gave every unit the value {s.domain[np.flatnonzero(used[k])[0]]:g}", units_used=units, pair=pair))
        elif not np.isfinite(values[at[k]]):
            out.append(nan(f"{name} is undefined: one annotator used a single value", units_used=units, pair=pair))
        else:
            out.append(Value(float(values[at[k]]), units_used=units, std_err=None if errors is None else float(errors[at[k]]), pair=pair))
    return out


def _per_pair(s: Stats, name: str, fn: PairFn) -> list[Value]:
    """``fn`` of every pair's table, all at once (a value no pair uses is an empty row and column of its table, which
    changes no coefficient); a pair with no unit in common or no variation is a NaN with the reason."""
    prepared = pair_tables(s, name)
    if isinstance(prepared, list):
        return prepared
    regular = prepared.regular
    values, errors = fn(prepared.tables[regular]) if regular.any() else (np.zeros(0), None)
    return pair_values(s, name, prepared, values, errors)


def cohen(s: Stats) -> list[Value]:
    """Cohen's kappa (with its standard error) for every pair of annotators with data."""
    return _per_pair(s, "Cohen's kappa", kappa_table)


def kappa_only(table: np.ndarray) -> np.ndarray:
    """Cohen's kappa of contingency tables (batched), without the standard error."""
    return kappa_table(table)[0]


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


def gwet_from(w: np.ndarray, s: Stats, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gwet's p_a and p_e for unit counts ``w`` (..., P) of the patterns of ``s``."""
    m = s.raters
    c = s.patterns.astype(np.float64)
    pair = m >= 2
    per = np.where(pair, ((c * (c @ weights.T - 1)).sum(axis=1)) / np.where(pair, m * (m - 1), 1), 0.0)
    rated = m >= 1
    share = np.where(rated[:, None], c / np.where(rated, m, 1)[:, None], 0.0)
    q = s.domain.size
    with np.errstate(invalid="ignore", divide="ignore"):
        p_a = (w @ per) / (w @ pair)
        pi = (w @ share) / (w @ rated)[..., None]
        p_e = weights.sum() * (pi * (1 - pi)).sum(axis=-1) / (q * (q - 1)) if q > 1 else np.ones_like(p_a)
    return p_a, p_e


def _gwet(s: Stats, weights: np.ndarray) -> tuple[float, float, int] | Value:
    n2 = s.n_pairable
    if n2 == 0:
        return nan("no unit is coded by two annotators", units_used=0)
    p_a, p_e = gwet_from(s.units.astype(np.float64), s, weights)
    return float(p_a), float(p_e), n2


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


#: below this half of x, e^(-x/2) is a normal float and the terms of :func:`chi2_sf` come by recurrence from it
_RECURRENCE_BELOW = 700.0


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X chi-square distributed with ``df`` degrees of freedom, a positive integer.

    The regularized upper incomplete gamma function Q(df/2, x/2) in closed form, with h = x/2:
    for even df, e^(-h) Σ_{j < df/2} h^j / j!; for odd df, erfc(√h) + e^(-h) Σ_{j < (df-1)/2}
    h^(j+1/2) / Γ(j + 3/2). Every term is positive, so nothing cancels: each term comes from
    the one before (one rounding each), from e^(-h), or, where e^(-h) would underflow, from its
    logarithm. Equal to ``scipy.stats.chi2.sf`` to 1e-12 relative wherever that is a normal float
    (above 1e-300; ``tests/metrics/test_coefficients.py``), and on the bundled examples to 1e-14.
    """
    if df < 1 or df != int(df):
        raise ValueError(f"degrees of freedom must be a positive integer, not {df!r}")
    if math.isnan(x):
        return math.nan
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    h = x / 2
    shift = 0.5 if df % 2 else 0.0  # h^(j+shift) / Γ(j+shift+1)
    head = math.erfc(math.sqrt(h)) if shift else 0.0
    n = df // 2  # the terms of the sum
    if h < _RECURRENCE_BELOW:
        term = math.exp(-h) * (2.0 * math.sqrt(h / math.pi) if shift else 1.0)  # j = 0; Γ(3/2) = √π / 2
        terms = []
        for j in range(n):
            if j:
                term *= h / (j + shift)
            terms.append(term)
        return head + math.fsum(terms)
    log_h = math.log(h)
    return head + math.fsum(math.exp((j + shift) * log_h - h - math.lgamma(j + shift + 1.0)) for j in range(n))


def cochran_q(s: Stats, binary: bool) -> Value:
    """Cochran's Q with df and p-value, over units every annotator with data coded; binary data only."""
    if not binary or not set(s.domain.tolist()) <= {0.0, 1.0}:
        return nan("Cochran's Q needs binary (0/1) values")
    if not s.annotators:
        return nan("Cochran's Q needs each annotator's own coding; crowd data has value counts only")
    complete = _complete_or_reason(s)
    if isinstance(complete, Value):
        return complete
    k, pat, w, n = complete
    one = np.flatnonzero(s.domain == 1.0)
    rows = pat[:, one[0]] if one.size else np.zeros(len(w), np.int64)
    if np.all((rows == 0) | (rows == k)):
        return nan("no variation: every unit got the same value from every annotator", units_used=n)
    data = s.by_raters[k][s.annotator_counts().sum(axis=1) > 0]
    cols = data[:, one[0]].astype(np.float64)
    total = cols.sum()
    q = (k - 1) * (k * (cols**2).sum() - total**2) / (k * total - (w * rows.astype(np.float64) ** 2).sum())
    return Value(float(q), units_used=n, df=float(k - 1), p_value=chi2_sf(float(q), k - 1))
