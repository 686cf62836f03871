"""Models as annotators on an output directory: roles, the human ceiling, stability, the alt-test — and bad input."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT
from unitize.agree import AltOptions, agree
from unitize.agree.alttest import instances
from unitize.dataset.roles import parse_candidates
from unitize.config import load_toml, override
from unitize.dataset import OutputData, densify
from unitize.errors import RunError
from unitize.metrics import ALT_TEST
from unitize.metrics.alttest import pass_probability
from unitize.run import convert

STUDY = ROOT / "unitize" / "examples" / "models-mini" / "study.toml"


def _out(tmp: Path, layout: str = "wide") -> Path:
    out = tmp / layout
    convert(override(load_toml(STUDY), out=out, layout=layout))
    return out


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return _out(tmp_path_factory.mktemp("models"))


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_candidate_specs() -> None:
    assert parse_candidates(["gpt-run1..3", "llm", "claude=c1+c2"]) == {
        "gpt-run": ["gpt-run1", "gpt-run2", "gpt-run3"], "llm": ["llm"], "claude": ["c1", "c2"]}
    with pytest.raises(RunError, match="runs backwards"):
        parse_candidates(["gpt3..1"])


def test_roles_from_the_study_file(out: Path, tmp_path: Path) -> None:
    result = agree(out, metrics=["alpha", "span-f1"], dest=tmp_path / "a", alt_test=True, alt=AltOptions(min_instances=10))
    assert result.roles is not None and (result.roles.humans, result.roles.families) == (["ana", "ben", "chen"], {"gpt-run": ["gpt-run1", "gpt-run2"]})
    who = {(r["pair"] not in (None, "mean"), r["annotators"]) for r in result.results.to_pylist()}
    assert who == {(False, 3), (True, 2)}  # the humans alone; a pair's row rests on its two
    rows = _csv(tmp_path / "a" / "roles.csv")
    kinds = {(r["comparison"], r["annotator_a"], r["annotator_b"]) for r in rows if r["metric"] == "alpha"}
    assert kinds == {("human-human", "ana", "ben"), ("human-human", "ana", "chen"), ("human-human", "ben", "chen"),
                     *{("candidate-human", c, h) for c in ("gpt-run1", "gpt-run2") for h in ("ana", "ben", "chen")},
                     ("stability", "gpt-run1", "gpt-run2")}
    keys = [(r["setting"], r["layer"], r["metric"], r["comparison"], r["annotator_a"], r["annotator_b"]) for r in rows]
    assert len(keys) == len(set(keys))  # each comparison once: a pair's row, not also the equal mean of that one pair
    assert {r["pair"] for r in rows if r["metric"] == "span-f1" and r["comparison"] == "human-human"} == {"ana|ben", "ana|chen", "ben|chen"}
    verdicts = _csv(tmp_path / "a" / "alt_test.csv")
    assert list(verdicts[0]) == ["setting", "candidate", "epsilon", "score", "humans", "instances", "winning_rate",
                                 "advantage_probability", "advantage_ci_low", "advantage_ci_high", "passed", "losing_rate", "verdict",
                                 "instances_to_pass"]
    assert [(v["candidate"], v["score"], v["humans"], v["instances"], v["winning_rate"], v["passed"], v["verdict"]) for v in verdicts] == [
        ("gpt-run1", "span-f1", "3", "12", "0.0", "False", "inconclusive"), ("gpt-run2", "span-f1", "3", "12", "0.0", "False", "inconclusive")]
    assert float(verdicts[0]["advantage_probability"]) == pytest.approx(11 / 12)  # W_c = 11 of 12 documents against each human
    # inconclusive: the fewest instances (1.5×, 2×, 3×… the 12) on which plan's simulation passes it with probability ≥ 0.8
    assert [v["instances_to_pass"] for v in verdicts] == ["24", "72"]
    r = next(x for _, _, x in result.alt_tests if x.candidate == "gpt-run1")
    n = int(max(h.rows.max() for h in r.tested)) + 1
    def p(size):
        return pass_probability(r.tested, n, size, epsilon=0.2, q=0.05, min_instances=10, replicates=200, seed=0)
    assert p(24) >= 0.8 > p(18)
    assert any("inconclusive: ≈ 24 instances would pass it with probability ≥ 80%" in line for line in result.screen())
    humans = _csv(tmp_path / "a" / "alt_test_humans.csv")
    assert [(h["human"], h["candidate_wins"], h["human_wins"]) for h in humans[:3]] == [("ana", "11", "11"), ("ben", "11", "9"), ("chen", "11", "8")]


def test_unit_accuracy_terms_equal_the_matrix(out: Path) -> None:
    data = OutputData(out, ["ana", "ben", "chen", "gpt-run1", "gpt-run2"])
    setting = data.settings[0]
    found = instances(data, setting, ALT_TEST.score("unit-accuracy"))
    table = densify(out, setting.name).to_pylist()
    docs = sorted({r["doc_id"] for r in table})
    i, j = found.names.index("ben"), found.names.index("gpt-run1")
    for d, doc in enumerate(docs):  # the share of the document's words ben and gpt-run1 labelled alike
        rows = [r for r in table if r["doc_id"] == doc]
        assert found.terms[d, i, j] == pytest.approx(np.mean([r["ben"] == r["gpt-run1"] for r in rows]))
    assert found.coded.all()


def test_bad_input_is_refused_or_reported(out: Path, tmp_path: Path) -> None:
    with pytest.raises(RunError, match="candidate\\(s\\) gpt-run9 are not annotators"):
        agree(out, dest=tmp_path / "x", candidates=["gpt-run9"])
    with pytest.raises(RunError, match="fewer than two humans \\(ana\\)"):
        agree(out, dest=tmp_path / "x", candidates=["gpt-run1"], humans=["ana"])
    with pytest.raises(RunError, match="--alt-score accuracy is for items data"):
        agree(out, dest=tmp_path / "x", alt_test=True, alt=AltOptions(score="accuracy"))
    result = agree(out, metrics=["alpha"], dest=tmp_path / "y", alt_test=True)  # 12 documents < 30: every human skipped, said so
    assert [(r.humans[0].skipped, r.tested, r.passed) for _, _, r in result.alt_tests][0] == (
        "12 instance(s) shared with the candidate and another human, fewer than 30", [], False)
    assert any("skipped ana" in line for line in result.screen())


@pytest.mark.parametrize("layout", ["sparse", "long"])
def test_every_layout_and_executor_gives_the_same_comparisons(out: Path, layout: str, tmp_path: Path) -> None:
    wide = agree(out, metrics=["alpha", "span-f1"], dest=tmp_path / "w", alt_test=True, alt=AltOptions(min_instances=10))
    other = agree(_out(tmp_path, layout), metrics=["alpha", "span-f1"], alt_test=True, alt=AltOptions(min_instances=10, score="unit-accuracy"),
                  executor="processes:2")
    wide_units = agree(out, metrics=["alpha"], dest=tmp_path / "u", alt_test=True, alt=AltOptions(min_instances=10, score="unit-accuracy"))
    assert wide.comparisons == other.comparisons
    assert _csv(tmp_path / "u" / "alt_test_humans.csv") == _csv(other.dest / "alt_test_humans.csv")
    assert (tmp_path / "u" / "alt_test.csv").read_text() == (other.dest / "alt_test.csv").read_text()


def test_item_labels(tmp_path: Path) -> None:
    labels = ROOT / "unitize" / "examples" / "labels-mini" / "study.toml"
    out = tmp_path / "labels"
    convert(override(load_toml(labels), out=out))
    result = agree(out, metrics=["alpha"], candidates=["cem"], alt_test=True, alt=AltOptions(min_instances=3))
    names = {r.candidate for _, _, r in result.alt_tests}
    assert names == {"cem"} and {s.name for s, _, _ in result.alt_tests} == {s.name for s in OutputData(out).settings}
    assert all(score.name == "accuracy" for _, score, _ in result.alt_tests)


def test_a_trial_with_other_candidates_never_overwrites_the_studys_results(out: Path, tmp_path: Path) -> None:
    """Candidates from the command line that are not the study file's [roles] are a trial: written to
    agreement/trials/<candidates>, the study's own results left byte for byte as they were."""
    target = tmp_path / "o"
    shutil.copytree(out, target)
    study = agree(target, metrics=["alpha", "span-f1"])
    before = (target / "agreement" / "results.csv").read_bytes()
    trial = agree(target, metrics=["alpha"], candidates=["gpt-run1"])
    assert trial.trial and trial.dest == target / "agreement" / "trials" / "gpt-run1"
    assert (trial.dest / "results.csv").is_file() and (target / "agreement" / "results.csv").read_bytes() == before
    assert not study.trial and agree(target, metrics=["alpha"], candidates=["gpt-run1..2"]).dest == target / "agreement"  # the study's own
    named = agree(target, metrics=["alpha"], candidates=["gpt-run1"], humans=["ana", "ben"])
    assert named.dest.parent == target / "agreement" / "trials" and named.dest.name.startswith("gpt-run1-humans-")
    # with no results yet (or results of these same roles) there is nothing to keep: the candidates' run is the study's
    fresh = tmp_path / "fresh"
    shutil.copytree(out, fresh, ignore=shutil.ignore_patterns("agreement"))
    first = agree(fresh, metrics=["alpha"], candidates=["gpt-run1"])
    assert not first.trial and first.dest == fresh / "agreement"
    assert agree(fresh, metrics=["alpha"], candidates=["gpt-run1"]).dest == fresh / "agreement"  # again: the same roles


