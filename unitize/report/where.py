"""Where annotators disagree: per-document shares, rankings, annotator-pair and label confusion matrices.

All from :class:`~unitize.dataset.regions.Cells`, so from any layout:

* a document's **disagreement share** in a (setting, group, layer) is the share of
  its *comparable* units (coded by at least two annotators) that disagree;
  summed over layers and groups for a document's row;
* **rankings** put the worst first: groups by the summary metric of
  ``agreement/`` (lowest first, NaN last), then by disagreement share; documents
  by disagreement share, then by their number of regions;
* the **annotator-pair matrix** of a (setting, group, layer): per pair of
  annotators, the units both coded, the share of them where both gave the same
  value (observed agreement) and Cohen's kappa on them;
* the **label confusion matrix**: how often one annotator gave the row value
  while another gave the column value to the same unit, over all ordered pairs
  of different annotators (symmetric; its diagonal is agreement) — the
  coincidences of Krippendorff's alpha, each unit counted once per pair;
* the **label distribution**: per annotator, how many units or items got each value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dataset.model import Setting
from ..dataset.regions import Cells, annotator_order, runs, unit_flags, value_name, value_order
from ..metrics.coefficients import kappa_table

#: above this many annotators (crowd data) no pair matrix is built
MAX_PAIR_ANNOTATORS = 40


def doc_stats(c: Cells) -> np.ndarray:
    """(documents, 3) int: per document of ``c.docs`` its comparable units, disagreeing units and regions."""
    coded, flags = unit_flags(c)
    n = len(c.docs)
    comparable = np.bincount(c.row_doc, weights=coded >= 2, minlength=n)
    if c.implicit is not None and len(c.annotators) >= 2:
        comparable += c.implicit  # every annotator coded them alike
    disagreeing = np.bincount(c.row_doc, weights=flags, minlength=n)
    starts, _ = runs(flags, c.row_doc, c.row_unit, separate=c.items)
    regions = np.bincount(c.row_doc[starts], minlength=n)
    return np.column_stack([comparable, disagreeing, regions]).astype(np.int64)


class DocStats:
    """:func:`doc_stats` of a setting's pieces added up per (group, document), as arrays (no object per document)."""

    def __init__(self) -> None:
        self._groups: list[np.ndarray] = []
        self._docs: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []

    def add(self, group: int, docs: np.ndarray, rows: np.ndarray) -> None:
        """A piece's rows (:func:`doc_stats`) of group index ``group``, ``docs`` their documents' indices (−1: left out)."""
        keep = docs >= 0
        self._groups.append(np.full(int(keep.sum()), group, np.int64))
        self._docs.append(docs[keep])
        self._rows.append(rows[keep])

    def table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per (group, document) added, sorted by (group, document): the group and document indices and the summed
        rows; and the pairs' positions in the order they were first added."""
        if not self._docs:
            empty = np.zeros(0, np.int64)
            return empty, empty, np.zeros((0, 3), np.int64), empty
        groups, docs = np.concatenate(self._groups), np.concatenate(self._docs)
        rows = np.concatenate(self._rows)
        stride = int(docs.max()) + 1 if docs.size else 1
        keys, first, inverse = np.unique(groups * stride + docs, return_index=True, return_inverse=True)
        sums = np.zeros((keys.size, 3), np.int64)
        np.add.at(sums, inverse.reshape(-1), rows)
        return keys // stride, keys % stride, sums, np.argsort(first, kind="stable")


def per_group(group_of: np.ndarray, doc_of: np.ndarray, sums: np.ndarray, first_found: np.ndarray) -> list[tuple[int, np.ndarray, int]]:
    """From :meth:`DocStats.table`: per group, in the order groups were first found, its index, its rows summed and
    its worst document — the highest disagreement share (0 with nothing comparable), then the most regions, then
    the first found."""
    if not group_of.size:
        return []
    found_at = np.empty(group_of.size, np.int64)
    found_at[first_found] = np.arange(group_of.size)
    comparable = sums[:, 0]
    shares = np.divide(sums[:, 1], comparable, out=np.zeros(comparable.size), where=comparable > 0)
    order = np.lexsort((found_at, -sums[:, 2], -shares, group_of))  # per group, its worst document first
    starts = np.flatnonzero(np.r_[True, group_of[order][1:] != group_of[order][:-1]])
    totals = np.add.reduceat(sums[order], starts, axis=0)
    first_of_group = np.minimum.reduceat(found_at[order], starts)
    return [(int(group_of[order[s]]), totals[i], int(doc_of[order[s]])) for i, s in sorted(enumerate(starts.tolist()), key=lambda p: first_of_group[p[0]])]


def share(comparable: int, disagreeing: int) -> float | None:
    return disagreeing / comparable if comparable else None


