"""Segments placed on a continuum: the one input of the segment-based metrics.

A (setting, group, layer)'s continuum is the documents at least two annotators coded,
laid end to end (``presence`` says who coded which) (:mod:`unitize.agree.spans` builds it from ``segments/<unit>.parquet``).
:class:`Placed` holds one layer's segments on it as parallel arrays — who, which
document, where, which value — so that :mod:`unitize.metrics.unitizing`,
:mod:`unitize.metrics.spanf1` and alpha-U's statistics read one plain data model.
"""

from __future__ import annotations

from dataclasses import dataclass

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
        keep = np.asarray(self.coded.all(axis=1))
        sizes = self.doc_lengths[keep]
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        shift = np.full(len(self.docs), -1, np.int64)
        shift[keep] = starts - self.starts[keep]
        doc = self.doc
        rows = keep[doc]
        moved = shift[doc[rows]]
        return Placed(self.annotators, tuple(d for d, k in zip(self.docs, keep.tolist()) if k), starts, int(sizes.sum()), self.values,
                      self.annotator[rows], self.begin[rows] + moved, self.end[rows] + moved, self.value[rows])

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
        order = np.lexsort((self.begin, self.annotator))
        bounds = np.searchsorted(self.annotator[order], np.arange(len(self.annotators) + 1))
        return [order[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
