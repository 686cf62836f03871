"""Votes per unit and label, the gold decision on each, its confidence, and the gold as values and spans.

A (setting, group, layer)'s :class:`~unitize.dataset.regions.Cells` (wide, sparse or long
layout alike, crowd data included) become **label layers**: every value an annotator gave
is split into the labels it holds —

* a 0/1 matrix: ``1`` holds the one label ``1`` (marked), ``0`` none;
* a bit mask (combined mode): the layers of its bits (``3`` = ``Arg1`` and ``Arg2``);
* a label matrix: its ``+``-joined labels (``LOC+ORG``), the not-annotated value ``O`` none —
  so stacked and overlapping labels are voted on each in its own layer;
* an item label: the label itself (``a+b`` split only in a ``multi = "set"`` group).

Per unit and label, ``votes`` is how many annotators' values hold the label and ``coders``
how many annotators have a value for the unit at all (those who annotated the document;
an annotator missing there casts no vote). A method's rule (:mod:`.methods`) decides per
label whether the gold holds it. The **confidence** of a unit is the share of its coders
who agree with the gold on its weakest label decision (a label in the gold: those who
gave it; a label out of it: those who did not), 1 where nobody gave any label; a unit is
**tied** when some label got exactly half of the votes. Item labels are single answers
(unless ``multi``): of the labels the rule lets through, the gold is the one with most
votes, none when two share the top.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..dataset.regions import Cells, runs
from ..model.codes import dictionary

#: the one label of a 0/1 matrix: marked
MARKED = "1"


@dataclass
class Votes:
    """One (setting, group, layer): per unit and label layer the votes, per unit its coders."""

    cells: Cells
    labels: list[str]  # the label layers, in order of first appearance among the values
    incidence: np.ndarray  # (values, labels) bool: value code holds the label
    counts: np.ndarray  # (units, values) int: annotators who gave each value
    votes: np.ndarray  # (units, labels) int
    coders: np.ndarray  # (units,) int

    @property
    def units(self) -> int:
        return len(self.cells.row_doc)


def value_labels(c: Cells, multi: bool, not_annotated: str | None) -> tuple[list[str], np.ndarray]:
    """The label layers of a (group, layer)'s values and which value holds which label."""
    setting = c.setting
    held: list[list[str]] = []
    for text in c.values:
        if setting.kind == "items":
            held.append(text.split("+") if multi else [text])
        elif setting.value == "binary":
            held.append([MARKED] if text != "0" else [])
        elif setting.value == "bitmask":
            bits = int(text) if text.isdigit() else 0
            held.append([layer for layer, bit in setting.layer_bits.items() if bits & bit])
        else:
            held.append([] if text == not_annotated else text.split("+"))
    labels = list(dict.fromkeys(label for h in held for label in h))
    position = {label: j for j, label in enumerate(labels)}
    incidence = np.zeros((len(held), len(labels)), dtype=bool)
    for i, h in enumerate(held):
        incidence[i, [position[label] for label in h]] = True
    return labels, incidence


def count(c: Cells, multi: bool = False, not_annotated: str | None = None) -> Votes:
    """The votes of one (setting, group, layer)."""
    labels, incidence = value_labels(c, multi, not_annotated)
    n, k = len(c.row_doc), len(c.values)
    counts = np.bincount(c.cell_row * k + c.cell_code, minlength=n * k).reshape(n, k) if k else np.zeros((n, 0), np.int64)
    votes = counts @ incidence.astype(np.int64) if labels else np.zeros((n, 0), np.int64)
    return Votes(c, labels, incidence, counts, votes, counts.sum(axis=1))


@dataclass
class Decision:
    """The gold of one (setting, group, layer): per unit and label whether the gold holds it, and why."""

    votes: Votes
    chosen: np.ndarray  # (units, labels) bool
    confidence: np.ndarray  # (units,) float; NaN where no annotator coded the unit
    tied: np.ndarray  # (units,) bool
    resolved: np.ndarray  # (units,) bool: the gold has a value (items: some label won; units: someone coded it)
    _cache: tuple[list[str | None], np.ndarray] | None = field(default=None, repr=False, compare=False)

    def gold_between(self, start: int, stop: int) -> list[str | None]:
        """Per unit of ``start`` to ``stop`` (exclusive) the gold value as the matrix would hold it (``1``/``0``, a bit
        mask, ``LOC+ORG``/``O``, an item label), None where it has none."""
        spelled, inverse = self._spelled()
        return [spelled[i] if ok else None for i, ok in zip(inverse[start:stop].tolist(), self.resolved[start:stop].tolist())]

    def gold_column(self) -> pa.Array:
        """Every unit's gold (:meth:`gold_between`) as an Arrow string column, made from the distinct values (no Python
        string per unit)."""
        spelled, inverse = self._spelled()
        missing = np.array([x is None for x in spelled], bool)
        valid = self.resolved & ~missing[inverse] if len(spelled) else self.resolved
        return dictionary(inverse, [x or "" for x in spelled], valid).cast(pa.string())

    def agreeing(self) -> np.ndarray:
        """Per unit how many of its annotators gave exactly the gold value (the votes for the gold)."""
        v = self.votes
        spelled, inverse = self._spelled()
        position: dict[str, int] = {}
        for k, value in enumerate(v.cells.values):
            position.setdefault(value, k)
        code = np.array([position.get(s, -1) if s is not None else -1 for s in spelled], np.int64)[inverse] if spelled else inverse
        given = self.resolved & (code >= 0)
        out = np.zeros(v.units, np.int64)
        out[given] = v.counts[np.flatnonzero(given), code[given]]
        return out

    def _spelled(self) -> tuple[list[str | None], np.ndarray]:
        """The distinct label sets the gold chose, spelled (:func:`_spell`), and per unit which one is its."""
        if self._cache is None:
            rows, inverse = distinct_rows(self.chosen)
            c = self.votes.cells
            self._cache = [_spell(c, [self.votes.labels[j] for j in np.flatnonzero(row)]) for row in rows], inverse
        return self._cache


