"""The quality gate of ``unitize agree --fail-below``: exit code 4 naming what failed, floors from the registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.errors import UnitizeError
from unitize.metrics import gate


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gate") / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(path), "-q"]) == 0
    return path


def test_floors_parse_and_are_checked_against_the_registry() -> None:
    assert gate.parse("alpha=0.67, ac1=0.8") == [gate.Floor("alpha", 0.67), gate.Floor("ac1", 0.8)]
    for spec, message in [("kappa=0.5", "unknown metric 'kappa'"), ("cohen=0.5", "cohen has no single value per layer"),
                          ("alpha", "give METRIC=FLOOR pairs"), ("alpha=high", "is not a number"), ("alpha=1,alpha=2", "names alpha twice")]:
        with pytest.raises(UnitizeError, match=message):
            gate.parse(spec)
    with pytest.raises(UnitizeError, match="gamma has no bootstrap interval"):
        gate.check_resampled(gate.parse("gamma=0.5"))


def test_check_reads_whole_layer_rows_and_pair_means_only() -> None:
    base = {"setting": "s", "group": "g", "layer": "Arg1", "label": None, "doc": None, "annotator": None, "pair": None, "ci_low": 0.5}
    rows = [base | {"metric": "alpha", "value": 0.7}, base | {"metric": "alpha", "value": 0.1, "doc": "d1"},
            base | {"metric": "span-f1", "value": 0.2, "pair": "a|b"}, base | {"metric": "span-f1", "value": 0.6, "pair": "mean"},
            base | {"metric": "alpha", "value": float("nan"), "layer": "Arg2", "reason": "no variation"}]
    floors = gate.parse("alpha=0.67,span-f1=0.5")
    failures, checked = gate.check(rows, floors)
    assert checked == 3 and [(f.floor.metric, f.layer, f.value) for f in failures][0][:2] == ("alpha", "Arg2")
    assert failures[0].line() == "alpha has no value (setting s, group g, layer Arg2): no variation; floor 0.67"
    failures, _ = gate.check(rows, gate.parse("alpha=0.6"), on="ci-lower")
    assert [f.line() for f in failures][0] == ("alpha = 0.5000 < 0.6 (the lower end of its confidence interval; "
                                               "setting s, group g, layer Arg1)")


def test_agree_exits_4_and_names_each_result_below_its_floor(out: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["agree", str(out), "-q", "--settings", "word-interval", "--fail-below", "alpha=0.8"])
    err = capsys.readouterr().err
    assert code == gate.EXIT_GATE == 4
    assert "quality gate --fail-below alpha=0.8 (on value) failed: 3 of 12 results below the floor" in err
    assert "alpha = 0.6832 < 0.8 (its value; setting word-interval, group ama, layer Arg1)" in err
    assert main(["agree", str(out), "-q", "--settings", "word-interval", "--fail-below", "alpha=0.6"]) == 0


def test_a_gated_metric_is_measured_and_ci_lower_implies_the_bootstrap(out: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["agree", str(out), "-q", "--metric", "alpha", "--settings", "word-interval", "--groups", "ama",
                 "--fail-below", "ac1=0.5", "--on", "ci-lower", "--bootstrap", "100"])
    assert code == 0, capsys.readouterr().err  # ac1 added to the metrics; its interval's lower end is above 0.5
    code = main(["agree", str(out), "-q", "--settings", "word-interval", "--groups", "ama", "--fail-below", "alpha=0.75",
                 "--on", "ci-lower", "--bootstrap", "100"])
    err = capsys.readouterr().err
    assert code == 4 and "the lower end of its confidence interval; setting word-interval, group ama, layer Arg1)" in err


def test_gate_usage_errors_exit_2(out: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["agree", str(out), "-q", "--on", "ci-lower"]) == 2
    assert "--on ci-lower goes with --fail-below" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["agree", str(out), "--fail-below", "kappa=0.5"])
    assert stop.value.code == 2 and "unknown metric 'kappa'" in capsys.readouterr().err
