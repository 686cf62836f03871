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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .overlaps import Units, overlaps_of, pair_observed


@dataclass(frozen=True)
class CategoryDisagreement:
    observed: float
    expected: float

    @property
    def alpha(self) -> float:
        return alpha_from(self.observed, self.expected)

    @classmethod
    def of_sums(cls, m: int, length: int, observed: int, numerator: int, squares: int) -> CategoryDisagreement:
        """From one category's exact integer sums on a continuum of ``length`` (Σ δ, the expected numerator, Σ l (l − 1)),
        divided as every route of this package divides them: the same sums give the same values to the last bit."""
        expected = 2 * numerator / (length * (m * length * (m * length - 1) - squares)) if numerator else 0.0
        return cls(observed=2 * observed / (m * (m - 1) * length * length), expected=expected)


def alpha_from(observed: float, expected: float) -> float:
    """1 − D_o / D_e; NaN without expected disagreement, 0 when the two are equal to 12 digits."""
    if expected == 0.0:
        return float("nan")
    if abs(observed - expected) <= 1e-12 * abs(expected):
        return 0.0  # exactly chance; keep float noise out of a published edge case
    return 1.0 - observed / expected


def normalised(units: Units, length: int) -> Units:
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
    norm = [normalised(u, length) for u in units]
    L = float(length)

    observed = 2.0 * sum(pair_observed(norm[i], norm[j]) for i in range(m) for j in range(i + 1, m)) / (m * (m - 1) * L * L)

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
    return alpha_u_from({c: category_disagreement(u, length) for c, u in study.items()})


def alpha_u_from(categories: Mapping[str, CategoryDisagreement]) -> AlphaU:
    """Alpha-U over categories from their disagreements: 1 − Σ D_o / Σ D_e (not the mean of the categories' alphas)."""
    cats = dict(categories)
    return AlphaU(alpha=alpha_from(sum(c.observed for c in cats.values()), sum(c.expected for c in cats.values())), categories=cats)


# --- sufficient statistics: one category on a stretch of the continuum --------------------------

#: lengths and how many units (or gaps) have each: (sorted distinct lengths, counts), int64
Histogram = tuple[np.ndarray, np.ndarray]

_EMPTY: Histogram = (np.zeros(0, np.int64), np.zeros(0, np.int64))


def _histogram(lengths: np.ndarray, counts: np.ndarray | None = None) -> Histogram:
    lengths = np.asarray(lengths, dtype=np.int64)
    if counts is None:
        counts = np.ones(lengths.size, np.int64)
    values, inverse = np.unique(lengths, return_inverse=True)
    out = np.zeros(values.size, np.int64)
    np.add.at(out, inverse, np.asarray(counts, dtype=np.int64))
    return values, out


def _merged(*hs: Histogram) -> Histogram:
    return _histogram(np.concatenate([h[0] for h in hs]), np.concatenate([h[1] for h in hs]))


