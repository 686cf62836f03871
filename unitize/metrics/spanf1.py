"""Span F1 between annotators, as annotation tools report it (bratiaa, brat, GATE, Prodigy).

Every pair of annotators (a, b) is scored as if one were the reference:
F1 = 2·matched / (|a| + |b|), which is symmetric (precision and recall swap),
per pair, and their mean over the pairs (with the population SD of the pairs,
as bratiaa reports it). Three ways to match, one metric each:

- ``span-f1``: a span of a matches a span of b with the same value and the same
  extent (exact match; bratiaa's instance-based agreement on characters, brat
  and Prodigy's span IAA);
- ``span-f1-overlap``: the same value and at least one unit in common, each span
  matched once (a maximum one-to-one matching, GATE's "lenient" F-measure); two
  short spans inside one long one count one match, not two;
- ``unit-f1``: units instead of spans — matched = the units both marked with the
  same value, |a| = the units a marked (bratiaa's token-based agreement on word
  units, character-level F1 on char units).

A span is a segment of ``segments/<unit>.parquet``: exact match is on unit
extents (characters for char settings, tokens for word settings, where a cut
word is snapped to the whole word). An annotator's own spans of one layer are
disjoint (overlapping ones were merged, DESIGN.md §4).

The counts (:class:`Counts`: matched spans and units, and each side's totals per
pair, document and value) add up over documents, values and layers; every row —
overall, per label, per document — is a sum of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import NamedTuple

import numpy as np

from .overlaps import overlap_pairs
from .placed import Placed
from .value import Value, nan


class Match(NamedTuple):
    """How spans are matched: the index into :attr:`Counts.matched` and the kind of size (spans 0, units 1)."""

    matched: int
    size: int


#: same value and same extent; same value and a unit in common (one-to-one); units marked alike
EXACT, OVERLAP, UNITS = Match(0, 0), Match(1, 0), Match(2, 1)


@dataclass(eq=False)
class Counts:
    """Additive span-F1 counts of every annotator pair, per document and value."""

    pairs: tuple[tuple[str, str], ...]
    docs: tuple[str, ...]
    values: tuple[str, ...]
    matched: np.ndarray  # (3, P, D, V) int64: exact matches, one-to-one overlap matches, shared units
    sizes: np.ndarray  # (2, 2, P, D, V) int64: [first, second annotator] × [spans, units]
    common: np.ndarray  # (P, D) bool: both annotators of the pair coded the document (the pair is measured there only)

    def __add__(self, other: Counts) -> Counts:
        if (other.pairs, other.docs) != (self.pairs, self.docs):
            raise ValueError("counts of different annotator pairs or documents")
        values = tuple(sorted(set(self.values) | set(other.values)))
        a, b = self.relabeled(values), other.relabeled(values)
        return Counts(self.pairs, self.docs, values, a.matched + b.matched, a.sizes + b.sizes, self.common)

    def relabeled(self, values: tuple[str, ...]) -> Counts:
        if values == self.values:
            return self
        at = [values.index(v) for v in self.values]
        matched = np.zeros(self.matched.shape[:-1] + (len(values),), np.int64)
        sizes = np.zeros(self.sizes.shape[:-1] + (len(values),), np.int64)
        matched[..., at], sizes[..., at] = self.matched, self.sizes
        return Counts(self.pairs, self.docs, values, matched, sizes, self.common)


def indices(annotators: Sequence[str], pairs: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """The pairs of ``pairs`` both of whose annotators are among ``annotators``, as indices (the lower first)."""
    at = {a: k for k, a in enumerate(annotators)}
    return sorted({(min(at[a], at[b]), max(at[a], at[b])) for a, b in pairs if a in at and b in at and a != b})


def counts(p: Placed, only: Sequence[tuple[int, int]] | None = None) -> Counts:
    """Match every pair of annotators' segments of one layer (or the pairs ``only``: annotator indices, the lower
    first; see the module docstring)."""
    m, n_docs, n_values = len(p.annotators), len(p.docs), len(p.values)
    pairs = list(combinations(range(m), 2)) if only is None else list(only)
    cell = p.doc * n_values + p.value
    width = n_docs * n_values
    size = p.end - p.begin
    by_annotator = p.annotator * width + cell
    spans = np.bincount(by_annotator, minlength=m * width).reshape(m, width)
    units = _sum(by_annotator, size, m * width).reshape(m, width)
    matched = np.zeros((3, len(pairs), width), np.int64)
    groups = p.by_annotator()  # each annotator's segments in order, gathered once for every pair
    begin, end, value, at_cell = ([x[g] for g in groups] for x in (p.begin, p.end, p.value, cell))
    for n, (i, j) in enumerate(pairs):
        ii, jj = overlap_pairs(begin[i], end[i], begin[j], end[j])
        if n_values > 1:
            same = value[i][ii] == value[j][jj]
            ii, jj = ii[same], jj[same]
        bi, ei, bj, ej = begin[i][ii], end[i][ii], begin[j][jj], end[j][jj]
        at = at_cell[i][ii]
        exact = (bi == bj) & (ei == ej)
        matched[0, n] = np.bincount(at[exact], minlength=width)
        matched[1, n] = np.bincount(at[one_to_one(ii, jj)], minlength=width)
        matched[2, n] = _sum(at, np.minimum(ei, ej) - np.maximum(bi, bj), width)
    first = [i for i, _ in pairs]
    second = [j for _, j in pairs]
    sizes = np.stack([np.stack([spans[first], units[first]]), np.stack([spans[second], units[second]])]).astype(np.int64)
    coded = p.coded
    common = coded[:, first].T & coded[:, second].T  # (P, D)
    sizes = sizes.reshape(2, 2, len(pairs), n_docs, n_values) * common[None, None, :, :, None]  # a pair only where both coded
    return Counts(
        pairs=tuple((p.annotators[i], p.annotators[j]) for i, j in pairs),
        docs=p.docs,
        values=p.values,
        matched=matched.reshape(3, len(pairs), n_docs, n_values),
        sizes=sizes,
        common=common,
    )


def _sum(keys: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Per key, the sum of its (non-negative integer) weights, exactly: by ``bincount`` where no sum can reach 2⁵³."""
    if weights.size == 0 or int(weights.max()) * weights.size < 1 << 53:
        return np.bincount(keys, weights=weights, minlength=size).astype(np.int64)
    out = np.zeros(size, np.int64)
    np.add.at(out, keys, weights.astype(np.int64))
    return out


