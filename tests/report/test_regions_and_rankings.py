"""The data behind `unitize report` and `unitize export --to disagreements`, against hand-computed cases."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE
from unitize import layouts
from unitize.cli import main
from unitize.dataset.model import Setting
from unitize.dataset.regions import cells, regions, unit_flags
from unitize.report.study import band
from unitize.report.where import confusion, doc_stats, pair_matrix, rank_docs, rank_groups


def setting(value: str = "binary", layout: str = "wide", kind: str = "units", annotators=("a", "b", "c")) -> Setting:
    return Setting(name="char-interval" if kind == "units" else "items", path=Path("unused"), kind=kind, layout=layouts.get(layout),
                   value=value, unit="char" if kind == "units" else None, approach="interval", mode="separate",
                   annotators=tuple(annotators), not_applicable="#n/a" if kind == "items" else None)


def wide(columns: dict[str, dict[str, list]], layer: str = "L") -> pa.Table:
    """Per document, per annotator, its values over the document's units (None = annotator missing)."""
    rows: dict[str, list] = {k: [] for k in ("group", "doc_id", "layer", "unit", "begin", "end")}
    names = sorted({a for doc in columns.values() for a in doc})
    values: dict[str, list] = {a: [] for a in names}
    for doc, by in columns.items():
        n = len(next(iter(by.values())))
        for u in range(n):
            for k, v in (("group", "g"), ("doc_id", doc), ("layer", layer), ("unit", u), ("begin", u), ("end", u + 1)):
                rows[k].append(v)
            for a in names:
                values[a].append(by.get(a, [None] * n)[u])
    return pa.table({**rows, **values})


def long(table: pa.Table, annotators) -> pa.Table:
    """The long layout of a wide table (rows of a missing annotator absent)."""
    out: dict[str, list] = {k: [] for k in ("group", "doc_id", "layer", "unit", "begin", "end", "annotator", "value")}
    rows = table.to_pylist()
    for a in annotators:
        for r in rows:
            if r[a] is not None:
                for k in ("group", "doc_id", "layer", "unit", "begin", "end"):
                    out[k].append(r[k])
                out["annotator"].append(a)
                out["value"].append(r[a])
    return pa.table(out)


#: d1: c missing; a marks units 2-4, b 3-4 -> one region, unit 2 (a alone).
#: d2: a marks 0-1, c marks 1 and 5-6, b nothing -> regions [0, 2) and [5, 7) (c alone), agreement between.
#: d3: only a has data -> nothing to compare, no region.
BINARY = {
    "d1": {"a": [0, 0, 1, 1, 1, 0, 0, 0], "b": [0, 0, 0, 1, 1, 0, 0, 0]},
    "d2": {"a": [1, 1, 0, 0, 0, 0, 0, 0], "b": [0] * 8, "c": [0, 1, 0, 0, 0, 1, 1, 0]},
    "d3": {"a": [1, 1, 0, 0]},
}


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_regions_are_maximal_runs_of_disagreeing_units(layout: str) -> None:
    table = wide(BINARY)
    if layout == "long":
        table = long(table, "abc")
    c = cells(setting(layout=layout), "g", "L", table, "0")
    coded, flags = unit_flags(c)
    assert coded.tolist() == [2] * 8 + [3] * 8 + [1] * 4
    assert np.flatnonzero(flags).tolist() == [2, 8, 9, 13, 14]
    found = [(r.doc, r.unit_begin, r.unit_end, r.begin, r.end) for r in regions(c)]
    assert found == [("d1", 2, 3, 2, 3), ("d2", 0, 2, 0, 2), ("d2", 5, 7, 5, 7)]
    first, second, third = regions(c)
    assert first.marked_by == ["a"] and first.not_marked_by == ["b"] and "c" not in first.runs
    assert second.marked_by == ["a", "c"] and second.partial == ["c"] and second.not_marked_by == ["b"]
    assert second.runs["c"] == [("0", 0, 1, True), ("1", 1, 2, False)]
    assert third.marked_by == ["c"] and third.not_marked_by == ["a", "b"]


def test_label_regions_name_the_labels_and_items_are_regions_of_their_own() -> None:
    table = wide({"d": {"a": ["O", "PER", "PER", "O"], "b": ["O", "LOC", "PER", "O"]}})
    c = cells(setting("label", annotators="ab"), "g", "L", table, "O")
    (r,) = regions(c)
    assert (r.unit_begin, r.unit_end) == (1, 2) and r.labels() == {"a": ["PER"], "b": ["LOC"]}
    items = pa.table({"group": ["q"] * 4, "item": ["1", "2", "3", "4"], "a": ["x", "y", "y", "x"], "b": ["x", "x", "#n/a", "y"]})
    c = cells(setting("label", kind="items", annotators="ab"), "q", "items", items)
    assert [(r.doc, r.labels()) for r in regions(c)] == [("2", {"a": ["y"], "b": ["x"]}), ("4", {"a": ["x"], "b": ["y"]})]
    # item 3: b's label did not apply (missing), so one label, nothing to compare
    assert unit_flags(c)[0].tolist() == [2, 2, 1, 2]


