"""``unitize agree``: agreement per setting, group and layer of an output directory.

For every unit-matrix dataset (setting), group and layer — and, for separate
layers, all layers together (the RAT's "both", layer ``Arg1+Arg2``) — the
chosen metrics are computed and collected in one results table with the counts
behind each value.

Each (setting, group, layer) is read once and reduced to its sufficient
statistics (:mod:`unitize.metrics.stats`; straight from the Arrow columns where
:mod:`unitize.agree.columns` can); every coding metric comes from them
(:mod:`unitize.metrics.coefficients`), the layers-together row from their sum.
The span metrics (:mod:`unitize.agree.spans`: alpha-U, gamma, the unitizing family,
span F1) place the segments on the cell's :class:`~unitize.agree.spans.Continuum`,
which the statistics pass gives where it reads the columns: no matrix is built for them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import zip_longest
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from .. import metrics as registry
from ..dataset import Matrix, OutputData, Setting, layer_rows
from ..dataset.matrix import matrix as data_matrix
from ..dataset.parts import release
from ..errors import RunError
from ..layouts import long as long_layout
from ..metrics import Cell, MeasureOptions, Metric, stats
from ..metrics.stats import Stats
from ..runtime.executors import Executor
from ..runtime.progress import Progress, Sized
from ..schema import RELATIONS, results_schema
from . import batches, columns, diagnostics, pairs, tasks
from .gathered import Gathered, Results
from .group_segments import GroupSegments, asks_segments
from .rows import value_row
from .spans import Continuum, Segments, segment_cell, stack

T = TypeVar("T")


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


def _rows(setting: Setting, cell: _Cell, metrics: Sequence[Metric], segs: Segments | None, options: MeasureOptions,
          relations: bool) -> list[dict[str, Any]]:
    """The result rows of one cell; ``relations``: discourse data, whose rows count the group's relations. With
    ``options.pairs``, the rows of those pairs of annotators alone instead (:mod:`.pairs`)."""
    base = {
        "setting": setting.name,
        "unit": setting.unit or "item",
        "approach": setting.approach,
        "mode": setting.mode,
        "group": cell.group,
        "layer": cell.layer,
        "annotators": _annotators(cell),
        "documents": cell.docs,
        "units": cell.stats.n_units,
    }
    if relations:
        base[RELATIONS] = segs.relations(cell.layers) if segs is not None else None
    level = setting.level(cell.group)
    spans = (lambda: segment_cell(segs, cell.continuum(), cell.layers)) if setting.kind == "units" else None
    if options.pairs or options.among:
        return pairs.rows(base, cell.stats, level, setting.value == "binary", cell.crowd, cell.categories, spans, metrics, options)
    view = Cell(stats=cell.stats, level=level, binary=setting.value == "binary", crowd=cell.crowd,
                categories=cell.categories, per_doc=cell.per_doc, segments=spans)
    out = [value_row(base, metric.name, v, cell.categories) for metric in metrics for v in registry.measure(metric, view, options)]
    found = diagnostics.of_cell(setting, cell.stats, cell.label if cell.categories is not None else None)
    coverage = _coverage(setting, cell)
    if coverage is not None:
        found += diagnostics.partial(*coverage)
    diagnostics.attach(out, found + diagnostics.all_nan(out))
    return out


def _coverage(setting: Setting, cell: _Cell) -> tuple[list[str], np.ndarray] | None:
    """Who coded which of a span cell's documents — (annotators, (documents, annotators) bool), documents no one coded
    left out — once a span metric has laid the cell's continuum (every layout then reads the documents); None otherwise."""
    if setting.kind != "units" or cell.crowd is not None or cell._continuum is None:
        return None
    c = cell.continuum()
    if c.presence.size == 0:
        return None
    return list(c.annotators), c.presence[c.presence.any(axis=1)]


def _given(value: T) -> Callable[[], T]:
    """A function returning ``value`` (bound now: a lambda in a loop would see the loop's last)."""
    return lambda: value


def _lazy(build: Callable[[], Matrix]) -> Callable[[], Matrix]:
    built: list[Matrix] = []

    def matrix() -> Matrix:
        if not built:
            built.append(build())
        return built[0]

    return matrix


def _layers(setting: Setting, layer: str) -> list[str]:
    return (list(setting.layer_bits) or layer.split("+")) if setting.mode == "combined" else [layer]


