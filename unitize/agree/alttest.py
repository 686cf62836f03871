"""The alt-test on an output directory: the pairwise terms of every instance, then :mod:`unitize.metrics.alttest`.

An instance is an item (group, item) of item data, and a document (group, document) of span data — all
the layers of the setting together. Per setting, one pass over its groups gives, per instance and
ordered pair of annotators (the humans and every candidate), the term its alignment score needs
(:class:`~unitize.metrics.alttest.Term`):

- ``SAME`` / ``SQUARED`` (item labels): from the item matrix;
- ``UNITS`` (span data): the share of the document's units two annotators coded alike — from each
  document's statistics (their pairwise tables; a sparse layout's implicit units counted, so every
  layout gives the same terms);
- ``F1`` (span data): the document's span F1 (exact match; the label too in label settings; 1 when
  neither marked anything) — from the segments on the group's continuum: each document with the
  annotators who coded it (a pair's term is NaN where one of them did not).

Then each candidate is tested against the humans (:func:`~unitize.metrics.alttest.alt_test`). The
tests run in the calling process: the same for every executor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from .. import metrics as registry
from ..dataset import OutputData, Setting
from ..dataset.roles import Roles
from ..errors import RunError
from ..metrics import spanf1
from ..metrics.alttest import DECISIVE, SIZES, AltResult, AltScore, Term, compare, compare_rows, decide, instances_to_pass
from ..metrics.bootstrap import Options
from . import alttest_sparse, batches, columns
from .measure import cells_of
from .spans import Segments, segment_cell

#: the columns of alt_test.csv and alt_test_humans.csv
COLUMNS = ("setting", "candidate", "epsilon", "score", "humans", "instances", "winning_rate", "advantage_probability",
           "advantage_ci_low", "advantage_ci_high", "passed", "losing_rate", "verdict", "instances_to_pass")
HUMAN_COLUMNS = ("setting", "candidate", "human", "instances", "candidate_wins", "human_wins", "p_value", "rejected", "p_value_reverse",
                 "rejected_reverse")


@dataclass
class Instances:
    """A setting's instances: per instance and ordered annotator pair the term, and who coded it."""

    names: list[str]
    terms: np.ndarray  # (I, A, A) float, NaN where either did not code the instance
    coded: np.ndarray  # (I, A) bool


def score_for(setting: Setting, name: str | None) -> AltScore:
    """The alignment score of a setting: ``name``, or the default for its kind of data; one for the other kind is refused."""
    kind = "items" if setting.kind == "items" else "units"
    if name is None:
        return registry.ALT_TEST.default_score(kind)
    score = registry.ALT_TEST.score(name)
    if score.kind != kind:
        fits = ", ".join(s.name for s in registry.ALT_TEST.scores if s.kind == kind)
        raise RunError(f"--alt-score {name} is for {score.kind} data; setting {setting.name} holds {kind}: use {fits}")
    return score


def _pairwise(values: np.ndarray, term: Term) -> np.ndarray:
    """(I, A) values (NaN = not coded) → (I, A, A) terms."""
    x, y = values[:, :, None], values[:, None, :]
    with np.errstate(invalid="ignore"):
        t = (x == y).astype(np.float64) if term is Term.SAME else (x - y) ** 2
    return np.where(np.isnan(x) | np.isnan(y), np.nan, t)


def _numeric(categories: list[str] | None, values: np.ndarray, setting: Setting, group: str) -> np.ndarray:
    if categories is None:
        return values
    try:
        table = np.array([float(c) for c in categories] + [np.nan])
    except ValueError:
        raise RunError(f"setting {setting.name}, group {group}: neg-rmse needs numeric labels, and {group} has "
                       f"{', '.join(categories[:4])}; use --alt-score accuracy") from None
    return table[np.where(np.isnan(values), len(categories), values).astype(np.int64)]


def _items(data: OutputData, setting: Setting, term: Term) -> list[np.ndarray]:
    out = []
    for m in data.matrices(setting):
        if m.crowd is not None:
            raise RunError(f"setting {setting.name}: the alt-test needs each annotator's own labels; this matrix is counted per item")
        values = m.values if term is Term.SAME else _numeric(m.categories, m.values, setting, m.group)
        out.append(_pairwise(_columns(values, m.annotators, setting.annotators), term))
    return out


def _columns(values: np.ndarray, have: Sequence[str], wanted: Sequence[str]) -> np.ndarray:
    """``values``' columns in the order of ``wanted`` (NaN for an annotator without a column)."""
    out = np.full((values.shape[0], len(wanted)), np.nan)
    for k, name in enumerate(wanted):
        if name in have:
            out[:, k] = values[:, list(have).index(name)]
    return out


