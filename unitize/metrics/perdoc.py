"""Per-document rows (``--by-doc``) of alpha, Fleiss' kappa and the pairwise coefficients, every document at once.

:func:`alpha_rows`, :func:`fleiss_rows` and :func:`pair_rows` give what :func:`~unitize.metrics.coefficients.alpha`
(nominal), :func:`~unitize.metrics.coefficients.fleiss` and a pairwise coefficient (Cohen's kappa, Scott's pi)
give document by document — the same values to the last
bit, the same NaN reasons — with the arithmetic done on stacks of documents: the documents are
grouped by the shape of their statistics (values, patterns), and each group goes through the same
NumPy operations as one document does (a stacked ``matmul`` makes the same BLAS call per document;
reductions run along the same axis). Crowd data have 16,000 documents and more (ToxicSpans), where
a Python call per document and metric was most of ``--by-doc``'s time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from . import coefficients
from .stats import Stats
from .value import Value, nan, of_doc

#: a metric's rows of every document at once: (documents' statistics, level) -> the rows (``doc`` set),
#: or None where it does not apply (the caller then goes document by document)
Bulk = Callable[[Sequence[tuple[str, Stats]], str], "list[Value] | None"]


def alpha_rows(per_doc: Sequence[tuple[str, Stats]], level: str) -> list[Value] | None:
    """Nominal alpha of each document (:func:`coefficients.alpha`); None at another level."""
    if level != "nominal":
        return None
    out = _alphas([s for _, s in per_doc])
    for v, (_, s) in zip(out, per_doc):
        v.params.setdefault("level", level)
        if not s.annotators:
            v.params["from"] = "value counts"
    return _named(out, per_doc)


def fleiss_rows(per_doc: Sequence[tuple[str, Stats]], level: str) -> list[Value]:
    """Fleiss' kappa of each document (:func:`coefficients.fleiss`)."""
    return _named(_fleiss([s for _, s in per_doc]), per_doc)


def pair_rows(name: str, fn: coefficients.PairFn) -> Bulk:
    """Per document, the rows of a pairwise coefficient (:func:`~unitize.metrics.coefficients.cohen`,
    :func:`~unitize.metrics.coefficients.scott`): every document's regular pair tables of one shape through ``fn``
    at once."""

    def rows(per_doc: Sequence[tuple[str, Stats]], level: str) -> list[Value]:
        prepared = [coefficients.pair_tables(s, name) for _, s in per_doc]
        shapes: dict[int, list[tuple[int, np.ndarray]]] = defaultdict(list)  # value count -> (document, regular tables)
        for i, p in enumerate(prepared):
            if not isinstance(p, list) and p.regular.any():
                shapes[p.tables.shape[-1]].append((i, p.tables[p.regular]))
        results: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        for members in shapes.values():
            docs, tables = [i for i, _ in members], [t for _, t in members]
            values, errors = fn(np.concatenate(tables))
            bounds = np.cumsum([0, *(len(t) for t in tables)])
            for i, a, b in zip(docs, bounds[:-1], bounds[1:]):
                results[i] = values[a:b], None if errors is None else errors[a:b]
        out = []
        for i, ((doc, s), p) in enumerate(zip(per_doc, prepared)):
            done = p if isinstance(p, list) else coefficients.pair_values(s, name, p, *results.get(i, (np.zeros(0), None)))
            out += [of_doc(v, doc) for v in done]
        return out

    return rows


def _named(out: list[Value], per_doc: Sequence[tuple[str, Stats]]) -> list[Value]:
    for v, (doc, _) in zip(out, per_doc):
        v.doc = doc
    return out


def _filled(out: list[Value | None]) -> list[Value]:
    """``out`` once every document has its value (each is set: a NaN, or the document's group's result)."""
    done = [v for v in out if v is not None]
    assert len(done) == len(out), "a document was left without a value"
    return done


def _annotated(s: Stats) -> int:
    """Annotators with data."""
    return int((s.by_raters.sum(axis=0).sum(axis=1) > 0).sum())


