"""The quality gate of ``unitize agree --fail-below``: floors per metric, checked on the results table.

``--fail-below alpha=0.67,ac1=0.8`` sets a floor per metric (names from the registry; only
metrics with one value per layer, :func:`unitize.metrics.summarizable`). Every whole row of
such a metric — one (setting, group, layer), no label, document or annotator breakdown, the
pairs' mean for a pair metric — must reach its floor; ``--on ci-lower`` checks the lower end
of the bootstrap interval instead of the value (so the metric must be resampled). A value that
could not be measured (NaN, with its reason) does not reach any floor: a gate cannot pass
what it cannot see. ``unitize agree`` then exits with :data:`EXIT_GATE` and names every row
that failed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import metrics as registry
from ..errors import UnitizeError
from .summary import overall

#: the exit code of ``unitize agree`` when a floor of ``--fail-below`` is not reached
EXIT_GATE = 4
#: what ``--on`` can check: the value, or the lower end of its bootstrap interval
ON = ("value", "ci-lower")


@dataclass(frozen=True)
class Floor:
    """One metric's floor."""

    metric: str
    floor: float


@dataclass(frozen=True)
class Failure:
    """A whole row of a gated metric below its floor (or without a value)."""

    floor: Floor
    on: str
    value: float | None
    setting: str
    group: str
    layer: str
    reason: str | None = None

    def line(self) -> str:
        what = "its value" if self.on == "value" else "the lower end of its confidence interval"
        where = f"setting {self.setting}, group {self.group}, layer {self.layer}"
        if self.value is None or math.isnan(self.value):
            return f"{self.floor.metric} has no value ({where}): {self.reason or 'not measured'}; floor {self.floor.floor:g}"
        return f"{self.floor.metric} = {self.value:.4f} < {self.floor.floor:g} ({what}; {where})"


def parse(text: str) -> list[Floor]:
    """``alpha=0.67,ac1=0.8`` -> floors; unknown metrics, metrics without one value per layer and bad numbers are refused."""
    floors: list[Floor] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, number = (x.strip() for x in part.partition("="))
        if not sep:
            raise UnitizeError(f"--fail-below {text!r}: give METRIC=FLOOR pairs, e.g. alpha=0.67,ac1=0.8")
        registry.get(name)  # an unknown metric is an error listing the metrics
        if name not in registry.summarizable():
            raise UnitizeError(f"--fail-below: {name} has no single value per layer to gate on; "
                               f"gate on one of {', '.join(registry.summarizable())}")
        try:
            floor = float(number)
        except ValueError:
            raise UnitizeError(f"--fail-below: {name}={number!r} is not a number") from None
        if not math.isfinite(floor) or name in (f.metric for f in floors):
            raise UnitizeError(f"--fail-below: {part!r} is not a finite floor, or names {name} twice")
        floors.append(Floor(name, floor))
    if not floors:
        raise UnitizeError("--fail-below needs METRIC=FLOOR pairs, e.g. alpha=0.67")
    return floors


def check_resampled(floors: Iterable[Floor]) -> None:
    """``--on ci-lower`` needs a bootstrap interval of every gated metric."""
    none = [f.metric for f in floors if registry.get(f.metric).resampling is registry.Resampling.NONE]
    if none:
        raise UnitizeError(f"--on ci-lower: {', '.join(none)} has no bootstrap interval; gate on its value (--on value)")


def check(rows: Iterable[dict[str, Any]], floors: list[Floor], on: str = "value") -> tuple[list[Failure], int]:
    """The failures among the results rows, and how many rows were checked."""
    by_metric = {f.metric: f for f in floors}
    failures, checked = [], 0
    for r in rows:
        floor = by_metric.get(r["metric"])
        if floor is None or not overall(r) or r.get("pair") not in (None, "mean"):
            continue
        checked += 1
        value = r.get("ci_low") if on == "ci-lower" else r.get("value")
        if value is None or not math.isfinite(value) or value < floor.floor:
            failures.append(Failure(floor, on, value, r["setting"], r["group"], r["layer"], r.get("reason")))
    return failures, checked
