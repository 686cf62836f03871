"""Bootstrap confidence intervals on the sufficient statistics.

Units are resampled with replacement, as Hayes & Krippendorff (2007) argue for
alpha. Resampling N units from a matrix whose units fall into P distinct
value-count patterns is drawing the pattern counts from a multinomial
(N, units / N), so a replicate costs O(P), not O(N): each replicate's statistics
are the patterns with new unit counts, and every coefficient is evaluated on
all replicates at once (batched kernels of :mod:`unitize.agree.coefficients`).
Pairwise coefficients resample the pair's contingency table the same way.

The interval is the percentile interval of the replicates; the replicate
count, seed and level are recorded in the row's ``params`` (``ci``). The same
seed gives the same interval.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from . import coefficients as C
from .backends import Value
from .stats import Stats

#: metrics with a bootstrap interval (Cochran's Q is a test statistic; the pair mean is not resampled)
RESAMPLED = ("alpha", "fleiss", "ac1", "ac2", "percent", "cohen", "scott")


@dataclass(frozen=True)
class Options:
    """``--ci LEVEL --bootstrap N --seed S``."""

    level: float = 0.95
    replicates: int = 1000
    seed: int = 0


def replicates(metric: str, s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
    """The metric on ``opts.replicates`` bootstrap resamples of the units (NaN where undefined)."""
    rng = np.random.default_rng(opts.seed)
    b = opts.replicates
    if metric in ("cohen", "scott"):
        i, j = (s.annotators.index(a) for a in (pair or "|").split("|", 1))
        table = s.pairs[i, j]
        used = np.flatnonzero(table.sum(axis=0) + table.sum(axis=1))
        table = table[np.ix_(used, used)].astype(np.float64)
        n = int(table.sum())
        draws = rng.multinomial(n, table.ravel() / n, size=b).reshape(b, used.size, used.size).astype(np.float64)
        return C.PAIR_KERNELS[metric](draws)
    n = s.n_units
    w = rng.multinomial(n, s.units / n, size=b).astype(np.float64)
    if metric == "alpha":
        m = s.raters
        c = s.patterns.astype(np.float64)
        scale = np.where(m >= 2, 1.0 / np.maximum(m - 1, 1), 0.0)
        per = (np.einsum("pi,pj->pij", c, c) - np.einsum("pi,ij->pij", c, np.eye(c.shape[1]))) * scale[:, None, None]
        return C.alpha_from(np.einsum("bp,pij->bij", w, per), s.domain, level)
    if metric == "fleiss":
        r = C._complete(s)[0]
        keep = (s.raters == r) & (r > 0)
        return C.fleiss_from(w[:, keep], s.patterns[keep].astype(np.float64), r)
    weights = np.eye(s.domain.size) if metric in ("ac1", "percent") else C.gwet_weights(s, level)
    p_a, p_e = C.gwet_from(w, s, weights)
    if metric == "percent":
        return p_a
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p_a - p_e) / (1 - p_e)


def interval(metric: str, s: Stats, v: Value, level: str, opts: Options) -> Value:
    """``v`` with its percentile bootstrap interval (unchanged when the value is NaN)."""
    if not np.isfinite(v.value) or v.pair == "mean":
        return v
    return with_percentiles(v, replicates(metric, s, level, opts, v.pair), opts, "percentile bootstrap, units resampled")


def with_percentiles(v: Value, reps: np.ndarray, opts: Options, method: str, **record: object) -> Value:
    """``v`` with the percentile interval of its replicates (NaN replicates left out) and the
    bootstrap recorded in ``params.ci``: level, replicates, seed, method, how many were defined."""
    ok = reps[np.isfinite(reps)]
    entry = {**asdict(opts), "method": method, "defined": int(ok.size), **record}
    if ok.size == 0:
        return replace(v, params={**v.params, "ci": entry})
    tail = (1 - opts.level) / 2 * 100
    low, high = np.percentile(ok, [tail, 100 - tail])
    return replace(v, ci=(float(low), float(high)), params={**v.params, "ci": entry})
