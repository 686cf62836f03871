"""Unit matrices: marks per unit, in every mode and layout (DESIGN.md §4, steps 4–5).

:class:`Unitized` is a validated, unitized span corpus: its segments are computed,
its unit matrices are built on demand, one (group, layer) table at a time, so
memory stays bounded by the largest group. ``interval`` marks every unit of a
segment, ``boundary`` its first and last; ``separate`` gives one binary matrix
per layer, ``combined`` the bit mask of the layers, ``labels`` the label of the
covering segment. The wide layout has a column per annotator (null = annotator
missing), the long layout a row per (unit, annotator) that exists. Pure NumPy and
Arrow, no I/O.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa

from .config import Settings
from .errors import RunError
from .findings import ERROR, count_by_severity
from .model import Corpus, Finding
from .schema import FORMAT_VERSION, setting_name, units_schema
from .segments import UnitResult
from .spaces import UnitSpace, cumulative
from .unitizers import label_codes, label_dictionary, mark
from .validate import Validation

#: labels mode: the value of a unit no segment of the annotator covers (null = annotator missing)
NOT_ANNOTATED = "O"
#: long layout: rows per table written (whole documents per table)
LONG_BATCH_ROWS = 1 << 20


@dataclass(frozen=True)
class Frame:
    """Row layout of a group's matrices in one unit space (shared by its layers and modes)."""

    docs: list[str]
    #: index of each of ``docs`` in the unit space
    di: np.ndarray
    #: units per document
    n: np.ndarray
    total: int
    #: first row of each document
    row_base: np.ndarray
    #: per document of the unit space: its position in ``docs``, or -1
    position: np.ndarray
    #: the ``doc_id``, ``unit``, ``begin`` and ``end`` columns
    columns: dict[str, pa.Array]


def group_frame(space: UnitSpace, docs: list[str]) -> Frame:
    """The rows of a matrix over ``docs`` (sorted), every unit of every document."""
    doc_index = {d: i for i, d in enumerate(space.doc_ids)}
    di = np.array([doc_index[d] for d in docs], dtype=np.int64)
    n = space.n_units[di]
    total = int(n.sum())
    row_base = cumulative(n)
    doc_col = np.repeat(np.arange(di.size, dtype=np.int32), n)
    local = np.arange(total, dtype=np.int64) - np.repeat(row_base, n)
    glob = local + np.repeat(space.base[di], n)
    begin, end = space.local_extent(np.repeat(di, n), glob)
    position = np.full(len(space.doc_ids), -1, dtype=np.int64)
    position[di] = np.arange(di.size)
    return Frame(
        docs=docs,
        di=di,
        n=n,
        total=total,
        row_base=row_base,
        position=position,
        columns={
            "doc_id": pa.DictionaryArray.from_arrays(pa.array(doc_col), pa.array(docs, pa.string())),
            "unit": pa.array(local.astype(np.int32)),
            "begin": pa.array(begin.astype(np.int32)),
            "end": pa.array(end.astype(np.int32)),
        },
    )


def value_array(values: Any, nulls: np.ndarray | None) -> pa.Array:
    """A column of unit values: uint8 marks, or ``(indices, dictionary)`` labels; ``nulls`` masks missing."""
    if isinstance(values, tuple):
        indices, dictionary = values
        return pa.DictionaryArray.from_arrays(pa.array(indices, type=pa.int32(), mask=nulls), pa.array(dictionary, pa.string()))
    return pa.array(values, type=pa.uint8(), mask=nulls)


def _constant(value: str, rows: int) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array([value], pa.string()))


