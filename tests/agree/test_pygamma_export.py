"""pygamma's CSVs: one continuum per group, or a file per document (positions from 0) — by default when a group is large."""

from __future__ import annotations

import csv

import pytest

from tests.conftest import ROOT
from unitize.cli import main
from unitize.export import export, formats


@pytest.fixture(scope="module")
def brat(tmp_path_factory):
    out = tmp_path_factory.mktemp("pygamma") / "out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    return out


def rows(path):
    return list(csv.reader(path.open(encoding="utf-8")))


def test_a_file_per_document_holds_that_documents_segments_from_zero(brat, tmp_path):
    whole, files = export(brat, "pygamma", tmp_path / "whole", per_document=False)
    split, per_doc = export(brat, "pygamma", tmp_path / "split", per_document=True)
    assert sorted(f.path for f in files) == ["char/all.csv", "word/all.csv"]
    assert len(per_doc) == 6 and all(f.path.startswith(("char/all/", "word/all/")) for f in per_doc)
    assert sum(f.rows for f in per_doc if f.setting == "word") == next(f.rows for f in files if f.setting == "word")
    labels = {r[1] for f in per_doc for r in rows(split / f.path)}
    assert labels == {"LOC", "MISC", "ORG", "PER", "LOC+ORG"}  # the labels (the study has the labels mode); stacked: merged
    for f in per_doc:
        assert min(int(r[2]) for r in rows(split / f.path)) >= 0 and "document " in f.note


def test_large_groups_are_split_by_default(brat, tmp_path, monkeypatch):
    _, files = export(brat, "pygamma", tmp_path / "small")
    assert len(files) == 2  # 37 segments a unit: one continuum
    monkeypatch.setattr(formats, "PER_DOCUMENT_ABOVE", 10)
    _, files = export(brat, "pygamma", tmp_path / "large")
    assert len(files) == 6
    assert main(["export", str(brat), "--to", "pygamma", "--no-per-document", "--dest", str(tmp_path / "cli"), "-q"]) == 0
    assert sorted(p.name for p in (tmp_path / "cli").rglob("*.csv")) == ["all.csv", "all.csv", "index.csv"]