def one_to_one(ii: np.ndarray, jj: np.ndarray) -> np.ndarray:
    """A maximum one-to-one matching of overlap edges (g of a, h of b), sorted by g then h.

    Both sides' spans are disjoint and ordered, so taking, for each span of a in
    order, the first span of b not yet taken is maximum (an exchange argument).
    An edge alone in its component is taken outright; the rest are walked.
    """
    chosen = np.zeros(ii.size, dtype=bool)
    if ii.size == 0:
        return chosen
    alone = (np.bincount(ii)[ii] == 1) & (np.bincount(jj)[jj] == 1)
    chosen[alone] = True
    taken_a: set[int] = set()
    taken_b: set[int] = set()
    for e in np.flatnonzero(~alone).tolist():
        g, h = int(ii[e]), int(jj[e])
        if g not in taken_a and h not in taken_b:
            chosen[e] = True
            taken_a.add(g)
            taken_b.add(h)
    return chosen


def f1_rows(c: Counts, match: Match, by_label: bool = False, by_doc: bool = False) -> list[Value]:
    """One row per pair and their mean (pair ``mean``); per value and per document when asked."""
    k, kind = match
    matched, first, second = c.matched[k], c.sizes[0, kind], c.sizes[1, kind]
    common = np.asarray(c.common.any(axis=1))
    out = _pair_rows(c.pairs, matched.sum(axis=(1, 2)), first.sum(axis=(1, 2)), second.sum(axis=(1, 2)), common)
    if by_label:
        for v, name in enumerate(c.values):
            rows = _pair_rows(c.pairs, matched[:, :, v].sum(axis=1), first[:, :, v].sum(axis=1), second[:, :, v].sum(axis=1), common)
            out += [_tagged(r, label=name) for r in rows]
    if by_doc:
        for d, name in enumerate(c.docs):
            rows = _pair_rows(c.pairs, matched[:, d].sum(axis=1), first[:, d].sum(axis=1), second[:, d].sum(axis=1), c.common[:, d])
            out += [_tagged(r, doc=name) for r in rows]
    return out


def _tagged(v: Value, **kw: str) -> Value:
    for key, value in kw.items():
        setattr(v, key, value)
    return v


def _pair_rows(pairs: Sequence[tuple[str, str]], matched: np.ndarray, first: np.ndarray, second: np.ndarray,
               common: np.ndarray) -> list[Value]:
    rows = []
    for (a, b), tp, x, y, shared in zip(pairs, matched.tolist(), first.tolist(), second.tolist(), common.tolist()):
        params = {"matched": tp, "a": x, "b": y}
        if not shared:
            rows.append(nan("the two annotators coded no document in common here", pair=f"{a}|{b}"))
        elif x + y == 0:
            rows.append(nan("neither annotator marked anything here", pair=f"{a}|{b}", params=params))
        else:
            rows.append(Value(2 * tp / (x + y), pair=f"{a}|{b}", params=params))
    scores = np.array([r.value for r in rows if math.isfinite(r.value)])
    if scores.size == 0:
        rows.append(nan("no pair of annotators marked anything here", pair="mean"))
    else:
        mean, sd = _mean_sd(scores)
        rows.append(Value(mean, pair="mean", params={"pairs": int(scores.size), "sd": sd}))
    return rows


def _mean_sd(scores: np.ndarray) -> tuple[float, float]:
    """``scores.mean()`` and ``scores.std()`` (the population SD), the same sums without their wrappers' cost (a cell
    has a handful of pairs)."""
    mean = np.add.reduce(scores) / scores.size
    spread = scores - mean
    return float(mean), math.sqrt(float(np.add.reduce(spread * spread)) / scores.size)
