"""A crowd span table (one group, many documents) streamed a batch of whole documents at a time gives the
outputs of the table read whole, bad rows and all; the batches hold every row once, documents in order."""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import unitize as unitize_package
import unitize.adapters.span_rows as span_rows
from tests.test_span_stream import written
from unitize.adapters.span_rows import _cuts
from unitize.config import Settings, load_toml
from unitize.run import read_corpus
from unitize.spans.join import run_groups


def write_csv(path: Path, rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


@pytest.fixture
def crowd(tmp_path: Path) -> Path:
    """Six comments, three workers: overlapping spans of one worker (merged), labels and none, a bad offset,
    an unknown roster key, a duplicate roster row and a second assignment, a comment with no text row, a worker
    assigned a comment who marked nothing, documents listed out of order."""
    write_csv(tmp_path / "texts.csv", [["doc_id", "text"], ["c5", "what a lovely day"], ["c1", "you are an idiot"], ["c3", "shut up, moron"],
                                       ["c2", "fine,\nthanks"], ["c6", "idiots everywhere, idiots"]])
    write_csv(tmp_path / "roster.csv", [["key", "doc_id", "annotator"],
                                        [1, "c1", "w1"], [2, "c1", "w2"], [3, "c1", "w3"], [4, "c2", "w1"], [5, "c2", "w2"],
                                        [6, "c3", "w2"], [7, "c3", "w3"], [8, "c4", "w1"], [9, "c4", "w3"], [10, "c5", "w1"],
                                        [11, "c5", "w3"], [6, "c6", "w1"], [12, "c3", "w2"], [13, "c6", "w2"], [14, "c6", "w3"]])
    write_csv(tmp_path / "spans.csv", [["key", "label", "begin", "end"],
                                       [1, "Insult", 11, 16], [1, "Insult", 8, 13], [2, "", 11, 16], [3, "Insult", 0, 16],
                                       [6, "Profane", 9, 14], [7, "Insult", "x", 14], [4, "Other", 0, 5], [99, "Insult", 0, 1],
                                       [8, "Insult", 0, 2], [9, "Insult", 0, 3], [12, "Insult", 0, 4], [13, "Insult", 0, 6],
                                       [14, "Profane", 19, 25], [13, "Insult", 19, 25], [5, "Other", 6, 12]])
    return tmp_path


STUDY = """[input]
format = "span-table"
annotations = "spans.csv"
texts = "texts.csv"
roster = "roster.csv"
layer = "toxic"

[unitize]
units = ["char", "word"]
approaches = ["interval", "boundary"]
tokenizer = "regex"
"""


def crowd_settings(root: Path, *more: str) -> Settings:
    (root / "study.toml").write_text(STUDY, encoding="utf-8")
    return load_toml(root / "study.toml", list(more))


VARIANTS = {
    "default": [],
    "labels-as-layers": ["unitize.layers_from='label'", "unitize.modes=['separate','combined','labels']"],
    "long": ["unitize.layout='long'", "unitize.modes=['separate','labels']"],
    "every-annotator-expected": ["unitize.assignment='all'", "unitize.keep_missing=true", "unitize.layout='sparse'"],
    "two-workers": ["input.annotators=['w1','w3']"],
}


@pytest.mark.parametrize("size", [1, 2, 5])
@pytest.mark.parametrize("variant", VARIANTS)
def test_batches_of_documents_give_the_whole_read_outputs(crowd, variant, size, tmp_path, monkeypatch):
    settings = crowd_settings(crowd, *VARIANTS[variant])
    whole = written(settings, tmp_path / "out", stream=False)
    monkeypatch.setattr(span_rows, "BATCH_SPANS", size)
    streamed = written(settings, tmp_path / "out", stream=True)  # the same output, written again
    assert sorted(streamed) == sorted(whole)
    assert [name for name in whole if whole[name] != streamed[name]] == []


def test_a_streamed_table_holds_no_span_and_hands_out_whole_documents_in_order(crowd, monkeypatch):
    monkeypatch.setattr(span_rows, "BATCH_SPANS", 2)
    settings = crowd_settings(crowd)
    corpus = read_corpus(settings, stream=True)
    whole = read_corpus(settings)
    assert corpus.spans == [] and corpus.submissions == [] and corpus.stream is not None
    assert corpus.stream.annotators == ["w1", "w2", "w3"]
    assert corpus.stream.kinds == {("toxic", "Insult"), ("toxic", None), ("toxic", "Profane"), ("toxic", "Other")}
    assert sorted(corpus.documents) == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert sorted((f.code, f.record) for f in corpus.findings) == sorted((f.code, f.record) for f in whole.findings) == [
        ("duplicate-record", "line 13"), ("duplicate-record", "line 14"), ("offset-invalid", "line 7"), ("record-malformed", "line 9")]
    batches = [read() for read in corpus.stream.batches]
    docs = [sorted({s.doc_id for s in b.submissions}) for b in batches]
    # whole documents, in sorted order, a batch closed once it holds 2 spans (c4 has no text row, c5 no span)
    assert docs == [["c1"], ["c2"], ["c3"], ["c4"], ["c5", "c6"]]
    assert [len(b.spans) for b in batches] == [4, 2, 2, 2, 3]
    spans = [(s.line, s.annotator, s.doc_id, s.label, s.begin, s.end, s.record, s.source) for b in batches for s in b.spans]
    assert sorted(spans) == sorted((s.line, s.annotator, s.doc_id, s.label, s.begin, s.end, s.record, s.source) for s in whole.spans)
    subs = [(s.source, s.annotator, s.doc_id, s.group, s.records) for b in batches for s in b.submissions]
    assert sorted(subs) == sorted((s.source, s.annotator, s.doc_id, s.group, s.records) for s in whole.submissions)
    bad = [s for b in batches for s in b.spans if s.line == 7][0]
    assert (bad.annotator, bad.doc_id, bad.begin, bad.end, bad.label) == ("w3", "c3", -1, -1, "Insult")


def test_a_batch_closes_at_the_document_that_fills_it():
    assert _cuts(np.array([3, 0, 5, 1, 1]), 4).tolist() == [0, 0, 0, 1, 1]
    assert _cuts(np.array([4, 0]), 4).tolist() == [0, 1]
    assert _cuts(np.array([9, 9, 9]), 1).tolist() == [0, 1, 2]
    assert _cuts(np.array([3, 0, 5]), 0).tolist() == [0, 0, 0]
    assert _cuts(np.array([], dtype=np.int64), 4).tolist() == []


def test_assignments_are_indices_and_come_back_with_their_span_counts():
    """An assignment is an index (a roster of millions of rows holds integers, not tuples of names), made for a
    (document, annotator) pair in the order first met, a column at a time; its spans are counted on it, and a batch
    hands out (document, annotator, source, spans) in that order."""
    import pyarrow as pa

    rows = span_rows.SpanRows("g", "span")

    def strings(*values: str) -> pa.Array:
        return pa.array(values, pa.string())

    assert rows.assign(strings("c2", "c1", "c2"), strings("w1", "w2", "w1"), "roster.csv").tolist() == [0, 1, 0]
    # known pairs keep their index (and their source), new ones come after, in the order first met
    assert rows.assign(strings("c3", "c2", "c1", "c3"), strings("w1", "w1", "w1", "w1"), "other.csv").tolist() == [2, 0, 3, 2]
    assert [rows.owner(i) for i in range(4)] == [("c2", "w1"), ("c1", "w2"), ("c3", "w1"), ("c1", "w1")]
    assert rows.documents == ["c2", "c1", "c3"] == rows.document_names.to_pylist()
    rows.add(np.array([0, 0]), ["Insult", None], np.array([0, 1]), np.array([0, 5]), np.array([4, 9]), np.array([2, 3]))
    rows.add(np.array([1]), ["Insult"], np.array([0]), np.array([-1]), np.array([-1]), np.array([4]))
    (batch,) = rows.batches(0)
    assert batch.docs.to_pylist() == ["c2", "c1", "c3"] and batch.annotators == ["w1", "w2"] and batch.labels == ["Insult", None]
    assert batch.sources == ["roster.csv", "other.csv"]
    assert batch.assignments.tolist() == [[0, 0, 0, 2], [1, 1, 0, 1], [2, 0, 1, 0], [1, 0, 1, 0]]
    assert batch.spans.tolist() == [[0, 0, 0, 0, 4, 2], [0, 0, 1, 5, 9, 3], [1, 1, 0, -1, -1, 4]]
    assert batch.spans.dtype == batch.assignments.dtype == np.int32  # codes, offsets and lines fit: 24 bytes a span


def test_the_rows_laid_into_batches_keep_file_order_and_their_documents_codes_are_the_batchs_own():
    """Rows come in blocks (a call of ``add`` each); a batch's rows are its documents' rows in file order, their
    document codes re-coded over the batch's documents (in the order first met), the same as filtering every row."""
    import pyarrow as pa

    rows = span_rows.SpanRows("g", "span")
    docs = ["d3", "d1", "d4", "d2"]  # met in this order: codes 0 … 3; sorted, a batch closed at 2 spans: d1 d2 | d3 | d4
    owner = rows.assign(pa.array(docs, pa.string()), pa.array(["w"] * 4, pa.string()), "roster.csv")
    rows.add(owner[[0, 2, 1]], ["x"], np.zeros(3, np.int64), np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([10, 11, 12]))
    rows.add(owner[[3, 0]], ["x"], np.zeros(2, np.int64), np.array([3, 4]), np.array([4, 1 << 40]), np.array([13, 14]))
    first, second, third = rows.batches(2)
    assert [b.docs.to_pylist() for b in (first, second, third)] == [["d1", "d2"], ["d3"], ["d4"]]
    assert first.spans.tolist() == [[0, 0, 0, 2, 3, 12], [1, 0, 0, 3, 4, 13]]
    assert second.spans.tolist() == [[0, 0, 0, 0, 1, 10], [0, 0, 0, 4, 1 << 40, 14]]  # two blocks, in file order
    assert third.spans.tolist() == [[0, 0, 0, 1, 2, 11]]
    assert first.spans.dtype == np.int64  # an offset beyond 32 bits in a block: the batches hold 64-bit rows
    assert [b.assignments.tolist() for b in (first, second, third)] == [[[0, 0, 0, 1], [1, 0, 0, 1]], [[0, 0, 0, 2]], [[0, 0, 0, 1]]]


def part(groups: list[str], universe: dict) -> SimpleNamespace:
    """What run_groups reads of a part."""
    return SimpleNamespace(groups=groups, universe=universe)


def test_a_group_goes_on_into_the_next_batch_only_with_later_documents():
    assert run_groups([part(["a", "b"], {"a": {"d1": set()}, "b": {"d1": set(), "d2": set()}}),
                        part(["b", "c"], {"b": {"d3": set()}, "c": {"d1": set()}}), part(["c"], {"c": {"d2": set()}})]) == ["a", "b", "c"]
    with pytest.raises(RuntimeError, match="documents in ascending order"):
        run_groups([part(["b"], {"b": {"d3": set()}}), part(["b"], {"b": {"d2": set()}})])
    with pytest.raises(RuntimeError, match="groups in ascending order"):
        run_groups([part(["b"], {"b": {"d1": set()}}), part(["a"], {"a": {"d2": set()}})])


def test_a_streamed_corpus_is_unitized_once_and_a_second_time_is_refused():
    from unitize import load_settings, read_corpus, unitize
    from unitize.errors import RunError

    settings = load_settings(Path(unitize_package.__file__).parent / "examples" / "crowd-mini" / "study.toml")
    corpus = read_corpus(settings, stream=True)
    assert corpus.stream is not None and len(corpus.stream.batches) == 1
    first = unitize(corpus, settings)
    assert first.summary()["segments"] == {"char": 13, "word": 13} and corpus.stream.batches == []
    with pytest.raises(RunError, match="already unitized: read the corpus again"):
        unitize(corpus, settings)
    again = unitize(read_corpus(settings, stream=True), settings)
    assert again.summary() == first.summary()


def test_a_roster_codes_only_the_rows_that_can_be_assignments(tmp_path):
    """The roster's documents and annotators are coded once, over the rows that can be assignments: a document named
    only by a repeated key's row or by an annotator not selected is no document of the run; a second row of a pair
    is reported with its spans; a roster whose keys are all distinct is read as it is (no copy of its columns)."""
    import pyarrow as pa

    from unitize.adapters import span_table

    write_csv(tmp_path / "texts.csv", [["doc_id", "text"], ["c1", "you idiot"], ["c2", "fine"]])
    write_csv(tmp_path / "roster.csv", [["key", "doc_id", "annotator"], [1, "c1", "w1"], [2, "c1", "w2"], [1, "c9", "w3"],
                                        [3, "c8", "w4"], [4, "c1", "w1"], [5, "c2", "w3"]])
    write_csv(tmp_path / "spans.csv", [["key", "label", "begin", "end"], [1, "Insult", 4, 9], [4, "Insult", 0, 3], [4, "Insult", 0, 9],
                                       [3, "Insult", 0, 1], [5, "Other", 0, 4]])
    corpus = span_table.read(annotations=tmp_path / "spans.csv", texts=tmp_path / "texts.csv", roster="roster.csv", layer="toxic",
                             annotators=["w1", "w2", "w3"], spreadsheet_safe=False, base=tmp_path)
    assert sorted(corpus.documents) == ["c1", "c2"]
    assert sorted((s.doc_id, s.annotator) for s in corpus.submissions) == [("c1", "w1"), ("c1", "w2"), ("c2", "w3")]
    assert sorted((s.doc_id, s.annotator, s.begin, s.end, s.label) for s in corpus.spans) == [
        ("c1", "w1", 4, 9, "Insult"), ("c2", "w3", 0, 4, "Other")]
    duplicates = [(f.record, f.message, f.action) for f in corpus.findings if f.code == "duplicate-record"]
    assert duplicates == [
        ("line 4", "roster key 1 appears twice", "this roster row and its spans left out (the first is used)"),
        ("line 6", "roster annotator w1 has a second assignment for document c1", "this roster row and its 2 span(s) left out (the first row is used)"),
    ]
    assert corpus.skipped_by_selection == 1 and corpus.not_selected == {"w4"}
    every = np.arange(3)
    column = pa.array(["a", "b", "c"])
    assert span_table._taken(column, every) is column and span_table._taken(column, every[1:]).to_pylist() == ["b", "c"]


def test_span_rows_find_their_roster_keys_among_a_slices_distinct_keys():
    """A slice of span rows finds each row's roster key by looking the roster's keys up among the slice's distinct
    ones; a key the roster lacks is -1."""
    import pyarrow as pa

    from unitize.adapters import span_table

    tables = span_table._Tables(None, {}, Path("."), False, None, span_rows.SpanRows("g", "span"))
    tables.keys = pa.array(["k1", "k2", "k3", ""])
    assert tables._roster_codes(pa.array(["k3", "zz", "k1", "k3", ""])).tolist() == [2, -1, 0, 2, 3]
    assert tables._roster_codes(pa.array([], pa.string())).tolist() == []
    tables.keys = pa.array([], pa.string())
    assert tables._roster_codes(pa.array(["k1"])).tolist() == [-1]


def test_a_batch_finds_its_documents_in_the_unit_spaces_sorted_ids():
    """A batch process finds its documents' places in the unit spaces by bisection in their sorted ids (no dict of
    every document of the run); a document without a text has none."""
    from unitize.spans.batch import RunContext
    from unitize.units.unitizers import UnitSpace

    ids = ["a", "b", "d", "é"]
    n = np.ones(4, np.int64)
    space = UnitSpace("char", ids, n, np.arange(4), np.arange(4), 4)
    run = RunContext(None, ["w1"], ["span"], {"char": space}, True)
    assert run.doc_index(["d", "é", "c", "a", "d", "zz"]) == {"a": 0, "d": 2, "é": 3}
    assert run.doc_index([]) == {}


def test_rows_closed_keep_their_assignments_and_refuse_new_ones() -> None:
    """A roster's assignments are made at once (the sorted pairs kept as they come); closed, the rows let their pair
    keys go, and their assignments and spans are what they were."""
    import pyarrow as pa

    rows = span_rows.SpanRows("g", "span")
    docs, who = pa.array(["c2", "c1", "c2", "c1"], pa.string()), pa.array(["w2", "w1", "w1", "w1"], pa.string())
    assert rows.assign(docs, who, "roster.csv").tolist() == [0, 1, 2, 1]
    assert rows._keys.tolist() == sorted(rows._keys.tolist()) and rows._key_index.tolist() == [0, 2, 1]
    rows.closed()
    assert rows._keys.size == 0 and [rows.owner(i) for i in range(3)] == [("c2", "w2"), ("c1", "w1"), ("c2", "w1")]
    with pytest.raises(AssertionError, match="closed"):
        rows.assign(docs, who, "roster.csv")
    rows.add(np.array([2]), ["X"], np.array([0]), np.array([1]), np.array([3]), np.array([5]))
    (batch,) = rows.batches(0)
    assert batch.docs.to_pylist() == ["c2", "c1"] and batch.spans.tolist() == [[0, 1, 0, 1, 3, 5]]


def test_pairs_coded_a_piece_at_a_time_are_those_of_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names coded a row at a time (PAIR_ROWS 1) get the codes of one pass, in the order first met; a roster's
    distinct pairs are assigned at once in row order, and the rows are closed."""
    import pyarrow as pa

    docs, who = pa.array(["c2", "c1", "c2", "c3", "c1"], pa.string()), pa.array(["w1", "w2", "w2", "w1", "w1"], pa.string())
    whole = span_rows.SpanRows("g", "span").pairs(docs, who)
    monkeypatch.setattr(span_rows, "PAIR_ROWS", 1)
    rows = span_rows.SpanRows("g", "span")
    pairs = rows.pairs(docs, who)
    assert pairs.tolist() == whole.tolist() == [0 << 32 | 0, 1 << 32 | 1, 0 << 32 | 1, 2 << 32 | 0, 1 << 32 | 0]
    assert rows.assign_once(pairs, "roster.csv").tolist() == [0, 1, 2, 3, 4] and rows._closed
    assert [rows.owner(i) for i in range(5)] == [("c2", "w1"), ("c1", "w2"), ("c2", "w2"), ("c3", "w1"), ("c1", "w1")]
    with pytest.raises(AssertionError, match="closed"):
        rows.assign(docs, who, "roster.csv")
