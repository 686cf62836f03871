"""factgenie campaigns: read as factgenie indexes them (slugified keys, annotator groups, categories by type), spans
placed where their text is (code points, else UTF-16 units, else located and reported); and a written campaign read
by factgenie's own code (its annotation and output indexes, its span index) to the same spans."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.adapters.test_fuzz import CATEGORIES, FACTGENIE, OUTPUTS, Seed
from tests.conftest import CORPORA, needs_shared
from tests.writers.roundtrip import materialize
from unitize import read_corpus
from unitize.adapters import get_adapter
from unitize.adapters.factgenie import doc_id, key_of
from unitize.cli import main
from unitize.model import Corpus
from unitize.run.conversion import convert_format

DOC0, DOC1 = "d2t-eval/iaa/phi3-5/0", "d2t-eval/iaa/phi3-5/1"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for rel, text in FACTGENIE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def read(root: Path, **options: Any) -> Corpus:
    return get_adapter("factgenie").read(annotations=root / "campaigns", texts=root / "outputs", base=root, **options)


def spans(corpus: Corpus) -> set[tuple[str, str, str | None, int, int]]:
    return {(s.annotator, s.doc_id, s.label, s.begin, s.end) for s in corpus.spans if s.begin >= 0}


def codes(corpus: Corpus) -> list[tuple[str, str | None, str | None]]:
    return sorted((f.code, f.annotator, f.record) for f in corpus.findings)


def test_campaigns_read_as_factgenie_indexes_them(project: Path) -> None:
    corpus = read(project)
    assert {d: doc.text for d, doc in corpus.documents.items()} == {DOC0: OUTPUTS[0], DOC1: OUTPUTS[1]}  # phi3.5 is phi3-5
    assert spans(corpus) == {
        ("human-iaa-anngroup-0", DOC0, "Incorrect", 15, 20), ("human-iaa-anngroup-0", DOC0, "Not checkable", 24, 29),
        ("human-iaa-anngroup-0", DOC1, "Incorrect", 15, 19),  # "Lyon" at 16 UTF-16 units: 15 code points after the emoji
        ("human-iaa-anngroup-1", DOC0, "Incorrect", 8, 11), ("human-iaa-anngroup-1", DOC1, "Misleading", 20, 26),
        ("llm-gpt-anngroup-0", DOC0, "Incorrect", 15, 20), ("llm-gpt-anngroup-0", DOC0, "Other", 8, 11),  # "Bob" given at 0
    }
    assert codes(corpus) == [("label-undeclared", "llm-gpt-anngroup-0", "line 2/1"), ("quote-exact", "llm-gpt-anngroup-0", "line 1/2"),
                             ("quote-not-found", "llm-gpt-anngroup-0", "line 2/2")]
    unplaced = [s for s in corpus.spans if s.begin < 0]
    assert [(s.annotator, s.record, s.attrs) for s in unplaced] == [("llm-gpt-anngroup-0", "line 2/2", {"unplaced": "quote-not-found"})]
    assert sorted((s.annotator, s.doc_id, s.records) for s in corpus.submissions) == [
        ("human-iaa-anngroup-0", DOC0, 2), ("human-iaa-anngroup-0", DOC1, 1), ("human-iaa-anngroup-1", DOC0, 1),
        ("human-iaa-anngroup-1", DOC1, 1), ("llm-gpt-anngroup-0", DOC0, 2), ("llm-gpt-anngroup-0", DOC1, 2)]


def test_annotators_by_id_or_campaign(project: Path) -> None:
    assert {s.annotator for s in read(project, annotators_by="id").spans} == {"w1", "w2", "gpt-4o-llm-gpt"}
    assert {s.annotator for s in read(project, annotators_by="campaign").spans} == {"human-iaa", "llm-gpt"}
    by_campaign = read(project, annotators_by="campaign")  # two workers of one campaign on one output: the second reported
    assert [(f.code, f.annotator, f.doc) for f in by_campaign.findings if f.code == "duplicate-record"] == [
        ("duplicate-record", "human-iaa", DOC0), ("duplicate-record", "human-iaa", DOC1)]


def test_one_campaign_one_record_file_or_its_zip(project: Path) -> None:
    one = get_adapter("factgenie").read(annotations=project / "campaigns" / "human-iaa", texts=project / "outputs", base=project)
    assert {s.annotator for s in one.spans} == {"human-iaa-anngroup-0", "human-iaa-anngroup-1"}
    file = project / "campaigns" / "llm-gpt" / "files" / "d2t-eval-iaa-phi3-5-1700000002.jsonl"
    alone = get_adapter("factgenie").read(annotations=file, texts=project / "outputs" / "d2t-eval" / "iaa-phi3.5.jsonl", base=project)
    assert spans(alone) == {s for s in spans(read(project)) if s[0] == "llm-gpt-anngroup-0"}
    import shutil

    archive = shutil.make_archive(str(project / "export"), "zip", project / "campaigns" / "human-iaa")
    zipped = get_adapter("factgenie").read(annotations=Path(archive), texts=project / "outputs", base=project)
    assert spans(zipped) == spans(one)


def test_what_cannot_be_read_is_reported(project: Path) -> None:
    (project / "outputs" / "d2t-eval" / "iaa-phi3.5.jsonl").write_text(json.dumps({"dataset": "d2t-eval", "split": "iaa", "setup_id": "phi3.5",
                                                                                     "example_idx": 0, "output": OUTPUTS[0]}) + "\n{oops\n", encoding="utf-8")
    extra = project / "campaigns" / "human-iaa" / "files" / "2-0-w3-1700000003.jsonl"
    extra.write_text('{"dataset": "d2t-eval", "split": "iaa", "setup_id": "phi3-5", "example_idx": "x", "annotations": []}\n'
                     '{"dataset": "d2t-eval", "split": "iaa", "example_idx": 2, "output": "generated"}\n', encoding="utf-8")
    corpus = read(project)
    found = sorted((f.code, f.file, f.record, f.message) for f in corpus.findings if f.code in ("record-malformed", "raw-text-missing"))
    assert [(c, Path(file or "").name, r) for c, file, r, _ in found] == [
        ("raw-text-missing", "0-0-w1-1700000000.jsonl", "line 2"), ("raw-text-missing", "1-1-w2-1700000001.jsonl", "line 2"),
        ("raw-text-missing", "d2t-eval-iaa-phi3-5-1700000002.jsonl", "line 2"), ("record-malformed", "2-0-w3-1700000003.jsonl", "line 1"), ("record-malformed", "2-0-w3-1700000003.jsonl", "line 2"),
        ("record-malformed", "iaa-phi3.5.jsonl", "line 2")]
    assert "no output d2t-eval/iaa/phi3-5/1 in the texts (1 span(s))" in found[0][3]
    assert "example_idx 'x' is not a non-negative integer" in found[3][3]


def test_a_folder_without_campaigns_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "a.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "outputs.jsonl").write_text("", encoding="utf-8")
    corpus = get_adapter("factgenie").read(annotations=tmp_path / "files" / "a.jsonl", texts=tmp_path / "outputs.jsonl", base=tmp_path)
    assert [(f.code, f.file) for f in corpus.findings] == [("file-unreadable", "files/a.jsonl")]
    assert main(["convert", "--format", "factgenie", "--annotations", str(tmp_path / "nowhere"), "--texts", str(tmp_path), "--out",
                 str(tmp_path / "out")]) == 2
    assert "factgenie campaign not found" in capsys.readouterr().err


def test_keys_are_factgenies() -> None:
    assert key_of({"dataset": "D2T Eval", "split": "iaa", "setup_id": "phi3.5", "example_idx": 3}) == ("d2t-eval", "iaa", "phi3-5", 3)
    assert key_of({"dataset": "x", "split": "y", "setup_id": "Müller", "example_idx": "4"}) == ("x", "y", "muller", 4)
    assert key_of({"dataset": "x", "split": "y", "example_idx": 1}) == "no setup_id"
    assert doc_id(("x", "y", "z", 0)) == "x/y/z/0"


# -- factgenie's own code reads what unitize writes --

factgenie = pytest.importorskip("factgenie.workflows", reason="factgenie is not installed (make test installs it: pip install --no-deps factgenie)")


def factgenie_spans(out: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str, str, int, int]]:
    """(annotator_id, document, category, start, end) of every span factgenie's span index holds, each span's text
    checked against the output factgenie's output index holds for it."""
    import factgenie.analysis as analysis
    import factgenie.campaign as campaign
    import factgenie.workflows as workflows

    for module in (workflows, campaign):
        monkeypatch.setattr(module, "CAMPAIGN_DIR", out / "campaigns")
    monkeypatch.setattr(workflows, "OUTPUT_DIR", out / "outputs")
    app = SimpleNamespace(db={"annotation_index": None, "annotation_index_cache": {}, "output_index": None, "output_index_cache": {}})
    (name,) = [p.name for p in (out / "campaigns").iterdir()]
    loaded = campaign.ExternalCampaign(name)
    categories = [c["name"] for c in loaded.metadata["config"]["annotation_span_categories"]]
    index = analysis.compute_span_index(app, [name], {name: loaded})
    outputs = workflows.get_output_index(app, force_reload=True)
    texts = {(r.dataset, r.split, r.setup_id, int(r.example_idx)): r.output for r in outputs.itertuples()}
    docs = {}
    for path in (out / "outputs").rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            docs[(r["dataset"], r["split"], r["setup_id"], r["example_idx"])] = r.get("unitize_doc") or doc_id(
                (r["dataset"], r["split"], r["setup_id"], r["example_idx"]))
    for row in index.itertuples():
        key = (row.dataset, row.split, row.setup_id, int(row.example_idx))
        start, end = int(row.annotation_start), int(row.annotation_end)
        assert texts[key][start:end] == row.annotation_text, (key, start, row.annotation_text)
        yield row.annotator_id, docs[key], categories[int(row.annotation_type)], start, end


