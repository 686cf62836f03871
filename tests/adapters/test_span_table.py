"""Span tables (crowd exports): roster semantics, bad input, and ToxicSpans in full."""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

import jsonschema
import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CORPORA, ROOT, needs_shared
from unitize.cli import main
from unitize.config import Settings
from unitize.run import convert, read_corpus, unitize

TOXIC = CORPORA / "toxic-spans"
TOXIC_COLUMNS = dict(doc="comment_id", text="comment_text", annotator="worker", key="annotation", label="type", begin="start", end="end")


def write_csv(path: Path, rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    write_csv(tmp_path / "texts.csv", [["doc_id", "text"], ["d1", "you are an idiot"], ["d2", "fine,\nthanks"]])
    write_csv(tmp_path / "roster.csv", [["key", "doc_id", "annotator"], [1, "d1", "r1"], [2, "d1", "r2"], [3, "d2", "r1"], [4, "d1", "r1"]])
    write_csv(
        tmp_path / "spans.csv",
        [["key", "label", "begin", "end"], [1, "Insult", 11, 16], [1, "Insult", 8, 13], [3, "Other", 0, 99], [9, "X", 0, 1], [2, "Insult", "a", 3], [4, "Insult", 0, 3]],
    )
    return tmp_path


def table_settings(root: Path, **kw) -> Settings:
    base = dict(
        format="span-table",
        input={"annotations": root / "spans.csv", "texts": root / "texts.csv", "roster": "roster.csv"},
        pairs=(("char", "interval"),),
        out=root / "out",
        base=root,
        layout="wide",
    )
    base.update(kw)
    return Settings(**base)


def test_roster_annotator_without_spans_is_not_annotated_not_missing(tables: Path) -> None:
    # a roster says who was assigned which document: r2 was not assigned d2, so it is missing there (null),
    # with no finding and d2 kept — in every layout (assignment "auto" is "per-document" with a roster)
    s = table_settings(tables)
    u = unitize(read_corpus(s), s)
    found = sorted((f.code, f.file, f.record) for f in u.findings if f.severity != "info")
    assert found == [
        ("duplicate-record", "roster.csv", "line 5"),
        ("offset-invalid", "spans.csv", "line 4"),
        ("offset-invalid", "spans.csv", "line 6"),
        ("record-malformed", "spans.csv", "line 5"),
    ]
    t = u.matrix("all", "span", "char")
    d2 = [i for i, d in enumerate(t.column("doc_id").to_pylist()) if d == "d2"]
    assert [t.column("r2")[i].as_py() for i in d2] == [None] * 12  # not assigned: missing
    assert [t.column("r1")[i].as_py() for i in d2] == [0] * 12  # assigned, its span past the text
    # the study may say instead that every annotator was to annotate every document: RAT's rule
    s = table_settings(tables, assignment="all")
    u = unitize(read_corpus(s), s)
    found = sorted((f.code, f.file, f.record) for f in u.findings if f.severity != "info")
    assert found == [
        ("annotator-missing", "roster.csv", None),  # r2 has no roster row for d2: d2 left out (RAT's rule)
        ("duplicate-record", "roster.csv", "line 5"),
        ("offset-invalid", "spans.csv", "line 4"),
        ("offset-invalid", "spans.csv", "line 6"),
        ("record-malformed", "spans.csv", "line 5"),
    ]
    dup = [f for f in u.findings if f.code == "duplicate-record"][0]
    assert dup.action == "this roster row and its 1 span(s) left out (the first row is used)"
    t = u.matrix("all", "span", "char")
    d1 = [i for i, d in enumerate(t.column("doc_id").to_pylist()) if d == "d1"]
    r1 = [t.column("r1")[i].as_py() for i in d1]
    r2 = [t.column("r2")[i].as_py() for i in d1]
    assert r1 == [0] * 8 + [1] * 8  # 8..13 and 11..16 merged
    assert r2 == [0] * 16  # on the roster, its only span unreadable: not annotated
    assert set(t.column("doc_id").to_pylist()) == {"d1"}
    s = table_settings(tables, assignment="all", keep_missing=True)
    t = unitize(read_corpus(s), s).matrix("all", "span", "char")
    d2 = [i for i, d in enumerate(t.column("doc_id").to_pylist()) if d == "d2"]
    assert [t.column("r2")[i].as_py() for i in d2] == [None] * 12  # not assigned: missing
    assert [t.column("r1")[i].as_py() for i in d2] == [0] * 12  # assigned, its span past the text


def test_long_layout_has_rows_only_for_assignments(tables: Path) -> None:
    s = table_settings(tables, layout="long")
    convert(s)
    t = pq.read_table(s.out / "units" / "setting=char-interval")
    pairs = Counter(zip(t.column("doc_id").to_pylist(), t.column("annotator").to_pylist()))
    assert pairs == {("d1", "r1"): 16, ("d1", "r2"): 16, ("d2", "r1"): 12}
    assert sum(t.column("value").to_pylist()) == 8


def test_unmapped_columns_are_reported_and_strict_exits_3(tables: Path) -> None:
    config = tables / "study.toml"
    config.write_text(
        '[input]\nformat = "span-table"\nannotations = "spans.csv"\ntexts = "texts.csv"\nroster = "roster.csv"\n'
        'columns = {begin = "from"}\n[unitize]\nunits = ["char"]\n[output]\ndir = "o"\n',
        encoding="utf-8",
    )
    s = table_settings(tables, input={**table_settings(tables).input, "columns": {"begin": "from"}})
    corpus = read_corpus(s)
    assert [(f.code, f.file) for f in corpus.findings if f.code != "duplicate-record"] == [("file-unreadable", "spans.csv")]
    assert "from" in corpus.findings[-1].message
    assert main(["convert", str(config), "--strict", "-q"]) == 3
    assert main(["convert", str(config), "-q"]) == 2  # no span could be read: nothing usable, nothing written
    assert not (tables / "o").exists()


def _direct_toxic_chars() -> Counter:
    """Toxic characters per worker straight from the CSVs: the union of each annotation's
    spans that lie inside the text; a worker's second annotation of a post is not counted."""
    with (TOXIC / "comments.csv").open(newline="", encoding="utf-8") as f:
        length = {r["comment_id"]: len(r["comment_text"]) for r in csv.DictReader(f)}
    owner, seen = {}, set()
    with (TOXIC / "annotations.csv").open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if (r["comment_id"], r["worker"]) not in seen:
                seen.add((r["comment_id"], r["worker"]))
                owner[r["annotation"]] = (r["comment_id"], r["worker"])
    chars: dict[str, set[int]] = defaultdict(set)
    with (TOXIC / "spans.csv").open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["annotation"] in owner:
                doc, worker = owner[r["annotation"]]
                b, e = int(r["start"]), int(r["end"])
                if 0 <= b <= e <= length[doc]:
                    chars[r["annotation"]].update(range(b, e))
    total: Counter = Counter()
    for annotation, units in chars.items():
        total[owner[annotation][1]] += len(units)
    return total


@needs_shared
def test_toxic_spans_in_full(tmp_path: Path) -> None:
    s = Settings(
        format="span-table",
        input={"annotations": TOXIC / "spans.csv", "texts": TOXIC / "comments.csv", "roster": "annotations.csv", "columns": TOXIC_COLUMNS},
        pairs=(("char", "interval"), ("word", "interval")),
        tokenizer="whitespace",
        out=tmp_path / "out",
        base=TOXIC,
    )
    unitized, manifest = convert(s)
    jsonschema.validate(manifest, json.loads((ROOT / "schemas" / "manifest.schema.json").read_text(encoding="utf-8")))
    assert unitized.layout.name == "long" and len(unitized.annotators) == 3579
    by_code = manifest["summary"]["findings_by_code"]
    assert by_code["offset-invalid"] == 94 and by_code["duplicate-record"] == 1
    acc = manifest["accounting"]["by_unit"]["char"]
    assert acc["records"] == 46784 - _spans_of_duplicate()
    assert acc["records"] == acc["in_segments"] + sum(acc["excluded"].values())
    t = pq.read_table(tmp_path / "out" / "units" / "setting=char-interval", columns=["annotator", "value"])
    agg = t.group_by("annotator").aggregate([("value", "sum")])
    got = {a: v for a, v in zip(agg.column("annotator").to_pylist(), agg.column("value_sum").to_pylist()) if v}
    assert got == dict(_direct_toxic_chars())
    # every (post, worker) assignment has rows: 59,215 roster rows minus the duplicate
    docs = pq.read_table(tmp_path / "out" / "units" / "setting=char-interval", columns=["doc_id", "annotator", "unit"])
    assert docs.filter(pc.equal(docs.column("unit"), 0)).num_rows == 59214 - _empty_texts()
    meta = json.loads(pq.read_schema(tmp_path / "out" / "units" / "setting=word-interval" / "part-00000.parquet").metadata[b"unitize"])
    assert (meta["layout"], meta["value"], meta["unit"]) == ("long", "binary", "word")


def _spans_of_duplicate() -> int:
    """Spans of the annotations that repeat a (post, worker) pair (left out, reported)."""
    seen, dup = set(), set()
    with (TOXIC / "annotations.csv").open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            pair = (r["comment_id"], r["worker"])
            if pair in seen:
                dup.add(r["annotation"])
            seen.add(pair)
    with (TOXIC / "spans.csv").open(newline="", encoding="utf-8") as f:
        return sum(1 for r in csv.DictReader(f) if r["annotation"] in dup)


def _empty_texts() -> int:
    with (TOXIC / "comments.csv").open(newline="", encoding="utf-8") as f:
        empty = {r["comment_id"] for r in csv.DictReader(f) if not r["comment_text"]}
    with (TOXIC / "annotations.csv").open(newline="", encoding="utf-8") as f:
        return sum(1 for r in csv.DictReader(f) if r["comment_id"] in empty)


@pytest.mark.parametrize("rows_at_once", [1, 2, 1 << 16])  # span rows read a slice at a time: the same corpus
def test_parquet_tables_without_roster(tmp_path: Path, rows_at_once: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa

    from unitize.adapters import span_table

    monkeypatch.setattr(span_table, "SPAN_ROWS", rows_at_once)

    pq.write_table(pa.table({"post": ["p1", "p2"], "body": ["bad words here", "ok"]}), tmp_path / "texts.parquet")
    pq.write_table(
        pa.table({"post": ["p1", "p1", "p2"], "rater": ["x", "y", "y"], "kind": ["Insult", "Profanity", None], "s": [0, 4, 0], "e": [3, 9, 2]}),
        tmp_path / "spans.parquet",
    )
    cols = {"doc": "post", "text": "body", "annotator": "rater", "label": "kind", "begin": "s", "end": "e"}
    s = Settings(
        format="span-table",
        input={"annotations": tmp_path / "spans.parquet", "texts": tmp_path / "texts.parquet", "columns": cols},
        pairs=(("char", "interval"),),
        modes=("labels",),
        base=tmp_path,
        layout="long",
        assignment="per-document",  # no roster: the study says each post has its own raters
    )
    u = unitize(read_corpus(s), s)
    assert [(sp.record, sp.label) for sp in u.corpus.spans] == [("line 1", "Insult"), ("line 2", "Profanity"), ("line 3", None)]
    t = next(u.matrices("char", "interval", "labels"))
    rows = [(r["doc_id"], r["annotator"], r["value"]) for r in t.to_pylist()]
    assert [v for d, a, v in rows if (d, a) == ("p1", "x")] == ["Insult"] * 3 + ["O"] * 11
    assert [v for d, a, v in rows if (d, a) == ("p1", "y")] == ["O"] * 4 + ["Profanity"] * 5 + ["O"] * 5
    assert [v for d, a, v in rows if (d, a) == ("p2", "y")] == ["*", "*"]
    assert ("p2", "x") not in {(d, a) for d, a, _ in rows}  # x has no span on p2 and no roster says otherwise


def test_a_column_is_read_as_each_of_its_values_alone() -> None:
    """A table's columns are read a column at a time (Arrow), never a row at a time: each value as text (``str`` of it,
    a null "") and as an offset (a non-negative integer, else -1) as the row-by-row reading took it, whatever type a
    Parquet file gives the column."""
    import datetime
    import decimal

    import pyarrow as pa

    from unitize.adapters.table_columns import as_offset, as_offsets, as_text, to_text

    columns = [pa.array([None, None]), pa.array([1.0, None, 2.5, float("nan")]), pa.array([True, None]), pa.array([b"ab", None]),
               pa.array([[1], None]), pa.array([datetime.datetime(2020, 1, 1), None]), pa.array([decimal.Decimal("1.5"), None]),
               pa.array([1, 2, None]).dictionary_encode(), pa.array([2**63 + 5, 3, None], pa.uint64()),
               pa.array([-1, 5, 2**62 + 1, None]), pa.array(["x", None, " 7 ", "07", "٣"], pa.large_string()),
               pa.chunked_array([pa.array(["a"]), pa.array(["b", None, "12"])]), pa.array([3, 4], pa.int8())]
    for column in columns:
        values = column.to_pylist()
        assert as_text(column).to_pylist() == [to_text(v) for v in values], column.type
        assert as_offsets(column).tolist() == [-1 if as_offset(v) is None else as_offset(v) for v in values], column.type
    assert as_offsets(pa.array(["٣", " 7 ", "x"])).tolist() == [-1, 7, -1]  # ASCII digits only


def test_a_roster_key_is_its_first_rows(tmp_path: Path) -> None:
    """A roster key names the assignment of its first row. A later row of the key is a duplicate when its annotator is
    selected, and is counted as not selected when not: either way the first row's spans stay."""
    write_csv(tmp_path / "texts.csv", [["doc_id", "text"], ["d1", "you are an idiot"], ["d2", "fine"]])
    write_csv(tmp_path / "roster.csv", [["key", "doc_id", "annotator"], [1, "d1", "r1"], [1, "d2", "r2"], [2, "d1", "r2"], [1, "d2", "r1"]])
    write_csv(tmp_path / "spans.csv", [["key", "label", "begin", "end"], [1, "Insult", 11, 16], [2, "Insult", 8, 16]])
    s = table_settings(tmp_path)
    s.input["annotators"] = ["r1"]
    corpus = read_corpus(s)
    assert [(sp.annotator, sp.doc_id, sp.begin, sp.end) for sp in corpus.spans] == [("r1", "d1", 11, 16)]
    assert [(sub.annotator, sub.doc_id) for sub in corpus.submissions] == [("r1", "d1")]
    assert corpus.skipped_by_selection == 2 and corpus.not_selected == {"r2"}
    assert [(f.code, f.record, f.message) for f in corpus.findings] == [("duplicate-record", "line 5", "roster key 1 appears twice")]


def test_a_parquet_column_named_twice_is_reported(tmp_path: Path) -> None:
    import pyarrow as pa

    pq.write_table(pa.table([pa.array(["d1"]), pa.array(["text"]), pa.array(["again"])], names=["doc_id", "text", "text"]),
                   tmp_path / "texts.parquet")
    write_csv(tmp_path / "spans.csv", [["doc_id", "annotator", "label", "begin", "end"], ["d1", "r1", "X", 0, 2]])
    s = table_settings(tmp_path, input={"annotations": tmp_path / "spans.csv", "texts": tmp_path / "texts.parquet"})
    corpus = read_corpus(s)
    assert [(f.code, f.file, f.message.split(":")[0]) for f in corpus.findings] == [
        ("file-unreadable", "texts.parquet", "not a readable Parquet file"),
    ]
    assert [(sp.doc_id, sp.begin, sp.end) for sp in corpus.spans] == [("d1", 0, 2)]


def test_two_roles_may_name_one_column(tmp_path: Path) -> None:
    """A roster whose key is the document's id (one column for two roles) reads as with a column each."""
    write_csv(tmp_path / "texts.csv", [["doc_id", "text"], ["d1", "you are an idiot"], ["d2", "fine"]])
    write_csv(tmp_path / "roster.csv", [["doc_id", "annotator"], ["d1", "r1"], ["d2", "r2"]])
    write_csv(tmp_path / "spans.csv", [["doc_id", "label", "begin", "end"], ["d1", "Insult", 11, 16], ["d2", "X", 0, 4]])
    s = table_settings(tmp_path)
    s.input["columns"] = {"key": "doc_id"}
    corpus = read_corpus(s)
    assert [(sp.annotator, sp.doc_id, sp.begin, sp.end) for sp in corpus.spans] == [("r1", "d1", 11, 16), ("r2", "d2", 0, 4)]
    assert [(sub.annotator, sub.doc_id) for sub in corpus.submissions] == [("r1", "d1"), ("r2", "d2")]
    assert [f.code for f in corpus.findings if f.severity != "info"] == []


def test_a_second_text_row_of_a_document_is_reported_and_its_first_text_kept(tmp_path: Path) -> None:
    """The texts table's first row of a document is its text (held in the corpus's TextTable); each later row is a
    duplicate-text finding naming its line; a document the spans name without a text row has no text."""
    write_csv(tmp_path / "texts.csv", [["doc_id", "text"], ["d2", "fine, thanks"], ["d1", "you are an idiot"], ["d2", "other"],
                                       ["d1", "again"], [7, 42]])
    write_csv(tmp_path / "roster.csv", [["key", "doc_id", "annotator"], [1, "d1", "r1"], [2, "d2", "r1"], [3, "d3", "r1"]])
    write_csv(tmp_path / "spans.csv", [["key", "label", "begin", "end"], [1, "Insult", 11, 16]])
    corpus = read_corpus(table_settings(tmp_path))
    assert [(f.code, f.record, f.doc, f.message) for f in corpus.findings] == [
        ("duplicate-text", "line 4", "d2", "a second text row for document d2"), ("duplicate-text", "line 5", "d1", "a second text row for document d1")]
    assert type(corpus.documents).__name__ == "TextTable"
    assert list(corpus.documents) == ["d2", "d1", "7", "d3"]  # the table's order, then the document without a text row
    assert [corpus.documents[d].text for d in ("d1", "d2", "7", "d3")] == ["you are an idiot", "fine, thanks", "42", None]
    assert corpus.documents["d1"].source == "texts.csv" and corpus.documents["d1"].size == 16


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["k1", "k2", "k10", "ä", "", "k1 "]), max_size=20))
def test_roster_keys_are_coded_by_a_sort(keys: list[str]) -> None:
    """The roster's keys, coded by sorting them: the distinct keys in code-point order, each row's code among them, and
    whether the row is its key's first."""
    import pyarrow as pa

    from unitize.adapters.span_table import _sorted_codes

    distinct, code, first = _sorted_codes(pa.array(keys, pa.string()))
    assert distinct.to_pylist() == sorted(set(keys))
    assert [distinct[int(c)].as_py() for c in code] == keys
    assert first.tolist() == [keys.index(k) == i for i, k in enumerate(keys)]


