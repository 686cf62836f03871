"""Hand-computed unit vectors for every rule of DESIGN.md §4, through the public API.

The text of document d1 is ``"aa bb cc dd ee"``: characters 0..13, words
aa[0,2) bb[3,5) cc[6,8) dd[9,11) ee[12,14).
"""

from __future__ import annotations

import pytest

from unitize import read_corpus, unitize
from unitize.config import Settings

TEXT = "aa bb cc dd ee"


def vectors(result, group, layer, unit, approach, mode="separate"):
    """{annotator: [values]} of one matrix, for document d1 only."""
    for table in result.matrices(unit, approach, mode):
        rows = table.to_pydict()
        if rows["group"][0] != group or (mode == "separate" and rows["layer"][0] != layer):
            continue
        keep = [i for i, d in enumerate(rows["doc_id"]) if d == "d1"]
        return {a: [rows[a][i] for i in keep] for a in result.annotators}
    raise AssertionError(f"no matrix for {group}/{layer}")


def run(datt, **changes):
    settings: Settings = datt.settings(**changes)
    return unitize(read_corpus(settings), settings)


@pytest.fixture
def basic(datt):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Conn": [(3, 5)], "Arg1": [(0, 5)], "Arg2": [(6, 11)]}])
    # B: Arg1 is "aa"; Arg2 starts inside "bb" (a sub-word selection)
    datt.file("d1", "B", "ve", [{"Conn": [(3, 5)], "Arg1": [(0, 2)], "Arg2": [(4, 14)]}])
    return datt


