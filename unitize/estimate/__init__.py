"""``unitize estimate``: what a corpus says when a model labels most of it, and how stable the model is.

From an output directory with candidates (``[roles]`` or ``--candidates``) and the humans' gold (``unitize
adjudicate``), written to ``OUT/estimate/``:

- ``estimates.csv`` — per candidate, layer (span data; item data: group) and label: the label's prevalence
  (item data: the share of items holding it) or density (span data: the share of a document's units inside a
  span of it, averaged over documents) estimated by prediction-powered inference (PPI++,
  :mod:`unitize.metrics.ppi`) from the candidate's values on every observation and the gold on the ones humans
  coded (:mod:`.observations`), with its interval, beside the humans alone (classical) and the candidate alone
  (``model_only``, biased as the model is); with a ``width``, how many observations humans must code for an
  interval that wide, alone and with the candidate;
- ``stability.csv``, ``stability_curve.csv`` and ``unstable.csv`` — each family of two or more runs: flip
  rates, the majority-of-k curve and the review queue of unstable observations (:mod:`.stability`);
- ``prompts.csv`` and ``prompt_spread.csv`` — families named ``MODEL/PROMPT``: each prompt variant against the
  gold with its interval and its runs' alt-test verdicts, and each model's spread across its prompts
  (:mod:`.prompts`).

PPI's intervals hold when the observations humans coded are a random sample of all of them: the documents
(items) given to humans must be drawn at random, not picked.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..cells import value as cell_value
from ..dataset.directory import OutputData
from ..dataset.pieces import layer_pieces
from ..dataset.roles import Roles, resolve
from ..errors import RunError
from ..metrics import ppi
from ..output import atomic_write_text, csv_text, locks_output
from ..output.derived import ESTIMATE_FILES, PLAN_FILES
from . import prompts, stability
from .observations import Observed, gold_codes, human_observations, observe, only, read_gold

FOLDER = "estimate"
#: what an estimate is of (item data; span data), and what its observations are
QUANTITY = {"items": "prevalence", "units": "density"}
OBSERVATIONS = {"prevalence": "items", "density": "documents"}
#: the label of a 0/1 setting's one value (separate mode: a unit of the layer is marked or not)
MARKED = "marked"
ESTIMATES, STABILITY, CURVE, UNSTABLE, PROMPTS, SPREAD = ESTIMATE_FILES
PPI_PLAN = PLAN_FILES[-1]
COLUMNS = ("setting", "candidate", "group", "layer", "label", "quantity", "estimate", "ci_low", "ci_high", "lambda", "humans_only",
           "humans_low", "humans_high", "model_only", "labeled", "unlabeled", "undecided", "without_candidate", "effective_n",
           "corr", "humans_needed", "ppi_humans", "ppi_model_only", "ppi_cost", "reason")
STABILITY_COLUMNS = ("setting", "family", "runs", "observations", "flipped", "flip_rate", "units", "flipped_units", "unit_flip_rate",
                     "mean_entropy", "runs_needed")
CURVE_COLUMNS = ("setting", "family", "k", "choices", "agreement_with_gold", "recovery")
PROMPT_COLUMNS = ("setting", "model", "prompt", "family", "runs", "observations", "units", "metric", "value", "ci_low", "ci_high", "alt_test")
SPREAD_COLUMNS = ("setting", "model", "prompts", "metric", "best", "worst", "spread", "ci_low", "ci_high")
UNSTABLE_COLUMNS = ("setting", "family", "group", "layer", "observation", "units", "flipped_units", "entropy", "values")


@dataclass
class Plan:
    """The planning question: an interval of total ``width``, a human label costing ``human_cost``, a model's ``model_cost``."""

    width: float
    human_cost: float = 1.0
    model_cost: float = 0.01


@dataclass
class Estimates:
    path: Path
    setting: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    stability: list[dict[str, Any]] = field(default_factory=list)
    curve: list[dict[str, Any]] = field(default_factory=list)
    unstable: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    spread: list[dict[str, Any]] = field(default_factory=list)


