"""Rows of a group's unit matrices: the frame every layout places its rows on.

A :class:`Frame` lays a group's documents end to end in one unit space: row
``row_base[p] + u`` is unit ``u`` of the group's ``p``-th document. The dense
(wide, long) layouts have a row for every unit, the sparse layout a subset of
them (:mod:`.sparse`). Pure NumPy and Arrow, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ..units.unitizers import UnitSpace, cumulative

#: labels mode: the value of a unit no segment of the annotator covers (null = annotator missing)
NOT_ANNOTATED = "O"


@dataclass(frozen=True)
class Frame:
    """Row layout of a group's matrices in one unit space (shared by its layers, approaches and modes)."""

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
    #: the ``doc_id``, ``unit``, ``begin`` and ``end`` columns of every row (dense layouts only; else empty)
    columns: dict[str, pa.Array]


def group_frame(space: UnitSpace, docs: list[str], columns: bool = True) -> Frame:
    """The rows of a matrix over ``docs`` (sorted), every unit of every document.

    ``columns=False`` (the sparse layout) leaves out the per-row columns, the only part whose size is the matrix's.
    """
    doc_index = {d: i for i, d in enumerate(space.doc_ids)}
    di = np.array([doc_index[d] for d in docs], dtype=np.int64)
    n = space.n_units[di]
    total = int(n.sum())
    row_base = cumulative(n)
    position = np.full(len(space.doc_ids), -1, dtype=np.int64)
    position[di] = np.arange(di.size)
    cols: dict[str, pa.Array] = {}
    if columns:  # in 32 bits where they fit: a writing thread builds a million rows of them per partition
        small: type[np.signedinteger[Any]] = np.int32 if total < 1 << 31 else np.int64
        local: np.ndarray = np.arange(total, dtype=small)
        np.subtract(local, np.repeat(row_base.astype(small), n), out=local)
        cols = local_columns(space, docs, di, np.repeat(np.arange(di.size, dtype=small), n), local)
    return Frame(docs=docs, di=di, n=n, total=total, row_base=row_base, position=position, columns=cols)


def row_columns(space: UnitSpace, docs: list[str], di: np.ndarray, row_base: np.ndarray, row_doc: np.ndarray, rows: np.ndarray) -> dict[str, pa.Array]:
    """The ``doc_id``, ``unit``, ``begin``, ``end`` columns of ``rows`` (frame rows; ``row_doc`` their documents' positions)."""
    return local_columns(space, docs, di, row_doc, rows - row_base[row_doc])


def local_columns(space: UnitSpace, docs: list[str], di: np.ndarray, row_doc: np.ndarray, local: np.ndarray) -> dict[str, pa.Array]:
    """:func:`row_columns` of rows given by their documents' positions (``row_doc``) and their units there (``local``)."""
    unit = local.astype(np.int32, copy=False)
    if space.unit == "char":  # a character unit is its own extent (a char space's units start where its characters do)
        begin, end = unit, unit + 1
    else:
        doc = di[row_doc]
        b, e = space.local_extent(doc, local + space.base[doc])
        begin, end = b.astype(np.int32), e.astype(np.int32)
    return {
        "doc_id": pa.DictionaryArray.from_arrays(pa.array(row_doc.astype(np.int32, copy=False)), pa.array(docs, pa.string())),
        "unit": pa.array(unit),
        "begin": pa.array(begin),
        "end": pa.array(end),
    }


def ranges(r0: np.ndarray, r1: np.ndarray) -> np.ndarray:
    """Every integer of the inclusive ranges ``[r0, r1]``, concatenated (ranges may overlap)."""
    r0 = np.asarray(r0, dtype=np.int64)
    length = np.asarray(r1, dtype=np.int64) - r0 + 1
    keep = length > 0
    r0, length = r0[keep], length[keep]
    if not r0.size:
        return np.zeros(0, dtype=np.int64)
    start = cumulative(length)
    return np.repeat(r0 - start, length) + np.arange(int(length.sum()), dtype=np.int64)


def value_array(values: Any, nulls: np.ndarray | None) -> pa.Array:
    """A column of unit values: uint8 marks, or ``(indices, dictionary)`` labels; ``nulls`` masks missing."""
    if isinstance(values, tuple):
        indices, dictionary = values
        return pa.DictionaryArray.from_arrays(pa.array(indices, type=pa.int32(), mask=nulls), pa.array(dictionary, pa.string()))
    return pa.array(values, type=pa.uint8(), mask=nulls)
