"""A setting read a piece of whole documents at a time (unitize.dataset.pieces.layer_pieces): the pieces of a
(group, layer), one after another, are its cells read whole — the same documents in the same order, the same units
and the same values —, only the groups asked for, an item group of a long table in pieces of whole items, and :data:`PIECE_ROWS` the piece size; the
disagreement regions exported from the pieces (``unitize export --to disagreements``) are the whole's, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, ROOT
from unitize.cli import main
from unitize.dataset import pieces as pieces_module
from unitize.dataset.directory import OutputData
from unitize.dataset.pieces import layer_pieces
from unitize.dataset.regions import Cells, setting_cells

CROWD = ROOT / "unitize" / "examples" / "crowd-mini" / "study.toml"
LABELS = ROOT / "unitize" / "examples" / "labels-mini" / "study.toml"


def convert_tdb_long(out: Path) -> Path:
    """tdb-mini in the long layout, in several parts: groups, two layers (Arg1, Arg2), labels mode too."""
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--layout", "long", "--partition-units", "300",
                 "--modes", "separate,labels", "-q"]) == 0
    return out


def convert_crowd(out: Path) -> Path:
    """crowd-mini: one group (``all``) of five comments, four workers, three a comment, the long layout."""
    assert main(["convert", str(CROWD), "--out", str(out), "-q"]) == 0
    return out


@pytest.fixture(scope="module")
def tdb_long(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert_tdb_long(tmp_path_factory.mktemp("pieces") / "out")


@pytest.fixture(scope="module")
def tdb_sparse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tdb-mini in the sparse layout, labels mode too: a group's dense rows are rebuilt from its stored rows."""
    out = tmp_path_factory.mktemp("sparse") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--layout", "sparse", "--modes", "separate,labels", "-q"]) == 0
    return out


@pytest.fixture(scope="module")
def crowd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert_crowd(tmp_path_factory.mktemp("crowd") / "out")


@pytest.fixture(scope="module")
def labels_mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """labels-mini: five item groups, wide (``items``) and long (``items-long``)."""
    out = tmp_path_factory.mktemp("labels") / "out"
    assert main(["convert", str(LABELS), "--out", str(out), "-q"]) == 0
    return out


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


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


def test_a_sparse_group_in_runs_of_documents_is_its_dense_rows_read_whole(tdb_sparse: Path) -> None:
    """A sparse group of more units than the limit: its dense rows rebuilt a run of whole documents at a time (here a
    document a run) are the rows of the group's dense table, in its order, with the same values."""
    data = OutputData(tdb_sparse)
    for setting in data.settings:
        assert setting.layout.name == "sparse"
        whole = {(c.group, c.layer): c for c in setting_cells(data, setting)}
        found = [(g, layer, list(p)) for g, layer, p in layer_pieces(data, setting, 7)]
        assert [(g, layer) for g, layer, _ in found] == list(whole)
        assert [len(p) for *_, p in found] == [1, 1, 1, 1, 2, 2, 2, 2]  # a run per document: each has more than 7 units
        for g, layer, pieces in found:
            c = whole[(g, layer)]
            assert [d for piece in pieces for d in piece.docs] == c.docs
            assert [u for piece in pieces for u in units(piece)] == units(c)
        assert all(len(list(p)) == 1 for *_, p in layer_pieces(data, setting))  # 512 Ki cells: every group whole
    assert sum(len(units(c)) for c in setting_cells(data, data.setting("word-interval"))) == 2768
    # the limit counts cells: group ki has 234 + 247 word units and three annotators, 1,443 cells; a run closes at
    # the document that fills it (234 units: 702 cells)
    words = data.setting("word-interval")
    assert [len(list(p)) for *_, p in layer_pieces(data, words, 1443, groups=["ki"])] == [1, 1]
    assert [len(list(p)) for *_, p in layer_pieces(data, words, 705, groups=["ki"])] == [1, 1]
    assert [len(list(p)) for *_, p in layer_pieces(data, words, 704, groups=["ki"])] == [2, 2]


