"""Where annotators' units overlap, and the δ terms of alpha-U's observed disagreement between them.

Each annotator's units (of one category) are sorted and disjoint, end exclusive. Two units of different
annotators that share a position differ by Δbegin² + Δend²; a unit inside the other annotator's gap (it
overlaps none of theirs) by its length squared (Krippendorff 1995; :mod:`.alphau`). :func:`overlap_pairs`
finds the overlaps of two annotators, :func:`pair_deltas` their terms, and :func:`observed_matrix` every
pair's sum at once from one sort of all annotators' units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: one annotator's units of one category: (begins, ends), sorted, disjoint, end exclusive
Units = tuple[np.ndarray, np.ndarray]


def overlap_pairs(bi: np.ndarray, ei: np.ndarray, bj: np.ndarray, ej: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (g, h) of a unit g of i and a unit h of j that share a position.

    Each side's units are sorted and disjoint (end exclusive); the pairs come out
    sorted by g, then h. No loop: per unit of i, the units of j it overlaps are a
    contiguous run found with ``searchsorted``.
    """
    lo = np.searchsorted(ej, bi, side="right")  # first unit of j ending after bi
    hi = np.searchsorted(bj, ei, side="left")  # units of j beginning before ei
    count = np.maximum(hi - lo, 0)
    total = int(count.sum())
    ii = np.repeat(np.arange(bi.size), count)
    starts = np.repeat(np.cumsum(count) - count, count)
    jj = np.arange(total) - starts + np.repeat(lo, count)
    return ii, jj


@dataclass(frozen=True)
class Overlaps:
    """All annotators' units in one sorted array (``begin``, ``end``, ``who``: the annotator, ``at``: the position in the
    concatenation of ``units``), every overlapping pair (``g``, ``h``: positions in it) and each pair's Δbegin² + Δend²;
    ``covered`` (positions × m, flattened and unique): each unit with each other annotator it overlaps a unit of."""

    begin: np.ndarray
    end: np.ndarray
    who: np.ndarray
    at: np.ndarray
    g: np.ndarray
    h: np.ndarray
    delta: np.ndarray
    covered: np.ndarray


def overlaps(units: Sequence[Units]) -> Overlaps:
    """All annotators' units at once: overlapping units of different annotators are the pairs where one begins inside the other (each annotator's
    units are disjoint): one sort of all units and a searchsorted find them all (:func:`overlap_pairs` for many)."""
    begin = np.concatenate([np.asarray(u[0], np.int64) for u in units] or [np.zeros(0, np.int64)])
    end = np.concatenate([np.asarray(u[1], np.int64) for u in units] or [np.zeros(0, np.int64)])
    return overlaps_of(begin, end, np.repeat(np.arange(len(units)), [np.asarray(u[0]).size for u in units]), len(units))


def overlaps_of(begin: np.ndarray, end: np.ndarray, who: np.ndarray, m: int) -> Overlaps:
    """:func:`overlaps` of units given as one array each of begins, ends and annotators (0 … ``m`` − 1), each
    annotator's units sorted and disjoint; ``at`` positions in these arrays."""
    top = int(end.max(initial=0)) + 1
    at = np.argsort(begin * top + end, kind="stable") if top < 1 << 31 else np.lexsort((end, begin))  # by begin, then end
    begin, end, who = begin[at], end[at], who[at]
    after = np.arange(1, begin.size + 1)
    count = np.maximum(np.searchsorted(begin, end, side="left") - after, 0)  # later units beginning inside this one
    g = np.repeat(np.arange(begin.size), count)
    h = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count) + np.repeat(after, count)
    delta = (begin[g] - begin[h]) ** 2 + (end[g] - end[h]) ** 2
    seen = np.zeros(begin.size * m, dtype=bool)  # sorted and unique, as np.unique gives, without its sort
    seen[g * m + who[h]] = True
    seen[h * m + who[g]] = True
    covered = np.flatnonzero(seen)
    return Overlaps(begin, end, who, at, g, h, delta, covered)


def observed_matrix(units: Sequence[Units]) -> np.ndarray:
    """(m, m) int64: Σ δ between the units of every two annotators (:func:`pair_deltas`'s rule), all pairs at once: the
    overlapping pairs' Δbegin² + Δend², and l² of each unit for each annotator in whose gap it lies (it overlaps none
    of theirs)."""
    m = len(units)
    o = overlaps(units)
    out = np.zeros((m, m), np.int64)
    np.add.at(out, (o.who[o.g], o.who[o.h]), o.delta)
    squared = (o.end - o.begin) ** 2
    covered = np.zeros((m, m), np.int64)  # [a, c]: Σ l² of a's units that overlap a unit of c
    np.add.at(covered, (o.who[o.covered // m], o.covered % m), squared[o.covered // m])
    total = np.zeros(m, np.int64)
    np.add.at(total, o.who, squared)
    alone = total[:, None] - covered  # [a, c]: Σ l² of a's units in a gap of c
    out = out + out.T + alone + alone.T
    np.fill_diagonal(out, 0)
    return out


def pair_deltas(one: Units, other: Units) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The δ between two annotators' units, each term at a unit of one of them — (units of ``one``, their δ), (units of
    ``other``, their δ): Δbegin² + Δend² where units overlap (at ``one``'s unit), l² for a unit inside the other's gap."""
    (bi, ei), (bj, ej) = one, other
    ii, jj = overlap_pairs(bi, ei, bj, ej)
    alone_i = np.flatnonzero(np.bincount(ii, minlength=bi.size) == 0)
    alone_j = np.flatnonzero(np.bincount(jj, minlength=bj.size) == 0)
    at_i = np.concatenate((ii, alone_i))
    delta_i = np.concatenate(((bi[ii] - bj[jj]) ** 2 + (ei[ii] - ej[jj]) ** 2, (ei[alone_i] - bi[alone_i]) ** 2))
    return (at_i, delta_i), (alone_j, (ej[alone_j] - bj[alone_j]) ** 2)


def pair_observed(one: Units, other: Units) -> int:
    """Σ δ between two annotators' units (:func:`pair_deltas`)."""
    (_, delta_i), (_, delta_j) = pair_deltas(one, other)
    return int(delta_i.sum()) + int(delta_j.sum())