@locks_output
def estimate(out: Path | str, *, candidates: Sequence[str] | None = None, humans: Sequence[str] | None = None, level: float = 0.95,
             tuned: bool = True, plan: Plan | None = None, humans_share: float | None = None, seed: int = 0) -> Estimates:
    """Estimate and write ``OUT/estimate`` (see the module docstring); ``tuned=False``: plain PPI (λ = 1).
    ``humans_share``: what if the humans had coded only this share of the observations they coded (a seeded random
    draw; the others count as labelled by the candidate alone)."""
    if humans_share is not None and not 0 < humans_share <= 1:
        raise RunError(f"--humans-share takes a share above 0 and at most 1, e.g. 0.3, not {humans_share}")
    data, roles, gold = _prepared(out, candidates, humans, level, plan)
    result = Estimates(data.path / FOLDER, gold.setting)
    gathered = _gather(data, gold, roles, seed)
    setting = data.setting(gold.setting)
    for candidate, layers in gathered.observed.items():
        result.rows += _estimate_rows(setting, candidate, layers, gathered.humans, 1 - level, tuned, plan, Draw(humans_share, seed))
    _family_rows(data, setting, gathered, roles, level, seed, result)
    _write(result)
    return result


#: the columns of ``unitize plan --ppi-width``'s ``OUT/plan/ppi.csv``
PLAN_COLUMNS = ("setting", "candidate", "group", "layer", "label", "quantity", "labeled", "humans_only", "corr", "humans_needed",
                "ppi_humans", "ppi_model_only", "ppi_cost")


@locks_output
def plan_labels(out: Path | str, plan: Plan, *, candidates: Sequence[str] | None = None, humans: Sequence[str] | None = None,
                level: float = 0.95) -> tuple[Path, list[dict[str, Any]]]:
    """``unitize plan --ppi-width``: per candidate and label, the human labels an interval of ``plan.width`` needs alone
    and with the candidate (PPI's power analysis, from the pilot's humans and candidate), written to ``OUT/plan/ppi.csv``."""
    data, roles, gold = _prepared(out, candidates, humans, level, plan)
    gathered, setting = _gather(data, gold, roles, 0, families=False), data.setting(gold.setting)
    rows = [r for c, layers in gathered.observed.items() for r in _estimate_rows(setting, c, layers, gathered.humans, 1 - level, True, plan,
                                                                                    Draw(None, 0))]
    dest = data.path / "plan"
    dest.mkdir(exist_ok=True)
    atomic_write_text(dest / PPI_PLAN, csv_text([PLAN_COLUMNS, *([_cell(r.get(c)) for c in PLAN_COLUMNS] for r in rows)]))
    return dest / PPI_PLAN, rows


def _prepared(out: Path | str, candidates: Sequence[str] | None, humans: Sequence[str] | None, level: float,
              plan: Plan | None) -> tuple[OutputData, Roles, Any]:
    """The output directory, its roles and the humans' gold, the options checked."""
    if not 0 < level < 1:
        raise RunError(f"--ci takes a level between 0 and 1, e.g. 0.95, not {level}")
    if plan is not None and not (plan.width > 0 and plan.human_cost > 0 and plan.model_cost >= 0):
        raise RunError("the width and a human label's cost must be above 0, a model label's cost at least 0")
    data = OutputData(Path(out))
    roles = resolve(data, candidates, humans)
    if roles is None:
        raise RunError(f"{out} names no candidates: give them (--candidates NAME[,NAME], or [roles] candidates in the study file)")
    gold = read_gold(data.path, roles)
    if gold.setting not in {s.name for s in data.settings}:
        raise RunError(f"the gold in {data.path / 'adjudication'} is of setting {gold.setting!r}, which this output no longer "
                       f"has; run `unitize adjudicate {out}` again")
    return data, roles, gold


