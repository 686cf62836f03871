"""Bootstrap confidence intervals on the sufficient statistics.

Units are resampled with replacement, as Hayes & Krippendorff (2007) argue for
alpha. Resampling N units from a matrix whose units fall into P distinct
value-count patterns is drawing the pattern counts from a multinomial
(N, units / N), so a replicate costs O(P), not O(N): each replicate's statistics
are the patterns with new unit counts, and every coefficient is evaluated on
all replicates at once (batched kernels of :mod:`unitize.metrics.coefficients`).
Pairwise coefficients resample the pair's contingency table the same way.

The interval is the percentile interval of the replicates; the replicate
count, seed and level are recorded in the row's ``params`` (``ci``). The same
seed gives the same interval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import numpy as np

from . import coefficients as C
from .stats import Stats
from .value import Value


@dataclass(frozen=True)
class Options:
    """``--ci LEVEL --bootstrap N --seed S``."""

    level: float = 0.95
    replicates: int = 1000
    seed: int = 0
    #: each replicate draws this many times the units (documents) the cell has: 1 for an interval; ``unitize plan``
    #: draws ½× … 8× to see the interval a study of that size would get
    scale: float = 1.0

    def drawn(self, n: int) -> int:
        """How many of ``n`` units (documents) a replicate draws."""
        return n if self.scale == 1.0 else max(1, round(n * self.scale))


#: a metric's bootstrap replicates: (statistics, level of measurement, options, pair or None) -> (replicates,)
Replicates = Callable[[Stats, str, Options, "str | None"], np.ndarray]


def _unit_weights(s: Stats, opts: Options) -> np.ndarray:
    """(replicates, patterns): how many units of each pattern each resample of the units draws."""
    rng = np.random.default_rng(opts.seed)
    n = s.n_units
    return rng.multinomial(opts.drawn(n), s.units / n, size=opts.replicates).astype(np.float64)


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

    def replicates(s: Stats, level: str, opts: Options, pair: str | None = None) -> np.ndarray:
        rng = np.random.default_rng(opts.seed)
        i, j = (s.annotators.index(a) for a in (pair or "|").split("|", 1))
        table = s.pairs[i, j]
        used = np.flatnonzero(table.sum(axis=0) + table.sum(axis=1))
        table = table[np.ix_(used, used)].astype(np.float64)
        n = int(table.sum())
        draws = rng.multinomial(opts.drawn(n), table.ravel() / n, size=opts.replicates).reshape(opts.replicates, used.size, used.size)
        return kernel(draws.astype(np.float64))

    return replicates


def interval(replicates: Replicates, s: Stats, v: Value, level: str, opts: Options) -> Value:
    """``v`` with its percentile bootstrap interval (unchanged when the value is NaN or a mean of pairs)."""
    if not np.isfinite(v.value) or v.pair == "mean":
        return v
    return with_percentiles(v, replicates(s, level, opts, v.pair), opts, "percentile bootstrap, units resampled")


def with_percentiles(v: Value, reps: np.ndarray, opts: Options, method: str, **record: object) -> Value:
    """``v`` with the percentile interval of its replicates (NaN replicates left out) and the
    bootstrap recorded in ``params.ci``: level, replicates, seed, method, how many were defined."""
    ok = reps[np.isfinite(reps)]
    entry = {**asdict(opts), "method": method, "defined": int(ok.size), **record}
    if opts.scale == 1.0:
        entry.pop("scale")  # an interval of the data as they are (only plan draws more or fewer)
    if ok.size == 0:
        return replace(v, params={**v.params, "ci": entry})
    tail = (1 - opts.level) / 2 * 100
    low, high = np.percentile(ok, [tail, 100 - tail])
    return replace(v, ci=(float(low), float(high)), params={**v.params, "ci": entry})
