"""The merged segments of one unit type as the matrix builders read them (:class:`Marks`), and the same marks in
document order (:class:`ByDocument`), which a run's work partitions cut their own stretch from. Pure NumPy: where
the arrays lie (the heap, a mapped scratch file) is the caller's ``room``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .unitizers import SegmentKey, UnitSpace


@dataclass
class Marks:
    """The merged segments of one unit type as the matrix builders read them: inclusive unit ranges
    ``u0 … u1`` (positions in the unit space), sorted by their :class:`~unitize.units.unitizers.SegmentKey`
    ``key`` then ``u0``; ``label_*`` the same per label (mode ``labels``), keys ``keys.labelled`` — made when
    ``labelled`` (else empty)."""

    keys: SegmentKey
    key: np.ndarray
    u0: np.ndarray
    u1: np.ndarray
    label_key: np.ndarray
    label_u0: np.ndarray
    label_u1: np.ndarray
    labelled: bool = True

    def by_document(self, labelled: bool, room: Room | None = None) -> tuple[ByDocument, ByDocument]:
        """The marks (and, ``labelled``, the per-label marks) ordered by document: what :meth:`part` cuts from.
        ``room`` makes the arrays they are copied into (default: on the heap; a run's writer: a mapped scratch file)."""
        marks = ByDocument.of(self.keys.documents(self.key), self.key, self.u0, self.u1, room)
        if not labelled:
            return marks, ByDocument.of(*(np.zeros(0, np.int64),) * 4)
        return marks, ByDocument.of(self.keys.documents(self.label_key, True), self.label_key, self.label_u0, self.label_u1, room)

    def part(self, space: UnitSpace, d0: int, d1: int, labelled: bool, order: tuple[ByDocument, ByDocument] | None = None) -> Marks:
        """The marks of documents ``d0 … d1-1`` of ``space``, keys and positions renumbered over them
        (``labelled``: the per-label marks too, else left empty). ``order``: :meth:`by_document`, made once for
        every part of a run (else made here)."""
        shift = int(space.base[d0]) if d0 < len(space.doc_ids) else 0
        marks, label_marks = order or self.by_document(labelled)

        def cut(by: ByDocument, per_label: bool) -> tuple[np.ndarray, ...]:
            key, u0, u1 = by.within(d0, d1)
            return self.keys.renumbered(key, d0, d1, per_label), (u0 - shift).astype(np.int32), (u1 - shift).astype(np.int32)

        none = np.zeros(0, dtype=np.int64)
        key, u0, u1 = cut(marks, False)
        label_key, label_u0, label_u1 = cut(label_marks, True) if labelled else (none, none, none)
        return Marks(self.keys.with_docs(d1 - d0), key, u0, u1, label_key, label_u0, label_u1, labelled and self.labelled)


#: what makes the arrays of a :class:`ByDocument` (shape and dtype each): the arrays, and what to call after each block
#: copied into them (a mapped scratch file's: let the pages the copy touched go), or None
Room = Callable[[list[tuple[tuple[int, ...], Any]]], tuple[list[np.ndarray], Callable[[], None] | None]]


@dataclass(frozen=True)
class ByDocument:
    """Marks (``key``, ``u0``, ``u1``) ordered by their document (``docs``, ascending; key order within one), and each
    one's position in the key order (``order``): the marks of a run of documents are one stretch of these arrays,
    found by bisection — a run's work partitions each read their own stretch, not pages of every mark (nor go through
    them all)."""

    order: np.ndarray
    docs: np.ndarray
    key: np.ndarray
    u0: np.ndarray
    u1: np.ndarray

    @classmethod
    def of(cls, docs: np.ndarray, key: np.ndarray, u0: np.ndarray, u1: np.ndarray, room: Room | None = None) -> ByDocument:
        order = np.argsort(docs, kind="stable")
        n = order.size
        types: list[Any] = [np.int32 if n < 2**31 else np.int64, np.int32, key.dtype, u0.dtype, u1.dtype]
        arrays, after_block = (room or _on_heap)([((n,), t) for t in types])
        for start in range(0, n, _COPIED):  # a block at a time: no second whole copy of a column made on the way
            take = order[start:start + _COPIED]
            for out, values in zip(arrays, (take, docs, key, u0, u1)):
                out[start:start + take.size] = take if values is take else values[take]
            if after_block is not None:
                after_block()
        return cls(*arrays)

    def within(self, d0: int, d1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The marks (key, u0, u1) of documents ``d0 … d1-1``, in key order."""
        lo, hi = (int(i) for i in np.searchsorted(self.docs, [d0, d1]))
        in_key_order = np.argsort(self.order[lo:hi], kind="stable")
        return self.key[lo:hi][in_key_order], self.u0[lo:hi][in_key_order], self.u1[lo:hi][in_key_order]


_COPIED = 1 << 20  # marks copied into document order at a time


def _on_heap(shapes: list[tuple[tuple[int, ...], Any]]) -> tuple[list[np.ndarray], None]:
    return [np.empty(shape, dtype) for shape, dtype in shapes], None
