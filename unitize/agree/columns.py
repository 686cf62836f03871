"""Sufficient statistics straight from the Arrow columns of a wide unit table.

The fast path of ``measure`` for the common case: a wide table (one column per
annotator) of integer values (binary 0/1 or layer bit masks), nulls for a
missing annotator. Each column becomes an int16 code array (−1 = null) with two
Arrow compute kernels, without a float matrix, sorting or pandas; one histogram
of (layer, joint profile) keys gives every layer's statistics. Other tables
(labels, long layout, items) go through :class:`~unitize.agree.data.Matrix`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .data import Setting, sorted_codes
from .stats import PROFILES, Stats, from_codes, from_counts, from_profiles, profile_keys


def _values(column: pa.ChunkedArray) -> np.ndarray:
    """An integer column as int16, null = −1."""
    filled = pc.fill_null(pc.cast(column, pa.int16()), -1)
    return np.concatenate([c.to_numpy() for c in filled.chunks]) if filled.num_chunks != 1 else filled.chunk(0).to_numpy()


def fast(setting: Setting, schema: pa.Schema) -> bool:
    """Whether :func:`group_stats` applies: wide unit data with integer annotator columns."""
    return (
        setting.kind == "units"
        and setting.layout in ("wide", "sparse")
        and setting.value in ("binary", "bitmask")
        and all(pa.types.is_integer(schema.field(a).type) for a in setting.annotators)
    )


def group_stats(
    setting: Setting, table: pa.Table, layer: np.ndarray, n_layers: int, doc: np.ndarray | None = None, n_docs: int = 0
) -> tuple[list[Stats], list[list[Stats]] | None]:
    """The statistics of every layer of one group's rows of a wide integer table, in one pass (a
    histogram of (layer, joint profile) keys) — and with ``doc``, of every (layer, document)."""
    g = group_cells(setting, table, layer, n_layers, doc if doc is not None else np.zeros(table.num_rows, np.int64),
                    max(n_docs, 1), by_doc=doc is not None)
    return g.stats, g.doc_stats


@dataclass
class GroupCells:
    """One group's layers from the columns: statistics, and the documents' layout for span metrics."""

    stats: list[Stats]  # per layer
    doc_stats: list[list[Stats]] | None  # per layer, per document (``by_doc``)
    units: np.ndarray  # (layers, documents): rows (units) of each document in each layer
    presence: np.ndarray  # (layers, documents, annotators) bool: the annotator has a value there


def group_cells(
    setting: Setting, table: pa.Table, layer: np.ndarray, n_layers: int, doc: np.ndarray, n_docs: int, by_doc: bool = False
) -> GroupCells:
    """:func:`group_stats`, and per (layer, document) the units and which annotators have data —
    what alpha-U and gamma need besides the segments (no matrix is built)."""
    columns = [_values(table.column(a)) for a in setting.annotators]
    size = n_layers * n_docs
    # rows come in runs of one (layer, document): count per run, then add the runs up
    change = np.ones(layer.size, bool)
    np.not_equal(doc[1:], doc[:-1], out=change[1:])
    change[1:] |= layer[1:] != layer[:-1]
    starts = np.flatnonzero(change)
    run_cell = layer[starts].astype(np.int64) * n_docs + doc[starts]
    units = np.bincount(run_cell, weights=np.diff(starts, append=layer.size), minlength=size).astype(np.int64).reshape(n_layers, n_docs)
    presence = np.zeros((n_layers, n_docs, len(columns)), bool)
    for k, c in enumerate(columns):
        if starts.size:
            coded = np.logical_or.reduceat(c >= 0, starts)
            presence[:, :, k] = (np.bincount(run_cell, weights=coded, minlength=size) > 0).reshape(n_layers, n_docs)
    top = max((int(c.max()) for c in columns if c.size), default=-1)
    seen = np.zeros(top + 2, dtype=np.int64)
    for c in columns:
        seen += np.bincount(c + 1, minlength=top + 2)  # + 1: null (−1) counts in bin 0
    domain = np.flatnonzero(seen[1:])
    if domain.size != top + 1:  # not 0..top: remap values to codes (the last entry maps −1 to −1)
        lut = np.full(top + 2, -1, dtype=np.int16)
        lut[domain] = np.arange(domain.size)
        columns = [lut[c] for c in columns]
    dom = domain.astype(np.float64)
    per_layer = cell_stats(columns, dom, setting.annotators, layer, n_layers)
    if not by_doc:
        return GroupCells(per_layer, None, units, presence)
    per_doc = cell_stats(columns, dom, setting.annotators, layer.astype(np.int64) * n_docs + doc, size)
    return GroupCells(per_layer, [per_doc[i * n_docs:(i + 1) * n_docs] for i in range(n_layers)], units, presence)


def cell_stats(columns: list[np.ndarray], domain: np.ndarray, annotators: tuple[str, ...], cell: np.ndarray, n_cells: int) -> list[Stats]:
    """The statistics of each cell (rows with the same ``cell`` index) of integer code columns."""
    v, a = domain.size, len(columns)
    size = (v + 1) ** a
    if size * n_cells > PROFILES:  # many values, annotators or cells: cell by cell, the general path
        return [from_codes([c[cell == i] for c in columns], domain, annotators).trimmed() for i in range(n_cells)]
    key = profile_keys(columns, v)
    if n_cells > 1:
        key = key + cell.astype(key.dtype) * key.dtype.type(size)
    counts = np.bincount(key, minlength=size * n_cells).reshape(n_cells, size)
    return [from_profiles(c, domain, annotators).trimmed() for c in counts]


def _label_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """A string or dictionary column as codes into its sorted distinct values (null = −1)."""
    chunks = [pc.dictionary_encode(pc.cast(c, pa.string())) if not pa.types.is_dictionary(c.type) else c for c in column.chunks]
    values = sorted({v for c in chunks for v in c.dictionary.to_pylist() if v is not None})
    index = {v: i for i, v in enumerate(values)}
    parts = []
    for c in chunks:
        lut = np.array([index.get(v, -1) for v in c.dictionary.to_pylist()] + [-1], dtype=np.int32)
        parts.append(lut[pc.fill_null(c.indices, -1).to_numpy()])
    codes = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    return np.arange(len(values), dtype=np.float64), codes, values


def long_stats(
    setting: Setting, table: pa.Table, layer: np.ndarray, n_layers: int, dense_cells: int, by_doc: bool = False
) -> tuple[list[tuple[Stats, int, int, list[tuple[str, Stats]] | None]], list[str] | None] | None:
    """Crowd data: per layer, (statistics from per-unit value counts, annotators, documents, and with
    ``by_doc`` each document's statistics), and the label of each value code (None for numbers), of one
    group's long rows — or None when a layer is narrow enough to pivot (the annotators then keep
    their identity, for Cohen's kappa and the like).

    A unit is (document, unit index); per-unit counts come from one ``bincount`` over the
    documents' units laid end to end, no sort. Null values (a label that did not apply) count for nothing.
    """
    docs, doc = sorted_codes(table.column("doc_id"))
    annotators, ann = sorted_codes(table.column("annotator"))
    unit = table.column("unit").to_numpy()
    longest = np.zeros(len(docs), np.int64)  # per document its last unit: documents laid end to end
    if unit.size:
        runs = np.flatnonzero(np.diff(doc, prepend=-1))  # rows come in runs of one document
        np.maximum.at(longest, doc[runs], np.maximum.reduceat(unit, runs))
    offset = np.concatenate(([0], np.cumsum(longest + 1)))
    span = int(offset[-1])
    key = layer.astype(np.int64) * span + offset[doc] + unit
    present = np.bincount(key, minlength=span * n_layers).reshape(n_layers, span) > 0
    units = present.sum(axis=1)
    raters = (np.bincount(layer * len(annotators) + ann, minlength=n_layers * len(annotators)).reshape(n_layers, -1) > 0).sum(axis=1)
    if np.any(units * raters <= dense_cells):
        return None
    value = table.column("value")
    if setting.value == "label" or pa.types.is_dictionary(value.type) or pa.types.is_string(value.type):
        domain, code, categories = _label_codes(value)
    else:
        categories = None
        code = _values(value)
        domain = np.flatnonzero(np.bincount(code[code >= 0])) if code.size else np.zeros(0, np.int64)
        lut = np.full(int(domain.max()) + 2 if domain.size else 1, -1, dtype=np.int32)
        lut[domain] = np.arange(domain.size)
        code, domain = lut[code], domain.astype(np.float64)
    v = domain.size
    ok = code >= 0
    counts = np.bincount(key[ok] * v + code[ok], minlength=span * n_layers * v).reshape(n_layers, span, v)
    docs_per = (np.bincount(layer * len(docs) + doc, minlength=n_layers * len(docs)).reshape(n_layers, -1) > 0).sum(axis=1)
    per = [(from_counts(counts[i][present[i]], domain).trimmed(), int(raters[i]), int(docs_per[i]),
            _per_doc(counts[i], present[i], offset, docs, domain) if by_doc else None) for i in range(n_layers)]
    return per, categories


def _per_doc(counts: np.ndarray, present: np.ndarray, offset: np.ndarray, docs: list[str], domain: np.ndarray) -> list[tuple[str, Stats]]:
    """Each document's statistics from the value counts of its stretch of units (documents laid end to end)."""
    out = []
    for d, name in enumerate(docs):
        units = present[offset[d]:offset[d + 1]]
        if units.any():
            out.append((name, from_counts(counts[offset[d]:offset[d + 1]][units], domain).trimmed()))
    return out
