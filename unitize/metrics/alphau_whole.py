"""Alpha-U's disagreement of every value of one layer on its whole continuum, at once (a cell's value).

:func:`~.alphau.annotated_stretches` keeps what adds up over documents (a :class:`~.alphau.Stretch`: histograms,
each annotator's leading and trailing gap), which a row per document or a bootstrap needs. A cell's value needs
less: each value's observed and expected disagreement on the whole continuum. :func:`whole_disagreements` works
them out from the placed segments directly — the units ordered by value and annotator, the gaps sorted once for all
values, each unit's fitting gaps found by one search — in the same exact integers as
:meth:`~.alphau.Stretch.disagreement` (int64 where a floating-point bound says the sums fit, Python integers
otherwise), so every value is the same to the last bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .alphau import CategoryDisagreement, unit_sums
from .overlaps import overlaps_of
from .placed import Placed, run_order


class Whole(NamedTuple):
    """One value's disagreement on the whole continuum, and whether any annotator marked a unit of it."""

    disagreement: CategoryDisagreement
    marked: bool


def whole_disagreements(p: Placed) -> list[Whole]:
    """Per value of ``p`` (:attr:`Placed.values`, in order): its disagreement on the continuum, the value's units
    against everything else (the stretch of :func:`~.alphau.annotated_stretches` with the value alone, whole)."""
    m, length, n_values = len(p.annotators), int(p.length), len(p.values)
    if m < 2:
        raise ValueError("alpha-U needs at least two annotators")
    if length <= 0:
        raise ValueError("alpha-U needs a continuum of positive length")
    who, begin, end, value = (np.asarray(x, np.int64).reshape(-1) for x in (p.annotator, p.begin, p.end, p.value))
    keep = end > begin
    if not keep.all():
        who, begin, end, value = who[keep], begin[keep], end[keep], value[keep]
    if begin.size and (int(begin.min()) < 0 or int(end.max()) > length):
        raise ValueError(f"a unit lies outside the continuum [0, {length})")
    if begin.size and int((end - begin).max()) == 1:
        return _single_units(who, begin, value, m, length, n_values)
    run = value * m + who  # a value's units of one annotator: a run, each in order of position
    order = run_order(run, begin)
    run, who, begin, end, value = run[order], who[order], begin[order], end[order], value[order]
    same = run[1:] == run[:-1]
    if np.any(same & (begin[1:] < end[:-1])):
        raise ValueError("one annotator's units of one category overlap; merge them first")
    observed = _observed(who, begin + value * length, end + value * length, value, m, n_values)
    gap_key = _gap_keys(same, begin, end, value, m, length, n_values)
    top = length + 1
    lengths = end - begin
    first = np.searchsorted(gap_key, value * top + lengths, side="left")  # the value's first gap at least that long
    bounds = np.searchsorted(gap_key, np.arange(1, n_values + 1) * top, side="left")  # the end of each value's gaps
    last = bounds[value]
    summed = np.concatenate(([0], np.cumsum(gap_key - (gap_key // top) * top)))
    fitting = (summed[last] - summed[first]) - (lengths - 1) * (last - first)
    starts = np.searchsorted(value, np.arange(n_values + 1))  # units come in order of value
    out = []
    for v in range(n_values):
        a, b = int(starts[v]), int(starts[v + 1])
        ul = lengths[a:b]
        found = CategoryDisagreement.of_sums(m, length, observed[v], *unit_sums(ul, np.ones(ul.size, np.int64), fitting[a:b], b - a))
        out.append(Whole(found, b > a))
    return out


def _single_units(who: np.ndarray, begin: np.ndarray, value: np.ndarray, m: int, length: int, n_values: int) -> list[Whole]:
    """:func:`whole_disagreements` where every unit is one long (the boundary approach's units): two units overlap only
    where they coincide (δ 0), so a position where c of the m annotators have a unit adds c (m − c) to the observed Σ δ;
    every unit fits into every unit of every gap, so the expected numerator is N_c (mL − N_c), and Σ l (l − 1) is 0."""
    key = np.sort((value * length + begin) * m + who)  # by value, position, annotator
    if np.any(key[1:] == key[:-1]):
        raise ValueError("one annotator's units of one category overlap; merge them first")
    place = key // m
    starts = np.flatnonzero(np.concatenate(([True], place[1:] != place[:-1])))
    coders = np.diff(np.append(starts, key.size))  # the annotators with a unit at each (value, position)
    summed = np.concatenate(([0], np.cumsum(coders * (m - coders))))
    bounds = np.searchsorted(place[starts] // length, np.arange(n_values + 1))
    n_c = np.bincount(value, minlength=n_values).tolist()
    observed = [int(summed[bounds[v + 1]] - summed[bounds[v]]) for v in range(n_values)]
    return [Whole(CategoryDisagreement.of_sums(m, length, observed[v], n_c[v] * (m * length - n_c[v]), 0), n_c[v] > 0) for v in range(n_values)]


def _observed(who: np.ndarray, begin: np.ndarray, end: np.ndarray, value: np.ndarray, m: int, n_values: int) -> list[int]:
    """Per value: Σ δ over pairs of annotators (each value on a continuum of its own: positions shifted apart)."""
    o = overlaps_of(begin, end, who, m)
    others = m - 1 - np.bincount(o.covered // m, minlength=o.begin.size)  # the annotators in whose gap each unit lies
    alone = others * (o.end - o.begin) ** 2
    if n_values == 1:
        return [int(o.delta.sum()) + int(alone.sum())]
    at = value[o.at]
    observed = np.zeros(n_values, np.int64)
    np.add.at(observed, at[o.g], o.delta)  # overlapping units are of one value
    np.add.at(observed, at, alone)
    return [int(x) for x in observed.tolist()]


def _gap_keys(same: np.ndarray, begin: np.ndarray, end: np.ndarray, value: np.ndarray, m: int, length: int,
              n_values: int) -> np.ndarray:
    """Every gap of positive length as value · (L + 1) + its length, sorted: inner gaps, the leading and trailing gap
    of each annotator who marked the value, the whole continuum for each who did not."""
    first = np.concatenate(([True], ~same))[: begin.size]
    last = np.concatenate((~same, [True]))[: begin.size]
    runs = value[first]
    unmarked = m - np.bincount(runs, minlength=n_values)
    gap_value = np.concatenate((value[1:][same], runs, value[last], np.repeat(np.arange(n_values), unmarked)))
    gap = np.concatenate(((begin[1:] - end[:-1])[same], begin[first], length - end[last], np.full(int(unmarked.sum()), length)))
    key = gap_value * (length + 1) + gap
    return np.sort(key[gap > 0])