def written_and_read_by_factgenie(seed: Seed, root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[set, set]:
    settings = materialize(seed, root / "in")
    source = read_corpus(settings)
    convert_format(settings, "factgenie", root / "out")
    want = {(s.annotator, s.doc_id, s.label, s.begin, s.end) for s in source.spans if s.valid and s.begin < s.end and s.label is not None}
    return want, set(factgenie_spans(root / "out", monkeypatch))


def test_factgenie_reads_a_written_campaign_to_the_same_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed = Seed("fixture", {k: v.encode() for k, v in FACTGENIE.items()},
                ["--format", "factgenie", "--annotations", "{root}/campaigns", "--texts", "{root}/outputs"])
    want, got = written_and_read_by_factgenie(seed, tmp_path, monkeypatch)
    assert len(want) == 7 and got == want
    meta = json.loads((tmp_path / "out" / "campaigns" / "unitize" / "metadata.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in meta["config"]["annotation_span_categories"]] == sorted(c["name"] for c in CATEGORIES)


@needs_shared
def test_factgenie_reads_the_shared_brat_project_written_as_a_campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = CORPORA / "bratiaa-example"
    if not project.is_dir():
        pytest.skip(f"{project} is not in ../shared/corpora")
    files = {p.relative_to(project).as_posix(): p.read_bytes() for p in project.rglob("*") if p.is_file() and p.suffix in (".ann", ".txt")}
    want, got = written_and_read_by_factgenie(Seed("bratiaa", files, ["--format", "brat", "--annotations", "{root}"]), tmp_path, monkeypatch)
    assert len(want) > 1000 and got == want


def test_init_proposes_the_llm_eval_campaigns_as_candidates(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """factgenie says which campaigns are models (mode llm_eval): init writes them as [roles] candidates, so that agree
    measures the humans alone and compares the model with them, and adjudicate lets the humans vote."""
    assert read(project).candidates == {"llm-gpt-anngroup-0"}
    study = tmp_path / "study.toml"
    assert main(["init", "--format", "factgenie", str(project), "--out-file", str(study), "--tokenizer", "whitespace"]) == 0
    import tomllib

    assert tomllib.loads(study.read_text(encoding="utf-8"))["roles"] == {"candidates": ["llm-gpt-anngroup-0"]}
    out = tmp_path / "out"
    assert main(["convert", str(study), "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    assert main(["adjudicate", str(out)]) == 0
    assert "voters: human-iaa-anngroup-0, human-iaa-anngroup-1 (" in capsys.readouterr().out
