"""Confidence intervals on the sufficient statistics: the percentile bootstrap, the jackknife and BCa.

Units are resampled with replacement, as Hayes & Krippendorff (2007) argue for
alpha. Resampling N units from a matrix whose units fall into P distinct
value-count patterns is drawing the pattern counts from a multinomial
(N, units / N), so a replicate costs O(P), not O(N): each replicate's statistics
are the patterns with new unit counts, and every coefficient is evaluated on
all replicates at once (batched kernels of :mod:`unitize.metrics.coefficients`).
Pairwise coefficients resample the pair's contingency table the same way.

The delete-one-unit jackknife is the same kernels on P leave-one-out weightings (a unit
left out of each pattern in turn; units of one pattern leave the same value), so it costs
about one point estimate per pattern, not per unit. ``method`` (``--ci-method``) chooses the
interval: ``bootstrap``, the percentile interval of the replicates; ``jackknife``, the value
± Student's t times the jackknife standard error (Hughes 2022 finds it near nominal where the
bootstrap is not); ``bca``, the bootstrap's percentiles corrected for bias and acceleration
(Efron 1987; the acceleration from the jackknife). Each interval also gives the probability
that the coefficient is below each required minimum (``alpha_min``; Krippendorff 2019),
from the replicates or, for the jackknife, the normal approximation. Method, replicates,
seed, level and those probabilities are recorded in the row's ``params`` (``ci``); the same
seed gives the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist

import numpy as np

from . import coefficients as C
from .stats import Stats
from .value import Value

#: the interval methods of ``--ci-method``; ``auto`` is ``studentized`` below :data:`SMALL` units, else ``bootstrap``
METHODS = ("auto", "bootstrap", "studentized", "jackknife", "bca")
#: below this many units (pairable units) the percentile bootstrap under-covers and from it the bootstrap-t over-covers (bench/coverage.py,
#: docs/agree.md): ``auto`` takes the bootstrap-t below, the percentile bootstrap from it
SMALL = 50
#: the required minimums whose probability of not being reached each interval reports (Krippendorff's 0.667 and 0.800)
ALPHA_MIN = (0.667, 0.8)


@dataclass(frozen=True)
class Options:
    """``--ci LEVEL --bootstrap N --seed S --ci-method M --alpha-min A``."""

    level: float = 0.95
    replicates: int = 1000
    seed: int = 0
    #: each replicate draws this many times the units (documents) the cell has: 1 for an interval; ``unitize plan``
    #: draws ½× … 8× to see the interval a study of that size would get (always the percentile bootstrap)
    scale: float = 1.0
    method: str = "auto"
    alpha_min: tuple[float, ...] = ALPHA_MIN
    #: what a replicate is: a resample (``bootstrap``), a leave-one-out weighting (``jackknife``) or the rows of
    #: ``weights`` (``given``: how many units of each kind a replicate holds); set by :func:`interval`
    draw: str = "bootstrap"
    weights: np.ndarray | None = field(default=None, compare=False, repr=False)

    def drawn(self, n: int) -> int:
        """How many of ``n`` units (documents) a replicate draws."""
        return n if self.scale == 1.0 else max(1, round(n * self.scale))


#: a metric's bootstrap replicates: (statistics, level of measurement, options, pair or None) -> (replicates,)
Replicates = Callable[[Stats, str, Options, "str | None"], np.ndarray]


def _weights(counts: np.ndarray, opts: Options) -> np.ndarray:
    """(replicates, kinds): how many units of each kind (a value-count pattern, a cell of a pair's table) each
    replicate holds, for ``counts`` units of each: a resample of the units; for the jackknife, every unit but
    one of kind ``p`` in row ``p``; or ``opts.weights``."""
    if opts.draw == "given":
        assert opts.weights is not None
        return opts.weights
    if opts.draw == "jackknife":
        return counts[None, :].astype(np.float64) - np.eye(counts.size)
    rng = np.random.default_rng(opts.seed)
    n = int(counts.sum())
    return rng.multinomial(opts.drawn(n), counts / n, size=opts.replicates).astype(np.float64)


def _unit_weights(s: Stats, opts: Options) -> np.ndarray:
    """(replicates, patterns): the units of each pattern in each replicate (:func:`_weights`)."""
    return _weights(s.units, opts)


def alpha_replicates(s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
    """Krippendorff's alpha (at ``level``) on resamples of the units."""
    w = _unit_weights(s, opts)
    m = s.raters
    c = s.patterns.astype(np.float64)
    scale = np.where(m >= 2, 1.0 / np.maximum(m - 1, 1), 0.0)
    per = (np.einsum("pi,pj->pij", c, c) - np.einsum("pi,ij->pij", c, np.eye(c.shape[1]))) * scale[:, None, None]
    return C.alpha_from(np.einsum("bp,pij->bij", w, per), s.domain, level)


def fleiss_replicates(s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
    """Fleiss' kappa on resamples of the units."""
    w = _unit_weights(s, opts)
    r = C._complete(s)[0]
    keep = (s.raters == r) & (r > 0)
    return C.fleiss_from(w[:, keep], s.patterns[keep].astype(np.float64), r)


fleiss_replicates.used = lambda s, pair: (s.raters == C._complete(s)[0]) & (s.raters > 0)  # type: ignore[attr-defined]


def _gwet(s: Stats, opts: Options, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return C.gwet_from(_unit_weights(s, opts), s, weights)


def _chance_corrected(p_a: np.ndarray, p_e: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p_a - p_e) / (1 - p_e)


def percent_replicates(s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
    """Percent agreement (Gwet's p_a) on resamples of the units."""
    return _gwet(s, opts, np.eye(s.domain.size))[0]


def ac1_replicates(s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
    """Gwet's AC1 on resamples of the units."""
    return _chance_corrected(*_gwet(s, opts, np.eye(s.domain.size)))


def ac2_replicates(s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
    """Gwet's AC2 (weights of ``level``) on resamples of the units."""
    return _chance_corrected(*_gwet(s, opts, C.gwet_weights(s, level)))


def pair_replicates(kernel: Callable[[np.ndarray], np.ndarray]) -> Replicates:
    """The replicates of a per-pair coefficient: the pair's contingency table resampled, ``kernel``
    (batched over leading axes) on every replicate."""

    def table(s: Stats, pair: str | None) -> np.ndarray:
        i, j = (s.annotators.index(a) for a in (pair or "|").split("|", 1))
        t = s.pairs[i, j]
        used = np.flatnonzero(t.sum(axis=0) + t.sum(axis=1))
        return t[np.ix_(used, used)].astype(np.float64)

    def replicates(s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
        t = table(s, pair)
        k = t.shape[0]
        return kernel(_weights(t.ravel(), opts).reshape(-1, k, k))

    replicates.counts = lambda s, pair: table(s, pair).ravel()  # type: ignore[attr-defined]
    replicates.used = lambda s, pair: np.ones(table(s, pair).size, dtype=bool)  # type: ignore[attr-defined]
    return replicates


def interval(replicates: Replicates, s: Stats, v: Value, level: str, opts: Options) -> Value:
    """``v`` with its interval by ``opts.method`` (unchanged when the value is NaN or a mean of pairs)."""
    if not np.isfinite(v.value) or v.pair == "mean":
        return v
    counts = getattr(replicates, "counts", lambda s, pair: s.units)(s, v.pair).astype(np.float64)
    used = getattr(replicates, "used", lambda s, pair: s.raters >= 2)(s, v.pair)
    method = opts.method
    if method == "auto":
        method = "studentized" if (counts * used).sum() < SMALL else "bootstrap"
    if method == "bootstrap" or opts.scale != 1.0:
        return with_percentiles(v, replicates(s, level, opts, v.pair), opts, "percentile bootstrap, units resampled")

    def at(weights: np.ndarray) -> np.ndarray:
        return replicates(s, level, replace(opts, draw="given", weights=weights), v.pair)

    jack = at(counts[None, :] - np.eye(counts.size))
    if method == "jackknife":
        return with_jackknife(v, jack, counts * used, opts, "jackknife, one unit left out")
    if method == "bca":
        return with_bca(v, replicates(s, level, opts, v.pair), jack, counts * used, opts, "BCa bootstrap, units resampled")
    return with_studentized(v, at, counts, used, jack, opts)


def _entry(opts: Options, method: str, defined: int, **record: object) -> dict[str, object]:
    """What ``params.ci`` records of an interval."""
    entry = {**asdict(opts), "method": method, "defined": defined, **record}
    entry.pop("draw")
    entry.pop("weights")
    entry["alpha_min"] = list(opts.alpha_min)
    if opts.scale == 1.0:
        entry.pop("scale")  # an interval of the data as they are (only plan draws more or fewer)
    return entry


def with_percentiles(v: Value, reps: np.ndarray, opts: Options, method: str, **record: object) -> Value:
    """``v`` with the percentile interval of its replicates (NaN replicates left out) and the
    bootstrap recorded in ``params.ci``: level, replicates, seed, method, how many were defined,
    the share of replicates below each required minimum."""
    ok = reps[np.isfinite(reps)]
    entry = _entry(opts, method, int(ok.size), **record)
    if ok.size == 0:
        return replace(v, params={**v.params, "ci": entry})
    entry["below"] = {f"{a:g}": float((ok < a).mean()) for a in opts.alpha_min}
    tail = (1 - opts.level) / 2 * 100
    low, high = np.percentile(ok, [tail, 100 - tail])
    return replace(v, ci=(float(low), float(high)), params={**v.params, "ci": entry})


def jackknife_se(values: np.ndarray, multiplicity: np.ndarray) -> float:
    """The delete-one jackknife standard error: ``values[p]`` is the estimate without one of the
    ``multiplicity[p]`` units (or documents, cells) of kind ``p``."""
    return float(_row_se(values[None, :], multiplicity[None, :])[0])


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile (Cornish–Fisher expansion about the normal; within 1e-3 from 3 degrees of freedom)."""
    z = NormalDist().inv_cdf(p)
    if not math.isfinite(df) or df > 1e6:
        return z
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _loo(values: np.ndarray, multiplicity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The defined leave-one-out values and their multiplicities (a kind with no unit left out is none)."""
    keep = (multiplicity > 0) & np.isfinite(values)
    return values[keep], multiplicity[keep]


def with_jackknife(v: Value, jack: np.ndarray, multiplicity: np.ndarray, opts: Options, method: str, **record: object) -> Value:
    """``v`` ± t(level, n − 1) × the jackknife standard error, capped at 1 (no coefficient here exceeds it)."""
    values, m = _loo(jack, multiplicity)
    entry = _entry(opts, method, int(m.sum()), **record)
    entry.pop("replicates")
    entry.pop("seed")
    n = float(multiplicity.sum())
    if m.sum() < 2 or m.sum() < n:  # a unit whose leaving makes the coefficient undefined: no jackknife interval
        return replace(v, params={**v.params, "ci": entry})
    se = jackknife_se(values, m)
    half = t_quantile(1 - (1 - opts.level) / 2, n - 1) * se
    entry["se"] = se
    entry["below"] = {f"{a:g}": (float(NormalDist(v.value, se).cdf(a)) if se > 0 else float(v.value < a)) for a in opts.alpha_min}
    return replace(v, ci=(v.value - half, min(1.0, v.value + half)), params={**v.params, "ci": entry})


def with_bca(v: Value, reps: np.ndarray, jack: np.ndarray, multiplicity: np.ndarray, opts: Options, method: str, **record: object) -> Value:
    """The bootstrap's percentiles corrected for bias (the share of replicates below ``v``) and acceleration
    (the skewness of the jackknife values)."""
    ok = reps[np.isfinite(reps)]
    values, m = _loo(jack, multiplicity)
    entry = _entry(opts, method, int(ok.size), **record)
    if ok.size == 0 or m.sum() < 2:
        return replace(v, params={**v.params, "ci": entry})
    entry["below"] = {f"{a:g}": float((ok < a).mean()) for a in opts.alpha_min}
    normal = NormalDist()
    share = ((ok < v.value).sum() + 0.5 * (ok == v.value).sum()) / ok.size
    z0 = normal.inv_cdf(min(max(share, 0.5 / ok.size), 1 - 0.5 / ok.size))
    mean = (m * values).sum() / m.sum()
    d = mean - values
    spread = float((m * d**2).sum())
    a = float((m * d**3).sum()) / (6 * spread**1.5) if spread > 0 else 0.0
    tails = []
    for q in ((1 - opts.level) / 2, 1 - (1 - opts.level) / 2):
        zq = normal.inv_cdf(q)
        tails.append(100 * normal.cdf(z0 + (z0 + zq) / (1 - a * (z0 + zq))))
    low, high = np.percentile(ok, tails)
    entry.update(bias=z0, acceleration=a)
    return replace(v, ci=(float(low), float(high)), params={**v.params, "ci": entry})


def _row_se(values: np.ndarray, multiplicity: np.ndarray) -> np.ndarray:
    """:func:`jackknife_se` of every row (a kind with no unit, or an undefined value, left out; NaN below two units)."""
    m = np.where((multiplicity > 0) & np.isfinite(values), multiplicity, 0.0)
    x = np.where(m > 0, values, 0.0)
    n = m.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (m * x).sum(axis=1) / n
        return np.where(n >= 2, np.sqrt((n - 1) / n * (m * (x - mean[:, None]) ** 2).sum(axis=1)), np.nan)


def with_studentized(v: Value, at: Callable[[np.ndarray], np.ndarray], counts: np.ndarray, used: np.ndarray, jack: np.ndarray,
                     opts: Options) -> Value:
    """The bootstrap-t interval: each replicate's value studentized by its own jackknife standard error, the
    value's jackknife standard error scaled by the quantiles of those t values."""
    values, m = _loo(jack, counts * used)
    entry = _entry(opts, "bootstrap-t, units resampled, jackknife standard errors", 0)
    if m.sum() < 2 or m.sum() < (counts * used).sum():
        return replace(v, params={**v.params, "ci": entry})
    se = jackknife_se(values, m)
    rng = np.random.default_rng(opts.seed)
    n = int(counts.sum())
    draws = rng.multinomial(n, counts / n, size=opts.replicates).astype(np.float64)
    theta = at(draws)
    k = counts.size
    step = max(1, 65536 // (k * k))  # a block of replicates' leave-one-out rows at a time
    spread = np.concatenate([
        _row_se(at((block[:, None, :] - np.eye(k)[None, :, :]).reshape(-1, k)).reshape(block.shape[0], k), block * used)
        for block in (draws[i : i + step] for i in range(0, opts.replicates, step))
    ])
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(spread > 0, (theta - v.value) / spread, np.nan)
    ok = t[np.isfinite(t)]  # a replicate with no spread left (every unit agreeing) has no t
    entry.update(defined=int(ok.size), se=se)
    if ok.size == 0 or se == 0:
        return replace(v, params={**v.params, "ci": entry})
    reps = theta[np.isfinite(theta)]
    entry["below"] = {f"{a:g}": float((reps < a).mean()) for a in opts.alpha_min}
    tail = (1 - opts.level) / 2 * 100
    high_t, low_t = np.percentile(ok, [100 - tail, tail])
    return replace(v, ci=(float(v.value - high_t * se), float(min(1.0, v.value - low_t * se))), params={**v.params, "ci": entry})
