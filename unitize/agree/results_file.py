"""``results.parquet`` and ``results.csv`` written from a run's :class:`~.gathered.Results` a record batch at a time, each
whole or not at all: a ``--by-doc`` run's rows are never all in memory."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ..output import PARQUET_WRITE_OPTIONS, neutral_table, temporary
from .gathered import Results

#: rows of a row group of ``results.parquet`` (at least; a group ends at the end of a record batch)
ROW_GROUP_ROWS = 1 << 16


def parquet(rows: Results, path: Path) -> None:
    """``rows`` written a row group at a time (one, as ``pq.write_table`` writes it, up to :data:`ROW_GROUP_ROWS`)."""
    tmp = temporary(path)
    with pq.ParquetWriter(tmp, rows.schema, **PARQUET_WRITE_OPTIONS) as writer:
        held: list[pa.RecordBatch] = []
        for batch in rows.to_batches():
            held.append(batch)
            if sum(b.num_rows for b in held) >= ROW_GROUP_ROWS:
                writer.write_table(pa.Table.from_batches(held, rows.schema), 2 * ROW_GROUP_ROWS)
                held = []
        if held or not rows.num_rows:
            writer.write_table(pa.Table.from_batches(held, rows.schema))
    os.replace(tmp, path)


def csv(rows: Results, path: Path) -> None:
    """``rows`` as CSV, a record batch at a time, every string cell neutralised (:func:`~unitize.output.neutral_table`)."""
    tmp = temporary(path)
    with pacsv.CSVWriter(tmp, neutral_table(rows.schema.empty_table()).schema) as writer:
        for batch in rows.to_batches():
            writer.write_table(neutral_table(pa.Table.from_batches([batch])))
    os.replace(tmp, path)
