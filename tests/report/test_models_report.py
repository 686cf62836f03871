"""`unitize report` of models as annotators (issue 23): where the quotes were found, and the alt-test's
verdicts and each human's test, from the files `unitize agree --alt-test` wrote — in the data and on the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.chromium import Chromium, find
from tests.conftest import ROOT
from unitize.cli import main

STUDY = ROOT / "unitize" / "examples" / "models-mini" / "study.toml"


def overview(out: Path) -> dict:
    text = (out / "report" / "data" / "overview.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("models-report") / "out"
    assert main(["convert", str(STUDY), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha-u", "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    return out


def test_the_quote_outcomes_are_in_the_report(out: Path) -> None:
    data = overview(out)
    assert [(q["outcome"], q["n"], q["code"]) for q in data["quotes"]] == [
        ("exact", 51, "quote-exact"), ("normalized", 3, "quote-normalized"), ("fuzzy", 1, "quote-fuzzy"), ("not-found", 1, "quote-not-found")]
    assert data["quotes"][0]["share"] == pytest.approx(51 / 56)
    assert data["alt_test"] is None  # agree ran without --alt-test


def test_the_alt_test_is_in_the_report(out: Path) -> None:
    assert main(["agree", str(out), "--metric", "alpha-u", "--alt-test", "--min-instances", "10", "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    alt = overview(out)["alt_test"]
    assert (alt["title"], alt["passing"]) == ("Alternative Annotator Test", 0.5)
    got = [(v["setting"], v["candidate"], v["score"], v["epsilon"], v["humans"], v["instances"], v["winning_rate"], v["passed"])
           for v in alt["verdicts"]]
    assert got == [("word-interval-labels", "gpt-run1", "span-f1", 0.2, 3, 12, 0.0, False),
                   ("word-interval-labels", "gpt-run2", "span-f1", 0.2, 3, 12, 0.0, False)]
    wins = {(h["candidate"], h["human"]): (h["candidate_wins"], h["human_wins"], h["rejected"]) for h in alt["humans"]}
    assert wins == {("gpt-run1", "ana"): (11, 11, False), ("gpt-run1", "ben"): (11, 9, False), ("gpt-run1", "chen"): (11, 8, False),
                    ("gpt-run2", "ana"): (10, 12, False), ("gpt-run2", "ben"): (10, 9, False), ("gpt-run2", "chen"): (11, 8, False)}
    # rho is the mean over the humans of the candidate's share of wins: (11 + 11 + 11) / 36 and (10 + 10 + 11) / 36
    assert [v["advantage_probability"] for v in alt["verdicts"]] == pytest.approx([33 / 36, 31 / 36])
    assert [x for v in alt["verdicts"] for x in (v["advantage_ci_low"], v["advantage_ci_high"])] == pytest.approx([0.75, 1.0, 2 / 3, 1.0])
    # ana and the candidate tie on 11 of gpt-run1's 12 documents: W_h - W_c is 0 there, -1 on one; t-test against 0.2
    assert next(h["p_value"] for h in alt["humans"] if (h["candidate"], h["human"]) == ("gpt-run1", "ana")) == pytest.approx(0.0662428, abs=1e-6)


def test_humans_skipped_show_as_not_tested(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(STUDY), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha-u", "--alt-test", "--min-instances", "13", "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    alt = overview(out)["alt_test"]
    assert [(v["candidate"], v["humans"], v["winning_rate"], v["passed"]) for v in alt["verdicts"]] == [
        ("gpt-run1", 0, None, False), ("gpt-run2", 0, None, False)]
    assert {(h["human"], h["instances"], h["candidate_wins"], h["p_value"], h["rejected"]) for h in alt["humans"]} == {
        ("ana", 12, None, None, None), ("ben", 12, None, None, None), ("chen", 12, None, None, None)}


CHROMIUM = find()


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (`make browser` installs Debian's)")
def test_the_alt_test_and_quotes_tables_in_chromium(out: Path) -> None:
    assert main(["agree", str(out), "--metric", "alpha-u", "--alt-test", "--min-instances", "10", "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    rows = "Array.from(document.querySelectorAll('table.{} tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))"
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        browser.open((out / "report" / "index.html").as_uri())
        browser.wait_for("document.querySelectorAll('table.alt-test tbody tr').length")
        assert browser.js(rows.format("alt-test")) == [
            ["word-interval-labels", "gpt-run1", "span-f1", "0.20", "3", "12", "0.00", "0.92 [0.75, 1.00]",
             "inconclusive (≈ 24 instances would pass it with probability ≥ 80 %)"],
            ["word-interval-labels", "gpt-run2", "span-f1", "0.20", "3", "12", "0.00", "0.86 [0.67, 1.00]",
             "inconclusive (≈ 72 instances would pass it with probability ≥ 80 %)"]]
        humans = browser.js(rows.format("alt-humans"))
        assert humans[0] == ["word-interval-labels", "gpt-run1", "ana", "12", "11", "11", "0.066", "no"]
        assert [r[:2] for r in browser.js(rows.format("quotes"))] == [["exact", "51"], ["normalized", "3"], ["fuzzy", "1"], ["not-found", "1"]]
        assert browser.errors == []


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (`make browser` installs Debian's)")
def test_roles_ceiling_candidates_and_pair_metrics_on_the_page(tmp_path: Path) -> None:
    """With [roles]: the annotators say who is a human and who a candidate; the span metrics' columns hold their
    pairs' mean (they were empty); the human ceiling is a table; the gold page scores the candidates and names the
    gold's folder relative to the output directory (not this machine's absolute path)."""
    out = tmp_path / "out"
    assert main(["convert", str(STUDY), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha-u,span-f1,unit-f1", "-q"]) == 0
    assert main(["adjudicate", str(out), "--to", "brat", "--dest", str(tmp_path / "gold"), "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    data = overview(out)
    assert data["roles"]["humans"] == ["ana", "ben", "chen"] and data["roles"]["families"] == {"gpt-run": ["gpt-run1", "gpt-run2"]}
    ceiling = {(c["metric"], c["who"]): (c["value"], c["n"]) for c in data["roles"]["ceiling"]}
    a = data["agreement"]
    mean = next(r[a["columns"].index("value")] for r in a["rows"]
                if r[a["columns"].index("metric")] == "span-f1" and r[a["columns"].index("pair")] == "mean")
    assert ceiling[("span-f1", "humans")] == (pytest.approx(mean, abs=1e-12), 3) and round(mean, 4) == 0.8183  # one computation
    assert ceiling[("span-f1", "gpt-run runs")][1] == 1
    assert data["adjudication"]["summary"]["dest"] == "../gold"
    assert [(c["candidate"], c["units"], c["matched_spans"]) for c in data["adjudication"]["candidates"]] == [
        ("gpt-run1", 109, 26), ("gpt-run2", 109, 24)]
    rows = "Array.from(document.querySelectorAll('table.{} tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))"
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        browser.open((out / "report" / "index.html").as_uri())
        browser.wait_for("document.querySelectorAll('table.agree tbody tr').length")
        text = browser.js("document.body.innerText")
        assert "5: humans ana, ben, chen; candidates gpt-run1, gpt-run2 (runs of gpt-run)" in text
        head = browser.js("Array.from(document.querySelectorAll('table.agree thead th')).map(t => t.textContent)")
        agree_row = browser.js(rows.format("agree"))[0]
        assert agree_row[head.index("span-f1")] == "0.818" and agree_row[head.index("unit-f1")] != ""
        assert ["word-interval-labels", "Entity", "span-f1", "humans (the ceiling)", "0.818", "3"] in browser.js(
            "Array.from(document.querySelectorAll('#ceiling tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))")
        browser.js("location.hash = '#gold'")
        browser.wait_for("document.querySelectorAll('table.candidates tbody tr').length")
        assert browser.js(rows.format("candidates"))[0][:3] == ["word-interval-labels", "gpt-run1", "109"]
        assert "brat in ../gold (relative to the output directory" in browser.js("document.body.innerText")
        assert browser.errors == []


def test_the_models_page_shows_estimates_prompts_and_stability(tmp_path: Path) -> None:
    """unitize estimate's tables in the report's data (names as text), and on the Models page in Chromium when there
    is one: the PPI++ estimates beside the humans alone, the prompt variants with their alt-test verdicts, the spread."""
    out = tmp_path / "out"
    specs = "gpt/plain=gpt-run1,gpt/cot=gpt-run2"
    assert main(["convert", str(STUDY), "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "span-f1", "--alt-test", "--min-instances", "10", "--candidates", specs, "-q"]) == 0
    assert main(["adjudicate", str(out), "-q"]) == 0
    assert main(["estimate", str(out), "--candidates", specs, "--humans-share", "0.5", "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    e = overview(out)["estimate"]
    assert {k: len(v) for k, v in e.items()} == {"estimates": 6, "stability": 0, "stability_curve": 0, "unstable": 0, "prompts": 2,
                                                 "prompt_spread": 1}
    assert [(p["model"], p["prompt"], p["metric"], p["alt_test"]) for p in e["prompts"]] == [
        ("gpt", "plain", "gold-unit-f1", "inconclusive 1"), ("gpt", "cot", "gold-unit-f1", "inconclusive 1")]
    first = e["estimates"][0]
    assert (first["candidate"], first["layer"], first["label"], first["labeled"], first["unlabeled"]) == ("gpt-run1", "Entity", "LOC", 6, 6)
    if CHROMIUM is None:
        return
    rows = "Array.from(document.querySelectorAll('{} tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))"
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        browser.open((out / "report" / "index.html").as_uri() + "#models")
        browser.wait_for("document.querySelectorAll('#estimates tbody tr').length")
        assert browser.js("document.getElementById('nav-models').hidden") is False
        assert browser.js(rows.format("#estimates"))[0] == [
            "gpt-run1", "Entity", "LOC", "density", "0.124 [0.091, 0.157]", "0.129 [0.094, 0.163]", "0.147", "6", "6", "0.12", ""]
        assert [r[:2] + r[4:] for r in browser.js(rows.format("table.prompts"))] == [
            ["gpt", "plain", "0.925 [0.853, 1.000]", "inconclusive 1"], ["gpt", "cot", "0.911 [0.831, 0.974]", "inconclusive 1"]]
        assert browser.js(rows.format("table.prompt-spread"))[0][:4] == ["gpt", "2", "plain", "cot"]
        assert browser.js(rows.format("table.alt-test"))[0][1] == "gpt-run1"
        assert browser.errors == []


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (`make browser` installs Debian's)")
def test_the_models_page_shows_run_stability(tmp_path: Path) -> None:
    """Three runs of a model on six items (tests/estimate): the stability table, the majority-of-k curve and the
    unstable items with each run's value."""
    from tests.estimate.test_estimate import items_study

    out = items_study(tmp_path)
    assert main(["estimate", str(out), "-q"]) == 0
    assert main(["report", str(out), "-q"]) == 0
    rows = "Array.from(document.querySelectorAll('{} tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))"
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        browser.open((out / "report" / "index.html").as_uri() + "#models")
        browser.wait_for("document.querySelectorAll('table.stability tbody tr').length")
        assert browser.js(rows.format("table.stability")) == [["m", "3", "3 / 6", "50.0 %", "50.0 %", "0.459", "3"]]
        assert browser.js(rows.format("table.stability-curve")) == [
            ["m", "1", "3", "75.0 %", "83.3 %"], ["m", "2", "3", "58.3 %", "66.7 %"], ["m", "3", "1", "75.0 %", "100.0 %"]]
        assert [r[3] + " " + r[7] for r in browser.js(rows.format("#unstable"))] == [
            "i2 m1=B; m2=A; m3=B", "i4 m1=A; m2=B; m3=B", "i6 m1=B; m2=B; m3=A"]
        assert browser.errors == []
