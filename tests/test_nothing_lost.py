"""Nothing lost, nothing silent: exports never overwrite or come out empty, runs that keep nothing fail."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import CORPORA, needs_shared
from unitize.cli import main
from unitize.errors import DataError
from unitize.export import FileNames, export, safe_name

TURKISH = CORPORA / "ted-mdb" / "Turkish"


def index_rows(dest: Path) -> list[dict[str, str]]:
    with (dest / "index.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def files_on_disk(dest: Path) -> list[str]:
    return sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file() and p.name != "index.csv")


def test_safe_names_are_injective() -> None:
    names = ["ancak", "ancak,", ",", ".", "hem ... hem", "hem_..._hem", "_", ""]
    assert len({safe_name(n) for n in names}) == len(names)
    assert [safe_name(n) for n in names[:5]] == ["ancak", "ancak,", ",", "%2E", "hem ... hem"]
    assert safe_name("") == "%" and safe_name("../x") == "%2E.%2Fx" and safe_name("a" * 300).startswith("a" * 83 + "~")
    taken = FileNames()
    # parts joined with "_" and names equal but for case meet; each key still gets its own file
    a = taken.take(("s", "a_b", "c"), "s", "a_b_c", ".csv")
    b = taken.take(("s", "a", "b_c"), "s", "a_b_c", ".csv")
    c = taken.take(("s", "Ama", "x"), "s", "Ama_x", ".csv")
    d = taken.take(("s", "ama", "x"), "s", "ama_x", ".csv")
    assert len({a.casefold(), b.casefold(), c.casefold(), d.casefold()}) == 4
    assert taken.take(("s", "a_b", "c"), "s", "a_b_c", ".csv") == a  # stable for the same key


@pytest.fixture(scope="module")
def turkish(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not TURKISH.is_dir():
        pytest.skip("../shared/corpora/ted-mdb is not beside the repository")
    out = tmp_path_factory.mktemp("tr") / "tr-out"
    args = ["convert", "--format", "pdtb3", "--annotations", str(TURKISH / "ann" / "01"), "--texts", str(TURKISH / "raw" / "01")]
    args += ["--group-by", "connective", "--tokenizer", "spacy:tr", "--units", "word", "--approaches", "interval", "--out", str(out), "-q"]
    assert main(args) == 0
    return out


@needs_shared
@pytest.mark.parametrize("fmt", ["rat", "reliability-csv", "fleiss-table", "long-csv", "nltk"])
def test_every_exported_file_is_its_own_row_of_the_index(turkish: Path, fmt: str) -> None:
    assert main(["export", str(turkish), "--to", fmt]) == 0
    dest = turkish / "exports" / fmt
    rows = index_rows(dest)
    assert sorted(r["file"] for r in rows) == files_on_disk(dest)
    assert len({r["file"] for r in rows}) == len(rows)
    assert len({(r["setting"], r["group"], r["layer"]) for r in rows}) == len(rows)
    if fmt in ("rat", "reliability-csv"):
        groups = {r["group"] for r in rows}
        assert {"ancak", "ancak,"} <= groups  # real connectives of TED-MDB Turkish that used to share a file


@needs_shared
def test_ancak_and_ancak_comma_keep_their_own_units(turkish: Path) -> None:
    dest, files = export(turkish, "rat", settings=["word-interval"], groups=["ancak", "ancak,"])
    mine = {(f.group, f.layer): f for f in files}
    t = pq.read_table(turkish / "units" / "setting=word-interval", filters=[("group", "in", ["ancak", "ancak,"])])
    for group in ("ancak", "ancak,"):
        units = sum(1 for g, layer in zip(t.column("group").to_pylist(), t.column("layer").to_pylist()) if g == group and layer == "Arg1")
        exported = (dest / mine[(group, "Arg1")].path).read_text(encoding="utf-8").splitlines()
        assert units > 0 and all(len(line.split()) == units for line in exported)
    assert mine[("ancak", "Arg1")].path != mine[("ancak,", "Arg1")].path


@needs_shared
def test_a_second_export_leaves_exactly_its_own_files(turkish: Path) -> None:
    export(turkish, "reliability-csv")
    dest, files = export(turkish, "reliability-csv", groups=["ama"])
    assert files_on_disk(dest) == sorted(f.path for f in files)


def test_an_unknown_group_or_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    from tests.conftest import EXAMPLE

    out = tmp_path / "o"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "-q"]) == 0
    with pytest.raises(DataError, match="no group 'nope'.*groups are: ama"):
        export(out, "rat", groups=["nope"])
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["export", str(out), "--to", "rat", "--dest", str(mine)]) == 2
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"


def brat_project(root: Path, labels_by_annotator: dict[str, list[tuple[str, int, int]]], text: str) -> Path:
    for annotator, spans in labels_by_annotator.items():
        (root / annotator).mkdir(parents=True)
        (root / annotator / "d1.txt").write_text(text, encoding="utf-8")
        lines = [f"T{i}\t{label} {b} {e}\t{text[b:e]}" for i, (label, b, e) in enumerate(spans, 1)]
        (root / annotator / "d1.ann").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("fmt", ["long-csv", "nltk", "reliability-csv"])
def test_punctuation_layers_get_their_own_files(tmp_path: Path, fmt: str) -> None:
    text = "Yes , no . Maybe ."
    root = brat_project(tmp_path / "p", {"a": [(",", 4, 5), (".", 9, 10)], "b": [(",", 4, 5), (".", 17, 18)]}, text)
    out = tmp_path / "o"
    assert main(["convert", "--format", "brat", "--annotations", str(root), "--layers-from", "label", "--units", "char", "--approaches", "interval", "--out", str(out), "-q"]) == 0
    assert main(["export", str(out), "--to", fmt]) == 0
    dest = out / "exports" / fmt
    rows = index_rows(dest)
    assert sorted(r["layer"] for r in rows) == [",", "."]
    assert sorted(r["file"] for r in rows) == files_on_disk(dest) and len({r["file"] for r in rows}) == 2
    if fmt == "long-csv":
        by_layer = {r["layer"]: list(csv.reader((dest / r["file"]).open(encoding="utf-8"))) for r in rows}
        assert ["a", "all/d1/4", "1"] in by_layer[","] and ["b", "all/d1/17", "1"] in by_layer["."]


# --- crowd data: ToxicSpans ---------------------------------------------------------

TOXIC = CORPORA / "toxic-spans"


@pytest.fixture(scope="module")
def toxic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not TOXIC.is_dir():
        pytest.skip("../shared/corpora/toxic-spans is not beside the repository")
    out = tmp_path_factory.mktemp("toxic") / "out"
    study = out.parent / "toxic.toml"
    study.write_text(
        f'[input]\nformat = "span-table"\nannotations = "{TOXIC}/spans.csv"\ntexts = "{TOXIC}/comments.csv"\n'
        f'roster = "{TOXIC}/annotations.csv"\n'
        'columns = {doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", label = "type", begin = "start", end = "end"}\n'
        '[unitize]\nunits = ["word"]\napproaches = ["interval"]\ntokenizer = "whitespace"\n',
        encoding="utf-8",
    )
    assert main(["convert", str(study), "--out", str(out), "-q"]) == 0
    return out


@needs_shared
@pytest.mark.parametrize("fmt", ["long-csv", "nltk"])
def test_crowd_long_exports_hold_every_row(toxic: Path, fmt: str) -> None:
    assert main(["export", str(toxic), "--to", fmt]) == 0
    dest = toxic / "exports" / fmt
    (row,) = index_rows(dest)
    stored = pq.read_table(toxic / "units" / "setting=word-interval", columns=["value"]).num_rows
    with (dest / row["file"]).open(encoding="utf-8") as fh:
        lines = sum(1 for _ in fh)
    assert int(row["rows"]) == stored == lines - (fmt == "long-csv") > 2_000_000


@needs_shared
@pytest.mark.parametrize("fmt", ["rat", "reliability-csv"])
def test_crowd_data_is_refused_by_per_annotator_formats(toxic: Path, fmt: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["export", str(toxic), "--to", fmt]) == 2
    err = capsys.readouterr().err
    assert "crowd data (3,579 annotators" in err and "long-csv or nltk" in err
    assert not (toxic / "exports" / fmt).exists()


@needs_shared
def test_crowd_fleiss_table_holds_the_counts(toxic: Path) -> None:
    dest, files = export(toxic, "fleiss-table")
    (f,) = files
    assert f.note.startswith("raters per unit: 3 (crowd")
    with (dest / f.path).open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["item", "0", "1"] and len(rows) - 1 == f.rows > 100_000
    assert all(int(r[1]) + int(r[2]) == 3 for r in rows[1:1000])


# --- crowd data told by the unit universe: crowd-mini, its threshold lowered ----------------------


@pytest.fixture(scope="module")
def crowd_mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """crowd-mini converted (long layout; 5 comments, 248 characters and 58 words, workers w01–w04, three a comment)."""
    from tests.conftest import EXAMPLE

    out = tmp_path_factory.mktemp("crowd-mini") / "out"
    assert main(["convert", str(EXAMPLE.parent / "crowd-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    return out


@pytest.mark.parametrize("cells", [0, 39, 40, 168, 169, 231, 232, 991, 992])
def test_the_universe_tells_crowd_data_as_the_matrices_do(crowd_mini: Path, cells: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long matrix is counted per unit above DENSE_CELLS cells: crowd-mini's word matrices hold 58 words × 4
    workers = 232, its character matrices 248 × 4 = 992; w01 alone has comments 1001, 1002 and 1004, 40 words and
    169 characters. The universe says which before a row is read, exactly as the matrices do."""
    from unitize.dataset import OutputData
    from unitize.layouts import long as long_layout

    monkeypatch.setattr(long_layout, "DENSE_CELLS", cells)
    for selected, annotators, cells_of in ((None, 4, {"char": 992, "word": 232}), (["w01"], 1, {"char": 169, "word": 40})):
        data = OutputData(crowd_mini, selected)
        for setting in data.settings:
            expected = {"all": annotators} if cells < cells_of[setting.unit or ""] else {}
            assert data.crowd_groups(setting) == expected, (selected, setting.name)
            assert {m.group: m.crowd for m in data.matrices(setting) if m.crowd is not None} == expected, (selected, setting.name)