def test_document_stats_and_ranking() -> None:
    c = cells(setting(), "g", "L", wide(BINARY), "0")
    stats = doc_stats(c)
    assert stats.tolist() == [[8, 1, 1], [8, 4, 2], [0, 0, 0]]  # comparable, disagreeing, regions
    assert rank_docs(stats.tolist(), c.docs).tolist() == [1, 0, 2]  # d2 (4/8) before d1 (1/8); d3 (nothing comparable) last
    assert rank_docs([[10, 1, 1], [10, 1, 3], [0, 0, 0], [10, 1, 3]], ["w", "x", "y", "a"]).tolist() == [3, 1, 0, 2]
    # units in disagreement first: a long text with 20 disputed units before a one-unit comment disputed whole
    assert rank_docs([[1, 1, 1], [100, 20, 2], [40, 20, 5]], ["comment", "long", "mid"]).tolist() == [2, 1, 0]


def test_group_ranking_puts_lowest_agreement_first_then_highest_share() -> None:
    rows = [{"group": "a", "value": 0.9, "share": 0.1}, {"group": "b", "value": float("nan"), "share": 0.5},
            {"group": "c", "value": 0.4, "share": 0.2}, {"group": "d", "value": None, "share": 0.7},
            {"group": "e", "value": 0.4, "share": 0.3}]
    assert [r["group"] for r in rank_groups(rows)] == ["e", "c", "a", "d", "b"]


def test_pair_matrix_kappa_by_hand() -> None:
    # a vs b over 10 units: 4 both 0, 4 both 1, one each way -> p_o = .8, p_e = .5, kappa = .6
    a = [0, 0, 0, 0, 1, 1, 1, 1, 0, 1]
    b = [0, 0, 0, 0, 1, 1, 1, 1, 1, 0]
    c = cells(setting(annotators="ab"), "g", "L", wide({"d": {"a": a, "b": b}}), "0")
    m = pair_matrix(c)
    assert m["n"][0][1] == 10 and m["observed"][0][1] == pytest.approx(0.8) and m["kappa"][1][0] == pytest.approx(0.6)
    assert m["kappa"][0][0] is None


def test_confusion_counts_ordered_pairs_of_annotators() -> None:
    # unit 0: PER, PER, O -> (PER,PER) x2, (PER,O) x2, (O,PER) x2; unit 1: O, O, O -> (O,O) x6
    table = wide({"d": {"a": ["PER", "O"], "b": ["PER", "O"], "c": ["O", "O"]}})
    conf = confusion(cells(setting("label"), "g", "L", table, "O"))
    assert conf["values"] == ["O", "PER"] and conf["counts"] == [[6, 2], [2, 2]]


def test_interpretation_bands() -> None:
    assert band("alpha", 0.81)[0] == "✓" and band("alpha-u", 0.7)[0] == "~" and band("alpha", 0.2)[0] == "✗"
    assert band("fleiss", 0.65)[1].startswith("substantial") and band("cohen", -0.1)[1].startswith("poor")
    assert band("percent", 0.9) is None and band("alpha", float("nan")) is None


@pytest.fixture(scope="module")
def tdb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "-q"]) == 0
    return out


def test_export_disagreements_rows_for_adjudication(tdb: Path) -> None:
    assert main(["export", str(tdb), "--to", "disagreements", "--settings", "word-interval"]) == 0
    folder = tdb / "exports" / "disagreements"
    rows = list(csv.DictReader(open(folder / "word-interval.csv", encoding="utf-8")))
    records = [json.loads(line) for line in open(folder / "word-interval.jsonl", encoding="utf-8")]
    index = list(csv.DictReader(open(folder / "index.csv", encoding="utf-8")))
    assert len(rows) == len(records) == int(index[0]["rows"]) > 0
    # the tdb-mini README: in `ve` of 00001927, cem alone marks an Arg1 the others do not
    cem = [r for r in records if r["group"] == "ve" and r["doc"] == "00001927" and r["layer"] == "Arg1" and r["marked_by"] == ["cem"]]
    assert cem and cem[0]["not_marked_by"] == ["ayse", "burak"] and cem[0]["text"]
    text = open(EXAMPLE / "texts" / "00001927.txt", encoding="utf-8", newline="").read()
    assert cem[0]["text"] == text[cem[0]["begin"]:cem[0]["end"]]
    assert cem[0]["marks"]["cem"][0][1:] == [cem[0]["begin"], cem[0]["end"]]
    docs = sorted({r["doc"] for r in records})
    keys = [(r["group"], docs.index(r["doc"]), r["begin"]) for r in records]
    assert keys == sorted(keys)  # group, then document, then position
    row = next(r for r in rows if (r["group"], r["doc"], r["layer"], r["begin"]) == ("ve", "00001927", "Arg1", str(cem[0]["begin"])))
    assert re.fullmatch(r"cem=[^;]+", row["labels"]) and row["not_marked_by"] == "ayse, burak"


