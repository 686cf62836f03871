"""The alt-test's span-F1 terms of a long layout (crowd data included): per document, only the pairs of its coders.

A crowd study has thousands of annotators, each coding a few documents: the (instances × annotators ×
annotators) terms of :class:`~.alttest.Instances` would not fit. Here every term is a row — (instance,
annotator, other annotator, term) for each ordered pair of two annotators who coded the document — made
from the segments (``segments/<unit>.parquet``) and who coded which document (the unit rows' ``doc_id`` and
``annotator``), and each human is compared with the candidate from its own rows
(:func:`~unitize.metrics.alttest.compare_rows`). The terms are those of :func:`.alttest._f1` — the exact-match
span F1 of the document, labels too in label settings, 1 when neither marked anything — and an instance is a
document two annotators or more coded, in document order, as there.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..dataset import OutputData, Setting
from ..metrics.alttest import TermRows
from ..model.codes import look_up, sorted_codes


def coders(data: OutputData, setting: Setting, group: str, names: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """A group's documents (sorted) and who coded which: (documents, per coding its document, its annotator in
    ``names``), one row per (document, annotator), sorted by document then annotator; read a part at a time."""
    found = []
    for k, ids in data._row_groups(setting).get(group, []):
        part = data._read_part(setting, k, ids, group, ["doc_id", "annotator"])
        found.append(pa.table({"doc_id": pc.cast(part.column("doc_id"), pa.string()),
                               "annotator": pc.cast(part.column("annotator"), pa.string())}).group_by(["doc_id", "annotator"]).aggregate([]))
    if not found:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = pa.concat_tables(found).group_by(["doc_id", "annotator"]).aggregate([])
    docs, doc = sorted_codes(pairs.column("doc_id"))
    who_names, who = sorted_codes(pairs.column("annotator"))
    index = {a: i for i, a in enumerate(names)}
    lut = np.array([index.get(a, -1) for a in who_names], dtype=np.int64)
    who = lut[who] if who.size else who.astype(np.int64)
    keep = who >= 0
    doc, who = doc[keep].astype(np.int64), who[keep]
    order = np.lexsort((who, doc))
    return docs, doc[order], who[order]


def f1_rows(setting: Setting, group: str, segments: pa.Table | None, names: list[str],
            docs: list[str], doc: np.ndarray, who: np.ndarray) -> TermRows:
    """The span-F1 term of every ordered pair of two coders of each document two annotators or more coded."""
    per_doc = np.bincount(doc, minlength=len(docs))
    used = per_doc >= 2
    instance = np.cumsum(used) - 1  # a used document's instance number
    keep = used[doc]
    doc, who = doc[keep], who[keep]
    i, j = _pairs_within(np.searchsorted(doc, doc), per_doc[doc])  # a coding's document's first coding, and its codings
    a, b, d = who[i], who[j], doc[i]
    size, matched = _span_counts(setting, group, segments, names, docs, len(names))
    m = len(names)
    both = size.get_many(d * m + a) + size.get_many(d * m + b)
    same = matched.get_many((d * m + a) * m + b)
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(both > 0, 2 * same / np.maximum(both, 1), 1.0)
    order = np.lexsort((b, d, a))
    return TermRows(instance[d][order], a[order], b[order], term[order], int(used.sum()))


def _pairs_within(first: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (i, j), i ≠ j, of elements of one run, for elements laid out in runs: per element its run's
    first element and its run's size."""
    i = np.repeat(np.arange(first.size), size)
    j = np.repeat(first, size) + (np.arange(i.size) - np.repeat(np.cumsum(size) - size, size))
    return i[i != j], j[i != j]


class _Counts:
    """Integer keys → counts (0 where absent), looked up many at once."""

    def __init__(self, keys: np.ndarray, counts: np.ndarray) -> None:
        self.keys, self.counts = keys, counts

    def get_many(self, keys: np.ndarray) -> np.ndarray:
        at, hit = look_up(self.keys, keys)
        return np.where(hit, self.counts[at] if self.keys.size else 0, 0).astype(np.float64)


