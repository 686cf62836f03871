"""``unitize agree``: agreement per setting, group and layer of an output directory.

For every unit-matrix dataset (setting), group and layer — and, for separate
layers, all layers together (the RAT's "both", layer ``Arg1+Arg2``) — the
chosen metrics are computed and collected in one results table with the counts
behind each value.

Each (setting, group, layer) is read once and reduced to its sufficient
statistics (:mod:`unitize.agree.stats`; straight from the Arrow columns where
:mod:`unitize.agree.columns` can); every coding metric comes from them
(:mod:`unitize.agree.coefficients`), the layers-together row from their sum.
The span metrics (:mod:`unitize.agree.spans`: alpha-U, gamma, the unitizing family,
span F1) place the segments on the cell's :class:`~unitize.agree.spans.Continuum`,
which the statistics pass gives where it reads the columns: no matrix is built for them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..executors import Executor
from ..progress import Progress, Sized
from . import batches, bootstrap, coefficients, columns, diagnostics, perdoc, stats, tasks
from . import matrix as _matrix
from .backends import Value, nan
from .data import Matrix, OutputData, Setting, layer_rows
from .data import matrix as data_matrix
from .spans import GAMMA_DEFAULTS, Continuum, Segments, alpha_u_values, f1_values, gamma_value, stack, unitizing_values
from .model import RESULT_SCHEMA
from .stats import Stats

METRICS = ("alpha-u", "alpha", "fleiss", "cohen", "cohen-mean", "scott", "ac1", "ac2", "percent", "cochran-q", "gamma",
           "u-alpha", "|u-alpha", "cu-alpha", "ku-alpha", "span-f1", "span-f1-overlap", "unit-f1")
#: Krippendorff's unitizing family (unitize.agree.unitizing) and span F1 (unitize.agree.spanf1): from the segments
UNITIZING = ("u-alpha", "|u-alpha", "cu-alpha", "ku-alpha")
SPAN_F1 = ("span-f1", "span-f1-overlap", "unit-f1")
SPAN_METRICS = ("alpha-u", "gamma", *UNITIZING, *SPAN_F1)
DEFAULT_METRICS = ("alpha-u", "alpha", "fleiss", "cohen", "cochran-q")

#: metrics that compare annotators as persons (pairs, blocks, whole segmentations), so are not
#: defined on rater slots (long-layout crowd data, see matrix._pivot_long)
_NEEDS_IDENTITY = ("cohen", "cohen-mean", "scott", "cochran-q", *SPAN_METRICS)


#: metrics with a per-label breakdown (``by_label``): each value against all others, nominal
BY_LABEL = ("alpha", "fleiss", "cohen", "cohen-mean", "scott", "ac1", "ac2", "percent")


def _measured(metric: str, s: Stats, level: str, binary: bool, options: dict[str, Any]) -> list[Value]:
    """A coding metric's rows, with their bootstrap intervals when asked."""
    values = _coding(metric, s, level, binary)
    if options["ci"] and metric in bootstrap.RESAMPLED:
        values = [bootstrap.interval(metric, s, v, level, options["ci"]) for v in values]
    return values


def _coding(metric: str, s: Stats, level: str, binary: bool) -> list[Value]:
    """One coding metric from the statistics of a (setting, group, layer)."""
    if metric == "alpha":
        v = coefficients.alpha(s, level)
        v.params.setdefault("level", level)
        if not s.annotators:
            v.params["from"] = "value counts"
        return [v]
    if metric == "fleiss":
        return [coefficients.fleiss(s)]
    if metric == "cohen":
        return coefficients.cohen(s)
    if metric == "cohen-mean":
        return [coefficients.mean_of(coefficients.cohen(s), "Cohen's kappa")]
    if metric == "scott":
        return coefficients.scott(s)
    if metric in ("ac1", "ac2"):
        v = coefficients.ac2(s, "nominal" if metric == "ac1" else level)
        v.params.setdefault("level", "nominal" if metric == "ac1" else level)
        return [v]
    if metric == "percent":
        return [coefficients.percent(s)]
    if metric == "cochran-q":
        return [coefficients.cochran_q(s, binary)]
    raise ValueError(metric)


#: metrics with a per-annotator breakdown (``by_annotator``): each annotator against the others
BY_ANNOTATOR = ("alpha", "cohen", "cohen-mean", "scott", "ac1", "ac2", "percent")


