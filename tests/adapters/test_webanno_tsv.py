"""WebAnno / INCEpTION TSV 3: the INCEpTION test-suite files, UTF-16 offsets, project exports."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.conftest import CORPORA, needs_shared
from unitize.cli import main
from unitize.config import Settings
from unitize.run import read_corpus, unitize

SAMPLES = CORPORA / "format-samples" / "webanno-tsv3"
HEADER = "#FORMAT=WebAnno TSV 3.3\n#T_SP=de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity|identifier|value\n\n\n"


def spans_of(corpus, doc):
    text = corpus.documents[doc].text
    return sorted((s.layer, s.label, s.begin, s.end, text[s.begin : s.end]) for s in corpus.spans if s.doc_id == doc)


@needs_shared
def test_every_suite_file_reads_with_code_point_offsets() -> None:
    s = Settings(format="webanno-tsv", input={"annotations": SAMPLES}, base=SAMPLES, pairs=(("word", "interval"),))
    corpus = read_corpus(s)
    assert len(corpus.documents) == len(list(SAMPLES.glob("*.tsv"))) == 10
    assert [(f.code, f.file) for f in corpus.findings] == [("unknown-element", "inception_tsv3_example2.tsv")]
    p = "inception_tsv3-suite_"
    emoji = corpus.documents[p + "testSentenceWithEmoji"]
    assert emoji.text == "I like it \U0001F60A .\n"  # INCEpTION ends the text with a line break
    # UTF-16 10-12 and 13-14 are code points 10-11 and 12-13
    assert list(zip(emoji.tokens[0].tolist(), emoji.tokens[1].tolist()))[3:] == [(10, 11), (12, 13)]
    assert spans_of(corpus, p + "testSentenceWithEmoji") == [("Span", None, 10, 11, "\U0001F60A")]
    assert spans_of(corpus, p + "testCrossSentenceSpanWithFeatureValue") == [
        ("Span", "PERSON", 0, 34, "He loves her .\nShe loves him not .")  # the sentence's line break, as INCEpTION reads it
    ]
    assert spans_of(corpus, p + "testMultiTokenStackedSpanWithFeatureValue") == [
        ("Span", "LOCATION", 0, 16, "This is a test ."),
        ("Span", "PERSON", 0, 16, "This is a test ."),
    ]
    assert corpus.documents[p + "testSentenceWithLineBreak"].text == "This is\na test .\n"
    assert spans_of(corpus, p + "testZeroLengthSpansWithFeatureValues") == [("Span", "ORG", 16, 16, ""), ("Span", "PERSON", 0, 0, "")]
    assert spans_of(corpus, p + "testAnnotationWithTrailingWhitespace") == [("NamedEntity", None, 0, 3, "one")]
    sub = spans_of(corpus, p + "testSubMultiTokenSpanWithFeatureValue")
    assert ("Span", "9", 3, 17, "aaa bbbbbb ccc") in sub and ("Span", "4", 7, 11, "bbbb") in sub and len(sub) == 12
    assert len(spans_of(corpus, p + "testTokenBoundedStackedSpanWithFeatureValue")) == 10
    neuged = spans_of(corpus, "neuged_webanno_tsv_test_input_v3.3")
    assert ("LetterEntity", "DATEletter", 26, 39, "10.\nMärz 1832") in neuged  # *[1] with DATEletter[1], no trailing TAB; across a sentence end
    assert ("Tex", "ANN", 40, 69, "(Zettel an den Brief geklebt)") in neuged
    ex2 = spans_of(corpus, "inception_tsv3_example2")
    assert ("NamedEntity", "PER", 0, 8, "Ms. Haag") in ex2 and ("NamedEntity", "ORG", 191, 211, "BELL INDUSTRIES Inc.") in ex2
    u = unitize(corpus, s)
    assert u.settings.tokenizer == "given"
    assert u.settings.layers == ("LetterEntity", "NamedEntity", "POS", "Span", "Tex")
    empty = sorted(f.doc for f in u.findings if f.code == "empty-segment")
    assert empty == [p + "testSubMultiTokenSpanWithFeatureValue"] * 3 + [p + "testZeroLengthSpansWithFeatureValues"] * 2


def tsv(rows: str, header: str = HEADER) -> str:
    return header + rows


def test_project_export_zip_gives_annotators_and_given_word_units(tmp_path: Path) -> None:
    text = "#Text=Ana saw Bob\n"
    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as z:
        z.writestr("annotation/d1.txt/alice.tsv", tsv(text + "1-1\t0-3\tAna\t*\tPER\t\n1-2\t4-7\tsaw\t_\t_\t\n1-3\t8-11\tBob\t*\tPER\t\n"))
        z.writestr("annotation/d1.txt/bob.tsv", tsv(text + "1-1\t0-3\tAna\t*[1]\tORG[1]\t\n1-2\t4-7\tsaw\t*[1]\tORG[1]\t\n1-3\t8-11\tBob\t_\t_\t\n"))
        z.writestr("curation/d1.txt/CURATION_USER.tsv", tsv(text + "1-1\t0-3\tAna\t*\tPER\t\n"))
    s = Settings(format="webanno-tsv", input={"annotations": export}, base=tmp_path, modes=("labels",), pairs=(("word", "interval"),))
    u = unitize(read_corpus(s), s)
    assert u.annotators == ["alice", "bob"] and u.findings == []
    t = next(u.matrices("word", "interval", "labels"))
    assert t.column("alice").to_pylist() == ["PER", "O", "PER"]
    assert t.column("bob").to_pylist() == ["ORG", "ORG", "O"]
    assert u.corpus.inputs[0].path == "export.zip!annotation/d1.txt/alice.tsv"


def test_bad_tsv_files_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "d1").mkdir(parents=True)
    (root / "d1" / "a.tsv").write_text("#Text=no header\n1-1\t0-2\tno\t_\t_\n", encoding="utf-8")
    (root / "d1" / "b.tsv").write_text("#FORMAT=WebAnno TSV 2\n", encoding="utf-8")
    (root / "d1" / "c.tsv").write_text(tsv("#Text=ok fine\n1-1\t0-2\tok\t*\tX\t\nbroken row\n1-2\t3-7\tfine\t_\t_\t\n"), encoding="utf-8")
    s = Settings(format="webanno-tsv", input={"annotations": root}, base=tmp_path, pairs=(("char", "interval"),))
    corpus = read_corpus(s)
    assert sorted((f.code, f.file, f.record) for f in corpus.findings) == [
        ("file-unreadable", "p/d1/a.tsv", "line 1"),
        ("file-unreadable", "p/d1/b.tsv", "line 1"),
        ("record-malformed", "p/d1/c.tsv", "line 7"),
    ]
    assert [(s.annotator, s.label, s.begin, s.end) for s in corpus.spans] == [("c", "X", 0, 2)]
    assert main(["convert", "--format", "webanno-tsv", "--annotations", str(root), "--out", str(tmp_path / "o"), "--strict", "-q"]) == 3


def test_stacked_items_without_ids_are_separate_annotations(tmp_path: Path) -> None:
    (tmp_path / "d.tsv").write_text(tsv("#Text=Ana Bob\n1-1\t0-3\tAna\t*|*\tPER|NAME\t\n1-2\t4-7\tBob\t_\t_\t\n"), encoding="utf-8")
    s = Settings(format="webanno-tsv", input={"annotations": tmp_path / "d.tsv"}, base=tmp_path, pairs=(("word", "interval"),), modes=("labels",))
    u = unitize(read_corpus(s), s)
    assert [(sp.record, sp.label) for sp in u.corpus.spans] == [("line 6/1", "PER"), ("line 6/2", "NAME")]
    assert next(u.matrices("word", "interval", "labels")).column("annotator").to_pylist() == ["NAME+PER", "O"]