def _alphas(stats: Sequence[Stats]) -> list[Value]:
    """Nominal alpha of each document (:func:`coefficients.alpha`)."""
    out: list[Value | None] = [None] * len(stats)
    groups: dict[tuple[int, int], list[tuple[int, np.ndarray, np.ndarray]]] = defaultdict(list)
    for i, s in enumerate(stats):
        if s.annotators and _annotated(s) < 2:
            out[i] = nan("fewer than two annotators with data", units_used=0)
            continue
        m = s.patterns.sum(axis=1)
        keep = m >= 2
        used = int(s.units[keep].sum())
        if used == 0:
            out[i] = nan("no unit is coded by two annotators", units_used=0)
            continue
        c = s.patterns[keep].astype(np.float64)
        groups[c.shape].append((i, c, s.units[keep] / (m[keep] - 1)))
    for (_, v), members in groups.items():
        c = np.stack([x[1] for x in members])  # (G, P, V)
        w = np.stack([x[2] for x in members])  # (G, P)
        o = np.matmul((c * w[:, :, None]).transpose(0, 2, 1), c)  # Stats.coincidence, document by document
        o -= _diagonal(np.matmul(w[:, None, :], c)[:, 0, :])
        n_c = o.sum(axis=2)
        alpha = coefficients.alpha_from(o, np.zeros(v), "nominal")
        for (i, _, _), oc, a in zip(members, n_c, alpha.tolist()):
            s = stats[i]
            used = int(s.units[s.patterns.sum(axis=1) >= 2].sum())
            if (oc > 0).sum() < 2:
                out[i] = nan(f"no variation: every annotator gave every unit the value {s.domain[oc > 0][0]:g}", units_used=used)
            elif not np.isfinite(a):
                out[i] = nan("no expected disagreement", units_used=used)
            else:
                out[i] = Value(a, units_used=used, params={"level": "nominal"})
    return _filled(out)


def _diagonal(x: np.ndarray) -> np.ndarray:
    """(G, V) → (G, V, V) with ``x`` on the diagonals (``np.diag``, stacked)."""
    out = np.zeros(x.shape + (x.shape[-1],))
    out[:, np.arange(x.shape[-1]), np.arange(x.shape[-1])] = x
    return out


def _fleiss(stats: Sequence[Stats]) -> list[Value]:
    """Fleiss' kappa with its standard error, of each document (:func:`coefficients.fleiss`)."""
    out: list[Value | None] = [None] * len(stats)
    groups: dict[int, list[tuple[int, int, int, np.ndarray, np.ndarray]]] = defaultdict(list)
    for i, s in enumerate(stats):
        complete = coefficients._complete_or_reason(s)
        if isinstance(complete, Value):
            out[i] = complete
            continue
        raters, pat, w, units = complete
        groups[s.domain.size].append((i, raters, units, w @ pat, w @ (pat * (pat - 1)).sum(axis=1)))
    for members in groups.values():
        r = np.array([x[1] for x in members], np.int64)
        n = np.array([x[2] for x in members], np.int64)
        totals = np.stack([x[3] for x in members])  # (G, V): w @ pat
        p = totals / (n * r)[:, None]
        p_bar = np.array([x[4] for x in members]) / (n * r * (r - 1))
        p_e = (p**2).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = (p_bar - p_e) / (1 - p_e)
            pq = p * (1 - p)
            total = pq.sum(axis=1)
            squared = np.array([x**2 for x in total.tolist()])  # C's pow, as a NumPy scalar's ** is (not x·x: the last bit differs)
            se = np.sqrt(2) / (total * np.sqrt(n * r * (r - 1))) * np.sqrt(squared - (pq * (1 - 2 * p)).sum(axis=1))
        for k, (i, ri, ni, _, _) in enumerate(members):
            s = stats[i]
            if (p[k] > 0).sum() < 2:
                out[i] = nan(f"no variation: every annotator gave every unit the value {s.domain[p[k] > 0][0]:g}", units_used=ni)
                continue
            params = {} if s.annotators else {"raters_per_unit": ri, "from": "value counts"}
            out[i] = Value(float(kappa[k]), units_used=ni, std_err=float(se[k]), params=params)
    return _filled(out)
