"""How stable a candidate family is: its runs (``gpt-run1`` … ``gpt-run5``) against each other and the gold.

On the units (items) every run of the family coded:

- **flip rate**: the share of observations (items; documents of span data) where the runs do not all give
  the same value to every unit — and, for span data, the share of units;
- **entropy** of a unit: of the distribution of the runs' values, in bits (0: all runs agree; 1: two values
  half and half); an observation's is the mean over its units — the review queue of unstable observations
  (``unstable.csv``) is sorted by it;
- **majority of k runs**: the value most of k runs give a unit (none when the most-given values tie), for
  k = 1 … n, averaged over every choice of k of the n runs (over :data:`SUBSETS` of them, drawn with the seed,
  where there are more): its **agreement with the gold** (the share of units whose gold was decided where the
  majority equals it) and its **recovery** (the share of units whose majority of all n runs is decided where
  the majority of k equals it) — for span data on the units a run or the gold marked (the units no one marked
  would make every k look alike);
- **runs for a stable majority**: the least k whose recovery is at least :data:`STABLE` — with the runs there
  are (n always recovers itself), from three runs on.

Agreement of the runs as coefficients (α, span F1, with intervals) is ``unitize agree``'s ``roles.csv``
(comparison ``stability``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import Any

import numpy as np

from ..dataset.regions import Cells
from .observations import Golden

#: the share of units whose majority a number of runs must recover to count as a stable majority
STABLE = 0.95
#: the most choices of k runs the majority curve averages over (drawn with the seed where there are more)
SUBSETS = 64


def subsets(runs: int, k: int, seed: int = 0) -> list[tuple[int, ...]]:
    """The choices of ``k`` of ``runs`` runs the curve averages over: all, or :data:`SUBSETS` drawn with ``seed``."""
    if comb(runs, k) <= SUBSETS:
        return list(combinations(range(runs), k))
    rng = np.random.default_rng(seed + k)
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < SUBSETS:
        chosen.add(tuple(sorted(rng.choice(runs, size=k, replace=False).tolist())))
    return sorted(chosen)


@dataclass
class Family:
    """What a family's runs showed, added up over (group, layer)s."""

    runs: list[str]
    seed: int = 0
    observations: int = 0
    flipped: int = 0
    units: int = 0
    flipped_units: int = 0
    entropy: float = 0.0  # summed over units
    # per k: per subset, [agreeing with the gold, units with a decided gold, recovering, units with a decided majority]
    curve: dict[int, np.ndarray] = field(default_factory=dict)
    unstable: list[dict[str, Any]] = field(default_factory=list)

    def choices(self, k: int) -> list[tuple[int, ...]]:
        return subsets(len(self.runs), k, self.seed)


def _matrix(cells: Cells, runs: list[str]) -> np.ndarray:
    """Units × runs (in the family's order): each run's value code, -1 where it has none."""
    at = np.array([runs.index(a) for a in cells.annotators], np.int64)
    m = np.full((cells.row_doc.shape[0], len(runs)), -1, np.int64)
    m[cells.cell_row, at[cells.cell_annotator]] = cells.cell_code
    return m


def _counts(m: np.ndarray, columns: tuple[int, ...] | range, values: int) -> np.ndarray:
    """Per unit, per value: how many of the runs ``columns`` gave it."""
    counts = np.zeros((m.shape[0], values), np.int32)
    rows = np.arange(m.shape[0])
    for j in columns:
        counts[rows, m[:, j]] += 1
    return counts


def _majority(counts: np.ndarray) -> np.ndarray:
    """Per unit: the most-given value, -1 where the most-given values tie."""
    top = counts.max(1)
    unique = (counts == top[:, None]).sum(1) == 1
    return np.where(unique, counts.argmax(1), -1)