def _per_annotator(metric: str, s: Stats, level: str, binary: bool, options: dict[str, Any]) -> list[Value]:
    """Each annotator with data against the others: the metric on their pooled pairings
    (:meth:`Stats.against_others`); ``cohen-mean``: the mean of the annotator's pairwise kappas."""
    out = []
    pairs = coefficients.cohen(s) if metric == "cohen-mean" else []
    for i in np.flatnonzero(s.annotator_counts().sum(axis=1) > 0):
        name = s.annotators[i]
        if metric == "cohen-mean":
            mine = [v for v in pairs if v.pair and name in v.pair.split("|")]
            values = [coefficients.mean_of(mine, f"Cohen's kappa with {name}")]
        else:
            values = [replace(v, pair=None) for v in _measured(metric, s.against_others(int(i)), level, binary, options)]
        out += [replace(v, annotator=name) for v in values]
    return out


@dataclass
class _Cell:
    """One (setting, group, layer) to report: its statistics, and its matrix only when a span metric needs it."""

    group: str
    layer: str
    layers: list[str]
    stats: Stats
    docs: int | None
    crowd: int | None
    matrix: Callable[[], Matrix]
    categories: list[str] | None = None  # label data: the label of each value code
    per_doc: list[tuple[str, Stats]] | None = None  # with by_doc: each document's statistics (they add up to stats)
    layout: Callable[[], Continuum] | None = None  # documents, units, presence (span metrics); default: of the matrix
    _continuum: Continuum | None = field(default=None, repr=False)

    def continuum(self) -> Continuum:
        """The cell's continuum, built once: every span metric of the cell gets the same object, so
        what they derive from it (placed segments, statistics: :meth:`Segments.memo`) is shared."""
        if self._continuum is None:
            self._continuum = self.layout() if self.layout is not None else Continuum.of(self.matrix())
        return self._continuum

    def label(self, value: float) -> str:
        return self.categories[int(value)] if self.categories is not None else f"{value:g}"


def _annotators(cell: _Cell) -> int:
    if cell.crowd is not None:
        return cell.crowd
    return int((cell.stats.annotator_counts().sum(axis=1) > 0).sum())


def _rows(setting: Setting, cell: _Cell, metrics: Sequence[str], segs: Segments | None, options: dict[str, Any]) -> list[dict[str, Any]]:
    base = {
        "setting": setting.name,
        "unit": setting.unit or "item",
        "approach": setting.approach,
        "mode": setting.mode,
        "group": cell.group,
        "layer": cell.layer,
        "annotators": _annotators(cell),
        "documents": cell.docs,
        "relations": segs.relations(cell.group, cell.layers) if segs is not None else None,
        "units": cell.stats.n_units,
    }
    level = setting.level(cell.group)
    out = []
    for metric in metrics:
        if cell.crowd is not None and metric in _NEEDS_IDENTITY:
            values = [nan(
                f"{cell.crowd} annotators, a few per unit: measured from value counts per unit (alpha, fleiss, ac1, ac2, percent); "
                f"{metric} needs each annotator's own coding of every unit"
            )]
        elif metric == "alpha-u":
            values = alpha_u_values(segs, cell.continuum(), cell.layers, options)
        elif metric in UNITIZING:
            values = unitizing_values(metric, segs, cell.continuum(), cell.layers, options)
        elif metric in SPAN_F1:
            values = f1_values(metric, segs, cell.continuum(), cell.layers, options)
        elif metric == "gamma":
            values = [gamma_value(segs, cell.continuum(), cell.layers, options["gamma"])]
        else:
            values = _measured(metric, cell.stats, level, setting.value == "binary", options)
            if metric in BY_LABEL and cell.per_doc:  # per document, from each document's statistics
                values += _doc_values(metric, cell.per_doc, level, setting.value == "binary", options)
            if options["by_annotator"] and metric in BY_ANNOTATOR and cell.crowd is None:
                values += _per_annotator(metric, cell.stats, level, setting.value == "binary", options)
            if options["by_label"] and metric in BY_LABEL and setting.value != "binary" and cell.stats.domain.size > 1:
                for i, value in enumerate(cell.stats.domain):  # category-specific: this value or another
                    values += [replace(v, label=cell.label(value))
                               for v in _measured(metric, cell.stats.one_vs_rest(i), "nominal", True, options)]
        for v in values:
            params = dict(v.params)
            value_level = params.pop("level", None)
            a, b = v.pair.split("|", 1) if v.pair and "|" in v.pair else (None, None)
            out.append(
                {
                    **base,
                    "metric": metric,
                    "value": v.value,
                    "reason": v.reason,
                    "units_used": v.units_used,
                    "std_err": v.std_err,
                    "df": v.df,
                    "p_value": v.p_value,
                    "pair": v.pair,
                    "level": value_level,
                    "params": json.dumps(params, sort_keys=True) if params else None,
                    "ci_low": v.ci[0] if v.ci else None,
                    "ci_high": v.ci[1] if v.ci else None,
                    "annotator_a": a,
                    "annotator_b": b,
                    "label": v.label,
                    "doc": v.doc,
                    "annotator": v.annotator,
                    "diagnostics": None,
                }
            )
    found = diagnostics.of_cell(setting, cell.stats, cell.label if cell.categories is not None else None)
    diagnostics.attach(out, found + diagnostics.all_nan(out))
    return out