def cells_of(setting: Setting, group: str, table: pa.Table, layers: list[str], codes: np.ndarray, fast: bool, by_doc: bool,
             documents: bool = True) -> Iterator[_Cell]:
    """The cells of one group: each layer, and for separate layers all layers together (the RAT's "both").
    ``documents``: the documents' layout is wanted (span metrics; :func:`columns.cells`)."""
    per = []
    if fast:  # statistics of every layer straight from the columns; the matrix only if a span metric asks
        doc_names, g = columns.cells(setting, table, codes, len(layers), by_doc, documents)  # a sparse group: implicit units counted
        for i, (layer, s) in enumerate(zip(layers, g.stats)):
            build = lambda i=i, layer=layer: data_matrix(setting, group, layer, columns.layer_table(table, codes, i))  # noqa: E731
            per_doc = [(d, x) for d, x in zip(doc_names, g.doc_stats[i]) if x.n_units] if g.doc_stats else None
            layout = None  # without the documents' layout, a span metric's continuum would come from the matrix
            if g.units is not None and g.presence is not None:
                layout = _given(Continuum(setting, group, doc_names, g.units[i], g.presence[i], list(setting.annotators)))
            per.append(_Cell(group, layer, _layers(setting, layer), s, int(g.docs[i]), None, _lazy(build),
                             g.categories[i] if g.categories else None, per_doc, layout=layout))
    elif crowd := (columns.long_stats(setting, table, codes, len(layers), long_layout.DENSE_CELLS, by_doc)
                   if setting.kind == "units" and not setting.layout.columnar else None):
        for i, (layer, (s, raters, docs, per_doc)) in enumerate(zip(layers, crowd[0])):
            build = lambda i=i, layer=layer: data_matrix(setting, group, layer, layer_rows(table, codes, i))  # noqa: E731
            per.append(_Cell(group, layer, _layers(setting, layer), s, docs, raters, _lazy(build), crowd[1], per_doc))
    else:
        for i, layer in enumerate(layers):
            m = data_matrix(setting, group, layer, layer_rows(table, codes, i))
            per.append(_Cell(group, m.layer, _layers(setting, m.layer), stats.from_matrix(m), len(m.docs) if m.docs else None,
                             m.crowd, _given(m), m.categories, _doc_stats(m) if by_doc else None))
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
            continuum = lambda: replace(per[0].continuum(), presence=np.any([c.continuum().presence for c in per], axis=0))  # noqa: E731
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
    crowd = m.value_counts()
    if crowd is not None:  # crowd: value counts per unit, a document's rows one slice after a sort
        counts, domain = crowd
        order = np.argsort(m.row_doc, kind="stable")
        bounds = np.searchsorted(m.row_doc[order], np.arange(len(m.docs) + 1))
        return [(d, stats.from_counts(counts[order[bounds[i]:bounds[i + 1]]], domain).trimmed())
                for i, d in enumerate(m.docs) if bounds[i + 1] > bounds[i]]
    cols, dom = stats.codes(m.values)
    return [(d, stats.from_codes([c[m.row_doc == i] for c in cols], dom, m.annotators).trimmed()) for i, d in enumerate(m.docs)]


def _on_labels(cell: _Cell, s: Stats, categories: list[str] | None) -> Stats:
    """Statistics of a cell with its label codes renumbered into ``categories`` (layers may differ)."""
    if categories is None or cell.categories is None:
        return s
    return s.relabeled(np.array([categories.index(cell.label(v)) for v in s.domain], dtype=np.float64))


def measure(out: Path | OutputData, metrics: Sequence[str] = registry.default(), **options: Any) -> pa.Table:
    """The results table of ``unitize agree`` for an output directory, in one table (:func:`measured`, its options)."""
    return measured(out, metrics, **options).table()


