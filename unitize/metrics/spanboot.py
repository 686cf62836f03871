"""Intervals of the segment measures: documents resampled with replacement, or left out one at a time.

A segment measure's data are documents, not independent units (a unit's neighbours share its segments),
so a bootstrap replicate draws the cell's D documents with replacement (seeded; the same draws for every
segment metric of the cell) and measures the drawn documents laid end to end; the jackknife (``auto``
below :data:`SMALL_DOCUMENTS` documents, or ``--ci-method jackknife``) leaves each out in turn, in order.
Each measure is recomputed from per-document pieces computed once, never from the segments: span F1's
matched, |a| and |b| per pair, document and value (:class:`~unitize.metrics.spanf1.Counts`) and the uα
family's pair counts, Σ l² and Σ P² (:class:`~unitize.metrics.unitizing.Statistics`) add up over documents,
so a replicate is the per-document pieces weighted by how often each document was drawn — exact. Alpha-U's
observed Σ δ and length histograms add up too, but its expected disagreement counts placements in the
*continuum's* gaps, and an annotator's last gap in one document runs on into the next: those edge gaps
enter through their number and total length, plus a correction for the few shorter than the longest unit
(a table of document pairs: :class:`~unitize.metrics.alphau.Stretch`'s ``trail`` and ``lead``); only an
annotator with units in some documents and not others is followed gap by gap (:class:`_Category`). A
replicate is what :func:`~unitize.metrics.alphau.in_order` of the drawn documents gives (a tested identity).

With fewer than two documents there is no interval (the row says why), nor per document. Cost: a replicate
is O(documents × values²) (uα), O(pairs × documents) (F1), O(documents²) plus a few short gaps (alpha-U).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Literal

import numpy as np

from .alphau import Stretch
from .bootstrap import Options, with_jackknife, with_percentiles
from .spanf1 import Counts, Match
from .unitizing import Statistics, Variant
from .value import Value

METHOD = "percentile bootstrap, documents resampled"
JACKKNIFE = "jackknife, one document left out"
#: ``auto`` takes the jackknife below this many documents (at 10 it covers 93–95 %, the bootstrap 91 %: docs/agree.md)
SMALL_DOCUMENTS = 30
#: elements of one of alpha-U's (replicates × documents × annotators) gap arrays evaluated at once
_CELLS = 2_000_000
#: largest (documents × documents × annotators) table of the gaps where two documents meet
_PAIR_TABLE = 4_000_000
#: draws (replicates × documents) kept for the next cell up to this size
_KEEP_DRAWS = 1_000_000
#: multiply-adds of a matrix product below which OpenBLAS stays on one thread (see _product)
_SINGLE_THREAD = 1 << 18


def draws(opts: Options, n_docs: int) -> np.ndarray:
    """(replicates, drawn): each replicate's documents in drawn order (``opts.scale`` × the documents); jackknife: all but one."""
    if opts.draw == "jackknife":
        return np.array([np.delete(np.arange(n_docs), d) for d in range(n_docs)], dtype=np.int64).reshape(n_docs, n_docs - 1)
    return np.random.default_rng(opts.seed).integers(0, n_docs, size=(opts.replicates, opts.drawn(n_docs)))


def method(opts: Options, n_docs: int) -> str:
    """``jackknife`` (asked, or ``auto`` below :data:`SMALL_DOCUMENTS` documents), else ``bootstrap`` (percentile)."""
    asked = opts.method == "jackknife" or (opts.method == "auto" and n_docs < SMALL_DOCUMENTS)
    return "jackknife" if asked and n_docs >= 2 and opts.scale == 1.0 else "bootstrap"


def resampling(opts: Options, n_docs: int) -> Options:
    """The options the replicates are drawn with: the jackknife's (one per document left out), or ``opts``."""
    return replace(opts, draw="jackknife", replicates=n_docs) if method(opts, n_docs) == "jackknife" else opts


def weights(idx: np.ndarray, n_docs: int) -> np.ndarray:
    """(replicates, documents): how often each document (or instance) was drawn, ``idx`` holding the draws."""
    b = idx.shape[0]
    return np.bincount((idx + n_docs * np.arange(b)[:, None]).ravel(), minlength=b * n_docs).reshape(b, n_docs).astype(np.float64)


