"""The report speaks of the study: its title is the study's name, annotators are listed as people count them."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from unitize.cli import main
from unitize.dataset.directory import OutputData
from unitize.report.build import build
from unitize.report.study import study_name


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


def test_document_pages_come_in_bundles_of_about_a_megabyte(tmp_path):
    from unitize.report.page import write_bundles

    scripts = [f"unitizeReport.load(\"doc\",{i},{{\"x\":\"{'a' * n}\"}});\n" for i, n in enumerate([10, 10, 30, 5, 100, 1])]
    assert [len(x) for x in scripts] == [48, 48, 68, 43, 138, 39]
    starts = write_bundles(scripts, tmp_path, limit=120)
    assert starts == [0, 2, 4, 5]  # 48+48 | 68+43 | 138 (alone: larger than the limit) | 39
    files = sorted(tmp_path.iterdir(), key=lambda p: int(p.stem))
    assert [p.name for p in files] == ["0.js", "1.js", "2.js", "3.js"]
    assert "".join(p.read_text() for p in files) == "".join(scripts)  # every document once, in order
