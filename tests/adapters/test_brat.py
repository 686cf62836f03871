"""brat adapter, mode labels, layers_from, long layout; the bratiaa project as real data."""

from __future__ import annotations

import json
import pickle
import re
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import CORPORA, needs_shared
from unitize.cli import main
from unitize.config import Settings
from unitize.model import Absent
from unitize.run import convert, read_corpus, unitize, write_output
from unitize.schema import setting_path
from unitize.spans.matrices import NOT_ANNOTATED

BRATIAA = CORPORA / "bratiaa-example" / "example-files" / "example-project"


def project(root: Path, docs: dict[str, str], anns: dict[str, dict[str, str]]) -> Path:
    """A brat project: docs = {doc: text}; anns = {annotator: {doc: ann text}}."""
    for annotator, files in anns.items():
        d = root / annotator
        d.mkdir(parents=True, exist_ok=True)
        for doc, ann in files.items():
            (d / f"{doc}.ann").write_text(ann, encoding="utf-8")
            if doc in docs:
                (d / f"{doc}.txt").write_bytes(docs[doc].encode("utf-8"))
    return root


def settings(root: Path, **kw) -> Settings:
    base = dict(format="brat", input={"annotations": root}, tokenizer="whitespace", out=root.parent / "out", base=root.parent)
    base.update(kw)
    return Settings(**base)


def column(table, name):
    return table.column(name).to_pylist()


TEXT = "Ana met Bob in Paris today"
#       0123456789012345678901234


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return project(
        tmp_path / "proj",
        {"d1": TEXT},
        {
            "A": {"d1": "T1\tPER 0 3\tAna\nT2\tPER 8 11\tBob\nT3\tLOC 15 20\tParis\nR1\tmeets Arg1:T1 Arg2:T2\t\nA1\tNegated T2\n"},
            # B: overlapping PER and LOC over "in Paris", a discontinuous annotation
            "B": {"d1": "T1\tPER 0 3;8 11\tAna Bob\nT2\tLOC 12 20\tin Paris\nT3\tPER 15 20\tParis\n#1\tAnnotatorNotes T3\tunsure\n"},
        },
    )


def test_brat_reads_labels_attrs_and_fragments(small: Path) -> None:
    corpus = read_corpus(settings(small))
    a = [s for s in corpus.spans if s.annotator == "A"]
    assert [(s.record, s.label, s.begin, s.end) for s in a] == [("T1", "PER", 0, 3), ("T2", "PER", 8, 11), ("T3", "LOC", 15, 20)]
    assert a[1].attrs == {"relations": ["R1\tmeets Arg1:T1 Arg2:T2"], "attributes": {"Negated": True}}
    b = [s for s in corpus.spans if s.annotator == "B"]
    assert [(s.record, s.fragment, s.begin, s.end) for s in b[:2]] == [("T1", 0, 0, 3), ("T1", 1, 8, 11)]
    assert b[-1].attrs == {"notes": ["#1\tAnnotatorNotes T3\tunsure"]}
    assert corpus.findings == []


def test_labels_mode_joins_overlapping_labels_and_marks_not_annotated(small: Path) -> None:
    u = unitize(read_corpus(settings(small, modes=("labels",), pairs=(("word", "interval"),))), settings(small))
    assert u.settings.layers == ("Entity",) and u.labels == ["LOC", "PER"]
    table = next(u.matrices("word", "interval", "labels"))
    # tokens: Ana met Bob in Paris today
    assert column(table, "A") == ["PER", NOT_ANNOTATED, "PER", NOT_ANNOTATED, "LOC", NOT_ANNOTATED]
    # B's PER 0..11 is extended over "met"; its LOC "in Paris" and PER "Paris" intersect: one segment, LOC+PER on
    # both its words (one label per unit: the segment's, as span F1 reads it; docs/convert.md)
    assert column(table, "B") == ["PER", "PER", "PER", "LOC+PER", "LOC+PER", NOT_ANNOTATED]
    meta = json.loads(table.schema.metadata[b"unitize"])
    assert (meta["value"], meta["layout"], meta["not_annotated"], meta["labels"]) == ("label", "wide", "O", ["LOC", "PER"])