def attach(values: list[Value], reps: dict[tuple[str | None, str | None], np.ndarray], opts: Options, n_docs: int) -> list[Value]:
    """The rows with their intervals: ``reps`` maps (pair, label) to the replicates of that row."""
    out = []
    for v in values:
        key = (v.pair, v.label)
        if v.doc is not None or not np.isfinite(v.value) or key not in reps:
            out.append(v)
        elif n_docs < 2:
            entry = {"level": opts.level, "replicates": opts.replicates, "seed": opts.seed, "method": METHOD, "documents": n_docs,
                     "defined": 0, "note": "one document: resampling documents gives no interval"}
            out.append(replace(v, params={**v.params, "ci": entry}))
        elif method(opts, n_docs) == "jackknife":
            out.append(with_jackknife(v, reps[key], np.ones(n_docs), opts, JACKKNIFE, documents=n_docs))
        else:
            out.append(with_percentiles(v, reps[key], opts, METHOD, documents=n_docs))
    return out


# --- span F1 ------------------------------------------------------------------------------------


def f1_replicates(c: Counts, match: Match, w: np.ndarray, by_label: bool) -> dict[tuple[str | None, str | None], np.ndarray]:
    """Per (pair, label) row of :func:`~unitize.metrics.spanf1.f1_rows`: F1 on every replicate."""
    k, kind = match
    tables = c.matched[k], c.sizes[0, kind], c.sizes[1, kind]  # (P, D, V) each
    names = [f"{a}|{b}" for a, b in c.pairs]
    out: dict[tuple[str | None, str | None], np.ndarray] = {}
    labels: list[tuple[str | None, slice | int]] = [(None, slice(None))]
    if by_label:
        labels += [(name, v) for v, name in enumerate(c.values)]
    for label, at in labels:
        tp, a, b = (np.einsum("bd,pd->bp", w, t[:, :, at].sum(axis=2) if isinstance(at, slice) else t[:, :, at]) for t in tables)
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(a + b > 0, 2 * tp / np.where(a + b > 0, a + b, 1), np.nan)
        for p, name in enumerate(names):
            out[(name, label)] = f1[:, p]
        finite = np.isfinite(f1)
        with np.errstate(invalid="ignore"):
            out[("mean", label)] = np.where(finite.any(axis=1), np.nansum(f1, axis=1) / np.maximum(finite.sum(axis=1), 1), np.nan)
    return out


# --- the uα family ------------------------------------------------------------------------------


