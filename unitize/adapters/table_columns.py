"""A CSV or Parquet table's mapped columns as Arrow arrays, and their values as text and as offsets.

The span-table reader takes its tables a column at a time: a Parquet file's columns as stored, a CSV
file's cells gathered :data:`CSV_ROWS` at a time into string arrays, each row's record beside them
(its line, or its number). :func:`as_text` and :func:`as_offsets` give every value of a column as the
row-by-row reading took it (``str`` of it; a non-negative integer), for whatever type a Parquet
file holds: Arrow converts strings and integers, and any other type goes through Python once per
distinct value.
"""

from __future__ import annotations

import csv
import io
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..cells import value as cell_value
from ..model import Corpus
from ..model.findings import finding
from ..model.text import TextConventions
from ..runtime.progress import Sized
from ._safe import MAX_OFFSET, InputError, csv_source, offset_value, parquet_row_groups, parse_offset, read_parquet_table
from ._spans import decode_file, read_input

#: the texts are cells of a table (its BOM dropped); offsets are code points of a cell
TEXT = TextConventions(newlines="keep", bom="strip", offsets="codepoint", suffixes=(), encoding="utf-8")


@dataclass
class Table:
    """The mapped columns of one input table as Arrow arrays (Parquet: as stored; CSV: text) and each row's record:
    its line in a CSV file, its number (from 1) in a Parquet file."""

    name: str
    columns: dict[str, pa.Array | pa.ChunkedArray]
    lines: np.ndarray | None  # CSV: each row's line; None: Parquet
    #: the row number (from 0) of the first row in the whole table (a piece's, :meth:`pieces`)
    first: int = 0
    #: a Parquet table read a row group at a time (:func:`read_table` ``by_row_group``): its rows per row group, and
    #: the row groups
    row_groups: tuple[list[int], Callable[[list[str] | None], Iterator[pa.Table]]] | None = None

    @property
    def num_rows(self) -> int:
        if self.row_groups is not None:
            return sum(self.row_groups[0])
        return len(next(iter(self.columns.values())))

    def lines_of(self, start: int, stop: int) -> np.ndarray:
        """The records of rows ``[start, stop)``."""
        if self.lines is not None:  # a CSV table's (a piece's own)
            return self.lines[start:stop]
        return np.arange(self.first + start + 1, self.first + stop + 1, dtype=np.int64)

    def pieces(self, rows: int, columns: list[str] | None = None) -> Sized[Table]:
        """The table ``rows`` rows at a time, in order (a Parquet file read by row group: none held beside another);
        ``columns``: only those (a Parquet file's others not read)."""
        sizes = self.row_groups[0] if self.row_groups is not None else [self.num_rows]
        return Sized(self._pieces(rows, columns), sum(-(-n // rows) for n in sizes))

    def _pieces(self, rows: int, columns: list[str] | None) -> Iterator[Table]:
        if self.row_groups is None:
            for start in range(0, self.num_rows, rows):
                yield self.slice(start, rows)
            return
        first = self.first
        for group in self.row_groups[1](columns):
            for start in range(0, group.num_rows, rows):
                piece = group.slice(start, rows)
                yield Table(self.name, {c: piece.column(c) for c in group.column_names}, None, first + start)
            first += group.num_rows

    def as_text(self, names: list[str]) -> list[pa.Array]:
        """:func:`as_text` of the named columns, each column let go by the table once converted: a large table (2 M
        texts, 6 M roster rows) is not held beside its text; the records (:meth:`lines_of`) stay."""
        values = {name: as_text(self.columns.pop(name)) for name in dict.fromkeys(names)}
        return [values[name] for name in names]

    def slice(self, start: int, length: int) -> Table:
        lines = self.lines_of(start, min(start + length, self.num_rows))
        return Table(self.name, {c: v.slice(start, length) for c, v in self.columns.items()}, lines, self.first + start)


def read_table(path: Path, base: Path, corpus: Corpus, role: str, needed: list[str], spreadsheet_safe: bool = False,
               by_row_group: bool = False) -> Table | None:
    """The ``needed`` columns of a CSV or Parquet table; ``None`` (and a finding) when unusable.
    ``spreadsheet_safe``: CSV cells were written by :func:`unitize.cells.cell` (read back with their values).
    ``by_row_group``: a Parquet table's columns are read a row group at a time by :meth:`Table.pieces` (its
    ``columns`` are empty arrays then), not held whole."""
    needed = list(dict.fromkeys(needed))  # two roles may name one column
    name, raw = read_input(path, base, corpus, role)
    if raw is None:
        return None
    if path.suffix.lower() == ".parquet":
        try:
            if by_row_group:
                rows, header, groups = parquet_row_groups(io.BytesIO(raw), needed)
            else:
                table = read_parquet_table(io.BytesIO(raw))
                header = table.column_names
        except InputError as exc:
            corpus.findings.append(finding("file-unreadable", str(exc), "table left out", file=name))
            return None
        if _lacks(header, needed, role, name, corpus):
            return None
        if by_row_group:
            return Table(name, {c: pa.array([], pa.string()) for c in needed}, None, row_groups=(rows, groups))
        return Table(name, {c: table.column(c) for c in needed}, None)
    decoded = decode_file(raw, name, corpus, TEXT)
    if decoded is None:
        return None
    reader = csv.DictReader(csv_source(decoded.text))
    header = list(reader.fieldnames or [])
    if spreadsheet_safe:
        header = [cell_value(h) for h in header]
        reader.fieldnames = header
    if _lacks(header, needed, role, name, corpus):
        return None
    values: dict[str, list[Any]] = {c: [] for c in needed}
    chunks: dict[str, list[pa.Array]] = {c: [] for c in needed}
    lines = array("q")
    for row in reader:
        lines.append(reader.line_num)
        for c in needed:
            value = row[c]
            values[c].append(cell_value(value) if spreadsheet_safe and isinstance(value, str) else value)
        if len(values[needed[0]]) == CSV_ROWS:
            for c in needed:
                chunks[c].append(pa.array(values[c], pa.string()))
                values[c] = []
    for c in needed:
        chunks[c].append(pa.array(values[c], pa.string()))
    return Table(name, {c: pa.chunked_array(chunks[c], pa.string()) for c in needed}, np.frombuffer(lines, dtype=np.int64))


#: CSV rows gathered as Python strings before they become Arrow arrays
CSV_ROWS = 1 << 16


def _lacks(header: list[str], needed: list[str], role: str, name: str, corpus: Corpus) -> bool:
    """Whether the table lacks a mapped column (then reported)."""
    missing = [c for c in needed if c not in header]
    if missing:
        corpus.findings.append(
            finding(
                "file-unreadable",
                f"{role} table lacks the mapped column(s) {', '.join(missing)}; its columns are {', '.join(map(str, header)) or 'none'}",
                "table left out; set [input] columns (e.g. columns = {doc = \"...\"})",
                file=name,
            )
        )
    return bool(missing)


def to_text(value: Any) -> str:
    return "" if value is None else str(value)


def as_offset(value: Any) -> int | None:
    """A CSV cell (text) or Parquet value (integer, or a float holding one) as an offset, else ``None``."""
    if isinstance(value, str):
        return parse_offset(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return offset_value(value)


def as_text(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column's values as text (:func:`to_text` of each: a null is ""), one string array. Strings and integers are
    converted by Arrow (as ``str`` writes them); any other type through ``str`` of each distinct value."""
    column = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or pa.types.is_integer(column.type):
        return pc.fill_null(column.cast(pa.string()), "")
    try:
        encoded = pc.dictionary_encode(column)
    except pa.ArrowNotImplementedError:  # a type Arrow does not hash: each value
        return pa.array([to_text(v) for v in column.to_pylist()], pa.string())
    names = pa.array([to_text(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.fill_null(names.take(encoded.indices), "")


def as_offsets(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column's values as offsets (:func:`as_offset` of each), -1 where a value is not one. Integers are checked by
    NumPy; any other type through :func:`as_offset` of each distinct value."""
    column = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if pa.types.is_integer(column.type) and column.type != pa.uint64():
        found = pc.fill_null(column.cast(pa.int64()), -1).to_numpy(zero_copy_only=False)
        return np.where((found >= 0) & (found <= MAX_OFFSET), found, -1)
    try:
        encoded = pc.dictionary_encode(column)
    except pa.ArrowNotImplementedError:  # a type Arrow does not hash: each value
        return np.array([-1 if (x := as_offset(v)) is None else x for v in column.to_pylist()], dtype=np.int64)
    lut = np.array([-1 if (x := as_offset(v)) is None else x for v in encoded.dictionary.to_pylist()] + [-1], dtype=np.int64)
    return lut[pc.fill_null(encoded.indices, len(lut) - 1).to_numpy(zero_copy_only=False)]  # a null: the last, -1