def test_layers_from_label_gives_one_binary_matrix_per_label(small: Path) -> None:
    s = settings(small, layers_from="label", pairs=(("word", "interval"),))
    u = unitize(read_corpus(s), s)
    assert u.layers == ["LOC", "PER"]
    tables = {column(t, "layer")[0]: t for t in u.matrices("word", "interval")}
    assert column(tables["LOC"], "B") == [0, 0, 0, 1, 1, 0]
    assert column(tables["PER"], "B") == [1, 1, 1, 0, 1, 0]
    assert column(tables["PER"], "A") == [1, 0, 1, 0, 0, 0]


def test_long_layout_rows_are_existing_pairs(small: Path, tmp_path: Path) -> None:
    (small / "C").mkdir()  # C annotated another document only: no rows for d1
    (small / "C" / "d2.ann").write_text("T1\tPER 0 2\tOk\n", encoding="utf-8")
    (small / "C" / "d2.txt").write_text("Ok then", encoding="utf-8")
    # each document has its own annotators: the study says so (assignment), the layout only stores it
    s = settings(small, layout="long", assignment="per-document", pairs=(("word", "interval"),), modes=("separate", "labels"))
    _, manifest = convert(s)
    t = pq.read_table(s.out / "units" / "setting=word-interval")
    assert t.column_names == ["group", "doc_id", "layer", "unit", "begin", "end", "annotator", "value"]
    rows = list(zip(column(t, "doc_id"), column(t, "annotator"), column(t, "unit"), column(t, "value")))
    assert rows == [("d1", "A", i, v) for i, v in enumerate([1, 0, 1, 0, 1, 0])] + [
        ("d1", "B", i, v) for i, v in enumerate([1, 1, 1, 1, 1, 0])
    ] + [("d2", "C", 0, 1), ("d2", "C", 1, 0)]
    meta = json.loads(t.schema.metadata[b"unitize"])
    assert (meta["layout"], meta["value"]) == ("long", "binary")
    labels = pq.read_table(s.out / setting_path("word-interval-labels"))
    assert column(labels, "value")[6:12] == ["PER", "PER", "PER", "LOC+PER", "LOC+PER", "O"]  # one label per unit
    # no annotator-missing findings: each document has its own annotators
    report = [json.loads(line) for line in (s.out / "report.jsonl").read_text().splitlines()]
    assert "annotator-missing" not in {r["code"] for r in report}


def test_brat_bad_input_is_reported_and_strict_exits_3(tmp_path: Path) -> None:
    root = project(
        tmp_path / "proj",
        {"d1": TEXT},
        {
            "A": {
                "d1": "T1\tPER 0 3\tAna\nT2\tPER x 5\tbad\nT3\tLOC 15 99\tParis\nT4\tLOC 0 5;3 8\toverlap\nnot a line\nT5\tPER 8 11\tBob\n",
                "nodoc": "T1\tPER 0 1\tx\n",
            },
        },
    )
    s = settings(root)
    u = unitize(read_corpus(s), s)
    found = sorted((f.code, f.file, f.record) for f in u.findings if f.severity != "info")
    assert found == [
        ("fragments-overlap", "proj/A/d1.ann", "T4"),
        ("labels-ignored", None, None),  # PER and LOC, and no labels mode in these settings
        ("offset-invalid", "proj/A/d1.ann", "T2"),
        ("offset-invalid", "proj/A/d1.ann", "T3"),
        ("raw-text-missing", "proj/A/nodoc.ann", None),
        ("record-malformed", "proj/A/d1.ann", "line 5"),
    ]
    assert u.accounting["by_unit"]["char"]["in_segments"] == 4  # T1, T4 (2 fragments), T5
    assert main(["convert", "--format", "brat", "--annotations", str(root), "--out", str(tmp_path / "o"), "--strict", "-q"]) == 3
    assert not (tmp_path / "o").exists()