@dataclass
class Unitized:
    """A validated, unitized span corpus: segments now, unit matrices on demand."""

    settings: Settings
    corpus: Corpus
    validation: Validation
    groups: list[str]
    layers: list[str]
    annotators: list[str]
    spaces: dict[str, UnitSpace]
    results: dict[str, UnitResult]
    findings: list[Finding]
    accounting: dict[str, Any]
    #: "wide" (a column per annotator) or "long" (a row per unit and annotator)
    layout: str = "wide"
    #: labels mode: every label, sorted (bit i of a label code = labels[i])
    labels: list[str] = field(default_factory=list)
    #: per group, per document: indices of the annotators with a submission (long layout rows)
    present: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    kind: str = "spans"

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    def documents_in(self, group: str) -> list[str]:
        """Documents of a group's unit universe, sorted."""
        return sorted(self.validation.universe.get(group, {}))

    def summary(self) -> dict[str, Any]:
        """Counts a person (or a script) wants after a run."""
        by_code = Counter(f.code for f in self.findings)
        universe = self.validation.universe
        return {
            "documents": len(self.corpus.documents),
            "groups": len(self.groups),
            "groups_with_documents": sum(1 for g in self.groups if universe.get(g)),
            "annotators": self.annotators,
            "layers": list(self.settings.layers),
            "document_group_pairs": sum(len(v) for v in universe.values()),
            "findings": count_by_severity(self.findings),
            "findings_by_code": dict(sorted(by_code.items())),
            "segments": {u: r.segments.num_rows for u, r in self.results.items()},
        }

    # -- public matrix access --

    def datasets(self) -> list[tuple[str, pa.Schema, Callable[[], Iterator[pa.Table]]]]:
        """The ``units/`` datasets of the run: (setting name, schema, its tables), one per setting."""
        return [
            (setting_name(u, a, m), self.matrix_schema(u, a, m), lambda u=u, a=a, m=m: self.matrices(u, a, m))
            for (u, a) in self.settings.pairs
            for m in self.settings.modes
        ]

    def matrix_schema(self, unit: str, approach: str, mode: str) -> pa.Schema:
        """The Arrow schema (with the ``unitize`` metadata) of one setting's unit matrices."""
        meta: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "annotators": self.annotators,
            "unit": unit,
            "approach": approach,
            "mode": mode,
            "value": {"combined": "bitmask", "labels": "label"}.get(mode, "binary"),
            "layout": self.layout,
            "tokenizer": self.settings.tokenizer if unit == "word" else None,
            "settings": self.settings.resolved(with_output=False),
        }
        if mode == "combined":
            meta["layer_bits"] = {layer: 1 << i for i, layer in enumerate(self.settings.layers)}
        if mode == "labels":
            meta["not_annotated"] = NOT_ANNOTATED
            meta["labels"] = self.labels
        return units_schema(self.annotators, meta)

    def matrices(self, unit: str, approach: str, mode: str = "separate") -> Iterator[pa.Table]:
        """Unit matrices, one table per (group, layer) — or per group in combined mode — in sorted order."""
        schema = self.matrix_schema(unit, approach, mode)
        for group in self.groups:
            if self.validation.universe.get(group):
                yield from self._group_tables(schema, unit, approach, mode, group, self.layers)

    def matrix(self, group: str, layer: str, unit: str = "char", approach: str = "interval") -> pa.Table:
        """One (group, layer) unit matrix as a table; empty when the group has no documents."""
        if unit not in self.results:
            raise RunError(f"unit {unit!r} was not computed; settings have units {', '.join(self.results)}")
        if layer not in self.layers:
            raise RunError(f"layer {layer!r} was not unitized; layers are {', '.join(self.layers)}")
        schema = self.matrix_schema(unit, approach, "separate")
        if group not in self.groups or not self.validation.universe.get(group):
            return schema.empty_table()
        # the long layout comes in batches of documents
        return pa.concat_tables(list(self._group_tables(schema, unit, approach, "separate", group, [layer])))

    # -- building --

    def _block(self, unit: str, group: str, layer: str, annotator: int) -> int:
        """First key of an (group, layer, annotator)'s block of merged segments (keys run over documents)."""
        n_d = len(self.spaces[unit].doc_ids)
        return ((self.groups.index(group) * len(self.layers) + self.layers.index(layer)) * len(self.annotators) + annotator) * n_d

    def _marks(self, unit: str, group: str, layer: str, approach: str, frame: Frame) -> dict[str, np.ndarray]:
        """Per annotator, the 0/1 marks of a (group, layer) matrix."""
        res, space = self.results[unit], self.spaces[unit]
        n_d = len(space.doc_ids)
        out = {}
        for ai, annotator in enumerate(self.annotators):
            lo_key = self._block(unit, group, layer, ai)
            lo, hi = np.searchsorted(res.key, [lo_key, lo_key + n_d])
            doc = res.doc[lo:hi]
            pos = frame.position[doc]
            keep = pos >= 0
            offset = frame.row_base[pos[keep]] - space.base[doc[keep]]
            out[annotator] = mark(frame.total, res.u0[lo:hi][keep] + offset, res.u1[lo:hi][keep] + offset, approach)
        return out

    def _label_marks(self, unit: str, group: str, layer: str, approach: str, frame: Frame) -> dict[str, tuple]:
        """Per annotator, the dictionary-encoded labels of a (group, layer) matrix."""
        res, space = self.results[unit], self.spaces[unit]
        n_lab = max(len(self.labels), 1)
        n_d = len(space.doc_ids)
        out = {}
        for ai, annotator in enumerate(self.annotators):
            lo_key = self._block(unit, group, layer, ai)
            lo, hi = np.searchsorted(res.label_key, [lo_key * n_lab, (lo_key + n_d) * n_lab])
            k = res.label_key[lo:hi]
            doc = (k // n_lab) % n_d
            pos = frame.position[doc]
            keep = pos >= 0
            offset = frame.row_base[pos[keep]] - space.base[doc[keep]]
            codes = label_codes(
                frame.total, res.label_u0[lo:hi][keep] + offset, res.label_u1[lo:hi][keep] + offset, (k % n_lab)[keep], approach
            )
            out[annotator] = label_dictionary(codes, self.labels, NOT_ANNOTATED)
        return out

    def _nulls(self, group: str, frame: Frame) -> dict[str, np.ndarray | None]:
        """Per annotator: a row mask of nulls (annotator missing), or None when there are none."""
        expected = set(self.validation.annotators.get(group, []))
        missing_by_doc = self.validation.universe.get(group, {})
        out: dict[str, np.ndarray | None] = {}
        for annotator in self.annotators:
            if annotator not in expected:
                out[annotator] = np.ones(frame.total, dtype=bool)
                continue
            docs_missing = np.array([annotator in missing_by_doc[d] for d in frame.docs], dtype=bool)
            out[annotator] = np.repeat(docs_missing, frame.n) if docs_missing.any() else None
        return out

    def _wide_table(self, schema: pa.Schema, group: str, layer: str, frame: Frame, values, nulls) -> pa.Table:
        columns = [
            _constant(group, frame.total),
            frame.columns["doc_id"],
            _constant(layer, frame.total),
            frame.columns["unit"],
            frame.columns["begin"],
            frame.columns["end"],
        ]
        columns += [value_array(values[a], nulls[a]) for a in self.annotators]
        return pa.Table.from_arrays(columns, schema=schema)

    def _group_tables(self, schema: pa.Schema, unit: str, approach: str, mode: str, group: str, layers: list[str]) -> Iterator[pa.Table]:
        frame = group_frame(self.spaces[unit], self.documents_in(group))
        if self.layout == "long":
            yield from _LongRows(self, schema, unit, approach, group, frame).tables(mode, layers)
            return
        nulls = self._nulls(group, frame)
        if mode == "labels":
            for layer in layers:
                yield self._wide_table(schema, group, layer, frame, self._label_marks(unit, group, layer, approach, frame), nulls)
        elif mode == "combined":
            combined = {a: np.zeros(frame.total, dtype=np.uint8) for a in self.annotators}
            for bit, layer in enumerate(self.settings.layers):
                for a, v in self._marks(unit, group, layer, approach, frame).items():
                    combined[a] |= v << np.uint8(bit)
            yield self._wide_table(schema, group, "+".join(self.settings.layers), frame, combined, nulls)
        else:
            for layer in layers:
                yield self._wide_table(schema, group, layer, frame, self._marks(unit, group, layer, approach, frame), nulls)


class _LongRows:
    """The long layout of one group: a row per (unit, annotator) that exists, sorted by (doc, annotator, unit).

    Only annotators with a submission for a document have rows there (a *pair*
    is a (document, annotator) with rows). Tables hold about
    :data:`LONG_BATCH_ROWS` rows, whole documents each, so memory stays bounded
    for crowd data sets.
    """

    def __init__(self, unitized: Unitized, schema: pa.Schema, unit: str, approach: str, group: str, frame: Frame):
        self.u, self.schema, self.approach, self.group, self.frame = unitized, schema, approach, group, frame
        self.res, self.space = unitized.results[unit], unitized.spaces[unit]
        self.n_a, self.n_d = len(unitized.annotators), len(self.space.doc_ids)
        self.n_lab = max(len(unitized.labels), 1)
        present = unitized.present.get(group, {})
        self.p_pos = np.array([pos for pos, d in enumerate(frame.docs) for _ in present.get(d, ())], dtype=np.int64)
        self.p_ann = np.array([a for d in frame.docs for a in present.get(d, ())], dtype=np.int64)
        self.n = frame.n[self.p_pos]
        self.pair_base = cumulative(self.n)
        self.pair_code = self.p_pos * self.n_a + self.p_ann  # ascending: documents in order, annotators sorted within

    def batches(self) -> list[tuple[int, int]]:
        """Ranges of pairs ``[a, b)`` of about :data:`LONG_BATCH_ROWS` rows that never split a document."""
        p_pos = self.p_pos
        cuts = [0]
        for p in np.flatnonzero(np.r_[True, p_pos[1:] != p_pos[:-1]]).tolist() if p_pos.size else []:
            if self.pair_base[p] - self.pair_base[cuts[-1]] >= LONG_BATCH_ROWS:
                cuts.append(p)
        cuts.append(p_pos.size)
        return list(zip(cuts[:-1], cuts[1:]))

    def _pairs_of(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pair index of merged segments with keys ``k``, and a mask of those that have one."""
        if self.pair_code.size == 0:
            return np.zeros(k.size, dtype=np.int64), np.zeros(k.size, dtype=bool)
        pos = self.frame.position[k % self.n_d]
        code = pos * self.n_a + (k // self.n_d) % self.n_a
        p = np.minimum(np.searchsorted(self.pair_code, code), self.pair_code.size - 1)
        return p, (pos >= 0) & (self.pair_code[p] == code)

    def segments(self, layer: str, labelled: bool) -> tuple[np.ndarray, ...]:
        """(pair, u0, u1 local to the document, label) of a layer's segments that have rows."""
        res = self.res
        lo_key = self.u._block(self.space.unit, self.group, layer, 0)
        keys, u0, u1 = (res.label_key, res.label_u0, res.label_u1) if labelled else (res.key, res.u0, res.u1)
        scale = self.n_lab if labelled else 1
        lo, hi = np.searchsorted(keys, [lo_key * scale, (lo_key + self.n_a * self.n_d) * scale])
        k = keys[lo:hi]
        p, ok = self._pairs_of(k // scale)
        base = self.space.base[(k // scale) % self.n_d]
        return p[ok], (u0[lo:hi] - base)[ok], (u1[lo:hi] - base)[ok], (k % scale)[ok]

    def values(self, segs: tuple[np.ndarray, ...], a: int, b: int, labelled: bool) -> Any:
        """The values of the rows of pairs ``[a, b)``."""
        p, u0, u1, lab = segs
        sel = (p >= a) & (p < b)
        offset = self.pair_base[p[sel]] - self.pair_base[a]
        total = int(self.pair_base[b - 1] + self.n[b - 1] - self.pair_base[a]) if b > a else 0
        if labelled:
            codes = label_codes(total, u0[sel] + offset, u1[sel] + offset, lab[sel], self.approach)
            return label_dictionary(codes, self.u.labels, NOT_ANNOTATED)
        return mark(total, u0[sel] + offset, u1[sel] + offset, self.approach)

    def table(self, layer_name: str, a: int, b: int, vals: Any) -> pa.Table:
        """The long table of pairs ``[a, b)``."""
        nb = self.n[a:b]
        total = int(nb.sum())
        frame = self.frame
        rows = pa.array(
            np.repeat(frame.row_base[self.p_pos[a:b]] - (self.pair_base[a:b] - self.pair_base[a]), nb) + np.arange(total, dtype=np.int64)
        )
        columns = [
            _constant(self.group, total),
            pa.DictionaryArray.from_arrays(pa.array(np.repeat(self.p_pos[a:b], nb).astype(np.int32)), pa.array(frame.docs, pa.string())),
            _constant(layer_name, total),
            frame.columns["unit"].take(rows),
            frame.columns["begin"].take(rows),
            frame.columns["end"].take(rows),
            pa.DictionaryArray.from_arrays(pa.array(np.repeat(self.p_ann[a:b], nb).astype(np.int32)), pa.array(self.u.annotators, pa.string())),
            value_array(vals, None),
        ]
        return pa.Table.from_arrays(columns, schema=self.schema)

    def tables(self, mode: str, layers: list[str]) -> Iterator[pa.Table]:
        batches = self.batches()
        if mode == "combined":
            layer_order = self.u.settings.layers
            segs = [self.segments(layer, False) for layer in layer_order]
            for a, b in batches:
                combined = np.zeros(int(self.n[a:b].sum()), dtype=np.uint8)
                for bit, s in enumerate(segs):
                    combined |= self.values(s, a, b, False) << np.uint8(bit)
                yield self.table("+".join(layer_order), a, b, combined)
            return
        labelled = mode == "labels"
        for layer in layers:
            segs = self.segments(layer, labelled)
            for a, b in batches:
                yield self.table(layer, a, b, self.values(segs, a, b, labelled))