def _span_counts(setting: Setting, group: str, segments: pa.Table | None, names: list[str], docs: list[str],
                 m: int) -> tuple[_Counts, _Counts]:
    """Per (document, annotator) its segments over all layers, and per (document, annotator, other) the segments
    both have — the same extent in units, layer and value (its label in label settings)."""
    empty = _Counts(np.zeros(0, np.int64), np.zeros(0, np.int64))
    if segments is None or segments.num_rows == 0:
        return empty, empty
    table = segments.filter(pc.equal(pc.cast(segments.column("group"), pa.string()), group))
    if table.num_rows == 0:
        return empty, empty
    index = {x: i for i, x in enumerate(docs)}
    doc_names, doc = sorted_codes(table.column("doc_id"))
    d = np.array([index.get(x, -1) for x in doc_names], dtype=np.int64)[doc]
    ann_index = {x: i for i, x in enumerate(names)}
    ann_names, ann = sorted_codes(table.column("annotator"))
    a = np.array([ann_index.get(x, -1) for x in ann_names], dtype=np.int64)[ann]
    layer_names, layer = sorted_codes(table.column("layer"))
    if setting.value == "label":  # a segment's value: its label, or its layer's name when it has none (as placed)
        label_names, label = sorted_codes(pc.fill_null(pc.cast(table.column("label"), pa.string()), ""))
        combo = label.astype(np.int64) * len(layer_names) + layer
        uniq, inverse = np.unique(combo, return_inverse=True)
        named = [label_names[c // len(layer_names)] or layer_names[c % len(layer_names)] for c in uniq.tolist()]
        distinct = {n: i for i, n in enumerate(sorted(set(named)))}
        value = np.array([distinct[n] for n in named], dtype=np.int64)[inverse.reshape(-1)]
    else:
        value = np.zeros(table.num_rows, np.int64)
    u0 = table.column("unit_begin").to_numpy().astype(np.int64)
    u1 = table.column("unit_end").to_numpy().astype(np.int64)
    ok = (d >= 0) & (a >= 0)
    d, a, layer, value, u0, u1 = d[ok], a[ok], layer.astype(np.int64)[ok], value[ok], u0[ok], u1[ok]
    sizes, counts = np.unique(d * m + a, return_counts=True)
    order = np.lexsort((a, u1, u0, value, layer, d))
    key = np.stack([d, layer, value, u0, u1])[:, order]
    new = np.r_[True, np.any(key[:, 1:] != key[:, :-1], axis=0)] if order.size else np.zeros(0, bool)
    start = np.flatnonzero(new)
    run = np.diff(np.r_[start, order.size])
    run_of = np.repeat(np.arange(start.size), run)
    i, j = _pairs_within(start[run_of], run[run_of])
    sa, sd = a[order], d[order]
    pairs, matched = np.unique((sd[i] * m + sa[i]) * m + sa[j], return_counts=True)
    return _Counts(sizes, counts), _Counts(pairs, matched)


def row_terms(data: OutputData, setting: Setting, names: list[str]) -> TermRows:
    """Every group's terms of a units setting as rows, the instances numbered group after group."""
    segments = data.segments(setting.unit) if setting.unit else None
    parts, offset = [], 0
    for group in data.groups(setting):
        docs, doc, who = coders(data, setting, group, names)
        r = f1_rows(setting, group, segments, names, docs, doc, who)
        parts.append((r.instance + offset, r.annotator, r.other, r.term))
        offset += r.instances
    if not parts:
        empty = np.zeros(0, np.int64)
        return TermRows(empty, empty, empty, np.zeros(0), 0)
    instance, annotator, other, term = (np.concatenate(x) for x in zip(*parts))
    order = np.lexsort((other, instance, annotator))
    return TermRows(instance[order], annotator[order], other[order], term[order], offset)