def _doc_values(metric: str, per_doc: list[tuple[str, Stats]], level: str, binary: bool, options: dict[str, Any]) -> list[Value]:
    """A coding metric per document, from each document's statistics: alpha (nominal) and Fleiss of
    every document at once (:mod:`~unitize.agree.perdoc`, the same values), the rest one by one."""
    if not options["ci"] and perdoc.handles(metric, level):
        return perdoc.values(metric, per_doc, level)
    return [replace(v, doc=doc) for doc, s in per_doc for v in _measured(metric, s, level, binary, options)]


def _lazy(build: Callable[[], Matrix]) -> Callable[[], Matrix]:
    built: list[Matrix] = []

    def matrix() -> Matrix:
        if not built:
            built.append(build())
        return built[0]

    return matrix


def _layers(setting: Setting, layer: str) -> list[str]:
    return (list(setting.layer_bits) or layer.split("+")) if setting.mode == "combined" else [layer]


def _cells(setting: Setting, group: str, table: pa.Table, layers: list[str], codes: np.ndarray, fast: bool, by_doc: bool) -> Iterator[_Cell]:
    """The cells of one group: each layer, and for separate layers all layers together (the RAT's "both")."""
    per = []
    if fast:  # statistics of every layer straight from the columns; the matrix only if a span metric asks
        doc_names, g = columns.cells(setting, table, codes, len(layers), by_doc)  # a sparse group: implicit units counted
        docs = (g.units > 0).sum(axis=1)
        for i, (layer, s) in enumerate(zip(layers, g.stats)):
            build = lambda i=i, layer=layer: data_matrix(setting, group, layer, columns.layer_table(table, codes, i))  # noqa: E731
            per_doc = [(d, x) for d, x in zip(doc_names, g.doc_stats[i]) if x.n_units] if g.doc_stats else None
            continuum = Continuum(setting, group, doc_names, g.units[i], g.presence[i], list(setting.annotators))
            per.append(_Cell(group, layer, _layers(setting, layer), s, int(docs[i]), None, _lazy(build),
                             g.categories[i] if g.categories else None, per_doc, layout=lambda c=continuum: c))
    elif crowd := (columns.long_stats(setting, table, codes, len(layers), _matrix.DENSE_CELLS, by_doc)
                   if setting.kind == "units" and setting.layout == "long" else None):
        for i, (layer, (s, raters, docs, per_doc)) in enumerate(zip(layers, crowd[0])):
            build = lambda i=i, layer=layer: data_matrix(setting, group, layer, layer_rows(table, codes, i))  # noqa: E731
            per.append(_Cell(group, layer, _layers(setting, layer), s, docs, raters, _lazy(build), crowd[1], per_doc))
    else:
        for i, layer in enumerate(layers):
            m = data_matrix(setting, group, layer, layer_rows(table, codes, i))
            per.append(_Cell(group, m.layer, _layers(setting, m.layer), stats.from_matrix(m), len(m.docs) if m.docs else None,
                             m.crowd, lambda m=m: m, m.categories, _doc_stats(m) if by_doc else None))
    yield from per
    yield from _both(setting, group, per, fast)


