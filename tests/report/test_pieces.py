"""A crowd group read in pieces of whole documents (unitize.dataset.pieces.layer_pieces) gives the report of the
whole group: the same matrices added up over the pieces, the same files byte for byte."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE
from tests.report.test_regions_and_rankings import long, setting, wide
from unitize.cli import main
from unitize.dataset import pieces as pieces_module
from unitize.dataset import texts as texts_module
from unitize.dataset.directory import OutputData
from unitize.dataset.pieces import layer_pieces
from unitize.dataset.regions import cells
from unitize.report import pages as pages_module
from unitize.report import where
from unitize.report.jsontext import Raw, dumps, pieces, plain
from unitize.report.page import script, write_script
from unitize.report.where import Confusion, Pairs, confusion, pair_matrix
from unitize.runtime import mapped as mapped_module

#: four documents; c is missing from d1 and d3, b from d4; d (an undeclared annotator) codes d4 alone with b's absence
LABELS = {
    "d1": {"a": ["O", "PER", "PER", "O"], "b": ["O", "LOC", "PER", "O"]},
    "d2": {"a": ["O", "O", "ORG"], "b": ["O", "O", "ORG"], "c": ["PER", "O", "LOC"]},
    "d3": {"a": ["MISC", "MISC"], "b": ["O", "MISC"]},
    "d4": {"a": ["O", "PER", "O"], "c": ["O", "PER", "PER"], "d": ["LOC", "PER", "O"]},
}


def by_document(table: pa.Table) -> list[pa.Table]:
    """One piece per document (the rows of a long table are grouped by document)."""
    docs = table.column("doc_id").to_pylist()
    starts = [i for i in range(len(docs)) if i == 0 or docs[i] != docs[i - 1]] + [len(docs)]
    return [table.slice(a, b - a) for a, b in zip(starts, starts[1:])]


def pieces_sum(table: pa.Table, s) -> tuple[dict | None, dict]:
    pairs, found = Pairs(s), Confusion(s)
    for piece in by_document(table):
        c = cells(s, "g", "L", piece, "O")
        pairs.add(c)
        found.add(c)
    return pairs.matrix(), found.matrix()


def test_matrices_added_up_over_pieces_are_the_whole_layers() -> None:
    s = setting("label", layout="long")
    table = long(wide(LABELS), "abcd").sort_by([("doc_id", "ascending")])
    whole = cells(s, "g", "L", table, "O")
    assert whole.annotators == ["a", "b", "c", "d"] and whole.values == ["O", "LOC", "MISC", "ORG", "PER"]
    pairs, conf = pieces_sum(table, s)
    assert pairs == pair_matrix(whole) and conf == confusion(whole)
    assert pairs["n"][0][1] == 9 and pairs["n"][1][3] == 0 and pairs["kappa"][1][3] is None  # b and d never met
    assert conf["counts"] == confusion(whole)["counts"] and sum(map(sum, conf["counts"])) > 0


def test_pair_matrices_stop_when_the_pieces_together_have_too_many_annotators(monkeypatch) -> None:
    monkeypatch.setattr(where, "MAX_PAIR_ANNOTATORS", 3)  # every piece has at most three, the layer four
    s = setting("label", layout="long")
    table = long(wide(LABELS), "abcd").sort_by([("doc_id", "ascending")])
    assert pair_matrix(cells(s, "g", "L", table, "O")) is None
    assert pieces_sum(table, s)[0] is None


def test_raw_text_is_spliced_as_json_dumps_writes_the_values() -> None:
    value = {"id": "d</1", "text": "é\u2028", "regions": {"0": [Raw(plain([0, 1, [[2, "x", 3]]])), Raw(plain([4]))]},
             "segs": {"char": Raw(plain([[1, 2]]))}, "present": {"char": {"0": [1, 2]}}, "n": [1.5, None, True]}
    same = {"id": "d</1", "text": "é\u2028", "regions": {"0": [[0, 1, [[2, "x", 3]]], [4]]}, "segs": {"char": [[1, 2]]},
            "present": {"char": {"0": [1, 2]}}, "n": [1.5, None, True]}
    assert dumps(value) == json.dumps(same, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert dumps({"x": {1: "a", None: 2}}) == '{"x":{"1":"a","null":2}}'  # other keys as json.dumps writes them
    parts = list(pieces(value))
    assert "".join(parts) == dumps(value) and Raw(plain([4])) in parts and len(parts) > 10  # each Raw text a piece of its own
    with pytest.raises(ValueError):
        dumps({"x": [math.nan]})


@pytest.fixture(scope="module")
def tdb_long(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tdb-mini in the long layout, in several parts: groups, two layers (Arg1, Arg2), labels mode too."""
    out = tmp_path_factory.mktemp("pieces") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--layout", "long", "--partition-units", "300",
                 "--modes", "separate,labels", "-q"]) == 0
    return out


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_report_read_in_tiny_pieces_is_the_whole_groups_byte_for_byte(tdb_long: Path, tmp_path: Path, monkeypatch) -> None:
    assert main(["report", str(tdb_long), "--dest", str(tmp_path / "whole"), "-q"]) == 0
    data = OutputData(tdb_long)
    setting_ = next(s for s in data.settings if s.value == "label")
    found = [(g, layer, len(list(p))) for g, layer, p in layer_pieces(data, setting_, 7)]
    assert {layer for _, layer, _ in found} == {"Arg1", "Arg2"} and any(n > 1 for *_, n in found)  # batched, both layers
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 7)
    monkeypatch.setattr(sys.modules["unitize.report.build"], "SEGMENT_ROWS", 5)  # a document's segments spooled in several slices, joined in order
    monkeypatch.setattr(sys.modules["unitize.report.build"], "LOOKUP_ROWS", 11)  # segments read in blocks, in several slices each
    monkeypatch.setattr(pages_module, "BUCKET_DOCS", 1)  # each document's parts filed and read back on their own
    monkeypatch.setattr(pages_module, "HELD_BYTES", 3 * pages_module.PLACE.itemsize)  # filed three places at a time
    monkeypatch.setattr(texts_module, "READ_ROWS", 2)  # the texts read two rows at a time, into a mapped file
    monkeypatch.setattr(mapped_module, "MAP_BYTES", 1)
    assert main(["report", str(tdb_long), "--dest", str(tmp_path / "pieces"), "-q"]) == 0
    whole, pieces = files(tmp_path / "whole"), files(tmp_path / "pieces")
    assert whole.keys() == pieces.keys() and all(whole[k] == pieces[k] for k in whole)
    overview = whole["data/overview.js"].decode()
    assert '"pairs":[{' in overview and '"confusion":[{' in overview  # matrices were added up, not skipped


