"""The alt-test for many annotators each coding a few instances (crowd data): terms as rows, not an
(instances × annotators × annotators) array — the same tests, wins and verdicts as the array."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tests.conftest import EXAMPLE
from unitize.cli import main
from unitize.metrics.alttest import HumanTest, TermRows, by_rejected, compare, compare_rows, pass_probability
from unitize.metrics.registry import ALT_TEST


def _as_rows(terms: np.ndarray, coded: np.ndarray) -> TermRows:
    i, a, b = np.nonzero(coded[:, :, None] & coded[:, None, :] & ~np.eye(coded.shape[1], dtype=bool)[None])
    order = np.lexsort((b, i, a))
    return TermRows(i[order], a[order], b[order], terms[i, a, b][order], terms.shape[0])


@pytest.mark.parametrize("seed", range(12))
def test_compare_rows_is_compare(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(20, 120)), int(rng.integers(3, 9))
    coded = rng.random((n, m)) < rng.uniform(0.3, 0.9)
    coded[:, m - 1] |= rng.random(n) < 0.8  # the candidate codes most instances
    terms = np.round(rng.random((n, m, m)) * 4) / 4  # ties happen, as with F1 on short documents
    terms = np.where(coded[:, :, None] & coded[:, None, :], terms, np.nan)
    names = [f"a{k}" for k in range(m)]
    humans = list(range(m - 1))
    score = ALT_TEST.default_score("units")
    dense = compare(terms, coded, names, humans, m - 1, score, min_instances=5)
    rows = compare_rows(_as_rows(terms, coded), names, humans, m - 1, score, min_instances=5)
    assert [(t.human, t.instances, t.skipped) for t in rows] == [(t.human, t.instances, t.skipped) for t in dense]
    for r, d in zip(rows, dense):
        assert r.rows.tolist() == d.rows.tolist()
        assert r.candidate_wins.tolist() == d.candidate_wins.tolist() and r.human_wins.tolist() == d.human_wins.tolist()
    assert any(t.skipped is None for t in dense)


def _naive_pass_probability(tested, n_instances, size, *, epsilon, q, min_instances, replicates, seed, passing=0.5):
    """The simulation replicate by replicate, each human's drawn differences as an array (the definition)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_instances, size=(replicates, size))
    passed = 0
    for r in range(replicates):
        p, ok = [], []
        for t in tested:
            diff = np.full(n_instances, np.nan)
            diff[t.rows] = t.human_wins - t.candidate_wins
            d = diff[draws[r]]
            d = d[~np.isnan(d)]
            if d.size < min_instances:
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                p.append(stats.t.cdf((d.mean() - epsilon) / (d.std(ddof=1) / np.sqrt(d.size)), d.size - 1))
        if p and len(by_rejected(p, q)) / len(p) >= passing:
            passed += 1
    return passed / replicates


@pytest.mark.parametrize("seed", range(6))
def test_pass_probability_counts_each_humans_draws_as_the_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 300))
    tested = []
    for h in range(int(rng.integers(2, 10))):
        rows = np.sort(rng.choice(n, size=int(rng.integers(8, n)), replace=False))
        wins = (rng.random(rows.size) < rng.uniform(0.3, 0.9)).astype(float)
        tested.append(HumanTest(f"h{h}", rows.size, wins, (rng.random(rows.size) < 0.5).astype(float), rows))
    for size in (30, 200):
        kw = dict(epsilon=0.2, q=0.05, min_instances=10, replicates=60, seed=seed)
        assert pass_probability(tested, n, size, **kw) == _naive_pass_probability(tested, n, size, **kw)


@pytest.mark.parametrize("example,candidates", [("models-mini", None), ("brat-mini", "chen")])
def test_a_long_layout_tests_as_the_wide_one(example: str, candidates: str | None, tmp_path: Path) -> None:
    """The rows (long layout) and the array (wide layout) give the same alt_test files, 0/1 and label settings alike."""
    study = tmp_path / "study"
    shutil.copytree(EXAMPLE.parent / example, study)
    if candidates:
        with (study / "study.toml").open("a", encoding="utf-8") as f:
            f.write(f'\n[roles]\ncandidates = ["{candidates}"]\n')
    written = {}
    for layout in ("wide", "long"):
        out = tmp_path / layout
        assert main(["convert", str(study / "study.toml"), "--out", str(out), "--layout", layout, "-q"]) == 0
        assert main(["agree", str(out), "--alt-test", "--min-instances", "2", "-q", "--dest", str(tmp_path / f"ag-{layout}")]) == 0
        written[layout] = [(tmp_path / f"ag-{layout}" / f).read_text(encoding="utf-8") for f in ("alt_test.csv", "alt_test_humans.csv")]
    assert written["long"] == written["wide"]
    assert "span-f1" in written["long"][0] and written["long"][1].count("\n") >= 3