def rank_docs(stats: Sequence[Sequence[int]] | np.ndarray, names: Sequence[str], names_sorted: bool = False) -> np.ndarray:
    """Indexes of documents, worst first: most units in disagreement, then highest disagreement share, then most
    regions, then name (a one-unit comment wholly in dispute does not outrank a long text with hundreds).
    Documents with nothing comparable come last. ``names_sorted``: the names are in order already (no sort of them)."""
    found = np.asarray(stats, dtype=np.int64).reshape(len(names), -1)[:, :3] if len(names) else np.zeros((0, 3), np.int64)
    comparable, disagreeing, regions = found[:, 0], found[:, 1], found[:, 2]
    nothing = comparable == 0
    shares = np.divide(disagreeing, comparable, out=np.zeros(len(names)), where=~nothing)
    by_name = np.arange(len(names)) if names_sorted else _places(names)
    return np.lexsort((by_name, -regions, -shares, -disagreeing, nothing))


def _places(names: Sequence[str]) -> np.ndarray:
    """Per name, its place in sorted order."""
    places = np.empty(len(names), np.int64)
    places[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    return places


def rank_groups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with ``value`` (the summary metric, may be None/NaN) and ``share``, worst first:
    lowest value first (no value last), then highest disagreement share, then group and layer."""
    def key(r: dict[str, Any]) -> tuple:
        v = r.get("value")
        missing = v is None or (isinstance(v, float) and math.isnan(v))
        s = r.get("share")
        return (missing, 0.0 if missing else v, -(s if s is not None else -1.0), r["group"], r.get("layer") or "")

    return sorted(rows, key=key)


def dense(c: Cells) -> np.ndarray:
    """(units, annotators) int codes, -1 where an annotator has no value."""
    out = np.full((len(c.row_doc), len(c.annotators)), -1, dtype=np.int64)
    out[c.cell_row, c.cell_annotator] = c.cell_code
    return out


#: cells of the (units, values) counts :func:`coincidences` holds at once
BLOCK_CELLS = 1 << 20


def coincidences(c: Cells) -> np.ndarray:
    """(values, values): how often one annotator gave the row value while another gave the column value to the same
    unit, over all ordered pairs of different annotators; from each unit's value counts, a block of units at a time."""
    v, units = max(len(c.values), 1), len(c.row_doc)
    out = np.zeros((v, v), dtype=np.int64)
    step = max(BLOCK_CELLS // v, 1)
    for lo in range(0, units, step):
        hi = min(lo + step, units)
        a, b = np.searchsorted(c.cell_row, [lo, hi])
        counts = np.bincount((c.cell_row[a:b] - lo) * v + c.cell_code[a:b], minlength=(hi - lo) * v).reshape(hi - lo, v)
        counts = counts[counts.sum(axis=1) >= 2].astype(np.float64)  # a unit one annotator coded makes no pair
        out += np.rint(counts.T @ counts - np.diag(counts.sum(axis=0))).astype(np.int64)  # exact below 2**53
    return out


def _implicit(c: Cells) -> int:
    """The units of ``c`` not among its rows, every annotator giving them the empty value (:attr:`Cells.implicit`)."""
    return int(c.implicit.sum()) if c.implicit is not None and c.empty is not None else 0


class _Pieces:
    """Counts of one (setting, group, layer) added up over pieces of its documents (cells read in batches): each
    piece codes annotators and values its own way, so each keeps its names, and the sum is made in the order
    the whole layer's cells would have (:func:`~unitize.dataset.regions.annotator_order`, ``value_order``)."""

    def __init__(self, setting: Setting) -> None:
        self.setting = setting
        self.annotators: set[str] = set()
        self.values: set[str] = set()
        self.empty: str | None = None

    def add(self, c: Cells) -> None:
        self.annotators.update(c.annotators)
        self.values.update(c.values)
        if c.empty is not None:
            self.empty = c.values[c.empty]

    def value_codes(self) -> tuple[list[str], dict[str, int]]:
        """The values in the whole layer's order, and each one's code."""
        values = value_order(self.values, self.empty)
        return values, {v: i for i, v in enumerate(values)}

    @staticmethod
    def lut(code: dict[str, int], names: list[str]) -> np.ndarray:
        """A piece's codes (of its ``names``, values or annotators) in the whole layer's ``code``."""
        return np.array([code[x] for x in names], dtype=np.int64)


class Pairs(_Pieces):
    """Per annotator pair, the value × value table of the units both coded, over pieces (see :func:`pair_matrix`)."""

    def __init__(self, setting: Setting) -> None:
        super().__init__(setting)
        #: per piece: its annotators, its values, per pair of its annotators (i < j) the table's nonzero cells
        #: (row value, column value, count); None: crowd data
        self._pieces: list[tuple[list[str], list[str], dict[tuple[int, int], tuple[np.ndarray, ...]]]] | None = []

    def add(self, c: Cells) -> None:
        super().add(c)
        if self._pieces is None or len(self.annotators) > MAX_PAIR_ANNOTATORS:
            self._pieces = None
            return
        codes, v, k = dense(c), max(len(c.values), 1), len(c.annotators)
        alike = _implicit(c)
        tables: dict[tuple[int, int], tuple[np.ndarray, ...]] = {}
        for i in range(k):
            for j in range(i + 1, k):
                both = (codes[:, i] >= 0) & (codes[:, j] >= 0)
                table = np.bincount(codes[both, i] * v + codes[both, j], minlength=v * v).reshape(v, v)
                if alike:
                    table[c.empty, c.empty] += alike
                x, y = np.nonzero(table)
                tables[(i, j)] = (x, y, table[x, y])
        self._pieces.append((c.annotators, c.values, tables))

    def matrix(self) -> dict[str, Any] | None:
        """Per annotator pair: units both coded, observed agreement, Cohen's kappa (None on the diagonal and where
        undefined); None for crowd data (more than :data:`MAX_PAIR_ANNOTATORS` annotators)."""
        annotators = annotator_order(self.setting, self.annotators)
        k = len(annotators)
        if k < 2 or self._pieces is None:
            return None
        values, code = self.value_codes()
        v = max(len(values), 1)
        found: dict[tuple[str, str], list[tuple[np.ndarray, ...]]] = {}
        for names, piece_values, tables in self._pieces:
            lut = self.lut(code, piece_values)
            for (i, j), (x, y, counts) in tables.items():
                found.setdefault((names[i], names[j]), []).append((lut[x], lut[y], counts))
        n: list[list[int | None]] = [[None] * k for _ in range(k)]
        observed: list[list[float | None]] = [[None] * k for _ in range(k)]
        kappa: list[list[float | None]] = [[None] * k for _ in range(k)]
        for i in range(k):
            for j in range(i + 1, k):
                table = np.zeros((v, v), dtype=np.int64)
                for x, y, counts in found.get((annotators[i], annotators[j]), ()):
                    table[x, y] += counts
                total = int(table.sum())
                n[i][j] = n[j][i] = total
                if total:
                    observed[i][j] = observed[j][i] = float(np.trace(table) / total)
                    value = float(kappa_table(table.astype(np.float64))[0])
                    kappa[i][j] = kappa[j][i] = value if math.isfinite(value) else None
        return {"annotators": annotators, "n": n, "observed": observed, "kappa": kappa}


class Confusion(_Pieces):
    """The pooled label confusion matrix (see the module docstring), over pieces (see :func:`confusion`)."""

    def __init__(self, setting: Setting) -> None:
        super().__init__(setting)
        self._pieces: list[tuple[list[str], np.ndarray]] = []  # per piece: its values, its values × values counts

    def add(self, c: Cells) -> None:
        super().add(c)
        counts, k = coincidences(c), len(c.annotators)
        if alike := _implicit(c):
            counts[c.empty, c.empty] += alike * k * (k - 1)
        self._pieces.append((c.values, counts))

    def matrix(self) -> dict[str, Any]:
        """Values × values counts, with the values as a reader says them."""
        values, code = self.value_codes()
        v = max(len(values), 1)
        summed = np.zeros((v, v), dtype=np.int64)
        for piece_values, counts in self._pieces:
            if piece_values:
                lut = self.lut(code, piece_values)
                summed[np.ix_(lut, lut)] += counts
        return {"values": [value_name(self.setting, x) for x in values], "counts": summed.tolist()}


def pair_matrix(c: Cells) -> dict[str, Any] | None:
    """:meth:`Pairs.matrix` of one (setting, group, layer)'s cells."""
    pairs = Pairs(c.setting)
    pairs.add(c)
    return pairs.matrix()


def confusion(c: Cells) -> dict[str, Any]:
    """:meth:`Confusion.matrix` of one (setting, group, layer)'s cells."""
    found = Confusion(c.setting)
    found.add(c)
    return found.matrix()


class Distribution(_Pieces):
    """Per annotator how many units or items got each value, over pieces."""

    def __init__(self, setting: Setting) -> None:
        super().__init__(setting)
        self._pieces: list[tuple[list[str], list[str], np.ndarray]] = []  # per piece: annotators, values, their counts

    def add(self, c: Cells) -> None:
        super().add(c)
        v, k = max(len(c.values), 1), len(c.annotators)
        counts = np.bincount(c.cell_annotator * v + c.cell_code, minlength=k * v).reshape(k, v)
        self._pieces.append((c.annotators, c.values, counts))

    def counts(self, most: int = 40) -> dict[str, Any]:
        """The counts of the ``most`` most active annotators (crowd data), the values as a reader says them."""
        annotators = annotator_order(self.setting, self.annotators)
        at = {a: i for i, a in enumerate(annotators)}
        values, code = self.value_codes()
        summed = np.zeros((len(annotators), max(len(values), 1)), dtype=np.int64)
        for names, piece_values, counts in self._pieces:
            if piece_values:
                summed[np.ix_(self.lut(at, names), self.lut(code, piece_values))] += counts
        k = len(annotators)
        order = np.argsort(-summed.sum(axis=1), kind="stable")[:most] if k > most else np.arange(k)
        return {"values": [value_name(self.setting, x) for x in values], "annotators": [annotators[i] for i in order],
                "counts": summed[order].tolist(), "omitted": max(k - most, 0)}
