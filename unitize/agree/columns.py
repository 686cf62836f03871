"""Sufficient statistics straight from the Arrow columns of a wide unit table.

The fast path of ``measure`` for the common case: a wide table (one column per
annotator) of integer values (binary 0/1 or layer bit masks), nulls for a
missing annotator. Each column becomes an int16 code array (−1 = null) with two
Arrow compute kernels, without a float matrix, sorting or pandas; one histogram
of (layer, joint profile) keys gives every layer's statistics. Other tables
(labels, long layout, items) go through :class:`~unitize.dataset.directory.Matrix`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..dataset.directory import Setting, layer_rows
from ..layouts.sparse import Stored
from ..metrics.stats import PROFILES, Stats, all_zero, from_codes, from_counts, from_profiles, profile_keys
from ..model.codes import sorted_codes


def _values(column: pa.ChunkedArray) -> np.ndarray:
    """An integer column as int16, null = −1."""
    filled = pc.fill_null(pc.cast(column, pa.int16()), -1)
    return np.concatenate([c.to_numpy() for c in filled.chunks]) if filled.num_chunks != 1 else filled.chunk(0).to_numpy()


def _text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def fast(setting: Setting, schema: pa.Schema) -> bool:
    """Whether :func:`group_stats` applies: wide unit data with integer annotator columns, or label
    columns (strings, dictionary-encoded or not)."""
    if setting.kind != "units" or not setting.layout.columnar:
        return False
    types = [schema.field(a).type for a in setting.annotators]
    if setting.value in ("binary", "bitmask"):
        return all(pa.types.is_integer(t) for t in types)
    return setting.value == "label" and all(_text(t.value_type if pa.types.is_dictionary(t) else t) for t in types)


def _labels(table: pa.Table, annotators: tuple[str, ...], extra: str | None) -> tuple[list[np.ndarray], list[str]]:
    """Label columns as int16 codes (null = −1) into the sorted labels of the rows (and ``extra``)."""
    columns = [[pc.dictionary_encode(c) if not pa.types.is_dictionary(c.type) else c for c in table.column(a).chunks]
               for a in annotators]
    names = sorted({v for col in columns for c in col for v in c.dictionary.to_pylist() if v is not None}
                   | ({extra} if extra is not None else set()))
    index = {v: i for i, v in enumerate(names)}
    out = []
    for col in columns:
        parts = []
        for c in col:
            lut = np.array([index.get(v, -1) for v in c.dictionary.to_pylist()] + [-1], dtype=np.int16)
            parts.append(lut[pc.fill_null(c.indices, -1).to_numpy(zero_copy_only=False)])
        out.append(np.concatenate(parts) if parts else np.zeros(0, np.int16))
    return out, names


def group_stats(
    setting: Setting, table: pa.Table, layer: np.ndarray, n_layers: int, doc: np.ndarray | None = None, n_docs: int = 0
) -> tuple[list[Stats], list[list[Stats]] | None]:
    """The statistics of every layer of one group's rows of a wide integer table, in one pass (a
    histogram of (layer, joint profile) keys) — and with ``doc``, of every (layer, document)."""
    g = group_cells(setting, table, layer, n_layers, doc, max(n_docs, 1), by_doc=doc is not None)
    return g.stats, g.doc_stats


@dataclass
class GroupCells:
    """One group's layers from the columns: statistics, and the documents' layout for span metrics."""

    stats: list[Stats]  # per layer
    doc_stats: list[list[Stats]] | None  # per layer, per document (``by_doc``)
    docs: np.ndarray  # (layers,): the documents with units in each layer
    units: np.ndarray | None  # (layers, documents): rows (units) of each document in each layer
    presence: np.ndarray | None  # (layers, documents, annotators) bool: the annotator has a value there
    categories: list[list[str]] | None = None  # label data: per layer, the label of each value code


def cells(setting: Setting, table: pa.Table | Stored, layer: np.ndarray, n_layers: int, by_doc: bool = False,
          documents: bool = True) -> tuple[list[str], GroupCells]:
    """A group's documents (sorted) and :func:`group_cells` of its rows: dense rows, or a sparse
    group as stored (:class:`~.sparse.Stored`) whose implicit rows are counted, not built.

    ``documents``: the per-document layout (``units``, ``presence``) is wanted, as span metrics
    need it. A sparse group's statistics need no document but for ``by_doc``, and neither does
    its layout while no annotator lacks a value: every layer holds each unit of each document
    of the group, and every annotator codes them all. Its rows' ``doc_id`` is then not read
    (:meth:`~.sparse.Stored.documents` reads it when asked)."""
    if isinstance(table, Stored):
        if not by_doc and not (documents and table.missing(setting.annotators)):
            implicit = table.implicit_by_layer(layer)
            g = group_cells(setting, table.table, layer, n_layers, None, 1, False, implicit[:, None])
            n_docs = len(table.docs)
            g.docs = np.full(n_layers, n_docs, np.int64)
            if documents:
                g.units = np.tile(table.units.astype(np.int64), (n_layers, 1))
                g.presence = np.ones((n_layers, n_docs, len(setting.annotators)), bool)
            return table.docs, g
        doc = table.documents()
        return table.docs, group_cells(setting, table.table, layer, n_layers, doc, len(table.docs), by_doc, table.implicit(layer, doc))
    names, doc = sorted_codes(table.column("doc_id"))
    return names, group_cells(setting, table, layer, n_layers, doc, len(names), by_doc)


def layer_table(table: pa.Table | Stored, layer: np.ndarray, i: int) -> pa.Table:
    """The (dense) rows of the group's layer ``i``: what a matrix is built from."""
    return table.layer_rows(i) if isinstance(table, Stored) else layer_rows(table, layer, i)


