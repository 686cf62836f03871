"""The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025): can a candidate (a model) replace a human?

The procedure of the paper's reference code (``alt_test`` of the AltTest repository), on arrays:

- the data are, per instance *i* and ordered pair of annotators (x, r), a pairwise term ``P[i, x, r]``
  (NaN where x or r did not code *i*); an :class:`AltScore` turns the terms of x against a set R of
  humans into x's alignment score with R (:meth:`AltScore.score`: the mean of the terms, or minus the
  root of their mean for ``neg-rmse``);
- for each human *h* with at least ``min_instances`` instances that *h*, the candidate *c* and at least
  one other human coded: on each, the score of *c* and of *h* against the *remaining* humans R;
  W_c = [score_c ≥ score_h], W_h = [score_h ≥ score_c] (a tie counts for both);
- the p-value of ``scipy.stats.ttest_1samp(W_h − W_c, ε, alternative="less")`` (H0: the human's
  advantage is at least ε); a NaN p-value (all differences equal) is not rejected, and reported;
- Benjamini–Yekutieli at level q over the humans tested (:func:`by_rejected`);
- **winning rate** ω = rejected / tested, **passed** when ω ≥ 0.5; **advantage probability**
  ρ = the mean over the tested humans of mean(W_c), with a percentile bootstrap interval from
  resampling the instances (:func:`advantage_interval`).

scipy (the ``agree`` extra) is imported when a test runs, not with this module.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from . import spanboot
from .bootstrap import Options
from .value import require

#: the paper's guidance for ε: crowd workers, skilled annotators, experts (the default)
EPSILON_GUIDANCE = {"crowd": 0.1, "skilled": 0.15, "expert": 0.2}


class Term(Enum):
    """The pairwise term of an alignment score, per instance and pair of annotators."""

    SAME = "1 when the two labels are equal, else 0"
    SQUARED = "the squared difference of the two (numeric) labels"
    UNITS = "the share of the document's units the two coded alike"
    F1 = "the span F1 of the two on the document (1 when neither marked anything)"


@dataclass(frozen=True)
class AltScore:
    """An alignment score of the alt-test: how an annotator's coding of an instance agrees with a set of humans.

    ``term`` is the pairwise term (:mod:`unitize.agree` computes it for the data the score is for:
    ``kind`` ``items`` or ``units``); ``root`` — the score is −√mean(terms) (the terms are squared
    differences), else mean(terms)."""

    name: str
    title: str
    help: str
    kind: str  # "items" (item labels) or "units" (span data: an instance is a document)
    term: Term
    root: bool = False

    def score(self, terms: np.ndarray) -> np.ndarray:
        """Per row, the score from the terms of the annotator against each remaining human (NaN: none)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row without a term: NaN
            mean = np.nanmean(terms, axis=-1)
        return -np.sqrt(mean) if self.root else mean


@dataclass(frozen=True)
class AltTest:
    """The alt-test as declared: what it is called, its source, its scores and defaults."""

    name: str
    title: str
    source: str
    help: str
    scores: tuple[AltScore, ...]
    epsilon: float = 0.2
    q: float = 0.05
    min_instances: int = 30
    passing: float = 0.5  # the winning rate at which the candidate passes

    def score(self, name: str) -> AltScore:
        for s in self.scores:
            if s.name == name:
                return s
        raise KeyError(name)

    def default_score(self, kind: str) -> AltScore:
        """The first score declared for ``kind`` of data."""
        return next(s for s in self.scores if s.kind == kind)


@dataclass
class HumanTest:
    """One human's comparison with the candidate."""

    human: str
    instances: int
    candidate_wins: np.ndarray  # (instances,) W_c
    human_wins: np.ndarray  # (instances,) W_h
    rows: np.ndarray  # (instances,) the instances' indices
    p_value: float = float("nan")
    rejected: bool = False
    #: the reverse test: the human is better than the candidate by more than ε (``alternative="greater"``)
    p_value_reverse: float = float("nan")
    rejected_reverse: bool = False
    skipped: str | None = None  # why the human was not tested


