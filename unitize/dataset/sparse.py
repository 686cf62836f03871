"""The sparse layout read back dense: one group at a time, from the counts of the output directory.

A sparse unit table (metadata ``layout = "sparse"``) holds only the rows where
some annotator marked the unit or is missing. Every other unit of every
(group, doc_id) of ``universe.parquet`` and every layer of the setting is
implicit: every annotator 0 (``O`` for labels); its ``begin``/``end`` are
(unit, unit + 1) for characters and come from ``tokens.parquet`` for words; the
units per document are ``documents.parquet``'s ``chars`` / ``tokens``.
:class:`Universe` holds those counts; :func:`dense_group` rebuilds one group's
dense wide rows, exactly as the wide layout writes them, for the consumers that
need unit rows (a matrix, the report's regions, exports). The coding statistics
of ``agree`` need no rows for the implicit units: :class:`Stored` is a group's
rows as stored with, per (layer, document), how many units are implicit —
counted, not built (:func:`unitize.agree.columns.cells`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .matrix import sorted_codes
from .model import DataError, Setting


def _cumulative(n: np.ndarray) -> np.ndarray:
    base = np.zeros(n.size, dtype=np.int64)
    if n.size:
        np.cumsum(n[:-1], out=base[1:])
    return base


class Universe:
    """The unit universe of an output directory: each group's documents and each document's units."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._groups: dict[str, list[str]] | None = None
        self._units: dict[str, dict[str, int]] = {}
        self._tokens: tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray] | None = None

    def _read(self, name: str, columns: list[str]) -> pa.Table:
        file = self.path / name
        if not file.is_file():
            raise DataError(f"{self.path}: the sparse layout needs {name}, which is missing")
        try:
            return pq.read_table(file, columns=columns)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"{file} cannot be read: {exc}") from None

    def groups(self) -> dict[str, list[str]]:
        """Per group (sorted) its documents (sorted)."""
        if self._groups is None:
            t = self._read("universe.parquet", ["group", "doc_id"])
            out: dict[str, list[str]] = {}
            for g, d in zip(t.column("group").to_pylist(), t.column("doc_id").to_pylist()):
                out.setdefault(g, []).append(d)
            self._groups = {g: sorted(ds) for g, ds in sorted(out.items())}
        return self._groups

    def units(self, unit: str) -> dict[str, int]:
        """Units per document: ``chars`` for character units, ``tokens`` for words."""
        if unit not in self._units:
            column = {"char": "chars", "word": "tokens"}.get(unit)
            if column is None:
                raise DataError(f"{self.path}: unknown unit {unit!r} in a sparse table")
            t = self._read("documents.parquet", ["doc_id", column])
            self._units[unit] = {d: n for d, n in zip(t.column("doc_id").to_pylist(), t.column(column).to_pylist()) if n is not None}
        return self._units[unit]

    def extents(self, docs: list[str], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Local character ``begin``/``end`` of every token of ``docs`` (in order; ``n`` tokens each)."""
        if self._tokens is None:
            t = self._read("tokens.parquet", ["doc_id", "token", "begin", "end"])
            names, codes = sorted_codes(t.column("doc_id"))
            order = np.lexsort((t.column("token").to_numpy(), codes))
            codes = codes[order]
            counts = np.bincount(codes, minlength=len(names))
            self._tokens = ({d: i for i, d in enumerate(names)}, _cumulative(counts),
                            t.column("begin").to_numpy()[order], t.column("end").to_numpy()[order])
        index, base, begin, end = self._tokens
        starts = np.array([base[index[d]] if d in index else 0 for d in docs], dtype=np.int64)
        rows = np.repeat(starts - _cumulative(n), n) + np.arange(int(n.sum()), dtype=np.int64)
        return begin[rows], end[rows]


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

    def documents(self) -> np.ndarray:
        """Per stored row, the index of its document in ``docs``."""
        if not self.table.num_rows:
            return np.zeros(0, np.int64)
        names, codes = sorted_codes(self.table.column("doc_id"))
        where = {d: i for i, d in enumerate(self.docs)}
        unknown = [d for d in names if d not in where]
        if unknown:
            raise DataError(f"sparse rows of group {self.group!r} name {', '.join(map(repr, unknown[:3]))}, "
                            "not a document of universe.parquet with units")
        return np.array([where[d] for d in names], dtype=np.int64)[codes]

    def implicit(self, layer: np.ndarray, doc: np.ndarray) -> np.ndarray:
        """(layers, documents): the implicit rows of each (layer, document) — its units less its stored rows."""
        n_l, n_d = len(self.layers), len(self.docs)
        stored = np.bincount(layer.astype(np.int64) * n_d + doc, minlength=n_l * n_d).reshape(n_l, n_d)
        out = self.units[None, :] - stored
        if np.any(out < 0):
            raise DataError(f"group {self.group!r}: more sparse rows than units in a document (documents.parquet)")
        return out

    def layer_rows(self, i: int) -> pa.Table:
        """The dense rows of layer ``i`` (built: for what needs unit rows, e.g. a matrix)."""
        table = self.dense()
        names, codes = sorted_codes(table.column("layer")) if table.num_rows else ([], np.zeros(0, np.int64))
        if self.layers[i] not in names:
            return table.slice(0, 0)
        return table.take(pa.array(np.flatnonzero(codes == names.index(self.layers[i]))))


def group_universe(setting: Setting, universe: Universe, group: str) -> tuple[list[str], np.ndarray]:
    """A group's documents of the universe (sorted) and the units of each (``setting``'s unit type)."""
    docs = universe.groups().get(group, [])
    units = universe.units(setting.unit or "char")
    missing = [d for d in docs if d not in units]
    if missing:
        raise DataError(f"{universe.path}: documents.parquet gives no {setting.unit} units for {', '.join(missing[:3])}")
    return docs, np.array([units[d] for d in docs], dtype=np.int64)


def _dictionary(values: np.ndarray, names: list[str]) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(values.astype(np.int32)), pa.array(names, pa.string()))


def dense_group(setting: Setting, layers: Sequence[str], universe: Universe, group: str, table: pa.Table,
                columns: Sequence[str] | None = None) -> pa.Table:
    """One group's dense wide rows from its sparse ``table`` (the columns ``columns``, default all of the file's)."""
    docs, n = group_universe(setting, universe, group)
    total, n_l = int(n.sum()), len(layers)
    row_base = _cumulative(n)
    names = list(columns) if columns is not None else table.column_names
    # where each sparse row goes
    d_names, d_codes = sorted_codes(table.column("doc_id")) if table.num_rows else ([], np.zeros(0, np.int64))
    l_names, l_codes = sorted_codes(table.column("layer")) if table.num_rows else ([], np.zeros(0, np.int64))
    doc_pos = {d: i for i, d in enumerate(docs)}
    layer_pos = {x: i for i, x in enumerate(layers)}
    unknown = [d for d in d_names if d not in doc_pos] + [x for x in l_names if x not in layer_pos]
    if unknown:
        raise DataError(f"sparse rows of group {group!r} name {', '.join(map(repr, unknown[:3]))}, not in universe.parquet "
                        "or the setting's layers")
    di = np.array([doc_pos[d] for d in d_names], dtype=np.int64)[d_codes]
    li = np.array([layer_pos[x] for x in l_names], dtype=np.int64)[l_codes]
    unit = table.column("unit").to_numpy() if table.num_rows else np.zeros(0, np.int64)
    at = li * total + row_base[di] + unit
    rows = total * n_l
    doc_row = np.repeat(np.arange(len(docs), dtype=np.int64), n)
    local = np.arange(total, dtype=np.int64) - np.repeat(row_base, n)
    out: list[pa.Array] = []
    for name in names:
        if name == "group":
            out.append(_dictionary(np.zeros(rows, np.int32), [group]))
        elif name == "doc_id":
            out.append(_dictionary(np.tile(doc_row, n_l), docs))
        elif name == "layer":
            out.append(_dictionary(np.repeat(np.arange(n_l), total), list(layers)))
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
