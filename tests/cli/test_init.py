"""``unitize init``: every registered format, from its shipped or sample data, to a study that converts unchanged."""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Callable
from importlib.metadata import EntryPoint
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import CORPORA, ROOT
from unitize.adapters import Adapter, available
from unitize.cli import main
from unitize.config import load_toml
from unitize.model import Corpus, Document, Span, Submission
from unitize.run.conversion import convert_format

EXAMPLES = ROOT / "unitize" / "examples"
SAMPLES = CORPORA / "format-samples"


def pdtb2_sample(tmp: Path) -> Path:
    """The PDTB-2 sample line over a stand-in raw text (the WSJ text is not public) with the stored texts at their offsets."""
    line = (SAMPLES / "pdtb2-pipe" / "example_from_linziheng_pdtb-parser_README.pipe").read_text(encoding="latin-1")
    fields = line.rstrip("\n").split("|")
    raw = [" "] * 360
    for span, stored in ((fields[3], fields[5]), (fields[22], fields[24]), (fields[32], fields[34])):
        b = int(span.split("..")[0])
        raw[b : b + len(stored)] = list(stored)
    root = tmp / "pdtb2"
    (root / "annotations").mkdir(parents=True)
    (root / "texts").mkdir()
    (root / "annotations" / "wsj_1870.pipe").write_text(line, encoding="latin-1")
    (root / "texts" / "wsj_1870").write_text("".join(raw), encoding="latin-1")
    return root


def written_as(example: str, to: str) -> Callable[[Path], Path]:
    """A bundled example written as format ``to`` by its writer (the formats no example ships: spacy, huggingface)."""

    def folder(tmp: Path) -> Path:
        convert_format(load_toml(EXAMPLES / example / "study.toml"), to, tmp / to)
        (tmp / to / "study.toml").unlink()  # init writes its own
        return tmp / to

    return folder


#: format -> (data folder or a function of tmp_path giving it, extra init flags, needs ../shared)
CASES = {
    "datt": (EXAMPLES / "tdb-mini", ["--tokenizer", "whitespace"], False),
    "labels": (EXAMPLES / "labels-mini", [], False),
    "brat": (EXAMPLES / "brat-mini", [], False),
    "webanno-tsv": (EXAMPLES / "inception-mini", [], False),
    "span-table": (EXAMPLES / "crowd-mini", [], False),
    "conll-bio": (EXAMPLES / "bio-mini", [], False),
    "doccano": (SAMPLES / "doccano", ["--annotations", str(SAMPLES / "doccano" / "doccano_export_example_sequence_labeling.jsonl")], True),
    "label-studio": (SAMPLES / "label-studio", [], True),
    "quotes": (EXAMPLES / "models-mini", ["--annotations", str(EXAMPLES / "models-mini" / "annotations"),
                                          "--texts", str(EXAMPLES / "models-mini" / "texts"), "--tokenizer", "regex"], False),
    "pdtb3": (
        SAMPLES / "pdtb3-pipe-chinese-ted",
        ["--annotations", str(SAMPLES / "pdtb3-pipe-chinese-ted" / "Ann16"), "--texts", str(SAMPLES / "pdtb3-pipe-chinese-ted" / "Raw16")],
        True,
    ),
    "pdtb2": (pdtb2_sample, [], True),
    "conll16": (SAMPLES / "conll2016-relations-json" / "conll16st-en-01-12-16-trial", [], True),
    "spacy": (written_as("brat-mini", "spacy"), [], False),
    "huggingface": (written_as("inception-mini", "huggingface"), [], False),
    "factgenie": (written_as("models-mini", "factgenie"), ["--tokenizer", "whitespace"], False),  # campaigns/ and outputs/ found
    "xmi": (written_as("inception-mini", "xmi"), [], False),
}


def units_rows(out: Path) -> int:
    return sum(pq.read_metadata(p).num_rows for p in (out / "units").rglob("*.parquet"))


def test_every_registered_format_has_a_case():
    assert set(available()) <= set(CASES) | {"fake"}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_init_then_convert_unchanged(fmt, tmp_path, capsys):
    folder, extra, shared = CASES[fmt]
    if shared and not CORPORA.is_dir():
        pytest.skip("../shared/corpora is not beside the repository")
    if callable(folder):
        folder = folder(tmp_path)
    study = tmp_path / "study.toml"
    assert main(["init", "--format", fmt, str(folder), "--out-file", str(study), *extra]) == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    assert "Next: unitize convert" in said
    text = study.read_text(encoding="utf-8")
    tomllib.loads(text)  # valid TOML
    assert f'format = "{fmt}"' in text and "# Found:" in text
    out = tmp_path / "out"
    assert main(["convert", str(study), "--out", str(out), "-q"]) == 0, capsys.readouterr().err
    assert units_rows(out) > 0