def test_report_without_agreement_says_so_and_still_has_the_data_view(tdb: Path, tmp_path: Path, capsys) -> None:
    dest = tmp_path / "rep"
    assert main(["report", str(tdb), "--dest", str(dest)]) == 0
    said = capsys.readouterr().out
    assert "unitize agree" in said and (dest / "index.html").as_uri() in said
    overview = (dest / "data" / "overview.js").read_text(encoding="utf-8")
    payload = json.loads(overview[overview.index("{"):overview.rindex("}") + 1])
    assert payload["agreement"] is None and len(payload["docs"]["ids"]) == 3
    assert sorted(p.name for p in (dest / "data" / "docs").iterdir()) == ["0.js"] and payload["docs"]["bundles"] == [0]  # one bundle
    assert (dest / "data" / "docs" / "0.js").read_text(encoding="utf-8").count("unitizeReport.load(\"doc\",") == 3
    html = (dest / "index.html").read_text(encoding="utf-8")
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html  # nothing from the network
    setting_names = [s["name"] for s in payload["settings"]]
    word = payload["settings"][setting_names.index("word-interval")]
    assert word["doc_order"] and all(not math.isnan(g["share"] or 0) for g in word["groups"])
    # a folder that is not a report is never replaced
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    assert main(["report", str(tdb), "--dest", str(tmp_path / "mine")]) == 2
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_report_takes_whole_cells_from_a_breakdown_run(tmp_path: Path) -> None:
    """After ``agree --by-doc --by-annotator`` the page holds the whole cells' rows only (the per-document rows stay in
    results.parquet), and a group's value is its cell's, not the last annotator's leave-one-out value."""
    import pyarrow.parquet as pq

    tdb = tmp_path / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(tdb), "-q"]) == 0
    assert main(["agree", str(tdb), "--metric", "alpha,cohen", "--by-doc", "--by-annotator", "-q"]) == 0
    dest = tmp_path / "rep"
    assert main(["report", str(tdb), "--dest", str(dest), "-q"]) == 0
    text = (dest / "data" / "overview.js").read_text(encoding="utf-8")
    agreement = json.loads(text[text.index("{"):text.rindex("}") + 1])["agreement"]
    table = pq.read_table(tdb / "agreement" / "results.parquet").to_pylist()
    whole = [r for r in table if r["doc"] is None and r["label"] is None and r["annotator"] is None]
    assert len(table) > 3 * len(whole) and len(agreement["rows"]) == len(whole)
    assert agreement["metrics"] == ["alpha", "cohen"]
    column = agreement["columns"].index
    assert [(r[column("group")], r[column("pair")], r[column("value")]) for r in agreement["rows"]] == [
        (r["group"], r["pair"], r["value"]) for r in whole]
    payload = json.loads(text[text.index("{"):text.rindex("}") + 1])
    word = payload["settings"][[s["name"] for s in payload["settings"]].index("word-interval")]
    cell = {(r["group"], r["layer"]): r["value"] for r in whole if r["setting"] == "word-interval" and r["metric"] == "alpha"}
    assert [g["value"] for g in word["groups"]] == [cell[(g["group"], g["layer"])] for g in word["groups"]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 3)), max_size=40), st.data())
def test_documents_rank_by_their_key_in_one_sort(rows, data):
    """The ranking (one NumPy lexsort, no tuple per document) is the sort of the documents by (nothing comparable,
    − units in disagreement, − share, − regions, name); with names in order already, the same without sorting them."""
    names = data.draw(st.lists(st.text(max_size=3), min_size=len(rows), max_size=len(rows), unique=True))
    stats = [[c, min(d, c), r] for c, d, r in rows]

    def key(i: int) -> tuple:
        comparable, disagreeing, regions = stats[i]
        s = disagreeing / comparable if comparable else None
        return (s is None, -disagreeing, -(s or 0.0), -regions, names[i])

    assert rank_docs(stats, names).tolist() == sorted(range(len(names)), key=key)
    order = sorted(range(len(names)), key=names.__getitem__)
    in_order = [stats[i] for i in order]
    assert [order[i] for i in rank_docs(in_order, sorted(names), names_sorted=True).tolist()] == sorted(range(len(names)), key=key)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-5, 10**12), st.lists(st.integers(0, 9), max_size=3)), max_size=30),
       st.integers(1, 7))
def test_a_long_list_is_written_a_slice_at_a_time_as_whole(values, size):
    from unitize.report.jsontext import dumps, in_slices, plain

    assert in_slices(lambda a, b: values[a:b], len(values), size) == plain(values)
    # spliced where it lies, in a list of dicts too (a setting's entry in the overview)
    assert dumps({"settings": [{"doc_stats": in_slices(lambda a, b: values[a:b], len(values), size)}], "n": 1}) == plain(
        {"settings": [{"doc_stats": values}], "n": 1})