def test_crowd_data_says_why_no_pair_is_measured(tmp_path: Path, monkeypatch) -> None:
    """Crowd data counted per unit (a long table too wide to pivot; here made so by a lower threshold) keeps no
    annotator's own coding: roles.csv has one row per cell, metric and kind of comparison saying so (not a pass per
    pair, nor millions of human pairs), and the screen says it once. Narrow enough to pivot, the same output
    measures every pair."""
    out = tmp_path / "crowd"
    convert(override(load_toml(ROOT / "unitize" / "examples" / "crowd-mini" / "study.toml"), out=out))
    pivoted = agree(out, metrics=["alpha"], candidates=["w01"], dest=tmp_path / "p")
    assert pivoted.comparisons and all(r["annotator_a"] for r in pivoted.comparisons)
    assert any(r["value"] == r["value"] for r in pivoted.comparisons)
    monkeypatch.setattr("unitize.layouts.long.DENSE_CELLS", 0)
    result = agree(out, metrics=["alpha"], candidates=["w01"], dest=tmp_path / "a")
    rows = _csv(tmp_path / "a" / "roles.csv")
    assert rows and {(r["comparison"], r["family"]) for r in rows} == {("human-human", ""), ("candidate-human", "w01")}
    assert all(r["value"] == "nan" and r["reason"].startswith("crowd data (") and not r["annotator_a"] for r in rows)
    assert any(line.startswith("roles.csv: no comparison could be measured: crowd data") for line in result.screen())


def test_human_pairs_of_a_pairwise_metric_are_the_results_rows(out: Path, tmp_path: Path) -> None:
    """A metric with a row per pair has every human pair in the humans' results: roles.csv takes those rows (one
    computation) — the same file as measuring every pair of humans again in the roles' pass, in the same order."""
    from unitize.agree.measure import measure
    from unitize.agree.roles import order_of, pairs_of, role_rows

    metrics = ["span-f1", "cohen", "alpha", "unit-f1"]
    result = agree(out, metrics=metrics, dest=tmp_path / "r")
    roles = result.roles
    assert roles is not None
    rows = measure(OutputData(out, [*roles.humans, *roles.candidates]), metrics, pairs=pairs_of(roles), among=roles.humans).to_pylist()
    every = sorted([row for r in rows for row in role_rows(r, roles)], key=order_of(roles))
    assert result.comparisons == every
    humans = [r for r in every if r["comparison"] == "human-human"]
    assert len(humans) == 3 * 4 * len(OutputData(out).settings)  # ana–ben, ana–chen, ben–chen × four metrics × the cells
    assert {(r["annotator_a"], r["annotator_b"]) for r in humans} == {("ana", "ben"), ("ana", "chen"), ("ben", "chen")}