def parquet_study(root: Path, spans: list[list], texts: list[list]) -> Settings:
    """Texts and spans (doc, annotator, label, begin, end) as Parquet files of two rows per row group."""
    import pyarrow as pa

    pq.write_table(pa.table({"doc_id": [t[0] for t in texts], "text": [t[1] for t in texts]}), root / "texts.parquet", row_group_size=2)
    columns = ["doc_id", "annotator", "label", "begin", "end"]
    pq.write_table(pa.table({c: [row[i] for row in spans] for i, c in enumerate(columns)}), root / "spans.parquet", row_group_size=2)
    return table_settings(root, input={"annotations": root / "spans.parquet", "texts": root / "texts.parquet"})


def test_parquet_tables_are_read_a_piece_at_a_time_with_their_row_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts and spans are read a row group at a time (and in pieces within one): a record names its row in the whole
    file, a second text row in a later row group is reported, every span is kept in file order (an unreadable one with
    offsets -1, as it was reported)."""
    import unitize.adapters.span_table as span_table

    monkeypatch.setattr(span_table, "SPAN_ROWS", 1)
    monkeypatch.setattr(span_table, "TEXT_ROWS", 1)
    texts = [["d1", "you are an idiot"], ["d2", "fine"], ["d3", "ok then"], ["d1", "again"], ["d4", "last one"]]
    spans = [["d1", "r1", "Insult", 11, 16], ["d2", "r1", "X", 0, 4], ["d1", "r2", "Insult", 8, 16], ["d3", "r2", "X", -3, 2],
             ["d4", "r1", "X", 0, 4]]
    corpus = read_corpus(parquet_study(tmp_path, spans, texts))
    assert [(sp.doc_id, sp.annotator, sp.begin, sp.end, sp.line) for sp in corpus.spans] == [
        ("d1", "r1", 11, 16, 1), ("d2", "r1", 0, 4, 2), ("d1", "r2", 8, 16, 3), ("d3", "r2", -1, -1, 4), ("d4", "r1", 0, 4, 5)]
    assert [(f.code, f.file, f.record, f.doc) for f in corpus.findings if f.severity != "info"] == [
        ("duplicate-text", "texts.parquet", "line 4", "d1"), ("offset-invalid", "spans.parquet", "line 4", "d3")]
    assert {d: corpus.documents[d].text for d in ("d1", "d2", "d3", "d4")} == {
        "d1": "you are an idiot", "d2": "fine", "d3": "ok then", "d4": "last one"}


def test_a_parquet_table_damaged_in_a_later_row_group_is_left_out_whole(tmp_path: Path) -> None:
    """Every row group is read and checked before any row is used: text that is not UTF-8 in the last row group
    leaves the whole spans table out, reported, and no span of its earlier row groups is kept."""
    import pyarrow as pa

    settings = parquet_study(tmp_path, [["d1", "r1", "X", 0, 2]], [["d1", "you are an idiot"]])
    bad = pa.Array.from_buffers(pa.string(), 5, [None, pa.py_buffer(np.array([0, 1, 2, 3, 4, 5], np.int32)), pa.py_buffer(b"XXXX\xff")])
    table = pa.table({"doc_id": ["d1"] * 5, "annotator": ["r1"] * 5, "label": bad, "begin": [0] * 5, "end": [2] * 5})
    pq.write_table(table, tmp_path / "spans.parquet", row_group_size=2)
    corpus = read_corpus(settings)
    assert corpus.spans == []
    assert [(f.code, f.file, f.message.split(":")[0], f.action) for f in corpus.findings if f.severity != "info"] == [
        ("file-unreadable", "spans.parquet", "not a readable Parquet file", "table left out")]


def test_a_spans_column_named_twice_in_parquet_is_reported(tmp_path: Path) -> None:
    import pyarrow as pa

    settings = parquet_study(tmp_path, [["d1", "r1", "X", 0, 2]], [["d1", "you are an idiot"]])
    pq.write_table(pa.table([pa.array(["d1"]), pa.array(["r1"]), pa.array(["X"]), pa.array([0]), pa.array([2]), pa.array([3])],
                            names=["doc_id", "annotator", "label", "begin", "end", "end"]), tmp_path / "spans.parquet")
    corpus = read_corpus(settings)
    assert corpus.spans == []
    assert [(f.code, f.message) for f in corpus.findings if f.severity != "info"] == [
        ("file-unreadable", "not a readable Parquet file: column(s) end appear twice")]


def test_a_parquet_tables_pieces_may_read_some_columns_only(tmp_path: Path) -> None:
    """The ids of a texts table are read without its texts: pieces of some columns hold those alone, with the rows'
    records of the whole file."""
    from unitize.adapters.table_columns import read_table
    from unitize.model import Corpus

    parquet_study(tmp_path, [["d1", "r1", "X", 0, 2]], [["d1", "a"], ["d2", "b"], ["d3", "c"]])
    table = read_table(tmp_path / "texts.parquet", tmp_path, Corpus(format="span-table"), "text", ["doc_id", "text"], by_row_group=True)
    assert table is not None
    pieces = list(table.pieces(2, ["doc_id"]))
    assert [list(p.columns) for p in pieces] == [["doc_id"], ["doc_id"]]
    assert [p.columns["doc_id"].to_pylist() for p in pieces] == [["d1", "d2"], ["d3"]]
    assert [p.lines_of(0, p.num_rows).tolist() for p in pieces] == [[1, 2], [3]]
    assert [list(p.columns) for p in table.pieces(2)] == [["doc_id", "text"], ["doc_id", "text"]]
