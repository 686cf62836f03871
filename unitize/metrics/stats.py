"""Sufficient statistics of one (setting, group, layer) matrix, computed once.

Every coding coefficient of :mod:`unitize.metrics.coefficients` is a function of
a :class:`Stats`:

- ``patterns``/``units``: the distinct per-unit value-count vectors (how many
  annotators gave each value to a unit) and how many units have each. The
  coincidence matrix, the value marginals, Fleiss' and Gwet's sums and the
  bootstrap all derive from them; a unit coded by nobody is the zero pattern.
- ``by_raters``: per number of annotators *r* who coded a unit, annotator × value
  counts (Cochran's Q and the per-annotator category counts).
- ``pairs``: annotator × annotator × value × value contingency tables over the
  units both coded (Cohen's kappa, Scott's pi per pair).

The statistics of two disjoint sets of units add up: ``stats(a) + stats(b) ==
stats(a ∪ b)`` (:meth:`Stats.__add__` is that reduction). They are computed in
a few vectorised passes over the integer codes of each annotator's column (no
loop over units): one key per unit encodes its value counts in base ``A + 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

#: the second coder of :meth:`Stats.against_others`
OTHERS = "(others)"

#: keys up to this size are counted with ``np.bincount`` (above: ``np.unique``)
_BINCOUNT_KEYS = 1 << 22


@dataclass(eq=False)
class Stats:
    """Additive sufficient statistics of a unit × annotator coding (see the module docstring)."""

    domain: np.ndarray  # (V,) sorted distinct values (float64; category codes for label data)
    annotators: tuple[str, ...]  # wide data: the annotator columns; crowd data: ()
    patterns: np.ndarray  # (P, V) int64: distinct per-unit value counts, rows sorted
    units: np.ndarray  # (P,) int64: units with each pattern
    by_raters: np.ndarray  # (R+1, A, V) int64: annotator a gave value v to a unit coded by r annotators
    pairs: np.ndarray  # (A, A, V, V) int64: units coded by a and b with a giving v and b giving w

    # -- derived --

    @property
    def n_units(self) -> int:
        return int(self.units.sum())

    @property
    def raters(self) -> np.ndarray:
        """Per pattern: the number of annotators who coded the unit."""
        return self.patterns.sum(axis=1)

    @property
    def n_pairable(self) -> int:
        """Units coded by at least two annotators (the ones alpha uses)."""
        return int(self.units[self.raters >= 2].sum())

    def coincidence(self) -> np.ndarray:
        """Krippendorff's V × V coincidence matrix: Σ_u (n_uc n_uk − δ_ck n_uc) / (m_u − 1)."""
        m = self.raters
        keep = m >= 2
        c = self.patterns[keep].astype(np.float64)
        w = self.units[keep] / (m[keep] - 1)
        return (c * w[:, None]).T @ c - np.diag(w @ c)

    def annotator_counts(self) -> np.ndarray:
        """(A, V): how often each annotator gave each value."""
        return self.by_raters.sum(axis=0)

    def with_units(self, units: np.ndarray) -> Stats:
        """The same patterns with other unit counts (a bootstrap replicate); per-annotator tables dropped."""
        a, v = len(self.annotators), self.domain.size
        return Stats(self.domain, self.annotators, self.patterns, np.asarray(units, dtype=np.int64),
                     np.zeros((1, a, v), np.int64), np.zeros((a, a, v, v), np.int64))

    def trimmed(self) -> Stats:
        """The same statistics on the values some unit has (a per-layer view of a group-wide domain)."""
        used = np.flatnonzero(self.units @ self.patterns) if self.units.size else np.zeros(0, np.int64)
        if used.size == self.domain.size:
            return self
        patterns, units = _merge(self.patterns[:, used], self.units)
        return Stats(self.domain[used], self.annotators, patterns, units,
                     self.by_raters[:, :, used], self.pairs[:, :, used][:, :, :, used])

    def one_vs_rest(self, v: int) -> Stats:
        """The statistics of "value ``v`` or another value" (category-specific agreement): domain [0, 1]."""
        patterns, units = _merge(np.stack([self.patterns.sum(axis=1) - self.patterns[:, v], self.patterns[:, v]], axis=1), self.units)
        by_raters = np.stack([self.by_raters.sum(axis=2) - self.by_raters[:, :, v], self.by_raters[:, :, v]], axis=2)
        vv = self.pairs[:, :, v, v]
        v_rest = self.pairs[:, :, v, :].sum(axis=-1) - vv
        rest_v = self.pairs[:, :, :, v].sum(axis=-1) - vv
        rest = self.pairs.sum(axis=(-2, -1)) - vv - v_rest - rest_v
        pairs = np.stack([np.stack([rest, rest_v], axis=-1), np.stack([v_rest, vv], axis=-1)], axis=-2)
        return Stats(np.array([0.0, 1.0]), self.annotators, patterns, units, by_raters, pairs)

    def against_others(self, a: int) -> Stats:
        """Annotator ``a`` against the others: two coders, ``a`` and "another annotator", one unit per
        pairing of ``a``'s value with another annotator's on a unit both coded (``a``'s row of the
        pairwise tables, summed). Every coding coefficient of it is ``a``'s agreement with the rest."""
        table = self.pairs[a].sum(axis=0) - self.pairs[a, a]  # (V, V): a's value × the other's value
        v = self.domain.size
        vi, wi = np.nonzero(table)
        patterns = np.zeros((vi.size, v), np.int64)
        np.add.at(patterns, (np.arange(vi.size), vi), 1)
        np.add.at(patterns, (np.arange(vi.size), wi), 1)
        patterns, units = _merge(patterns, table[vi, wi])
        by_raters = np.zeros((3, 2, v), np.int64)
        by_raters[2] = [table.sum(axis=1), table.sum(axis=0)]
        pairs = np.zeros((2, 2, v, v), np.int64)
        pairs[0, 1], pairs[1, 0] = table, table.T
        pairs[0, 0], pairs[1, 1] = np.diag(by_raters[2, 0]), np.diag(by_raters[2, 1])
        return Stats(self.domain, (self.annotators[a], OTHERS), patterns, units, by_raters, pairs)

    def pair(self, a: int, b: int) -> Stats:
        """Annotators ``a`` and ``b`` alone — the statistics of their two columns, from the pairwise tables: the units both
        coded (their table), those only one coded (its own counts less the table's margin) and those neither coded."""
        table = self.pairs[a, b]
        v = self.domain.size
        only = [np.diag(self.pairs[a, a]) - table.sum(axis=1), np.diag(self.pairs[b, b]) - table.sum(axis=0)]
        vi, wi = np.nonzero(table)
        rows = [np.eye(v, dtype=np.int64)[vi] + np.eye(v, dtype=np.int64)[wi], np.eye(v, dtype=np.int64), np.eye(v, dtype=np.int64),
                np.zeros((1, v), np.int64)]
        neither = self.n_units - int(table.sum()) - int(only[0].sum()) - int(only[1].sum())
        patterns, units = _merge(np.concatenate(rows), np.concatenate([table[vi, wi], only[0], only[1], [neither]]))
        by_raters = np.zeros((3, 2, v), np.int64)
        by_raters[1] = only
        by_raters[2] = [table.sum(axis=1), table.sum(axis=0)]
        pairs = np.zeros((2, 2, v, v), np.int64)
        pairs[0, 1], pairs[1, 0] = table, table.T
        pairs[0, 0], pairs[1, 1] = self.pairs[a, a], self.pairs[b, b]
        return Stats(self.domain, (self.annotators[a], self.annotators[b]), patterns, units, by_raters, pairs).trimmed()

    def relabeled(self, values: np.ndarray) -> Stats:
        """The same statistics with each domain value renamed to ``values`` (distinct), domain re-sorted."""
        order = np.argsort(values)
        patterns, units = _merge(self.patterns[:, order], self.units)
        return Stats(np.asarray(values, np.float64)[order], self.annotators, patterns, units,
                     self.by_raters[:, :, order], self.pairs[:, :, order][:, :, :, order])

    # -- the reduction --

    def __add__(self, other: Stats) -> Stats:
        if self.annotators == other.annotators and self.by_raters.shape == other.by_raters.shape and np.array_equal(self.domain, other.domain):
            patterns, units = _merge(np.concatenate([self.patterns, other.patterns]), np.concatenate([self.units, other.units]))
            return Stats(self.domain, self.annotators, patterns, units, self.by_raters + other.by_raters, self.pairs + other.pairs)
        domain = np.union1d(self.domain, other.domain)
        names = list(self.annotators) + [a for a in other.annotators if a not in self.annotators]
        r = max(self.by_raters.shape[0], other.by_raters.shape[0])
        parts = [_align(s, domain, names, r) for s in (self, other)]
        patterns, units = _merge(np.concatenate([p[0] for p in parts]), np.concatenate([s.units for s in (self, other)]))
        return Stats(domain, tuple(names), patterns, units, parts[0][1] + parts[1][1], parts[0][2] + parts[1][2])

    def __radd__(self, other: object) -> Stats:
        return self if other == 0 else NotImplemented  # lets sum() start from 0

    def equals(self, other: Stats) -> bool:
        """Same statistics (the canonical form makes this array equality)."""
        return (
            np.array_equal(self.domain, other.domain)
            and self.annotators == other.annotators
            and np.array_equal(self.patterns, other.patterns)
            and np.array_equal(self.units, other.units)
            and self.by_raters.shape == other.by_raters.shape
            and np.array_equal(self.by_raters, other.by_raters)
            and np.array_equal(self.pairs, other.pairs)
        )


