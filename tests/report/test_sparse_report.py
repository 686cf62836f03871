"""The report of a sparse output is read from its stored rows, the other units counted, not built
(``layer_pieces(..., implicit=True)``): the same report as the wide layout of the same study, value for value."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.dataset.directory import OutputData
from unitize.dataset.pieces import layer_pieces
from unitize.report.build import Report, build
from unitize.report.jsontext import dumps, plain

BRAT = EXAMPLE.parent / "brat-mini"


def _outputs(study: Path, tmp_path: Path, *extra: str) -> dict[str, Path]:
    outs = {}
    for layout in ("wide", "sparse"):
        outs[layout] = tmp_path / layout
        assert main(["convert", str(study), "--out", str(outs[layout]), "--layout", layout, "-q", *extra]) == 0
    return outs


def _payload(report: Report) -> tuple[str, list[str], list[str]]:
    """The report as written, but the study's description (which names the layout)."""
    overview = {k: v for k, v in report.overview.items() if k != "study"}
    return dumps(plain(overview)), [dumps(plain(d)) for d in report.docs], [dumps(plain(i)) for i in report.items]


def _same_report(outs: dict[str, Path]) -> Report:
    wide, sparse = (build(OutputData(outs[k])) for k in ("wide", "sparse"))
    assert _payload(sparse) == _payload(wide)
    return sparse


@pytest.mark.parametrize("example", [EXAMPLE, BRAT], ids=["tdb-mini", "brat-mini"])
def test_a_sparse_output_reports_as_its_wide_layout(example: Path, tmp_path: Path) -> None:
    study = tmp_path / "study"
    shutil.copytree(example, study)
    report = _same_report(_outputs(study / "study.toml", tmp_path))
    assert any(s.get("pairs") for s in report.overview["settings"])  # pair matrices compared too, not only empty lists


def test_a_missing_annotator_and_a_document_without_marks(datt, tmp_path: Path) -> None:
    """d1: all three annotators, Arg1 marked on two of six words; d2: ann3 missing (every unit stored), d3: no mark
    by anyone in group ve (no unit stored); group ama: no mark anywhere. Labels mode: the empty value ``O`` is also
    the values' first."""
    datt.text("d1", "w0 w1 w2 w3 w4 w5")
    datt.text("d2", "x0 x1 x2 x3")
    datt.text("d3", "y0 y1 y2")
    arg1 = {"Arg1": [(0, 5)], "Arg2": [(9, 14)], "Conn": [(6, 8)]}
    for a in ("ann1", "ann2", "ann3"):
        datt.file("d1", a, "ve", [arg1 if a != "ann3" else {**arg1, "Arg1": [(0, 2)]}])
        datt.file("d3", a, "ve", [])
        datt.file("d1", a, "ama", [])  # a group nobody marked anything in: no stored row at all
    for a in ("ann1", "ann2"):
        datt.file("d2", a, "ve", [{"Arg1": [(0, 2)], "Arg2": [(6, 11)], "Conn": [(3, 5)]}])
    study = tmp_path / "study.toml"
    study.write_text(f'[input]\nformat = "datt"\nannotations = "{datt.annotations}"\ntexts = "{datt.texts}"\n\n'
                     '[unitize]\nunits = ["word"]\napproaches = ["interval"]\nmodes = ["separate", "labels"]\n'
                     'layers = ["Arg1", "Arg2"]\ntokenizer = "whitespace"\nkeep_missing = true\n', encoding="utf-8")
    outs = _outputs(study, tmp_path)
    _same_report(outs)
    data = OutputData(outs["sparse"])
    found = {}
    for setting in data.settings:
        for group, layer, pieces in layer_pieces(data, setting, implicit=True):
            for c in pieces:
                found[(setting.mode, group, layer)] = (c.docs, c.implicit.tolist(), c.values[c.empty])
    # d1: 6 words, Arg1 stored on w0 w1 (ann1, ann2 mark both, ann3 w0), Arg2 on w3 w4; d2: all 4 stored; d3: none
    assert found[("separate", "ve", "Arg1")] == (["d1", "d2", "d3"], [4, 0, 3], "0")
    assert found[("separate", "ve", "Arg2")] == (["d1", "d2", "d3"], [4, 0, 3], "0")
    assert found[("labels", "ve", "Arg1")][1:] == ([4, 0, 3], "O")
    assert found[("separate", "ama", "Arg1")] == (["d1"], [6], "0")  # every unit implicit


def test_disagreements_of_a_sparse_output_are_its_wide_layouts(tmp_path: Path) -> None:
    """``export --to disagreements`` reads a sparse group's stored rows too: the same files from either layout."""
    study = tmp_path / "study"
    shutil.copytree(BRAT, study)
    outs = _outputs(study / "study.toml", tmp_path)
    written = {}
    for layout, out in outs.items():
        assert main(["export", str(out), "--to", "disagreements", "--dest", str(tmp_path / f"dis-{layout}"), "-q"]) == 0
        written[layout] = {p.name: p.read_bytes() for p in sorted((tmp_path / f"dis-{layout}").iterdir())}
    assert written["sparse"] == written["wide"]
    assert sum(len(b) for b in written["sparse"].values()) > 1000  # regions written, not two empty files