@dataclass
class AltResult:
    """The alt-test of one candidate: per human, and the verdict."""

    candidate: str
    epsilon: float
    humans: list[HumanTest] = field(default_factory=list)
    passing: float = 0.5
    winning_rate: float = float("nan")
    #: the share of humans whose reverse test is rejected (better than the candidate by ε)
    losing_rate: float = float("nan")
    advantage_probability: float = float("nan")
    advantage_ci: tuple[float, float] | None = None
    #: an inconclusive verdict: the instances on which it would pass with probability ≥ :data:`DECISIVE` (None: not within
    #: :data:`SIZES` × the pilot's), from :func:`instances_to_pass`
    to_pass: int | None = None

    @property
    def tested(self) -> list[HumanTest]:
        return [h for h in self.humans if h.skipped is None]

    @property
    def passed(self) -> bool:
        return bool(self.tested) and self.winning_rate >= self.passing

    @property
    def verdict(self) -> str:
        """``passed`` (ω ≥ the passing rate), ``failed`` only when the reverse test is rejected for at least that
        share of the humans (they are better than the candidate by ε), else ``inconclusive``; ``not tested``."""
        if not self.tested:
            return "not tested"
        if self.passed:
            return "passed"
        return "failed" if self.losing_rate >= self.passing else "inconclusive"

    @property
    def instances(self) -> int:
        """Instances any tested human was compared on."""
        rows = [h.rows for h in self.tested]
        return int(np.unique(np.concatenate(rows)).size) if rows else 0


def by_rejected(p_values: Sequence[float], q: float) -> list[int]:
    """Benjamini–Yekutieli (step-up, any dependence) at level ``q``: the indices of the rejected
    hypotheses, as the reference's ``by_procedure`` (a NaN p-value sorts last and is never rejected)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p)  # NaN last
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    thresholds = np.arange(1, m + 1) / m * (q / harmonic)
    below = np.flatnonzero(p[order] <= thresholds)
    return sorted(order[: below[-1] + 1].tolist()) if below.size else []


def one_sided_p(differences: np.ndarray, epsilon: float, alternative: str = "less") -> float:
    """``scipy.stats.ttest_1samp(differences, epsilon, alternative=alternative).pvalue`` (NaN when constant):
    ``less`` is the alt-test's own test, ``greater`` its reverse."""
    ttest_1samp = require("scipy.stats", "agree").ttest_1samp
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's "nearly identical" data: its p-value stands, as the reference's
        return float(ttest_1samp(differences, epsilon, alternative=alternative).pvalue)


def compare(terms: np.ndarray, coded: np.ndarray, names: Sequence[str], humans: Sequence[int], candidate: int,
            score: AltScore, min_instances: int) -> list[HumanTest]:
    """Each human's indicators against the candidate (no test yet).

    ``terms`` (I, A, A): the pairwise terms; ``coded`` (I, A) bool: who coded each instance; ``humans``
    and ``candidate`` index the annotators ``names``."""
    out = []
    for h in humans:
        others = [g for g in humans if g != h]
        remaining = coded[:, others]
        rows = np.flatnonzero(coded[:, h] & coded[:, candidate] & remaining.any(axis=1))
        test = HumanTest(names[h], int(rows.size), np.zeros(0), np.zeros(0), rows)
        if rows.size < min_instances:
            test.skipped = f"{rows.size} instance(s) shared with the candidate and another human, fewer than {min_instances}"
            out.append(test)
            continue
        mask = remaining[rows]
        h_score = score.score(np.where(mask, terms[rows][:, h][:, others], np.nan))
        c_score = score.score(np.where(mask, terms[rows][:, candidate][:, others], np.nan))
        test.candidate_wins = (c_score >= h_score).astype(np.float64)
        test.human_wins = (h_score >= c_score).astype(np.float64)
        out.append(test)
    return out


@dataclass
class TermRows:
    """The pairwise terms as rows, for many annotators each coding a few instances (crowd data): one row per
    ordered pair of two annotators who coded an instance, sorted by (annotator, instance, other)."""

    instance: np.ndarray  # (R,) int64
    annotator: np.ndarray  # (R,) int64 into the names
    other: np.ndarray  # (R,) int64
    term: np.ndarray  # (R,) float
    instances: int