def _align(s: Stats, domain: np.ndarray, names: list[str], r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A Stats' arrays on a larger domain, annotator list and rater range."""
    vi = np.searchsorted(domain, s.domain)
    ai = np.array([names.index(a) for a in s.annotators], dtype=np.int64)
    v, a = domain.size, len(names)
    patterns = np.zeros((s.patterns.shape[0], v), np.int64)
    patterns[:, vi] = s.patterns
    by_raters = np.zeros((r, a, v), np.int64)
    by_raters[np.ix_(np.arange(s.by_raters.shape[0]), ai, vi)] = s.by_raters
    pairs = np.zeros((a, a, v, v), np.int64)
    pairs[np.ix_(ai, ai, vi, vi)] = s.pairs
    return patterns, by_raters, pairs


def _merge(patterns: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonical form: distinct pattern rows (sorted), units summed, empty ones dropped."""
    if patterns.shape[0] == 0:
        return patterns.reshape(0, patterns.shape[1]).astype(np.int64), np.zeros(0, np.int64)
    base = int(patterns.max()) + 1 if patterns.size else 1
    v = patterns.shape[1]
    if patterns.min(initial=0) >= 0 and v * np.log2(max(base, 2)) < 62:
        # each row as one integer, the first column most significant: sorting the keys sorts the rows
        weights = base ** np.arange(v - 1, -1, -1, dtype=np.int64)
        _, first, inverse = np.unique(patterns.astype(np.int64) @ weights, return_index=True, return_inverse=True)
        distinct = patterns[first]
    else:
        distinct, inverse = np.unique(patterns, axis=0, return_inverse=True)
    total = np.bincount(inverse.reshape(-1), weights=units, minlength=distinct.shape[0]).astype(np.int64)
    keep = total > 0
    return distinct[keep].astype(np.int64), total[keep]


def _distinct_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a units × values count matrix and how many units have each (canonical form).

    Columns are packed into exact mixed-radix int64 keys a few at a time (each column's own
    maximum is its radix) and the keys combined by ranking, instead of sorting whole rows.
    """
    n, v = counts.shape
    if n == 0:
        return _merge(counts, np.zeros(0, np.int64))
    rank = np.zeros(n, np.int64)
    size = 1
    radix = counts.max(axis=0).astype(np.int64) + 1
    start = 0
    while start < v:
        key = rank.copy()
        width = size
        stop = start
        while stop < v and np.log2(width) + np.log2(radix[stop]) < 62:
            key = key * radix[stop] + counts[:, stop]
            width *= int(radix[stop])
            stop += 1
        if stop == start:  # a single column too wide to combine with the rank so far
            key = np.unique(np.stack([rank, counts[:, stop]], axis=1), axis=0, return_inverse=True)[1].reshape(-1)
            stop += 1
        rank = np.unique(key, return_inverse=True)[1].reshape(-1)
        size = int(rank.max()) + 1
        start = stop
    first = np.full(size, -1, np.int64)
    first[rank[::-1]] = np.arange(n - 1, -1, -1)  # the first unit of each distinct row
    return _merge(counts[first].astype(np.int64), np.bincount(rank, minlength=size))


def _patterns_from_keys(key: np.ndarray, base: int, v: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct base-``base`` keys as value-count rows, with their unit counts."""
    top = base ** v if v else 1
    if top <= max(_BINCOUNT_KEYS, 4 * key.size):
        counts = np.bincount(key, minlength=top)
        distinct = np.flatnonzero(counts)
        units = counts[distinct]
    else:
        distinct, units = np.unique(key, return_counts=True)
    digits = (distinct[:, None] // (base ** np.arange(v, dtype=np.int64))[None, :]) % base
    return _merge(digits.astype(np.int64), units.astype(np.int64))


#: joint profiles (each annotator's code, missing included) are counted directly up to this many
PROFILES = 1 << 20


def profile_keys(columns: Sequence[np.ndarray], v: int) -> np.ndarray:
    """Per unit, the joint profile Σ_a (code_a + 1)·(V + 1)^a (0 = nobody coded it)."""
    n = columns[0].size if columns else 0
    dtype: type[np.signedinteger[Any]] = np.int32 if (v + 1) ** len(columns) < 2**31 else np.int64
    key: np.ndarray = np.zeros(n, dtype)
    for a, col in enumerate(columns):
        key += (col.astype(dtype) + 1) * dtype((v + 1) ** a)
    return key


def from_profiles(counts: np.ndarray, domain: np.ndarray, annotators: Sequence[str]) -> Stats:
    """Statistics from a histogram of joint profiles (see :func:`profile_keys`): every table is a
    sum over the few distinct profiles, not over units."""
    a, v = len(annotators), int(domain.size)
    seen = np.flatnonzero(counts)
    units = counts[seen].astype(np.int64)
    codes = (seen[:, None] // ((v + 1) ** np.arange(a, dtype=np.int64))[None, :]) % (v + 1) - 1  # (P, A), −1 missing
    present = codes >= 0
    m = present.sum(axis=1)
    onehot = (codes[:, :, None] == np.arange(v)[None, None, :])  # (P, A, V)
    patterns, pattern_units = _merge(onehot.sum(axis=1).astype(np.int64), units)
    by_raters = np.zeros((a + 1, a, v), np.int64)
    np.add.at(by_raters, m, onehot * units[:, None, None])
    weighted = onehot * units[:, None, None]
    pairs = np.einsum("pav,pbw->abvw", weighted, onehot.astype(np.int64))
    return Stats(np.asarray(domain, np.float64), tuple(annotators), patterns, pattern_units, by_raters, pairs)


def all_zero(n: int, domain: np.ndarray, annotators: Sequence[str], code: int = 0) -> Stats:
    """The statistics of ``n`` units on which every annotator gave the value of ``code`` (0: the
    first): a sparse layout's implicit units, counted without rows. ``from_codes(rows) +
    all_zero(n, …)`` is ``from_codes`` of the rows with those ``n`` units added (the reduction)."""
    a, v = len(annotators), int(domain.size)
    patterns = np.zeros((1, v), np.int64)
    patterns[0, code] = a
    by_raters = np.zeros((a + 1, a, v), np.int64)
    by_raters[a, :, code] = n
    pairs = np.zeros((a, a, v, v), np.int64)
    pairs[:, :, code, code] = n
    return Stats(np.asarray(domain, np.float64), tuple(annotators), *_merge(patterns, np.array([n], np.int64)), by_raters, pairs)


def from_codes(columns: Sequence[np.ndarray], domain: np.ndarray, annotators: Sequence[str]) -> Stats:
    """Statistics of a wide coding: one integer array per annotator, codes into ``domain``, −1 = missing."""
    a, v = len(columns), int(domain.size)
    if (v + 1) ** a <= PROFILES:
        return from_profiles(np.bincount(profile_keys(columns, v), minlength=(v + 1) ** a), domain, annotators)
    n = columns[0].size if columns else 0
    base = a + 1
    m = np.zeros(n, np.int64)
    for col in columns:
        m += col >= 0
    if v and v * np.log2(base) < 62:
        power = np.append(base ** np.arange(v, dtype=np.int64), 0)  # index −1 (missing) adds 0
        key = np.zeros(n, np.int64)
        for col in columns:
            key += power[col]
        patterns, units = _patterns_from_keys(key, base, v)
    else:
        counts = np.zeros((n, v), np.int64)
        rows = np.arange(n)
        for col in columns:
            ok = col >= 0
            np.add.at(counts, (rows[ok], col[ok]), 1)
        patterns, units = _distinct_rows(counts)
    by_raters = np.zeros((base, a, v), np.int64)
    pairs = np.zeros((a, a, v, v), np.int64)
    for i, col in enumerate(columns):
        ok = col >= 0
        by_raters[:, i, :] = np.bincount(m[ok] * v + col[ok].astype(np.int64), minlength=base * v).reshape(base, v)
        pairs[i, i] = np.diag(by_raters[:, i, :].sum(axis=0))
        for j in range(i):
            both = ok & (columns[j] >= 0)
            table = np.bincount(col[both].astype(np.int64) * v + columns[j][both], minlength=v * v).reshape(v, v)
            pairs[i, j], pairs[j, i] = table, table.T
    return Stats(np.asarray(domain, np.float64), tuple(annotators), patterns, units, by_raters, pairs)


def from_counts(counts: np.ndarray, domain: np.ndarray) -> Stats:
    """Statistics of crowd data: units × values counts (who coded is not known, so no per-annotator tables)."""
    counts = np.asarray(counts, dtype=np.int64)
    v = int(domain.size)
    base = int(counts.sum(axis=1).max()) + 1 if counts.size else 1
    if v and v * np.log2(max(base, 2)) < 62:
        key = counts @ (base ** np.arange(v, dtype=np.int64))
        patterns, units = _patterns_from_keys(key, base, v)
    else:
        patterns, units = _distinct_rows(counts.reshape(-1, v))
    return Stats(np.asarray(domain, np.float64), (), patterns, units,
                 np.zeros((base, 0, v), np.int64), np.zeros((0, 0, v, v), np.int64))


def codes(values: np.ndarray, domain: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """A float matrix (NaN = missing) as per-column integer codes into its sorted domain."""
    from .backends import domain as distinct

    dom = distinct(values) if domain is None else domain
    dtype = np.int8 if dom.size < 127 else np.int32
    out = []
    for k in range(values.shape[1]):
        col = values[:, k]
        code = np.full(col.size, -1, dtype)
        ok = ~np.isnan(col)
        code[ok] = np.searchsorted(dom, col[ok])
        out.append(code)
    return out, dom


class CodedMatrix(Protocol):
    """What :func:`from_matrix` reads of a matrix (:class:`unitize.dataset.Matrix` has it)."""

    @property
    def values(self) -> np.ndarray: ...
    @property
    def annotators(self) -> Sequence[str]: ...
    def value_counts(self) -> tuple[np.ndarray, np.ndarray] | None: ...


def from_matrix(m: CodedMatrix) -> Stats:
    """Statistics of a :class:`~unitize.dataset.Matrix` (wide values or crowd value counts)."""
    crowd = m.value_counts()
    if crowd is not None:
        return from_counts(*crowd)
    columns, dom = codes(m.values)
    return from_codes(columns, dom, m.annotators)
