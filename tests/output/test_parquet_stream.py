"""A table given to a ParquetStream in pieces (add, then end) is the file written whole, byte for byte: the same
row groups, cut where the whole table's are, and tables before and after it in their own row groups."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from unitize.output import directory
from unitize.output.directory import ParquetStream

SCHEMA = pa.schema([("doc_id", pa.string()), ("unit", pa.int32()), ("gold", pa.string()), ("confidence", pa.float64())])


def table(start: int, stop: int) -> pa.Table:
    rows = range(start, stop)
    return pa.table({"doc_id": [f"d{i // 7}" for i in rows], "unit": [i % 7 for i in rows],
                     "gold": [None if i % 5 == 0 else "PER" if i % 3 else "O" for i in rows],
                     "confidence": [1 / (1 + i % 4) for i in rows]}, schema=SCHEMA)


def test_a_table_written_in_pieces_is_the_table_written_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 10)
    whole = ParquetStream(tmp_path / "whole.parquet", SCHEMA)
    whole.write(table(0, 4))
    whole.write(table(4, 37))
    whole.write(table(37, 45))
    whole.close()
    pieces = ParquetStream(tmp_path / "pieces.parquet", SCHEMA)
    pieces.write(table(0, 4))
    for a, b in ((4, 7), (7, 7), (7, 19), (19, 20), (20, 37)):  # row groups end at 14, 24, 34, and the table at 37
        pieces.add(table(a, b))
    assert pieces.rows == 4 + 30  # three full row groups written, 3 rows held
    pieces.write(table(37, 45))  # ends the table in pieces first
    pieces.add(table(45, 45))  # an empty piece writes nothing
    pieces.close()
    assert pieces.rows == whole.rows == 45
    assert (tmp_path / "pieces.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    meta = pq.ParquetFile(tmp_path / "pieces.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [4, 10, 10, 10, 3, 8]


def test_close_writes_the_rows_held(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 10)
    stream = ParquetStream(tmp_path / "t.parquet", SCHEMA)
    stream.add(table(0, 6))
    stream.add(table(6, 13))
    stream.close()
    assert pq.read_table(tmp_path / "t.parquet").equals(table(0, 13))
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [10, 3]
