"""The sparse layout: the wide layout's columns on the rows that carry a mark or a missing annotator.

Writing: a group's rows are the units some annotator marks (all of a segment's units for
``interval``, its first and last for ``boundary``) and every unit of a document where an
annotator is missing, found from the segments without building the dense matrix
(:func:`sparse_rows`); the metadata names the setting's layers, every one present for every
document of ``universe.parquet``. A large corpus's matrices hold mostly zeros: this is what
``auto`` chooses for them.

Reading: every other unit of every (group, doc_id) of the universe and every layer is
implicit — every annotator 0 (``O`` for labels); its ``begin``/``end`` are (unit, unit + 1)
for characters and come from ``tokens.parquet`` for words; the units per document are
``documents.parquet``'s ``chars`` / ``tokens`` (a :class:`UniverseCounts`). :func:`dense_group`
rebuilds one group's dense wide rows exactly as the wide layout writes them; :class:`Stored` is
a group's rows as stored with, per (layer, document), how many units are implicit — counted,
not built (``unitize agree``'s statistics need no rows for them). Item labels are never sparse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from ..errors import DataError
from ..model.codes import dictionary, positions, sorted_codes
from ..units.unitizers import Approach, UnitSpace, cumulative
from .base import AnnotatorSegments, GroupMarks, StoredSetting
from .frames import Frame, ranges, row_columns
from .wide import Wide


def sparse_rows(frame: Frame, segments: list[tuple[np.ndarray, np.ndarray]], approach: Approach, null_docs: np.ndarray) -> np.ndarray:
    """The sorted frame rows of a sparse matrix: the units marked by ``segments`` (``(r0, r1)`` frame rows,
    inclusive, of every annotator and layer: all their units for ``interval``, the ends for ``boundary``)
    and every unit of the documents ``null_docs`` (a mask over ``frame.docs``: some annotator is missing)."""
    parts = []
    for r0, r1 in segments:
        parts.append(ranges(r0, r1) if approach == "interval" else np.concatenate([r0, r1]).astype(np.int64))
    p = np.flatnonzero(null_docs)
    parts.append(ranges(frame.row_base[p], frame.row_base[p] + frame.n[p] - 1))
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def sparse_columns(space: UnitSpace, frame: Frame, rows: np.ndarray) -> tuple[np.ndarray, dict[str, pa.Array]]:
    """Per sparse row its document's position in the frame, and the row's ``doc_id``, ``unit``, ``begin``, ``end``."""
    row_doc = np.searchsorted(frame.row_base, rows, side="right") - 1 if rows.size else np.zeros(0, dtype=np.int64)
    # documents without units share a row_base with the next one: searchsorted picks the last, which holds the row
    return row_doc, row_columns(space, frame.docs, frame.di, frame.row_base, row_doc, rows)



class Sparse(Wide):
    """The wide layout's columns; only the rows with a mark or a missing annotator are stored."""

    name = "sparse"
    help = "wide columns, only the rows with a mark or a missing annotator (the rest is implicit 0)"
    implicit_rows = True
    dense_frame = False
    items_dataset = None

    def metadata(self, layers: Sequence[str]) -> dict[str, Any]:
        return {"layers": list(layers)}

    def _rows(self, g: GroupMarks, layer_segs: list[AnnotatorSegments], approach: Approach,
              missing: dict[str, np.ndarray]) -> tuple[np.ndarray | None, dict[str, pa.Array], int, Callable[[np.ndarray], np.ndarray]]:
        some_missing = np.logical_or.reduce(list(missing.values())) if missing else np.zeros(len(g.frame.docs), bool)
        rows = sparse_rows(g.frame, [(s[0], s[1]) for segs in layer_segs for s in segs], approach, some_missing)
        row_doc, cols = sparse_columns(g.space, g.frame, rows)
        return row_doc, cols, rows.size, lambda r: np.searchsorted(rows, r)


SPARSE = Sparse()


# --- reading -------------------------------------------------------------------------------------


