"""Segments placed on a continuum: the one input of the segment-based metrics.

A (setting, group, layer)'s continuum is the documents at least two annotators coded,
laid end to end (``presence`` says who coded which) (:mod:`unitize.agree.spans` builds it from ``segments/<unit>.parquet``).
:class:`Placed` holds one layer's segments on it as parallel arrays — who, which
document, where, which value — so that :mod:`unitize.metrics.unitizing`,
:mod:`unitize.metrics.spanf1` and alpha-U's statistics read one plain data model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Placed:
    """One layer's segments on a continuum of documents (one row per segment).

    An annotator's segments are disjoint (DESIGN.md §4: one layer's intersecting
    segments are merged) and none crosses a document.
    """

    annotators: tuple[str, ...]  # the annotators on the continuum (each coded some of its documents)
    docs: tuple[str, ...]  # the documents, in continuum order
    starts: np.ndarray  # (D,) int64: each document's first position on the continuum
    length: int  # L: the continuum's units
    values: tuple[str, ...]  # the segments' values (labels, or the layer for 0/1 data)
    annotator: np.ndarray  # (S,) int64 index into annotators
    begin: np.ndarray  # (S,) int64 position on the continuum
    end: np.ndarray  # (S,) int64, exclusive
    value: np.ndarray  # (S,) int64 index into values
    presence: np.ndarray | None = None  # (D, A) bool: the annotator coded the document; None: every one coded every one
    #: what it was placed from (one layer's segments on one continuum), for what is derived from it once for the cells
    #: sharing it (:attr:`~.cells.SegmentCell.layer_memo`); None: made for one cell (a pair's view, a subset)
    key: tuple[Any, ...] | None = field(default=None, compare=False)

    @property
    def coded(self) -> np.ndarray:
        """(D, A) bool: who coded which document."""
        if self.presence is None:
            return np.ones((len(self.docs), len(self.annotators)), bool)
        return self.presence

    @property
    def complete(self) -> bool:
        """Every annotator coded every document."""
        return self.presence is None or bool(self.presence.all())

    def common(self) -> Placed:
        """The documents every annotator coded, laid end to end again (for a measure that pools all annotators on one continuum)."""
        if self.complete:
            return self
        return self._kept(np.asarray(self.coded.all(axis=1)), np.arange(len(self.annotators)))

    def among(self, who: list[int]) -> Placed:
        """Annotators ``who`` alone (indices, in that order): their segments on the documents two of them or more coded —
        the continuum a cell of those annotators alone has."""
        coded = self.coded[:, who]
        return self._kept(np.asarray(coded.sum(axis=1) >= 2), np.asarray(who, np.int64))

    def on(self, keep: np.ndarray) -> Placed:
        """Documents ``keep`` ((D,) bool) alone, laid end to end again, every annotator kept."""
        return self if keep.all() else self._kept(keep, np.arange(len(self.annotators)))

    def _kept(self, keep: np.ndarray, who: np.ndarray) -> Placed:
        """Documents ``keep`` laid end to end, annotators ``who`` (renumbered in that order)."""
        sizes = self.doc_lengths[keep]
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        shift = np.full(len(self.docs), -1, np.int64)
        shift[keep] = starts - self.starts[keep]
        renumber = np.full(len(self.annotators), -1, np.int64)
        renumber[who] = np.arange(who.size)
        doc = self.doc
        rows = keep[doc] & (renumber[self.annotator] >= 0)
        moved = shift[doc[rows]]
        coded = self.coded[keep][:, who]
        used, value = np.unique(self.value[rows], return_inverse=True)  # the values its segments have, as a cell of them would
        return Placed(tuple(self.annotators[k] for k in who.tolist()), tuple(d for d, k in zip(self.docs, keep.tolist()) if k), starts,
                      int(sizes.sum()), tuple(self.values[k] for k in used.tolist()), renumber[self.annotator[rows]],
                      self.begin[rows] + moved, self.end[rows] + moved, value.astype(np.int64).reshape(-1), None if coded.all() else coded)

    @property
    def doc(self) -> np.ndarray:
        """(S,) index of each segment's document."""
        return np.searchsorted(self.starts, self.begin, side="right") - 1

    @property
    def doc_lengths(self) -> np.ndarray:
        """(D,) units of each document."""
        return np.diff(np.append(self.starts, self.length))

    def by_annotator(self) -> list[np.ndarray]:
        """Per annotator: the indices of its segments, sorted by position."""
        order = run_order(self.annotator, self.begin)
        bounds = np.searchsorted(self.annotator[order], np.arange(len(self.annotators) + 1))
        return [order[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def run_order(run: np.ndarray, begin: np.ndarray) -> np.ndarray:
    """Indices ordering units by ``run`` (small non-negative integers: an annotator, or a value and an annotator), then
    by ``begin``: a stable sort by run alone (a radix sort) when each run's begins already come in order, as the segments
    of one layer are written (by document, then annotator and position); a sort by both otherwise."""
    if run.size and int(run.max()) < 1 << 15 and int(run.min()) >= 0:
        order = np.argsort(run.astype(np.int16), kind="stable")
        r, b = run[order], begin[order]
        if not np.any((r[1:] == r[:-1]) & (b[1:] < b[:-1])):
            return order
    return np.lexsort((begin, run))
