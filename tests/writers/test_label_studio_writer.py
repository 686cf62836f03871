"""The Label Studio writer read by Label Studio's own converter (label-studio-converter: the export reader behind
its JSON-MIN, CSV and CoNLL exports), given the labeling configuration unitize writes beside the export: every
region it reads covers, in the task's text, the characters and the label of a source span of that annotator, and
every source span is such a region unless the report says why Label Studio cannot hold it."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from tests.adapters.test_fuzz import fixtures
from tests.conftest import CORPORA, ROOT, needs_shared
from tests.writers.roundtrip import materialize
from unitize import load_toml, read_corpus
from unitize.run.conversion import convert_format

converter = pytest.importorskip("label_studio_converter", reason="label-studio-converter is not installed (make test installs it)")


def label_studios_view(annotations: Path, scratch: Path) -> Counter:
    """(annotator, task text, label, region text) of every region the converter reads, its offsets checked."""
    reader = converter.Converter(config=str(annotations / "label_config.xml"), project_dir=None, download_resources=False)
    reader.convert_to_json_min(str(annotations / "export.json"), str(scratch), is_dir=False)
    out: Counter = Counter()
    for record in json.loads((scratch / "result.json").read_text(encoding="utf-8")):
        layers = [k for k, v in record.items() if isinstance(v, list) and k not in ("text",)]
        for layer in layers:
            for region in record[layer]:
                assert record["text"][region["start"]:region["end"]] == region["text"]
                (label,) = region["labels"]
                out[(str(record["annotator"]), record["text"], label, region["text"])] += 1
    return out


def sources_view(settings, report: Path) -> Counter:
    dropped = {(r["annotator"], r["doc"], r["record"]) for r in map(json.loads, report.read_text(encoding="utf-8").splitlines())
               if r.get("action") == "not written"}
    corpus = read_corpus(settings)
    out: Counter = Counter()
    for s in corpus.spans:
        if (s.annotator, s.doc_id, s.record) not in dropped and s.valid:
            text = corpus.documents[s.doc_id].text or ""
            out[(s.annotator, text, s.label, text[s.begin:s.end])] += 1
    return out


def check(settings, out: Path) -> int:
    convert_format(settings, "label-studio", out)
    want = sources_view(settings, out / "report.jsonl")
    assert label_studios_view(out / "annotations", out.parent / "min") == want
    return sum(want.values())


def test_label_studio_reads_the_bundled_brat_example(tmp_path: Path) -> None:
    config = tmp_path / "out"
    assert check(load_toml(ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"), config) == 38
    text = (config / "annotations" / "label_config.xml").read_text(encoding="utf-8")
    assert '<Labels name="Entity" toName="text">' in text and text.count("<Label ") == 4 and '<Text name="text" value="$text"/>' in text


def test_label_studio_reads_the_doccano_fixture(tmp_path: Path) -> None:
    """doccano's fixture: a character beyond the BMP before a span (Label Studio counts code points)."""
    assert check(materialize(fixtures()["doccano"][0], tmp_path / "in"), tmp_path / "out") >= 2


@needs_shared
def test_label_studio_reads_the_shared_bratiaa_project(tmp_path: Path) -> None:
    project = CORPORA / "bratiaa-example"
    if not project.is_dir():
        pytest.skip(f"{project} is not in ../shared/corpora")
    settings = materialize(fixtures()["brat"][0], tmp_path / "unused")  # a brat study's settings, pointed at the project
    settings = replace(settings, input={**settings.input, "annotations": project})
    assert check(settings, tmp_path / "out") > 1000


def test_the_labeling_configuration_escapes_names_and_a_rerun_keeps_your_edits(tmp_path: Path) -> None:
    """A label with XML's own characters is data in the configuration (the converter reads it back as written); the
    user's edited configuration survives a rerun."""
    from unitize.cli import main

    root = tmp_path / "proj" / "ann"
    root.mkdir(parents=True)
    (root / "d.txt").write_text("a <b> & c\n", encoding="utf-8")
    (root / "d.ann").write_text('T1\tx<y&"z\' 0 1\ta\n', encoding="utf-8")
    out = tmp_path / "out"
    argv = ["convert-format", "--format", "brat", "--annotations", str(tmp_path / "proj"), "--to", "label-studio", "--out", str(out), "-q"]
    assert main(argv) == 0
    assert label_studios_view(out / "annotations", tmp_path / "min") == Counter({("ann", "a <b> & c\n", 'x<y&"z\'', "a"): 1})
    edited = (out / "annotations" / "label_config.xml").read_text(encoding="utf-8").replace("<View>", "<View><!-- mine -->")
    (out / "annotations" / "label_config.xml").write_text(edited, encoding="utf-8")
    assert main([*argv, "--force"]) == 0
    assert (out / "annotations" / "label_config.xml").read_text(encoding="utf-8") == edited