class UniverseCounts(Protocol):
    """What reading a sparse group needs of an output directory's unit universe
    (:class:`unitize.dataset.sparse.Universe` reads it from the files)."""

    path: Path

    def groups(self) -> dict[str, list[str]]: ...

    def units(self, unit: str) -> dict[str, int]: ...

    def extents(self, docs: list[str], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class Stored:
    """One sparse group as stored: its rows, and its implicit rows as counts.

    Every layer of ``layers`` holds every unit of every document of ``docs`` (``units[d]``
    each), as the dense rows would; the stored rows are the units someone marked or is missing
    on, every other one is implicit (every annotator 0). ``docs`` are the group's documents with
    units, sorted, and ``layers`` its layers in :meth:`~unitize.dataset.directory.OutputData.group_tables`'
    order: what the dense rows' ``doc_id`` and ``layer`` columns would give.
    """

    group: str
    table: pa.Table  # the stored rows (the columns asked for)
    docs: list[str]
    units: np.ndarray  # (D,) int64
    layers: list[str]
    dense: Callable[[], pa.Table]  # the group's dense rows (read again and densified), for a matrix
    #: a column of the stored rows, read apart (one not among the columns asked for), in the rows' order
    column: Callable[[str], pa.ChunkedArray] | None = None

    def documents(self, names: pa.Array | pa.ChunkedArray | None = None) -> np.ndarray:
        """Per stored row (or per document name of ``names``), the index of its document in ``docs`` (the rows'
        ``doc_id`` read now if they came without it)."""
        if names is None:
            if "doc_id" in self.table.column_names:
                names = self.table.column("doc_id")
            elif self.column is not None:
                names = self.column("doc_id")
            else:
                raise ValueError(f"the stored rows of group {self.group!r} were read without their documents")
        if not len(names):
            return np.zeros(0, np.int64)
        codes, unknown = positions(names, {d: i for i, d in enumerate(self.docs)})
        if unknown:
            raise DataError(f"sparse rows of group {self.group!r} name {', '.join(map(repr, unknown[:3]))}, "
                            "not a document of universe.parquet with units")
        return codes

    def implicit(self, layer: np.ndarray, doc: np.ndarray) -> np.ndarray:
        """(layers, documents): the implicit rows of each (layer, document) — its units less its stored rows."""
        n_l, n_d = len(self.layers), len(self.docs)
        stored = np.bincount(layer.astype(np.int64) * n_d + doc, minlength=n_l * n_d).reshape(n_l, n_d)
        out = self.units[None, :] - stored
        if np.any(out < 0):
            raise DataError(f"group {self.group!r}: more sparse rows than units in a document (documents.parquet)")
        return out

    def missing(self, annotators: Sequence[str]) -> bool:
        """Whether some stored row lacks a value of one of ``annotators`` (someone did not code a document)."""
        return any(self.table.column(a).null_count for a in annotators)

    def implicit_by_layer(self, layer: np.ndarray) -> np.ndarray:
        """(layers,): the implicit rows of each layer — its documents' units less its stored rows."""
        out = int(self.units.sum()) - np.bincount(layer.astype(np.int64), minlength=len(self.layers))
        if np.any(out < 0):
            raise DataError(f"group {self.group!r}: more sparse rows than units (documents.parquet)")
        return out

    def layer_rows(self, i: int) -> pa.Table:
        """The dense rows of layer ``i`` (built: for what needs unit rows, e.g. a matrix)."""
        table = self.dense()
        names, codes = sorted_codes(table.column("layer")) if table.num_rows else ([], np.zeros(0, np.int64))
        if self.layers[i] not in names:
            return table.slice(0, 0)
        return table.take(pa.array(np.flatnonzero(codes == names.index(self.layers[i]))))


def group_universe(setting: StoredSetting, universe: UniverseCounts, group: str) -> tuple[list[str], np.ndarray]:
    """A group's documents of the universe (sorted) and the units of each (``setting``'s unit type)."""
    docs = universe.groups().get(group, [])
    units = universe.units(setting.unit or "char")
    missing = [d for d in docs if d not in units]
    if missing:
        raise DataError(f"{universe.path}: documents.parquet gives no {setting.unit} units for {', '.join(missing[:3])}")
    return docs, np.array([units[d] for d in docs], dtype=np.int64)


def placed(table: pa.Table, group: str, docs: Sequence[str], layers: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per sparse row of ``group``, its document's index in ``docs`` and its layer's in ``layers``; a row naming
    another is refused."""
    di, unknown_docs = positions(table.column("doc_id"), {d: i for i, d in enumerate(docs)})
    li, unknown_layers = positions(table.column("layer"), {x: i for i, x in enumerate(layers)})
    unknown = unknown_docs + unknown_layers
    if unknown:
        raise DataError(f"sparse rows of group {group!r} name {', '.join(map(repr, unknown[:3]))}, not in universe.parquet "
                        "or the setting's layers")
    return di, li


def dense_group(setting: StoredSetting, layers: Sequence[str], universe: UniverseCounts, group: str, table: pa.Table,
                columns: Sequence[str] | None = None, documents: tuple[list[str], np.ndarray] | None = None) -> pa.Table:
    """One group's dense wide rows from its sparse ``table`` (the columns ``columns``, default all of the file's).
    ``documents``: some of the group's documents and their units (:func:`group_universe`'s, a run of them), whose
    rows alone ``table`` holds; default all."""
    docs, n = group_universe(setting, universe, group) if documents is None else documents
    total, n_l = int(n.sum()), len(layers)
    row_base = cumulative(n)
    names = list(columns) if columns is not None else table.column_names
    di, li = placed(table, group, docs, layers)  # where each sparse row goes
    unit = table.column("unit").to_numpy() if table.num_rows else np.zeros(0, np.int64)
    at = li * total + row_base[di] + unit
    rows = total * n_l
    doc_row = np.repeat(np.arange(len(docs), dtype=np.int64), n)
    local = np.arange(total, dtype=np.int64) - np.repeat(row_base, n)
    out: list[pa.Array] = []
    for name in names:
        if name == "group":
            out.append(dictionary(np.zeros(rows, np.int32), [group]))
        elif name == "doc_id":
            out.append(dictionary(np.tile(doc_row, n_l), docs))
        elif name == "layer":
            out.append(dictionary(np.repeat(np.arange(n_l), total), list(layers)))
        elif name == "unit":
            out.append(pa.array(np.tile(local, n_l).astype(np.int32)))
        elif name in ("begin", "end"):
            if setting.unit == "word":
                begin, end = universe.extents(docs, n)
                value = begin if name == "begin" else end
            else:
                value = local if name == "begin" else local + 1
            out.append(pa.array(np.tile(value, n_l).astype(np.int32)))
        else:
            out.append(_values(table.column(name), at, rows, setting.not_annotated or "O"))
    return pa.Table.from_arrays(out, names=names)


def _values(column: pa.ChunkedArray, at: np.ndarray, rows: int, not_annotated: str) -> pa.Array:
    """An annotator column spread onto ``rows`` dense rows (implicit rows 0, or ``not_annotated`` for labels)."""
    import pyarrow.compute as pc  # here, not at the top: see unitize.layouts

    null = np.zeros(rows, dtype=bool)
    if pa.types.is_dictionary(column.type) or pa.types.is_string(column.type):
        names, codes = sorted_codes(pc.fill_null(pc.cast(column, pa.string()), "\x00")) if len(column) else ([], np.zeros(0, np.int64))
        dictionary = sorted(set(names) - {"\x00"} | {not_annotated})
        lut = np.array([dictionary.index(x) if x != "\x00" else 0 for x in names], dtype=np.int32)
        indices = np.full(rows, dictionary.index(not_annotated), dtype=np.int32)
        indices[at] = lut[codes]
        null[at] = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        return pa.DictionaryArray.from_arrays(pa.array(indices, mask=null), pa.array(dictionary, pa.string()))
    values = np.zeros(rows, dtype=np.uint8)
    values[at] = pc.fill_null(column, 0).to_numpy()
    null[at] = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return pa.array(values, type=column.type, mask=null if null.any() else None)
