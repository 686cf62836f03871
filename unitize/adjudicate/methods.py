"""The adjudication methods, each declared once: its name, what it needs and how it decides.

Vote methods decide per unit (or item) and label from the votes (:mod:`.votes`):

* ``majority`` — the gold holds a label when more than half of the annotators who annotated
  the document (or labelled the item) gave it;
* ``threshold`` — when at least ``min_share`` of them gave it (INCEpTION's threshold merge);
* ``unanimous`` — when every one of them gave it.

Model methods aggregate item labels with a fitted annotator model, from crowd-kit (the
optional extra ``unitize[crowd]``; not re-implemented here): ``dawid-skene`` (Dawid & Skene
1979) and ``mace`` (Hovy et al. 2013). Their confidence is the posterior of the gold label.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UnitizeError
from .votes import Decision, Votes, decide

#: a vote method's rule: (votes (units × labels), coders (units × 1), min_share) -> the gold holds the label
Rule = Callable[[np.ndarray, np.ndarray, float], np.ndarray]


class MissingCrowdKit(UnitizeError):
    """A model method was asked for and crowd-kit is not installed."""


@dataclass(frozen=True)
class Method:
    """One adjudication method."""

    name: str
    help: str
    #: the data it adjudicates: "units" (unit matrices), "items" (item labels)
    kinds: frozenset[str]
    rule: Rule | None = None  # vote methods
    model: str | None = None  # model methods: the crowd-kit aggregator's class name
    takes_min_share: bool = False

    def decide(self, v: Votes, single: bool, min_share: float | None = None) -> Decision:
        """The gold of one (setting, group, layer) from its votes."""
        if self.rule is not None:
            return decide(v, self.rule(v.votes, v.coders[:, None], min_share or 0.0), single)
        return self._fit(v)

    def _fit(self, v: Votes) -> Decision:
        """A crowd-kit model fitted on the item labels: the gold label and its posterior per item."""
        aggregation = crowd_kit()
        import pandas as pd

        c = v.cells
        frame = pd.DataFrame({"task": c.cell_row, "worker": c.cell_annotator, "label": c.cell_code})
        chosen = np.zeros_like(v.votes, dtype=bool)
        confidence = np.full(v.units, np.nan)
        tied = np.zeros(v.units, bool)
        if len(frame):
            model: Any = getattr(aggregation, str(self.model))(**MODEL_OPTIONS.get(self.name, {}))
            with warnings.catch_warnings():  # crowd-kit's own pandas deprecations, not the user's business
                warnings.simplefilter("ignore")
                model.fit(frame)
            probas = model.probas_
            columns = np.asarray(probas.columns, dtype=np.int64)
            rows = np.asarray(probas.index, dtype=np.int64)
            p = probas.to_numpy(dtype=np.float64)
            top = p.argmax(axis=1)
            ordered = np.sort(p, axis=1)
            tied[rows] = (ordered[:, -1] - ordered[:, -2] < 1e-9) if p.shape[1] > 1 else False
            confidence[rows] = p[np.arange(len(rows)), top]
            winner = v.incidence[columns[top]]  # the labels of the winning value
            chosen[rows] = winner & ~tied[rows][:, None]
        return Decision(v, chosen, confidence, tied, np.asarray(chosen.any(axis=1), dtype=bool))


#: fixed options of the model methods (one seeded restart: MACE gives the same result on every run, in seconds)
MODEL_OPTIONS: dict[str, dict[str, Any]] = {"dawid-skene": {"n_iter": 100}, "mace": {"n_restarts": 1, "n_iter": 50, "random_state": 0}}

UNITS_AND_ITEMS = frozenset({"units", "items"})
ITEMS = frozenset({"items"})

METHODS = (
    Method("majority", "a label when more than half of the annotators who annotated the document (item) gave it", UNITS_AND_ITEMS,
           rule=lambda votes, coders, _: votes * 2 > coders),
    Method("threshold", "a label when at least --min-share of those annotators gave it (INCEpTION's threshold merge)", UNITS_AND_ITEMS,
           rule=lambda votes, coders, share: votes >= share * coders - 1e-9, takes_min_share=True),
    Method("unanimous", "a label when every annotator who annotated the document (item) gave it", UNITS_AND_ITEMS,
           rule=lambda votes, coders, _: (votes == coders) & (coders > 0)),
    Method("dawid-skene", "item labels: Dawid & Skene's annotator-confusion model (crowd-kit; pip install 'unitize[crowd]')", ITEMS,
           model="DawidSkene"),
    Method("mace", "item labels: MACE, annotators who sometimes answer at random (crowd-kit; pip install 'unitize[crowd]')", ITEMS,
           model="MACE"),
)
_BY_NAME = {m.name: m for m in METHODS}


def names() -> tuple[str, ...]:
    """Every method's name, in declaration order."""
    return tuple(_BY_NAME)


def get(name: str) -> Method:
    """The method called ``name``; an unknown name is an error listing the methods."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnitizeError(f"unknown adjudication method {name!r}; choose from {', '.join(_BY_NAME)}") from None


def crowd_kit() -> Any:
    """``crowdkit.aggregation``, or an error saying how to install it."""
    try:
        import crowdkit.aggregation as aggregation
    except ImportError:
        raise MissingCrowdKit(
            "dawid-skene and mace come from crowd-kit, which is not installed: pip install 'unitize[crowd]'"
        ) from None
    return aggregation
