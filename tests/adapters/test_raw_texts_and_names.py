"""Issue 11 ("Nothing lost, nothing silent"), the adapter items: texts as the tools count them, clean group names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.conftest import CORPORA, needs_shared
from unitize.adapters import get_adapter
from unitize.cli import main

TSV_HEAD = "#FORMAT=WebAnno TSV 3.3\n#T_SP=webanno.custom.Span|value\n\n\n"


# --- 6. brat keeps a text's BOM as character 0 ----------------------------------------------------


def test_brat_text_with_a_bom_keeps_it_as_character_0(tmp_path):
    d = tmp_path / "proj" / "A"
    d.mkdir(parents=True)
    (d / "d1.txt").write_bytes(b"\xef\xbb\xbfAna met Bob")
    (d / "d1.ann").write_bytes(b"\xef\xbb\xbfT1\tPER 1 4\tAna\nT2\tPER 9 12\tBob\n")  # the .ann's own BOM is not a character
    corpus = get_adapter("brat").read(annotations=tmp_path / "proj", base=tmp_path)
    doc = corpus.documents["d1"]
    assert (doc.text, doc.bom) == ("\ufeffAna met Bob", True)
    assert [(s.record, s.begin, s.end, doc.text[s.begin : s.end]) for s in corpus.spans] == [("T1", 1, 4, "Ana"), ("T2", 9, 12, "Bob")]
    assert corpus.findings == []


@needs_shared
def test_bratiaa_example_reads_unchanged():
    """The real project has no BOM: keeping one changes nothing there."""
    project = CORPORA / "bratiaa-example" / "example-files" / "example-project"
    corpus = get_adapter("brat").read(annotations=project, base=project)
    assert not any(d.bom for d in corpus.documents.values())
    assert not [f for f in corpus.findings if f.code == "text-mismatch"]


# --- 7. WebAnno / INCEpTION: the text INCEpTION's reader builds ------------------------------------


def _tsv_text(tmp_path: Path, body: str) -> str:
    (tmp_path / "a.tsv").write_text(TSV_HEAD + body, encoding="utf-8")
    corpus = get_adapter("webanno-tsv").read(annotations=tmp_path / "a.tsv", base=tmp_path)
    assert corpus.findings == []
    return corpus.documents["a"].text


def test_webanno_text_ends_with_the_last_sentence_line_break(tmp_path):
    assert _tsv_text(tmp_path, "#Text=Ana met\n1-1\t0-3\tAna\tPER\t\n1-2\t4-7\tmet\t_\t\n") == "Ana met\n"
    # the next sentence starts on the line break that ended the one before it
    two = "#Text=A b\n1-1\t0-1\tA\t_\t\n1-2\t2-3\tb\t_\t\n\n#Text=C\n2-1\t4-5\tC\t_\t\n"
    assert _tsv_text(tmp_path, two) == "A b\nC\n"
    # or after a gap, which is filled with spaces
    gap = "#Text=A b\n1-1\t0-1\tA\t_\t\n1-2\t2-3\tb\t_\t\n\n#Text=C\n2-1\t6-7\tC\t_\t\n"
    assert _tsv_text(tmp_path, gap) == "A b\n  C\n"
    # or right after it (no whitespace between the sentences): the line break is dropped
    tight = "#Text=A.\n1-1\t0-2\tA.\t_\t\n\n#Text=B\n2-1\t2-3\tB\t_\t\n"
    assert _tsv_text(tmp_path, tight) == "A.B\n"


def test_webanno_document_has_as_many_char_units_as_inceptions_text(tmp_path, capsys):
    root = tmp_path / "annotation" / "d1"
    root.mkdir(parents=True)
    (root / "ann.tsv").write_text(TSV_HEAD + "#Text=Ana met\n1-1\t0-3\tAna\tPER\t\n1-2\t4-7\tmet\t_\t\n", encoding="utf-8")
    assert main(["convert", "--format", "webanno-tsv", "--annotations", str(tmp_path / "annotation"), "--units", "char", "--approaches", "interval", "--out", str(tmp_path / "o"), "-q"]) == 0
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["summary"]["unit_rows"] == {"char-interval": 8}  # "Ana met\n"


# --- 8. invisible characters in group names -----------------------------------------------------


@needs_shared
def test_lithuanian_ted_mdb_bom_does_not_make_a_group():
    root = CORPORA / "ted-mdb" / "Lithuanian"
    corpus = get_adapter("pdtb3").read(annotations=root / "ann" / "01", texts=root / "raw" / "01", base=root, group_by="connective")
    assert not [g for g in {s.group for s in corpus.spans} if "\ufeff" in g or g != g.strip()]
    first = [s for s in corpus.spans if s.doc_id == "talk_2150_lt_intra" and s.record == "1"]
    assert sorted((s.layer, s.begin, s.end, s.group) for s in first) == [("Arg1", 37, 118, "kai"), ("Arg2", 5, 35, "kai"), ("Conn", 0, 4, "kai")]
    assert {s.attrs["connective_raw"] for s in first} == {"\ufeffKai"}
    assert corpus.documents["talk_2150_lt_intra"].text[0:4] == "\ufeffKai"  # offsets untouched: the BOM is character 0
    assert sum("connective_raw" in s.attrs for s in corpus.spans) == 3  # only that relation changed
    assert Counter(s.group for s in corpus.spans if s.layer == "Conn")["kai"] == 19


def test_zero_width_characters_and_whitespace_leave_group_names(tmp_path):
    (tmp_path / "ann").mkdir()
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "d1.txt").write_text("\u200bAma\u200d  ve bu.\n", encoding="utf-8")
    fields = [""] * 34
    fields[0], fields[1], fields[14], fields[20] = "Explicit", "0..4", "5..9", "10..12"
    (tmp_path / "ann" / "d1.txt").write_text("|".join(fields) + "\n", encoding="utf-8")
    corpus = get_adapter("pdtb3").read(annotations=tmp_path / "ann", texts=tmp_path / "raw", base=tmp_path, group_by="connective")
    assert {(s.group, s.attrs["connective_raw"]) for s in corpus.spans} == {("ama", "\u200bAma")}
    fields[1] = "0..6"  # "\u200bAma\u200d  " -> trimmed as well
    (tmp_path / "ann" / "d1.txt").write_text("|".join(fields) + "\n", encoding="utf-8")
    corpus = get_adapter("pdtb3").read(annotations=tmp_path / "ann", texts=tmp_path / "raw", base=tmp_path, group_by="connective")
    assert {(s.group, s.attrs["connective_raw"]) for s in corpus.spans} == {("ama", "\u200bAma\u200d ")}


# --- 14. doccano text classification points to --format labels ------------------------------------


@needs_shared
def test_doccano_text_classification_points_to_the_labels_format():
    path = CORPORA / "format-samples" / "doccano" / "doccano_export_example_text_classification.jsonl"
    corpus = get_adapter("doccano").read(annotations=path, base=path.parent)
    assert corpus.spans == []
    hint = (
        "not read as spans; read a text-classification export as flat labels: --format labels --shape per-annotator "
        "--item id --label-columns label (--item text when the records have no id)"
    )
    assert [(f.code, f.severity, f.record, f.action) for f in corpus.findings] == [("unknown-element", "info", f"line {n}", hint) for n in (1, 2, 3)]


def test_the_hint_reads_a_classification_export(tmp_path, capsys):
    (tmp_path / "alice.jsonl").write_text("".join(json.dumps({"id": i, "text": t, "label": [l]}) + "\n" for i, t, l in ((1, "Bad.", "neg"), (2, "Good.", "pos"))), encoding="utf-8")
    args = ["--format", "labels", "--shape", "per-annotator", "--item", "id", "--label-columns", "label"]
    assert main(["convert", *args, "--annotations", str(tmp_path), "--out", str(tmp_path / "o"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["annotators"] == ["alice"]