@pytest.mark.parametrize(("fmt", "name"), [("rat", "RAT .dat"), ("reliability-csv", "reliability-csv")])
def test_crowd_data_is_refused_before_a_matrix_is_read(crowd_mini: Path, fmt: str, name: str, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture) -> None:
    """The per-annotator formats refuse crowd data from the universe, reading no row of a unit matrix, with the
    message the matrices give when the universe says nothing (item data, format 1)."""
    from unitize.dataset import OutputData
    from unitize.dataset.parts import PartFiles
    from unitize.layouts import long as long_layout

    monkeypatch.setattr(long_layout, "DENSE_CELLS", 100)
    reads: list[Path] = []
    read = PartFiles.read

    def spy(self: PartFiles, k: int, *args: object, **kw: object) -> object:
        reads.append(self.paths[k])
        return read(self, k, *args, **kw)

    monkeypatch.setattr(PartFiles, "read", spy)
    message = f"char-boundary: crowd data (4 annotators, a few per unit) has no {name} form (one line per annotator over every unit)"
    assert main(["export", str(crowd_mini), "--to", fmt]) == 2
    assert message in capsys.readouterr().err
    assert reads == [] and not (crowd_mini / "exports" / fmt).exists()
    monkeypatch.setattr(OutputData, "crowd_groups", lambda self, setting, groups=None: {})  # the universe silent
    assert main(["export", str(crowd_mini), "--to", fmt]) == 2
    assert message in capsys.readouterr().err
    assert reads and all("setting=char-boundary" in str(p) for p in reads) and not (crowd_mini / "exports" / fmt).exists()


