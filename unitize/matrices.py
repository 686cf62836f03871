"""Unit matrices: marks per unit, in every mode and layout (DESIGN.md §4, steps 4–5).

:class:`Unitized` is a validated, unitized span corpus: its segments are computed,
its unit matrices are built on demand, one (group, layer) table at a time, so
memory stays bounded by the largest group. ``interval`` marks every unit of a
segment, ``boundary`` its first and last; ``separate`` gives one binary matrix
per layer, ``combined`` the bit mask of the layers, ``labels`` the label of the
covering segment. The wide layout has a column per annotator (null = annotator
missing), the sparse layout the same columns on the rows that carry a value or a
null only, the long layout a row per (unit, annotator) that exists.

:meth:`Unitized.part` cuts out a :class:`MatrixSource` of a run of documents: only
NumPy arrays and names, what one work partition of the writer needs (it is
pickled to other processes). Pure NumPy and Arrow, no I/O.
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
from .frames import NOT_ANNOTATED, Frame, constant, group_frame, sparse_columns, sparse_rows, value_array
from .long_rows import LONG_BATCH_ROWS, LongRows
from .model import Corpus, Finding
from .schema import FORMAT_VERSION, setting_name, units_schema
from .segments import UnitResult
from .spaces import UnitSpace
from .unitizers import label_codes, label_dictionary, mark
from .validate import Validation

__all__ = ["LONG_BATCH_ROWS", "NOT_ANNOTATED", "Frame", "MatrixSource", "Marks", "Unitized", "group_frame", "value_array"]

#: a setting as the builders take it: (name, schema, unit, approach, mode)
SettingSpec = tuple[str, pa.Schema, str, str, str]


class _Builder:
    """Building unit matrices from merged segments; needs ``groups``, ``layers``, ``layer_order``,
    ``annotators``, ``labels``, ``layout``, ``spaces``, ``results``, ``universe``, ``expected``, ``present``
    (the fields of :class:`MatrixSource`, which :class:`Unitized` offers too)."""

    def documents_in(self, group: str) -> list[str]:
        """Documents of a group's unit universe, sorted."""
        return sorted(self.universe.get(group, {}))

    def tables_of(self, specs: list[SettingSpec]) -> Iterator[tuple[str, pa.Table]]:
        """(setting name, table) of every setting in ``specs``: per unit type and group, the group's frame
        is built once and serves every approach and mode of that unit; per setting, tables in sorted order."""
        for unit in dict.fromkeys(s[2] for s in specs):
            space = self.spaces[unit]
            for group in self.groups:
                docs = self.documents_in(group)
                if not docs:
                    continue
                frame = group_frame(space, docs, columns=self.layout != "sparse")
                for name, schema, u, approach, mode in specs:
                    if u == unit:
                        for table in self._group_tables(schema, unit, approach, mode, group, self.layers, frame):
                            yield name, table

    def _block(self, unit: str, group: str, layer: str, annotator: int) -> int:
        """First key of an (group, layer, annotator)'s block of merged segments (keys run over documents)."""
        n_d = len(self.spaces[unit].doc_ids)
        return ((self.groups.index(group) * len(self.layers) + self.layers.index(layer)) * len(self.annotators) + annotator) * n_d

    def _segments(self, unit: str, group: str, layer: str, frame: Frame, labelled: bool) -> list[tuple[np.ndarray, ...]]:
        """Per annotator, the ``(r0, r1, label)`` frame rows (inclusive) of a (group, layer)'s merged segments."""
        res, space = self.results[unit], self.spaces[unit]
        n_d = len(space.doc_ids)
        n_lab = max(len(self.labels), 1) if labelled else 1
        keys, u0, u1 = (res.label_key, res.label_u0, res.label_u1) if labelled else (res.key, res.u0, res.u1)
        out = []
        for ai in range(len(self.annotators)):
            lo_key = self._block(unit, group, layer, ai)
            lo, hi = np.searchsorted(keys, [lo_key * n_lab, (lo_key + n_d) * n_lab])
            k = keys[lo:hi]
            doc = (k // n_lab) % n_d
            pos = frame.position[doc]
            keep = pos >= 0
            offset = frame.row_base[pos[keep]] - space.base[doc[keep]]
            out.append((u0[lo:hi][keep] + offset, u1[lo:hi][keep] + offset, (k % n_lab)[keep]))
        return out

    def _null_docs(self, group: str, frame: Frame) -> dict[str, np.ndarray]:
        """Per annotator: a mask over the frame's documents where the annotator is missing (null)."""
        expected = set(self.expected.get(group, []))
        missing_by_doc = self.universe.get(group, {})
        return {
            a: np.ones(len(frame.docs), dtype=bool) if a not in expected
            else np.array([a in missing_by_doc[d] for d in frame.docs], dtype=bool)
            for a in self.annotators
        }

    def _group_tables(self, schema: pa.Schema, unit: str, approach: str, mode: str, group: str, layers: list[str],
                      frame: Frame | None = None) -> Iterator[pa.Table]:
        if frame is None:
            frame = group_frame(self.spaces[unit], self.documents_in(group), columns=self.layout != "sparse")
        if self.layout == "long":
            yield from LongRows(self, schema, unit, approach, group, frame).tables(mode, layers)
            return
        null_docs = self._null_docs(group, frame)
        if mode == "combined":
            layer_segs = [self._segments(unit, group, layer, frame, False) for layer in self.layer_order]
            yield self._table(schema, unit, approach, group, "+".join(self.layer_order), frame, null_docs, layer_segs, False)
        else:
            for layer in layers:
                segs = self._segments(unit, group, layer, frame, mode == "labels")
                yield self._table(schema, unit, approach, group, layer, frame, null_docs, [segs], mode == "labels")

    def _table(self, schema: pa.Schema, unit: str, approach: str, group: str, layer: str, frame: Frame,
               null_docs: dict[str, np.ndarray], layer_segs: list[list[tuple[np.ndarray, ...]]], labelled: bool) -> pa.Table:
        """One wide or sparse table: ``layer_segs`` holds per layer (bit) the annotators' segments."""
        if self.layout == "sparse":
            any_null = np.logical_or.reduce(list(null_docs.values())) if null_docs else np.zeros(len(frame.docs), bool)
            rows = sparse_rows(frame, [(s[0], s[1]) for segs in layer_segs for s in segs], approach, any_null)
            row_doc, cols = sparse_columns(self.spaces[unit], frame, rows)
            total = rows.size

            def place(r: np.ndarray) -> np.ndarray:
                return np.searchsorted(rows, r)
        else:
            row_doc, cols, total = None, frame.columns, frame.total

            def place(r: np.ndarray) -> np.ndarray:
                return r

        columns = [constant(group, total), cols["doc_id"], constant(layer, total), cols["unit"], cols["begin"], cols["end"]]
        for ai, a in enumerate(self.annotators):
            if labelled:
                r0, r1, lab = layer_segs[0][ai]
                values: Any = label_dictionary(label_codes(total, place(r0), place(r1), lab, approach), self.labels, NOT_ANNOTATED)
            else:
                values = np.zeros(total, dtype=np.uint8)
                for bit, segs in enumerate(layer_segs):
                    r0, r1, _ = segs[ai]
                    values |= mark(total, place(r0), place(r1), approach) << np.uint8(bit)
            docs = null_docs[a]
            nulls = None
            if docs.any():
                nulls = docs[row_doc] if row_doc is not None else np.repeat(docs, frame.n)
            columns.append(value_array(values, nulls))
        return pa.Table.from_arrays(columns, schema=schema)


@dataclass
class Marks:
    """The merged segments of one unit type as the matrix builders read them (sorted keys, global units)."""

    key: np.ndarray
    u0: np.ndarray  # int32, positions in the partition's unit space
    u1: np.ndarray
    #: per-label merged segments (empty unless a labels-mode setting is written)
    label_key: np.ndarray
    label_u0: np.ndarray
    label_u1: np.ndarray


@dataclass
class MatrixSource(_Builder):
    """What the unit matrices of some documents are built from: arrays and names only (picklable, small)."""

    groups: list[str]
    layers: list[str]
    layer_order: list[str]
    annotators: list[str]
    labels: list[str]
    layout: str
    spaces: dict[str, UnitSpace]
    results: dict[str, Marks]
    universe: dict[str, dict[str, frozenset[str]]]
    expected: dict[str, list[str]]
    present: dict[str, dict[str, list[int]]]


def _slice_space(space: UnitSpace, d0: int, d1: int) -> UnitSpace:
    """The unit space of documents ``d0 … d1-1`` of ``space``, positions from 0."""
    u0 = int(space.base[d0]) if d0 < len(space.doc_ids) else int(space.n_units.sum())
    u1 = u0 + int(space.n_units[d0:d1].sum())
    c0 = int(space.char_base[d0]) if d0 < len(space.doc_ids) else 0
    cut = (lambda a: (a[u0:u1] - c0).astype(np.int32)) if space.starts is not None else (lambda a: None)
    return UnitSpace(space.unit, space.doc_ids[d0:d1], space.n_units[d0:d1], space.base[d0:d1] - u0,
                     space.char_base[d0:d1] - c0, cut(space.starts), cut(space.ends))


def _slice_marks(res: Any, space: UnitSpace, n_lab: int, d0: int, d1: int, labels: bool) -> Marks:
    """The merged segments of documents ``d0 … d1-1``, keys renumbered over those documents."""
    n_d, n_new = len(space.doc_ids), d1 - d0
    shift = int(space.base[d0]) if d0 < n_d else 0

    def cut(key: np.ndarray, u0: np.ndarray, u1: np.ndarray, scale: int) -> tuple[np.ndarray, ...]:
        seg = key // scale
        doc = seg % n_d
        sel = (doc >= d0) & (doc < d1)
        new = (seg[sel] // n_d * n_new + (doc[sel] - d0)) * scale + key[sel] % scale
        return new, (u0[sel] - shift).astype(np.int32), (u1[sel] - shift).astype(np.int32)

    none = np.zeros(0, dtype=np.int64)
    return Marks(*cut(res.key, res.u0, res.u1, 1),
                 *(cut(res.label_key, res.label_u0, res.label_u1, n_lab) if labels else (none, none, none)))


@dataclass
class Unitized(_Builder):
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
    #: "wide" (a column per annotator), "sparse" (wide columns, rows with a value) or "long" (a row per unit and annotator)
    layout: str = "wide"
    #: labels mode: every label, sorted (bit i of a label code = labels[i])
    labels: list[str] = field(default_factory=list)
    #: per group, per document: indices of the annotators with a submission (long layout rows)
    present: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    kind: str = "spans"

    @property
    def universe(self) -> dict[str, dict[str, frozenset[str]]]:
        return self.validation.universe

    @property
    def expected(self) -> dict[str, list[str]]:
        return self.validation.annotators

    @property
    def layer_order(self) -> list[str]:
        return list(self.settings.layers)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

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

    def settings_specs(self) -> list[SettingSpec]:
        """Every setting of the run: (name, schema, unit, approach, mode), in the run's order."""
        return [
            (setting_name(u, a, m), self.matrix_schema(u, a, m), u, a, m)
            for (u, a) in self.settings.pairs
            for m in self.settings.modes
        ]

    def datasets(self) -> list[tuple[str, pa.Schema, Callable[[], Iterator[pa.Table]]]]:
        """The ``units/`` datasets of the run: (setting name, schema, its tables), one per setting."""
        return [(name, schema, lambda u=u, a=a, m=m: self.matrices(u, a, m)) for name, schema, u, a, m in self.settings_specs()]

    def dense_rows(self, unit: str, mode: str) -> int:
        """Rows of a setting's dense matrix: every unit of every group's documents, per layer (one layer combined)."""
        n = dict(zip(self.spaces[unit].doc_ids, self.spaces[unit].n_units.tolist()))
        units = sum(n[d] for g in self.groups for d in self.universe.get(g, {}))
        return units * (1 if mode == "combined" else len(self.layers))

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
        if self.layout == "sparse":
            meta["layers"] = ["+".join(self.settings.layers)] if mode == "combined" else list(self.layers)
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

    # -- work partitions --

    def doc_ids(self) -> list[str]:
        """The documents with a text, in the order of the unit spaces (sorted)."""
        return next(iter(self.spaces.values())).doc_ids

    def part(self, d0: int, d1: int) -> MatrixSource:
        """The matrices' source for documents ``d0 … d1-1`` of :meth:`doc_ids`: arrays and names only."""
        ids = set(self.doc_ids()[d0:d1])
        n_lab = max(len(self.labels), 1)
        return MatrixSource(
            groups=self.groups,
            layers=self.layers,
            layer_order=self.layer_order,
            annotators=self.annotators,
            labels=self.labels,
            layout=self.layout,
            spaces={u: _slice_space(s, d0, d1) for u, s in self.spaces.items()},
            results={u: _slice_marks(r, self.spaces[u], n_lab, d0, d1, "labels" in self.settings.modes)
                     for u, r in self.results.items()},
            universe={g: {d: m for d, m in docs.items() if d in ids} for g, docs in self.universe.items()},
            expected=self.expected,
            present={g: {d: a for d, a in docs.items() if d in ids} for g, docs in self.present.items()},
        )
