"""Krippendorff's unitizing family: uα, |uα, cuα and (k)uα.

The coefficients of Krippendorff, Mathet, Bouvry & Widlöcher (2016), "On the
reliability of unitizing textual continua: Further developments", *Quality &
Quantity* 50, and Krippendorff (2019), *Content Analysis*, 4th ed., §12.6. They
revise the alpha-U of Krippendorff (1995/2004) (:mod:`unitize.metrics.alphau`),
which "behaved not as expected" with more than two coders.

Each of the m annotators partitions the continuum ``[0, L)`` into segments: its
units, each valued (a label), and the gaps between them, valued φ. Two
annotators' segments are paired position by position, so the observed
coincidences are

    ℓ_ck = 1/(m−1) · Σ_i Σ_{j≠i} |positions where i has c and j has k|,   ℓ.. = mL

(the coincidence matrix of Krippendorff's alpha over positions, gaps included).
What makes it a unitizing coefficient is the expected coincidences: a segment
cannot be paired with itself, and a unit of length l is one choice, not l
independent ones, so the self-pairings removed are l² for a unit and l for a gap
(whose positions carry no structure):

    ε_ck = ℓ.. · (ℓ_c. ℓ_.k − δ_ck S_c) / (ℓ..² − Σ_c S_c),   S_c = Σ_i Σ_g l_ig²  (S_φ = Σ gap lengths)

- **uα** (``u-alpha``) = 1 − D_o / D_e on the whole matrix, nominal: boundaries
  and values together.
- **|uα** (``|u-alpha``): the matrix collapsed to φ and not-φ — only whether
  matter was identified as relevant (units against gaps), values ignored.
- **cuα** (``cu-alpha``): the sub-matrix of valued segments only — how units that
  intersect were coded, ignoring where gaps were placed. A unit takes part by its
  *pairable length* p_ig = 1/(m−1) Σ_{j≠i} |S_ig ∩ units of j| (its share of the
  sub-matrix's margin), so the self-pairings removed are Σ p_ig².
  ``coverage`` = ℓ*.. / ℓ..: the share of the continuum's pairable matter it rests on.
- **(k)uα** (``ku-alpha``), one per value k, from the same sub-matrix:
  1 − (ε*_.k / ℓ*_.k) · (ℓ*_.k − ℓ*_kk) / (ε*_.k − ε*_kk);
  ``coverage`` = ℓ*_.k / ℓ_.k: the share of k's matter that intersects units.

Nominal values only (labels). On the worked example of Krippendorff (2019,
Fig. 12.11) this gives uα = .510, |uα = .414 and cuα = .724
(``tests/metrics/test_unitizing.py``).

Everything comes from :class:`Statistics` — the pair counts ``(m−1)·ℓ``, the
Σ l² and the Σ p² per value, all integers — which add up over documents and
over layers laid end to end (``stats(a) + stats(b) == stats(a ∪ b)``), so
per-document rows, the layer's row and the layers-together row come from one
pass over the segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from .alphau import alpha_from
from .overlaps import overlap_pairs
from .placed import Placed
from .value import Value, nan

GAP = "φ"


@dataclass(eq=False)
class Statistics:
    """Additive sufficient statistics of the unitizing family (index 0 of every array: the gap φ).

    Each document counts its own coders (m_d, those who coded it): its pair counts are divided by m_d − 1, as
    alpha weighs a unit's pairable values, so documents coded by different annotators add up.
    """

    values: tuple[str, ...]  # the values of index 1, 2, …
    annotators: int  # m: the most coders of a document
    length: int  # L
    coincidences: np.ndarray  # (V+1, V+1) float: ℓ, Σ over documents of their ordered pairs' positions valued (c, k) / (m_d − 1)
    squares: np.ndarray  # (V+1,) int64: Σ l² over the units of each value; [0]: Σ of the gap lengths
    pairable: np.ndarray  # (V+1,) float: Σ p² over the units of each value, p = the unit's pairable length

    def __add__(self, other: Statistics) -> Statistics:
        values = tuple(sorted(set(self.values) | set(other.values)))
        a, b = self.relabeled(values), other.relabeled(values)
        return Statistics(values, max(self.annotators, other.annotators), self.length + other.length,
                          a.coincidences + b.coincidences, a.squares + b.squares, a.pairable + b.pairable)

    def relabeled(self, values: tuple[str, ...]) -> Statistics:
        """The same statistics on a larger value list (absent values count zero)."""
        if values == self.values:
            return self
        at = np.array([0] + [values.index(v) + 1 for v in self.values])
        w = len(values) + 1
        coincidences = np.zeros((w, w))
        coincidences[np.ix_(at, at)] = self.coincidences
        squares, pairable = np.zeros(w, np.int64), np.zeros(w)
        squares[at], pairable[at] = self.squares, self.pairable
        return Statistics(values, self.annotators, self.length, coincidences, squares, pairable)

    # -- coincidences --

    def observed(self) -> np.ndarray:
        """ℓ: the observed coincidences, gaps in row and column 0 (ℓ.. = Σ m_d L_d)."""
        return self.coincidences

    def expected(self) -> np.ndarray:
        """ε: the expected coincidences of uα and |uα."""
        return _expected(self.observed(), self.squares.astype(np.float64))

    def valued(self) -> tuple[np.ndarray, np.ndarray]:
        """(ℓ*, ε*): the coincidences among valued segments only (cuα, (k)uα)."""
        ell = self.observed()[1:, 1:]
        return ell, _expected(ell, self.pairable[1:])


def _expected(ell: np.ndarray, self_pairs: np.ndarray) -> np.ndarray:
    total = ell.sum()
    margin = ell.sum(axis=1)
    denominator = total * total - self_pairs.sum()
    if denominator <= 0:
        return np.zeros_like(ell)
    return (np.outer(margin, margin) - np.diag(self_pairs)) * (total / denominator)


# -- the coefficients --


def u_alpha(s: Statistics) -> Value:
    """uα: agreement on units, gaps and values together (nominal)."""
    ell, eps = s.observed(), s.expected()
    if s.squares[1:].sum() == 0:
        return nan("no annotator marked a unit (no expected disagreement)", units_used=s.length)
    d_o, d_e = ell.sum() - np.trace(ell), eps.sum() - np.trace(eps)
    if d_e <= 0:
        return nan("no expected disagreement", units_used=s.length)
    return Value(alpha_from(d_o, d_e), units_used=s.length, params=_disagreements(d_o, d_e, ell.sum()))


def binary_u_alpha(s: Statistics) -> Value:
    """|uα: agreement on what is a unit and what a gap, values ignored."""
    ell, eps = s.observed(), s.expected()
    if s.squares[1:].sum() == 0:
        return nan("no annotator marked a unit (no expected disagreement)", units_used=s.length)
    d_o, d_e = 2 * ell[0, 1:].sum(), 2 * eps[0, 1:].sum()
    if d_e <= 0:
        return nan("no expected disagreement: every annotator marked everything", units_used=s.length)
    return Value(alpha_from(d_o, d_e), units_used=s.length, params=_disagreements(d_o, d_e, ell.sum()))


def cu_alpha(s: Statistics) -> Value:
    """cuα: agreement on the values of intersecting units, with its coverage of the continuum."""
    ell, eps = s.valued()
    total = ell.sum()
    coverage = float(total / s.observed().sum()) if s.length else 0.0
    if total == 0:
        return nan("no two annotators' units intersect (coverage 0)", units_used=s.length, params={"coverage": 0.0})
    d_o, d_e = total - np.trace(ell), eps.sum() - np.trace(eps)
    if d_e <= 0:
        why = ("one value only: 0/1 data has no coding to agree on (see |u-alpha, or measure a labels setting)"
               if len(s.values) == 1 else "intersecting units have one value only (no expected disagreement)")
        return nan(why, units_used=s.length, params={"coverage": coverage})
    return Value(alpha_from(d_o, d_e), units_used=s.length, params={**_disagreements(d_o, d_e, total), "coverage": coverage})


def ku_alpha(s: Statistics) -> list[Value]:
    """(k)uα for every value k (rows with a label), each with its coverage."""
    ell, eps = s.valued()
    full = s.observed().sum(axis=0)[1:]
    out = []
    for k, name in enumerate(s.values):
        l_k, e_k = ell[:, k].sum(), eps[:, k].sum()
        coverage = float(l_k / full[k]) if full[k] else 0.0
        params = {"coverage": coverage}
        if l_k == 0:
            v = nan("no unit of this value intersects another annotator's unit (coverage 0)", params=params)
        elif e_k - eps[k, k] <= 0:
            v = nan("one value only: 0/1 data has no coding to agree on" if len(s.values) == 1
                    else "no expected disagreement on this value", params=params)
        else:
            d_o, d_e = (l_k - ell[k, k]) / l_k, (e_k - eps[k, k]) / e_k
            v = Value(alpha_from(d_o, d_e), params={"observed": float(d_o), "expected": float(d_e), **params})
        v.units_used, v.label = s.length, name
        out.append(v)
    return out


def _disagreements(d_o: float, d_e: float, total: float) -> dict[str, float]:
    return {"observed": float(d_o / total), "expected": float(d_e / total)}


class Variant(Enum):
    """The members of the family (each a metric of the registry)."""

    U = "uα"
    BINARY = "|uα"
    CU = "cuα"
    K = "(k)uα"

    def rows(self, s: Statistics) -> list[Value]:
        """The rows of this member: one value, or one per value k for (k)uα."""
        if self is Variant.K:
            return ku_alpha(s)
        return [{Variant.U: u_alpha, Variant.BINARY: binary_u_alpha, Variant.CU: cu_alpha}[self](s)]


# -- from the segments --


def statistics(p: Placed) -> Statistics:
    """The statistics of a layer's whole continuum."""
    pairs, squares, pairable, coders = _sums(p)
    per = np.maximum(coders - 1, 1).astype(np.float64)  # a document on the continuum has two coders or more
    return Statistics(p.values, int(coders.max()) if coders.size else len(p.annotators), p.length,
                      (pairs / per[:, None, None]).sum(axis=0), squares.sum(axis=0), (pairable / (per * per)[:, None]).sum(axis=0))