def test_init_writes_into_the_folder_and_refuses_to_overwrite(tmp_path, capsys):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "brat-mini" / "annotations", project)
    assert main(["init", "--format", "brat", str(project), "--tokenizer", "regex", "--layer", "NER", "--modes", "separate,labels"]) == 0
    study = project / "study.toml"
    data = tomllib.loads(study.read_text(encoding="utf-8"))
    assert data["input"]["annotations"] == "." and data["input"]["layer"] == "NER"
    assert data["unitize"] == {"tokenizer": "regex", "modes": ["separate", "labels"]}
    # the output goes beside the project, never inside the folder the format reads
    assert data["output"]["dir"] == "../project-out"
    said = capsys.readouterr().out
    assert "3 annotators (ana, ben, chen), 3 documents" in said and "Next: unitize convert" in said
    assert main(["init", "--format", "brat", str(project)]) == 2
    assert "exists; give --force" in capsys.readouterr().err
    assert main(["init", "--format", "brat", str(project), "--force"]) == 0
    assert main(["convert", str(study), "-q"]) == 0
    assert units_rows(tmp_path / "project-out") > 0


def test_init_guesses_a_crowd_table(tmp_path, capsys):
    """ToxicSpans-shaped tables in a folder: which file is which and the column of every role."""
    for name in ("comments.csv", "annotations.csv", "spans.csv"):
        shutil.copy(EXAMPLES / "crowd-mini" / name, tmp_path / name)
    assert main(["init", "--format", "span-table", str(tmp_path)]) == 0
    data = tomllib.loads((tmp_path / "study.toml").read_text(encoding="utf-8"))
    assert data["input"] | {} == {
        "format": "span-table",
        "annotations": "spans.csv",
        "texts": "comments.csv",
        "roster": "annotations.csv",
        "columns": {"doc": "comment_id", "text": "comment_text", "annotator": "worker", "key": "annotation", "label": "type", "begin": "start"},
    }
    # four workers, three per comment: RAT's missing-annotator rule would leave out every comment; the comments are English
    assert data["unitize"] == {"keep_missing": True, "modes": ["separate", "labels"], "tokenizer": "spacy:en"}
    assert main(["convert", str(tmp_path / "study.toml"), "-q"]) == 0
    assert units_rows(tmp_path / "out") > 0


def test_init_on_data_it_cannot_read_writes_the_study_and_says_why(tmp_path, capsys):
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    assert main(["init", "--format", "span-table", str(tmp_path), "--annotations", str(tmp_path / "notes.csv")]) == 2
    err = capsys.readouterr().err
    assert "could not be read as span-table" in err and "unitize validate" in err
    assert "# Found: could not read the data" in (tmp_path / "study.toml").read_text(encoding="utf-8")


def test_init_rewrites_its_own_unedited_draft_but_not_an_edited_one(tmp_path, capsys):
    """A study written from data init could not read is a draft: a second try needs no --force, unless it was edited."""
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    for name in ("comments.csv", "annotations.csv", "spans.csv"):
        shutil.copy(EXAMPLES / "crowd-mini" / name, tmp_path / name)
    study = tmp_path / "study.toml"
    assert main(["init", "--format", "span-table", str(tmp_path), "--annotations", str(tmp_path / "notes.csv")]) == 2
    assert "a draft: the data could not be read" in study.read_text(encoding="utf-8")
    assert main(["init", "--format", "span-table", str(tmp_path), "--annotations", str(tmp_path / "notes.csv")]) == 2
    capsys.readouterr()
    study.write_text(study.read_text(encoding="utf-8").replace("[output]", "# my note\n[output]"), encoding="utf-8")
    assert main(["init", "--format", "span-table", str(tmp_path)]) == 2
    assert "exists; give --force" in capsys.readouterr().err
    assert "# my note" in study.read_text(encoding="utf-8")
    study.unlink()
    assert main(["init", "--format", "span-table", str(tmp_path), "--annotations", str(tmp_path / "notes.csv")]) == 2
    assert main(["init", "--format", "span-table", str(tmp_path)]) == 0  # the draft is replaced by a working study
    text = study.read_text(encoding="utf-8")
    assert "a draft" not in text and "spans.csv" in text


def test_init_refuses_a_study_the_format_would_read(tmp_path, capsys):
    bio = tmp_path / "bio"
    shutil.copytree(EXAMPLES / "bio-mini" / "annotations", bio)
    assert main(["init", "--format", "conll-bio", str(bio)]) == 2
    assert "would read study.toml as annotations" in capsys.readouterr().err
    assert not (bio / "study.toml").exists()
    assert main(["init", "--format", "conll-bio", str(bio), "--out-file", str(tmp_path / "study.toml")]) == 0


def test_init_needs_a_format(capsys):
    assert main(["init"]) == 2
    assert "init needs --format; one of: brat" in capsys.readouterr().err


# --- a third-party adapter that declares its options the old way (help strings) -------------


