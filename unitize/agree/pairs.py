"""Pairs of annotators measured alone, in the one pass over a study (roles: every human pair, every candidate
with every human, a family's two runs).

A pair's view of a cell is what a cell of those two annotators alone would be: its statistics from the
cell's pairwise tables (:meth:`~unitize.metrics.stats.Stats.pair`, equal field for field to those of
the two columns) and its segments taken from the cell's placed segments
(:meth:`~unitize.metrics.placed.Placed.among`: the documents both coded). Every metric is measured on
it as on any cell, so a pair's row equals the row of a run on the two annotators alone — without a
read of the study per pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from itertools import combinations
from typing import Any

from .. import metrics as registry
from ..metrics import Cell, MeasureOptions, Metric
from ..metrics.cells import SegmentCell
from ..metrics.metric import CodingMetric, Rows, SegmentMetric
from ..metrics.placed import Placed
from ..metrics.stats import Stats
from ..metrics.value import Value, nan
from .rows import value_row


def rows(base: dict[str, Any], stats: Stats, level: str, binary: bool, crowd: int | None, categories: list[str] | None,
         spans: Callable[[], SegmentCell] | None, metrics: Sequence[Metric], options: MeasureOptions) -> list[dict[str, Any]]:
    """The whole rows of every metric on each pair the cell has of ``options.among`` (every pair of them) and
    ``options.pairs`` (its own pair's row, not also the equal mean of that one pair), ``annotator_a`` and
    ``annotator_b`` the pair as asked; on crowd data, which has no annotator's own coding, one NaN row per metric
    (no pair named) saying so."""
    index = {a: k for k, a in enumerate(stats.annotators)}
    if crowd is not None or not index:  # one row per metric: no pair can be measured here
        why = nan(f"crowd data ({crowd} annotators, a few per unit) is counted per unit: a pair's own agreement needs each "
                  "annotator's own coding, which the long layout keeps only for a study narrow enough to pivot")
        return [value_row(base, m.name, why, categories) for m in metrics]
    present = [a for a in options.among if a in index]
    wanted = [*combinations(present, 2), *((a, b) for a, b in options.pairs if a in index and b in index)]
    alone = replace(options, pairs=(), among=(), by_label=False, by_doc=False, by_annotator=False)
    # a metric with a row per pair gives every pair of the cell at once, each on the documents both coded — as the
    # pair alone would, but for its interval, which resamples the cell's documents: with --ci every pair alone
    native = [m for m in metrics if m.rows in (Rows.PAIRS, Rows.PAIRS_AND_MEAN) and not options.ci]
    own_pairs = [(a, b) for a, b in options.pairs if a in index and b in index] if options.among_known else wanted
    segments = spans
    if options.among_known and spans is not None:  # a span metric matches the pairs asked, not every pair of the cell
        segments = partial(_only, spans, tuple(own_pairs))
    whole = Cell(stats=stats, level=level, binary=binary, crowd=None, categories=categories, segments=segments)
    done = _native(base, whole, native, alone, own_pairs, categories) if native else {}
    own = [m for m in metrics if m not in native]
    cell = {**base, "annotators": 2}
    batched = {m.name: m.pairwise(spans(), m.called or m.name, wanted) for m in own
               if isinstance(m, SegmentMetric) and m.pairwise is not None and spans is not None and not options.ci}
    at = [(index[a], index[b]) for a, b in wanted]
    batched |= {m.name: {p: v for p, v in zip(wanted, m.pairwise(stats, m.level(level), binary, at)) if v is not None} for m in own
                if isinstance(m, CodingMetric) and m.pairwise is not None and not options.ci}
    coding = any(isinstance(m, CodingMetric) for m in own)  # span metrics alone need no pair statistics
    out = []
    for a, b in wanted:
        view: Cell | None = None  # the pair alone, made when a metric measures it so
        for metric in metrics:  # each pair's rows in the metrics' order
            if metric in native:
                out += done.get((a, b, metric.name), [])
                continue
            joined = batched.get(metric.name, {}).get((a, b))
            if joined is not None:
                values = [joined]
            else:
                view = view or Cell(stats=stats.pair(index[a], index[b]) if coding else stats, level=level, binary=binary, crowd=None,
                                    categories=categories, segments=partial(_among, spans, (a, b)) if spans is not None else None)
                values = registry.measure(metric, view, alone)
            out += [{**value_row(cell, metric.name, v, categories), "annotator_a": a, "annotator_b": b} for v in values if _whole(v)]
    return out


def _whole(v: Value) -> bool:
    return v.label is None and v.doc is None and v.annotator is None and v.pair != "mean"


def _native(base: dict[str, Any], cell: Cell, metrics: list[Metric], options: MeasureOptions, wanted: list[tuple[str, str]],
            categories: list[str] | None) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Per (pair as asked, metric): its rows among a pairwise metric's rows of the whole cell (``annotator_a`` first)."""
    asked = {frozenset(p): p for p in wanted}
    out: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for metric in metrics:
        for v in registry.measure(metric, cell, options):
            pair = tuple(v.pair.split("|", 1)) if v.pair and "|" in v.pair else None
            if pair is not None and _whole(v) and frozenset(pair) in asked:
                a, b = asked[frozenset(pair)]
                out.setdefault((a, b, metric.name), []).append({**value_row(base, metric.name, v, categories), "annotator_a": a, "annotator_b": b})
    return out


def _only(spans: Callable[[], SegmentCell], pairs: tuple[tuple[str, str], ...]) -> SegmentCell:
    """The segments of a cell, a metric with a row per pair measuring ``pairs`` alone (their mean is not the cell's)."""
    return replace(spans(), only=pairs)


def _among(spans: Callable[[], SegmentCell], who: tuple[str, str]) -> SegmentCell:
    """The segments of a cell, of annotators ``who`` alone (placed once per metric's approach)."""
    cell = spans()
    memo: dict[Any, Any] = {}

    def place(name: str, approach: str | None) -> list[Placed] | Value:
        key = ("placed", approach)
        if key not in memo:
            placed = cell.place(name, approach)
            if isinstance(placed, Value):
                memo[key] = placed
            elif any(a not in placed[0].annotators for a in who):
                memo[key] = nan("fewer than two annotators with data")
            else:
                memo[key] = [p.among([p.annotators.index(a) for a in who]) for p in placed]
                if memo[key][0].length == 0:
                    memo[key] = nan("no document is coded by two annotators", units_used=0)
        return memo[key]

    def remember(key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        if key not in memo:
            memo[key] = build()
        return memo[key]

    return replace(cell, place=place, memo=remember)