def _units(data: OutputData, setting: Setting, term: Term) -> list[np.ndarray]:
    out = []
    names = list(setting.annotators)
    segs = Segments(data.segments(setting.unit)) if term is Term.F1 and setting.unit else None
    fast = columns.fast(setting, pq.read_schema(setting.path))
    needed = None if not fast else ["group", "layer", "doc_id", "unit", *setting.annotators]
    for group, table, layers, codes in batches.group_tables(data, setting, None, needed, term is Term.UNITS, implicit=fast):
        if codes is None:
            raise RunError(f"setting {setting.name}: group {group} is crowd data, whose alt-test is measured with span F1: "
                           "use --alt-score span-f1 (the default)")
        cell = list(cells_of(setting, group, table, layers, codes, fast, term is Term.UNITS))[-1]  # every layer together
        if term is Term.UNITS:
            out.append(np.stack([_shares(s, names) for _, s in cell.per_doc or []]) if cell.per_doc else np.zeros((0, len(names), len(names))))
            continue
        placed = segment_cell(segs, cell.continuum(), cell.layers).placed(registry.ALT_TEST.name, approach="interval")
        if isinstance(placed, list):
            out.append(_f1(sum((spanf1.counts(p) for p in placed[1:]), spanf1.counts(placed[0])), names))
    return out


def _shares(s: Any, names: list[str]) -> np.ndarray:
    """(A, A): the share of a document's units each pair coded alike, from its pairwise tables."""
    out = np.full((len(names), len(names)), np.nan)
    index = [names.index(a) for a in s.annotators]
    both = s.pairs.sum(axis=(2, 3))
    alike = np.trace(s.pairs, axis1=2, axis2=3)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(both > 0, alike / np.maximum(both, 1), np.nan)
    out[np.ix_(index, index)] = share
    return out


def _f1(c: spanf1.Counts, names: list[str]) -> np.ndarray:
    """(D, A, A): each document's span F1 of every pair of the continuum's annotators (1 when neither marked anything)."""
    out = np.full((len(c.docs), len(names), len(names)), np.nan)
    k0 = spanf1.EXACT
    matched = c.matched[k0.matched].sum(axis=2)  # (P, D)
    size = c.sizes[:, k0.size].sum(axis=3)  # (2, P, D)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(size.sum(axis=0) > 0, 2 * matched / np.maximum(size.sum(axis=0), 1), 1.0)
    f1 = np.where(c.common, f1, np.nan)  # a pair where both coded the document
    for p, (a, b) in enumerate(c.pairs):
        i, j = names.index(a), names.index(b)
        out[:, i, j] = out[:, j, i] = f1[p]
        out[c.common[p], i, i] = out[c.common[p], j, j] = 1.0  # who coded the document: the diagonal
    return out


def instances(data: OutputData, setting: Setting, score: AltScore) -> Instances:
    """The pairwise terms of every instance of a setting (``data`` selected to the humans and candidates)."""
    parts = _items(data, setting, score.term) if setting.kind == "items" else _units(data, setting, score.term)
    names = list(setting.annotators)
    terms = np.concatenate(parts) if parts else np.zeros((0, len(names), len(names)))
    coded = ~np.isnan(terms[:, np.arange(len(names)), np.arange(len(names))])
    return Instances(names, terms, coded)


def as_rows(setting: Setting, score: AltScore) -> bool:
    """Whether a setting's terms are made as rows (:mod:`.alttest_sparse`): span F1 on a layout of a row per
    annotator — crowd data, too many annotators for (instances × annotators × annotators) terms."""
    return setting.kind == "units" and not setting.layout.columnar and score.term is Term.F1