def _both(setting: Setting, group: str, per: list[_Cell], fast: bool) -> Iterator[_Cell]:
    """For separate layers, the cell of all layers together (their statistics added up)."""
    if setting.kind == "units" and setting.mode != "combined" and len(per) > 1:
        names = [c.layer for c in per]
        categories = sorted({x for c in per for x in c.categories or ()}) if any(c.categories for c in per) else None
        parts = [_on_labels(c, c.stats, categories) for c in per]
        both = sum(parts[1:], parts[0])  # the stacked layers' statistics: the additive reduction
        per_doc = None
        if all(c.per_doc is not None for c in per):
            by: dict[str, list[Stats]] = {}
            for c in per:
                for d, x in c.per_doc or ():
                    by.setdefault(d, []).append(_on_labels(c, x, categories))
            per_doc = [(d, sum(xs[1:], xs[0])) for d, xs in sorted(by.items())]
        crowd = [c.crowd for c in per if c.crowd is not None]
        continuum = None
        if fast:  # the first layer's documents, the annotators' presence in any layer (as the stacked matrix)
            first = per[0].continuum()
            continuum = lambda: replace(first, presence=np.any([c.continuum().presence for c in per], axis=0))  # noqa: E731
        yield _Cell(group, "+".join(names), names, both, per[0].docs, max(crowd) if crowd else None,
                    _lazy(lambda: stack([c.matrix() for c in per], "+".join(names))), categories, per_doc, continuum)


def _reduced(setting: Setting, group: str, parts: list[tuple[str, batches.LayerPart]]) -> list[_Cell]:
    """The cells of a group reduced batch by batch (:mod:`.batches`): statistics only, no matrix (the span
    metrics are not measured on crowd data, and item labels have no continuum)."""
    empty = Continuum(setting, group, [], np.zeros((0, 0), np.int64), np.zeros((0, 0, 0), bool), [])
    per = [_Cell(group, layer, _layers(setting, layer), p.stats, p.docs, len(p.raters) if p.raters is not None else None,
                 _no_matrix, p.categories, sorted(p.per_doc.items()) if p.per_doc is not None else None, lambda: empty)
           for layer, p in parts]
    return [*per, *_both(setting, group, per, False)]


def _no_matrix() -> Matrix:
    raise RuntimeError("a group measured in batches has no matrix")


def _doc_stats(m: Matrix) -> list[tuple[str, Stats]] | None:
    """Per document of a matrix (units data): its statistics."""
    if not m.docs:
        return None
    if m.counts is not None:  # crowd: value counts per unit, a document's rows one slice after a sort
        order = np.argsort(m.row_doc, kind="stable")
        bounds = np.searchsorted(m.row_doc[order], np.arange(len(m.docs) + 1))
        return [(d, stats.from_counts(m.counts[order[bounds[i]:bounds[i + 1]]], m.value_domain).trimmed())
                for i, d in enumerate(m.docs) if bounds[i + 1] > bounds[i]]
    cols, dom = stats.codes(m.values)
    return [(d, stats.from_codes([c[m.row_doc == i] for c in cols], dom, m.annotators).trimmed()) for i, d in enumerate(m.docs)]


def _on_labels(cell: _Cell, s: Stats, categories: list[str] | None) -> Stats:
    """Statistics of a cell with its label codes renumbered into ``categories`` (layers may differ)."""
    if categories is None or cell.categories is None:
        return s
    return s.relabeled(np.array([categories.index(cell.label(v)) for v in s.domain], dtype=np.float64))


