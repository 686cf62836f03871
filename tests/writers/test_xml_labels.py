"""A label XML 1.0 cannot hold (a control character) in a writer that writes XML — Label Studio's labeling
configuration, UIMA CAS XMI — is reported as not convertible, by the writers' traits (``XML_LABEL``), and the other
spans are written: no internal error from lxml or cassis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unitize import load_toml, read_corpus
from unitize.cli import main


@pytest.mark.parametrize("target", ["label-studio", "xmi"])
def test_a_label_xml_cannot_hold_is_reported_and_the_rest_written(target: str, tmp_path: Path) -> None:
    if target == "xmi":
        pytest.importorskip("cassis", reason="dkpro-cassis is not installed (make test installs it)")
    project = tmp_path / "proj" / "ann"
    project.mkdir(parents=True)
    (project / "d.txt").write_text("ab cd\n", encoding="utf-8")
    (project / "d.ann").write_text("T1\ta\x01b 0 2\tab\nT2\tok 3 5\tcd\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["convert-format", "--format", "brat", "--annotations", str(tmp_path / "proj"), "--to", target, "--out", str(out), "-q"]) == 0
    found = [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["code"], r["record"]) for r in found if r["code"] == "not-convertible"] == [("not-convertible", "T1")]
    assert "its label 'a\\x01b' cannot be written in the format" in next(r["message"] for r in found if r["record"] == "T1")
    back = read_corpus(load_toml(out / "study.toml"))
    assert [(s.label, s.begin, s.end) for s in back.spans] == [("ok", 3, 5)]
