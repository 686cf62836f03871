"""The DATT adapter: structure, offsets, and every kind of bad input."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import CORPORA, needs_shared
from unitize import read_corpus, unitize
from unitize.adapters import AdapterError
from unitize.adapters.datt import ADAPTER, compile_pattern

read = ADAPTER.read  # the reader with the declared option defaults

TEXT = "Ali geldi ve Ayşe gitti. Can kaldı."


def codes(findings):
    return sorted(f.code for f in findings)


def test_reads_relations_layers_attrs_and_fragments(datt):
    datt.text("00000001", TEXT)
    datt.file(
        "00000001",
        "ayse",
        "ve",
        [
            {
                "attrs": {"type": "EXPLICIT", "sense": "EXPANSION: Conjunction", "note": "n", "tag": "intra"},
                "Conn": [(10, 12)],
                "Arg1": [(0, 9)],
                "Arg2": [(13, 17), (18, 23)],
                "Supp1": [(25, 28)],
            }
        ],
        sup="Sup",  # <Sup1/> spelling
    )
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root)
    assert corpus.findings == []
    spans = [(s.layer, s.fragment, s.begin, s.end, s.record) for s in corpus.spans]
    assert spans == [
        ("Conn", 0, 10, 12, "1"),
        ("Arg1", 0, 0, 9, "1"),
        ("Arg2", 0, 13, 17, "1"),
        ("Arg2", 1, 18, 23, "1"),
        ("Sup1", 0, 25, 28, "1"),
    ]
    first = corpus.spans[0]
    assert (first.annotator, first.doc_id, first.group, first.source) == (
        "ayse",
        "00000001",
        "ve",
        "annotations/00000001_ayse_ve.xml",
    )
    assert first.attrs == {"type": "EXPLICIT", "sense": "EXPANSION: Conjunction", "note": "n", "tag": "intra"}
    assert first.label == "EXPANSION: Conjunction"
    assert corpus.submissions[0].records == 1
    doc = corpus.documents["00000001"]
    assert (doc.text, doc.encoding, doc.newline, doc.bom) == (TEXT, "utf-8", "none", False)
    assert [i.role for i in corpus.inputs] == ["annotations", "text"]


def test_connective_is_everything_after_the_second_underscore(datt):
    datt.text("00000001", TEXT)
    datt.file("00000001", "ayse", "buna_ragmen", [])
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root)
    assert [(s.doc_id, s.annotator, s.group, s.records) for s in corpus.submissions] == [
        ("00000001", "ayse", "buna_ragmen", 0)
    ]


def test_custom_filename_pattern_on_paths(datt):
    (datt.annotations / "ayse").mkdir()
    datt.text("doc1", TEXT)
    (datt.annotations / "ayse" / "doc1-ve.xml").write_text("<Document/>", encoding="utf-8")
    corpus = read(
        annotations=datt.annotations,
        texts=datt.texts,
        base=datt.root,
        filename_pattern=r"^(?P<annotator>[^/]+)/(?P<doc>[^-/]+)-(?P<connective>[^/]+)\.xml$",
    )
    assert [(s.doc_id, s.annotator, s.group) for s in corpus.submissions] == [("doc1", "ayse", "ve")]


def test_pattern_without_named_groups_is_a_usage_error():
    with pytest.raises(AdapterError, match="lacks the named group"):
        compile_pattern(r"^(?P<doc>\d+)_(.*)\.xml$")
    with pytest.raises(AdapterError, match="not a valid regular expression"):
        compile_pattern(r"(")


def test_bad_files_are_reported_never_raised(datt):
    datt.text("00000001", TEXT)
    datt.file("00000001", "a", "ve", [{"Arg1": [(0, 3)], "Arg2": [(4, 9)]}])
    bad = datt.annotations
    (bad / "00000001_b_ve.xml").write_text("<Document><Relation>", encoding="utf-8")  # malformed
    (bad / "00000001_c_ve.xml").write_bytes(b"")  # empty
    (bad / "00000001_d_ve.xml").write_text("<Root/>", encoding="utf-8")  # wrong root
    (bad / "notes.xml").write_text("<Document/>", encoding="utf-8")  # name does not match
    (bad / "sub").mkdir()
    (bad / "sub" / "00000001_a_ve.xml").write_text("<Document/>", encoding="utf-8")  # duplicate
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root)
    found = {(f.code, f.file) for f in corpus.findings}
    assert found == {
        ("file-unreadable", "annotations/00000001_b_ve.xml"),
        ("file-unreadable", "annotations/00000001_c_ve.xml"),
        ("file-unreadable", "annotations/00000001_d_ve.xml"),
        ("filename-pattern", "annotations/notes.xml"),
        ("duplicate-file", "annotations/sub/00000001_a_ve.xml"),
    }
    messages = {f.file: f.message for f in corpus.findings}
    assert "malformed XML" in messages["annotations/00000001_b_ve.xml"]
    assert "empty" in messages["annotations/00000001_c_ve.xml"]
    assert "<Root>" in messages["annotations/00000001_d_ve.xml"]
    assert all(f.severity == "error" for f in corpus.findings)
    assert [s.annotator for s in corpus.submissions] == ["a"]


def test_xml_entities_and_dtds_are_not_resolved(datt, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET", encoding="utf-8")
    datt.text("00000001", TEXT)
    (datt.annotations / "00000001_a_ve.xml").write_text(
        f'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file://{secret}">]>'
        "<Document><Relation type='&x;'><Arg1><Span><Text>&x;</Text><BeginOffset>0</BeginOffset>"
        "<EndOffset>3</EndOffset></Span></Arg1></Relation></Document>",
        encoding="utf-8",
    )
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root)
    assert all("SECRET" not in (s.stored_text or "") for s in corpus.spans)
    assert "SECRET" not in str(corpus.spans[0].attrs) if corpus.spans else True


def test_invalid_offsets(datt):
    datt.text("00000001", TEXT)
    path = datt.file(
        "00000001",
        "a",
        "ve",
        [
            {"Arg1": [(5, 3)], "Arg2": [(0, 999)]},  # reversed, past the end
            {"Arg1": [(0, 3)], "Arg2": [(4, 9)]},
        ],
    )
    path.write_text(path.read_text(encoding="utf-8").replace("<BeginOffset>4<", "<BeginOffset>x4<"), encoding="utf-8")
    settings = datt.settings()
    r = unitize(read_corpus(settings), settings)
    invalid = sorted((f.record, f.layer, f.message) for f in r.findings if f.code == "offset-invalid")
    assert [(rec, layer) for rec, layer, _ in invalid] == [("1", "Arg1"), ("1", "Arg2"), ("2", "Arg2")]
    assert invalid[0][2].endswith("begin 5 is after end 3")
    assert invalid[1][2].endswith(f"offsets 0..999 run past the end of the text ({len(TEXT)} characters)")
    assert invalid[2][2].endswith("has a missing or non-integer BeginOffset/EndOffset")
    assert r.accounting["by_unit"]["char"] == {
        "records": 4,
        "in_segments": 1,
        "excluded": {"offset-invalid": 3},
        "segments": 1,
    }


def test_stored_text_checked_after_collapsing_whitespace(datt):
    datt.text("00000001", TEXT)
    datt.file(
        "00000001",
        "a",
        "ve",
        [
            {
                "Arg1": [(0, 9)],
                "Arg2": [(13, 23)],
                "text": {"Arg1": "Ali\n                    geldi", "Arg2": "Ayşe gitmedi"},
            }
        ],
    )
    settings = datt.settings()
    r = unitize(read_corpus(settings), settings)
    mismatches = [f for f in r.findings if f.code == "text-mismatch"]
    assert [(f.layer, f.severity, f.action) for f in mismatches] == [("Arg2", "warning", "kept; the offsets are used")]
    assert "'Ayşe gitmedi'" in mismatches[0].message and "'Ayşe gitti'" in mismatches[0].message


def test_missing_raw_text(datt):
    datt.text("00000001", TEXT)
    datt.file("00000001", "a", "ve", [{"Arg1": [(0, 3)], "Arg2": [(4, 9)]}])
    datt.file("00000002", "a", "ve", [{"Arg1": [(0, 3)], "Arg2": [(4, 9)]}])
    settings = datt.settings()
    r = unitize(read_corpus(settings), settings)
    missing = [f for f in r.findings if f.code == "raw-text-missing"]
    assert [(f.file, f.severity) for f in missing] == [("annotations/00000002_a_ve.xml", "error")]
    assert r.documents_in("ve") == ["00000001"]
    assert r.accounting["by_unit"]["char"]["excluded"] == {"raw-text-missing": 2}


def test_encoding_fallback_and_error(datt):
    turkish = "Işık ve gölge."
    datt.text("00000001", turkish, encoding="windows-1254")
    (datt.texts / "00000002.txt").write_bytes(b"\x81\x8d bad in UTF-8 and windows-1254")
    datt.file("00000001", "a", "ve", [{"Arg1": [(0, 4)], "Arg2": [(8, 13)]}])
    datt.file("00000002", "a", "ve", [{"Arg1": [(0, 1)], "Arg2": [(1, 2)]}])
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root, encoding_fallback="windows-1254")
    assert corpus.documents["00000001"].text == turkish
    assert corpus.documents["00000001"].encoding == "windows-1254"
    assert codes(corpus.findings) == ["encoding-error", "encoding-fallback"]
    # without a fallback that can decode it
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root, encoding="ascii")
    assert codes(corpus.findings) == ["encoding-error", "encoding-error"]
    assert corpus.documents["00000001"].text is None


def test_unknown_elements_are_kept_in_attrs(datt):
    datt.text("00000001", TEXT)
    (datt.annotations / "00000001_a_ve.xml").write_text(
        "<Document><Relation type='EXPLICIT'><Arg1><Span><Text>Ali</Text><BeginOffset>0</BeginOffset>"
        "<EndOffset>3</EndOffset></Span></Arg1><Extra level='2'>x</Extra></Relation><Comment/></Document>",
        encoding="utf-8",
    )
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root)
    assert codes(corpus.findings) == ["unknown-element", "unknown-element"]
    assert corpus.spans[0].attrs["xml:Extra"] == '<Extra level="2">x</Extra>'


def test_selection_of_annotators_and_connectives(datt):
    datt.text("00000001", TEXT)
    for ann in ("a", "b", "c"):
        for conn in ("ve", "ama"):
            datt.file("00000001", ann, conn, [])
    corpus = read(annotations=datt.annotations, texts=datt.texts, base=datt.root, annotators=["a", "c"], groups=["ve"])
    assert sorted((s.annotator, s.group) for s in corpus.submissions) == [("a", "ve"), ("c", "ve")]
    assert corpus.skipped_by_selection == 4


def test_parallel_parsing_gives_the_same_corpus(datt):
    datt.text("00000001", TEXT)
    for i in range(6):
        datt.file("00000001", f"a{i}", "ve", [{"Arg1": [(0, 3)], "Arg2": [(4, 9)]}])
    serial = read(annotations=datt.annotations, texts=datt.texts, base=datt.root, workers=1)
    parallel = read(annotations=datt.annotations, texts=datt.texts, base=datt.root, workers=2)
    assert serial.spans == parallel.spans and serial.submissions == parallel.submissions


@needs_shared
def test_real_tdb_file_without_its_raw_text():
    folder = CORPORA / "format-samples" / "tdb-datt-xml"
    corpus = read(annotations=folder, base=folder)
    assert [(s.doc_id, s.annotator, s.group, s.records) for s in corpus.submissions] == [
        ("00001131", "agreed", "bir", 156)
    ]
    assert len(corpus.spans) == 492
    assert Counter(s.layer for s in corpus.spans) == {
        "Arg1": 159,
        "Conn": 158,
        "Arg2": 158,
        "Shared": 9,
        "Mod": 4,
        "Sup1": 4,
    }
    types = Counter(s.attrs["type"] for s in corpus.spans if s.layer == "Conn" and s.fragment == 0)
    assert types == {"EXPLICIT": 74, "IMPLICIT": 65, "NOREL": 9, "ENTREL": 5, "ALTLEX": 3}
    discontinuous = Counter(s.layer for s in corpus.spans if s.fragment == 1)
    assert discontinuous == {"Arg1": 3, "Arg2": 2, "Conn": 2}
    first = corpus.spans[0]
    assert (first.layer, first.begin, first.end, first.stored_text) == ("Conn", 11994, 11996, "ve")
    assert all(s.valid for s in corpus.spans)
    # the raw text is not public: every file is reported, nothing is unitized, nothing crashes
    from unitize.validate import validate

    v = validate(corpus)
    assert Counter(f.code for f in v.findings) == {"raw-text-missing": 1}
    assert set(v.fate) == {"raw-text-missing"}


from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

_span = st.tuples(st.integers(0, 30), st.integers(0, 10)).map(lambda p: (p[0], p[0] + p[1]))
_relation = st.fixed_dictionaries(
    {},
    optional={
        "Conn": st.lists(_span, min_size=1, max_size=2),
        "Arg1": st.lists(_span, min_size=1, max_size=3),
        "Arg2": st.lists(_span, min_size=1, max_size=3),
        "Supp1": st.lists(_span, min_size=1, max_size=1),
    },
)


@hsettings(max_examples=50, deadline=None)
@given(st.lists(_relation, max_size=5), st.sampled_from(["Supp", "Sup"]))
def test_datt_round_trip(tmp_path_factory, relations, sup):
    from tests.conftest import ELEMENTS, datt_xml

    root = tmp_path_factory.mktemp("rt")
    (root / "t").mkdir()
    text = "abcdefghij klmnopqrst uvwxyz ABCDEFGHIJ"
    (root / "t" / "d.txt").write_text(text, encoding="utf-8")
    (root / "d_a_ve.xml").write_text(datt_xml(text, relations, sup=sup), encoding="utf-8")
    corpus = read(annotations=root, texts=root / "t", base=root)
    assert corpus.findings == []
    expected = [
        (str(i + 1), element.replace("Supp1", "Sup1"), f, b, e)
        for i, rel in enumerate(relations)
        for element in ELEMENTS
        for f, (b, e) in enumerate(rel.get(element, []))
    ]
    assert [(s.record, s.layer, s.fragment, s.begin, s.end) for s in corpus.spans] == expected
    assert corpus.submissions[0].records == len(relations)
