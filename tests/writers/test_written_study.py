"""The study a writer writes reads back to its source's settings (issue 33, item 2): units, approaches, modes,
missing documents, layout and roles survive every target, and so do the settings a run makes of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize import load_toml
from unitize.cli import main
from unitize.run.conversion import targets

EXAMPLES = sorted((ROOT / "unitize" / "examples").glob("*/study.toml"))
KEPT = ("pairs", "modes", "discontinuous", "keep_missing", "keep_mismatched", "layers_from", "layout", "roles")


@pytest.mark.parametrize("study", EXAMPLES, ids=lambda p: p.parent.name)
def test_every_target_keeps_the_settings_of_every_example(study: Path, tmp_path: Path, capsys) -> None:
    source = load_toml(study)
    written = 0
    for to in targets():
        dest = tmp_path / to
        if main(["convert-format", str(study), "--to", to, "--out", str(dest), "-q"]) != 0:
            assert "nothing was written" in capsys.readouterr().err  # the target holds none of it: said so
            continue
        back = load_toml(dest / "study.toml")
        assert {k: getattr(back, k) for k in KEPT} == {k: getattr(source, k) for k in KEPT}, to
        written += 1
    assert written >= 1


@pytest.mark.parametrize("to", ["webanno-tsv", "doccano", "span-table", "conll-bio"])
def test_modes_survive_a_round_trip_as_settings_of_the_output(to: str, tmp_path: Path) -> None:
    study = ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"
    assert main(["convert", str(study), "--out", str(tmp_path / "a"), "-q"]) == 0
    assert main(["convert-format", str(study), "--to", to, "--out", str(tmp_path / "w"), "-q"]) == 0
    assert main(["convert", str(tmp_path / "w" / "study.toml"), "--out", str(tmp_path / "b"), "-q"]) == 0

    def settings(out: Path) -> list[str]:
        return sorted(json.loads((out / "manifest.json").read_text(encoding="utf-8"))["summary"]["unit_rows"])

    assert settings(tmp_path / "b") == settings(tmp_path / "a") and len(settings(tmp_path / "a")) == 8


def test_keep_missing_survives(tmp_path: Path) -> None:
    """Two doccano users with disjoint documents, read with keep_missing: the written study reads back."""
    data = tmp_path / "export"
    data.mkdir()
    (data / "ann1.jsonl").write_text(json.dumps({"id": 1, "text": "one two", "label": [[0, 3, "X"]]}) + "\n", encoding="utf-8")
    (data / "ann2.jsonl").write_text(json.dumps({"id": 2, "text": "three four", "label": [[0, 5, "X"]]}) + "\n", encoding="utf-8")
    study = tmp_path / "study.toml"
    study.write_text(f'[input]\nformat = "doccano"\nannotations = "{data.as_posix()}"\n[unitize]\nkeep_missing = true\n', encoding="utf-8")
    for to in ("brat", "webanno-tsv", "span-table"):
        assert main(["convert-format", str(study), "--to", to, "--out", str(tmp_path / to), "-q"]) == 0
        assert load_toml(tmp_path / to / "study.toml").keep_missing is True
        assert main(["convert", str(tmp_path / to / "study.toml"), "--out", str(tmp_path / f"{to}-out"), "-q"]) == 0
