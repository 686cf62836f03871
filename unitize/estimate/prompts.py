"""Prompt sensitivity: a model's prompt variants side by side, and how far apart they are.

Families named ``MODEL/PROMPT`` (``[roles] candidates = ["gpt4/zeroshot=gpt4-zs1+gpt4-zs2", "gpt4/cot=…"]``) are the
prompt variants of one model. Each variant is scored against the humans' gold on the units its runs coded, its
runs pooled: item data by **accuracy** against the gold (``gold-accuracy``: the share of units with a decided gold
where the run's value is the gold's), span data by **unit F1** against the gold (``gold-unit-f1``) over the marked
units (2·TP / (2·TP + FP + FN): a unit is a true positive where the run and the gold give it the same label, not the
empty one), so that the many unmarked units do not make every variant look alike. Both are ratios of sums over
observations (items; documents), so the observations are resampled together for every variant (:data:`REPLICATES`
seeded bootstrap replicates): each variant's percentile interval, and the model's **spread** — its best variant's
value minus its worst's — with its interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..dataset.regions import Cells
from ..metrics import spanboot
from .observations import Golden

#: the scores of a variant against the gold (not agreement metrics of the registry: one side is the gold)
GOLD_ACCURACY, GOLD_UNIT_F1 = "gold-accuracy", "gold-unit-f1"
#: bootstrap replicates of the variants' intervals and the spread's
REPLICATES = 1000
#: replicates drawn at once (memory: this many × observations weights)
CHUNK = 50


def variant(family: str) -> tuple[str, str] | None:
    """(model, prompt) of a family named ``MODEL/PROMPT``; None for another name."""
    model, sep, prompt = family.partition("/")
    return (model, prompt) if sep and model.strip() and prompt.strip() else None


@dataclass
class Variants:
    """Per variant (family), per observation: the score's numerator and denominator, added up over its runs."""

    items: bool = False
    at: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (group, layer, observation) -> column
    sums: dict[str, dict[int, list[float]]] = field(default_factory=dict)  # family -> observation -> [numerator, denominator]
    units: dict[str, int] = field(default_factory=dict)

    def add(self, family: str, cells: Cells, golden: Golden) -> None:
        """One (group, layer) of a family's runs (``cells`` holds them alone)."""
        self.items = cells.items
        names, gold_code = golden.names, golden.code
        index = {n: k for k, n in enumerate(names)}
        empty = cells.name(cells.empty) if cells.empty is not None else None
        to_gold = np.array([index.get(cells.name(k), -2) for k in range(len(cells.values))] + [-2], np.int64)
        mine = to_gold[cells.cell_code]
        truth = gold_code[cells.cell_row]
        decided = truth >= 0
        if cells.items:
            numerator, denominator = (decided & (mine == truth)).astype(float), decided.astype(float)
        else:
            marked_run = decided & (cells.cell_code != (-1 if cells.empty is None else cells.empty))
            marked_gold = decided & (truth != index.get(empty, -3) if empty is not None else decided)
            hit = marked_run & marked_gold & (mine == truth)
            numerator = 2.0 * hit
            denominator = 2.0 * hit + (marked_run & ~hit) + (marked_gold & ~hit)
        docs = cells.row_doc[cells.cell_row]
        n = len(cells.docs)
        num, den = np.bincount(docs, weights=numerator, minlength=n), np.bincount(docs, weights=denominator, minlength=n)
        own = self.sums.setdefault(family, {})
        for d in np.flatnonzero(np.bincount(docs, minlength=n)).tolist():
            key = self.at.setdefault((cells.group, "" if cells.items else cells.layer, cells.docs[d]), len(self.at))
            pair = own.setdefault(key, [0.0, 0.0])
            pair[0] += float(num[d])
            pair[1] += float(den[d])
        self.units[family] = self.units.get(family, 0) + int(decided.sum())

    def matrices(self, families: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Observations × families: numerators and denominators (0 where a family did not code the observation)."""
        num, den = np.zeros((len(self.at), len(families))), np.zeros((len(self.at), len(families)))
        for j, f in enumerate(families):
            for key, (a, b) in self.sums.get(f, {}).items():
                num[key, j], den[key, j] = a, b
        return num, den


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def replicates(num: np.ndarray, den: np.ndarray, seed: int, count: int = REPLICATES) -> np.ndarray:
    """``count`` × families: each family's score on the observations drawn with replacement, the same draw for all."""
    rng = np.random.default_rng(seed)
    n = num.shape[0]
    out = []
    for start in range(0, count, CHUNK):
        size = min(CHUNK, count - start)
        weights = spanboot.weights(rng.integers(0, n, (size, n)), n)
        out.append(_ratio(weights @ num, weights @ den))
    return np.concatenate(out) if out else np.zeros((0, num.shape[1]))


def table(found: Variants, families: dict[str, list[str]], level: float, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of prompts.csv (a variant each) and prompt_spread.csv (a model each)."""
    named = {f: v for f in families if (v := variant(f)) is not None and f in found.sums}  # family -> (model, prompt)
    if not named:
        return [], []
    num, den = found.matrices(list(named))
    value = _ratio(num.sum(0), den.sum(0))
    draws = replicates(num, den, seed)
    low, high = (1 - level) / 2, 1 - (1 - level) / 2
    metric = GOLD_ACCURACY if found.items else GOLD_UNIT_F1
    rows = [{"model": model, "prompt": prompt, "family": f, "runs": len(families[f]),
             "observations": int((den[:, j] > 0).sum()), "units": found.units.get(f, 0), "metric": metric,
             "value": _finite(value[j]), **_interval(draws[:, j], low, high)} for j, (f, (model, prompt)) in enumerate(named.items())]
    spread = []
    for model in dict.fromkeys(r["model"] for r in rows):
        cols = [j for j, r in enumerate(rows) if r["model"] == model]
        if len(cols) < 2:
            continue
        best, worst = max(cols, key=lambda j: value[j]), min(cols, key=lambda j: value[j])
        spread.append({"model": model, "prompts": len(cols), "metric": metric, "best": rows[best]["prompt"], "worst": rows[worst]["prompt"],
                       "spread": _finite(value[best] - value[worst]),
                       **_interval(_range(draws[:, cols]), low, high)})
    return rows, spread


def _range(values: np.ndarray) -> np.ndarray:
    """Per replicate: the best variant's value minus the worst's (NaN where a replicate drew none of a variant's)."""
    return np.where(np.isfinite(values).all(1), np.max(values, 1, initial=-np.inf) - np.min(values, 1, initial=np.inf), np.nan)


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _interval(values: np.ndarray, low: float, high: float) -> dict[str, float | None]:
    kept = values[np.isfinite(values)]
    if kept.size == 0:
        return {"ci_low": None, "ci_high": None}
    return {"ci_low": float(np.quantile(kept, low)), "ci_high": float(np.quantile(kept, high))}
