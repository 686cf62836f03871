"""The long layout of a group's unit matrix: a row per (unit, annotator) that exists (crowd data).

Only annotators with a submission for a document have rows there; tables come
in batches of whole documents of about :data:`LONG_BATCH_ROWS` rows. Pure NumPy
and Arrow, no I/O.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pyarrow as pa

from .frames import NOT_ANNOTATED, Frame, constant, value_array
from .spaces import cumulative
from .unitizers import label_codes, label_dictionary, mark

#: long layout: rows per table written (whole documents per table)
LONG_BATCH_ROWS = 1 << 20


class LongRows:
    """The long layout of one group: a row per (unit, annotator) that exists, sorted by (doc, annotator, unit).

    Only annotators with a submission for a document have rows there (a *pair*
    is a (document, annotator) with rows). Tables hold about
    :data:`LONG_BATCH_ROWS` rows, whole documents each, so memory stays bounded
    for crowd data sets.
    """

    def __init__(self, unitized: Any, schema: pa.Schema, unit: str, approach: str, group: str, frame: Frame):
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
            constant(self.group, total),
            pa.DictionaryArray.from_arrays(pa.array(np.repeat(self.p_pos[a:b], nb).astype(np.int32)), pa.array(frame.docs, pa.string())),
            constant(layer_name, total),
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
            layer_order = self.u.layer_order
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
