"""Coding coefficients of many pairs of annotators at once, from the pairwise tables of one :class:`~.stats.Stats`.

A pair alone (:meth:`Stats.pair <unitize.metrics.stats.Stats.pair>`) has two coders, so what its coefficients need
is its contingency table ``T`` (the units both coded: a's value × b's value): the coincidence matrix is ``T + Tᵀ``,
Fleiss' complete units and Cochran's Q's units are the units both coded, each annotator's values its margins. Every
pair's table is a slice of ``Stats.pairs``, so every pair is measured in a few array operations instead of building
each pair's statistics. Each function gives, per pair, the row the coefficient gives on the pair alone
(:mod:`.coefficients`; equal to it but for the last bits of a sum, tested), or ``None`` where that row is a NaN with a
reason — those pairs are measured alone, which says why (or that NaN, where every pair alone gives it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .coefficients import alpha_from, chi2_sf
from .stats import Stats
from .value import Value, nan

Pairs = Sequence[tuple[int, int]]  # annotator indices into Stats.annotators


def tables(s: Stats, pairs: Pairs) -> tuple[np.ndarray, np.ndarray]:
    """(P, V, V) float64: each pair's table; (P,) bool: both annotators of the pair coded some unit."""
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    coded = np.diagonal(s.pairs, axis1=2, axis2=3).sum(axis=-1).diagonal() > 0  # (A,): annotator coded a unit
    return s.pairs[a, b].astype(np.float64), coded[a] & coded[b]


def alpha(s: Stats, level: str, binary: bool, pairs: Pairs) -> list[Value | None]:
    """Krippendorff's alpha of each pair alone (:func:`.coefficients.alpha`)."""
    if not pairs:
        return []
    t, both = tables(s, pairs)
    o = t + np.swapaxes(t, 1, 2)
    used = t.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        value = alpha_from(o, s.domain, level)
    varied = ((o.sum(axis=2) > 0).sum(axis=1) >= 2) & both & (used > 0) & np.isfinite(value)
    return [Value(float(value[k]), units_used=int(used[k]), params={"level": level}) if varied[k] else None for k in range(len(pairs))]


def fleiss(s: Stats, level: str, binary: bool, pairs: Pairs) -> list[Value | None]:
    """Fleiss' kappa of each pair alone (:func:`.coefficients.fleiss`): its complete units are the units both coded."""
    if not pairs:
        return []
    t, both = tables(s, pairs)
    n = t.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (t.sum(axis=2) + t.sum(axis=1)) / (2 * n[:, None])  # each value's share of the ratings
        p_bar = np.trace(t, axis1=1, axis2=2) / n  # Σ_u Σ_v n_uv (n_uv − 1) / (n r (r − 1)), r = 2
        p_e = (p**2).sum(axis=1)
        kappa = (p_bar - p_e) / (1 - p_e)
        pq = p * (1 - p)
        se = np.sqrt(2) / (pq.sum(axis=1) * np.sqrt(n * 2)) * np.sqrt(pq.sum(axis=1) ** 2 - (pq * (1 - 2 * p)).sum(axis=1))
    ok = both & (n > 0) & ((p > 0).sum(axis=1) >= 2)
    return [Value(float(kappa[k]), units_used=int(n[k]), std_err=float(se[k])) if ok[k] else None for k in range(len(pairs))]


def cochran_q(s: Stats, level: str, binary: bool, pairs: Pairs) -> list[Value | None]:
    """Cochran's Q of each pair alone (:func:`.coefficients.cochran_q`, two annotators: McNemar's statistic), on the
    units both coded, binary data only."""
    if not binary:  # what every pair alone says
        return [nan("Cochran's Q needs binary (0/1) values") for _ in pairs]
    one = np.flatnonzero(s.domain == 1.0)
    if not pairs or not set(s.domain.tolist()) <= {0.0, 1.0} or not s.annotators or one.size == 0:
        return [None] * len(pairs)
    t, both = tables(s, pairs)
    n = t.sum(axis=(1, 2))
    v = int(one[0])
    cols = np.stack([t[:, v, :].sum(axis=1), t[:, :, v].sum(axis=1)], axis=1)  # each annotator's units of value 1
    split = cols.sum(axis=1) - 2 * t[:, v, v]  # units one of the two gave 1 (the other 0)
    total = cols.sum(axis=1)
    squares = split + 4 * t[:, v, v]  # Σ_u (ones in u)²: 1 for a unit the two split, 4 for one both gave 1
    with np.errstate(invalid="ignore", divide="ignore"):
        q = (2 * (cols**2).sum(axis=1) - total**2) / (2 * total - squares)
    ok = both & (n > 0) & (split > 0)
    return [Value(float(q[k]), units_used=int(n[k]), df=1.0, p_value=chi2_sf(float(q[k]), 1)) if ok[k] else None for k in range(len(pairs))]
