"""Regression tests for defects found in review: odd input never crashes, settings are checked,
outputs do not depend on the working directory, and a failed commit keeps the previous output."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

from unitize import read_corpus, unitize
from unitize.cli import main
from unitize.config import ConfigError, Settings

TEXT = "aa bb cc dd ee"


def cli(datt, *extra: str, out: str = "out") -> int:
    return main(["convert", "--format", "datt", "--annotations", str(datt.annotations), "--texts", str(datt.texts),
                 "--tokenizer", "whitespace", "--out", str(datt.root / out), "-q", *extra])


def test_drop_when_every_element_is_discontinuous(datt):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Arg1": [(0, 2), (6, 8)]}])
    # every record is dropped: a run that keeps nothing fails and writes nothing
    assert cli(datt, "--discontinuous", "drop", "--layers", "Arg1") == 2
    assert not (datt.root / "out").exists()
    settings = datt.settings(discontinuous="drop", layers=("Arg1",))
    r = unitize(read_corpus(settings), settings)
    assert r.accounting["by_unit"]["char"]["excluded"] == {"discontinuous-dropped": 2}
    assert r.results["char"].segments.num_rows == 0


def test_drop_counts_fragments_with_bad_offsets(datt):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Arg1": [(0, 2), (6, 99)], "Arg2": [(3, 5)]}])
    settings = datt.settings(discontinuous="drop")
    r = unitize(read_corpus(settings), settings)
    assert sorted(f.code for f in r.findings) == ["discontinuous-dropped", "offset-invalid"]
    assert r.accounting["by_unit"]["char"]["excluded"] == {"discontinuous-dropped": 1, "offset-invalid": 1}
    assert r.matrix("ve", "Arg1").to_pydict()["A"] == [0] * 14


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(layers=("Arg1", "Arg1")), "lists a value twice"),
        (dict(layers=tuple(f"L{i}" for i in range(9)), modes=("combined",)), "at most 8 layers"),
        (dict(input={"workers": "4"}), "workers must be a int"),
        (dict(input={"encoding_fallback": "windows-1245"}), "unknown encoding 'windows-1245'"),
        (dict(input={"annotators": ["x", "x"]}), "lists a name twice"),
        (dict(discontinuous="fill"), "discontinuous must be one of"),
    ],
)
def test_settings_are_checked_however_they_are_made(changes, message):
    with pytest.raises(ConfigError, match=message):
        Settings(**changes)


def test_repeated_flag_items_are_usage_errors(datt):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [])
    with pytest.raises(SystemExit) as exc:
        cli(datt, "--layers", "Arg1,Arg1,Arg2")
    assert exc.value.code == 2


def test_unknown_layer_names_the_canonical_spelling(datt, capsys):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Arg1": [(0, 2)], "Supp1": [(3, 5)]}])
    assert cli(datt, "--layers", "Supp1") == 2
    assert "'Supp1' is read as 'Sup1'" in capsys.readouterr().err
    assert cli(datt, "--layers", "Sup1") == 0


def test_nothing_read_is_an_error(datt, capsys):
    assert cli(datt) == 2
    assert "no annotation files were read" in capsys.readouterr().err
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [])
    assert cli(datt, "--annotators", "Z") == 2
    assert "skipped by the annotators/groups selection" in capsys.readouterr().err


def test_non_ascii_digits_in_offsets_are_invalid_not_a_crash(datt):
    datt.text("d1", TEXT)
    path = datt.file("d1", "A", "ve", [{"Arg1": [(0, 2)], "Arg2": [(3, 5)]}])
    path.write_text(path.read_text(encoding="utf-8").replace("<BeginOffset>0<", "<BeginOffset>²<"), encoding="utf-8")
    settings = datt.settings()
    r = unitize(read_corpus(settings), settings)
    assert [f.code for f in r.findings] == ["offset-invalid"]


def test_file_system_oddities_are_findings(datt):
    datt.text("d1", TEXT)
    datt.text("d2", TEXT)
    rel = [{"Arg1": [(0, 2)], "Arg2": [(3, 5)]}]
    for doc in ("d1", "d2", "d3"):
        datt.file(doc, "A", "ve", rel)
    (datt.texts / "d2.txt").unlink()
    (datt.texts / "d2.txt").symlink_to(datt.root / "nowhere.txt")  # dangling link
    (datt.texts / "sub" / "d3.txt").mkdir(parents=True)  # a directory named like a text
    odd = os.fsencode(datt.annotations) + b"/d1_B\xfd_ve.xml"
    with open(odd, "wb") as fh:
        fh.write(b"<Document/>")
    assert cli(datt) == 0
    rows = [json.loads(line) for line in (datt.root / "out" / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    codes = sorted((r["code"], r["doc"]) for r in rows)
    assert ("filename-pattern", None) in codes
    assert ("raw-text-missing", "d2") in codes  # a dangling link is no raw text and ("raw-text-missing", "d3") in codes
    assert any("\\xfd" in (r["file"] or "") for r in rows)


def test_pattern_leaving_a_part_empty_is_a_finding(datt):
    datt.text("d1", TEXT)
    (datt.annotations / "d1__ve.xml").write_text("<Document/>", encoding="utf-8")
    datt.file("d1", "a", "ve", [])
    settings = datt.settings(input={"annotations": datt.annotations, "texts": datt.texts,
                                    "filename_pattern": r"(?:^|/)(?P<doc>[^_/]+)_(?P<annotator>[a-z]*)_(?P<connective>[^/]+)\.xml$"})
    corpus = read_corpus(settings)
    assert [(f.code, f.file) for f in corpus.findings] == [("filename-pattern", "annotations/d1__ve.xml")]
    assert [s.annotator for s in corpus.submissions] == ["a"]


def test_user_errors_exit_2(tmp_path, capsys, datt):
    assert main(["convert", str(tmp_path)]) == 2  # a directory, not a TOML file
    assert "cannot read the configuration file" in capsys.readouterr().err
    bad = tmp_path / "study.toml"
    bad.write_text('[input]\nworkers = "4"\n', encoding="utf-8")
    assert main(["convert", str(bad)]) == 2
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "manifest.json").write_text("{", encoding="utf-8")
    assert main(["info", str(tmp_path / "o")]) == 2
    assert "cannot be read" in capsys.readouterr().err
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [])
    (datt.root / "afile").write_text("x", encoding="utf-8")
    assert cli(datt, out="afile/out") == 2


def test_outputs_do_not_depend_on_workers(datt, monkeypatch):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Arg1": [(0, 2), (6, 8)], "Arg2": [(3, 5)]}])
    monkeypatch.chdir(datt.root)
    assert cli(datt, out="o1") == 0
    assert cli(datt, "--workers", "2", out="o2") == 0
    manifest = json.loads((datt.root / "o1" / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["outputs"]:
        assert (datt.root / "o1" / entry["path"]).read_bytes() == (datt.root / "o2" / entry["path"]).read_bytes(), entry["path"]
    seg = pq.read_table(datt.root / "o1" / "segments" / "char.parquet").to_pydict()
    assert seg["records"][0] == ["annotations/d1_A_ve.xml#1"]


def test_names_are_relative_to_the_working_directory_and_keep_symlinks(datt, monkeypatch, tmp_path):
    """Flag runs name inputs relative to the working directory, never an absolute path cut at its '/',
    never through a resolved symlink (issue: paths in report.jsonl, manifest.json, documents.parquet)."""
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Arg1": [(0, 2)], "Arg2": [(3, 5)], "text": {"Arg1": "xx"}}])
    work = tmp_path / "work"
    work.mkdir()
    (work / "data").symlink_to(datt.root)
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    args = ["convert", "--format", "datt", "--annotations", "data/annotations", "--texts", "data/texts", "--tokenizer", "whitespace", "-q"]
    assert main(args + ["--out", "o"]) == 0
    manifest = json.loads((work / "o" / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(i["path"] for i in manifest["inputs"]) == ["data/annotations/d1_A_ve.xml", "data/texts/d1.txt"]
    docs = pq.read_table(work / "o" / "documents.parquet").to_pydict()
    assert docs["source"] == ["data/texts/d1.txt"]
    report = [json.loads(line) for line in (work / "o" / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    assert report and all(r["file"] in (None, "data/annotations/d1_A_ve.xml") for r in report)
    # inputs outside the working directory are named with '..', not as absolute paths cut at their '/'
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("PWD", str(elsewhere))
    assert main(args[:4] + [str(work / "data" / "annotations"), "--texts", str(work / "data" / "texts"), *args[7:], "--out", "o"]) == 0
    manifest = json.loads((elsewhere / "o" / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(i["path"] for i in manifest["inputs"]) == ["../work/data/annotations/d1_A_ve.xml", "../work/data/texts/d1.txt"]


def test_failed_commit_restores_the_previous_output(datt, monkeypatch):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Arg1": [(0, 2)], "Arg2": [(3, 5)]}])
    assert cli(datt) == 0
    out = datt.root / "out"
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def flaky(new, old):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("unitize.output.swap._exchange", flaky)  # the swap of the new output for the previous one
    assert cli(datt, "--units", "word") == 2
    monkeypatch.undo()
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
