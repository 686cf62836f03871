"""The segment metrics of a cell: alpha-U, Krippendorff's unitizing family, span F1 and gamma.

Each takes a :class:`~.cells.SegmentCell` — the cell's layers, placed on its continuum on
demand — and the :class:`~.cells.MeasureOptions`, and returns its rows: the cell's value, per
label (``by_label``, label data) and per document (``by_doc``) where the metric has them, with
bootstrap intervals over documents (``ci``, :mod:`.spanboot`). What the metrics of one cell
derive from its segments (placed layers, statistics, the bootstrap's draws) is built once
(:meth:`SegmentCell.memo`). Several layers (the layers-together cell) are laid end to end.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from . import spanboot, spanf1, unitizing
from .alphau import CategoryDisagreement, alpha_u_from, stretches
from .alphau_bulk import disagreements, pair_disagreements
from .alphau_whole import Whole, whole_disagreements
from .backends import quiet
from .bootstrap import Options
from .cells import MeasureOptions, Memo, SegmentCell, SegmentFormula
from .placed import Placed
from .value import Value, nan, of_doc


def _categories(placed: list[Placed], layers: Sequence[str], by_label: bool) -> dict[str, tuple[int, int]]:
    """Per category (the layer, or ``layer:label`` for label data): the index of its layer and of its value there."""
    names: dict[str, tuple[int, int]] = {}
    for at, (layer, p) in enumerate(zip(layers, placed)):
        for v, name in enumerate(p.values):
            names[f"{layer}:{name}" if by_label else layer] = (at, v)
    return names


def _study(placed: list[Placed], layers: Sequence[str], by_label: bool) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """Per category (:func:`_categories`): each annotator's units, sorted."""
    groups = [p.by_annotator() for p in placed]
    return {c: [(placed[at].begin[g][placed[at].value[g] == v], placed[at].end[g][placed[at].value[g] == v]) for g in groups[at]]
            for c, (at, v) in _categories(placed, layers, by_label).items()}


def _whole(placed: list[Placed], layers: Sequence[str], by_label: bool, layer_memo: Memo | None = None) -> dict[str, Whole]:
    """Per category (:func:`_categories`): its disagreement on the whole continuum, from each layer's (:func:`_layer_whole`)."""
    per_layer = [_layer_whole(p, layer_memo) for p in placed]
    return {c: per_layer[at][v] for c, (at, v) in _categories(placed, layers, by_label).items()}


def _layer_whole(p: Placed, layer_memo: Memo | None) -> list[Whole]:
    """Per value of one layer's placed segments: its disagreement on the whole continuum (:func:`whole_disagreements`).
    Worked out once for the cells of a group that share the layer (a layer alone, the layers together): a value's
    disagreement depends on its segments alone."""

    def build() -> list[Whole]:
        return whole_disagreements(p) if p.values else []

    if p.key is None or layer_memo is None:
        return build()
    return layer_memo(("alpha-u whole", p.key), build)


def _drawn(cell: SegmentCell, opts: Options, n_docs: int) -> np.ndarray:
    """The document weights of a cell's replicates (the bootstrap's, or the jackknife's), drawn once for all its segment metrics."""
    drawn = spanboot.resampling(opts, n_docs)
    return cell.memo((drawn.draw, n_docs), lambda: spanboot.weights(spanboot.draws(drawn, n_docs), n_docs))


def _added(parts: Iterable[Any]) -> Any:
    """The sum of statistics (or of (document, statistics) pairs of one document)."""
    parts = list(parts)
    if isinstance(parts[0], tuple):
        return parts[0][0], _added(s for _, s in parts)
    return sum(parts[1:], parts[0])


# --- alpha-U (Krippendorff 1995/2004) ---------------------------------------------------------------