def test_an_item_group_of_a_long_table_reported_an_item_at_a_time_is_the_whole_groups(tmp_path: Path, monkeypatch) -> None:
    """Item labels stored long only (crowd data): each group's figures (distribution, confusion, pairs) and rows added
    up over pieces of whole items, the report's files byte for byte the group's read whole."""
    out = tmp_path / "out"
    study = EXAMPLE.parent / "labels-mini" / "study.toml"
    assert main(["convert", str(study), "--out", str(out), "--layouts", "long", "-q"]) == 0
    assert [s.name for s in OutputData(out).settings] == ["items-long"]
    assert main(["report", str(out), "--dest", str(tmp_path / "whole"), "-q"]) == 0
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 1)
    assert main(["report", str(out), "--dest", str(tmp_path / "pieces"), "-q"]) == 0
    whole, pieces = files(tmp_path / "whole"), files(tmp_path / "pieces")
    assert whole.keys() == pieces.keys() and all(whole[k] == pieces[k] for k in whole)
    assert sorted(k for k in whole if k.startswith("data/items/")) == [f"data/items/{i}.js" for i in range(5)]
    overview = whole["data/overview.js"].decode()
    assert overview.count('"distribution":{') == 5 and '"items":12,' in overview and '"disagreeing":' in overview


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6), st.integers(0, 4), st.integers(0, 4), st.integers(0, 3)), max_size=30))
@settings(max_examples=150, deadline=None)
def test_each_groups_totals_and_worst_document_are_the_loops(rows: list[tuple[int, int, int, int, int]]) -> None:
    """where.per_group: per group (in the order first found) its rows summed and its worst document, as a loop over
    the (group, document)s in the order they were first found gives them (highest share, then most regions, the
    first found among equals)."""
    from unitize.report.where import DocStats, per_group, share

    found = DocStats()
    for g, d, comparable, disagreeing, regions in rows:
        found.add(g, np.array([d]), np.array([[comparable, min(disagreeing, comparable), regions]]))
    group_of, doc_of, sums, first = found.table()
    totals: dict[int, np.ndarray] = {}
    worst: dict[int, tuple] = {}
    for k in first.tolist():
        gi, di, row = int(group_of[k]), int(doc_of[k]), sums[k]
        totals[gi] = totals.get(gi, 0) + row
        key = (share(int(row[0]), int(row[1])) or 0.0, int(row[2]))
        if gi not in worst or key > worst[gi][0]:
            worst[gi] = (key, di)
    got = per_group(group_of, doc_of, sums, first)
    assert [g for g, _, _ in got] == list(totals) and [w for *_, w in got] == [worst[g][1] for g in totals]
    assert [t.tolist() for _, t, _ in got] == [totals[g].tolist() for g in totals]


