"""End to end through the CLI: outputs, contracts, accounting, reruns, exit codes."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from unitize.cli import main
from unitize.model.findings import CODES, EXCLUDING
from unitize.schema import contract

TEXT = "aa bb cc dd ee"
SCHEMAS = ROOT / "schemas"


def load_schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


@pytest.fixture
def study(datt):
    """A study with one of each kind of problem, and its TOML."""
    for doc in ("d1", "d2", "d3", "d4"):
        datt.text(doc, TEXT)
    rel = {"Conn": [(3, 5)], "Arg1": [(0, 2)], "Arg2": [(6, 11)]}
    for ann in ("A", "B", "C"):
        datt.file("d1", ann, "ve", [rel, {"Conn": [(9, 11)], "Arg1": [(6, 11)], "Arg2": [(12, 14)]}])
        datt.file("d1", ann, "ama", [{"Conn": [(3, 5)], "Arg1": [(0, 2), (6, 8)], "Arg2": [(4, 14)]}])
    datt.file("d2", "A", "ve", [rel])  # B and C missing
    datt.file("d3", "A", "ve", [rel])
    datt.file("d3", "B", "ve", [rel, rel])  # count mismatch
    datt.file("d3", "C", "ve", [rel])
    datt.file("d5", "A", "ve", [rel])  # no raw text d5.txt
    datt.file("d5", "B", "ve", [rel])
    datt.file("d5", "C", "ve", [rel])
    datt.file("d4", "A", "ve", [{"Conn": [(3, 5)], "Arg1": [(0, 99)], "Arg2": [(6, 11)]}])  # out of range
    datt.file("d4", "B", "ve", [rel])
    datt.file("d4", "C", "ve", [rel])
    (datt.annotations / "d4_C_ama.xml").write_text("<Document>", encoding="utf-8")  # malformed
    toml = datt.root / "study.toml"
    toml.write_text(
        '[input]\nformat = "datt"\nannotations = "annotations"\ntexts = "texts"\n\n'
        '[unitize]\nunits = ["char", "word"]\napproaches = ["interval", "boundary"]\n'
        'modes = ["separate", "combined"]\ntokenizer = "whitespace"\n\n[output]\ndir = "out"\n',
        encoding="utf-8",
    )
    return toml


def convert(*args: str) -> int:
    return main(["convert", *args, "--quiet"])


def test_convert_writes_every_output(study):
    assert convert(str(study)) == 0
    out = study.parent / "out"
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert names == [
        "documents.parquet",
        "manifest.json",
        "report.jsonl",
        "segments/char.parquet",
        "segments/word.parquet",
        "tokens.parquet",
        "units/setting=char-boundary-combined/part-00000.parquet",
        "units/setting=char-boundary/part-00000.parquet",
        "units/setting=char-interval-combined/part-00000.parquet",
        "units/setting=char-interval/part-00000.parquet",
        "units/setting=word-boundary-combined/part-00000.parquet",
        "units/setting=word-boundary/part-00000.parquet",
        "units/setting=word-interval-combined/part-00000.parquet",
        "units/setting=word-interval/part-00000.parquet",
        "universe.parquet",
    ]
    units = pq.read_table(out / "units" / "setting=word-interval")
    # ama: d1 only; ve: d1 only (d2 missing annotators, d3 count mismatch, d4 ok? no: d4 A's Arg1 is
    # out of range but the file still counts, so d4 stays; d5 has no raw text)
    groups = Counter(zip(units["group"].to_pylist(), units["layer"].to_pylist(), units["doc_id"].to_pylist()))
    assert groups == {
        ("ama", "Arg1", "d1"): 5,
        ("ama", "Arg2", "d1"): 5,
        ("ve", "Arg1", "d1"): 5,
        ("ve", "Arg1", "d4"): 5,
        ("ve", "Arg2", "d1"): 5,
        ("ve", "Arg2", "d4"): 5,
    }
    rows = units.to_pydict()
    ama_arg1 = [i for i in range(units.num_rows) if rows["group"][i] == "ama" and rows["layer"][i] == "Arg1"]
    assert [rows["A"][i] for i in ama_arg1] == [1, 1, 1, 0, 0]  # "aa" + "cc" extended over "bb"
    combined = pq.read_table(out / "units" / "setting=word-interval-combined").to_pydict()
    ve_d1 = [i for i, (g, d) in enumerate(zip(combined["group"], combined["doc_id"])) if g == "ve" and d == "d1"]
    assert [combined["B"][i] for i in ve_d1] == [1, 0, 3, 3, 2]
    d4 = [i for i, (g, d) in enumerate(zip(combined["group"], combined["doc_id"])) if g == "ve" and d == "d4"]
    assert [combined["A"][i] for i in d4] == [0, 0, 2, 2, 0]  # A's Arg1 left out (offsets out of range)


def test_outputs_match_their_contracts(study):
    assert convert(str(study)) == 0
    out = study.parent / "out"

    def contract_fields(name: str) -> list[tuple[str, str, bool]]:
        return [(f["name"], f["type"], f["nullable"]) for f in contract(name)["fields"]]

    def arrow_fields(schema) -> list[tuple[str, str, bool]]:
        out = []
        for f in schema:
            t = str(f.type)
            t = {"dictionary<values=string, indices=int32, ordered=0>": "dictionary<string>", "list<element: string>": "list<string>"}.get(t, t)
            out.append((f.name, t, f.nullable))
        return out

    units = pq.read_schema(out / "units" / "setting=char-interval" / "part-00000.parquet")
    assert arrow_fields(units)[:6] == contract_fields("units.arrow.json")
    assert arrow_fields(units)[6:] == [("A", "uint8", True), ("B", "uint8", True), ("C", "uint8", True)]
    meta = json.loads(units.metadata[b"unitize"])
    assert (meta["annotators"], meta["unit"], meta["approach"], meta["value"]) == (["A", "B", "C"], "char", "interval", "binary")
    assert arrow_fields(pq.read_schema(out / "segments" / "word.parquet")) == contract_fields("segments.arrow.json")
    assert arrow_fields(pq.read_schema(out / "documents.parquet")) == contract_fields("documents.arrow.json")

    report_schema = load_schema("report.schema.json")
    rows = [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        jsonschema.validate(row, report_schema)
    assert set(report_schema["properties"]["code"]["enum"]) == set(CODES)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    jsonschema.validate(manifest, load_schema("manifest.schema.json"))
    with open(study, "rb") as fh:
        jsonschema.validate(tomllib.load(fh), load_schema("config.schema.json"))


def test_report_codes_and_accounting_invariant(study):
    assert convert(str(study)) == 0
    out = study.parent / "out"
    rows = [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    assert Counter(r["code"] for r in rows) == {
        "annotator-missing": 1,  # d2/A's file (B and C missing)
        "relation-count-mismatch": 3,  # d3: one row per file
        "raw-text-missing": 3,  # d5: one row per file
        "offset-invalid": 1,  # d4/A Arg1
        "file-unreadable": 1,  # d4_C_ama.xml
        "word-snapped": 3,  # Arg2 4..14 of ama cuts "bb", for each annotator
    }
    missing = next(r for r in rows if r["code"] == "annotator-missing")
    assert missing["file"] == "annotations/d2_A_ve.xml" and "B, C" in missing["message"]

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    acc = manifest["accounting"]
    for unit, figures in acc["by_unit"].items():
        assert figures["records"] == figures["in_segments"] + sum(figures["excluded"].values()), unit
        # every excluded record is named by a report row of its code (whole file when record is null)
        for code, n in figures["excluded"].items():
            assert code in EXCLUDING
            named = [r for r in rows if r["code"] == code and (r["unit"] in (None, unit))]
            assert named, code
    assert acc["by_unit"]["word"]["excluded"] == {
        "annotator-missing": 2,
        "offset-invalid": 1,
        "raw-text-missing": 6,
        "relation-count-mismatch": 8,
    }
    # segments table holds the rest, each record once
    seg = pq.read_table(out / "segments" / "word.parquet").to_pydict()
    assert sum(seg["merged"]) <= acc["by_unit"]["word"]["in_segments"]


def test_rerun_is_byte_identical_and_manifest_hashes_match(study, tmp_path):
    assert convert(str(study)) == 0
    assert convert(str(study), "--out", str(tmp_path / "again")) == 0
    first, second = study.parent / "out", tmp_path / "again"
    manifest = json.loads((first / "manifest.json").read_text(encoding="utf-8"))
    import hashlib

    for entry in manifest["outputs"]:
        a = (first / entry["path"]).read_bytes()
        assert a == (second / entry["path"]).read_bytes(), entry["path"]
        assert hashlib.sha256(a).hexdigest() == entry["sha256"] and len(a) == entry["bytes"]
    again = json.loads((second / "manifest.json").read_text(encoding="utf-8"))
    for key in ("inputs", "outputs", "accounting", "summary", "libraries", "tool"):
        assert manifest[key] == again[key], key
    texts = {i["path"] for i in manifest["inputs"] if i["role"] == "text"}
    assert texts == {"texts/d1.txt", "texts/d2.txt", "texts/d3.txt", "texts/d4.txt"}


def test_strict_mode_exits_3_and_writes_nothing(study, capsys):
    assert convert(str(study), "--strict") == 3
    assert not (study.parent / "out").exists()
    err = capsys.readouterr().err
    assert "nothing written" in err and "file-unreadable" in err


def test_strict_mode_passes_clean_input(datt):
    datt.text("d1", TEXT)
    datt.file("d1", "A", "ve", [{"Arg1": [(0, 2)], "Arg2": [(3, 5)]}])
    assert main(["convert", "--format", "datt", "--annotations", str(datt.annotations), "--texts", str(datt.texts),
                 "--out", str(datt.root / "o"), "--tokenizer", "whitespace", "--strict", "-q"]) == 0
    assert (datt.root / "o" / "manifest.json").is_file()


def test_json_summary(study, capsys):
    assert main(["convert", str(study), "--json", "--units", "word", "--approaches", "boundary"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "ok"
    assert data["unit_rows"] == {"word-boundary": 30, "word-boundary-combined": 15}
    assert data["annotators"] == ["A", "B", "C"] and data["findings"]["error"] == 5


def test_usage_errors_exit_2_with_a_message(tmp_path, capsys, study):
    assert main(["convert", str(tmp_path / "nope.toml")]) == 2
    assert "configuration file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text('[unitize]\nunits = ["chars"]\n', encoding="utf-8")
    assert main(["convert", str(bad)]) == 2
    assert "'chars' is not one of char, word" in capsys.readouterr().err
    bad.write_text('[input]\nformat = "nope"\nannotations = "."\n[output]\ndir = "o"\n', encoding="utf-8")
    assert main(["convert", str(bad)]) == 2
    assert "unknown input format 'nope'" in capsys.readouterr().err
    bad.write_text('[input]\nformat = "datt"\nannotations = "missing"\n[output]\ndir = "o"\n', encoding="utf-8")
    assert main(["convert", str(bad)]) == 2
    assert "annotations directory not found" in capsys.readouterr().err
    assert main(["convert", str(study), "--tokenizer", "spacy:zz", "-q"]) == 2
    assert "spaCy has no language 'zz'" in capsys.readouterr().err
    # an output directory that holds something else is refused
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "thesis.docx").write_text("x", encoding="utf-8")
    assert main(["convert", str(study), "--out", str(tmp_path / "taken"), "-q"]) == 2
    assert "not empty" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["convert", "--units", "syllable"])
    assert exc.value.code == 2


def test_validate_writes_no_matrices(study, capsys, tmp_path):
    report = tmp_path / "findings.jsonl"
    assert main(["validate", str(study), "--report", str(report)]) == 0
    assert not (study.parent / "out").exists()
    assert "5 errors" in capsys.readouterr().out
    assert len(report.read_text(encoding="utf-8").splitlines()) >= 12
    assert main(["validate", str(study), "--strict", "-q"]) == 3


def test_info_summarizes_an_output_directory(study, capsys):
    assert convert(str(study)) == 0
    capsys.readouterr()
    assert main(["info", str(study.parent / "out")]) == 0
    text = capsys.readouterr().out
    assert "units/setting=word-interval/part-00000.parquet" in text and "5 errors" in text
    assert main(["info", str(study.parent)]) == 2


def test_rat_configuration(datt, tmp_path):
    datt.text("00003121", TEXT)
    work = datt.annotations
    (work / "oysa").mkdir()
    rel = [{"Conn": [(3, 5)], "Arg1": [(0, 2)], "Arg2": [(6, 11)]}]
    for ann in ("ASC", "deniz", "idemirsahin"):
        datt.file("00003121", ann, "ama", rel)
        (work / "oysa" / f"00003121_{ann}_oysa.xml").write_text(
            datt.annotations.joinpath(f"00003121_{ann}_ama.xml").read_text(encoding="utf-8"), encoding="utf-8"
        )
    # raw texts in the work path, as RAT expected
    (work / "00003121.txt").write_bytes((datt.texts / "00003121.txt").read_bytes())
    config = tmp_path / "rat.cfg"
    config.write_text(
        f"[Work Path]\n{work}/\n[Connectives]\noysa\n[Annotators]\nASC\ndeniz\n[Out Directory]\n{tmp_path}/ratout/\n"
        "[Data Handle Method] //{1=word, 0=char}-{1=boundary, 0=interval}-\n{0=QTest, 1=FleissKappa, 2=Krippendorff}\n"
        "1-0-2\n0-1-1\n",
        encoding="utf-8",
    )
    assert main(["convert", "--rat-config", str(config), "--tokenizer", "whitespace", "-q"]) == 0
    manifest = json.loads((tmp_path / "ratout" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["pairs"] == [["word", "interval"], ["char", "boundary"]]
    assert manifest["settings"]["statistics"] == ["krippendorff-alpha", "fleiss-kappa"]
    assert manifest["summary"]["annotators"] == ["ASC", "deniz"]
    assert manifest["accounting"]["files"]["read"] == 2
    assert sorted(o["path"] for o in manifest["outputs"] if o["path"].startswith("units")) == [
        "units/setting=char-boundary/part-00000.parquet",
        "units/setting=word-interval/part-00000.parquet",
    ]
    table = pq.read_table(tmp_path / "ratout" / "units" / "setting=word-interval").to_pydict()
    assert set(table["group"]) == {"oysa"}
    bad = tmp_path / "bad.cfg"
    bad.write_text("[Work Path]\n.\n[Data Handle Method]\n3-0-1\n", encoding="utf-8")
    assert main(["convert", "--rat-config", str(bad)]) == 2


def test_internal_errors_are_not_tracebacks(study, capsys, monkeypatch):
    import unitize.run as machinery  # the command imports it when it runs

    def boom(*a, **k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(machinery, "convert", boom)
    assert main(["convert", str(study)]) == 1
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: kaboom" in err and "Traceback" not in err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "convert" in capsys.readouterr().err


def test_console_script_is_installed():
    import shutil

    assert shutil.which("unitize") or Path(__import__("sys").executable).with_name("unitize").exists()


@pytest.mark.parametrize("command", [["formats"], ["convert", "--help"], ["info", "no-such-dir"]])
def test_a_closed_pipe_ends_the_command_quietly(command):
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line (`| head -0`)
    try:
        proc = subprocess.run([sys.executable, "-m", "unitize", *command], stdout=write, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write)
    stderr = proc.stderr.decode()
    if command[0] == "info":  # an error goes to standard error, which is open: it is still shown
        assert proc.returncode == 2 and "no-such-dir does not exist" in stderr
    elif command[-1] == "--help":  # argparse swallows the failed write itself; whichever way, quietly
        assert proc.returncode in (0, 141) and stderr == ""
    else:
        assert (proc.returncode, stderr) == (141, "")


def test_a_folder_without_the_formats_files_names_what_it_holds_and_who_reads_it(capsys):
    tdb = ROOT / "unitize" / "examples" / "tdb-mini"
    assert main(["validate", "--format", "brat", "--annotations", str(tdb)]) == 2
    err = capsys.readouterr().err
    assert f"no annotation files were read from {tdb}" in err
    assert f"brat reads *.ann files; {tdb} holds .xml ×23, .txt ×3, .md ×1, .toml ×1 — formats that read those: datt" in err