def test_brat_crlf_universal_newlines_by_default(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"d": "ab\r\ncd"}, {"A": {"d": "T1\tX 3 5\tcd\n"}})
    corpus = read_corpus(settings(root))
    assert corpus.documents["d"].text == "ab\ncd" and corpus.findings == []
    kept = read_corpus(settings(root, input={"annotations": root, "newlines": "keep"}))
    assert kept.documents["d"].text == "ab\r\ncd"
    s = settings(root, input={"annotations": root, "newlines": "keep"})
    assert [f.code for f in unitize(kept, s).findings if f.severity != "info"] == ["text-mismatch"]


# --- the bratiaa example project (4 annotators x 7 documents) -----------------


def _independent_counts(unit: str) -> Counter:
    """(annotator, label) -> number of units (chars, or spacy:es tokens) an annotator gave that label."""
    import spacy

    nlp = spacy.blank("es")
    per: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for ann in sorted(BRATIAA.glob("*/*.ann")):
        annotator, doc = ann.parent.name, ann.stem
        text = ann.with_suffix(".txt").read_text(encoding="utf-8")
        tokens = [(t.idx, t.idx + len(t.text)) for t in nlp.make_doc(text) if not t.is_space]
        for line in ann.read_text(encoding="utf-8").splitlines():
            if not line.startswith("T"):
                continue
            label, *offs = re.split(r"[ ;]", line.split("\t")[1])
            pairs = [(int(offs[i]), int(offs[i + 1])) for i in range(0, len(offs), 2)]
            b, e = min(p[0] for p in pairs), max(p[1] for p in pairs)
            if unit == "char":
                units = range(b, e)
            else:
                units = [i for i, (ts, te) in enumerate(tokens) if ts < e and te > b]
            per[(annotator, doc, label)].update(units)
    counts: Counter = Counter()
    for (annotator, _, label), units in per.items():
        counts[(annotator, label)] += len(units)
    return counts


@needs_shared
@pytest.mark.parametrize("unit", ["char", "word"])
def test_bratiaa_label_counts_match_an_independent_computation(unit: str, tmp_path: Path) -> None:
    s = Settings(
        format="brat",
        input={"annotations": BRATIAA},
        pairs=((unit, "interval"),),
        modes=("labels",),
        tokenizer="spacy:es",
        out=tmp_path / "out",
        base=BRATIAA.parent,
    )
    unitized, manifest = convert(s)
    assert unitized.annotators == ["Lisa", "Maria", "Max", "Peter"]
    assert manifest["accounting"]["by_unit"][unit] == {
        "records": 1567, "in_segments": 1567, "excluded": {}, "segments": manifest["accounting"]["by_unit"][unit]["segments"]
    }
    t = pq.read_table(tmp_path / "out" / setting_path(f"{unit}-interval-labels"))
    assert sorted(set(column(t, "doc_id"))) == sorted(p.stem for p in (BRATIAA / "Lisa").glob("*.ann"))
    got: Counter = Counter()
    for annotator in unitized.annotators:
        for value, n in Counter(column(t, annotator)).items():
            if value != NOT_ANNOTATED:
                for label in value.split("+"):
                    got[(annotator, label)] += n
    expected = _independent_counts(unit)
    assert got == expected
    assert sum(expected.values()) > 1000