def by_document(p: Placed) -> list[tuple[str, Statistics]]:
    """Each document's statistics (they add up to :func:`statistics`), of the annotators who coded it."""
    pairs, squares, pairable, coders = _sums(p)
    lengths = p.doc_lengths
    return [(doc, Statistics(p.values, int(coders[d]), int(lengths[d]), pairs[d] / (coders[d] - 1), squares[d],
                             pairable[d] / (coders[d] - 1) ** 2))
            for d, doc in enumerate(p.docs)]


def _sums(p: Placed) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per document: pair counts (D, W, W), Σ l² (D, W), Σ P² (D, W), W = values + the gap, and its coders m_d (D,)
    (P = (m_d − 1) · pairable length)."""
    m, n_docs, w = len(p.annotators), len(p.docs), len(p.values) + 1
    coders = p.coded.sum(axis=1).astype(np.int64)  # an annotator who did not code a document has no units or gaps there
    doc, val = p.doc, p.value + 1
    size = p.end - p.begin
    pairs: np.ndarray = np.zeros(n_docs * w * w, np.int64)
    reach = np.zeros(size.size, np.int64)  # P: what each unit shares with the other annotators' units
    groups = p.by_annotator()
    for i in range(m):
        gi = groups[i]
        for j in range(i + 1, m):
            gj = groups[j]
            ii, jj = overlap_pairs(p.begin[gi], p.end[gi], p.begin[gj], p.end[gj])
            a, b = gi[ii], gj[jj]
            shared = np.minimum(p.end[a], p.end[b]) - np.maximum(p.begin[a], p.begin[b])
            np.add.at(pairs, (doc[a] * w + val[a]) * w + val[b], shared)
            np.add.at(pairs, (doc[a] * w + val[b]) * w + val[a], shared)
            np.add.at(reach, a, shared)
            np.add.at(reach, b, shared)
    pairs = pairs.reshape(n_docs, w, w)
    cell = doc * w + val
    covered = _add(cell, size, n_docs * w).reshape(n_docs, w)
    squares = _add(cell, size * size, n_docs * w).reshape(n_docs, w)
    pairable = _add(cell, reach * reach, n_docs * w).reshape(n_docs, w)
    # a unit against the other annotators' gaps, and gaps against gaps: what the units leave
    against_gaps = (coders[:, None] - 1) * covered[:, 1:] - pairs[:, 1:, 1:].sum(axis=2)
    pairs[:, 1:, 0] = against_gaps
    pairs[:, 0, 1:] = against_gaps
    lengths = p.doc_lengths
    pairs[:, 0, 0] = coders * (coders - 1) * lengths - pairs.reshape(n_docs, -1).sum(axis=1)
    squares[:, 0] = coders * lengths - covered[:, 1:].sum(axis=1)
    return pairs, squares, pairable, coders


def _add(keys: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, np.int64)
    np.add.at(out, keys, weights.astype(np.int64))
    return out