@dataclass(frozen=True)
class Draw:
    """The share of the humans' observations kept (None: all) and the seed of the draw."""

    share: float | None
    seed: int

    def apply(self, y: np.ndarray, yhat: np.ndarray, unlabeled: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Y, Ŷ, Ŷ unlabeled) with the gold kept on a random ``share`` of the observations (at least two), the rest unlabeled."""
        if self.share is None or self.share == 1:
            return y, yhat, unlabeled
        order = np.random.default_rng(self.seed).permutation(y.shape[0])
        cut = max(2, round(self.share * y.shape[0]))
        kept, rest = order[:cut], order[cut:]
        return y[kept], yhat[kept], np.concatenate([unlabeled, yhat[rest]])


@dataclass
class Gathered:
    """What one read of the candidates' cells gives: per candidate its observations (items: per group; spans: per
    layer), per family of two runs or more its stability, and the prompt variants' scores."""

    observed: dict[str, dict[tuple[str | None, str | None], Observed]] = field(default_factory=dict)
    families: dict[str, stability.Family] = field(default_factory=dict)
    variants: prompts.Variants = field(default_factory=prompts.Variants)
    humans: dict[tuple[str | None, str | None], int] = field(default_factory=dict)  # observations humans coded, per key


def _gather(data: OutputData, gold: Any, roles: Roles, seed: int, families: bool = True) -> Gathered:
    """Read the candidates' cells once, a (group, layer) at a time — a crowd group a piece of whole documents at a time
    (every figure adds up over documents) — and hand each candidate's and family's share on."""
    sub = OutputData(data.path, roles.candidates)
    setting = sub.setting(gold.setting)
    present = [c for c in roles.candidates if c in setting.annotators]
    out = Gathered({c: {} for c in present}, humans=human_observations(gold.table, setting.kind == "items"))
    runs = {name: [r for r in rs if r in setting.annotators] for name, rs in roles.families.items()} if families else {}
    out.families = {name: stability.Family(rs, seed) for name, rs in runs.items() if len(rs) > 1}
    for cells in (piece for _, _, pieces in layer_pieces(sub, setting) for piece in pieces):  # a crowd group: whole documents at a time
        golden = gold_codes(gold.table, cells)
        key = (cells.group, None) if cells.items else (None, cells.layer)
        for c in present:
            if (mine := only(cells, [c])) is not None:
                observe(mine, golden, out.observed[c].setdefault(key, Observed()))
        for name, rs in runs.items():
            if (theirs := only(cells, rs)) is None:
                continue
            if name in out.families:
                stability.add(out.families[name], theirs, golden)
            if prompts.variant(name):
                out.variants.add(name, theirs, golden)
    return out


def _estimate_rows(setting: Any, candidate: str, layers: dict[tuple[str | None, str | None], Observed], humans: dict[Any, int], alpha: float,
                   tuned: bool, plan: Plan | None, draw: Draw) -> list[dict[str, Any]]:
    """The rows of one candidate: one per (group or layer, label); ``humans``: the observations humans coded, per key."""
    quantity = QUANTITY[setting.kind]
    rows = []
    for (group, layer), observed in layers.items():
        labels, *arrays = observed.arrays()
        if setting.value == "binary":  # a 0/1 setting (separate mode): its one label is the layer marked
            labels = [MARKED if label == "1" else label for label in labels]
        shared = arrays[0].shape[0] + observed.undecided  # coded by the humans and the candidate
        y, yhat, unlabeled = draw.apply(*arrays)
        base = {"setting": setting.name, "candidate": candidate, "group": group, "layer": layer, "quantity": quantity, "labeled": y.shape[0],
                "unlabeled": unlabeled.shape[0], "undecided": observed.undecided,
                "without_candidate": humans.get((group, layer), 0) - shared}
        rows += _label_rows(base, labels, y, yhat, unlabeled, alpha, tuned, plan)
    return rows


def _label_rows(base: dict[str, Any], labels: list[str], y: np.ndarray, yhat: np.ndarray, unlabeled: np.ndarray, alpha: float,
                tuned: bool, plan: Plan | None) -> list[dict[str, Any]]:
    if y.shape[0] < 2:
        why = f"{y.shape[0]} observation(s) with the humans' gold: an interval needs at least two"
        return [{**base, "label": label, "reason": why} for label in labels]
    e = ppi.mean_estimate(y, yhat, unlabeled, alpha=alpha, lam=None if tuned else 1.0)
    every = np.concatenate([yhat, unlabeled])
    rows = []
    for k, label in enumerate(labels):
        row = {**base, "label": label, "estimate": float(e.estimate[k]), "ci_low": float(e.low[k]), "ci_high": float(e.high[k]),
               "lambda": float(e.lam[k]), "humans_only": float(e.classical[k]), "humans_low": float(e.classical_low[k]),
               "humans_high": float(e.classical_high[k]), "model_only": float(every[:, k].mean()),
               "effective_n": float(e.effective_n[k]), "corr": ppi.correlation(y[:, k], yhat[:, k]),
               "reason": None if unlabeled.shape[0] else "every observation has the humans' gold: the estimate is theirs (λ = 0)"}
        if plan is not None:
            row.update(_planned(y[:, k], row["corr"], alpha, plan))
        rows.append(row)
    return rows


