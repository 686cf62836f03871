"""A setting read a piece of whole documents at a time (unitize.dataset.regions.layer_pieces): the pieces of a
(group, layer), one after another, are its cells read whole — the same documents in the same order, the same units
and the same values —, only the groups asked for, an item group whole, and :data:`PIECE_ROWS` the piece size."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, ROOT
from unitize.cli import main
from unitize.dataset import regions
from unitize.dataset.directory import OutputData
from unitize.dataset.regions import Cells, layer_pieces, setting_cells


@pytest.fixture(scope="module")
def tdb_long(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tdb-mini in the long layout, in several parts: groups, two layers (Arg1, Arg2), labels mode too."""
    out = tmp_path_factory.mktemp("pieces") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--layout", "long", "--partition-units", "300",
                 "--modes", "separate,labels", "-q"]) == 0
    return out


def units(c: Cells) -> list[tuple]:
    """A piece's units and cells by name: (document, unit, begin, end, {annotator: value})."""
    values: list[dict[str, str]] = [{} for _ in c.row_doc]
    for r, a, v in zip(c.cell_row.tolist(), c.cell_annotator.tolist(), c.cell_code.tolist()):
        values[r][c.annotators[a]] = c.values[v]
    return [(c.docs[d], u, b, e, values[i]) for i, (d, u, b, e) in
            enumerate(zip(c.row_doc.tolist(), c.row_unit.tolist(), c.begin.tolist(), c.end.tolist()))]


def test_the_pieces_of_a_layer_are_its_cells_read_whole(tdb_long: Path) -> None:
    data = OutputData(tdb_long)
    for setting in data.settings:
        whole = {(c.group, c.layer): c for c in setting_cells(data, setting)}
        found = [(g, layer, list(p)) for g, layer, p in layer_pieces(data, setting, 7)]
        assert [(g, layer) for g, layer, _ in found] == list(whole)  # groups sorted, layers in the manifest's order
        assert [len(p) for *_, p in found] == [1, 1, 1, 1, 2, 2, 2, 2]  # a piece per document: each has more than 7 rows
        for g, layer, pieces in found:
            c = whole[(g, layer)]
            assert [d for piece in pieces for d in piece.docs] == c.docs
            assert [u for piece in pieces for u in units(piece)] == units(c)
    assert sum(len(units(c)) for c in setting_cells(data, data.setting("word-interval"))) == 2768


def test_only_the_groups_asked_for_and_pieces_of_piece_rows_by_default(tdb_long: Path, monkeypatch) -> None:
    data = OutputData(tdb_long)
    setting = data.setting("word-interval-labels")
    assert [(g, layer) for g, layer, _ in layer_pieces(data, setting, groups=["ve", "ki"])] == [
        ("ki", "Arg1"), ("ki", "Arg2"), ("ve", "Arg1"), ("ve", "Arg2")]
    assert all(len(list(p)) == 1 for *_, p in layer_pieces(data, setting))  # 512 Ki rows: every group whole
    monkeypatch.setattr(regions, "PIECE_ROWS", 7)
    assert [len(list(p)) for *_, p in layer_pieces(data, setting, groups=["ki"])] == [2, 2]


def test_an_item_group_comes_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "labels-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    data = OutputData(out)
    assert [s.name for s in data.settings] == ["items", "items-long"]
    for setting in data.settings:
        whole = list(setting_cells(data, setting))
        assert [(c.group, len(c.docs), c.cell_row.size) for c in whole] == [
            ("offensive", 12, 35), ("severity", 12, 34), ("target", 8, 21), ("target_group", 6, 15), ("topics", 12, 22)]
        found = [(g, layer, list(p)) for g, layer, p in layer_pieces(data, setting, 1)]
        assert [(g, layer, len(p)) for g, layer, p in found] == [(c.group, "items", 1) for c in whole]
        assert [units(p[0]) for *_, p in found] == [units(c) for c in whole]
