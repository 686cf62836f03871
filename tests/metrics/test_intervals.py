"""Interval methods of agree (--ci-method), the probability of falling short of a required minimum, and the
closed-form plan before any pilot (Bloch & Kraemer 1989 as Krippendorff 2019 tabulates it)."""

from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np
import pytest

from tests.conftest import ROOT
from unitize.metrics import bootstrap as B
from unitize.metrics import coefficients as C
from unitize.metrics import stats as S
from unitize.metrics.planning import minimum_codings

spec = importlib.util.spec_from_file_location("coverage_bench", ROOT / "bench" / "coverage.py")
coverage = importlib.util.module_from_spec(spec)
sys.modules["coverage_bench"] = coverage  # its dataclasses look their module up
spec.loader.exec_module(coverage)


def stats_of(values: np.ndarray) -> S.Stats:
    columns, domain = S.codes(values)
    return S.from_codes(columns, domain, [f"c{i}" for i in range(values.shape[1])])


DATA = np.array([[0, 0], [1, 1], [2, 2], [0, 1], [1, 1], [2, 0], [0, 0], [1, 2], [2, 2], [0, 0], [1, 1], [np.nan, 2]], dtype=float)


# --- the closed form ---------------------------------------------------------------------------------------


def test_krippendorffs_table_cells() -> None:
    """4 equiprobable codes, 2 coders, one-sided 0.05: 139 values for α_min 0.800, 81 for 0.667 (Krippendorff 2019)."""
    assert minimum_codings(0.8, 4).values == 139 and minimum_codings(0.8, 4).units == 70
    assert minimum_codings(0.667, 4).values == 81
    rarer = minimum_codings(0.8, 4, smallest_share=0.1)
    assert rarer.values > 139 and rarer.smallest_share == 0.1
    assert minimum_codings(0.8, 4, coders=3).values > 139


@pytest.mark.parametrize("bad", [{"alpha_min": 1.0, "codes": 4}, {"alpha_min": 0.8, "codes": 1}, {"alpha_min": 0.8, "codes": 4, "smallest_share": 0.5}])
def test_the_closed_form_refuses_what_it_cannot_compute(bad: dict) -> None:
    with pytest.raises(ValueError):
        minimum_codings(**bad)


def test_plan_prints_the_closed_form_without_a_pilot(capsys) -> None:
    from unitize.cli import main

    assert main(["plan", "--alpha-min", "0.8", "--codes", "4"]) == 0
    assert "at least 139 pairable values (70 units coded by 2 coders each)" in capsys.readouterr().out
    assert main(["plan", "--codes", "4"]) == 2
    assert "needs both --alpha-min and --codes" in capsys.readouterr().err


# --- the jackknife -------------------------------------------------------------------------------------------


def test_t_quantiles() -> None:
    for df, expected in ((5, 2.570582), (10, 2.228139), (30, 2.042272)):
        assert B.t_quantile(0.975, df) == pytest.approx(expected, abs=2e-3)
    assert B.t_quantile(0.975, math.inf) == pytest.approx(1.959964, abs=1e-6)


def test_the_jackknife_equals_leaving_each_unit_out_by_hand() -> None:
    s = stats_of(DATA)
    v = C.alpha(s, "nominal")
    got = B.interval(B.alpha_replicates, s, v, "nominal", B.Options(method="jackknife"))
    pairable = [i for i in range(len(DATA)) if np.isfinite(DATA[i]).sum() >= 2]
    loo = np.array([C.alpha(stats_of(np.delete(DATA, i, axis=0)), "nominal").value for i in pairable])
    n = len(pairable)
    se = math.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum())
    record = got.params["ci"]
    assert record["method"] == "jackknife, one unit left out" and record["se"] == pytest.approx(se, abs=1e-12)
    half = B.t_quantile(0.975, n - 1) * se
    assert got.ci == pytest.approx((v.value - half, min(1.0, v.value + half)), abs=1e-12)
    assert record["below"]["0.8"] == pytest.approx(0.5 * (1 + math.erf((0.8 - v.value) / (se * math.sqrt(2)))), abs=1e-12)


def test_fleiss_jackknife_leaves_out_the_units_it_uses() -> None:
    """Fleiss' kappa uses the units every annotator coded: the jackknife runs over those alone."""
    s = stats_of(DATA)
    v = C.fleiss(s)
    got = B.interval(B.fleiss_replicates, s, v, "nominal", B.Options(method="jackknife"))
    complete = [i for i in range(len(DATA)) if np.isfinite(DATA[i]).all()]
    loo = np.array([C.fleiss(stats_of(np.delete(DATA[complete], k, axis=0))).value for k in range(len(complete))])
    n = len(complete)
    assert got.params["ci"]["se"] == pytest.approx(math.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum()), abs=1e-12)


def test_a_pair_coefficient_jackknife_leaves_units_out_of_its_table() -> None:
    from unitize.metrics.registry import METRICS

    cohen = next(m for m in METRICS if m.name == "cohen")
    s = stats_of(DATA)
    v = cohen.formula(s, "nominal", False)[0]
    got = B.interval(cohen.replicates, s, v, "nominal", B.Options(method="jackknife"))
    both = [i for i in range(len(DATA)) if np.isfinite(DATA[i]).all()]
    loo = np.array([cohen.formula(stats_of(np.delete(DATA[both], k, axis=0)), "nominal", False)[0].value for k in range(len(both))])
    n = len(both)
    assert got.params["ci"]["se"] == pytest.approx(math.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum()), abs=1e-12)