@dataclass(eq=False)
class Stretch:
    """Alpha-U's sufficient statistics of one category on a stretch of the continuum.

    A stretch is one document, or documents laid end to end. Its disagreements
    are functions of these sums alone: the observed Σ δ over annotator pairs
    (units never cross a document, so it adds up), the histogram of unit lengths
    and the histogram of gap lengths. Gaps are what does not simply add up — the
    gap after an annotator's last unit of one document and the gap before its
    first unit of the next are one gap on the continuum — so each annotator's
    leading and trailing gap is kept apart, and ``a + b`` (``a`` before ``b``)
    joins them. Adding every document's stretch in order gives the statistics of
    the whole continuum, exactly (a tested property). Integers throughout.
    """

    length: int
    observed: int  # Σ over annotator pairs i < j of δ: Δbegin² + Δend², or l² for a unit inside a gap
    units: Histogram  # unit lengths, all annotators
    gaps: Histogram  # gaps between two units of one annotator inside the stretch
    lead: np.ndarray  # (m,) gap before each annotator's first unit (the length when it has none)
    trail: np.ndarray  # (m,) gap after each annotator's last unit (the length when it has none)
    marked: np.ndarray  # (m,) bool: the annotator has a unit in the stretch
    #: :meth:`disagreement`, once asked (the cells of a group share a layer's stretches)
    _disagreement: CategoryDisagreement | None = field(default=None, init=False, repr=False)

    def __add__(self, later: Stretch) -> Stretch:
        if later.lead.size != self.lead.size:
            raise ValueError("stretches of different numbers of annotators")
        both = self.marked & later.marked
        joined = self.trail[both] + later.lead[both]
        return Stretch(
            length=self.length + later.length,
            observed=self.observed + later.observed,
            units=_merged(self.units, later.units),
            gaps=_merged(self.gaps, later.gaps, _histogram(joined[joined > 0])),
            lead=np.where(self.marked, self.lead, self.length + later.lead),
            trail=np.where(later.marked, later.trail, later.length + self.trail),
            marked=self.marked | later.marked,
        )

    def all_gaps(self) -> Histogram:
        """Every gap of every annotator: inner, leading and trailing, and a whole stretch left unmarked — as (lengths,
        counts) sorted by length, a length possibly more than once (what :meth:`disagreement` sums needs no more)."""
        ends = np.concatenate([self.lead[self.marked], self.trail[self.marked], np.full(int((~self.marked).sum()), self.length)])
        ends = ends[ends > 0].astype(np.int64)
        lengths = np.concatenate((self.gaps[0], ends))
        order = np.argsort(lengths, kind="stable")
        return lengths[order], np.concatenate((self.gaps[1], np.ones(ends.size, np.int64)))[order]

    def disagreement(self) -> CategoryDisagreement:
        """Observed and expected disagreement (the formulas of the module docstring), in exact integers; worked out
        once."""
        if self._disagreement is None:
            self._disagreement = self._disagreement_of()
        return self._disagreement

    def _disagreement_of(self) -> CategoryDisagreement:
        m, L = int(self.lead.size), int(self.length)
        if m < 2:
            raise ValueError("alpha-U needs at least two annotators")
        if L <= 0:
            raise ValueError("alpha-U needs a continuum of positive length")
        gl, gc = self.all_gaps()
        at_least = np.concatenate((np.cumsum(gc[::-1])[::-1], [0]))  # gaps ≥ a length: how many ...
        summed = np.concatenate((np.cumsum((gl * gc)[::-1])[::-1], [0]))  # ... and their total length
        ul, uc = self.units
        idx = np.searchsorted(gl, ul, side="left")  # the first gap at least that long (equal lengths follow it)
        fitting = summed[idx] - (ul - 1) * at_least[idx]  # Σ over gaps ≥ l of (gap − l + 1)
        n_c = int(uc.sum())
        return CategoryDisagreement.of_sums(m, L, self.observed, *unit_sums(ul, uc, fitting, n_c))


#: integer sums that might come near this are summed in Python integers, not int64 (which holds 2⁶³ − 1) …
SAFE = float(1 << 60)
#: … and so are those of a unit this long or longer (its l³ alone comes near)
LONG = 1 << 20