def measure(
    out: Path | OutputData,
    metrics: Sequence[str] = DEFAULT_METRICS,
    settings: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    gamma: dict[str, Any] | None = None,
    ci: bootstrap.Options | None = None,
    by_label: bool = False,
    by_doc: bool = False,
    by_annotator: bool = False,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> pa.Table:
    """The results table of ``unitize agree`` for an output directory.

    Per (setting, group, layer) the matrix is read once and reduced to its
    sufficient statistics; every coding metric comes from them. ``executor``
    (:mod:`unitize.executors`; default: here, in order) runs (setting, groups) tasks
    (:func:`measure_task`); the table is the same for every executor.
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}")
    data = out if isinstance(out, OutputData) else OutputData(out)
    chosen = [data.setting(s) for s in settings] if settings else data.settings
    if groups:
        known = sorted({g for s in chosen for g in data.groups(s)})
        missing = [g for g in groups if g not in known]
        if missing:
            raise ValueError(f"unknown group(s) {', '.join(missing)}; the groups are: {', '.join(known)}")
    options = {"gamma": {**GAMMA_DEFAULTS, **(gamma or {})}, "ci": ci, "by_label": by_label, "by_doc": by_doc,
               "by_annotator": by_annotator}
    spans = any(m in SPAN_METRICS for m in metrics)
    rows: list[dict[str, Any]] = []
    if executor is None or not executor.parallel:
        segment_cache: dict[str, Segments | None] = {}
        for setting in chosen:
            rows += _setting_rows(data, setting, groups, metrics, options, spans, segment_cache, progress)
    else:  # (setting, groups) tasks, each opening the directory itself; rows concatenated in the local order
        jobs = tasks.plan(data, chosen, groups, executor.workers)
        done = executor.map(measure_task, [(str(data.path), name, part, tuple(metrics), options, parts) for name, part, parts in jobs])
        for name, group, out in tasks.gather(jobs, done):  # a group split by parts: its statistics added up here
            rows += out if group is None else _group_rows(data, data.setting(name), group, out, metrics, options, spans)
    diagnostics.across_approaches(rows)
    return pa.Table.from_pylist(rows, schema=RESULT_SCHEMA)


def measure_task(task: tuple[str, str, list[str], tuple[str, ...], dict[str, Any]]) -> list[dict[str, Any]]:
    """A task of an executor: the result rows of some groups of one setting, as plain Python data.

    ``task`` is (output directory, setting name, groups, metrics, options, parts); the directory is opened
    here, in the worker, and only the segments of the task's groups are read. With ``parts`` (k0, k1):
    the additive statistics of one group's rows in those parts (:func:`.batches.group_part`), no rows.
    """
    path, name, groups, metrics, options, parts = task
    data = OutputData(Path(path))
    if parts is not None:
        return batches.group_part(data, data.setting(name), groups[0], None, options["by_doc"], parts)
    spans = any(m in SPAN_METRICS for m in metrics)
    return _setting_rows(data, data.setting(name), groups, metrics, options, spans, {}, None, keep=groups)


def _group_rows(data: OutputData, setting: Setting, group: str, found: dict[str, batches.LayerPart], metrics: Sequence[str],
                options: dict[str, Any], spans: bool) -> list[dict[str, Any]]:
    """The rows of a group whose parts several tasks measured (narrow enough to pivot: read whole, here)."""
    reduced = batches.finish(data, setting, found)
    if reduced is None:
        return _setting_rows(data, setting, [group], metrics, options, spans, {}, None, keep=[group])
    segs = Segments(data.segments(setting.unit, [group])) if setting.kind == "units" and setting.unit else None
    return [row for cell in _reduced(setting, group, reduced) for row in _rows(setting, cell, metrics, segs, options)]


def _setting_rows(data: OutputData, setting: Setting, groups: Sequence[str] | None, metrics: Sequence[str],
                  options: dict[str, Any], spans: bool, segment_cache: dict[str, Segments | None],
                  progress: Progress | None, keep: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The result rows of one setting's groups (all, or ``groups``), groups sorted; ``keep``: only
    these groups' segments are read into :class:`Segments` (a task's share)."""
    rows: list[dict[str, Any]] = []
    segs = None
    if setting.kind == "units" and setting.unit:
        if setting.unit not in segment_cache:
            table = data.segments(setting.unit, keep)
            segment_cache[setting.unit] = Segments(table) if table is not None else None
        segs = segment_cache[setting.unit]
    fast = columns.fast(setting, pq.read_schema(setting.path))
    needed = None if not fast else ["group", "layer", "doc_id", *(["unit"] if spans else []), *setting.annotators]
    # large crowd groups come reduced; a sparse group as stored, its implicit units counted
    tables = batches.group_tables(data, setting, groups, needed, options["by_doc"], implicit=fast)
    if progress is not None:  # a bar per setting over its groups
        tables = progress(Sized(tables, len([g for g in data.groups(setting) if groups is None or g in groups])), f"agree {setting.name}")
    for group, table, layers, codes in tables:
        cells = _cells(setting, group, table, layers, codes, fast, options["by_doc"]) if codes is not None else _reduced(setting, group, table)
        for cell in cells:
            rows += _rows(setting, cell, metrics, segs, options)
    return rows


def as_json_lines(table: pa.Table) -> Iterable[str]:
    """One JSON object per result row (NaN written as null)."""
    for row in table.to_pylist():
        clean = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
        yield json.dumps(clean, ensure_ascii=False)
