"""A part's row groups list their groups' runs (key-value metadata ``unitize:row_groups``): a reader finds a group's
rows from the listing without decoding the ``group`` column, the listing says what the column says, a file written
before the listing is indexed from the column alike, and a listing that does not fit its file is not used."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.dataset.parts import PartFiles
from unitize.output import parts as output_parts
from unitize.output.parts import ROW_GROUPS_KEY, runs


@pytest.fixture()
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tdb-mini in small row groups: some hold one group, some several, a group's rows cut across some."""
    monkeypatch.setattr(output_parts, "ROW_GROUP_MIN", 1000)
    monkeypatch.setattr(output_parts, "ROW_GROUP_MAX", 3000)
    dest = tmp_path / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(dest), "-q"]) == 0
    return dest


def _parts(out: Path) -> list[list[Path]]:
    return [sorted(folder.glob("part-*.parquet")) for folder in sorted((out / "units").glob("setting=*"))]


def _rewritten(path: Path, dest: Path, listing: bytes | None) -> Path:
    """The part with its row groups as they are and ``listing`` as its listing (None: none, as before listings)."""
    pf = pq.ParquetFile(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(dest, pf.schema_arrow) as writer:
        for i in range(pf.num_row_groups):
            writer.write_table(pf.read_row_group(i))
        if listing is not None:
            writer.add_key_value_metadata({ROW_GROUPS_KEY: listing})
    return dest


def _unfit(path: Path) -> bytes:
    """A listing of the right row groups whose runs do not cover their rows."""
    return json.dumps([[["x", 0, 1]] for _ in range(pq.ParquetFile(path).num_row_groups)]).encode()


def test_the_listing_says_what_the_group_column_says(out: Path) -> None:
    several = 0
    for paths in _parts(out):
        for path in paths:
            pf = pq.ParquetFile(path)
            listed = json.loads(pf.metadata.metadata[ROW_GROUPS_KEY.encode()])
            assert len(listed) == pf.num_row_groups > 0
            for i, found in enumerate(listed):
                assert found == runs(pf.read_row_group(i, columns=["group"]).column(0))
                several += len(found) > 1
    assert several  # the fixture has row groups of several groups


def test_the_index_comes_from_the_listing_without_reading_the_group_column(out: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for paths in _parts(out):
        listed = PartFiles(paths)
        monkeypatch.setattr(PartFiles, "_index_row_group", lambda *a: pytest.fail("the group column was read"))
        index = listed.index()
        monkeypatch.undo()
        before = PartFiles([_rewritten(p, tmp_path / p.parent.name / "before" / p.name, None) for p in paths])
        unfit = PartFiles([_rewritten(p, tmp_path / p.parent.name / "unfit" / p.name, _unfit(p)) for p in paths])
        assert before.index() == index == unfit.index()
        for group, where in index.items():
            assert listed.rows(group) == before.rows(group) > 0
            for k, ids in where:
                got = listed.read(k, ids, group, None)
                assert got.equals(before.read(k, ids, group, None))
                assert set(got.column("group").to_pylist()) == {group}


def test_a_table_without_a_group_column_lists_nothing(tmp_path: Path) -> None:
    stream = output_parts.RowGroups(output_parts.ParquetStream(tmp_path / "x.parquet", pa.schema([("item", pa.string())])))
    stream.write(pa.table({"item": ["a", "b"]}))
    stream.close()
    assert ROW_GROUPS_KEY.encode() not in (pq.ParquetFile(tmp_path / "x.parquet").metadata.metadata or {})