def test_manifest_paths_are_relative(tmp_path: Path) -> None:
    from tests.conftest import EXAMPLE

    out = tmp_path / "o"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "-q"]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert all(not i["path"].startswith("/") for i in manifest["inputs"])


# --- runs that keep nothing fail; the excluded share is on screen ---------------------


def _fails_with(args: list[str], out: Path, capsys: pytest.CaptureFixture, *expected: str) -> str:
    assert main(args + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no span record entered the segments" in err and "nothing was written" in err
    for text in expected:
        assert text in err, err
    assert not out.exists()
    return err


@needs_shared
def test_a_brat_project_read_as_pdtb3_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    project = CORPORA / "bratiaa-example" / "example-files" / "example-project"
    _fails_with(["convert", "--format", "pdtb3", "--annotations", str(project), "--texts", str(project)], tmp_path / "o", capsys, "record-malformed ×")


def test_a_misspelled_annotator_fails_and_names_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tests.conftest import EXAMPLE

    err = _fails_with(["convert", str(EXAMPLE / "study.toml"), "--annotators", "ayse,burakk"], tmp_path / "o", capsys)
    assert "annotator(s) burakk have no files; the annotators in the input are ayse, burak, cem (did you mean burakk → burak?)" in err
    assert "annotator-missing ×" in err


def test_annotations_and_texts_swapped_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tests.conftest import EXAMPLE

    args = ["convert", "--format", "datt", "--annotations", str(EXAMPLE / "texts"), "--texts", str(EXAMPLE / "annotations")]
    assert main(args + ["--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


@needs_shared
def test_a_conll16_system_output_without_parses_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import shutil

    conll = CORPORA / "format-samples" / "conll2016-relations-json"
    shutil.copytree(conll / "conll16st-en-01-12-16-trial" / "raw", tmp_path / "raw")
    shutil.copy(conll / "output.json_system-output-example", tmp_path / "output.json")
    args = ["convert", "--format", "conll16", "--annotations", str(tmp_path / "output.json"), "--texts", str(tmp_path / "raw")]
    _fails_with(args, tmp_path / "o", capsys, "token-offsets-missing ×")


@needs_shared
def test_the_excluded_share_is_on_screen(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # two annotators of TED-MDB English; b lacks every 20th relation (5 %): RAT's count rule
    # excludes those documents from their connectives' groups
    english = CORPORA / "ted-mdb" / "English"
    import shutil

    shutil.copytree(english / "ann" / "01", tmp_path / "a")
    (tmp_path / "b").mkdir()
    for f in sorted((tmp_path / "a").iterdir()):
        lines = f.read_bytes().splitlines(keepends=True)
        (tmp_path / "b" / f.name).write_bytes(b"".join(line for i, line in enumerate(lines) if i % 20 != 19))
    args = ["convert", "--format", "pdtb3", "--annotators", f"a={tmp_path / 'a'},b={tmp_path / 'b'}", "--texts", str(english / "raw" / "01")]
    args += ["--group-by", "connective", "--units", "char", "--approaches", "interval", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    captured = capsys.readouterr()
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text(encoding="utf-8"))
    acc = manifest["accounting"]["by_unit"]["char"]
    excluded = acc["excluded"]["relation-count-mismatch"]
    share = 100 * excluded / acc["records"]
    assert share > 10
    assert f"records (char units): {acc['records']:,} in the selected layers" in captured.out
    assert f"relation-count-mismatch {excluded:,} ({share:.1f} %)" in captured.out
    assert f"warning: {share:.1f} % of the records (char units) were excluded, most by relation-count-mismatch" in captured.err
    assert "--keep-mismatched" in captured.err


@needs_shared
def test_convert_format_that_writes_no_span_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # brat entities have no DATT element: every span would be left out, each reported (one not-convertible per record)
    project = CORPORA / "bratiaa-example" / "example-files" / "example-project"
    args = ["convert-format", "--format", "brat", "--annotations", str(project), "--to", "datt", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "no span could be written as datt (1,567 read); nothing was written" in err and "not-convertible ×1,567" in err
    assert not (tmp_path / "o" / "manifest.json").exists()


def test_a_wide_matrix_too_large_for_memory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    # ToxicSpans asked for --layout wide took 21.5 GB and was killed; refuse it before building anything
    from tests.conftest import EXAMPLE
    from unitize import layouts

    monkeypatch.setattr(layouts, "MAX_WIDE_CELLS", 100)
    assert main(["convert", str(EXAMPLE / "study.toml"), "--layout", "wide", "--units", "char", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "would hold" in err and "annotators), more than 100; use layout \"long\"" in err
    assert not (tmp_path / "o").exists()


@needs_shared
def test_annotator_names_in_the_wrong_case_are_named_with_the_right_ones(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    project = CORPORA / "bratiaa-example" / "example-files" / "example-project"
    assert main(["convert", "--format", "brat", "--annotations", str(project), "--annotators", "lisa,maria", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "the annotators in the input are Lisa, Maria, Max, Peter (did you mean lisa → Lisa?, maria → Maria?)" in err


def test_agree_never_writes_into_a_folder_of_other_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tests.conftest import EXAMPLE

    out = tmp_path / "o"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "-q"]) == 0
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "summary.md").write_text("my own summary", encoding="utf-8")
    assert main(["agree", str(out), "--dest", str(paper), "-q"]) == 2
    assert "not an earlier agreement folder" in capsys.readouterr().err
    assert (paper / "summary.md").read_text(encoding="utf-8") == "my own summary"
    assert main(["agree", str(out), "--dest", str(tmp_path / "new"), "-q"]) == 0
    assert main(["agree", str(out), "--dest", str(tmp_path / "new"), "-q"]) == 0  # its own earlier results are replaced