def _common(placed: list[Placed] | Value) -> list[Placed] | Value:
    """The documents every annotator coded: alpha-U (1995) and gamma pool all annotators on one continuum, and an annotator
    who did not code a document is not one who marked nothing there (the uα family and span F1 take each document's coders)."""
    if isinstance(placed, Value) or all(p.complete for p in placed):
        return placed
    common = [p.common() for p in placed]
    if common[0].length == 0:
        return nan("no document is coded by every annotator (alpha-U and gamma pool all annotators on one continuum; "
                   "u-alpha and span-f1 take each document's coders)", units_used=0, documents=0)
    return common


def alpha_u_rows(cell: SegmentCell, options: MeasureOptions, name: str) -> list[Value]:
    """Alpha-U of a cell from each category's statistics; per category (``by_label``, label data)
    and per document (``by_doc``) from the same statistics."""
    given = cell.placed(name)
    placed = _common(given)
    if isinstance(placed, Value):
        return [placed]
    layers, by_label = cell.layers, cell.labelled
    whole = _whole(placed, layers, by_label, cell.layer_memo)
    length, annotators = placed[0].length, list(placed[0].annotators)
    if not whole:
        return [nan("no annotator marked a unit (no expected disagreement)", units_used=length)]
    out = [_alpha_u_row({c: w.disagreement for c, w in whole.items()}, any(w.marked for w in whole.values()), length, annotators)]
    named: dict[str, str] = {}
    if options.by_label and by_label:  # a category is "layer:label"; one layer: the label alone
        named = {c: c.split(":", 1)[1] if len(layers) == 1 else c for c in whole}
        out += [replace(_alpha_u_row({c: w.disagreement}, w.marked, length, annotators), label=named[c]) for c, w in whole.items()]
    if options.by_doc or options.ci:
        starts, sizes = placed[0].starts, placed[0].doc_lengths
        per = {c: stretches(units, length, starts) for c, units in _study(placed, layers, by_label).items()}
    if options.by_doc:
        found = {c: disagreements(s) for c, s in per.items()}  # every document's at once
        for d, doc in enumerate(placed[0].docs):
            marked = any(s[d].marked.any() for s in per.values())
            out.append(of_doc(_alpha_u_row({c: x[d] for c, x in found.items()}, marked, int(sizes[d]), annotators), doc))
    if options.ci:
        labels = {c: named[c] for c in whole} if options.by_label and by_label else None
        key = (cell.group, by_label, placed[0].docs, placed[0].annotators, cell.approach)
        reps = spanboot.alpha_u_replicates(per, spanboot.resampling(options.ci, len(placed[0].docs)), labels, cell.shared, key)
        out = spanboot.attach(out, reps, options.ci, len(placed[0].docs))
    if placed is not given:  # some annotator left some documents out: say which the value rests on
        _documents(out, len(placed[0].docs))
    return out


def alpha_u_pairs(cell: SegmentCell, name: str, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Value]:
    """Alpha-U of each of ``pairs`` alone, at once: a pair's continuum is the documents both coded, so the pairs are
    taken together by those documents (every pair of annotators who coded everything: the cell's continuum), and on
    each such continuum every annotator's stretch of each category is built once and every pair's disagreements come
    from them (:func:`~.alphau_bulk.pair_disagreements`); the same value as the pair alone. A pair with no document in
    common is left out (measured alone, it says so)."""
    placed = cell.placed(name)
    if isinstance(placed, Value):
        return {}
    index = {a: k for k, a in enumerate(placed[0].annotators)}
    coded = np.asarray(placed[0].coded)
    together: dict[bytes, list[tuple[str, str]]] = {}
    for a, b in pairs:
        if a in index and b in index:
            both = coded[:, index[a]] & coded[:, index[b]]
            if both.any():
                together.setdefault(both.tobytes(), []).append((a, b))
    out: dict[tuple[str, str], Value] = {}
    for chosen in together.values():
        a, b = chosen[0]
        on = [p.on(coded[:, index[a]] & coded[:, index[b]]) for p in placed]
        out |= _pairs_on(on, cell, [(index[a], index[b]) for a, b in chosen], chosen)
    return out


