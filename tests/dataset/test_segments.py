"""segments/<unit>.parquet read group by group (SegmentFile): each group's rows exactly as a whole read gives
them, in any order of asking, across batch and row-group edges; and Segments' relation counts as the set
arithmetic defines them, also when handed over counted."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from unitize.agree.spans import Segments
from unitize.dataset import segments as segments_module
from unitize.dataset.segments import SegmentFile


def _table(groups: list[str]) -> pa.Table:
    rows = [(g, layer, f"d{i % 3}", f"a{i % 4}", i, i + 2, [f"r{i % 5}", f"r{(i * 7) % 6}"])
            for g in groups for layer in ("Arg1", "Arg2") for i in range(len(g) * 3 + 1)]
    names = ["group", "layer", "doc_id", "annotator", "unit_begin", "unit_end", "records"]
    columns = list(zip(*rows))
    table = pa.table({n: list(c) for n, c in zip(names, columns)})
    return table.set_column(0, "group", table.column("group").dictionary_encode())


@pytest.fixture()
def path(tmp_path: Path) -> Path:
    file = tmp_path / "word.parquet"
    pq.write_table(_table(["a", "bb", "ccc", "dddd", "eeeee"]), file, row_group_size=7)
    return file


def _literal(table: pa.Table, group: str) -> list[dict]:
    return [r for r in table.to_pylist() if r["group"] == group]


@pytest.mark.parametrize("order", [["a", "bb", "ccc", "dddd", "eeeee"], ["eeeee", "a", "ccc", "bb", "dddd", "a"]])
@pytest.mark.parametrize("batch", [3, 5, 1 << 16])
def test_each_group_reads_as_the_whole_file(path: Path, order: list[str], batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segments_module, "BATCH", batch)
    whole = pq.read_table(path)
    whole = whole.set_column(0, "group", whole.column("group").cast(pa.string()))
    file = SegmentFile(path)
    assert file.groups() == ["a", "bb", "ccc", "dddd", "eeeee"]
    for group in order:
        got = file.group(group)
        assert got.column("group").type == pa.string()
        assert got.to_pylist() == _literal(whole, group)
    assert file.group("absent").num_rows == 0


def test_only_the_columns_asked_and_groups_in_several_runs(tmp_path: Path) -> None:
    file = tmp_path / "char.parquet"
    pq.write_table(pa.concat_tables([_table(["x", "y"]), _table(["x"])]), file, row_group_size=4)
    seg = SegmentFile(file, ["group", "annotator"])
    assert seg.runs() == {"x": [(0, 8), (16, 24)], "y": [(8, 16)]}
    got = seg.group("x")
    assert got.column_names == ["group", "annotator"]
    assert got.num_rows == 16


def test_relation_counts_are_the_set_arithmetic(path: Path) -> None:
    table = SegmentFile(path).group("dddd")
    segs = Segments(table)
    rows = table.to_pylist()
    counted = segs.relation_counts("dddd")
    assert counted is not None
    for k in (1, 2):
        for layers in combinations(("Arg1", "Arg2"), k):
            per: dict[str, set[str]] = {}
            for r in rows:
                if r["layer"] in layers:
                    per.setdefault(r["annotator"], set()).update(r["records"])
            expected = max(len(v) for v in per.values())
            assert segs.relations("dddd", layers) == expected
            assert Segments(None, counts=counted).relations("dddd", layers) == expected
    assert segs.relations("dddd", ["Arg3"]) == 0 == Segments(None, counts=counted).relations("dddd", ["Arg3"])
    assert segs.relations("nowhere", ["Arg1"]) == 0