def distinct_rows(chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(chosen, axis=0, return_inverse=True)`` of a (units × labels) bool array, each row read as the
    bits of one integer when the labels fit in 63 bits (no sort of rows)."""
    units, labels = chosen.shape
    if labels > 63:
        rows, inverse = np.unique(chosen, axis=0, return_inverse=True)
        return rows, np.asarray(inverse).reshape(-1)
    bits = np.left_shift(np.int64(1), np.arange(labels, dtype=np.int64))
    key = chosen.astype(np.int64) @ bits if labels else np.zeros(units, np.int64)
    if labels <= 20:  # few keys possible (2**labels): counted in one pass, not sorted
        found = np.flatnonzero(np.bincount(key, minlength=1))
        lut = np.zeros(int(found[-1]) + 1 if found.size else 1, np.int64)
        lut[found] = np.arange(found.size)
        return (found[:, None] & bits) != 0, lut[key]
    found, inverse = np.unique(key, return_inverse=True)
    return (found[:, None] & bits) != 0, np.asarray(inverse).reshape(-1)


def _spell(c: Cells, labels: list[str]) -> str | None:
    setting = c.setting
    if setting.kind == "items":
        return "+".join(sorted(labels)) if labels else None
    if setting.value == "binary":
        return MARKED if labels else "0"
    if setting.value == "bitmask":
        return str(sum(setting.layer_bits.get(label, 0) for label in labels))
    return "+".join(sorted(labels)) if labels else (c.values[c.empty] if c.empty is not None else "O")


def decide(v: Votes, chosen: np.ndarray, single: bool) -> Decision:
    """The decision from a rule's ``chosen`` (units × labels); ``single``: one label per unit at most (items)."""
    coders = v.coders[:, None]
    chosen = chosen & (coders > 0)
    tied = np.zeros(v.units, bool)
    if single and v.labels:
        masked = np.where(chosen, v.votes, -1)
        top = masked.max(axis=1)
        ties = ((masked == top[:, None]) & chosen).sum(axis=1) > 1
        best = np.zeros_like(chosen)
        best[np.arange(v.units), masked.argmax(axis=1)] = True
        chosen = best & chosen & ~ties[:, None]
        tied |= ties
    agree = np.where(chosen, v.votes, coders - v.votes)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(v.votes > 0, agree / np.maximum(coders, 1), 1.0)
    confidence = share.min(axis=1) if v.labels else np.ones(v.units)
    confidence = np.where(v.coders > 0, confidence, np.nan)
    tied |= ((v.votes * 2 == coders) & (v.votes > 0)).any(axis=1)
    resolved = np.asarray(chosen.any(axis=1) if single else v.coders > 0, dtype=bool)
    return Decision(v, chosen, confidence, tied, resolved)


@dataclass(frozen=True)
class GoldSpan:
    """A run of units of one document whose gold holds one label: a gold span snapped to the unit space."""

    group: str
    doc: str
    layer: str  # the matrix's layer; for a bit mask the layer of the bit
    label: str | None  # the label of a label matrix; None for 0/1 matrices and bit masks
    unit_begin: int
    unit_end: int  # exclusive
    begin: int  # characters, end exclusive
    end: int
    confidence: float  # the lowest confidence of its units


def spans(d: Decision) -> list[GoldSpan]:
    """The gold spans of one (setting, group, layer) of unit data, per label layer in document order."""
    c = d.votes.cells
    out: list[GoldSpan] = []
    for j, label in enumerate(d.votes.labels):
        starts, stops = runs(d.chosen[:, j], c.row_doc, c.row_unit)
        for s, e in zip(starts.tolist(), stops.tolist()):
            layer: str = c.layer
            named: str | None = label
            if c.setting.value == "binary":
                named = None
            elif c.setting.value == "bitmask":
                layer, named = label, None
            out.append(GoldSpan(c.group, c.docs[c.row_doc[s]], layer, named, int(c.row_unit[s]), int(c.row_unit[e - 1]) + 1,
                                int(c.begin[s]), int(c.end[e - 1]), float(np.nanmin(d.confidence[s:e]))))
    return sorted(out, key=lambda g: (g.doc, g.begin, g.end, g.layer, g.label or ""))
