"""The report speaks of the study: its title is the study's name, annotators are listed as people count them."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from unitize.cli import main
from unitize.report.build import build
from unitize.report.study import study_name
from unitize.dataset.directory import OutputData


def test_the_title_is_the_study_and_annotators_come_in_natural_order(tmp_path):
    out = tmp_path / "anything-out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    html = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "<title>unitize report: brat-mini</title>" in html and '<h1 id="title">unitize report: brat-mini</h1>' in html
    data = OutputData(out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["summary"]["annotators"] = ["w10", "w2", "w1", "w100"]
    data.manifest = manifest
    assert build(data).overview["study"]["annotators"] == ["w1", "w2", "w10", "w100"]
    manifest["settings"]["source"] = None  # flags, no study file: the output directory's name
    assert study_name(data) == "anything-out"
