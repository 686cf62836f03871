"""Segments placed on a continuum: the one input of the segment-based metrics.

A (setting, group, layer)'s continuum is the documents every annotator coded,
laid end to end (:mod:`unitize.agree.spans` builds it from ``segments/<unit>.parquet``).
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

    annotators: tuple[str, ...]  # the annotators on the continuum (each coded every document)
    docs: tuple[str, ...]  # the documents, in continuum order
    starts: np.ndarray  # (D,) int64: each document's first position on the continuum
    length: int  # L: the continuum's units
    values: tuple[str, ...]  # the segments' values (labels, or the layer for 0/1 data)
    annotator: np.ndarray  # (S,) int64 index into annotators
    begin: np.ndarray  # (S,) int64 position on the continuum
    end: np.ndarray  # (S,) int64, exclusive
    value: np.ndarray  # (S,) int64 index into values

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
