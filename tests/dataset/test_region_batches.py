"""Regions let out a batch at a time (unitize.dataset.region_rows.InOrder, region_batches): a group with one layer
after every piece, a group with several layers once its last layer is read — the batches, one after another, are
the setting's regions in adjudication order; and the texts of a batch's documents (unitize.dataset.texts.Texts)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.dataset.test_pieces import crowd, labels_mini, tdb_long  # noqa: F401  (module-scoped fixtures)
from unitize.adjudicate import adjudicate
from unitize.dataset import pieces as pieces_module
from unitize.dataset import regions
from unitize.dataset.directory import OutputData
from unitize.dataset.pieces import layer_pieces
from unitize.dataset.region_rows import ordered, region_batches
from unitize.dataset.texts import Texts


def key(r: regions.Region) -> tuple:
    return (r.group, r.doc, r.layer, r.begin, r.end, r.unit_begin, r.unit_end)


def whole(data: OutputData, setting: str) -> list[tuple]:
    """The setting's regions read whole and sorted once (every (group, layer) in one piece)."""
    found = [(c.docs, regions.regions(c)) for _, _, p in layer_pieces(data, data.setting(setting), 1 << 30) for c in p]
    return [key(r) for r in ordered(data, found)]


def test_a_group_of_one_layer_comes_out_after_every_piece(crowd: Path, monkeypatch) -> None:  # noqa: F811
    data = OutputData(crowd)
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 7)  # five pieces, a comment each
    batches = list(region_batches(data, data.setting("word-interval")))
    assert [len(b) for b in batches] == [2, 2, 1, 1]  # the four pieces with a region, each let out at once
    assert [sorted({r.doc for r in b}) for b in batches] == [["1001"], ["1003"], ["1004"], ["1005"]]
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 1 << 19)
    assert [len(b) for b in region_batches(data, data.setting("word-interval"))] == [6]  # one piece: one batch
    assert [key(r) for b in batches for r in b] == whole(data, "word-interval")


def test_a_group_of_two_layers_comes_out_once_its_last_layer_is_read(tdb_long: Path, monkeypatch) -> None:  # noqa: F811
    data = OutputData(tdb_long)
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 7)
    for setting in ("word-interval", "char-boundary-labels"):
        batches = list(region_batches(data, data.setting(setting)))
        groups = [{r.group for r in b} for b in batches]
        assert all(len(g) == 1 for g in groups) and len(groups) == len({g for gs in groups for g in gs})  # a batch a group
        assert any(len({r.layer for r in b}) == 2 for b in batches)  # Arg1 and Arg2 interleaved within a batch
        assert [key(r) for b in batches for r in b] == whole(data, setting)
    assert [len(b) for b in region_batches(data, data.setting("word-interval"))] == [4, 3, 4, 8]  # ama, icin, ki, ve


def test_item_regions_of_a_long_table_come_out_a_piece_at_a_time(labels_mini: Path, monkeypatch) -> None:  # noqa: F811
    data = OutputData(labels_mini)
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 1)  # an item a piece
    batches = list(region_batches(data, data.setting("items-long")))
    assert all(len(b) == 1 for b in batches) and len(batches) == 12  # the 12 items whose labels differ
    assert [key(r) for b in batches for r in b] == whole(data, "items-long") == whole(data, "items")


def test_the_texts_of_a_batch_of_documents(crowd: Path, tmp_path: Path) -> None:  # noqa: F811
    data = OutputData(crowd)
    table = pq.read_table(crowd / "documents.parquet", columns=["doc_id", "text"])
    every = dict(zip(table.column("doc_id").to_pylist(), table.column("text").to_pylist()))
    assert Texts(data).ids == list(every) and Texts(data).lengths() == {d: len(t) for d, t in every.items()}
    assert all(Texts(data).text(d) == t for d, t in every.items()) and Texts(data).text("nowhere") is None
    some = sorted(every)[1:3]
    assert Texts(data).of([some[1], some[0], some[1], "nowhere"]) == {some[1]: every[some[1]], some[0]: every[some[0]], "nowhere": None}
    assert Texts(data).of([]) == {}
    pq.write_table(pa.table({"doc_id": ["a"]}), tmp_path / "documents.parquet")  # a study without texts
    assert Texts(SimpleNamespace(path=tmp_path)).of(["a", "b"]) == {"a": None, "b": None}  # type: ignore[arg-type]
    assert Texts(SimpleNamespace(path=tmp_path / "nowhere")).of(["a"]) == {"a": None}  # type: ignore[arg-type]