def compare_rows(rows: TermRows, names: Sequence[str], humans: Sequence[int], candidate: int, score: AltScore,
                 min_instances: int) -> list[HumanTest]:
    """:func:`compare` from :class:`TermRows`: each human against the candidate on the instances both coded with
    another human, each scored over the remaining humans who coded the instance."""
    human = np.zeros(len(names), bool)
    human[list(humans)] = True
    sel = human[rows.other]
    inst, who, other, term = rows.instance[sel], rows.annotator[sel], rows.other[sel], rows.term[sel]
    bounds = np.searchsorted(who, np.arange(len(names) + 1))
    lo, hi = bounds[candidate], bounds[candidate + 1]
    cand_key = inst[lo:hi] * len(names) + other[lo:hi]  # sorted: by instance, then other
    out = []
    for h in humans:
        a, b = bounds[h], bounds[h + 1]
        h_inst, h_other = inst[a:b], other[a:b]
        key = h_inst * len(names) + h_other  # the candidate's row with the same instance and other human
        at = np.minimum(np.searchsorted(cand_key, key), max(cand_key.size - 1, 0))
        both = (cand_key[at] == key) if cand_key.size else np.zeros(h_inst.size, bool)
        both &= h_other != candidate
        h_inst, h_term, c_term = h_inst[both], term[a:b][both], term[lo:hi][at[both]]
        starts = np.flatnonzero(np.r_[True, h_inst[1:] != h_inst[:-1]]) if h_inst.size else np.zeros(0, np.int64)
        picked = h_inst[starts]
        test = HumanTest(names[h], int(picked.size), np.zeros(0), np.zeros(0), picked)
        if picked.size < min_instances:
            test.skipped = f"{picked.size} instance(s) shared with the candidate and another human, fewer than {min_instances}"
            out.append(test)
            continue
        h_score, c_score = _row_scores(score, h_term, starts), _row_scores(score, c_term, starts)
        test.candidate_wins = (c_score >= h_score).astype(np.float64)
        test.human_wins = (h_score >= c_score).astype(np.float64)
        out.append(test)
    return out


