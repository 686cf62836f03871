"""unitize estimate: PPI estimates from a candidate and the humans' gold, and a family's run stability, on studies whose
every figure is computed here by hand or by ppi_py from the files unitize wrote."""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from unitize.cli import main
from unitize.dataset import pieces as pieces_module
from unitize.dataset.directory import OutputData
from unitize.estimate import estimate

MODELS = ROOT / "unitize" / "examples" / "models-mini" / "study.toml"
#: three humans on items i1..i4 (gold A B B A), three runs of a model on i1..i6
HUMANS = {"h1": "AABA", "h2": "ABBA", "h3": "ABBB"}
RUNS = {"m1": "ABBAAB", "m2": "AABBAB", "m3": "ABBBAA"}


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def items_study(root: Path) -> Path:
    """The study above converted and adjudicated (the humans' majority) into ``root/out``."""
    (root / "annotations").mkdir()
    for name, values in {**HUMANS, **RUNS}.items():
        lines = ["ID,label", *(f"i{k + 1},{v}" for k, v in enumerate(values))]
        (root / "annotations" / f"{name}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "study.toml").write_text('[input]\nformat = "labels"\nshape = "per-annotator"\nannotations = "annotations"\n'
                                     'item = "ID"\nlabels = ["label"]\n\n[roles]\nhumans = ["h1", "h2", "h3"]\n'
                                     'candidates = ["m1..3"]\n', encoding="utf-8")
    out = root / "out"
    assert main(["convert", str(root / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["adjudicate", str(out), "-q"]) == 0
    return out


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return items_study(tmp_path_factory.mktemp("estimate-items"))


def test_run_stability_equals_a_hand_count(items: Path) -> None:
    """Runs differ on i2, i4 and i6 (two against one: entropy H(⅔, ⅓) = 0.918 bits each). Majority of k runs against
    the gold A B B A: k = 1: m1 4/4, m2 2/4, m3 3/4 → 0.75; k = 2: (m1, m2) ties on i2 and i4 → 2/4, (m1, m3) 3/4,
    (m2, m3) 2/4 → 0.583; k = 3: B on i4 → 0.75. Recovery of the three runs' majority (A B B B A B) on the six items:
    5/6 for each single run, 4/6 for each pair, so three runs are needed."""
    result = estimate(items)
    h = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))
    assert result.stability == [{"setting": "items", "family": "m", "runs": 3, "observations": 6, "flipped": 3, "flip_rate": 0.5,
                                 "units": 6, "flipped_units": 3, "unit_flip_rate": 0.5, "mean_entropy": pytest.approx(h / 2),
                                 "runs_needed": 3}]
    curve = [(r["k"], r["choices"], r["agreement_with_gold"], r["recovery"]) for r in result.curve]
    assert curve == [(1, 3, pytest.approx(0.75), pytest.approx(5 / 6)), (2, 3, pytest.approx(7 / 12), pytest.approx(4 / 6)),
                     (3, 1, pytest.approx(0.75), pytest.approx(1.0))]
    assert [(r["observation"], r["values"]) for r in result.unstable] == [
        ("i2", "m1=B; m2=A; m3=B"), ("i4", "m1=A; m2=B; m3=B"), ("i6", "m1=B; m2=B; m3=A")]
    assert [r["entropy"] for r in result.unstable] == [pytest.approx(h)] * 3
    written = rows(items / "estimate" / "stability_curve.csv")
    assert [r["k"] for r in written] == ["1", "2", "3"] and float(written[1]["agreement_with_gold"]) == pytest.approx(7 / 12)


def test_item_prevalence_equals_ppi_py_on_the_gold_and_the_runs(items: Path) -> None:
    """Labeled: i1..i4 (the humans' gold A B B A); unlabeled: i5, i6, which only the runs coded."""
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test dependency (make test installs it)")
    result = estimate(items)
    got = {(r["candidate"], r["label"]): r for r in result.rows}
    assert sorted(got) == [(m, label) for m in RUNS for label in "AB"]
    gold = np.array([1.0, 0, 0, 1])
    for m, values in RUNS.items():
        hat = np.array([v == "A" for v in values], float)
        low, high = ppi_py.ppi_mean_ci(gold, hat[:4], hat[4:], alpha=0.05)
        r = got[(m, "A")]
        assert (r["labeled"], r["unlabeled"], r["undecided"], r["without_candidate"]) == (4, 2, 0, 0)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
        assert r["humans_only"] == 0.5 and r["model_only"] == pytest.approx(hat.mean()) and r["group"] == "label"
        assert r["estimate"] + got[(m, "B")]["estimate"] == pytest.approx(1.0)


