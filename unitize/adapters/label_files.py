"""The records of one flat-label file, read as the labels reader needs them.

:func:`open_records` gives a file's header and its (line or record number, record)
pairs. CSV and TSV are read line by line and Parquet a row batch at a time, so a
label file of any size is never held whole; a JSON document (a list or an object
of records) is parsed whole, one file at a time, and so are JSON lines files (their
records are checked together for the item field). :func:`fingerprint` counts a
file's size and sha256, and checks a text file decodes, before its records are read.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..cells import value as cell_value
from ._safe import _CHUNK, InputError, load_json

#: the column holding the key of a JSON file that is an object keyed by item id
KEY_COLUMN = "@key"
#: Parquet rows read at once
PARQUET_BATCH = 1 << 16
#: the formats whose records come one at a time (the others as one list)
STREAMED = ("csv", "tsv", "parquet")

Records = Iterator[tuple[int, dict[str, Any]]]


def fingerprint(path: Path, file_format: str, encoding: str) -> tuple[int, str]:
    """The size and sha256 of a file, read in chunks; a text file must decode in ``encoding`` (else
    :class:`UnicodeDecodeError`, as decoding the whole file raises it, or :class:`LookupError`)."""
    digest, size = hashlib.sha256(), 0
    decoder = codecs.getincrementaldecoder(encoding)("strict") if file_format != "parquet" else None
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            size += len(chunk)
            digest.update(chunk)
            if decoder is not None:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    path.read_bytes().decode(encoding)  # the error, with its place in the whole file
                    raise
    if decoder is not None:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            path.read_bytes().decode(encoding)
            raise
    return size, digest.hexdigest()


def open_records(path: Path, file_format: str, encoding: str, delimiter: str | None,
                 spreadsheet_safe: bool = False) -> tuple[list[str] | None, Records]:
    """The header (``None`` when records carry their own keys) and the (line or record number, record) pairs
    of a file that :func:`fingerprint` passed; :class:`InputError` (or :class:`ValueError`) when it cannot be read.
    ``spreadsheet_safe``: CSV cells were written by :func:`unitize.cells.cell` (read back with their values)."""
    if file_format in ("csv", "tsv"):
        return _csv(path, encoding, delimiter or ("\t" if file_format == "tsv" else ","), spreadsheet_safe)
    if file_format == "parquet":
        return _parquet(path)
    text = path.read_bytes().decode(encoding).removeprefix("\ufeff")
    if file_format == "json":
        data = load_json(text)
        if isinstance(data, dict):
            data = [{KEY_COLUMN: k, **v} if isinstance(v, dict) else {KEY_COLUMN: k, "\0bad": v} for k, v in data.items()]
        if not isinstance(data, list):
            raise ValueError("a JSON file must hold a list of objects or an object keyed by item id")
        return None, ((i + 1, r if isinstance(r, dict) else {"\0bad": r}) for i, r in enumerate(data))

    def lines() -> Records:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = load_json(line)
            except InputError as exc:
                record = {"\0bad": str(exc)}
            yield number, record if isinstance(record, dict) else {"\0bad": "not a JSON object"}

    return None, lines()


def _csv(path: Path, encoding: str, delimiter: str, spreadsheet_safe: bool = False) -> tuple[list[str], Records]:
    """CSV or TSV line by line: lines split as the csv module splits a text opened with ``newline=""``."""
    size = path.stat().st_size
    if size >= csv.field_size_limit():  # process-wide: raised, never lowered, to the longest a field can be
        csv.field_size_limit(size + 1)

    def lines() -> Iterator[str]:  # the file is open while its records are read
        with open(path, encoding=encoding, newline="") as fh:
            first = fh.readline()
            if first:
                yield first.removeprefix("\ufeff")
            yield from fh

    reader = csv.reader(lines(), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("an empty file (no header line)") from None
    except csv.Error as exc:
        raise InputError(f"not a readable CSV file: {exc}") from None
    if spreadsheet_safe:
        header = [cell_value(h) for h in header]

    def rows() -> Records:
        start = reader.line_num
        try:
            for row in reader:
                if not any(cell.strip() for cell in row):
                    start = reader.line_num
                    continue
                record: dict[str, Any] = dict(zip(header, [cell_value(c) for c in row] if spreadsheet_safe else row))
                if len(row) != len(header):
                    record["\0width"] = len(row)
                yield start + 1, record
                start = reader.line_num
        except csv.Error as exc:
            raise InputError(f"line {reader.line_num}: {exc}") from None

    return header, rows()


def _parquet(path: Path) -> tuple[list[str], Records]:
    """A Parquet file a row batch at a time; strings checked to be valid UTF-8 before they are converted."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    failures = (pa.ArrowException, OSError, ValueError, EOFError, OverflowError)
    try:
        parquet = pq.ParquetFile(path)
        columns = parquet.schema_arrow.names
    except failures as exc:
        raise InputError(f"not a readable Parquet file: {exc}") from None

    def rows() -> Records:
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH):
                batch.validate(full=True)
                for record in batch.to_pylist():
                    number += 1
                    yield number, record
        except failures as exc:
            raise InputError(f"not a readable Parquet file: {exc}") from None

    return columns, rows()
