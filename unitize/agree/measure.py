"""``unitize agree``: agreement per setting, group and layer of an output directory.

For every unit-matrix dataset (setting), group and layer — and, for separate
layers, all layers together (the RAT's "both", layer ``Arg1+Arg2``) — the
chosen metrics are computed and collected in one results table with the counts
behind each value.
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from contextlib import contextmanager
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import backends, bootstrap, coefficients, columns, stats
from . import data as _data
from .alphau import alpha_u
from .backends import Value, nan
from .data import Matrix, OutputData, Setting
from .data import layer_rows, sorted_codes
from .data import matrix as data_matrix
from .stats import Stats

METRICS = ("alpha-u", "alpha", "fleiss", "cohen", "cohen-mean", "scott", "ac1", "ac2", "percent", "cochran-q", "gamma")
DEFAULT_METRICS = ("alpha-u", "alpha", "fleiss", "cohen", "cochran-q")

RESULT_SCHEMA = pa.schema(
    [
        ("setting", pa.string()),
        ("unit", pa.string()),
        ("approach", pa.string()),
        ("mode", pa.string()),
        ("group", pa.string()),
        ("layer", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
        ("reason", pa.string()),
        ("annotators", pa.int32()),
        ("documents", pa.int32()),
        ("relations", pa.int32()),
        ("units", pa.int64()),
        ("units_used", pa.int64()),
        ("std_err", pa.float64()),
        ("df", pa.float64()),
        ("p_value", pa.float64()),
        ("pair", pa.string()),
        ("level", pa.string()),
        ("params", pa.string()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("annotator_a", pa.string()),
        ("annotator_b", pa.string()),
    ]
)

GAMMA_DEFAULTS = {"alpha": 1.0, "beta": 1.0, "n_samples": 30, "fast": True, "seed": 4577}


def _stack(mats: list[Matrix], layer: str) -> Matrix:
    """Layers of one group laid end to end (the RAT's "both" for coding metrics)."""
    first = mats[0]
    crowd = [m.crowd for m in mats if m.crowd is not None]
    counts = domain = None
    if crowd:  # value counts per layer, on the union of their value domains
        domain = np.unique(np.concatenate([m.value_domain for m in mats]))
        counts = np.concatenate([_on_domain(m.counts, m.value_domain, domain) for m in mats])
    return Matrix(
        setting=first.setting,
        group=first.group,
        layer=layer,
        annotators=first.annotators,
        values=np.concatenate([m.values for m in mats]),
        categories=first.categories,
        docs=first.docs,
        row_doc=np.concatenate([m.row_doc for m in mats]),
        row_unit=np.concatenate([m.row_unit for m in mats]),
        continuum=first,
        crowd=max(crowd) if crowd else None,
        counts=counts,
        value_domain=domain,
    )


def _on_domain(counts: np.ndarray, values: np.ndarray, domain: np.ndarray) -> np.ndarray:
    out = np.zeros((counts.shape[0], domain.size), dtype=counts.dtype)
    out[:, np.searchsorted(domain, values)] = counts
    return out


class _Segments:
    """Per (group, layer): segment rows of one unit type, for alpha-U, gamma and relation counts.

    The relation records per (group, layer, annotator) are gathered with Arrow's group-by; the
    per-segment arrays only when a span metric first asks for them.
    """

    def __init__(self, table: pa.Table | None):
        self.table = table
        self._by_key: dict[tuple[str, str], dict[str, np.ndarray]] | None = None
        self.records: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        if table is None or table.num_rows == 0:
            return
        records = table.column("records").combine_chunks()
        keys = table.select(["group", "layer", "annotator"]).take(pc.list_parent_indices(records))
        flat = keys.append_column("record", pc.list_flatten(records))
        distinct = flat.group_by(["group", "layer", "annotator"]).aggregate([("record", "distinct")])
        for g, layer, a, recs in zip(*(distinct.column(c).to_pylist() for c in ("group", "layer", "annotator", "record_distinct"))):
            self.records[(g, layer)][a].update(recs)

    @property
    def by_key(self) -> dict[tuple[str, str], dict[str, np.ndarray]]:
        if self._by_key is None:
            self._by_key = _segment_arrays(self.table)
        return self._by_key

    def relations(self, group: str, layers: Iterable[str]) -> int | None:
        per: dict[str, set[str]] = defaultdict(set)
        for layer in layers:
            for a, recs in self.records.get((group, layer), {}).items():
                per[a] |= recs
        return max((len(v) for v in per.values()), default=0)


def _segment_arrays(table: pa.Table | None) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Per (group, layer): the segments' documents, annotators, labels and unit extents."""
    out: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    if table is None or table.num_rows == 0:
        return out
    cols = {n: table.column(n).to_pylist() for n in ("group", "layer", "doc_id", "annotator", "label")}
    u0 = table.column("unit_begin").to_numpy()
    u1 = table.column("unit_end").to_numpy()
    rows: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, key in enumerate(zip(cols["group"], cols["layer"])):
        rows[key].append(i)
    for key, idx in rows.items():
        ix = np.array(idx, dtype=np.int64)
        out[key] = {
            "doc": np.array([cols["doc_id"][i] for i in idx], dtype=object),
            "annotator": np.array([cols["annotator"][i] for i in idx], dtype=object),
            "label": np.array([cols["label"][i] or key[1] for i in idx], dtype=object),
            "u0": u0[ix].astype(np.int64),
            "u1": u1[ix].astype(np.int64),
        }
    return out


def _continuum(m: Matrix) -> tuple[np.ndarray, list[str], int, str | None]:
    """Documents every annotator coded, their offsets on the continuum, annotators, L (or a reason)."""
    presence = m.doc_presence()
    cols = presence.any(axis=0)
    annotators = [a for a, c in zip(m.annotators, cols) if c]
    if len(annotators) < 2:
        return np.zeros(0, np.int64), annotators, 0, "fewer than two annotators with data"
    complete = presence[:, cols].all(axis=1)
    if not complete.any():
        return np.zeros(0, np.int64), annotators, 0, "no document is coded by every annotator"
    n = np.where(complete, m.doc_units(), 0)
    offset = np.concatenate(([0], np.cumsum(n)[:-1]))
    offset = np.where(complete, offset, -1)
    return offset, annotators, int(n.sum()), None


def _unit_positions(seg: dict[str, np.ndarray], docs: list[str], offset: np.ndarray, approach: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments of used documents as (row index, begin, end) on the continuum; boundary: the end units."""
    index = {d: i for i, d in enumerate(docs)}
    di = np.array([index.get(d, -1) for d in seg["doc"]], dtype=np.int64)
    use = di >= 0
    use[use] = offset[di[use]] >= 0
    rows = np.nonzero(use)[0]
    base = offset[di[rows]]
    b, e = seg["u0"][rows] + base, seg["u1"][rows] + base
    if approach == "boundary":
        last = e - 1
        two = last > b
        rows = np.concatenate([rows, rows[two]])
        b, e = np.concatenate([b, last[two]]), np.concatenate([b + 1, e[two]])
    return rows, b, e


def _study(segs: _Segments, m: Matrix, layers: Sequence[str], by_label: bool):
    offset, annotators, length, reason = _continuum(m)
    if reason:
        return None, annotators, length, reason
    study: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for layer in layers:
        seg = segs.by_key.get((m.group, layer))
        if seg is None:
            continue
        rows, b, e = _unit_positions(seg, m.docs, offset, m.setting.approach)
        cats = seg["label"][rows] if by_label else np.full(rows.size, layer, dtype=object)
        ann = seg["annotator"][rows]
        for cat in sorted(set(cats.tolist())):
            per = []
            for a in annotators:
                sel = (cats == cat) & (ann == a)
                order = np.argsort(b[sel], kind="stable")
                per.append((b[sel][order], e[sel][order]))
            study[f"{layer}:{cat}" if by_label else layer] = per
    if length == 0:
        return None, annotators, 0, "empty continuum: the documents have no units"
    return study, annotators, length, None


def _alpha_u(segs: _Segments | None, m: Matrix, layers: Sequence[str]) -> Value:
    if m.setting.kind == "items":
        return nan("alpha-U needs segments on a continuum; item labels have none")
    if segs is None:
        return nan(f"no segments/{m.setting.unit}.parquet in the output directory")
    study, annotators, length, reason = _study(segs, m, layers, by_label=m.setting.value == "label")
    if reason:
        return nan(reason, units_used=length)
    if not study:
        return nan("no annotator marked a unit (no expected disagreement)", units_used=length)
    res = alpha_u(study, length)
    params = {"observed": res.observed, "expected": res.expected, "annotators": annotators}
    if np.isnan(res.alpha):
        return nan("no expected disagreement", units_used=length, params=params)
    return Value(res.alpha, units_used=length, params=params)


def _gamma(segs: _Segments | None, m: Matrix, layers: Sequence[str], options: dict[str, Any]) -> Value:
    if m.setting.kind == "items":
        return nan("gamma needs segments on a continuum; item labels have none")
    try:
        from pyannote.core import Segment
        from pygamma_agreement import CombinedCategoricalDissimilarity, Continuum
    except ImportError:
        return nan("pygamma-agreement is not installed (pip install 'unitize[gamma]')")
    if segs is None:
        return nan(f"no segments/{m.setting.unit}.parquet in the output directory")
    study, annotators, length, reason = _study(segs, m, layers, by_label=m.setting.value == "label")
    if reason:
        return nan(reason, units_used=length)
    continuum = Continuum()
    for cat, per in (study or {}).items():
        for a, (b, e) in zip(annotators, per):
            for x, y in zip(b.tolist(), e.tolist()):
                continuum.add(a, Segment(float(x), float(y)), cat)
    if len(continuum.annotators) < 2 or continuum.num_units < 2:
        return nan("gamma needs at least two annotators with units", units_used=length)
    np.random.seed(int(options["seed"]))
    d = CombinedCategoricalDissimilarity(alpha=float(options["alpha"]), beta=float(options["beta"]))
    with _captured_logging() as messages:
        try:
            res = backends._quiet(continuum.compute_gamma, d, n_samples=int(options["n_samples"]), fast=bool(options["fast"]))
        except Exception as exc:  # pygamma raises assorted errors on degenerate continua
            return nan(f"pygamma-agreement: {type(exc).__name__}: {exc}", units_used=length)
    params = {**options, "positions": "units on the continuum"}
    if messages:
        params["messages"] = dict(Counter(messages))
    return Value(float(res.gamma), units_used=length, params=params)


@contextmanager
def _captured_logging() -> Iterator[list[str]]:
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


#: metrics that compare annotators as persons (pairs, blocks, whole segmentations), so are not
#: defined on rater slots (long-layout crowd data, see data._pivot_long)
_NEEDS_IDENTITY = ("cohen", "cohen-mean", "scott", "cochran-q", "alpha-u", "gamma")


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


def _annotators(cell: _Cell) -> int:
    if cell.crowd is not None:
        return cell.crowd
    return int((cell.stats.annotator_counts().sum(axis=1) > 0).sum())


def _rows(setting: Setting, cell: _Cell, metrics: Sequence[str], segs: _Segments | None, options: dict[str, Any]) -> list[dict[str, Any]]:
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
            values = [_alpha_u(segs, cell.matrix(), cell.layers)]
        elif metric == "gamma":
            values = [_gamma(segs, cell.matrix(), cell.layers, options["gamma"])]
        else:
            values = _coding(metric, cell.stats, level, setting.value == "binary")
            if options["ci"] and metric in bootstrap.RESAMPLED:
                values = [bootstrap.interval(metric, cell.stats, v, level, options["ci"]) for v in values]
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
                }
            )
    return out


def _lazy(build: Callable[[], Matrix]) -> Callable[[], Matrix]:
    built: list[Matrix] = []

    def matrix() -> Matrix:
        if not built:
            built.append(build())
        return built[0]

    return matrix


def _layers(setting: Setting, layer: str) -> list[str]:
    return (list(setting.layer_bits) or layer.split("+")) if setting.mode == "combined" else [layer]


def _cells(setting: Setting, group: str, table: pa.Table, layers: list[str], codes: np.ndarray, fast: bool) -> Iterator[_Cell]:
    """The cells of one group: each layer, and for separate layers all layers together (the RAT's "both")."""
    per = []
    if fast:  # statistics of every layer straight from the columns; the matrix only if a span metric asks
        doc_names, doc = sorted_codes(table.column("doc_id"))
        docs = (np.bincount(codes * len(doc_names) + doc, minlength=len(layers) * len(doc_names))
                .reshape(len(layers), -1) > 0).sum(axis=1)
        for i, (layer, s) in enumerate(zip(layers, columns.group_stats(setting, table, codes, len(layers)))):
            build = lambda i=i, layer=layer: data_matrix(setting, group, layer, layer_rows(table, codes, i))  # noqa: E731
            per.append(_Cell(group, layer, _layers(setting, layer), s, int(docs[i]), None, _lazy(build)))
    elif crowd := (columns.long_stats(setting, table, codes, len(layers), _data.DENSE_CELLS)
                   if setting.kind == "units" and setting.layout == "long" else None):
        for i, (layer, (s, raters, docs)) in enumerate(zip(layers, crowd)):
            build = lambda i=i, layer=layer: data_matrix(setting, group, layer, layer_rows(table, codes, i))  # noqa: E731
            per.append(_Cell(group, layer, _layers(setting, layer), s, docs, raters, _lazy(build)))
    else:
        for i, layer in enumerate(layers):
            m = data_matrix(setting, group, layer, layer_rows(table, codes, i))
            per.append(_Cell(group, m.layer, _layers(setting, m.layer), stats.from_matrix(m),
                             len(m.docs) if m.docs else None, m.crowd, lambda m=m: m))
    yield from per
    if setting.kind == "units" and setting.mode != "combined" and len(per) > 1:
        names = [c.layer for c in per]
        both = sum((c.stats for c in per[1:]), per[0].stats)  # the stacked layers' statistics: the additive reduction
        crowd = [c.crowd for c in per if c.crowd is not None]
        yield _Cell(group, "+".join(names), names, both, per[0].docs, max(crowd) if crowd else None,
                    _lazy(lambda: _stack([c.matrix() for c in per], "+".join(names))))


def measure(
    out: Path | OutputData,
    metrics: Sequence[str] = DEFAULT_METRICS,
    settings: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    gamma: dict[str, Any] | None = None,
    ci: bootstrap.Options | None = None,
) -> pa.Table:
    """The results table of ``unitize agree`` for an output directory.

    Per (setting, group, layer) the matrix is read once and reduced to its
    sufficient statistics; every coding metric comes from them.
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
    options = {"gamma": {**GAMMA_DEFAULTS, **(gamma or {})}, "ci": ci}
    spans = any(m in ("alpha-u", "gamma") for m in metrics)
    rows: list[dict[str, Any]] = []
    segment_cache: dict[str, _Segments | None] = {}
    for setting in chosen:
        segs = None
        if setting.kind == "units" and setting.unit:
            if setting.unit not in segment_cache:
                table = data.segments(setting.unit)
                segment_cache[setting.unit] = _Segments(table) if table is not None else None
            segs = segment_cache[setting.unit]
        fast = columns.fast(setting, pq.read_schema(setting.path))
        needed = None if spans or not fast else ["group", "layer", "doc_id", *setting.annotators]
        for group, table, layers, codes in data.group_tables(setting, groups, needed):
            for cell in _cells(setting, group, table, layers, codes, fast):
                rows += _rows(setting, cell, metrics, segs, options)
    return pa.Table.from_pylist(rows, schema=RESULT_SCHEMA)


def as_json_lines(table: pa.Table) -> Iterable[str]:
    """One JSON object per result row (NaN written as null)."""
    for row in table.to_pylist():
        clean = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
        yield json.dumps(clean, ensure_ascii=False)