def _planned(y: np.ndarray, corr: float, alpha: float, plan: Plan) -> dict[str, Any]:
    """Human labels for an interval of the plan's width: alone, and with the candidate (the cheapest PPI pair)."""
    needed = ppi.classical_n(y, plan.width, alpha)
    pair = ppi.cheapest_pair(corr, needed, plan.human_cost, plan.model_cost)
    return {"humans_needed": needed, "ppi_humans": pair.n, "ppi_model_only": pair.N, "ppi_cost": pair.cost}


def _family_rows(data: OutputData, setting: Any, gathered: Gathered, roles: Roles, level: float, seed: int, result: Estimates) -> None:
    """The families' stability rows and the prompt variants' tables."""
    for name, family in gathered.families.items():
        _stability_rows(setting.name, name, family, result)
    rows, spread = prompts.table(gathered.variants, roles.families, level, seed)
    verdicts = _verdicts(data.path)
    result.prompts = [{"setting": setting.name, **r, "alt_test": _alt_summary(verdicts, setting.name, roles.families[r["family"]])}
                      for r in rows]
    result.spread = [{"setting": setting.name, **r} for r in spread]


def _stability_rows(setting: str, name: str, family: stability.Family, result: Estimates) -> None:
    curve = stability.curve_rows(family)
    result.stability.append({"setting": setting, "family": name, "runs": len(family.runs), "observations": family.observations,
                             "flipped": family.flipped, "flip_rate": _share(family.flipped, family.observations),
                             "units": family.units, "flipped_units": family.flipped_units,
                             "unit_flip_rate": _share(family.flipped_units, family.units),
                             "mean_entropy": _share(family.entropy, family.units), "runs_needed": stability.runs_needed(curve)})
    result.curve += [{"setting": setting, "family": name, **r} for r in curve]
    queue = sorted(family.unstable, key=lambda r: (-r["entropy"], r["group"], r["layer"] or "", r["observation"]))
    result.unstable += [{"setting": setting, "family": name, **r} for r in queue]


def _verdicts(out: Path) -> list[dict[str, str]]:
    """The alt-test's verdicts of ``unitize agree --alt-test`` (agreement/alt_test.csv), when there are."""
    path = out / "agreement" / "alt_test.csv"
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def _alt_summary(verdicts: list[dict[str, str]], setting: str, runs: list[str]) -> str | None:
    """A variant's runs' alt-test verdicts, e.g. ``passed 2, inconclusive 1`` (None: no alt-test of them)."""
    found = Counter(cell_value(v.get("verdict") or "") for v in verdicts if v.get("setting") == setting and cell_value(v.get("candidate") or "") in runs)
    return ", ".join(f"{k} {n}" for k, n in sorted(found.items())) or None


def _share(part: float, whole: int) -> float | None:
    return part / whole if whole else None


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return value


def _write(result: Estimates) -> None:
    result.path.mkdir(exist_ok=True)
    for name, columns, rows in ((ESTIMATES, COLUMNS, result.rows), (STABILITY, STABILITY_COLUMNS, result.stability),
                                (CURVE, CURVE_COLUMNS, result.curve), (UNSTABLE, UNSTABLE_COLUMNS, result.unstable),
                                (PROMPTS, PROMPT_COLUMNS, result.prompts), (SPREAD, SPREAD_COLUMNS, result.spread)):
        atomic_write_text(result.path / name, csv_text([columns, *([_cell(r.get(c)) for c in columns] for r in rows)]))
