"""segments/<unit>.parquet read group by group (SegmentFile): each group's rows exactly as a whole read gives
them, in any order of asking, across batch and row-group edges; and the relation counts (unitize.units.relations)
as the set arithmetic defines them, for every group at once or one group's rows, and as the segments file
keeps them."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from unitize.agree.spans import Segments
from unitize.dataset import segments as segments_module
from unitize.dataset.segments import SegmentFile
from unitize.units.relations import ALL_SETS, KEY, from_metadata, relation_counts, to_metadata


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
    file = SegmentFile(path)
    assert file.groups() == ["a", "bb", "ccc", "dddd", "eeeee"]
    for group in order:
        got = file.group(group)
        assert got.column("group").type == pa.dictionary(pa.int32(), pa.string())  # as stored
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


def _expected(rows: list[dict], layers: tuple[str, ...]) -> int:
    per: dict[str, set[str]] = {}
    for r in rows:
        if r["layer"] in layers:
            per.setdefault(r["annotator"], set()).update(x for x in r["records"] if x is not None)
    return max((len(v) for v in per.values()), default=0)


def test_relation_counts_are_the_set_arithmetic(path: Path) -> None:
    whole = pq.read_table(path)
    counted = relation_counts(whole)
    assert sorted(counted) == ["a", "bb", "ccc", "dddd", "eeeee"]
    for group in counted:
        rows = _literal(whole, group)
        assert relation_counts(SegmentFile(path).group(group)) == {group: counted[group]}  # one group's rows alone: the same
        for k in (1, 2):
            for layers in combinations(("Arg1", "Arg2"), k):
                assert counted[group][frozenset(layers)] == _expected(rows, layers)
                assert Segments(None, counts=counted[group]).relations(layers) == _expected(rows, layers)
    dddd = counted["dddd"]
    assert dddd == {frozenset({"Arg1"}): 5, frozenset({"Arg2"}): 5, frozenset({"Arg1", "Arg2"}): 5}
    assert Segments(None, counts=dddd).relations(["Arg3"]) == 0  # no segments there
    assert Segments(None, counts={}).relations(["Arg1"]) == 0  # a group without records
    assert Segments(None).relations(["Arg1"]) is None  # not counted: not discourse data


def test_relation_counts_of_many_layers_and_null_records() -> None:
    layers = [f"L{i}" for i in range(8)]
    table = pa.table({
        "group": ["g"] * 12, "layer": [layers[i % 8] for i in range(12)], "annotator": ["a", "b", "b"] * 4,
        "records": [["r1"], ["r1", None], ["r2"], ["r6", None], ["r1"], ["r3"], [], ["r4"], ["r1"], ["r5"], [None], ["r2"]],
    })
    rows = table.to_pylist()
    counted = relation_counts(table)["g"]
    present = sorted({r["layer"] for r in rows if any(x is not None for x in r["records"])})
    assert len(present) > ALL_SETS  # above: each layer and all of them, not every set
    assert set(counted) == {frozenset([x]) for x in present} | {frozenset(present)}
    for key, n in counted.items():
        assert n == _expected(rows, tuple(key))
    assert Segments(None, counts=counted).relations(["L0", "L1"]) is None  # a set not counted
    assert Segments(None, counts=counted).relations(layers) == _expected(rows, tuple(layers))


def test_relation_counts_round_trip_through_the_schema(path: Path) -> None:
    counted = relation_counts(pq.read_table(path))
    schema = pa.schema([("group", pa.string())], metadata={KEY: to_metadata(counted)})
    assert from_metadata(schema) == counted
    assert from_metadata(pa.schema([("group", pa.string())])) is None
    assert from_metadata(pa.schema([("group", pa.string())], metadata={KEY: b"{not json"})) is None
