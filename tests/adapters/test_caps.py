"""Bounds with findings: a label past the length bound is reported and never a category, a ZIP member
is streamed into its reader and never held whole, and one annotator's bad labels file does not
stop the others (issue 24 item 7)."""

from __future__ import annotations

import json
import random
import tracemalloc
import zipfile
from pathlib import Path

import pyarrow.parquet as pq

from tests.conftest import EXAMPLE
from unitize.adapters import get_adapter
from unitize.cli import main

TSV_HEAD = "#FORMAT=WebAnno TSV 3.3\n#T_SP=webanno.custom.Span|value\n\n\n"
INCEPTION = EXAMPLE.parent / "inception-mini"


def report(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]


def labels_study(root: Path, files: dict[str, str]) -> list[str]:
    (root / "ann").mkdir()
    for name, text in files.items():
        (root / "ann" / name).write_text(text, encoding="utf-8")
    return ["--format", "labels", "--annotations", str(root / "ann"), "--shape", "per-annotator", "--item", "id", "--label-columns", "sent"]


# --- a label longer than the bound ---------------------------------------------------------------


def test_a_huge_label_cell_is_a_finding_and_never_a_category(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # names in the report are relative to the working directory
    huge = "x" * 5_000_000
    flags = labels_study(tmp_path, {"ana.csv": f"id,sent\n1,pos\n2,{huge}\n3,neg\n", "ben.csv": "id,sent\n1,pos\n2,neg\n3,neg\n"})
    out = tmp_path / "out"
    assert main(["convert", *flags, "--out", str(out), "-q"]) == 0
    rows = [r for r in report(out) if r["code"] == "label-too-long"]
    assert [(r["severity"], r["file"], r["record"], r["doc"], r["annotator"]) for r in rows] == [("error", "ann/ana.csv", "3", "2", "ana")]
    assert "a label of 5,000,000 characters (more than max_label_chars = 1,000)" in rows[0]["message"] and len(rows[0]["message"]) < 300
    values = pq.read_table(out / "units").column("ana").to_pylist()
    assert max(len(v or "") for v in values) < 10  # the cell is null, the value is nowhere
    assert sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) < 200_000
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["accounting"]["records"]["labels_too_long"] == 1
    capsys.readouterr()
    assert main(["convert", *flags, "--out", str(tmp_path / "strict"), "--strict", "-q"]) == 3
    assert main(["convert", *flags, "--out", str(tmp_path / "raised"), "--max-label-chars", "6000000", "-q"]) == 0
    assert not [r for r in report(tmp_path / "raised") if r["code"] == "label-too-long"]


def test_a_span_label_longer_than_the_bound_leaves_the_span_out_counted(tmp_path):
    from unitize.config import Settings
    from unitize.run import read_corpus, unitize

    project = tmp_path / "proj" / "A"
    project.mkdir(parents=True)
    (project / "d1.txt").write_text("Ana met Bob", encoding="utf-8")
    (project / "d1.ann").write_text(f"T1\tPER 0 3\tAna\nT2\t{'L' * 1001} 8 11\tBob\n", encoding="utf-8")
    settings = Settings(format="brat", input={"annotations": tmp_path / "proj"}, tokenizer="whitespace", base=tmp_path,
                        pairs=(("char", "interval"),))
    unitized = unitize(read_corpus(settings), settings)
    rows = [f for f in unitized.findings if f.code == "label-too-long"]
    assert [(f.file, f.record, f.severity) for f in rows] == [("proj/A/d1.ann", "T2", "error")]
    assert unitized.accounting["by_unit"]["char"]["excluded"] == {"label-too-long": 1}


# --- one bad labels file of one annotator ----------------------------------------------------------


