"""Bootstrap confidence intervals of the segment measures: documents resampled with replacement.

A segment measure's data are not independent units but documents (a unit's neighbours share its
segments), so a replicate draws the cell's D documents with replacement — D draws, seeded
(``--seed``), the same draws for every segment metric of the cell — and measures the continuum of
the drawn documents laid end to end. Each measure is recomputed from per-document pieces computed
once, never from the segments:

- **span F1** (``span-f1``, ``span-f1-overlap``, ``unit-f1``): matched, |a| and |b| per pair,
  document and value (:class:`~unitize.agree.spanf1.Counts`) add up over documents, so a replicate
  is the per-document counts weighted by how often each document was drawn — exact.
- **the uα family** (``u-alpha``, ``|u-alpha``, ``cu-alpha``, ``ku-alpha``): the pair counts, Σ l² and
  Σ P² per document (:class:`~unitize.agree.unitizing.Statistics`) add up the same way (a unit never
  crosses a document, so its pairable length is the document's business) — exact.
- **alpha-U** (1995/2004): the observed Σ δ and the unit and inner-gap length histograms add up, but
  its expected disagreement counts every placement of a unit in the *continuum's* gaps, and the gap
  after an annotator's last unit in one document runs on into the next document. That part does not
  decompose: per replicate the gaps at the documents' joins are rebuilt from each document's first
  and last gap per annotator (:class:`~unitize.agree.alphau.Stretch`: ``lead``, ``trail``,
  ``marked``) in the drawn order, and the expected disagreement is recomputed from the weighted
  histograms plus those gaps — what :func:`~unitize.agree.alphau.in_order` of the drawn documents
  gives (a tested identity), vectorised over the replicates.

With fewer than two documents there is nothing to resample: the row records why and has no
interval. Rows per document have none either. Cost: a replicate is O(documents × values²) (uα),
O(pairs × documents) (F1), O(documents × annotators) plus a sort (alpha-U), never the segments.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from .alphau import Stretch
from .backends import Value
from .bootstrap import Options, with_percentiles
from .spanf1 import MEASURES, Counts
from .unitizing import Statistics

METHOD = "percentile bootstrap, documents resampled"
#: elements of one of alpha-U's (replicates × documents × annotators) gap arrays evaluated at once
_CELLS = 2_000_000


def draws(opts: Options, n_docs: int) -> np.ndarray:
    """(replicates, documents): the drawn document indices of every replicate, in drawn order."""
    return np.random.default_rng(opts.seed).integers(0, n_docs, size=(opts.replicates, n_docs))


def weights(idx: np.ndarray, n_docs: int) -> np.ndarray:
    """(replicates, documents): how often each document was drawn."""
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
        else:
            out.append(with_percentiles(v, reps[key], opts, METHOD, documents=n_docs))
    return out


# --- span F1 ------------------------------------------------------------------------------------


def f1_replicates(c: Counts, metric: str, w: np.ndarray, by_label: bool) -> dict[tuple[str | None, str | None], np.ndarray]:
    """Per (pair, label) row of :func:`~unitize.agree.spanf1.f1_rows`: F1 on every replicate."""
    k, kind = MEASURES[metric]
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


def unitizing_replicates(metric: str, per_doc: Sequence[Statistics], w: np.ndarray) -> dict[tuple[str | None, str | None], np.ndarray]:
    """uα, |uα, cuα or (k)uα per value on every replicate, from the documents' statistics weighted."""
    values = tuple(sorted(set().union(*(s.values for s in per_doc))))
    docs = [s.relabeled(values) for s in per_doc]
    m = per_doc[0].annotators
    pairs = np.einsum("bd,dij->bij", w, np.stack([s.pairs for s in docs]).astype(np.float64))
    squares = w @ np.stack([s.squares for s in docs]).astype(np.float64)
    ell = pairs / (m - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric in ("u-alpha", "|u-alpha"):
            eps = _expected(ell, squares)
            marked = squares[:, 1:].sum(axis=1) > 0
            if metric == "u-alpha":
                d_o, d_e = _off_diagonal(ell), _off_diagonal(eps)
            else:
                d_o, d_e = 2 * ell[:, 0, 1:].sum(axis=1), 2 * eps[:, 0, 1:].sum(axis=1)
            return {(None, None): np.where(marked & (d_e > 0), 1 - d_o / np.where(d_e > 0, d_e, 1), np.nan)}
        pairable = w @ np.stack([s.pairable for s in docs]).astype(np.float64)
        star = ell[:, 1:, 1:]
        eps_star = _expected(star, pairable[:, 1:] / (m - 1) ** 2)
        if metric == "cu-alpha":
            d_o, d_e = _off_diagonal(star), _off_diagonal(eps_star)
            ok = (star.sum(axis=(1, 2)) > 0) & (d_e > 0)
            return {(None, None): np.where(ok, 1 - d_o / np.where(ok, d_e, 1), np.nan)}
        l_k, e_k = star.sum(axis=1), eps_star.sum(axis=1)  # (B, V): the columns' sums
        l_kk, e_kk = np.diagonal(star, axis1=1, axis2=2), np.diagonal(eps_star, axis1=1, axis2=2)
        ok = (l_k > 0) & (e_k - e_kk > 0)
        ku = np.where(ok, 1 - (e_k / np.where(ok, l_k, 1)) * (l_k - l_kk) / np.where(ok, e_k - e_kk, 1), np.nan)
        return {(None, name): ku[:, k] for k, name in enumerate(values)}


def _expected(ell: np.ndarray, self_pairs: np.ndarray) -> np.ndarray:
    """Batched :func:`unitize.agree.unitizing._expected`: (B, W, W) coincidences, (B, W) self-pairings."""
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
    """One category's per-document pieces of alpha-U as dense arrays (documents in continuum order)."""

    def __init__(self, docs: Sequence[Stretch]):
        self.m = int(docs[0].lead.size)
        self.length = np.array([s.length for s in docs], np.float64)
        self.observed = np.array([s.observed for s in docs], np.float64)
        self.ulen, self.units = _dense([s.units for s in docs])
        self.lead = np.stack([s.lead for s in docs]).astype(np.float64)  # (D, m)
        self.trail = np.stack([s.trail for s in docs]).astype(np.float64)
        self.marked = np.stack([s.marked for s in docs])
        ul = self.ulen.astype(np.float64)
        self.weighted = self.units * (ul * ul)  # (D, Ku): Σ l² per unit length and document
        self.chosen = self.units @ (ul * (ul - 1) * (2 * ul - 1) / 3)  # (D,): Σ (2l³ − 3l² + l)/3
        self.pairs = self.units @ (ul * (ul - 1))  # (D,): Σ l(l − 1)
        # each document's own inner gaps: Σ over gaps ≥ l of (gap − l + 1), per unit length (D, Ku); the
        # inner-gap term of a replicate is bilinear in the draw counts, Σ_dd' w_d w_d' cross[d, d']
        inner = _inner_fitting([s.gaps for s in docs], self.ulen)
        self.cross = self.weighted @ inner.T if len(docs) <= 2000 else None
        self.inner = inner

    def disagreements(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(D_o, D_e) of the drawn documents laid end to end in drawn order, per replicate."""
        m, n_docs = self.m, self.length.size
        w = weights(idx, n_docs)
        length = w @ self.length
        observed = 2 * (w @ self.observed) / (m * (m - 1) * length * length)
        n_c = w @ self.units.sum(axis=1)
        weighted = w @ self.weighted  # (B, Ku): Σ l² per unit length of the drawn documents
        if self.cross is not None:
            inner = ((w @ self.cross) * w).sum(axis=1)
        else:
            inner = (weighted * (w @ self.inner)).sum(axis=1)
        joins = _placements(self._joins(idx, length), self.ulen, weighted)
        numerator = (n_c - 1) * (w @ self.chosen) + inner + joins
        denominator = m * length * (m * length - 1) - w @ self.pairs
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = np.where(numerator != 0, 2 * numerator / (length * denominator), 0.0)
        return observed, expected

    def _joins(self, idx: np.ndarray, length: np.ndarray) -> np.ndarray:
        """(B, (D+1)·m): every gap that touches a document's edge, per annotator, in drawn order —
        a marked document's leading gap joined to the previous marked document's trailing gap and the
        unmarked documents between; the continuum's last gap; 0 where there is none."""
        b, n_docs = idx.shape
        steps = np.arange(n_docs)[None, :, None]
        size = self.length[idx][:, :, None]  # (B, D, 1)
        marked = self.marked[idx]  # (B, D, m)
        lead, trail = self.lead[idx], self.trail[idx]
        blank = np.cumsum(np.where(marked, 0.0, size), axis=1)  # unmarked length up to and including t
        before_blank = blank - np.where(marked, 0.0, size)  # ... up to t, excluded
        last = np.maximum.accumulate(np.where(marked, steps, -1), axis=1)
        before = np.concatenate([np.full((b, 1, self.m), -1), last[:, :-1]], axis=1)  # the previous marked document
        at = np.maximum(before, 0)
        carried = before_blank - np.where(before >= 0, np.take_along_axis(blank, at, 1) - np.take_along_axis(trail, at, 1), 0.0)
        gaps = np.where(marked, lead + carried, 0.0)
        end = np.maximum(last[:, -1:], 0)  # (B, 1, m)
        tail = np.take_along_axis(trail, end, 1) + blank[:, -1:] - np.take_along_axis(blank, end, 1)
        tail = np.where(last[:, -1:] >= 0, tail, length[:, None, None])
        return np.concatenate([gaps, tail], axis=1).reshape(b, -1)


def _dense(hists: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Length histograms of the documents as one (D, K) count matrix over their distinct lengths."""
    lengths = np.concatenate([h[0] for h in hists] + [np.zeros(0, np.int64)])
    counts = np.concatenate([h[1] for h in hists] + [np.zeros(0, np.int64)])
    doc = np.repeat(np.arange(len(hists)), [h[0].size for h in hists])
    distinct, at = np.unique(lengths, return_inverse=True)
    out = np.zeros((len(hists), distinct.size), np.float64)
    np.add.at(out, (doc, at.reshape(-1)), counts)
    return distinct, out


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


def _placements(gaps: np.ndarray, ulen: np.ndarray, weighted: np.ndarray) -> np.ndarray:
    """(B,): Σ over each row's gaps g and unit lengths l ≤ g of weighted[l] · (g − l + 1), with
    ``weighted`` (B, Ku) the drawn units' Σ l² per length: (g + 1)·Σ_{l ≤ g} weighted − Σ_{l ≤ g} l·weighted,
    prefix sums over the unit lengths looked up at each gap (one searchsorted, no sort)."""
    if ulen.size == 0:
        return np.zeros(gaps.shape[0])
    ul = ulen.astype(np.float64)
    zero = np.zeros((weighted.shape[0], 1))
    up_to = np.concatenate([zero, np.cumsum(weighted, axis=1)], axis=1)  # (B, Ku + 1)
    up_to_l = np.concatenate([zero, np.cumsum(weighted * ul, axis=1)], axis=1)
    k = np.searchsorted(ul, gaps, side="right")  # unit lengths ≤ g
    return ((gaps + 1) * np.take_along_axis(up_to, k, 1) - np.take_along_axis(up_to_l, k, 1)).sum(axis=1)


def alpha_u_replicates(per_category: dict[str, Sequence[Stretch]], opts: Options, labels: dict[str, str] | None = None,
                       cache: dict | None = None, key: tuple = ()) -> dict[tuple[str | None, str | None], np.ndarray]:
    """Alpha-U on every replicate (row key (None, None)) and, with ``labels`` (category -> row label),
    each category's alpha-U; replicates in chunks so that the gap arrays stay under ``_CELLS`` elements. A category's
    (D_o, D_e) replicates are kept in ``cache`` under ``key + (category,)`` (the key must name
    everything its stretches depend on): the layers-together row reuses the layers' own."""
    n_docs = len(next(iter(per_category.values())))
    idx = draws(opts, n_docs)
    d_o: dict[str, np.ndarray] = {}
    d_e: dict[str, np.ndarray] = {}
    cache = {} if cache is None else cache
    for c, docs in per_category.items():
        k = (*key, c, opts)
        if k not in cache:
            cat, o, e = _Category(docs), np.zeros(opts.replicates), np.zeros(opts.replicates)
            chunk = max(1, _CELLS // (n_docs * cat.m))
            for start in range(0, opts.replicates, chunk):
                part = idx[start:start + chunk]
                o[start:start + part.shape[0]], e[start:start + part.shape[0]] = cat.disagreements(part)
            cache[k] = (o, e)
        d_o[c], d_e[c] = cache[k]

    def alpha(o: np.ndarray, e: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(e > 0, 1 - o / np.where(e > 0, e, 1), np.nan)

    out = {(None, None): alpha(sum(d_o.values()), sum(d_e.values()))}
    for c, label in (labels or {}).items():
        out[(None, label)] = alpha(d_o[c], d_e[c])
    return out