def span_densities(out: Path, candidate: str) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Per document, per label: the share of units whose gold is the label (of the units with a gold), and the share of
    units the candidate gave it — read from units.parquet and the label matrix, not through unitize."""
    gold = pq.read_table(out / "adjudication" / "units.parquet").to_pylist()
    matrix = ds.dataset(out / "labels" / "setting=word-interval-labels").to_table(columns=["doc_id", candidate]).to_pylist()
    truth: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    decided: dict[str, int] = defaultdict(int)
    for r in gold:
        if r["gold"] is not None:
            decided[r["doc_id"]] += 1
            truth[r["doc_id"]][r["gold"]] += 1
    model: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    units: dict[str, int] = defaultdict(int)
    for r in matrix:
        units[r["doc_id"]] += 1
        model[r["doc_id"]][r[candidate]] += 1
    return ({d: {k: v / decided[d] for k, v in t.items()} for d, t in truth.items()},
            {d: {k: v / units[d] for k, v in t.items()} for d, t in model.items()})


def test_span_density_on_models_mini(tmp_path: Path) -> None:
    """Every document has the humans' gold: the estimate is theirs (λ = 0), the mean of the documents' shares; with
    half the documents kept (--humans-share 0.5), PPI++ on the six kept and six left to the model, as ppi_py says."""
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test dependency (make test installs it)")
    out = tmp_path / "out"
    assert main(["convert", str(MODELS), "--out", str(out), "-q"]) == 0
    assert main(["adjudicate", str(out), "-q"]) == 0
    whole = estimate(out)
    truth, model = span_densities(out, "gpt-run1")
    docs = sorted(truth)
    for r in (r for r in whole.rows if r["candidate"] == "gpt-run1"):
        y = np.array([truth[d].get(r["label"], 0.0) for d in docs])
        assert r["estimate"] == pytest.approx(y.mean()) == r["humans_only"] and r["lambda"] == 0 and r["layer"] == "Entity"
        assert r["model_only"] == pytest.approx(np.mean([model[d].get(r["label"], 0.0) for d in docs]))
        assert r["reason"].startswith("every observation has the humans' gold")
    assert sorted({r["label"] for r in whole.rows}) == ["LOC", "ORG", "PER"]
    half = estimate(out, humans_share=0.5, seed=3)
    order = np.random.default_rng(3).permutation(len(docs))
    kept, rest = [docs[k] for k in order[:6]], [docs[k] for k in order[6:]]
    for r in (r for r in half.rows if r["candidate"] == "gpt-run1"):
        y = np.array([truth[d].get(r["label"], 0.0) for d in kept])
        hat = np.array([model[d].get(r["label"], 0.0) for d in kept])
        unl = np.array([model[d].get(r["label"], 0.0) for d in rest])
        low, high = ppi_py.ppi_mean_ci(y, hat, unl, alpha=0.05)
        assert (r["labeled"], r["unlabeled"]) == (6, 6)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    assert half.stability[0]["runs_needed"] is None  # two runs: their majority is decided only where they agree


def test_the_plan_columns_answer_the_width_question(items: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["estimate", str(items), "--width", "0.2", "--model-cost", "0.01"]) == 0
    shown = capsys.readouterr().out
    assert "an interval 0.2 wide needs 97 items coded by humans alone" in shown and "m: 3 of 6 observations flip" in shown
    first = rows(items / "estimate" / "estimates.csv")[0]
    assert first["humans_needed"] == "97"  # (2 · 1.96 · 0.5 / 0.2)² = 96.04 → 97
    assert int(first["ppi_humans"]) < 97 and int(first["ppi_model_only"]) > 0


def test_a_gold_is_needed_and_must_be_the_humans(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(MODELS), "--out", str(out), "-q"]) == 0
    assert main(["estimate", str(out)]) == 2
    assert f"run `unitize adjudicate {out}` first" in capsys.readouterr().err
    assert main(["adjudicate", str(out), "--voters", "all", "-q"]) == 0
    assert main(["estimate", str(out)]) == 2
    assert "made with candidate(s) gpt-run1, gpt-run2 voting" in capsys.readouterr().err
    assert main(["estimate", str(out), "--humans-share", "1.5"]) == 2
    assert not (out / "estimate").exists()


def test_without_candidates_it_says_how_to_name_them(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "labels-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["estimate", str(out)]) == 2
    assert "names no candidates" in capsys.readouterr().err


def test_prompt_variants_side_by_side(items: Path) -> None:
    """Families named MODEL/PROMPT: variant a (m1: 4 of 4 items right) and b (m2 and m3 pooled: 2 + 3 of 8) of model m;
    its spread 1 − 5/8, with the bootstrap's interval around it."""
    result = estimate(items, candidates=["m/a=m1", "m/b=m2+m3"])
    got = [(r["model"], r["prompt"], r["runs"], r["observations"], r["units"], r["metric"], r["value"]) for r in result.prompts]
    assert got == [("m", "a", 1, 4, 4, "gold-accuracy", 1.0), ("m", "b", 2, 4, 8, "gold-accuracy", 0.625)]
    (spread,) = result.spread
    assert (spread["best"], spread["worst"], spread["spread"]) == ("a", "b", 0.375)
    assert spread["ci_low"] <= 0.375 <= spread["ci_high"] and result.prompts[0]["ci_low"] == 1.0
    assert [r["family"] for r in result.stability] == ["m/b"]  # a family of one run has no stability
    written = rows(items / "estimate" / "prompt_spread.csv")
    assert [(r["model"], r["best"], r["worst"], r["spread"]) for r in written] == [("m", "a", "b", "0.375")]