def test_the_review_queue_and_the_item_gold_are_read_from_the_files(labels_mini: Path) -> None:  # noqa: F811
    result = adjudicate(labels_mini, setting="items-long")
    lines = (labels_mini / "adjudication" / "review.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(result.review) == len(lines) == result.summary["review_regions"] == 12
    assert {r["why"][0] for r in result.review} <= {"tied", "low confidence", "no gold"}
    gold = result.gold
    assert len(gold) == 50 and sum(v is not None for v in gold.values()) == result.summary["resolved"] == 46
    assert adjudicate(labels_mini, setting="items").gold == gold  # the wide layout's the same


def test_texts_of_a_documents_file_in_several_row_groups(tmp_path: Path) -> None:
    """dataset.texts.Texts: texts looked up by document from one array (a documents.parquet of several row groups is
    joined once, not at every lookup), a missing text and an unknown document None, lengths in code points."""
    out = tmp_path / "out"
    out.mkdir()
    table = pa.table({"doc_id": ["d1", "d2", "d3", "d4", "d5"], "text": ["a b", None, "çğü", "x" * 5, ""]})
    pq.write_table(table, out / "documents.parquet", row_group_size=2)
    texts = Texts(SimpleNamespace(path=out))  # type: ignore[arg-type]
    assert texts.ids == ["d1", "d2", "d3", "d4", "d5"] and isinstance(texts._texts, pa.Array)
    assert texts.of(["d5", "d3", "nope", "d1", "d3"]) == {"d5": "", "d3": "çğü", "nope": None, "d1": "a b"}
    assert texts.text("d2") is None and texts.text("d4") == "xxxxx"
    assert texts.lengths() == {"d1": 3, "d2": None, "d3": 3, "d4": 5, "d5": 0}
    assert texts.at(np.array([3, -1, 1, 0])) == ["xxxxx", None, None, "a b"] and texts.sorted_rows().tolist() == [0, 1, 2, 3, 4]


def test_texts_read_in_slices_into_a_mapped_file_are_the_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """dataset.texts.Texts: the text column read two rows at a time into a mapped scratch file, looked up by name and
    by row as on the heap, and again after its pages were let go."""
    from unitize.dataset import texts as texts_module
    from unitize.runtime import mapped as mapped_module

    out = tmp_path / "out"
    out.mkdir()
    column = ["z" * 40, None, "çğü", "", "👍 ok"]
    pq.write_table(pa.table({"doc_id": ["e", "b", "a", "d", "c"], "text": column}), out / "documents.parquet", row_group_size=3)
    monkeypatch.setattr(texts_module, "READ_ROWS", 2)
    monkeypatch.setattr(mapped_module, "MAP_BYTES", 1)
    texts = Texts(SimpleNamespace(path=out))  # type: ignore[arg-type]
    assert texts._pages.mapping is not None and len(texts) == 5 and texts.ids == ["e", "b", "a", "d", "c"]
    assert texts.of(["c", "e", "x"]) == {"c": "👍 ok", "e": "z" * 40, "x": None} and texts.sorted_rows().tolist() == [2, 1, 4, 3, 0]
    texts.let_go()
    assert texts.at(np.arange(5)) == column and texts.length_array().tolist() == [40, -1, 3, 0, 4]
    ids = pa.array(["e", "b", "a", "d", "c"]).dictionary_encode()  # ids stored as a dictionary by another tool
    pq.write_table(pa.table({"doc_id": ids, "text": column}), out / "documents.parquet")
    assert Texts(SimpleNamespace(path=out)).of(["a", "x", "e"]) == {"a": "çğü", "x": None, "e": "z" * 40}  # type: ignore[arg-type]


def test_a_wide_tables_cells_are_interleaved_as_the_stable_sort_orders_them():
    """(unit, annotator, code) by unit, annotators in column order: a wide table's columns (one row per unit, in
    order) interleaved equal the concatenated columns sorted by unit; other rows (a long table's) are sorted."""
    import numpy as np

    from unitize.dataset.regions import _in_unit_order

    rng = np.random.default_rng(3)

    def sorted_by_unit(coded, rows, anns):
        keep = [c >= 0 for c in coded]
        row = np.concatenate([r[k] for r, k in zip(rows, keep)])
        order = np.argsort(row, kind="stable")
        return (row[order], np.concatenate([a[k] for a, k in zip(anns, keep)])[order],
                np.concatenate([c[k] for c, k in zip(coded, keep)])[order])

    for units, m in ((0, 3), (1, 2), (500, 3), (500, 1)):
        row = np.arange(units, dtype=np.int64) * 2  # units in order, not every index used
        coded = [np.where(rng.random(units) < 0.2, -1, rng.integers(0, 4, units)) for _ in range(m)]
        anns = [np.full(units, k, np.int64) for k in range(m)]
        got = _in_unit_order(coded, [row] * m, anns)
        expected = sorted_by_unit(coded, [row] * m, anns)
        assert all(np.array_equal(g, e) and g.dtype == np.int64 for g, e in zip(got, expected))
    shuffled = rng.permutation(300).astype(np.int64)  # rows out of unit order: sorted, not interleaved
    coded = [rng.integers(-1, 3, 300) for _ in range(3)]
    anns = [np.full(300, k, np.int64) for k in range(3)]
    got = _in_unit_order(coded, [shuffled] * 3, anns)
    assert all(np.array_equal(g, e) for g, e in zip(got, sorted_by_unit(coded, [shuffled] * 3, anns)))
    assert np.all(got[0][1:] >= got[0][:-1])
