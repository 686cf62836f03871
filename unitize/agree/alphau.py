"""Krippendorff's alpha for unitizing (alpha-U), the 1995/2004 definition.

This is the measure of Krippendorff (1995) "On the reliability of unitizing
contiguous data" and Krippendorff (2004) *Content Analysis* §12.4, the one the
RAT used (Yalçınkaya 2010, Appendix D) and DKPro Agreement implements as
``KrippendorffAlphaUnitizingAgreement``. It is **not** the uα / |uα / cuα family
of Krippendorff, Mathet, Bouvry & Widlöcher (2016) and Krippendorff (2019),
which revises this measure and gives different values on the same data.

Every category is scored separately on a continuum ``[0, L)``: each of the
``m`` annotators cuts it into units (their segments of the category) and gaps
(everything else). With ``l`` the length of a unit:

* observed disagreement ``D_o = Σ_{i≠j} Σ_g Σ_h δ(s_ig, s_jh) / (m (m−1) L²)``
  where two overlapping units differ by ``Δbegin² + Δend²``, a unit and a gap
  that contains it by ``l²``, and everything else by 0;
* expected disagreement
  ``D_e = (2/L) Σ_units [(N_c−1)(2l³−3l²+l)/3 + l² Σ_{gaps ≥ l}(gap−l+1)] / (mL(mL−1) − Σ_units l(l−1))``
  with ``N_c`` the number of units of the category over all annotators.

The overall alpha is ``1 − Σ_c D_o / Σ_c D_e`` (not the mean of the category
alphas). Everything is vectorised: overlaps between two annotators' sorted,
disjoint units are found with ``searchsorted``; the gap sums with a sorted
suffix sum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

#: one annotator's units of one category: (begins, ends), sorted, disjoint, end exclusive
Units = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class CategoryDisagreement:
    observed: float
    expected: float

    @property
    def alpha(self) -> float:
        return _alpha(self.observed, self.expected)


def _alpha(observed: float, expected: float) -> float:
    if expected == 0.0:
        return float("nan")
    if np.isclose(observed, expected, rtol=1e-12, atol=0.0):
        return 0.0  # exactly chance; keep float noise out of a published edge case
    return 1.0 - observed / expected


def _normalise(units: Units, length: int) -> Units:
    begin = np.asarray(units[0], dtype=np.int64)
    end = np.asarray(units[1], dtype=np.int64)
    if begin.shape != end.shape:
        raise ValueError("begins and ends differ in length")
    keep = end > begin
    begin, end = begin[keep], end[keep]
    order = np.argsort(begin, kind="stable")
    begin, end = begin[order], end[order]
    if begin.size and (begin[0] < 0 or end[-1] > length):
        raise ValueError(f"a unit lies outside the continuum [0, {length})")
    if np.any(begin[1:] < end[:-1]):
        raise ValueError("one annotator's units of one category overlap; merge them first")
    return begin, end


def _overlaps(bi: np.ndarray, ei: np.ndarray, bj: np.ndarray, ej: np.ndarray) -> tuple[float, np.ndarray]:
    """Σ δ over overlapping unit pairs of i and j, and per unit of i how many units of j it overlaps."""
    lo = np.searchsorted(ej, bi, side="right")  # first unit of j ending after bi
    hi = np.searchsorted(bj, ei, side="left")  # units of j beginning before ei
    count = np.maximum(hi - lo, 0)
    total = int(count.sum())
    if total == 0:
        return 0.0, count
    ii = np.repeat(np.arange(bi.size), count)
    starts = np.repeat(np.cumsum(count) - count, count)
    jj = np.arange(total) - starts + np.repeat(lo, count)
    db = (bi[ii] - bj[jj]).astype(np.float64)
    de = (ei[ii] - ej[jj]).astype(np.float64)
    return float(np.sum(db * db + de * de)), count


def category_disagreement(units: Sequence[Units], length: int) -> CategoryDisagreement:
    """Observed and expected disagreement of one category.

    ``units`` has one entry per annotator (an annotator with no unit of the
    category is an empty pair of arrays: one long gap); ``length`` is L.
    """
    m = len(units)
    if m < 2:
        raise ValueError("alpha-U needs at least two annotators")
    if length <= 0:
        raise ValueError("alpha-U needs a continuum of positive length")
    norm = [_normalise(u, length) for u in units]
    L = float(length)

    observed = 0.0
    for i in range(m):
        bi, ei = norm[i]
        for j in range(i + 1, m):
            bj, ej = norm[j]
            pairs, count_i = _overlaps(bi, ei, bj, ej)
            _, count_j = _overlaps(bj, ej, bi, ei)
            li = (ei - bi)[count_i == 0].astype(np.float64)  # units of i inside a gap of j
            lj = (ej - bj)[count_j == 0].astype(np.float64)
            observed += 2.0 * (pairs + float(np.sum(li * li)) + float(np.sum(lj * lj)))
    observed /= m * (m - 1) * L * L

    lengths = np.concatenate([(e - b) for b, e in norm]).astype(np.float64)
    gaps = []
    for b, e in norm:
        starts = np.concatenate(([0], e))
        ends = np.concatenate((b, [length]))
        g = ends - starts
        gaps.append(g[g > 0])
    gap = np.sort(np.concatenate(gaps).astype(np.float64))
    suffix = np.concatenate((np.cumsum(gap[::-1])[::-1], [0.0]))
    n_c = lengths.size
    idx = np.searchsorted(gap, lengths, side="left")  # gaps at least as long as the unit
    fitting = suffix[idx] - (lengths - 1.0) * (gap.size - idx)
    l2 = lengths * lengths
    numerator = (2.0 / L) * float(np.sum((n_c - 1) * (2.0 * l2 * lengths - 3.0 * l2 + lengths) / 3.0 + l2 * fitting))
    denominator = m * L * (m * L - 1.0) - float(np.sum(lengths * (lengths - 1.0)))
    expected = numerator / denominator if numerator else 0.0
    return CategoryDisagreement(observed=observed, expected=expected)


@dataclass(frozen=True)
class AlphaU:
    alpha: float
    categories: dict[str, CategoryDisagreement]

    @property
    def observed(self) -> float:
        return float(sum(c.observed for c in self.categories.values()))

    @property
    def expected(self) -> float:
        return float(sum(c.expected for c in self.categories.values()))


def alpha_u(study: Mapping[str, Sequence[Units]], length: int) -> AlphaU:
    """Alpha-U over categories: ``study`` maps category -> per-annotator units.

    Every category must list the same annotators in the same order. The value
    is NaN when no annotator marked anything (no expected disagreement).
    """
    cats = {c: category_disagreement(u, length) for c, u in study.items()}
    observed = sum(c.observed for c in cats.values())
    expected = sum(c.expected for c in cats.values())
    return AlphaU(alpha=_alpha(observed, expected), categories=cats)