def test_per_document_figures_add_up_per_group_and_document_as_arrays() -> None:
    """where.DocStats: rows of pieces added per (group, document), documents not in the report (−1) left out, sorted
    by (group, document), and the pairs' positions in the order they were first added."""
    import numpy as np

    from unitize.report.where import DocStats

    found = DocStats()
    found.add(2, np.array([5, -1, 0]), np.array([[1, 1, 1], [9, 9, 9], [2, 0, 0]]))
    found.add(0, np.array([5]), np.array([[3, 2, 1]]))
    found.add(2, np.array([5]), np.array([[10, 0, 2]]))
    groups, docs, sums, first = found.table()
    assert groups.tolist() == [0, 2, 2] and docs.tolist() == [5, 0, 5]
    assert sums.tolist() == [[3, 2, 1], [2, 0, 0], [11, 1, 3]] and first.tolist() == [2, 1, 0]
    assert [x.size for x in DocStats().table()] == [0, 0, 0, 0]


def test_a_script_written_a_piece_at_a_time_is_the_script(tmp_path: Path) -> None:
    """report.page.write_script: the file is script()'s text — ``</`` and U+2028/U+2029 escaped inside Raw pieces as in
    plain ones —, and what the page's JSON parse gives back."""
    value = {"ids": Raw(plain(["a</b", "c\u2028"])), "n": [Raw("1"), {"x": "</script>"}], "s": "\u2029"}
    write_script(tmp_path / "x.js", value, "overview")
    text = (tmp_path / "x.js").read_text(encoding="utf-8")
    assert text == script(value, "overview") and "</" not in text and "\u2028" not in text and "\u2029" not in text
    assert text.startswith('unitizeReport.load("overview",null,{"ids":["a<\\/b","c\\u2028"]') and text.endswith(");\n")
    assert json.loads(text[text.index("{"):text.rindex("}") + 1]) == {"ids": ["a</b", "c\u2028"], "n": [1, {"x": "</script>"}], "s": "\u2029"}