def measured(
    out: Path | OutputData,
    metrics: Sequence[str] = registry.default(),
    settings: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    gamma: dict[str, Any] | None = None,
    ci: registry.Options | None = None,
    by_label: bool = False,
    by_doc: bool = False,
    by_annotator: bool = False,
    progress: Progress | None = None,
    executor: Executor | None = None,
    pairs: Sequence[tuple[str, str]] = (),
    among: Sequence[str] = (),
    among_known: bool = False,
) -> Results:
    """The results of ``unitize agree`` for an output directory, a record batch at a time (:class:`~.gathered.Results`).

    Per (setting, group, layer) the matrix is read once and reduced to its
    sufficient statistics; every coding metric comes from them. ``executor``
    (:mod:`unitize.runtime.executors`; default: here, in order) runs (setting, groups) tasks
    (:func:`measure_task`); the table is the same for every executor. With ``pairs`` (and every pair ``among`` some
    annotators), each pair of annotators measured alone on every cell, instead of the cells (:mod:`.pairs`);
    ``among_known``: a metric with a row per pair gives ``pairs`` alone (the caller has ``among``'s from the cells).
    """
    chosen_metrics = registry.resolve(metrics)
    data = out if isinstance(out, OutputData) else OutputData(out)
    chosen = [data.setting(s) for s in settings] if settings else data.settings
    if groups:
        known = sorted({g for s in chosen for g in data.groups(s)})
        missing = [g for g in groups if g not in known]
        if missing:
            raise RunError(f"unknown group(s) {', '.join(missing)}; the groups are: {', '.join(known)}")
    options = MeasureOptions(ci=ci, by_label=by_label, by_doc=by_doc, by_annotator=by_annotator,
                             gamma=registry.GammaOptions(**(gamma or {})), pairs=tuple(pairs),
                             among=tuple(among), among_known=among_known)
    results = Gathered(results_schema(data.traits.relations))
    if executor is None or not executor.parallel:
        shared: dict[str, dict[Any, Any]] = {}
        for run in _in_step(chosen, chosen_metrics):
            _run_rows(data, run, groups, chosen_metrics, options, shared, progress, results)
    else:  # (setting, groups) tasks, each opening the directory itself; rows concatenated in the local order
        jobs = tasks.plan(data, chosen, groups, executor.workers)
        names = tuple(m.name for m in chosen_metrics)
        done = executor.map(measure_task, [(str(data.path), name, part, names, options, parts, data.selected) for name, part, parts in jobs])
        for name, result in tasks.gather(jobs, done):  # a group split by parts: its statistics added up here
            results.add(result if isinstance(result, list) else _group_rows(data, data.setting(name), result.group, result.layers, chosen_metrics, options))
    return results.results()


def _in_step(chosen: Sequence[Setting], metrics: Sequence[Metric]) -> list[list[Setting]]:
    """The settings in runs measured group by group together: with span metrics, each run of settings of one unit type
    (they place the same segments: a group's are read and placed once for them all); else each setting alone."""
    runs: list[list[Setting]] = []
    for setting in chosen:
        together = asks_segments(metrics) and setting.kind == "units" and bool(setting.unit)
        if together and runs and runs[-1][-1].kind == "units" and runs[-1][-1].unit == setting.unit:
            runs[-1].append(setting)
        else:
            runs.append([setting])
    return runs


def _run_rows(data: OutputData, run: list[Setting], groups: Sequence[str] | None, metrics: Sequence[Metric], options: MeasureOptions,
              shared: dict[str, dict[Any, Any]], progress: Progress | None, results: Gathered) -> None:
    """The rows of a run of settings (:func:`_in_step`), each setting's groups in turn with the others' same group;
    a later setting's rows are gathered apart and follow the earlier's, so the table is in setting order."""
    if len(run) == 1:
        for rows in _group_results(data, run[0], groups, metrics, options, shared, progress):
            results.add(rows)
        return
    later = [Gathered(results.schema) for _ in run[1:]]
    steps = [_group_results(data, setting, groups, metrics, options, shared, progress if i == 0 else None,
                            desc=f"agree {', '.join(s.name for s in run)}") for i, setting in enumerate(run)]
    for step in zip_longest(*steps):
        for target, rows in zip([results, *later], step):
            if rows is not None:
                target.add(rows)
    for gathered in later:
        results.extend(gathered)


#: what an executor's task of :func:`measure_task` holds
Task = tuple[str, str, list[str], tuple[str, ...], MeasureOptions, "tuple[int, int] | None", "tuple[str, ...] | None"]


def measure_task(task: Task) -> tasks.TaskResult:
    """A task of an executor: the result rows of some groups of one setting, as plain Python data.

    ``task`` is (output directory, setting name, groups, metrics, options, parts, the selected annotators); the
    directory is opened here, in the worker, and only the segments of the task's groups are read. With ``parts``
    (k0, k1): the additive statistics of one group's rows in those parts (:func:`.batches.group_part`), no rows.
    """
    path, name, groups, names, options, parts, selected = task
    data = OutputData(Path(path), selected)
    if parts is not None:
        return batches.group_part(data, data.setting(name), groups[0], None, _wants_doc_stats(registry.resolve(names), options), parts)
    return _setting_rows(data, data.setting(name), groups, registry.resolve(names), options, {}, None)