def _row_scores(score: AltScore, terms: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per run of rows (one instance), the score of its terms (NaN terms left out, as ``np.nanmean``)."""
    finite = np.isfinite(terms)
    total = np.add.reduceat(np.where(finite, terms, 0.0), starts)
    n = np.add.reduceat(finite.astype(np.int64), starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return -np.sqrt(mean) if score.root else mean


def alt_test(terms: np.ndarray, coded: np.ndarray, names: Sequence[str], humans: Sequence[int], candidate: int, score: AltScore, *,
             epsilon: float = 0.2, q: float = 0.05, min_instances: int = 30, passing: float = 0.5,
             ci: Options | None = None) -> AltResult:
    """The alt-test of one candidate (see the module docstring)."""
    tests = compare(terms, coded, names, humans, candidate, score, min_instances)
    return decide(AltResult(names[candidate], epsilon, tests, passing), terms.shape[0], q=q, ci=ci)


def decide(result: AltResult, n_instances: int, *, q: float = 0.05, ci: Options | None = None) -> AltResult:
    """Each tested human's one-sided tests (and their reverse), the winning and losing rates, ρ and its interval."""
    epsilon = result.epsilon
    tested = result.tested
    if not tested:
        return result
    for t in tested:
        t.p_value = one_sided_p(t.human_wins - t.candidate_wins, epsilon)
    for k in by_rejected([t.p_value for t in tested], q):
        tested[k].rejected = True
    result.winning_rate = sum(t.rejected for t in tested) / len(tested)
    for t in tested:
        t.p_value_reverse = one_sided_p(t.human_wins - t.candidate_wins, epsilon, "greater")
    for k in by_rejected([t.p_value_reverse for t in tested], q):
        tested[k].rejected_reverse = True
    result.losing_rate = sum(t.rejected_reverse for t in tested) / len(tested)
    result.advantage_probability = float(np.mean([t.candidate_wins.mean() for t in tested]))
    if ci is not None:
        result.advantage_ci = advantage_interval(tested, n_instances, ci)
    return result


#: elements of a block of bootstrap draws (replicates × instances) held at once: memory does not grow with the replicates
_BLOCK = 1 << 20


def _blocks(rng: np.random.Generator, replicates: int, n_instances: int, size: int) -> Iterator[np.ndarray]:
    """The draws (replicates × size instances, with replacement) a block of replicates at a time; the same
    numbers as drawing them all at once (the generator's stream is consumed in the same order)."""
    step = max(1, _BLOCK // max(1, size))
    for start in range(0, replicates, step):
        yield rng.integers(0, n_instances, size=(min(step, replicates - start), size))


def advantage_interval(tested: Sequence[HumanTest], n_instances: int, opts: Options) -> tuple[float, float] | None:
    """The percentile bootstrap interval of ρ: the instances resampled with replacement, ρ recomputed
    (a block of replicates at a time)."""
    if n_instances < 2:
        return None
    blocks = []
    for draws in _blocks(np.random.default_rng(opts.seed), opts.replicates, n_instances, n_instances):
        weights = spanboot.weights(draws, n_instances)
        with np.errstate(invalid="ignore", divide="ignore"):  # sums of whole numbers: exact, in any order
            per = [(weights[:, t.rows] @ t.candidate_wins) / weights[:, t.rows].sum(axis=1) for t in tested]
        blocks.append(np.nanmean(np.stack(per), axis=0) if per else np.zeros(0))
    reps = np.concatenate(blocks) if blocks else np.zeros(0)
    reps = reps[np.isfinite(reps)]
    if reps.size == 0:
        return None
    tail = (1 - opts.level) / 2 * 100
    low, high = np.percentile(reps, [tail, 100 - tail])
    return float(low), float(high)


#: the sizes tried for an inconclusive verdict, as multiples of the instances tested (unitize plan's, above 1×)
SIZES = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
#: the pass probability at which a size counts as enough to decide
DECISIVE = 0.8


def instances_to_pass(result: AltResult, *, epsilon: float, q: float, min_instances: int, replicates: int = 200, seed: int = 0) -> int | None:
    """The fewest instances (of :data:`SIZES` × those tested) on which ``result``'s candidate would pass with probability
    ≥ :data:`DECISIVE`, by :func:`pass_probability` on the pilot's own wins; None when none of them does."""
    found = [h for h in result.tested if h.candidate_wins.size]
    if not found:
        return None
    n = int(max(h.rows.max() for h in found)) + 1
    pilot = result.instances
    for factor in SIZES:
        size = max(1, round(pilot * factor))
        p = pass_probability(found, n, size, epsilon=epsilon, q=q, min_instances=min_instances, replicates=replicates, seed=seed,
                             passing=result.passing)
        if p >= DECISIVE:
            return size
    return None


def pass_probability(tested: Sequence[HumanTest], n_instances: int, size: int, *, epsilon: float, q: float, min_instances: int,
                     replicates: int, seed: int, passing: float = 0.5) -> float:
    """How often the alt-test passes on ``size`` instances drawn with replacement from the pilot's
    ``n_instances`` (each human tested on the drawn instances it has, the same t-test in closed form)."""
    student = require("scipy.stats", "agree").t
    found = [(t.rows, t.human_wins - t.candidate_wins) for t in tested]
    passed = 0
    for draws in _blocks(np.random.default_rng(seed), replicates, n_instances, size):  # a block of replicates at a time
        rows = draws.shape[0]
        drawn = spanboot.weights(draws, n_instances)  # per replicate, how often each instance was drawn
        p = np.full((rows, len(tested)), np.nan)
        enough = np.zeros((rows, len(tested)), bool)
        for k, (at, diff) in enumerate(found):
            w = drawn[:, at]
            n = w.sum(axis=1)  # a human's drawn instances: the counts of its own, never a draws-long array
            enough[:, k] = n >= min_instances
            levels = np.unique(diff)
            times = [w @ (diff == x) for x in levels]  # whole numbers: exact
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = sum(x * c for x, c in zip(levels, times)) / n
                sd = np.sqrt(sum(c * (x - mean) ** 2 for x, c in zip(levels, times)) / (n - 1))
                p[:, k] = student.cdf((mean - epsilon) / (sd / np.sqrt(n)), n - 1)
        for r in range(draws.shape[0]):
            cols = np.flatnonzero(enough[r])
            if cols.size and len(by_rejected(p[r, cols], q)) / cols.size >= passing:
                passed += 1
    return passed / replicates