def read_fake(*, annotations: Path, flavour: str | None = None, base: Path, progress=None) -> Corpus:
    """One text ``text.txt`` and one ``<annotator>.spans`` file of ``begin end label`` lines per annotator."""
    corpus = Corpus(format="fake")
    text = (annotations / "text.txt").read_text(encoding="utf-8")
    corpus.documents["d"] = Document("d", text, source="text.txt")
    for path in sorted(annotations.glob("*.spans")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for n, line in enumerate(x for x in lines if x.strip()):
            b, e, label = line.split()
            corpus.spans.append(Span(path.stem, "d", "all", f"{n}", flavour or "span", 0, int(b), int(e), label=label, source=path.name))
        corpus.submissions.append(Submission(path.name, path.stem, "d", "all", len(lines)))
    return corpus


#: a plugin's legacy ``defaults`` dict (what the span-tool formats' traits were before they were typed)
LEGACY_DEFAULTS = {"group_by": "none", "default_layers": "found", "count_rule": False}
FAKE = Adapter("fake", "a plugin written before options had types", read_fake, {"annotations": "the folder", "flavour": "layer name"}, LEGACY_DEFAULTS)


@pytest.fixture
def fake_plugin(monkeypatch):
    """The registry as if a distribution registered FAKE in the ``unitize.adapters`` entry-point group."""
    import unitize.adapters as registry
    from unitize import plugins

    real = plugins.entry_points
    fake = [EntryPoint("fake", "tests.cli.test_init:FAKE", registry.GROUP)]
    monkeypatch.setattr(plugins, "entry_points", lambda *, group: [*real(group=group), *(fake if group == registry.GROUP else [])])
    registry.rescan()
    yield
    monkeypatch.undo()
    registry.rescan()


def test_a_plugin_with_plain_help_options(tmp_path, fake_plugin, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "text.txt").write_text("one two three four", encoding="utf-8")
    (data / "a.spans").write_text("0 3 X\n8 13 Y\n", encoding="utf-8")
    (data / "b.spans").write_text("0 7 X\n", encoding="utf-8")
    assert FAKE.options["flavour"].type == "str" and FAKE.options["flavour"].help == "layer name"
    study = tmp_path / "study.toml"
    assert main(["init", "--format", "fake", str(data), "--out-file", str(study), "--flavour", "taste"]) == 0
    text = study.read_text(encoding="utf-8")
    assert 'flavour = "taste"' in text and "2 annotators (a, b)" in text
    assert main(["convert", str(study), "--out", str(tmp_path / "o"), "-q"]) == 0
    assert units_rows(tmp_path / "o") > 0
    capsys.readouterr()
    assert main(["formats", "--format", "fake"]) == 0
    assert "--flavour" in capsys.readouterr().out


def test_init_on_a_zip_export_reads_it_and_writes_the_study_beside_it(tmp_path, capsys):
    shutil.make_archive(str(tmp_path / "export"), "zip", EXAMPLES / "inception-mini", "annotation")
    assert main(["init", "--format", "webanno-tsv", str(tmp_path / "export.zip")]) == 0
    study = tomllib.loads((tmp_path / "study.toml").read_text(encoding="utf-8"))
    assert study["input"]["annotations"] == "export.zip"
    assert "3 annotators (ana, ben, chen)" in capsys.readouterr().out
    assert main(["convert", str(tmp_path / "study.toml"), "-q"]) == 0 and units_rows(tmp_path / "out") > 0


@pytest.mark.skipif(not (CORPORA / "ted-mdb").is_dir(), reason="../shared/corpora/ted-mdb is absent")
def test_init_finds_the_ann_and_raw_folders_of_a_ted_mdb_language(tmp_path, capsys):
    english = tmp_path / "English"
    shutil.copytree(CORPORA / "ted-mdb" / "English", english)
    assert main(["init", "--format", "pdtb3", str(english)]) == 0
    data = tomllib.loads((english / "study.toml").read_text(encoding="utf-8"))
    assert (data["input"]["annotations"], data["input"]["texts"]) == ("ann", "raw")
    assert "1 annotators (gold), 7 documents" in capsys.readouterr().out
    assert main(["convert", str(english / "study.toml"), "-q"]) == 0
    assert units_rows(english / "out") > 0


def test_one_annotator_found_points_at_the_annotators_folders_deeper_down(tmp_path, capsys):
    """A brat project one folder too deep (the bratiaa example's layout): init says so and names the folder."""
    project = tmp_path / "download" / "files" / "project"
    for who in ("lisa", "max"):
        (project / who).mkdir(parents=True)
        (project / who / "d1.txt").write_text("Ana met Bob.\n", encoding="utf-8")
        (project / who / "d1.ann").write_text("T1\tPER 0 3\tAna\n", encoding="utf-8")
    assert main(["init", "--format", "brat", str(tmp_path / "download")]) == 0
    err = capsys.readouterr().err
    assert "warning: one annotator found (files); agreement needs two or more." in err
    assert "download/files/project (lisa, max): unitize init --format brat " in err and "--annotations " in err
    assert main(["init", "--format", "brat", str(tmp_path / "download"), "--annotations", str(project), "--force"]) == 0
    assert "one annotator" not in capsys.readouterr().err