def test_the_bootstrap_resamples_observations_for_every_variant_at_once() -> None:
    """replicates(): replicate r draws observations idx[r·n:(r+1)·n] of the seeded stream, the same for every column."""
    from unitize.estimate.prompts import CHUNK, replicates

    rng = np.random.default_rng(5)
    num, den = rng.integers(0, 5, (30, 3)).astype(float), rng.integers(5, 9, (30, 3)).astype(float)
    got = replicates(num, den, seed=11, count=2 * CHUNK + 7)
    stream = np.random.default_rng(11)
    expected = []
    for size in (CHUNK, CHUNK, 7):
        draws = stream.integers(0, 30, size * 30).reshape(size, 30)
        expected += [num[d].sum(0) / den[d].sum(0) for d in draws]
    assert got.shape == (2 * CHUNK + 7, 3) and np.allclose(got, np.array(expected), rtol=0, atol=1e-12)


def test_span_variants_are_scored_by_unit_f1_over_the_marked_units(tmp_path: Path) -> None:
    """models-mini with its two runs as two prompts of one model: unit F1 against the gold, counted here from
    units.parquet and the label matrix (a unit is a hit where both give it the same label, not O); the alt-test's
    verdicts of each variant's runs beside it."""
    out = tmp_path / "out"
    assert main(["convert", str(MODELS), "--out", str(out), "-q"]) == 0
    assert main(["adjudicate", str(out), "-q"]) == 0
    specs = ["gpt/plain=gpt-run1", "gpt/cot=gpt-run2"]
    assert main(["agree", str(out), "--metric", "span-f1", "--alt-test", "--min-instances", "10", "--candidates", ",".join(specs), "-q"]) == 0
    result = estimate(out, candidates=specs)
    gold = {(r["doc_id"], r["unit"]): r["gold"] for r in pq.read_table(out / "adjudication" / "units.parquet").to_pylist()}
    matrix = ds.dataset(out / "labels" / "setting=word-interval-labels").to_table().to_pylist()
    for variant, run in (("plain", "gpt-run1"), ("cot", "gpt-run2")):
        tp = fp = fn = 0
        for r in matrix:
            g, v = gold.get((r["doc_id"], r["unit"])), r[run]
            if g is None:
                continue
            hit = v == g and v != "O"
            tp += hit
            fp += v != "O" and not hit
            fn += g != "O" and not hit
        row = next(x for x in result.prompts if x["prompt"] == variant)
        assert row["metric"] == "gold-unit-f1" and row["value"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
        assert row["alt_test"] == "inconclusive 1" and row["observations"] == 12
    assert result.spread[0]["spread"] == pytest.approx(abs(result.prompts[0]["value"] - result.prompts[1]["value"]))


def test_plan_answers_the_width_question_as_estimate_does(items: Path, capsys: pytest.CaptureFixture) -> None:
    """unitize plan --ppi-width: OUT/plan/ppi.csv holds the planning columns of estimate --width, one computation; the
    cheapest pair is ppi_py's for the pilot's gold and candidate."""
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test dependency (make test installs it)")
    assert main(["plan", str(items), "--bootstrap", "10", "--ppi-width", "0.2", "--model-cost", "0.05", "-q"]) == 0
    assert capsys.readouterr().out == ""
    planned = rows(items / "plan" / "ppi.csv")
    assert main(["estimate", str(items), "--width", "0.2", "--model-cost", "0.05", "-q"]) == 0
    estimated = rows(items / "estimate" / "estimates.csv")
    columns = ("candidate", "label", "humans_needed", "ppi_humans", "ppi_model_only", "ppi_cost", "corr")
    assert [[r[c] for c in columns] for r in planned] == [[r[c] for c in columns] for r in estimated] and len(planned) == 6
    from ppi_py.ppi_power_analysis import ppi_mean_power

    gold, hat = np.array([1.0, 0, 0, 1]), np.array([v == "A" for v in RUNS["m3"][:4]], float)
    expected = ppi_mean_power(gold, hat, 1.0, 0.05, effective_n=97)
    m3 = next(r for r in planned if (r["candidate"], r["label"]) == ("m3", "A"))
    assert (int(m3["ppi_humans"]), int(m3["ppi_model_only"])) == (expected["n"], expected["N"])
    assert float(m3["ppi_cost"]) == pytest.approx(expected["cost"])
    assert main(["plan", str(items), "--bootstrap", "10", "--ppi-width", "0.2"]) == 0
    assert "PPI: an interval 0.2 wide for A needs 97 items coded by humans alone, or" in capsys.readouterr().out


def test_a_crowd_group_read_in_pieces_gives_the_same_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long table's group read a piece of whole documents at a time (memory bounded by a piece) gives every file of
    OUT/estimate byte for byte as the group read whole: each figure adds up over documents."""
    from tests.dataset.test_pieces import convert_crowd
    from unitize.dataset import pieces as pieces_module
    from unitize.dataset.directory import OutputData

    out = convert_crowd(tmp_path / "out")  # four workers: two humans, two runs of a model
    annotators = sorted(OutputData(out).setting("word-interval-labels").annotators)
    runs, humans = annotators[-2:], annotators[:-2]
    assert main(["adjudicate", str(out), "--setting", "word-interval-labels", "--voters", ",".join(humans), "-q"]) == 0
    spec = [f"w/a={runs[0]}+{runs[1]}"]

    def files() -> dict[str, bytes]:
        estimate(out, candidates=spec, humans=humans, humans_share=0.5, seed=2)
        return {p.name: p.read_bytes() for p in sorted((out / "estimate").iterdir())}

    whole = files()
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 7)
    assert files() == whole
    assert len(rows(out / "estimate" / "prompts.csv")) == 1 and len(rows(out / "estimate" / "stability.csv")) == 1
    assert len(rows(out / "estimate" / "estimates.csv")) > 0


def test_a_zero_one_setting_estimates_each_layer_marked(tmp_path: Path) -> None:
    """tdb-mini, separate mode (Arg1 and Arg2 as 0/1): a row per layer, its label ``marked``; every document has the
    humans' gold, so the estimate is the humans' mean share of units marked, per document."""
    out = tmp_path / "out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "tdb-mini" / "study.toml"), "--out", str(out), "-q"]) == 0
    assert main(["adjudicate", str(out), "--voters", "ayse,burak", "-q"]) == 0
    result = estimate(out, candidates=["cem"], humans=["ayse", "burak"])
    assert [(r["layer"], r["label"], r["labeled"], r["unlabeled"]) for r in result.rows] == [("Arg1", "marked", 6, 0), ("Arg2", "marked", 6, 0)]
    gold = pq.read_table(out / "adjudication" / "units.parquet").to_pylist()
    for r in result.rows:
        shares: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        for u in gold:
            if u["layer"] == r["layer"] and u["gold"] is not None:
                shares[(u["group"], u["doc_id"])][0] += u["gold"] == "1"
                shares[(u["group"], u["doc_id"])][1] += 1
        assert r["estimate"] == pytest.approx(np.mean([a / b for a, b in shares.values()])) == r["humans_only"]


def test_item_labels_stored_long_estimated_an_item_at_a_time_are_the_whole_groups(tmp_path: Path, monkeypatch) -> None:
    """The study above stored long (crowd data's layout): its group read a piece of whole items at a time (here an
    item a piece) gives the files of the group read whole — stability, prompts and estimates add up over items."""
    study = items_study(tmp_path)
    out = tmp_path / "long"
    assert main(["convert", str(study.parent / "study.toml"), "--out", str(out), "--layouts", "long", "-q"]) == 0
    assert main(["adjudicate", str(out), "-q"]) == 0
    assert [s.name for s in OutputData(out).settings] == ["items-long"]

    def files() -> dict[str, bytes]:
        estimate(out, seed=2)
        return {p.name: p.read_bytes() for p in sorted((out / "estimate").iterdir())}

    whole = files()
    monkeypatch.setattr(pieces_module, "PIECE_ROWS", 1)
    assert files() == whole
    stability = rows(out / "estimate" / "stability.csv")
    assert [(r["family"], r["observations"], r["flipped"]) for r in stability] == [("m", "6", "3")]  # as the wide layout's
