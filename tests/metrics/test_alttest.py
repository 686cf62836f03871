"""The alt-test (Calderon, Reichart & Dror 2025): a hand-computed case, and data of our own checked against the
reference procedure (the ``alt_test`` function of the paper's repository, run outside this project on the data below).

The reference's bundled data sets carry no licence, so they are not copied here; run on them, the port reproduces
every winning rate and advantage probability its notebook prints (52 of 52 model × data set rows, to two decimals).
"""

from __future__ import annotations

import numpy as np
import pytest

from unitize.metrics import ALT_TEST
from unitize.metrics.alttest import alt_test as run_alt_test
from unitize.metrics.alttest import by_rejected, pass_probability
from unitize.metrics.bootstrap import Options

ACCURACY, NEG_RMSE = ALT_TEST.score("accuracy"), ALT_TEST.score("neg-rmse")


def _terms(labels: list[str], squared: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise terms and who coded what from one string per annotator ('-' = not coded)."""
    coded = np.array([[c != "-" for c in row] for row in labels]).T
    values = np.array([[float(c) if c != "-" else np.nan for c in row] for row in labels]).T
    x, y = values[:, :, None], values[:, None, :]
    terms = (x - y) ** 2 if squared else (x == y).astype(float)
    return np.where(coded[:, :, None] & coded[:, None, :], terms, np.nan), coded


def test_a_case_computed_by_hand() -> None:
    # items 1-6; A = 0, B = 1. Left out h1: every item a tie, d = 0 throughout: t = (0 - .2) / 0 = -inf, p = 0
    # (with ε = 0 it is 0/0: a NaN p-value, not rejected);
    # h2: the candidate wins items 2 and 6 outright, d = 0,-1,0,0,0,-1, t = (-1/3 - .2) / (.5164/√6) = -2.5298, p = .02627;
    # h3: d = 0,0,0,0,-1,0, t = (-1/6 - .2) / (.4082/√6) = -2.2, p = .03955.
    terms, coded = _terms(["001100", "011001", "001110", "001000"])
    names = ["h1", "h2", "h3", "c"]
    r = run_alt_test(terms, coded, names, [0, 1, 2], 3, ACCURACY, epsilon=0.2, q=0.05, min_instances=6)
    assert [round(h.p_value, 5) for h in r.humans] == [0.0, 0.02627, 0.03955]
    assert [h.human_wins.tolist() for h in r.humans] == [[1] * 6, [1, 0, 1, 1, 1, 0], [1, 1, 1, 1, 0, 1]]
    # Benjamini–Yekutieli, m = 3, H = 11/6: thresholds .00909, .01818, .02727 at q = .05 — h1 alone rejected
    assert ([h.rejected for h in r.humans], r.winning_rate, r.advantage_probability, r.passed) == ([True, False, False], 1 / 3, 1.0, False)
    # the reverse test (a human better than the candidate by ε) is rejected for no one: not failed, inconclusive
    assert ([h.rejected_reverse for h in r.humans], r.losing_rate, r.verdict) == ([False] * 3, 0.0, "inconclusive")
    # at q = .2 the thresholds are .03636, .07273, .10909: all three rejected
    r = run_alt_test(terms, coded, names, [0, 1, 2], 3, ACCURACY, epsilon=0.2, q=0.2, min_instances=6)
    assert (r.winning_rate, r.passed, r.verdict) == (1.0, True, "passed")
    r = run_alt_test(terms, coded, names, [0, 1, 2], 3, ACCURACY, epsilon=0.0, q=0.2, min_instances=6)
    assert (r.humans[0].p_value != r.humans[0].p_value, r.humans[0].rejected) == (True, False)
    assert by_rejected([0.04, float("nan"), 0.001], 0.2) == [0, 2]


def test_a_candidate_the_humans_beat_fails() -> None:
    """The humans agree on 28 of 30 items, the candidate gives the other label on 26: each human is better than the
    candidate by more than ε, the reverse test is rejected for all three, the verdict is failed (not inconclusive)."""
    humans = ["0" * 28 + "11", "0" * 28 + "10", "0" * 27 + "111"]
    candidate = "1" * 26 + "0" * 4
    terms, coded = _terms([*humans, candidate])
    r = run_alt_test(terms, coded, ["h1", "h2", "h3", "c"], [0, 1, 2], 3, ACCURACY, epsilon=0.2, q=0.05, min_instances=10)
    assert (r.winning_rate, r.losing_rate, r.verdict) == (0.0, 1.0, "failed")
    assert all(h.p_value_reverse < 0.001 for h in r.humans)


OWN = ["0-11101-011010000-212111020100-121020102", "220-00011-22100002212-01---1010102021102",
       "011-011002021202-221212010020-22010201-2", "0211000101-2-0100221220210010001010200-2"]
MODEL = "0211001001121000022121210001022102020102"


@pytest.mark.parametrize(("score", "epsilon", "expected"), [
    (ACCURACY, 0.1, (1.0, 0.9656531531531531)), (ACCURACY, 0.2, (1.0, 0.9656531531531531)),
    (NEG_RMSE, 0.1, (0.75, 0.9513557675322382)), (NEG_RMSE, 0.2, (1.0, 0.9513557675322382)),
])
def test_data_of_our_own_as_the_reference_procedure_gives_it(score, epsilon, expected) -> None:
    terms, coded = _terms([*OWN, MODEL], squared=score is NEG_RMSE)
    r = run_alt_test(terms, coded, ["h1", "h2", "h3", "h4", "llm"], [0, 1, 2, 3], 4, score, epsilon=epsilon)
    assert (r.winning_rate, r.advantage_probability) == pytest.approx(expected, abs=1e-12)
    assert [h.instances for h in r.humans] == [36, 34, 36, 37]  # h3 alone on one item


def test_skips_the_interval_and_the_pass_probability() -> None:
    terms, coded = _terms([*OWN, MODEL])
    r = run_alt_test(terms, coded, ["h1", "h2", "h3", "h4", "llm"], [0, 1, 2, 3], 4, ACCURACY, min_instances=35,
                     ci=Options(replicates=200, seed=3))
    assert [h.skipped is not None for h in r.humans] == [False, True, False, False]
    assert r.humans[1].skipped == "34 instance(s) shared with the candidate and another human, fewer than 35"
    low, high = r.advantage_ci
    assert low < r.advantage_probability <= high <= 1
    again = run_alt_test(terms, coded, ["h1", "h2", "h3", "h4", "llm"], [0, 1, 2, 3], 4, ACCURACY, min_instances=35,
                         ci=Options(replicates=200, seed=3))
    assert again.advantage_ci == r.advantage_ci  # seeded
    tested = r.tested
    small = pass_probability(tested, 40, 10, epsilon=0.2, q=0.05, min_instances=5, replicates=200, seed=1)
    large = pass_probability(tested, 40, 160, epsilon=0.2, q=0.05, min_instances=5, replicates=200, seed=1)
    assert 0 <= small < large == 1.0
    none = run_alt_test(terms, coded, ["h1", "h2", "h3", "h4", "llm"], [0, 1, 2, 3], 4, ACCURACY, min_instances=50)
    assert (none.tested, none.passed, none.winning_rate != none.winning_rate) == ([], False, True)
