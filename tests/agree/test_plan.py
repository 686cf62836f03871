"""``unitize plan``: interval half-widths and alt-test power at ½× … 8× a pilot, seeded, with one recommendation."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize.agree import AltOptions
from unitize.agree.plan import FACTORS, plan
from unitize.cli import main
from unitize.config import load_toml, override
from unitize.run import convert


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("plan") / "out"
    convert(override(load_toml(ROOT / "unitize" / "examples" / "models-mini" / "study.toml"), out=target))
    return target


def test_widths_shrink_and_power_grows_reproducibly(out: Path, tmp_path: Path) -> None:
    result = plan(out, metrics=["alpha", "span-f1"], replicates=100, seed=4, alt=AltOptions(min_instances=10))
    widths = [r["ci_half_width"] for r in result.rows if r["metric"] == "alpha"]
    sizes = [r["size"] for r in result.rows if r["metric"] == "alpha"]
    assert sizes == [6, 12, 24, 48, 96] and len(widths) == len(FACTORS)
    assert all(a > b for a, b in zip(widths, widths[1:]))  # more documents, narrower intervals
    assert widths[1] == pytest.approx(widths[2] * 2 ** 0.5, rel=0.25)  # about 1/√N
    power = {(r["candidate"], r["size"]): r["pass_probability"] for r in result.rows if r["candidate"]}
    assert power[("gpt-run1", 6)] == 0.0 and power[("gpt-run1", 96)] == 1.0
    assert result.recommendation.startswith("≈ ") and "documents for a ±0.05 95% interval on word-interval-labels Entity alpha" in result.recommendation
    first = (out / "plan" / "plan.csv").read_text()
    again = plan(out, metrics=["alpha", "span-f1"], replicates=100, seed=4, alt=AltOptions(min_instances=10))
    assert (out / "plan" / "plan.csv").read_text() == first and again.recommendation == result.recommendation
    with open(out / "plan" / "plan.csv", encoding="utf-8") as fh:
        assert next(csv.reader(fh)) == ["setting", "group", "layer", "metric", "pair", "candidate", "factor", "size", "unit",
                                        "ci_half_width", "pass_probability"]


def test_the_command(out: Path, tmp_path: Path, capsys) -> None:
    copy = tmp_path / "pilot"
    shutil.copytree(out, copy)
    assert main(["plan", str(copy), "--metric", "alpha", "--bootstrap", "50", "--humans", "ana,ben", "--candidates", "gpt-run1"]) == 0
    shown = capsys.readouterr().out
    assert "plan.csv" in shown and "the alt-test of gpt-run1 passes" in shown
    assert main(["plan", str(copy), "--candidates", "nobody"]) == 2