def _group_rows(data: OutputData, setting: Setting, group: str, found: dict[str, batches.LayerPart], metrics: Sequence[Metric],
                options: MeasureOptions) -> list[dict[str, Any]]:
    """The rows of a group whose parts several tasks measured (narrow enough to pivot: read whole, here)."""
    reduced = batches.finish(data, setting, found)
    if reduced is None:
        return _setting_rows(data, setting, [group], metrics, options, {}, None)
    source = GroupSegments(data, setting, metrics, {})
    segs = source.of(group)
    return [row for cell in _reduced(setting, group, reduced) for row in _rows(setting, cell, metrics, segs, options, source.relations)]


def _setting_rows(data: OutputData, setting: Setting, groups: Sequence[str] | None, metrics: Sequence[Metric],
                  options: MeasureOptions, shared: dict[str, dict[Any, Any]], progress: Progress | None) -> list[dict[str, Any]]:
    """The result rows of one setting's groups (all, or ``groups``), groups sorted (:func:`_group_results`)."""
    return [row for rows in _group_results(data, setting, groups, metrics, options, shared, progress) for row in rows]


def _group_results(data: OutputData, setting: Setting, groups: Sequence[str] | None, metrics: Sequence[Metric],
                   options: MeasureOptions, shared: dict[str, dict[Any, Any]], progress: Progress | None,
                   desc: str | None = None) -> Iterator[list[dict[str, Any]]]:
    """The result rows of each of one setting's groups (all, or ``groups``), groups sorted. Each group's segments
    are read with it (:class:`~unitize.dataset.segments.SegmentFile`: one forward pass over the file), so
    memory holds one group's, never the study's, and what Arrow's pool freed is given back after each group
    (:func:`~unitize.dataset.parts.release`); ``shared`` keeps per unit type what cells reuse across
    groups and settings (:attr:`Segments.shared`)."""
    source = GroupSegments(data, setting, metrics, shared)
    fast = columns.fast(setting, data.schema(setting))
    spans = asks_segments(metrics)
    per_doc = _wants_doc_stats(metrics, options)
    sparse = setting.layout.implicit_rows
    # the documents' layout: what span metrics place the segments on (:func:`columns.cells`)
    documents = not sparse or spans or options.by_doc
    # a sparse group's rows come without their documents unless per-document statistics need them (its layout
    # reads them only where an annotator lacks a value), and without the unit index: a matrix reads its rows again
    needed = None if not fast else ["group", "layer", *(["doc_id"] if not sparse or per_doc else []), *(["unit"] if spans and not sparse else []),
                                    *setting.annotators]
    # large crowd groups come reduced; a sparse group as stored, its implicit units counted
    tables: Iterable[batches.GroupRows] = batches.group_tables(data, setting, groups, needed, per_doc, implicit=fast)
    if progress is not None:  # a bar per setting over its groups
        tables = progress(Sized(tables, len([g for g in data.groups(setting) if groups is None or g in groups])), desc or f"agree {setting.name}")
    for group, table, layers, codes in tables:
        segs = source.of(group)
        cells = cells_of(setting, group, table, layers, codes, fast, per_doc, documents) if codes is not None else _reduced(setting, group, table)
        rows = [row for cell in cells for row in _rows(setting, cell, metrics, segs, options, source.relations)]
        del table, codes, segs, cells  # the group's buffers freed, and given back: the next group starts from what the run holds
        release()
        yield rows


def _wants_doc_stats(metrics: Sequence[Metric], options: MeasureOptions) -> bool:
    """Whether the cells need each document's coding statistics: ``--by-doc`` with a coding metric (a span metric's
    rows per document come from its segments)."""
    return options.by_doc and any(m.family is registry.Family.CODING for m in metrics)


def as_json_lines(table: pa.Table | Results) -> Iterable[str]:
    """One JSON object per result row (NaN written as null), a record batch at a time."""
    for row in (r for batch in table.to_batches() for r in batch.to_pylist()):
        clean = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
        yield json.dumps(clean, ensure_ascii=False)