# --- every method: seeded, recorded, bracketing ------------------------------------------------------------------


@pytest.mark.parametrize("method", B.METHODS)
def test_every_method_is_seeded_recorded_and_brackets_the_value(method: str) -> None:
    s = stats_of(DATA)
    v = C.alpha(s, "nominal")
    opts = B.Options(method=method, replicates=300, seed=4)
    first, again = (B.interval(B.alpha_replicates, s, v, "nominal", opts) for _ in range(2))
    assert first.ci == again.ci and first.ci is not None
    assert first.ci[0] <= v.value <= first.ci[1] <= 1.0
    record = first.params["ci"]
    assert set(record["below"]) == {"0.667", "0.8"} and record["alpha_min"] == [0.667, 0.8]
    assert all(0 <= p <= 1 for p in record["below"].values())
    expected = {"auto": "bootstrap-t", "bootstrap": "percentile bootstrap", "studentized": "bootstrap-t", "jackknife": "jackknife",
                "bca": "BCa"}[method]
    assert record["method"].startswith(expected)


def test_auto_takes_the_percentile_bootstrap_from_50_units() -> None:
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 3, 150)
    data = np.stack([truth, np.where(rng.random(150) < 0.2, rng.integers(0, 3, 150), truth)], axis=1).astype(float)
    s = stats_of(data)
    got = B.interval(B.alpha_replicates, s, C.alpha(s, "nominal"), "nominal", B.Options(replicates=200))
    assert got.params["ci"]["method"] == "percentile bootstrap, units resampled"


def test_the_bootstraps_share_below_a_minimum_is_the_share_of_replicates() -> None:
    s = stats_of(DATA)
    v = C.alpha(s, "nominal")
    opts = B.Options(method="bootstrap", replicates=400, seed=9, alpha_min=(0.5,))
    reps = B.alpha_replicates(s, "nominal", opts)
    got = B.interval(B.alpha_replicates, s, v, "nominal", opts)
    assert got.params["ci"]["below"] == {"0.5": float((reps[np.isfinite(reps)] < 0.5).mean())}


# --- coverage: the default holds where the percentile bootstrap does not ------------------------------------------


def test_small_study_coverage_within_its_monte_carlo_band() -> None:
    """4 coders, binary codes of prevalence 0.2, 20 units: 80 studies at a fixed seed. The default (bootstrap-t here)
    covers within 3 Monte-Carlo standard errors of 95 %; the full study (bench/coverage.py, 300 studies) is in docs/agree.md."""
    cell = coverage.CELLS["small"][1]
    rows = coverage.run([cell], studies=80, replicates=300, methods=("auto",))
    (row,) = rows
    band = 3 * math.sqrt(0.95 * 0.05 / row["studies"])
    assert abs(row["coverage"] - 0.95) <= band, row


# --- the segment metrics: one document left out -------------------------------------------------------------------


def test_the_document_jackknife_of_u_alpha_and_alpha_u_leaves_each_document_out() -> None:
    from tests.metrics.test_spanboot import _by_value, _study
    from unitize.metrics import spanboot, unitizing
    from unitize.metrics.alphau import in_order, stretches
    from unitize.metrics.value import Value

    p = _study(np.random.default_rng(3), 12, 0.6)
    per = [s for _, s in unitizing.by_document(p)]
    opts = B.Options(method="jackknife")
    drawn = spanboot.resampling(opts, len(per))
    assert drawn.replicates == 12 and drawn.draw == "jackknife"
    w = spanboot.weights(spanboot.draws(drawn, len(per)), len(per))
    np.testing.assert_array_equal(w, np.ones((12, 12)) - np.eye(12))
    reps = spanboot.unitizing_replicates(unitizing.Variant.U, per, w)[(None, None)]
    kept = [[per[k] for k in range(12) if k != d] for d in range(12)]
    by_hand = [unitizing.u_alpha(sum(rest[1:], rest[0])).value for rest in kept]
    np.testing.assert_allclose(reps, by_hand, atol=1e-12)
    whole = unitizing.u_alpha(sum(per[1:], per[0])).value
    (row,) = spanboot.attach([Value(whole)], {(None, None): reps}, opts, 12)
    assert row.params["ci"]["method"] == spanboot.JACKKNIFE and row.params["ci"]["documents"] == 12
    assert row.params["ci"]["se"] == pytest.approx(math.sqrt(11 / 12 * ((reps - reps.mean()) ** 2).sum()), abs=1e-12)
    docs = {c: stretches(u, p.length, p.starts) for c, u in _by_value(p).items()}
    alpha_u = spanboot.alpha_u_replicates(docs, drawn)[(None, None)]
    for d in (0, 5, 11):
        left = {c: [s for k, s in enumerate(ds) if k != d] for c, ds in docs.items()}
        o = sum(in_order(x).disagreement().observed for x in left.values())
        e = sum(in_order(x).disagreement().expected for x in left.values())
        assert alpha_u[d] == pytest.approx(1 - o / e, abs=1e-9)
