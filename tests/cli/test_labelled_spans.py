"""Labelled spans are measured with their labels by default: init adds the labels mode, and a run without it says so."""

from __future__ import annotations

import json
import shutil
import tomllib

from tests.conftest import ROOT
from unitize.cli import main

EXAMPLES = ROOT / "unitize" / "examples"


def _codes(out):
    return [json.loads(line) for line in (out / "report.jsonl").read_text().splitlines() if '"labels-ignored"' in line]


def test_a_run_without_the_labels_mode_says_the_matrices_ignore_the_labels(tmp_path, capsys):
    assert main(["convert", str(EXAMPLES / "brat-mini" / "study.toml"), "--modes", "separate", "--out", str(tmp_path / "blind")]) == 0
    found = _codes(tmp_path / "blind")
    assert [(f["severity"], f["message"].split(" but ")[0]) for f in found] == [("warning", "the spans carry 4 labels (LOC, MISC, ORG, PER)")]
    assert "warning: the spans carry 4 labels" in capsys.readouterr().err
    assert main(["convert", str(EXAMPLES / "brat-mini" / "study.toml"), "--out", str(tmp_path / "aware"), "-q"]) == 0
    assert _codes(tmp_path / "aware") == []  # the example's study has the labels mode
    assert main(["convert", str(EXAMPLES / "tdb-mini" / "study.toml"), "--out", str(tmp_path / "tdb"), "-q"]) == 0
    assert _codes(tmp_path / "tdb") == []  # a discourse bank's labels are senses, its layers the arguments


def test_init_adds_the_labels_mode_for_a_span_tool_with_labels(tmp_path):
    project = tmp_path / "brat"
    shutil.copytree(EXAMPLES / "brat-mini", project)
    (project / "study.toml").unlink()
    assert main(["init", "--format", "brat", str(project)]) == 0
    unitize = tomllib.loads((project / "study.toml").read_text())["unitize"]
    assert unitize["modes"] == ["separate", "labels"] and unitize["tokenizer"] == "spacy:en"
    assert main(["convert", str(project / "study.toml"), "--out", str(tmp_path / "out"), "-q"]) == 0
    assert _codes(tmp_path / "out") == []
