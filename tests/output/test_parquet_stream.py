"""A table given to a ParquetStream in pieces (add, then end) is the file written whole, byte for byte: the same
row groups, cut where the whole table's are, and tables before and after it in their own row groups."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

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


def test_a_list_column_in_many_chunks_is_written_as_in_one(tmp_path: Path) -> None:
    # pyarrow cuts a list column's pages where its chunks end: the bytes would depend on how the rows were cut
    # (a streamed span run's segments come in a chunk per batch, mapped from files); those of other columns do not
    schema = pa.schema([("doc_id", pa.string()), ("records", pa.list_(pa.string()))])
    n = 20_000  # records of several data pages (1 MiB each)
    rows = pa.table({"doc_id": [f"d{i}" for i in range(n)],
                     "records": [[f"annotations/crowd/spans.csv#line {i:05d}"] * (1 + i % 3) for i in range(n)]}, schema=schema)
    cut = pa.concat_tables([rows.slice(0, 10_000), rows.slice(10_000, 2_345), rows.slice(12_345)])
    assert cut.column("records").num_chunks == 3
    for name, t in (("one", rows), ("cut", cut)):
        stream = ParquetStream(tmp_path / f"{name}.parquet", schema)
        stream.write(t)
        stream.close()
    pieces = ParquetStream(tmp_path / "pieces.parquet", schema)
    for a, b in ((0, 5), (5, 17_000), (17_000, n)):
        pieces.add(rows.slice(a, b - a))
    pieces.close()
    assert (tmp_path / "cut.parquet").read_bytes() == (tmp_path / "one.parquet").read_bytes() == (tmp_path / "pieces.parquet").read_bytes()
    assert pq.read_table(tmp_path / "cut.parquet").equals(rows)


def test_tokens_built_in_pieces_are_the_tokens_built_whole(tmp_path: Path, monkeypatch) -> None:
    # tokens.parquet comes a TOKEN_ROWS batch at a time (a corpus has millions of tokens): the file is the one the
    # whole table gives, in row groups that cut across the batches
    from unitize.cli import main
    from unitize.output import tables

    study = Path(__file__).resolve().parents[2] / "unitize" / "examples" / "tdb-mini" / "study.toml"
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 300)
    files = {}
    for rows in (1 << 30, 7, 299, 1000):
        monkeypatch.setattr(tables, "TOKEN_ROWS", rows)
        monkeypatch.setattr(tables.tokens_table, "__defaults__", (rows,))
        assert main(["convert", str(study), "--out", str(tmp_path / str(rows)), "-q"]) == 0
        files[rows] = (tmp_path / str(rows) / "tokens.parquet").read_bytes()
    assert len(set(files.values())) == 1
    written = pq.ParquetFile(tmp_path / "7" / "tokens.parquet")
    assert [written.metadata.row_group(i).num_rows for i in range(written.metadata.num_row_groups)] == [300, 300, 92]
    manifest = json.loads((tmp_path / "7" / "manifest.json").read_text(encoding="utf-8"))
    assert [o["rows"] for o in manifest["outputs"] if o["path"] == "tokens.parquet"] == [written.metadata.num_rows]


@pytest.mark.parametrize("example", ["tdb-mini", "crowd-mini"])
def test_documents_and_universe_built_in_pieces_are_the_ones_built_whole(tmp_path: Path, monkeypatch, example: str) -> None:
    # documents.parquet and universe.parquet come DOC_ROWS rows at a time (a crowd study has a row per text in
    # each): the files are those the whole tables give, in the writer's row groups
    from unitize.cli import main
    from unitize.output import tables

    study = Path(__file__).resolve().parents[2] / "unitize" / "examples" / example / "study.toml"
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 2)
    files = {}
    for rows in (1 << 30, 1, 3):
        monkeypatch.setattr(tables.documents_table, "__defaults__", (rows,))
        monkeypatch.setattr(tables.universe_table, "__defaults__", (rows,))
        assert main(["convert", str(study), "--out", str(tmp_path / str(rows)), "-q"]) == 0
        files[rows] = [(tmp_path / str(rows) / name).read_bytes() for name in ("documents.parquet", "universe.parquet")]
    assert files[1] == files[3] == files[1 << 30]
    for name in ("documents.parquet", "universe.parquet"):
        written = pq.ParquetFile(tmp_path / "1" / name)
        sizes = [written.metadata.row_group(i).num_rows for i in range(written.metadata.num_row_groups)]
        assert len(sizes) > 1 and set(sizes[:-1]) == {2} and 0 < sizes[-1] <= 2
    documents = pq.read_table(tmp_path / "1" / "documents.parquet")
    assert documents.column("doc_id").to_pylist() == sorted(documents.column("doc_id").to_pylist())


def test_a_few_rows_left_for_the_next_row_group_are_copied_not_sliced():
    """The rows a row group leaves for the next are held as a copy when they are few: a slice would keep every buffer
    of the table alive (a writing thread of the long layout held two batches of a million rows each); many rows stay
    a slice (copying them would cost what the table does)."""
    from unitize.output.directory import rest_of

    table = pa.table({"x": pa.array(np.arange(1000, dtype=np.int64)), "d": pa.array(["a", "b"] * 500).dictionary_encode()})
    source = table.column("x").chunks[0].buffers()[1]
    few = rest_of(table, 990)
    assert few.to_pydict() == table.slice(990).to_pydict()
    assert few.schema == table.schema
    held = few.column("x").chunks[0].buffers()[1]
    assert not source.address <= held.address < source.address + source.size
    many = rest_of(table, 500)
    assert many.to_pydict() == table.slice(500).to_pydict()
    assert many.column("x").chunks[0].buffers()[1].address == source.address
    assert rest_of(table, 1000).num_rows == 0


def test_a_dictionary_column_cut_by_group_is_written_on_one_dictionary(tmp_path: Path) -> None:
    # a units part holds a chunk per group, each with a dictionary of its own (the group's name, its layers, its
    # labels): pyarrow falls back to plain pages for the rest of the column chunk when a chunk's dictionary differs,
    # and every reader then hashes the column's values one by one into a dictionary again
    schema = pa.schema([("group", pa.dictionary(pa.int32(), pa.string())), ("label", pa.dictionary(pa.int32(), pa.string()))])
    n = 30_000

    def chunk(group: str, labels: list[str], codes: np.ndarray, missing: np.ndarray) -> pa.Table:
        return pa.table({"group": pa.DictionaryArray.from_arrays(pa.array(np.zeros(codes.size, np.int32)), pa.array([group])),
                         "label": pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32), mask=missing), pa.array(labels))},
                        schema=schema)

    rng = np.random.default_rng(7)
    cut = pa.concat_tables([
        chunk("ve", ["O", "B-Arg1", "unused"], rng.integers(0, 2, n), rng.random(n) < 0.1),  # a dictionary value no row uses
        chunk("ama", ["I-Arg2", "O"], rng.integers(0, 2, n), np.zeros(n, bool)),  # unsorted
        chunk("ancak", ["B-Arg1"], np.zeros(n, np.int64), np.zeros(n, bool)),
    ])
    assert cut.column("group").num_chunks == 3
    stream = ParquetStream(tmp_path / "cut.parquet", schema)
    stream.write(cut)
    stream.close()
    one = ParquetStream(tmp_path / "one.parquet", schema)  # the same rows, cut elsewhere
    one.add(cut.slice(0, 12_345))
    one.add(cut.slice(12_345))
    one.close()
    assert (tmp_path / "cut.parquet").read_bytes() == (tmp_path / "one.parquet").read_bytes()
    back = pq.read_table(tmp_path / "cut.parquet")
    assert back.column("group").cast(pa.string()).to_pylist() == ["ve"] * n + ["ama"] * n + ["ancak"] * n
    assert back.column("label").cast(pa.string()).equals(cut.column("label").cast(pa.string()))
    assert back.column("label").null_count == cut.column("label").null_count > 0
    assert back.column("label").chunk(0).dictionary.to_pylist() == ["B-Arg1", "I-Arg2", "O"]  # the used values, sorted
    meta = pq.ParquetFile(tmp_path / "cut.parquet").metadata.row_group(0)
    for j in range(2):  # dictionary pages: a few bytes a row at most (a plain page holds each value, 4 bytes and more)
        assert meta.column(j).total_uncompressed_size < 3 * n, meta.column(j)


def test_a_dictionary_column_on_one_dictionary_keeps_it_in_every_row_group(tmp_path: Path, monkeypatch) -> None:
    # the long layout's annotator column names every annotator in each chunk: each row group keeps that dictionary,
    # so a reader's chunks agree (Arrow's group_by refuses differing dictionaries), unused names and order included
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 100)
    schema = pa.schema([("annotator", pa.dictionary(pa.int32(), pa.string()))])
    names = pa.array(["w3", "w1", "w2"])
    pieces = [pa.table({"annotator": pa.DictionaryArray.from_arrays(pa.array(np.full(70, k, np.int32)), names)}, schema=schema)
              for k in (0, 1, 0)]
    stream = ParquetStream(tmp_path / "a.parquet", schema)
    for piece in pieces:
        stream.add(piece)
    stream.close()
    back = pq.read_table(tmp_path / "a.parquet")
    assert back.column("annotator").num_chunks == 3  # row groups of 100, 100 and 10 rows
    assert all(c.dictionary.to_pylist() == ["w3", "w1", "w2"] for c in back.column("annotator").chunks)
    counted = back.group_by("annotator").aggregate([("annotator", "count")]).to_pydict()  # groups in no fixed order
    assert dict(zip(counted["annotator"], counted["annotator_count"])) == {"w3": 140, "w1": 70}


def test_a_whole_table_calls_written_after_each_row_group(tmp_path: Path, monkeypatch) -> None:
    """A streamed run's segments lie in mapped scratch files: the writer is told after each row group (their pages are
    then let go), and the file is the one written without being told."""
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 16)
    rows_written: list[int] = []
    told = ParquetStream(tmp_path / "told.parquet", SCHEMA)
    told.write(table(0, 40), lambda: rows_written.append(told.rows))
    told.close()
    plain = ParquetStream(tmp_path / "plain.parquet", SCHEMA)
    plain.write(table(0, 40))
    plain.close()
    assert len(rows_written) == 3 == pq.ParquetFile(tmp_path / "told.parquet").metadata.num_row_groups
    assert (tmp_path / "told.parquet").read_bytes() == (tmp_path / "plain.parquet").read_bytes()


def test_a_streamed_runs_segments_let_their_pages_go_as_they_are_written(tmp_path: Path) -> None:
    """Unitized.side_tables hands each unit type's segments with the result's let_go (called after each row group),
    the documents and the tokens (which read the mapped texts and token extents) with let_go_all, the universe with
    nothing to call."""
    import unitize
    from tests.conftest import EXAMPLE

    settings = unitize.load_settings(EXAMPLE / "study.toml")
    result = unitize.unitize(unitize.read_corpus(settings), settings)
    side = [(relative, written) for relative, _, written in result.side_tables()]
    assert [r for r, _ in side] == ["segments/char.parquet", "segments/word.parquet", "documents.parquet", "universe.parquet",
                                    "tokens.parquet"]
    assert [w == result.results[u].let_go for u, (_, w) in zip(("char", "word"), side)] == [True, True]
    from unitize.runtime.mapped import let_go_all

    assert [w for _, w in side[2:]] == [let_go_all, None, let_go_all]


def test_a_row_groups_document_ids_keep_only_the_ids_it_uses(tmp_path: Path, monkeypatch) -> None:
    """A doc_id column on the run's dictionary (two million ids at the 10x crowd scale) is written on the ids each row
    group uses, in the dictionary's order, when they are fewer than half of it; a row group using most keeps it, and
    other dictionary columns keep theirs. The values read back are those written."""
    monkeypatch.setattr(directory, "ROW_GROUP_ROWS", 6)
    monkeypatch.setattr(directory, "COMPACT_VALUES", 4)
    docs = pa.array([f"d{i:02d}" for i in range(10)])
    schema = pa.schema([("doc_id", pa.dictionary(pa.int32(), pa.string())), ("layer", pa.dictionary(pa.int32(), pa.string()))])
    codes = [7, 7, 2, 2, 2, 9, 0, 1, 2, 3, 4, 5, 6, 8, 8]  # row groups: {2, 7, 9}, {0..5} and {6, 8}
    layers = pa.array(list("abcdefghij"))
    written = pa.table({"doc_id": pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), docs),
                        "layer": pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), layers)}, schema=schema)
    stream = ParquetStream(tmp_path / "u.parquet", schema)
    stream.write(written)
    stream.close()
    back = pq.read_table(tmp_path / "u.parquet")
    assert [c.dictionary.to_pylist() for c in back.column("doc_id").chunks] == [["d02", "d07", "d09"], docs.to_pylist(), ["d06", "d08"]]
    assert all(c.dictionary.to_pylist() == layers.to_pylist() for c in back.column("layer").chunks)
    assert back.column("doc_id").to_pylist() == [f"d{c:02d}" for c in codes] and back.column("layer").to_pylist() == written.column("layer").to_pylist()
    import duckdb  # another reader: row groups on dictionaries of their own read as the values written

    rows = duckdb.sql(f"SELECT doc_id, layer FROM read_parquet('{tmp_path / 'u.parquet'}')").fetchall()
    assert rows == [(f"d{c:02d}", "abcdefghij"[c]) for c in codes]