def test_long_layout_batches_do_not_change_the_rows(small: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa

    from unitize.layouts import long as long_rows

    (small / "A" / "d2.ann").write_text("T1\tPER 0 2\tOk\nT2\tLOC 3 7\tthen\n", encoding="utf-8")
    (small / "A" / "d2.txt").write_text("Ok then", encoding="utf-8")
    (small / "B" / "d2.ann").write_text("T1\tPER 0 7\tOk then\n", encoding="utf-8")
    (small / "B" / "d2.txt").write_text("Ok then", encoding="utf-8")
    s = settings(small, layout="long", modes=("separate", "combined", "labels"), pairs=(("char", "boundary"),))
    u = unitize(read_corpus(s), s)
    whole = {m: pa.concat_tables(u.matrices("char", "boundary", m)) for m in s.modes}
    monkeypatch.setattr(long_rows, "LONG_BATCH_ROWS", 5)
    for mode in s.modes:
        parts = list(u.matrices("char", "boundary", mode))
        assert len(parts) > 1
        assert pa.concat_tables(parts).to_pylist() == whole[mode].to_pylist()
    assert u.matrix("all", "Entity", "char", "boundary").to_pylist() == whole["separate"].to_pylist()
    rows = whole["labels"].to_pylist()
    assert [r["value"] for r in rows if r["doc_id"] == "d2" and r["annotator"] == "A"] == ["PER", "PER", "O", "LOC", "O", "O", "LOC"]


def test_differing_text_copies_are_reported(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {}, {"A": {"d": "T1\tX 0 2\tab\n"}, "B": {"d": "T1\tX 0 2\tab\n"}})
    (root / "A" / "d.txt").write_text("ab cd", encoding="utf-8")
    (root / "B" / "d.txt").write_text("ab ce", encoding="utf-8")
    corpus = read_corpus(settings(root))
    assert [(f.code, f.file, f.doc) for f in corpus.findings] == [("text-copy-differs", "p/B/d.txt", "d")]
    assert corpus.documents["d"].text == "ab cd" and corpus.documents["d"].source == "p/A/d.txt"


@needs_shared
@pytest.mark.parametrize("mode", ["separate", "labels"])
def test_bratiaa_long_layout_is_the_wide_matrix_melted(mode: str) -> None:
    import pyarrow as pa

    def run(layout: str):
        s = Settings(format="brat", input={"annotations": BRATIAA}, pairs=(("word", "boundary"),), modes=(mode,), tokenizer="regex", base=BRATIAA.parent, layout=layout)
        return pa.concat_tables(unitize(read_corpus(s), s).matrices("word", "boundary", mode))

    wide, long = run("wide"), run("long")
    annotators = ["Lisa", "Maria", "Max", "Peter"]
    melted = sorted(
        (r["doc_id"], a, r["unit"], r["begin"], r["end"], r[a]) for r in wide.to_pylist() for a in annotators
    )
    assert melted == sorted((r["doc_id"], r["annotator"], r["unit"], r["begin"], r["end"], r["value"]) for r in long.to_pylist())
    assert long.num_rows == 4 * wide.num_rows


def test_a_per_document_universe_holds_the_present_annotators_only(small: Path) -> None:
    """Crowd data: each document's missing annotators are the study but the few present (an Absent), not a set
    of them per document — thousands of annotators by hundreds of thousands of documents would not fit in memory."""
    (small / "C").mkdir()
    (small / "C" / "d2.ann").write_text("T1\tPER 0 2\tOk\n", encoding="utf-8")
    (small / "C" / "d2.txt").write_text("Ok then", encoding="utf-8")
    s = settings(small, layout="long", assignment="per-document", pairs=(("word", "interval"),))
    u = unitize(read_corpus(s), s)
    d1, d2 = u.universe["all"]["d1"], u.universe["all"]["d2"]
    assert isinstance(d1, Absent) and d1.present == ("A", "B") and d2.present == ("C",)  # sorted: a tuple costs a third of a frozenset
    assert d1 == frozenset({"C"}) and d2 == frozenset({"A", "B"}) and sorted(d2) == ["A", "B"] and len(d2) == 2
    assert "C" in d1 and "A" not in d1 and "Z" not in d1
    assert pickle.loads(pickle.dumps(d2)) == d2  # a streamed batch's universe crosses processes
    write_output(u, s.out)
    assert pq.read_table(s.out / "universe.parquet").to_pylist() == [
        {"group": "all", "doc_id": "d1", "annotators": ["A", "B"]},
        {"group": "all", "doc_id": "d2", "annotators": ["C"]},
    ]