def test_char_interval(basic):
    r = run(basic)
    assert vectors(r, "ve", "Arg1", "char", "interval") == {
        "A": [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        "B": [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    }
    assert vectors(r, "ve", "Arg2", "char", "interval") == {
        "A": [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0],
        "B": [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    }


def test_char_boundary(basic):
    r = run(basic)
    assert vectors(r, "ve", "Arg1", "char", "boundary") == {
        "A": [1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        "B": [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    }
    assert vectors(r, "ve", "Arg2", "char", "boundary") == {
        "A": [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0],
        "B": [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    }


def test_word_interval_and_snapping(basic):
    r = run(basic)
    assert vectors(r, "ve", "Arg1", "word", "interval") == {"A": [1, 1, 0, 0, 0], "B": [1, 0, 0, 0, 0]}
    # B's Arg2 begins inside "bb": snapped to the whole word
    assert vectors(r, "ve", "Arg2", "word", "interval") == {"A": [0, 0, 1, 1, 0], "B": [0, 1, 1, 1, 1]}
    snapped = [f for f in r.findings if f.code == "word-snapped"]
    assert [(f.annotator, f.layer, f.unit, f.record) for f in snapped] == [("B", "Arg2", "word", "1")]
    assert "snapped to 3..14" in snapped[0].message


def test_word_boundary_single_unit_segment(basic):
    r = run(basic)
    # a segment of one unit has one boundary mark
    assert vectors(r, "ve", "Arg1", "word", "boundary") == {"A": [1, 1, 0, 0, 0], "B": [1, 0, 0, 0, 0]}
    assert vectors(r, "ve", "Arg2", "word", "boundary") == {"A": [0, 0, 1, 1, 0], "B": [0, 1, 0, 0, 1]}


def test_combined_bit_mask(basic):
    r = run(basic, modes=("separate", "combined"))
    assert vectors(r, "ve", None, "word", "interval", "combined") == {"A": [1, 1, 2, 2, 0], "B": [1, 2, 2, 2, 2]}
    # both layers on one unit -> 3 (thesis Figure 16's shared-argument code)
    basic.file("d1", "C", "ve", [{"Conn": [(3, 5)], "Arg1": [(0, 5)], "Arg2": [(3, 8)]}])
    r = run(basic, modes=("combined",))
    assert vectors(r, "ve", None, "word", "interval", "combined")["C"] == [1, 3, 2, 0, 0]
    table = next(r.matrices("word", "interval", "combined"))
    assert table["layer"][0].as_py() == "Arg1+Arg2"
    import json

    meta = json.loads(table.schema.metadata[b"unitize"])
    assert meta["layer_bits"] == {"Arg1": 1, "Arg2": 2} and meta["value"] == "bitmask"


@pytest.fixture
def discontinuous(datt):
    datt.text("d1", TEXT)
    # A's Arg1 is "aa" + "cc" (two fragments); B's is the continuous "aa bb cc"
    datt.file("d1", "A", "ve", [{"Conn": [(9, 11)], "Arg1": [(0, 2), (6, 8)], "Arg2": [(12, 14)]}])
    datt.file("d1", "B", "ve", [{"Conn": [(9, 11)], "Arg1": [(0, 8)], "Arg2": [(12, 14)]}])
    return datt


def test_discontinuous_extend(discontinuous):
    r = run(discontinuous, discontinuous="extend")
    assert vectors(r, "ve", "Arg1", "word", "interval")["A"] == [1, 1, 1, 0, 0]
    seg = r.results["word"].segments.to_pylist()
    a_arg1 = [s for s in seg if s["annotator"] == "A" and s["layer"] == "Arg1"]
    assert len(a_arg1) == 1 and a_arg1[0]["extended"] is True
    assert (a_arg1[0]["unit_begin"], a_arg1[0]["unit_end"], a_arg1[0]["begin"], a_arg1[0]["end"]) == (0, 3, 0, 8)
    assert a_arg1[0]["records"] == ["annotations/d1_A_ve.xml#1"]


def test_discontinuous_keep(discontinuous):
    r = run(discontinuous, discontinuous="keep")
    assert vectors(r, "ve", "Arg1", "word", "interval")["A"] == [1, 0, 1, 0, 0]
    assert vectors(r, "ve", "Arg1", "word", "boundary")["A"] == [1, 0, 1, 0, 0]
    assert vectors(r, "ve", "Arg1", "char", "boundary")["A"] == [1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0]


def test_discontinuous_drop(discontinuous):
    r = run(discontinuous, discontinuous="drop")
    assert vectors(r, "ve", "Arg1", "word", "interval") == {"A": [0, 0, 0, 0, 0], "B": [1, 1, 1, 0, 0]}
    dropped = [f for f in r.findings if f.code == "discontinuous-dropped"]
    assert [(f.file, f.record, f.layer) for f in dropped] == [("annotations/d1_A_ve.xml", "1", "Arg1")]
    assert r.accounting["by_unit"]["word"]["excluded"] == {"discontinuous-dropped": 2}


def test_overlapping_segments_merge_and_abutting_stay_apart(datt):
    datt.text("d1", TEXT)
    overlapping = [
        {"Conn": [(12, 14)], "Arg1": [(0, 5)], "Arg2": [(12, 14)]},  # "aa bb"
        {"Conn": [(12, 14)], "Arg1": [(3, 8)], "Arg2": [(12, 14)]},  # "bb cc": shares "bb"
    ]
    abutting = [
        {"Conn": [(12, 14)], "Arg1": [(0, 2)], "Arg2": [(12, 14)]},  # "aa"
        {"Conn": [(12, 14)], "Arg1": [(2, 5)], "Arg2": [(12, 14)]},  # " bb": touches "aa" in characters
    ]
    datt.file("d1", "A", "ve", overlapping)
    datt.file("d1", "B", "ve", abutting)
    r = run(datt)
    # merged: one segment aa..cc, so one first and one last unit
    assert vectors(r, "ve", "Arg1", "word", "boundary") == {"A": [1, 0, 1, 0, 0], "B": [1, 1, 0, 0, 0]}
    assert vectors(r, "ve", "Arg1", "char", "boundary") == {
        "A": [1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        "B": [1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    }
    assert vectors(r, "ve", "Arg1", "word", "interval") == {"A": [1, 1, 1, 0, 0], "B": [1, 1, 0, 0, 0]}
    seg = [s for s in r.results["word"].segments.to_pylist() if s["layer"] == "Arg1"]
    assert [(s["annotator"], s["unit_begin"], s["unit_end"], s["merged"]) for s in seg] == [
        ("A", 0, 3, 2),
        ("B", 0, 1, 1),
        ("B", 1, 2, 1),
    ]
    assert seg[0]["records"] == ["annotations/d1_A_ve.xml#1", "annotations/d1_A_ve.xml#2"]
    merged = [f for f in r.findings if f.code == "segments-merged"]
    # identical Arg2 spans of the two relations merge too (both annotators)
    assert sorted((f.annotator, f.layer, f.unit, f.record) for f in merged) == [
        ("A", "Arg1", "char", "1+2"),
        ("A", "Arg1", "word", "1+2"),
        ("A", "Arg2", "char", "1+2"),
        ("A", "Arg2", "word", "1+2"),
        ("B", "Arg2", "char", "1+2"),
        ("B", "Arg2", "word", "1+2"),
    ]


def test_shared_argument_is_not_merged_across_layers(datt):
    datt.text("d1", TEXT)
    # Arg2 of relation 1 is Arg1 of relation 2 ("cc dd"): separate layers, no collision
    datt.file(
        "d1",
        "A",
        "ve",
        [
            {"Conn": [(3, 5)], "Arg1": [(0, 2)], "Arg2": [(6, 11)]},
            {"Conn": [(12, 14)], "Arg1": [(6, 11)], "Arg2": [(12, 14)]},
        ],
    )
    r = run(datt, modes=("separate", "combined"))
    assert vectors(r, "ve", "Arg1", "word", "interval") == {"A": [1, 0, 1, 1, 0]}
    assert vectors(r, "ve", "Arg2", "word", "interval") == {"A": [0, 0, 1, 1, 1]}
    assert vectors(r, "ve", None, "word", "interval", "combined") == {"A": [1, 0, 3, 3, 2]}
    assert not [f for f in r.findings if f.code == "segments-merged"]


def test_whitespace_only_segment_is_empty_for_words_only(datt):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Conn": [(3, 5)], "Arg1": [(2, 3)], "Arg2": [(6, 8)]}])
    r = run(datt)
    assert vectors(r, "ve", "Arg1", "word", "interval") == {"A": [0, 0, 0, 0, 0]}
    assert vectors(r, "ve", "Arg1", "char", "interval")["A"][:4] == [0, 0, 1, 0]
    empty = [f for f in r.findings if f.code == "empty-segment"]
    assert [(f.unit, f.layer, f.record) for f in empty] == [("word", "Arg1", "1")]
    assert r.accounting["by_unit"]["word"]["excluded"] == {"empty-segment": 1}
    assert r.accounting["by_unit"]["char"]["excluded"] == {}


def test_zero_length_segment_is_empty(datt):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Conn": [(3, 5)], "Arg1": [(4, 4)], "Arg2": [(6, 8)]}])
    r = run(datt)
    assert {f.unit for f in r.findings if f.code == "empty-segment"} == {"char", "word"}


@pytest.fixture
def rules(datt):
    """d1 complete; d2 lacks B's file; d3 has 2 relations for A and 1 for B."""
    for doc in ("d1", "d2", "d3"):
        datt.text(doc, TEXT)
    rel = {"Conn": [(3, 5)], "Arg1": [(0, 2)], "Arg2": [(6, 8)]}
    datt.file("d1", "A", "ve", [rel])
    datt.file("d1", "B", "ve", [rel])
    datt.file("d2", "A", "ve", [rel])
    datt.file("d3", "A", "ve", [rel, {"Conn": [(9, 11)], "Arg1": [(6, 8)], "Arg2": [(12, 14)]}])
    datt.file("d3", "B", "ve", [rel])
    return datt


def test_rat_rules_exclude_by_default(rules):
    r = run(rules)
    assert r.documents_in("ve") == ["d1"]
    table = next(r.matrices("word", "interval"))
    assert table.num_rows == 5 and set(table["doc_id"].to_pylist()) == {"d1"}
    codes = sorted((f.code, f.file) for f in r.findings if f.code in ("annotator-missing", "relation-count-mismatch"))
    assert codes == [
        ("annotator-missing", "annotations/d2_A_ve.xml"),
        ("relation-count-mismatch", "annotations/d3_A_ve.xml"),
        ("relation-count-mismatch", "annotations/d3_B_ve.xml"),
    ]
    mismatch = next(f for f in r.findings if f.code == "relation-count-mismatch")
    assert "A 2, B 1" in mismatch.message
    # 2 fragments (Arg1, Arg2) of d2/A + 4 of d3/A + 2 of d3/B left out
    assert r.accounting["by_unit"]["word"]["excluded"] == {"annotator-missing": 2, "relation-count-mismatch": 6}


def test_keep_missing_gives_null_column(rules):
    r = run(rules, keep_missing=True)
    assert r.documents_in("ve") == ["d1", "d2"]
    rows = next(r.matrices("word", "interval")).to_pydict()
    d2 = [i for i, d in enumerate(rows["doc_id"]) if d == "d2"]
    assert [rows["A"][i] for i in d2] == [1, 0, 0, 0, 0]
    assert [rows["B"][i] for i in d2] == [None] * 5
    missing = [f for f in r.findings if f.code == "annotator-missing"]
    assert [(f.doc, f.annotator, f.file) for f in missing] == [("d2", "B", None)]


def test_keep_mismatched(rules):
    r = run(rules, keep_mismatched=True)
    assert r.documents_in("ve") == ["d1", "d3"]
    assert {f.action for f in r.findings if f.code == "relation-count-mismatch"} == {"kept (keep_mismatched)"}


def test_an_annotator_with_no_file_for_a_group_is_missing_there(datt):
    # B annotated the study (group ve) but never connective ama: B is missing for (d1, ama),
    # exactly as if B had annotated ama in another document (DESIGN.md §4, validation)
    datt.text("d1", TEXT)
    rel = {"Conn": [(3, 5)], "Arg1": [(0, 2)], "Arg2": [(6, 8)]}
    datt.file("d1", "A", "ama", [rel])
    datt.file("d1", "A", "ve", [rel])
    datt.file("d1", "B", "ve", [rel])
    r = run(datt)
    assert r.documents_in("ama") == [] and r.documents_in("ve") == ["d1"]
    missing = [f for f in r.findings if f.code == "annotator-missing"]
    assert [(f.group, f.doc, f.annotator) for f in missing] == [("ama", "d1", "A")]
    assert "no file from B for document d1, group ama" in missing[0].message
    assert r.accounting["by_unit"]["word"]["excluded"] == {"annotator-missing": 2}  # its Arg1 and Arg2
    kept = run(datt, keep_missing=True)
    assert vectors(kept, "ama", "Arg1", "word", "interval") == {"A": [1, 0, 0, 0, 0], "B": [None] * 5}
    assert [(f.group, f.annotator, f.action) for f in kept.findings if f.code == "annotator-missing"] == [
        ("ama", "B", "document kept; that annotator's column is null for it")
    ]


def test_unit_universe_is_every_unit_of_every_document(datt):
    datt.text("d1", TEXT)
    datt.text("d2", "xx yy")
    rel = {"Conn": [(0, 2)], "Arg1": [(0, 2)], "Arg2": [(3, 5)]}
    datt.file("d1", "A", "ve", [rel])
    datt.file("d2", "A", "ve", [rel])
    r = run(datt)
    rows = next(r.matrices("char", "interval")).to_pydict()
    assert rows["doc_id"] == ["d1"] * 14 + ["d2"] * 5
    assert rows["unit"] == list(range(14)) + list(range(5))
    assert rows["begin"] == rows["unit"] and rows["end"] == [u + 1 for u in rows["unit"]]
    words = next(r.matrices("word", "interval")).to_pydict()
    assert words["begin"] == [0, 3, 6, 9, 12, 0, 3] and words["end"] == [2, 5, 8, 11, 14, 2, 5]


def test_crlf_counts_as_two_characters(datt):
    raw = datt.text("d1", "aa\nbb cc", newline="\r\n")
    assert raw == "aa\r\nbb cc"
    # "bb" is at 4..6 only if CRLF counts as two characters
    datt.file("d1", "A", "ve", [{"Conn": [(0, 2)], "Arg1": [(4, 6)], "Arg2": [(7, 9)]}])
    r = run(datt)
    assert not [f for f in r.findings if f.code == "text-mismatch"]
    assert vectors(r, "ve", "Arg1", "char", "interval")["A"] == [0, 0, 0, 0, 1, 1, 0, 0, 0]
    assert vectors(r, "ve", "Arg1", "word", "interval")["A"] == [0, 1, 0]


def test_matrix_api_returns_one_table(basic):
    r = run(basic)
    table = r.matrix("ve", "Arg2", unit="word", approach="boundary")
    assert table.to_pydict()["B"] == [0, 1, 0, 0, 1]
    assert r.matrix("nope", "Arg1").num_rows == 0
    from unitize import RunError

    with pytest.raises(RunError, match="layer 'Conn' was not unitized"):
        r.matrix("ve", "Conn")


def test_one_label_per_unit_where_an_annotators_spans_intersect(tmp_path):
    """DESIGN §4: one annotator's intersecting spans of a layer are one segment, labelled with their labels joined —
    and every unit of it carries that label in the labels matrix (it carried each unit's own labels: PER, LOC+PER,
    LOC, LOC, LOC), so span F1 and the unit-based measures read one rule."""
    import pyarrow.parquet as pq

    from unitize.config import load_toml, override
    from unitize.run import convert

    root = tmp_path / "study"
    (root / "annotations").mkdir(parents=True)
    (root / "texts").mkdir()
    (root / "texts" / "d01.txt").write_text("Angela Merkel met Emmanuel Macron in Paris on Monday.", encoding="utf-8")
    (root / "annotations" / "a.jsonl").write_text(
        '{"doc": "d01", "spans": [{"start": 0, "end": 13, "label": "PER"}, {"start": 7, "end": 33, "label": "LOC"}]}\n', encoding="utf-8")
    (root / "annotations" / "b.jsonl").write_text('{"doc": "d01", "spans": [{"start": 0, "end": 13, "label": "PER"}]}\n', encoding="utf-8")
    (root / "study.toml").write_text('[input]\nformat = "quotes"\nannotations = "annotations"\ntexts = "texts"\n'
                                     '[unitize]\nunits = ["word"]\napproaches = ["interval"]\nmodes = ["labels"]\ntokenizer = "regex"\n',
                                     encoding="utf-8")
    out = tmp_path / "out"
    convert(override(load_toml(root / "study.toml"), out=out))
    segments = [(r["annotator"], r["label"], r["unit_begin"], r["unit_end"]) for r in pq.read_table(out / "segments" / "word.parquet").to_pylist()]
    assert segments == [("a", "LOC+PER", 0, 5), ("b", "PER", 0, 2)]
    rows = pq.read_table(next((out / "labels").rglob("*.parquet"))).to_pylist()
    assert [r["a"] for r in rows][:6] == ["LOC+PER"] * 5 + ["O"] and [r["b"] for r in rows][:3] == ["PER", "PER", "O"]
