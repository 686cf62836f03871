"""The review queue: where the gold rests on too few votes, as regions a person reads in order.

A unit (item) is up for review when its confidence is below ``review_below``, when its
votes are tied, or (items) when no label won. Maximal runs of such units in one document
are the queue's regions (items: each item alone), rows shaped like ``unitize export --to
disagreements`` (:mod:`unitize.dataset.region_rows`) plus the gold there, the lowest
confidence, whether some unit is tied, and why the region is in the queue.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..dataset import adjudication as files
from ..dataset.directory import OutputData, Setting
from ..dataset.pieces import Pieces
from ..dataset.region_rows import COLUMNS, InOrder, RegionFiles, RegionRows
from ..dataset.regions import Region, regions, runs
from .votes import Decision

TIED, LOW, UNRESOLVED = "tied", "low confidence", "no gold"


def flags(d: Decision, below: float) -> np.ndarray:
    """Per unit: up for review (coded, and low confidence, tied or without a gold)."""
    coded = d.votes.coders > 0
    with np.errstate(invalid="ignore"):
        low = d.confidence < below
    return coded & (low | d.tied | ~d.resolved)


@dataclass
class Queued:
    """One region of the review queue: the region and what the gold says there."""

    region: Region
    gold: list[str]  # the gold values of its units, in order, once each (None left out)
    confidence: float
    tied: bool
    why: list[str]

    def extra(self) -> dict[str, Any]:
        return {"gold": self.gold, "confidence": round(self.confidence, 6), "tied": self.tied, "why": self.why}


def queue(d: Decision, below: float) -> list[Queued]:
    """The review regions of one (setting, group, layer), in (document, unit) order."""
    c = d.votes.cells
    flagged = flags(d, below)
    found = regions(c, flagged)
    starts, stops = runs(flagged, c.row_doc, c.row_unit, separate=c.items)
    out = []
    for r, s, e in zip(found, starts.tolist(), stops.tolist()):
        conf = d.confidence[s:e]
        why = [w for w, hit in ((UNRESOLVED, not d.resolved[s:e].all()), (TIED, d.tied[s:e].any()),
                                (LOW, bool((conf < below).any()))) if hit]
        values = [g for g in dict.fromkeys(d.gold_between(s, e)) if g is not None]
        out.append(Queued(r, values, float(np.nanmin(conf)) if np.isfinite(conf).any() else float("nan"), bool(d.tied[s:e].any()), why))
    return out


class ReviewFiles(RegionFiles):
    """review.csv and review.jsonl in ``folder``, written as the queue's regions are found: each batch in
    adjudication order (:class:`~unitize.dataset.region_rows.InOrder`) as soon as nothing later can come before it."""

    def __init__(self, data: OutputData, setting: Setting, folder: Path):
        super().__init__(folder / files.REVIEW_CSV, folder / files.REVIEW_JSONL, (*COLUMNS, *files.REVIEW_COLUMNS),
                         cells=_joined, line=_finite)
        self._rows = RegionRows(data, setting)
        self._order: InOrder[Queued] = InOrder(data, lambda q: q.region)

    def add(self, pieces: Pieces, docs: list[str], queued: list[Queued]) -> None:
        """One piece's documents and queued regions."""
        self._queued(self._order.add(pieces, docs, queued))

    def done(self, pieces: Pieces) -> None:
        """The end of a (group, layer)."""
        self._queued(self._order.ready(pieces))

    def _queued(self, batch: list[Queued]) -> None:
        at = 0
        for chunk in self._rows.records([q.region for q in batch]):
            self.write([rec | q.extra() for rec, q in zip(chunk, batch[at:at + len(chunk)])])
            at += len(chunk)


def _joined(record: dict[str, Any]) -> dict[str, Any]:
    """A queued region's record for its CSV row: the gold values and the reasons each one cell."""
    return {**record, "gold": "/".join(record["gold"]), "why": "; ".join(record["why"])}


def _finite(record: dict[str, Any]) -> dict[str, Any]:
    """A record for JSON: a NaN confidence (nobody coded the units) as null."""
    value = record.get("confidence")
    return {**record, "confidence": None} if isinstance(value, float) and math.isnan(value) else record