def add(family: Family, cells: Cells, golden: Golden) -> None:
    """Add one (group, layer) of the family's runs (``cells`` holds the runs alone) to ``family``."""
    m = _matrix(cells, family.runs)
    complete: np.ndarray = np.asarray((m >= 0).all(1))
    m = m[complete]
    if m.shape[0] == 0:
        return
    used, compact = np.unique(m, return_inverse=True)  # the values the runs gave, numbered 0 … : counts stay narrow
    m = compact.reshape(m.shape)
    lut = np.full(len(cells.values), -2, np.int64)  # a stored value no run gave: -2, never a run's
    lut[used] = np.arange(used.size)
    runs = len(family.runs)
    every = _counts(m, range(runs), used.size)
    flipped = every.max(1) < runs
    entropy = np.zeros(m.shape[0])
    p = every[flipped] / runs
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy[flipped] = -(np.where(p > 0, p * np.log2(p), 0.0)).sum(1)
    docs = cells.row_doc[complete]
    per_doc = np.bincount(docs, minlength=len(cells.docs))
    flips = np.bincount(docs[flipped], minlength=len(cells.docs))
    heat = np.bincount(docs, weights=entropy, minlength=len(cells.docs))
    family.observations += int((per_doc > 0).sum())
    family.flipped += int((flips > 0).sum())
    family.units += int(m.shape[0])
    family.flipped_units += int(flipped.sum())
    family.entropy += float(entropy.sum())
    _curve(family, cells, golden, m, complete, every, lut)
    row_of = np.zeros(len(cells.docs), np.int64)
    row_of[docs[::-1]] = np.arange(docs.size)[::-1]  # an item's (first) row
    for d in np.flatnonzero(flips).tolist():
        family.unstable.append({"group": cells.group, "layer": None if cells.items else cells.layer, "observation": cells.docs[d],
                                "units": int(per_doc[d]), "flipped_units": int(flips[d]), "entropy": float(heat[d] / per_doc[d]),
                                "values": _values(cells, family.runs, used[m[row_of[d]]]) if cells.items else None})


def _values(cells: Cells, runs: list[str], row: np.ndarray) -> str:
    """An item's values as ``run=value; …``."""
    return "; ".join(f"{r}={cells.name(int(v))}" for r, v in zip(runs, row.tolist()))


def _curve(family: Family, cells: Cells, golden: Golden, m: np.ndarray, complete: np.ndarray, every: np.ndarray, lut: np.ndarray) -> None:
    """Add the majority-of-k sums of one (group, layer); ``m`` holds the runs' values numbered by ``lut``."""
    names, gold_index = golden.names, golden.code
    own = {cells.name(k): int(lut[k]) for k in range(len(cells.values))}
    to_code = np.array([own.get(n, -2) for n in names] + [-3], np.int64)  # -1 (no gold) -> -3, never a run's value
    truth = to_code[gold_index[complete]]
    decided = truth != -3
    whole = _majority(every)
    settled = whole >= 0
    if cells.empty is not None:  # span data: the units someone marked, not the many no one did
        empty = int(lut[cells.empty])
        marked = (m != empty).any(1) | (decided & (truth != empty))
        decided, settled = decided & marked, settled & marked
    for k in range(1, len(family.runs) + 1):
        choices = family.choices(k)
        sums = family.curve.setdefault(k, np.zeros((len(choices), 4), np.int64))
        for s, chosen in enumerate(choices):
            maj = _majority(_counts(m, chosen, every.shape[1]))
            sums[s] += (int((maj[decided] == truth[decided]).sum()), int(decided.sum()),
                        int((maj[settled] == whole[settled]).sum()), int(settled.sum()))


def curve_rows(family: Family) -> list[dict[str, Any]]:
    """Per k: the majority of k runs' mean agreement with the gold and mean recovery over the choices of k runs."""
    out = []
    for k, sums in sorted(family.curve.items()):
        with np.errstate(invalid="ignore", divide="ignore"):
            agreement = sums[:, 0] / sums[:, 1]
            recovery = sums[:, 2] / sums[:, 3]
        out.append({"k": k, "choices": int(sums.shape[0]),
                    "agreement_with_gold": float(np.mean(agreement)) if sums[:, 1].all() else None,
                    "recovery": float(np.mean(recovery)) if sums[:, 3].all() else None})
    return out


def runs_needed(curve: list[dict[str, Any]]) -> int | None:
    """The least k whose majority recovers at least :data:`STABLE` of the units (None: no decided majority, or fewer
    than three runs, where the majority of two is decided only where they agree and one run always recovers it)."""
    if len(curve) < 3:
        return None
    return next((r["k"] for r in curve if r["recovery"] is not None and r["recovery"] >= STABLE), None)