def group_cells(
    setting: Setting, table: pa.Table, layer: np.ndarray, n_layers: int, doc: np.ndarray | None, n_docs: int, by_doc: bool = False,
    implicit: np.ndarray | None = None,
) -> GroupCells:
    """:func:`group_stats`, and per (layer, document) the units and which annotators have data —
    what alpha-U and gamma need besides the segments (no matrix is built). Without ``doc`` (and
    ``n_docs`` 1), the statistics alone: no per-document layout.

    ``implicit`` (layers × documents), for a sparse group's stored rows: how many more units each
    (layer, document) has, every annotator 0 there. They enter every count — the units, the
    annotators' presence, the value domain, the profile histogram — as those rows would, so the
    statistics equal the dense rows' exactly (integer counts: no rounding anywhere).

    Label columns (``O`` on the implicit units) are coded into the group's sorted labels; each
    layer's statistics then speak of that layer's labels (codes 0… into ``categories``), as a
    matrix of the layer's rows would."""
    size = n_layers * n_docs
    zeros = np.zeros(size, np.int64) if implicit is None else np.asarray(implicit, np.int64).reshape(size)
    names = None
    fill = 0  # the code of the implicit units' value: 0, or the "not annotated" label
    if setting.value == "label":
        empty = setting.not_annotated or "O"
        columns, names = _labels(table, setting.annotators, empty if zeros.any() else None)
        fill = names.index(empty) if zeros.any() else 0
    else:
        columns = [_values(table.column(a)) for a in setting.annotators]
    units, presence = _layout(columns, layer, doc, n_layers, n_docs, zeros) if doc is not None else (None, None)
    top = max((int(c.max()) for c in columns if c.size), default=-1)
    if zeros.any():
        top = max(top, fill)
    seen = np.zeros(top + 2, dtype=np.int64)
    for c in columns:
        seen += np.bincount(c + 1, minlength=top + 2)  # + 1: null (−1) counts in bin 0
    if zeros.any():
        seen[fill + 1] += int(zeros.sum())  # the implicit value, given by every annotator to each implicit unit
    domain = np.flatnonzero(seen[1:])
    if domain.size != top + 1:  # not 0..top: remap values to codes (the last entry maps −1 to −1)
        lut = np.full(top + 2, -1, dtype=np.int16)
        lut[domain] = np.arange(domain.size)
        columns = [lut[c] for c in columns]
        fill = int(lut[fill])
    dom = domain.astype(np.float64)
    per_layer = cell_stats(columns, dom, setting.annotators, layer, n_layers, zeros.reshape(n_layers, n_docs).sum(axis=1), fill)
    per_doc = None
    if by_doc and doc is not None:
        flat = cell_stats(columns, dom, setting.annotators, layer.astype(np.int64) * n_docs + doc, size, zeros, fill)
        per_doc = [flat[i * n_docs:(i + 1) * n_docs] for i in range(n_layers)]
    with_units = (units > 0).sum(axis=1) if units is not None else np.zeros(n_layers, np.int64)  # documents per layer
    if names is None:
        return GroupCells(per_layer, per_doc, with_units, units, presence)
    # label data: each layer's own labels, codes 0… (the domain values are indices into ``names``)
    categories = [[names[int(v)] for v in s.domain] for s in per_layer]
    per_layer = [_renamed(s, np.arange(s.domain.size, dtype=np.float64)) for s in per_layer]
    if per_doc is not None:
        per_doc = [[_renamed(s, np.array([cats.index(names[int(v)]) for v in s.domain], dtype=np.float64)) for s in docs]
                   for cats, docs in zip(categories, per_doc)]
    return GroupCells(per_layer, per_doc, with_units, units, presence, categories)