def _pairs_on(placed: list[Placed], cell: SegmentCell, at: list[tuple[int, int]], chosen: list[tuple[str, str]]) -> dict[tuple[str, str], Value]:
    """Alpha-U of pairs ``chosen`` (annotator indices ``at``) on one continuum of documents both of each pair coded."""
    study, length = _study(placed, cell.layers, cell.labelled), placed[0].length
    if not study:
        return {p: nan("no annotator marked a unit (no expected disagreement)", units_used=length) for p in chosen}
    per = {c: pair_disagreements(units, length, at) for c, units in study.items()}
    out = {}
    for k, (a, b) in enumerate(chosen):
        i, j = at[k]
        if not any(units[i][0].size or units[j][0].size for units in study.values()):
            out[(a, b)] = nan("no annotator marked a unit (no expected disagreement)", units_used=length)
            continue
        res = alpha_u_from({c: d[k] for c, d in per.items()})
        params = {"observed": res.observed, "expected": res.expected, "annotators": [a, b]}
        out[(a, b)] = (nan("no expected disagreement", units_used=length, params=params) if np.isnan(res.alpha)
                       else Value(res.alpha, units_used=length, params=params))
    return out


def _documents(rows: list[Value], n_docs: int) -> None:
    for r in rows:
        r.documents = 1 if r.doc is not None else n_docs


def _alpha_u_row(categories: Mapping[str, CategoryDisagreement], marked: bool, length: int, annotators: list[str]) -> Value:
    """The row of categories' disagreements (``marked``: some annotator marked a unit of one of them)."""
    if not marked:
        return nan("no annotator marked a unit (no expected disagreement)", units_used=length)
    res = alpha_u_from(categories)
    params = {"observed": res.observed, "expected": res.expected, "annotators": annotators}
    if np.isnan(res.alpha):
        return nan("no expected disagreement", units_used=length, params=params)
    return Value(res.alpha, units_used=length, params=params)


# --- the uα family (Krippendorff et al. 2016) ------------------------------------------------------


def unitizing_rows(variant: unitizing.Variant) -> SegmentFormula:
    """The rows of one member of Krippendorff's unitizing family (uα, |uα, cuα, (k)uα)."""

    def rows(cell: SegmentCell, options: MeasureOptions, name: str) -> list[Value]:
        placed = cell.placed(name)
        if isinstance(placed, Value):
            return [placed]
        layers = cell.layers
        total = cell.memo(("unitizing", tuple(layers)), lambda: _added(unitizing.statistics(p) for p in placed))
        out = variant.rows(total)
        if options.by_doc or options.ci:
            per = cell.memo(("unitizing by document", tuple(layers)),
                            lambda: [_added(x) for x in zip(*(unitizing.by_document(p) for p in placed))])
        if options.by_doc:
            for doc, s in per:
                out += [of_doc(v, doc) for v in variant.rows(s)]
        if options.ci:
            reps = spanboot.unitizing_replicates(variant, [s for _, s in per], _drawn(cell, options.ci, len(per)))
            out = spanboot.attach(out, reps, options.ci, len(per))
        return out

    return rows


# --- span F1 -----------------------------------------------------------------------------------------


def f1_rows(match: spanf1.Match) -> SegmentFormula:
    """Span F1 of every annotator pair and their mean (spans are whole segments: no boundary units)."""

    def rows(cell: SegmentCell, options: MeasureOptions, name: str) -> list[Value]:
        placed = cell.placed(name, approach="interval")
        if isinstance(placed, Value):
            return [placed]
        at = None if cell.only is None else spanf1.indices(placed[0].annotators, cell.only)
        total = cell.memo(("span f1", tuple(cell.layers), cell.only), lambda: _added(_layer_counts(cell, p, at) for p in placed))
        by_label = options.by_label and cell.labelled
        out = spanf1.f1_rows(total, match, by_label=by_label, by_doc=options.by_doc)
        _f1_used(out, total, placed)
        if options.ci:
            n_docs = len(placed[0].docs)
            reps = spanboot.f1_replicates(total, match, _drawn(cell, options.ci, n_docs), by_label=by_label)
            out = spanboot.attach(out, reps, options.ci, n_docs)
        return out

    return rows


