"""CoNLL BIO, doccano and Label Studio: real samples, annotator identity, bad input."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.conftest import CORPORA, needs_shared
from unitize.cli import main
from unitize.config import Settings
from unitize.run import read_corpus, unitize

SAMPLES = CORPORA / "format-samples"


def spans(corpus):
    return [(s.annotator, s.doc_id, s.label, corpus.documents[s.doc_id].text[s.begin : s.end]) for s in corpus.spans if s.valid]


def run(fmt: str, annotations: Path, tmp_path: Path, **input_options):
    s = Settings(format=fmt, input={"annotations": annotations, **input_options}, base=tmp_path, pairs=(("word", "interval"), ("char", "interval")), modes=("labels",))
    return unitize(read_corpus(s), s)


# --- CoNLL BIO ----------------------------------------------------------------


@needs_shared
def test_conll2003_iob1_is_detected_and_text_rebuilt() -> None:
    s = Settings(format="conll-bio", input={"annotations": SAMPLES / "conll-bio" / "dkpro_conll2003_en-orig.conll"}, base=SAMPLES)
    corpus = read_corpus(s)
    assert corpus.documents["doc00001"].text == "U.N. official Ekeus heads for Baghdad ."
    assert spans(corpus)[:3] == [("dkpro_conll2003_en-orig", "doc00001", l, t) for l, t in [("ORG", "U.N."), ("PER", "Ekeus"), ("LOC", "Baghdad")]]
    assert corpus.findings == []


@needs_shared
def test_germeval_token_column_and_second_tag_column() -> None:
    path = SAMPLES / "conll-bio" / "dkpro_germeval2014_test.conll"
    corpus = read_corpus(Settings(format="conll-bio", input={"annotations": path, "token_column": 1, "annotator_columns": {"outer": 2, "inner": 3}}, base=SAMPLES))
    outer = [(l, t) for a, _, l, t in spans(corpus) if a == "outer"]
    assert outer[:3] == [("LOC", "Stuttgart"), ("LOC", "Braunschweig"), ("LOC", "Bonn")]


def test_annotator_files_columns_schemes_and_bad_tags(tmp_path: Path) -> None:
    d = tmp_path / "ann"
    d.mkdir()
    (d / "alice.conll").write_text("-DOCSTART- -X- -X- O\n\nAna B-PER\nsaw O\nBob B-PER\nMolina I-PER\n\n-DOCSTART- -X- -X- O\n\nRome B-LOC\n", encoding="utf-8")
    (d / "bob.conll").write_text("-DOCSTART- -X- -X- O\n\nAna O\nsaw O\nBob O\nMolina I-PER\n\n-DOCSTART- -X- -X- O\n\nRome X-LOC\n", encoding="utf-8")
    u = run("conll-bio", d, tmp_path, scheme="iob2")
    assert sorted((f.code, f.file, f.record) for f in u.findings if f.severity != "info") == [
        ("record-malformed", "ann/bob.conll", "line 10"),
        ("tag-sequence", "ann/bob.conll", "line 6"),
    ]
    assert u.settings.tokenizer == "given" and u.annotators == ["alice", "bob"]
    tables = list(u.matrices("word", "interval", "labels"))
    assert tables[0].column("alice").to_pylist() == ["PER", "O", "PER", "PER", "LOC"]
    assert tables[0].column("bob").to_pylist() == ["O", "O", "O", "PER", "O"]
    chars = next(u.matrices("char", "interval", "labels"))
    assert chars.column("doc_id").to_pylist().count("doc00001") == len("Ana saw Bob Molina")
    (tmp_path / "bio.txt").write_text("Ana B-PER S-PER\nBob I-PER B-PER\nsays O E-PER\n", encoding="utf-8")
    u = run("conll-bio", tmp_path / "bio.txt", tmp_path, annotator_columns={"c1": 1, "c2": 2})
    assert [s for s in spans(u.corpus)] == [("c1", "doc00001", "PER", "Ana Bob"), ("c2", "doc00001", "PER", "Ana"), ("c2", "doc00001", "PER", "Bob says")]
    words = next(u.matrices("word", "interval", "labels"))
    assert words.column("c1").to_pylist() == ["PER", "PER", "O"]
    assert words.column("c2").to_pylist() == ["PER", "PER", "PER"]
    assert u.results["word"].segments.num_rows == 3  # c2's two spans stay two segments
    assert main(["convert", "--format", "conll-bio", "--annotations", str(d), "--out", str(tmp_path / "o"), "--strict", "-q"]) == 3


# --- doccano ------------------------------------------------------------------


@needs_shared
def test_doccano_shapes() -> None:
    corpus = read_corpus(Settings(format="doccano", input={"annotations": SAMPLES / "doccano"}, base=SAMPLES))
    got = spans(corpus)
    assert ("doccano_export_example_sequence_labeling", "EU rejects German call to boycott British lamb.", "ORG") in [
        (a, corpus.documents[d].text, l) for a, d, l, _ in got
    ]
    assert [t for a, _, l, t in got if a == "doccano_export_example_relation_extraction"] == ["Google", "September 4, 1998", "Larry Page", "Sergey Brin"]
    assert [t for a, _, _, t in got if a == "doccano_import_test_example_overlapping"] == ["e", "e"]
    assert [f.code for f in corpus.findings] == ["unknown-element"] * 3  # the text-classification file


def test_doccano_per_user_zip_v1_users_utf16_and_bad_lines(tmp_path: Path) -> None:
    text = "\U0001F600 Ana and Bob"
    z = tmp_path / "export.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("alice.jsonl", json.dumps({"id": 1, "text": text, "label": [[3, 6, "PER"]]}) + "\n{not json\n")
        f.writestr("bob.jsonl", json.dumps({"id": 1, "text": text, "label": [[3, 6, "PER"], [11, 14, "PER"], ["a", 2, "X"]]}) + "\n")
    u = run("doccano", z, tmp_path, offsets="utf16")
    assert spans(u.corpus) == [("alice", "1", "PER", "Ana"), ("bob", "1", "PER", "Ana"), ("bob", "1", "PER", "Bob")]
    assert sorted((f.code, f.file, f.record) for f in u.findings) == [
        ("offset-invalid", "export.zip!bob.jsonl", "line 1/3"),
        ("record-malformed", "export.zip!alice.jsonl", "line 2"),
    ]
    v1 = tmp_path / "v1.jsonl"
    v1.write_text(json.dumps({"id": 7, "text": "Ana Bob", "annotations": [{"label": 3, "start_offset": 0, "end_offset": 3, "user": 1}, {"label": 3, "start_offset": 4, "end_offset": 7, "user": 2}]}) + "\n", encoding="utf-8")
    assert spans(read_corpus(Settings(format="doccano", input={"annotations": v1}, base=tmp_path))) == [("1", "7", "3", "Ana"), ("2", "7", "3", "Bob")]


# --- Label Studio ---------------------------------------------------------------


@needs_shared
def test_label_studio_real_export_matches_region_texts() -> None:
    u = unitize(*(lambda s: (read_corpus(s), s))(Settings(format="label-studio", input={"annotations": SAMPLES / "label-studio"}, base=SAMPLES, pairs=(("char", "interval"),))))
    assert u.annotators == ["2"] and u.settings.layers == ("label",)
    assert len(u.corpus.spans) == 13 and not [f for f in u.findings if f.code == "text-mismatch"]
    person = [s for s in u.corpus.spans if s.label == "Person"][0]
    assert (person.begin, person.end, person.stored_text) == (0, 7, "KAREL I")
    assert len(person.attrs["relations"]) == 3


def test_label_studio_annotators_cancelled_duplicates_and_mismatch(tmp_path: Path) -> None:
    tasks = [
        {
            "id": 5,
            "data": {"text": "Ana met Bob"},
            "annotations": [
                {"completed_by": 1, "result": [{"id": "r1", "type": "labels", "from_name": "ner", "value": {"start": 0, "end": 3, "text": "Ana", "labels": ["PER", "NAME"]}}]},
                {"completed_by": {"id": 2, "email": "b@x.org"}, "result": [{"id": "r2", "type": "labels", "value": {"start": 8, "end": 11, "text": "Bib", "labels": ["PER"]}}]},
                {"completed_by": 3, "was_cancelled": True, "result": []},
                {"completed_by": 1, "result": []},
                {"completed_by": 4, "result": [{"id": "r3", "type": "labels", "value": {"start": None, "end": 2, "labels": ["PER"]}}]},
            ],
        }
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    u = run("label-studio", path, tmp_path, layer="Entity")
    assert u.annotators == ["1", "4", "b@x.org"]
    assert sorted((f.code, f.record) for f in u.findings if f.severity != "info") == [
        ("duplicate-record", "task 1/annotation 4"),
        ("offset-invalid", "task 1/annotation 5/r3"),
        ("text-mismatch", "task 1/annotation 2/r2"),
    ]
    assert [f.record for f in u.findings if f.code == "unknown-element"] == ["task 1/annotation 3"]
    t = next(u.matrices("word", "interval", "labels"))
    assert t.column("1").to_pylist() == ["NAME+PER", "O", "O"]
    assert t.column("b@x.org").to_pylist() == ["O", "O", "PER"]
    path.write_text("[{", encoding="utf-8")
    assert [f.code for f in read_corpus(Settings(format="label-studio", input={"annotations": path}, base=tmp_path)).findings] == ["file-unreadable"]


def test_json_exports_of_odd_shapes_never_crash(tmp_path: Path) -> None:
    odd = [
        {"id": 1, "text": "abc", "label": 5},
        {"id": 2, "text": "abc", "entities": ["x", {"start_offset": True, "end_offset": 2, "label": "L"}], "relations": [{"from_id": [1], "to_id": {}}]},
        {"id": 3, "text": "abc", "annotations": [{"start_offset": 0, "end_offset": 2, "label": ["L"], "user": None}]},
        {"id": 4, "text": 7},
        [1, 2],
    ]
    (tmp_path / "odd.jsonl").write_text("\n".join(json.dumps(o) for o in odd) + "\n", encoding="utf-8")
    corpus = read_corpus(Settings(format="doccano", input={"annotations": tmp_path / "odd.jsonl"}, base=tmp_path))
    assert sorted(f.code for f in corpus.findings) == ["offset-invalid", "record-malformed", "record-malformed", "unknown-element", "unknown-element"]
    assert spans(corpus) == [("odd", "3", "['L']", "ab")]
    tasks = [
        {"id": 1, "data": {"text": "abc"}, "annotations": {"x": 1}},
        {"id": 2, "data": {"text": "abc"}, "annotations": [{"completed_by": 1, "result": {"a": 1}}, {"completed_by": 2, "result": [
            {"id": [1], "type": "relation", "from_id": [1], "to_id": None}, {"id": ["r"], "value": {"start": 0, "end": 1, "labels": ["L"]}}, "junk"]}]},
        {"id": 3, "data": "abc"},
        "junk",
    ]
    (tmp_path / "ls.json").write_text(json.dumps(tasks), encoding="utf-8")
    corpus = read_corpus(Settings(format="label-studio", input={"annotations": tmp_path / "ls.json"}, base=tmp_path))
    assert sorted(f.code for f in corpus.findings) == ["record-malformed"] * 3 + ["unknown-element"]
    assert [f.message for f in corpus.findings if f.code == "unknown-element"] == ["task 2/annotation 2: results of type str are not text spans"]
    assert spans(corpus) == [("2", "2", "L", "a")]