def test_pages_filed_by_bucket_are_the_pages_held_together() -> None:
    """report.pages.DocPages: parts of documents in buckets of two, their places filed to the scratch file a few at a
    time (some still held when read), give the pages of one bucket holding every place; the texts read by row."""
    from unitize.report.pages import PLACE, DocPages

    def fill(pages: DocPages) -> None:
        for d in (4, 0, 3, 1, 4, 0, 2, 4):
            pages.region(d, "0", plain([d, len(pages._kinds)]))
            pages.present(d, "char", "0", d % 3)
        pages.segments(3, "word", plain([[3, 0]])[1:-1])
        pages.segments(3, "word", plain([[3, 1]])[1:-1])

    class Texts:
        def at(self, rows):
            return [f"text of row {r}" for r in rows.tolist()]

        def let_go(self) -> None:
            pass

    ids, rows = pa.array(["a", "b", "c", "d", "e"]), np.array([9, 8, 7, 6, 5])
    whole = DocPages(ids.to_pylist(), Texts(), rows, bucket=8)  # type: ignore[arg-type]
    fill(whole)
    import unitize.report.pages as module

    held = module.HELD_BYTES
    module.HELD_BYTES = 4 * PLACE.itemsize  # 18 parts: 16 filed, 2 held
    try:
        bucketed = DocPages(ids, Texts(), rows, bucket=2)  # type: ignore[arg-type]
        fill(bucketed)
    finally:
        module.HELD_BYTES = held
    assert bucketed._chunks and bucketed._held  # some places filed, some still held
    expected = [dumps(p) for p in whole]
    assert [dumps(p) for p in bucketed] == [dumps(p) for p in bucketed] == expected
    found = list(bucketed)
    assert [p["id"] for p in found] == ["a", "b", "c", "d", "e"] and found[1]["text"] == "text of row 8"
    assert found[4]["regions"] == {"0": [Raw(plain([4, 0])), Raw(plain([4, 2])), Raw(plain([4, 2]))]}
    assert found[3]["segs"] == {"word": Raw("[[3,0],[3,1]]")} and found[4]["present"] == {"char": {"0": [1]}}
    assert next(iter(bucketed))["id"] == "a"  # the first bucket's places read: the file's position is theirs
    module.HELD_BYTES = 4 * PLACE.itemsize
    try:  # parts added after a read are filed after the ones before it
        for pages in (whole, bucketed):
            fill(pages)
    finally:
        module.HELD_BYTES = held
    assert [dumps(p) for p in bucketed] == [dumps(p) for p in whole] != expected
    bucketed.close()


def test_spooled_pages_are_the_payloads_held_in_memory() -> None:
    """report.pages.DocPages: each document's parts read back from the scratch file in the order they came — segment
    slices joined into one list per unit type, regions per setting, each present annotator once — as the dicts the
    build held before, the same JSON text; a document without parts is an empty page; read twice, the same."""
    from unitize.report.pages import DocPages

    pages = DocPages(["a", "b", "c"])
    held = [{"id": d, "text": None, "segs": {}, "regions": {}, "present": {}} for d in pages.ids]
    segments = {0: [[0, 1, 0, -1, 0, 4], [0, 1, 1, 2, 5, 9]], 2: [[1, 0, 2, 0, 3, 7]]}
    pages.segments(0, "char", plain(segments[0][:1])[1:-1])
    pages.segments(2, "char", plain(segments[2])[1:-1])
    pages.segments(0, "char", plain(segments[0][1:])[1:-1])
    for d, rows in segments.items():
        held[d]["segs"]["char"] = Raw(plain(rows))
    pages.segments(0, "word", plain([[0, 0, 0, -1, 0, 1]])[1:-1])
    held[0]["segs"]["word"] = Raw(plain([[0, 0, 0, -1, 0, 1]]))
    for d, setting_name, region in [(2, "1", [0, 0, 3, 5, []]), (0, "0", [0, 1, 0, 4, [[0, "1", 0, 4, 0]]]), (2, "0", [1, 0, 0, 2, []]),
                               (2, "1", [0, 0, 9, 12, [[1, "ü", 9, 12, 1]]])]:
        pages.region(d, setting_name, plain(region))
        held[d]["regions"].setdefault(setting_name, []).append(Raw(plain(region)))
    for d, unit, group, annotator in [(0, "char", "0", 2), (0, "char", "0", 1), (0, "char", "0", 2), (2, "word", "1", 0), (0, "word", "0", 1)]:
        pages.present(d, unit, group, annotator)
        listed = held[d]["present"].setdefault(unit, {}).setdefault(group, [])
        if annotator not in listed:
            listed.append(annotator)
    assert len(pages) == 3
    for _ in range(2):
        found = list(pages)
        assert [dumps(p) for p in found] == [dumps(p) for p in held]
    assert found[1] == {"id": "b", "text": None, "segs": {}, "regions": {}, "present": {}}
    assert found[0]["present"] == {"char": {"0": [2, 1]}, "word": {"0": [1]}} and list(found[2]["regions"]) == ["1", "0"]
    pages.close()
    assert list(DocPages([])) == [] and [p["segs"] for p in DocPages(["x"])] == [{}]
