"""One coverage rule: an annotator who coded some documents only (``keep_missing``) never changes another pair's
value; results.csv, roles.csv, the ceiling and the alt-test say the same; every row says what it rests on."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize.agree import AltOptions, agree
from unitize.config import load_toml, override
from unitize.run import convert

EXAMPLE = ROOT / "unitize" / "examples" / "models-mini"
PAIR_METRICS = ["cohen", "span-f1", "span-f1-overlap", "unit-f1"]
METRICS = ["alpha", "u-alpha", "alpha-u", *PAIR_METRICS]


def _study(tmp: Path, partial: bool) -> Path:
    """models-mini, and with ``partial`` a fourth human, dan, who coded d01–d05 only (his spans: ana's, one cut short)."""
    root = tmp / ("partial" if partial else "full")
    shutil.copytree(EXAMPLE, root)
    humans = '["ana", "ben", "chen"]'
    if partial:
        lines = (root / "annotations" / "ana.jsonl").read_text(encoding="utf-8").splitlines()[:5]
        (root / "annotations" / "dan.jsonl").write_text("\n".join(lines).replace('"end": 13', '"end": 6') + "\n", encoding="utf-8")
        humans = '["ana", "ben", "chen", "dan"]'
    study = root / "study.toml"
    text = study.read_text(encoding="utf-8").replace('humans = ["ana", "ben", "chen"]', f"humans = {humans}")
    study.write_text(text.replace('tokenizer = "regex"', 'tokenizer = "regex"\nkeep_missing = true'), encoding="utf-8")
    out = root / "out"
    convert(override(load_toml(study), out=out))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("coverage")
    found = {}
    for partial in (False, True):
        out = _study(tmp, partial)
        agree(out, metrics=METRICS, alt_test=True, alt=AltOptions(min_instances=3))
        found["partial" if partial else "full"] = out / "agreement"
    return found


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _pairs(rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["metric"], r["pair"]): r for r in rows if r["pair"] not in ("", "mean") and not r["doc"] and not r["label"]}


def test_a_partial_annotator_never_changes_another_pairs_value(runs):
    full, partial = _pairs(_csv(runs["full"] / "results.csv")), _pairs(_csv(runs["partial"] / "results.csv"))
    assert {k for k in partial if "dan" not in k[1]} == set(full)
    for key, row in full.items():
        assert partial[key]["value"] == row["value"], key
        assert partial[key]["units_used"] == row["units_used"] == "109", key
    # dan's pairs rest on the five documents he coded (47 words)
    dan = {k: r for k, r in partial.items() if "dan" in k[1] and k[0] != "cohen"}
    assert len(dan) == 9 and {(r["documents"], r["units_used"], r["annotators"]) for r in dan.values()} == {("5", "47", "2")}


def test_results_and_roles_never_disagree(runs):
    results = _pairs(_csv(runs["partial"] / "results.csv"))
    roles = [r for r in _csv(runs["partial"] / "roles.csv") if r["comparison"] == "human-human" and r["pair"]]
    assert len(roles) == 6 * len(PAIR_METRICS)
    for r in roles:
        assert float(results[(r["metric"], r["pair"])]["value"]) == float(r["value"]), (r["metric"], r["pair"])


def test_multi_annotator_coefficients_keep_every_document_two_coded(runs):
    rows = {r["metric"]: r for r in _csv(runs["partial"] / "results.csv") if not r["pair"]}
    assert (rows["alpha"]["units_used"], rows["u-alpha"]["units_used"], rows["u-alpha"]["documents"]) == ("109", "109", "12")
    # alpha-U (1995) pools every annotator on one continuum: the documents all four coded, and the row says so
    assert (rows["alpha-u"]["documents"], rows["alpha-u"]["units_used"]) == ("5", "47")
    found = json.loads(rows["alpha-u"]["diagnostics"])
    assert [(d["code"], d["detail"]) for d in found] == [("annotator-partial", "dan coded 5 of 12 documents")]
    full = {r["metric"]: r for r in _csv(runs["full"] / "results.csv") if not r["pair"]}
    assert full["alpha-u"]["diagnostics"] == "" and full["u-alpha"]["documents"] == "12"


def test_the_alt_test_counts_each_humans_own_instances(runs):
    humans = {(r["candidate"], r["human"]): r["instances"] for r in _csv(runs["partial"] / "alt_test_humans.csv")}
    assert humans == {(c, h): "5" if h == "dan" else "12" for c in ("gpt-run1", "gpt-run2") for h in ("ana", "ben", "chen", "dan")}
    verdicts = {r["candidate"]: r["instances"] for r in _csv(runs["partial"] / "alt_test.csv")}
    assert verdicts == {"gpt-run1": "12", "gpt-run2": "12"}