def test_an_empty_labels_file_of_one_annotator_is_a_finding_and_the_others_are_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    flags = labels_study(tmp_path, {"ana.csv": "id,sent\n1,pos\n2,neg\n", "ben.csv": "", "chen.csv": "id,other\n1,pos\n",
                                    "dana.csv": "id,sent\n1,pos\n2,pos\n"})
    out = tmp_path / "out"
    assert main(["convert", *flags, "--out", str(out), "-q"]) == 0
    unreadable = sorted((r["file"], r["message"]) for r in report(out) if r["code"] == "file-unreadable")
    assert [f for f, _ in unreadable] == ["ann/ben.csv", "ann/chen.csv"]
    assert "an empty file (no header line)" in unreadable[0][1] and "'sent' not found" in unreadable[1][1]
    assert [c for c in pq.read_table(out / "units").column_names if c in ("ana", "ben", "chen", "dana")] == ["ana", "dana"]
    # every file without the mapped columns: the mapping is wrong, a usage error as before
    (tmp_path / "wrong").mkdir()
    flags = labels_study(tmp_path / "wrong", {"a.csv": "id,other\n1,p\n", "b.csv": "id,other\n1,q\n"})
    assert main(["convert", *flags, "--out", str(tmp_path / "none"), "-q"]) == 2


# --- ZIP members streamed -------------------------------------------------------------------------


def test_a_large_zip_member_is_streamed_into_the_reader(tmp_path):
    rnd = random.Random(0)
    sentence = (INCEPTION / "annotation" / "concert.txt" / "ana.tsv").read_text(encoding="utf-8")
    padding = "".join("#" + "".join(rnd.choice("abcdefghij") for _ in range(98)) + "\n" for _ in range(2000))
    big = sentence + padding * 200  # 40 MB of comment lines after a real file: its spans must still be read
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("annotation/concert.txt/ana.tsv", big)
        z.writestr("annotation/concert.txt/ben.tsv", sentence)
    tracemalloc.start()
    try:
        corpus = get_adapter("webanno-tsv").read(annotations=archive, base=tmp_path, max_unzipped_mb=200)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.4 * len(big), f"peak {peak / 1e6:.1f} MB for a member of {len(big) / 1e6:.1f} MB"  # it was 6.6 times the member
    assert not corpus.findings
    assert sorted({s.annotator for s in corpus.spans}) == ["ana", "ben"]
    sizes = {i.path: i.size for i in corpus.inputs}
    assert sizes["export.zip!annotation/concert.txt/ana.tsv"] == len(big.encode("utf-8"))


def test_a_damaged_webanno_member_is_reported_and_the_others_read(tmp_path):
    body = TSV_HEAD + "#Text=Ana\n1-1\t0-3\tAna\tPER\t\n"
    archive = tmp_path / "x.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("annotation/d1/a.tsv", body + "".join(f"#comment {i}\n" for i in range(2000)))
        z.writestr("annotation/d1/b.tsv", body)
    raw = bytearray(archive.read_bytes())
    raw[80] ^= 0xFF  # inside a's compressed data
    archive.write_bytes(bytes(raw))
    corpus = get_adapter("webanno-tsv").read(annotations=archive, base=tmp_path)
    assert [(f.code, f.file) for f in corpus.findings] == [("file-unreadable", "x.zip!annotation/d1/a.tsv")]
    assert corpus.findings[0].message.startswith("damaged archive member: ")
    assert [s.annotator for s in corpus.spans] == ["b"] and [i.path for i in corpus.inputs] == ["x.zip!annotation/d1/b.tsv"]


def test_a_tsv_that_does_not_decode_is_an_encoding_error_and_still_an_input(tmp_path):
    (tmp_path / "annotation" / "d1").mkdir(parents=True)
    (tmp_path / "annotation" / "d1" / "a.tsv").write_bytes((TSV_HEAD + "#Text=Ana\n1-1\t0-3\tAna\tPER\t\n").encode() + b"\xff\xfe bad\n")
    corpus = get_adapter("webanno-tsv").read(annotations=tmp_path, base=tmp_path)
    assert [(f.code, f.file, f.message) for f in corpus.findings] == [("encoding-error", "annotation/d1/a.tsv", "file not decodable as utf-8")]
    assert [i.path for i in corpus.inputs] == ["annotation/d1/a.tsv"] and not corpus.spans