def _layer_counts(cell: SegmentCell, p: Placed, at: list[tuple[int, int]] | None) -> spanf1.Counts:
    """:func:`spanf1.counts` of one layer's placed segments, once for the cells of a group that share them (values
    named as this cell names them: 0/1 data's value is the cell's layers)."""
    if p.key is None or cell.layer_memo is None:
        return spanf1.counts(p, at)
    found = cell.layer_memo(("span f1", p.key, None if at is None else tuple(at)), lambda: spanf1.counts(p, at))
    return found if found.values == p.values else replace(found, values=p.values)


def _f1_used(rows: list[Value], total: spanf1.Counts, placed: list[Placed]) -> None:
    """What each span-F1 row rests on: a pair's rows the documents both annotators coded, the mean every pair's."""
    lengths, n_layers = placed[0].doc_lengths, len(placed)
    pair_of = {f"{a}|{b}": k for k, (a, b) in enumerate(total.pairs)}
    common = total.common.astype(np.int64)
    pair_units, pair_docs = (n_layers * (common @ lengths)).tolist(), common.sum(axis=1).tolist()  # each pair's documents
    sizes: dict[str, int] | None = None
    for r in rows:
        k = pair_of.get(r.pair or "")
        if r.doc is not None:
            if sizes is None:
                sizes = dict(zip(placed[0].docs, (n_layers * lengths).tolist()))
            r.units_used = sizes[r.doc]
        elif k is not None:
            r.units_used, r.documents = pair_units[k], pair_docs[k]
        else:
            r.units_used, r.documents = n_layers * placed[0].length, len(placed[0].docs)


# --- gamma (Mathet et al. 2015, through pygamma-agreement) ------------------------------------------


def gamma_rows(cell: SegmentCell, options: MeasureOptions, name: str) -> list[Value]:
    """Gamma of the cell's segments on the documents every annotator coded (pygamma-agreement; seeded)."""
    given = cell.placed(name)
    placed = _common(given)
    if isinstance(placed, Value):
        return [placed]
    study = _study(placed, cell.layers, by_label=cell.labelled)
    annotators, length = list(placed[0].annotators), placed[0].length
    try:
        from pyannote.core import Segment
        from pygamma_agreement import CombinedCategoricalDissimilarity
        from pygamma_agreement import Continuum as GammaContinuum
    except ImportError:
        return [nan("pygamma-agreement is not installed (pip install 'unitize[gamma]')")]
    continuum = GammaContinuum()
    for cat, per in (study or {}).items():
        for a, (b, e) in zip(annotators, per):
            for x, y in zip(b.tolist(), e.tolist()):
                continuum.add(a, Segment(float(x), float(y)), cat)
    if len(continuum.annotators) < 2 or continuum.num_units < 2:
        return [nan("gamma needs at least two annotators with units", units_used=length)]
    g = options.gamma
    np.random.seed(int(g.seed))
    d = CombinedCategoricalDissimilarity(alpha=float(g.alpha), beta=float(g.beta))
    with captured_logging() as messages:
        try:
            res = quiet(continuum.compute_gamma, d, n_samples=int(g.n_samples), fast=bool(g.fast))
        except Exception as exc:  # pygamma raises assorted errors on degenerate continua
            return [nan(f"pygamma-agreement: {type(exc).__name__}: {exc}", units_used=length)]
    params: dict[str, Any] = {**asdict(g), "positions": "units on the continuum"}
    if messages:
        params["messages"] = dict(Counter(messages))
    return [Value(float(res.gamma), units_used=length, params=params, documents=len(placed[0].docs) if placed is not given else None)]


@contextmanager
def captured_logging() -> Iterator[list[str]]:
    """Collect what a package logs (pygamma-agreement logs 'CBC solver not installed' once per
    sampled continuum) instead of letting logging's last-resort handler print it."""
    messages: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [_Collect()]
    try:
        yield messages
    finally:
        root.handlers = saved