def unit_sums(ul: np.ndarray, uc: np.ndarray, fitting: np.ndarray, n_c: int) -> tuple[int, int]:
    """Σ c ((N_c − 1)(2l³ − 3l² + l)/3 + l² fitting) and Σ c l (l − 1) over the unit lengths ``ul`` (``uc`` units each),
    exactly: in int64 when a floating-point bound says they fit, else in Python integers."""
    top, most = (float(ul.max()), float(np.abs(fitting).max())) if ul.size else (0.0, 0.0)
    bound = SAFE if top >= LONG else float(uc.sum()) * (n_c * 2 * top**3 + top * top * most)  # from the largest terms, …
    if top < LONG and bound >= SAFE:  # … else term by term
        uf = ul.astype(np.float64)
        bound = float(np.sum(uc * (n_c * 2 * uf**3 + uf * uf * np.abs(fitting.astype(np.float64)))))
    if bound < SAFE:
        terms = uc * ((n_c - 1) * (ul * (ul - 1) * (2 * ul - 1) // 3) + ul * ul * fitting)
        return int(terms.sum()), int((uc * ul * (ul - 1)).sum())
    numerator = sum(c * ((n_c - 1) * (u * (u - 1) * (2 * u - 1) // 3) + u * u * f) for u, c, f in zip(ul.tolist(), uc.tolist(), fitting.tolist()))
    return numerator, sum(c * u * (u - 1) for u, c in zip(ul.tolist(), uc.tolist()))


def stretches(units: Sequence[Units], length: int, starts: np.ndarray | None = None) -> list[Stretch]:
    """The statistics of one category per document.

    ``units`` has one entry per annotator (sorted, disjoint, on ``[0, length)``);
    ``starts`` are the documents' first positions (sorted, the first 0; default:
    one document). A unit may not cross a document boundary.
    """
    begins = [np.asarray(u[0], np.int64).reshape(-1) for u in units]
    ends = [np.asarray(u[1], np.int64).reshape(-1) for u in units]
    if any(b.size != e.size for b, e in zip(begins, ends)):
        raise ValueError("begins and ends differ in length")
    who = np.repeat(np.arange(len(units)), [b.size for b in begins])
    empty = [np.zeros(0, np.int64)]
    return annotated_stretches(who, np.concatenate(begins or empty), np.concatenate(ends or empty), len(units), length, starts)


def annotated_stretches(who: np.ndarray, begin: np.ndarray, end: np.ndarray, m: int, length: int,
                        starts: np.ndarray | None = None) -> list[Stretch]:
    """:func:`stretches` of units given as one array each of annotators (0 … ``m`` − 1), begins and ends, in any
    order: every annotator at once."""
    who, begin, end = _annotated_units(who, begin, end, length)
    starts = np.zeros(1, np.int64) if starts is None else np.asarray(starts, dtype=np.int64)
    ends = np.append(starts[1:], length).astype(np.int64)
    n_docs = starts.size
    size = ends - starts
    d = np.searchsorted(starts, begin, side="right") - 1
    if np.any(end > ends[d]):
        raise ValueError("a unit crosses a document boundary")
    first = np.concatenate(([True], (who[1:] != who[:-1]) | (d[1:] != d[:-1])))[: begin.size]  # an annotator's first in a document
    last = np.concatenate((first[1:], [True]))[: begin.size]
    lead = np.repeat(size[:, None], m, axis=1)
    trail = lead.copy()
    marked = np.zeros((n_docs, m), dtype=bool)
    lead[d[first], who[first]] = begin[first] - starts[d[first]]
    trail[d[last], who[last]] = ends[d[last]] - end[last]
    marked[d[first], who[first]] = True
    inner = np.flatnonzero(~first)
    gap = begin[inner] - end[inner - 1]
    o = overlaps_of(begin, end, who, m)
    doc = d[o.at]
    observed = np.zeros(n_docs, np.int64)
    np.add.at(observed, doc[o.g], o.delta)  # overlapping units lie in one document
    # each unit, l² for every other annotator in whose gap it lies: the m − 1 others but those it overlaps a unit of
    others = m - 1 - np.bincount(o.covered // m, minlength=o.begin.size)
    np.add.at(observed, doc, others * (o.end - o.begin) ** 2)
    per_unit = _by_doc(d, end - begin, n_docs)
    per_gap = _by_doc(d[inner][gap > 0], gap[gap > 0], n_docs)
    return [
        Stretch(int(size[k]), int(observed[k]), per_unit[k], per_gap[k], lead[k], trail[k], marked[k])
        for k in range(n_docs)
    ]


def _annotated_units(who: np.ndarray, begin: np.ndarray, end: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Units of positive length sorted by annotator, then position; each annotator's disjoint, inside ``[0, length)``."""
    who, begin, end = (np.asarray(x, dtype=np.int64).reshape(-1) for x in (who, begin, end))
    keep = end > begin
    if not keep.all():
        who, begin, end = who[keep], begin[keep], end[keep]
    top = (int(who.max(initial=0)) + 1) * (length + 1)
    order = np.argsort(who * (length + 1) + begin, kind="stable") if top < 1 << 62 else np.lexsort((begin, who))  # one key if it fits
    who, begin, end = who[order], begin[order], end[order]
    if begin.size and (int(begin.min()) < 0 or int(end.max()) > length):
        raise ValueError(f"a unit lies outside the continuum [0, {length})")
    if np.any((who[1:] == who[:-1]) & (begin[1:] < end[:-1])):
        raise ValueError("one annotator's units of one category overlap; merge them first")
    return who, begin, end


def _by_doc(doc: np.ndarray, lengths: np.ndarray, n_docs: int) -> list[Histogram]:
    """One length histogram per document."""
    if lengths.size == 0:
        return [_EMPTY] * n_docs
    span = int(lengths.max()) + 1
    key = doc.astype(np.int64) * span + lengths
    if n_docs * span <= 4 * key.size + 65_536:  # few distinct keys possible: counted, not sorted
        tally = np.bincount(key, minlength=n_docs * span)
        keys = np.flatnonzero(tally)
        counts = tally[keys]
    else:
        keys, counts = np.unique(key, return_counts=True)
    bounds = np.searchsorted(keys // span, np.arange(n_docs + 1))
    return [(keys[a:b] % span, counts[a:b].astype(np.int64)) for a, b in zip(bounds[:-1], bounds[1:])]


def in_order(parts: Sequence[Stretch]) -> Stretch:
    """Stretches laid end to end, in order (the continuum of a layer from its documents)."""
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def alpha_u_of(categories: Mapping[str, Stretch]) -> AlphaU:
    """Alpha-U over categories from their statistics (the same value as :func:`alpha_u`)."""
    return alpha_u_from({c: s.disagreement() for c, s in categories.items()})