def run(data: OutputData, roles: Roles, *, score: str | None = None, epsilon: float = registry.ALT_TEST.epsilon,
        q: float = registry.ALT_TEST.q, min_instances: int = registry.ALT_TEST.min_instances, ci: Options | None = None,
        settings: Sequence[str] | None = None) -> list[tuple[Setting, AltScore, AltResult]]:
    """Every candidate's alt-test in every setting (or ``settings``)."""
    chosen = [data.setting(s) for s in settings] if settings else data.settings
    out = []
    for setting in chosen:
        alt = score_for(setting, score)
        names = list(setting.annotators)
        rows = alttest_sparse.row_terms(data, setting, names) if as_rows(setting, alt) else None
        found = instances(data, setting, alt) if rows is None else None
        humans = [names.index(h) for h in roles.humans if h in names]
        for candidate in roles.candidates:
            if candidate not in names:
                continue
            at = names.index(candidate)
            if rows is not None:
                tests, n_instances = compare_rows(rows, names, humans, at, alt, min_instances), rows.instances
            else:
                assert found is not None
                tests, n_instances = compare(found.terms, found.coded, names, humans, at, alt, min_instances), found.terms.shape[0]
            result = decide(AltResult(candidate, epsilon, tests, registry.ALT_TEST.passing), n_instances, q=q, ci=ci or Options())
            if result.verdict == "inconclusive":  # how many instances would decide it (unitize plan's simulation)
                result.to_pass = instances_to_pass(result, epsilon=epsilon, q=q, min_instances=min_instances, seed=(ci or Options()).seed)
            out.append((setting, alt, result))
    return out


def tables(results: list[tuple[Setting, AltScore, AltResult]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of alt_test.csv and alt_test_humans.csv."""
    verdicts, humans = [], []
    for setting, score, r in results:
        ci = r.advantage_ci or (None, None)
        verdicts.append(dict(zip(COLUMNS, (setting.name, r.candidate, r.epsilon, score.name, len(r.tested), r.instances,
                                           _num(r.winning_rate), _num(r.advantage_probability), ci[0], ci[1], r.passed,
                                           _num(r.losing_rate), r.verdict, r.to_pass))))
        for h in r.humans:
            tested = h.skipped is None
            humans.append(dict(zip(HUMAN_COLUMNS, (setting.name, r.candidate, h.human, h.instances,
                                                   int(h.candidate_wins.sum()) if tested else None,
                                                   int(h.human_wins.sum()) if tested else None,
                                                   _num(h.p_value) if tested else None, h.rejected if tested else None,
                                                   _num(h.p_value_reverse) if tested else None, h.rejected_reverse if tested else None))))
    return verdicts, humans


def _num(x: float) -> float | None:
    return None if x != x else float(x)


def verdict_lines(results: list[tuple[Setting, AltScore, AltResult]]) -> list[str]:
    """The short verdict table for the screen, and a line per human skipped or with a NaN p-value."""
    if not results:
        return []
    alt = registry.ALT_TEST
    lines = [f"{alt.title} (ε = {results[0][2].epsilon:g}; passed when the winning rate ω ≥ {alt.passing:g}, failed when the "
             f"humans are better by ε for that share of them, else inconclusive):",
             f"  {'setting':<22} {'candidate':<16} {'humans':>6} {'instances':>9} {'ω':>5} {'ρ':>5}  {'ρ interval':<13} verdict"]
    for setting, _, r in results:
        ci = f"[{r.advantage_ci[0]:.2f}, {r.advantage_ci[1]:.2f}]" if r.advantage_ci else ""
        verdict = r.verdict + (_needed(r) if r.verdict == "inconclusive" else "")
        lines.append(f"  {setting.name:<22} {r.candidate:<16} {len(r.tested):>6} {r.instances:>9} {_shown(r.winning_rate):>5} "
                     f"{_shown(r.advantage_probability):>5}  {ci:<13} {verdict}")
        skipped = [h for h in r.humans if h.skipped is not None]
        if len(skipped) > SKIPPED_NAMED:  # crowd data: most workers share too few instances to be tested
            lines.append(f"    skipped {len(skipped)} humans sharing fewer than --min-instances instances with the candidate and "
                         "another human (alt_test_humans.csv names them)")
        for h in r.humans:
            if h.skipped is not None and len(skipped) <= SKIPPED_NAMED:
                lines.append(f"    skipped {h.human}: {h.skipped} (--min-instances)")
            elif h.skipped is None and h.p_value != h.p_value:
                lines.append(f"    {h.human}: p-value NaN (every difference equals ε): not rejected")
    return lines


#: above this many humans skipped, the screen counts them (alt_test_humans.csv names each)
SKIPPED_NAMED = 10


def _needed(r: AltResult) -> str:
    """What would decide an inconclusive verdict, in words."""
    if r.to_pass is not None:
        return f": ≈ {r.to_pass} instances would pass it with probability ≥ {DECISIVE:.0%}"
    return f": {SIZES[-1]:g}× the instances would not pass it with probability ≥ {DECISIVE:.0%} (unitize plan shows the curve)"


def _shown(x: float) -> str:
    return "–" if x != x else f"{x:.2f}"
