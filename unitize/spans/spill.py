"""A batch's segments tables and marks spilled to scratch files by the forked process that made them, and mapped back by
the run.

A batch is resolved in a process of its own (:func:`unitize.spans.run._parts`); its segments tables go to
uncompressed Arrow IPC files that the run's process maps back, so that neither process sends them through a pipe
nor holds them twice. The ``doc_id`` column goes as its indices alone: its dictionary is every document of the run
(2 M of them at the 10x crowd run, 30 MB a batch), one array the run made before the processes forked
(``RunContext.doc_dictionary`` in :mod:`unitize.spans.batch`), which every batch's table shares again once mapped back.
A batch's marks (:class:`~unitize.units.marks.Marks`: 16 bytes a segment and unit type, 260 MB at the 10x crowd
run) go the same way: sent back, they were held on the run's heap from the first batch to the join.
"""

from __future__ import annotations

import mmap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..schema import segments_schema
from ..units.marks import Marks

#: a batch's marks, in two record batches (their lengths differ): the segments' and the per-label ones
_MARKS = (("key", "u0", "u1"), ("label_key", "label_u0", "label_u1"))


def path(folder: Path, k: int, unit: str) -> Path:
    return folder / f"{k}-{unit}.arrow"


def write(folder: Path, k: int, unit: str, segments: pa.Table) -> None:
    """Batch ``k``'s segments table of ``unit``, without its documents' dictionary."""
    _written(path(folder, k, unit), without_docs(segments))


def read_back(folder: Path, k: int, unit: str, docs: pa.Array) -> tuple[pa.Table, mmap.mmap]:
    """The table :func:`write` wrote, mapped (the table lies in the mapping, which must outlive it), its ``doc_id``
    column a dictionary of ``docs`` again."""
    mapped, reader = _mapped(path(folder, k, unit))
    return with_docs(reader.read_all(), docs), mapped


def _written(where: Path, data: pa.Table | pa.RecordBatch) -> None:
    """``data`` as an uncompressed Arrow IPC file (what :func:`_mapped` maps back)."""
    with pa.OSFile(str(where), "wb") as sink, pa.ipc.new_file(sink, data.schema) as writer:
        writer.write(data)


def _mapped(where: Path) -> tuple[mmap.mmap, pa.ipc.RecordBatchFileReader]:
    """An Arrow IPC file mapped read-only, and its reader (what it reads lies in the mapping)."""
    with open(where, "rb") as fh:
        mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return mapping, pa.ipc.open_file(pa.py_buffer(mapping))


def without_docs(segments: pa.Table) -> pa.Table:
    """A segments table with its ``doc_id`` column as the indices alone."""
    i = segments.schema.get_field_index("doc_id")
    column = segments.column(i)
    index = column.type.index_type
    return segments.set_column(i, pa.field("doc_id", index), pa.chunked_array([c.indices for c in column.chunks], index))


def with_docs(segments: pa.Table, docs: pa.Array) -> pa.Table:
    """A table :func:`without_docs` made, its ``doc_id`` column a dictionary of ``docs`` (the run's one array) again."""
    i = segments.schema.get_field_index("doc_id")
    field = segments_schema().field("doc_id")
    return segments.set_column(i, field, pa.chunked_array([pa.DictionaryArray.from_arrays(c, docs) for c in segments.column(i).chunks],
                                                          field.type))


def write_marks(folder: Path, k: int, unit: str, marks: Marks) -> Marks:
    """Batch ``k``'s marks of ``unit`` to a file; what is sent back instead (their key scheme, no arrays)."""
    for i, names in enumerate(_MARKS):
        _written(folder / f"{k}-{unit}-marks{i}.arrow", pa.record_batch([pa.array(getattr(marks, name)) for name in names], names=list(names)))
    none = np.zeros(0, np.int64)
    return replace(marks, key=none, u0=none, u1=none, label_key=none, label_u0=none, label_u1=none)


def read_marks(folder: Path, k: int, unit: str, sent: Marks) -> Marks:
    """The marks :func:`write_marks` wrote, mapped: read-only arrays lying in the mappings (each array keeps its
    mapping open)."""
    arrays: dict[str, np.ndarray] = {}
    for i, names in enumerate(_MARKS):
        batch = _mapped(folder / f"{k}-{unit}-marks{i}.arrow")[1].get_batch(0)
        arrays |= {name: batch.column(name).to_numpy(zero_copy_only=True) for name in names}
    return Marks(sent.keys, arrays["key"], arrays["u0"], arrays["u1"], arrays["label_key"], arrays["label_u0"], arrays["label_u1"],
                 sent.labelled)