def _layout(columns: list[np.ndarray], layer: np.ndarray, doc: np.ndarray, n_layers: int, n_docs: int,
            zeros: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per (layer, document): its units, and per annotator whether they have a value there (``zeros``: the
    implicit units of each, coded by every annotator)."""
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
    if zeros.any():
        units += zeros.reshape(n_layers, n_docs)
        presence |= (zeros > 0).reshape(n_layers, n_docs, 1)  # every annotator codes an implicit unit
    return units, presence


def _renamed(s: Stats, values: np.ndarray) -> Stats:
    """``s`` with its domain values renamed (in the same order): the codes of a layer's own labels."""
    return s if np.array_equal(values, s.domain) else s.relabeled(values)


def cell_stats(columns: list[np.ndarray], domain: np.ndarray, annotators: tuple[str, ...], cell: np.ndarray, n_cells: int,
               zeros: np.ndarray | None = None, fill: int = 0) -> list[Stats]:
    """The statistics of each cell (rows with the same ``cell`` index) of integer code columns, and
    of ``zeros[i]`` more units of cell ``i`` on which every annotator gave code ``fill`` (a sparse
    layout's implicit units: one histogram bin, or :func:`~.stats.all_zero` added)."""
    v, a = domain.size, len(columns)
    size = (v + 1) ** a
    zeros = np.zeros(n_cells, np.int64) if zeros is None else zeros
    if size * n_cells > PROFILES:  # many values, annotators or cells: cell by cell, the general path
        out = [from_codes([c[cell == i] for c in columns], domain, annotators) for i in range(n_cells)]
        return [(s + all_zero(int(k), domain, annotators, fill) if k else s).trimmed() for s, k in zip(out, zeros)]
    key = profile_keys(columns, v)
    if n_cells > 1:
        key = key + cell.astype(key.dtype) * key.dtype.type(size)
    counts = np.bincount(key, minlength=size * n_cells).reshape(n_cells, size)
    if zeros.any():
        counts[:, (fill + 1) * sum((v + 1) ** k for k in range(a))] += zeros  # the profile "every annotator gave ``fill``"
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
    """Each document's statistics from the value counts of its stretch of units (documents laid end to end).

    All documents at once: each unit's row (its document, then its value counts) is ranked among
    the distinct rows in lexicographic order (:func:`_ranks`), so that the distinct ranks are each
    document's distinct patterns in the canonical order; the statistics are slices of them, trimmed
    to the values the document has — what :func:`~.stats.from_counts` and ``trimmed`` give document
    by document (:func:`_per_doc_each`)."""
    v = int(domain.size)
    rows = counts[present]
    if v == 0 or not rows.size:
        return _per_doc_each(counts, present, offset, docs, domain)
    doc = np.repeat(np.arange(len(docs)), np.diff(offset))[present]
    rank, size = _ranks([doc, *rows.T])
    units = np.bincount(rank, minlength=size)
    first = np.zeros(size, np.int64)
    first[rank[::-1]] = np.arange(rank.size - 1, -1, -1)  # a unit of each distinct (document, pattern)
    patterns, owner = rows[first].astype(np.int64), doc[first]
    bounds = np.searchsorted(owner, np.arange(len(docs) + 1))
    used = np.zeros((len(docs), v), bool)
    r, c = np.nonzero(patterns)
    used[owner[r], c] = True  # the values each document has
    top = np.zeros(len(docs), np.int64)
    np.maximum.at(top, owner, patterns.sum(axis=1))
    out = []
    for d in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():
        a, b = bounds[d], bounds[d + 1]
        cols = np.flatnonzero(used[d])
        k = cols.size
        out.append((docs[d], Stats(domain[cols], (), np.ascontiguousarray(patterns[a:b][:, cols]), units[a:b].astype(np.int64),
                                   np.zeros((int(top[d]) + 1, 0, k), np.int64), np.zeros((0, 0, k, k), np.int64))))
    return out


def _ranks(columns: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """Per row of the (non-negative integer) columns, its rank among the distinct rows in
    lexicographic order, and how many there are: the columns packed into mixed-radix int64 keys as
    many at a time as fit, the first most significant, each pack ranked with the ranks so far in
    front (as :func:`~.stats._distinct_rows`)."""
    rank, size = np.zeros(columns[0].size, np.int64), 1
    radix = [int(c.max()) + 1 for c in columns]
    start = 0
    while start < len(columns):
        key, width, stop = rank, float(size), start
        while stop < len(columns) and np.log2(width) + np.log2(float(radix[stop])) < 62:
            key = key * radix[stop] + columns[stop]
            width *= float(radix[stop])
            stop += 1
        if stop == start:  # one column too wide to pack with the ranks so far
            key = np.unique(np.stack([rank, columns[stop]], axis=1), axis=0, return_inverse=True)[1]
            stop += 1
        rank = np.unique(key, return_inverse=True)[1].reshape(-1)
        size = int(rank.max()) + 1
        start = stop
    return rank, size


def _per_doc_each(counts: np.ndarray, present: np.ndarray, offset: np.ndarray, docs: list[str], domain: np.ndarray) -> list[tuple[str, Stats]]:
    """:func:`_per_doc` document by document."""
    out = []
    for d, name in enumerate(docs):
        units = present[offset[d]:offset[d + 1]]
        if units.any():
            out.append((name, from_counts(counts[offset[d]:offset[d + 1]][units], domain).trimmed()))
    return out