def unitizing_replicates(variant: Variant, per_doc: Sequence[Statistics], w: np.ndarray) -> dict[tuple[str | None, str | None], np.ndarray]:
    """uα, |uα, cuα or (k)uα per value on every replicate, from the documents' statistics weighted."""
    values = tuple(sorted(set().union(*(s.values for s in per_doc))))
    docs = [s.relabeled(values) for s in per_doc]
    ell = np.einsum("bd,dij->bij", w, np.stack([s.coincidences for s in docs]))
    squares = w @ np.stack([s.squares for s in docs]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant in (Variant.U, Variant.BINARY):
            eps = _expected(ell, squares)
            marked = squares[:, 1:].sum(axis=1) > 0
            if variant is Variant.U:
                d_o, d_e = _off_diagonal(ell), _off_diagonal(eps)
            else:
                d_o, d_e = 2 * ell[:, 0, 1:].sum(axis=1), 2 * eps[:, 0, 1:].sum(axis=1)
            return {(None, None): np.where(marked & (d_e > 0), 1 - d_o / np.where(d_e > 0, d_e, 1), np.nan)}
        pairable = w @ np.stack([s.pairable for s in docs])
        star = ell[:, 1:, 1:]
        eps_star = _expected(star, pairable[:, 1:])
        if variant is Variant.CU:
            d_o, d_e = _off_diagonal(star), _off_diagonal(eps_star)
            ok = (star.sum(axis=(1, 2)) > 0) & (d_e > 0)
            return {(None, None): np.where(ok, 1 - d_o / np.where(ok, d_e, 1), np.nan)}
        l_k, e_k = star.sum(axis=1), eps_star.sum(axis=1)  # (B, V): the columns' sums
        l_kk, e_kk = np.diagonal(star, axis1=1, axis2=2), np.diagonal(eps_star, axis1=1, axis2=2)
        ok = (l_k > 0) & (e_k - e_kk > 0)
        ku = np.where(ok, 1 - (e_k / np.where(ok, l_k, 1)) * (l_k - l_kk) / np.where(ok, e_k - e_kk, 1), np.nan)
        return {(None, name): ku[:, k] for k, name in enumerate(values)}


def _expected(ell: np.ndarray, self_pairs: np.ndarray) -> np.ndarray:
    """Batched :func:`unitize.metrics.unitizing._expected`: (B, W, W) coincidences, (B, W) self-pairings."""
    total = ell.sum(axis=(1, 2))
    margin = ell.sum(axis=2)
    denominator = total * total - self_pairs.sum(axis=1)
    eps = np.einsum("bi,bj->bij", margin, margin)
    eps[:, np.arange(ell.shape[1]), np.arange(ell.shape[1])] -= self_pairs
    scale = np.where(denominator > 0, total / np.where(denominator > 0, denominator, 1), 0.0)
    return eps * scale[:, None, None]


def _off_diagonal(x: np.ndarray) -> np.ndarray:
    return x.sum(axis=(1, 2)) - np.trace(x, axis1=1, axis2=2)


# --- alpha-U (1995/2004) ------------------------------------------------------------------------


class _Category:
    """One category's per-document pieces of alpha-U as dense arrays (documents in continuum order).

    A replicate's expected disagreement needs, besides sums that add up over the drawn documents,
    Σ over the continuum's gaps g of F(g) = Σ_l W[l]·(g − l + 1)₊, W[l] the drawn units' Σ l² of
    length l. Each document's inner gaps give a term bilinear in the draw counts (``cross``). The
    gaps at the documents' edges are the ones that depend on the drawn order. Since
    (x)₊ = x + (−x)₊, F(g) = (g + 1)·ΣW − Σ l·W + C(g) with C(g) = Σ_{l > g+1} W[l]·(l − g − 1), which
    is 0 once g + 1 reaches the longest unit. So the edge gaps enter through their number and total
    length — both sums over the drawn documents for an annotator with a unit in every document
    (the gap where document p meets q is ``trail[p] + lead[q]``, and every lead and trail is used
    once) — plus C of the few gaps shorter than the longest unit, found in a (D, D) table of the
    document pairs. An annotator with no unit has one gap, the continuum. Only an annotator with
    units in some documents but not others needs the drawn order's runs of unmarked documents
    (:meth:`_mixed`, evaluated gap by gap).

    Everything here is exact integer arithmetic in float64 while the sums stay below 2⁵³, and then
    equals :func:`~unitize.metrics.alphau.in_order` of the drawn documents to the last bit.
    """

    def __init__(self, docs: Sequence[Stretch]):
        self.m = int(docs[0].lead.size)
        n_docs = len(docs)
        self.length = np.array([s.length for s in docs], np.float64)
        self.observed = np.array([s.observed for s in docs], np.float64)
        self.ulen, self.units = _dense([s.units for s in docs])
        self.lead = np.stack([s.lead for s in docs]).astype(np.float64)  # (D, m)
        self.trail = np.stack([s.trail for s in docs]).astype(np.float64)
        self.marked = np.stack([s.marked for s in docs])
        ul = self.ul = self.ulen.astype(np.float64)
        self.weighted = self.units * (ul * ul)  # (D, Ku): Σ l² per unit length and document
        chosen = _product(self.units, ul * (ul - 1) * (2 * ul - 1) / 3)  # (D,): Σ (2l³ − 3l² + l)/3
        pairs = _product(self.units, ul * (ul - 1))  # (D,): Σ l(l − 1)
        # each document's own inner gaps: Σ over gaps ≥ l of (gap − l + 1), per unit length (D, Ku); the
        # inner-gap term of a replicate is bilinear in the draw counts, Σ_dd' w_d w_d' cross[d, d']
        inner = _inner_fitting([s.gaps for s in docs], self.ulen)
        self.cross = _product(self.weighted, inner.T) if n_docs <= 2000 else None
        self.inner = inner
        every, self.none = self.marked.all(axis=0), ~self.marked.any(axis=0)
        self.full = np.flatnonzero(every)  # annotators with a unit in every document
        self.mixed = np.flatnonzero(~every & ~self.none)
        lead, trail = self.lead[:, self.full], self.trail[:, self.full]
        edges = (lead + trail).sum(axis=1)  # (D,): every edge gap of the full annotators uses each once
        # what adds up over the drawn documents, as the columns of one (D, 8) matrix (integers all)
        self.sums = np.stack([self.length, self.observed, self.units.sum(axis=1), chosen, pairs,
                              self.weighted.sum(axis=1), _product(self.weighted, ul), edges], axis=1)
        longest = ul[-1] if ul.size else 0.0
        # (D,) each; asarray: NumPy's stubs type a reduction along an axis as "a scalar or an array"
        self.short_first, self.short_last = np.asarray((lead + 1 < longest).any(axis=1)), np.asarray((trail + 1 < longest).any(axis=1))
        self.pair_short: np.ndarray | Literal[True] | None = None  # True: look at every join
        if n_docs > 1 and self.full.size and (trail.min(axis=0) + lead.min(axis=0) + 1 < longest).any():
            if n_docs * n_docs * self.full.size <= _PAIR_TABLE:  # which document pairs meet in a short gap
                self.pair_short = ((trail[:, None, :] + lead[None, :, :] + 1) < longest).any(axis=2).ravel()
            else:
                self.pair_short = True  # look at every join

    def disagreements(self, idx: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(D_o, D_e) of the drawn documents laid end to end in drawn order, per replicate (``w``:
        :func:`weights` of ``idx``, when the caller has them)."""
        m, n_docs = self.m, self.length.size
        w = weights(idx, n_docs) if w is None else w
        length, observed, n_c, chosen, pairs, total, total_l, edges = _product(w, self.sums).T
        observed = 2 * observed / (m * (m - 1) * length * length)
        inner = (_product(w, self.cross) * w).sum(axis=1) if self.cross is not None else (_product(w, self.weighted) * _product(w, self.inner)).sum(axis=1)
        numerator = (n_c - 1) * chosen + inner + self._edges(idx, w, length, total, total_l, edges)
        denominator = m * length * (m * length - 1) - pairs
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = np.where(numerator != 0, 2 * numerator / (length * denominator), 0.0)
        return observed, expected

    def _edges(self, idx: np.ndarray, w: np.ndarray, length: np.ndarray, total: np.ndarray, total_l: np.ndarray,
               edges: np.ndarray) -> np.ndarray:
        """(B,): Σ F over every gap that touches a document's edge, in drawn order (class docstring);
        ``total``, ``total_l``: Σ W and Σ l·W of the drawn units, ``edges``: the full annotators'
        leading and trailing gaps summed over the drawn documents."""
        b, n_docs = idx.shape
        if self.ul.size == 0:
            return np.zeros(b)
        n_full, n_none = self.full.size, int(self.none.sum())
        # the full annotators' D + 1 edge gaps each, and the unmarked annotators' one gap, the continuum
        summed = edges + n_full * (n_docs + 1) + n_none * (length + 1)
        out = total * summed - total_l * (n_full * (n_docs + 1) + n_none)
        if self.short_first.any() or self.short_last.any() or self.pair_short is not None:
            out += self._short(idx, w)
        if self.mixed.size:
            out += self._mixed(idx, length, _product(w, self.weighted))
        return out

    def _short(self, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
        """(B,): Σ C(g) over the full annotators' edge gaps shorter than the longest unit (only the
        replicates that have one are looked at)."""
        b, n_docs = idx.shape
        lead, trail = self.lead[:, self.full], self.trail[:, self.full]
        rows, gaps = [], []
        for short, at, side in ((self.short_first, idx[:, 0], lead), (self.short_last, idx[:, -1], trail)):
            hit = np.flatnonzero(short[at])
            rows.append(hit)
            gaps.append(side[at[hit]])
        if self.pair_short is not None and n_docs > 1:
            p, q = idx[:, :-1], idx[:, 1:]
            size = self.length.size  # the pair table is over the cell's documents (a replicate may draw more: plan)
            r, t = np.nonzero(self.pair_short[p * size + q]) if self.pair_short is not True else np.nonzero(np.ones(p.shape, bool))
            rows.append(r)
            gaps.append(trail[p[r, t]] + lead[q[r, t]])
        r = np.concatenate([np.repeat(x, self.full.size) for x in rows])
        g = np.concatenate([x.ravel() for x in gaps])
        these, r = np.unique(r, return_inverse=True)
        weighted = _product(w[these], self.weighted)  # (R, Ku): the drawn units' Σ l² per length, of those replicates
        zero = np.zeros((these.size, 1))
        beyond = np.concatenate([np.cumsum(weighted[:, ::-1], axis=1)[:, ::-1], zero], axis=1).ravel()  # Σ_{j ≥ k} W
        beyond_l = np.concatenate([np.cumsum((weighted * self.ul)[:, ::-1], axis=1)[:, ::-1], zero], axis=1).ravel()
        k = np.searchsorted(self.ul, g + 1, side="right") + r.reshape(-1) * (self.ul.size + 1)  # the unit lengths > g + 1
        out = np.zeros(b)
        out[these] = np.bincount(r.reshape(-1), weights=beyond_l[k] - (g + 1) * beyond[k], minlength=these.size)
        return out

    def _mixed(self, idx: np.ndarray, length: np.ndarray, weighted: np.ndarray) -> np.ndarray:
        """(B,): Σ F over the edge gaps of the annotators with units in some documents only: a marked
        document's leading gap runs back over the unmarked documents drawn before it to the trailing
        gap of the previous marked one; evaluated gap by gap."""
        b, n_docs = idx.shape
        rows = np.arange(b)[:, None]
        steps = np.arange(n_docs)[None, :]
        size = self.length[idx]  # (B, D)
        zero = np.zeros((b, 1))
        k = self.ul.size
        up_to = np.concatenate([zero, np.cumsum(weighted, axis=1)], axis=1).ravel()  # (B·(Ku + 1)): Σ_{l ≤} W
        up_to_l = np.concatenate([zero, np.cumsum(weighted * self.ul, axis=1)], axis=1).ravel()
        out = np.zeros(b)
        for a in self.mixed:
            marked = self.marked[:, a][idx]
            lead, trail = self.lead[:, a][idx], self.trail[:, a][idx]
            blank = np.cumsum(np.where(marked, 0.0, size), axis=1)  # unmarked length up to and including t
            before_blank = blank - np.where(marked, 0.0, size)  # ... up to t, excluded
            last = np.maximum.accumulate(np.where(marked, steps, -1), axis=1)
            before = np.concatenate([np.full((b, 1), -1), last[:, :-1]], axis=1)  # the previous marked document
            at = np.maximum(before, 0)
            carried = before_blank - np.where(before >= 0, blank[rows, at] - trail[rows, at], 0.0)
            gaps = np.where(marked, lead + carried, 0.0)
            end = np.maximum(last[:, -1], 0)
            tail = trail[rows[:, 0], end] + blank[:, -1] - blank[rows[:, 0], end]
            tail = np.where(last[:, -1] >= 0, tail, length)
            gaps = np.concatenate([gaps, tail[:, None]], axis=1)
            flat = np.searchsorted(self.ul, gaps, side="right") + rows * (k + 1)  # unit lengths ≤ g
            out += ((gaps + 1) * up_to[flat] - up_to_l[flat]).sum(axis=1)
        return out


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in row blocks of fewer than 2¹⁸ multiply-adds each: OpenBLAS runs a larger product on
    several threads, whose start and spinning cost more CPU time than these products themselves
    (measured: a 1000 × 197 by 197 × 197 product, 7.1 ms CPU at once, 2.7 ms in blocks)."""
    rows = max(1, _SINGLE_THREAD // max(1, b.size))
    if a.shape[0] <= rows:
        return a @ b
    return np.concatenate([a[i:i + rows] @ b for i in range(0, a.shape[0], rows)])


def _dense(hists: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Length histograms of the documents as one (D, K) count matrix over their distinct lengths."""
    lengths = np.concatenate([h[0] for h in hists] + [np.zeros(0, np.int64)])
    counts = np.concatenate([h[1] for h in hists] + [np.zeros(0, np.int64)])
    doc = np.repeat(np.arange(len(hists)), [h[0].size for h in hists])
    distinct, at = np.unique(lengths, return_inverse=True)
    flat = np.bincount(doc * distinct.size + at.reshape(-1), weights=counts, minlength=len(hists) * distinct.size)
    return distinct, flat.reshape(len(hists), distinct.size)


def _inner_fitting(hists: Sequence[tuple[np.ndarray, np.ndarray]], ulen: np.ndarray) -> np.ndarray:
    """(D, Ku): per document, Σ over its gaps ≥ l of (gap − l + 1) for every unit length l, from its
    gap histogram (sorted lengths): one searchsorted over all documents' gaps, offset per document."""
    n_docs = len(hists)
    if ulen.size == 0:
        return np.zeros((n_docs, 0))
    lengths = np.concatenate([h[0] for h in hists] + [np.zeros(0, np.int64)]).astype(np.float64)
    counts = np.concatenate([h[1] for h in hists] + [np.zeros(0, np.int64)]).astype(np.float64)
    sizes = np.array([h[0].size for h in hists], np.int64)
    ends = np.cumsum(sizes)
    span = float(max(lengths.max() if lengths.size else 0, ulen.max())) + 2.0
    doc = np.repeat(np.arange(n_docs), sizes)
    at_least = np.concatenate([np.cumsum(counts[::-1])[::-1], [0.0]])  # from an entry to the very end
    total = np.concatenate([np.cumsum((counts * lengths)[::-1])[::-1], [0.0]])
    query = (np.arange(n_docs)[:, None] * span + ulen[None, :]).ravel()
    pos = np.searchsorted(doc * span + lengths, query, side="left").reshape(n_docs, ulen.size)
    end = ends[:, None]
    n = at_least[pos] - at_least[end]
    return (total[pos] - total[end]) - (ulen[None, :] - 1) * n


@lru_cache(maxsize=4)
def _drawn(opts: Options, n_docs: int, chunk: int) -> tuple[tuple[int, np.ndarray, np.ndarray], ...]:
    idx = draws(opts, n_docs)
    return tuple((start, idx[start:start + chunk], weights(idx[start:start + chunk], n_docs))
                 for start in range(0, opts.replicates, chunk))


def _chunks(opts: Options, n_docs: int, chunk: int) -> tuple[tuple[int, np.ndarray, np.ndarray], ...]:
    """(first replicate, drawn documents, draw counts) of each chunk of replicates; kept for the next
    cell while small (every cell of a run with the same number of documents draws the same)."""
    if opts.replicates * n_docs <= _KEEP_DRAWS:
        return _drawn(opts, n_docs, chunk)
    return _drawn.__wrapped__(opts, n_docs, chunk)


def alpha_u_replicates(per_category: Mapping[str, Sequence[Stretch]], opts: Options, labels: dict[str, str] | None = None,
                       cache: dict | None = None, key: tuple = ()) -> dict[tuple[str | None, str | None], np.ndarray]:
    """Alpha-U on every replicate (row key (None, None)) and, with ``labels`` (category -> row label),
    each category's alpha-U; replicates in chunks so that the gap arrays stay under ``_CELLS`` elements. A category's
    (D_o, D_e) replicates are kept in ``cache`` under ``key + (category,)`` (the key must name
    everything its stretches depend on): the layers-together row reuses the layers' own."""
    n_docs = len(next(iter(per_category.values())))
    d_o: dict[str, np.ndarray] = {}
    d_e: dict[str, np.ndarray] = {}
    cache = {} if cache is None else cache
    for c, docs in per_category.items():
        k = (*key, c, opts)
        if k not in cache:
            cat, o, e = _Category(docs), np.zeros(opts.replicates), np.zeros(opts.replicates)
            for start, part, w in _chunks(opts, n_docs, max(1, _CELLS // (n_docs * cat.m))):
                o[start:start + part.shape[0]], e[start:start + part.shape[0]] = cat.disagreements(part, w)
            cache[k] = (o, e)
        d_o[c], d_e[c] = cache[k]

    def alpha(o: np.ndarray, e: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(e > 0, 1 - o / np.where(e > 0, e, 1), np.nan)

    nothing = np.zeros(opts.replicates)  # sum's start, so that a sum of arrays is an array
    out: dict[tuple[str | None, str | None], np.ndarray] = {(None, None): alpha(sum(d_o.values(), nothing), sum(d_e.values(), nothing))}
    for c, label in (labels or {}).items():
        out[(None, label)] = alpha(d_o[c], d_e[c])
    return out