def test_only_the_groups_asked_for_and_pieces_of_piece_rows_by_default(tdb_long: Path, monkeypatch) -> None:
    data = OutputData(tdb_long)
    setting = data.setting("word-interval-labels")
    assert [(g, layer) for g, layer, _ in layer_pieces(data, setting, groups=["ve", "ki"])] == [
        ("ki", "Arg1"), ("ki", "Arg2"), ("ve", "Arg1"), ("ve", "Arg2")]
    assert all(len(list(p)) == 1 for *_, p in layer_pieces(data, setting))  # 512 Ki rows: every group whole
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 7)
    assert [len(list(p)) for *_, p in layer_pieces(data, setting, groups=["ki"])] == [2, 2]


def test_an_item_group_of_a_long_table_comes_a_piece_of_whole_items_at_a_time(labels_mini: Path) -> None:
    data = OutputData(labels_mini)
    assert [s.name for s in data.settings] == ["items", "items-long"]
    for setting in data.settings:
        whole = list(setting_cells(data, setting))
        assert [(c.group, len(c.docs), c.cell_row.size) for c in whole] == [
            ("offensive", 12, 35), ("severity", 12, 34), ("target", 8, 21), ("target_group", 6, 15), ("topics", 12, 22)]
        found = [(g, layer, p.layers, list(p)) for g, layer, p in layer_pieces(data, setting, 1)]
        assert [(g, layer, layers) for g, layer, layers, _ in found] == [(c.group, "items", ["items"]) for c in whole]
        # the wide table whole; the long one an item a piece (a limit of one row), the items in stored order
        assert [len(p) for *_, p in found] == ([1] * 5 if setting.layout.columnar else [12, 12, 8, 6, 12])
        assert [[u for piece in p for u in units(piece)] for *_, p in found] == [units(c) for c in whole]
        assert all(len(piece.docs) == 1 for *_, p in found for piece in p) or setting.layout.columnar


#: regions per setting (its CSV's rows), separate and labels modes, each unit type and approach
TDB_REGIONS = {"char-boundary": 37, "char-boundary-labels": 41, "char-interval": 20, "char-interval-labels": 19,
               "word-boundary": 32, "word-boundary-labels": 36, "word-interval": 19, "word-interval-labels": 18}  # one label per unit: 43, 38 before
CROWD_REGIONS = {"char-boundary": 15, "char-boundary-labels": 16, "char-interval": 6, "char-interval-labels": 6,
                 "word-boundary": 9, "word-boundary-labels": 10, "word-interval": 6, "word-interval-labels": 6}


@pytest.mark.parametrize(("name", "limit", "pieces", "expected"), [
    ("tdb_long", 7, [1, 1, 1, 1, 2, 2, 2, 2], TDB_REGIONS),  # a piece per document, batches across parts
    ("crowd", 7, [5], CROWD_REGIONS),  # one group: a piece per comment
    ("crowd", 100, [3], CROWD_REGIONS),  # pieces of two, two and one comments
])
def test_disagreements_exported_in_pieces_are_the_whole_groups_byte_for_byte(
        name: str, limit: int, pieces: list[int], expected: dict[str, int], request: pytest.FixtureRequest, tmp_path: Path,
        monkeypatch) -> None:
    out = request.getfixturevalue(name)
    assert main(["export", str(out), "--to", "disagreements", "--dest", str(tmp_path / "whole"), "-q"]) == 0
    data = OutputData(out)
    assert [len(list(p)) for *_, p in layer_pieces(data, data.setting("word-interval"), limit)] == pieces
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", limit)
    assert main(["export", str(out), "--to", "disagreements", "--dest", str(tmp_path / "pieces"), "-q"]) == 0
    whole, found = tree(tmp_path / "whole"), tree(tmp_path / "pieces")
    assert found.keys() == whole.keys() and all(found[k] == whole[k] for k in whole)
    rows = {line.split(",")[1]: int(line.split(",")[4]) for line in whole["index.csv"].decode().splitlines()[1:]}
    assert rows == expected


def test_the_groups_asked_for_exported_in_pieces(tdb_long: Path, tmp_path: Path, monkeypatch) -> None:
    command = ["export", str(tdb_long), "--to", "disagreements", "--settings", "word-interval-labels", "--groups", "ki,ve", "-q"]
    assert main([*command, "--dest", str(tmp_path / "whole")]) == 0
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 7)
    assert main([*command, "--dest", str(tmp_path / "pieces")]) == 0
    assert tree(tmp_path / "pieces") == tree(tmp_path / "whole")
    lines = (tmp_path / "whole" / "word-interval-labels.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(line.split(",")[1] for line in lines) == ["ki"] * 4 + ["ve"] * 7  # of the 18 regions of all groups
