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

from ..dataset.regions import Cells, runs, unit_flags
from ..metrics.coefficients import kappa_table

#: above this many annotators (crowd data) no pair matrix is built
MAX_PAIR_ANNOTATORS = 40


def doc_stats(c: Cells) -> np.ndarray:
    """(documents, 3) int: per document of ``c.docs`` its comparable units, disagreeing units and regions."""
    coded, flags = unit_flags(c)
    n = len(c.docs)
    comparable = np.bincount(c.row_doc, weights=coded >= 2, minlength=n)
    disagreeing = np.bincount(c.row_doc, weights=flags, minlength=n)
    starts, _ = runs(flags, c.row_doc, c.row_unit, separate=c.items)
    regions = np.bincount(c.row_doc[starts], minlength=n)
    return np.column_stack([comparable, disagreeing, regions]).astype(np.int64)


def share(comparable: int, disagreeing: int) -> float | None:
    return disagreeing / comparable if comparable else None


def rank_docs(stats: Sequence[Sequence[int] | np.ndarray], names: Sequence[str]) -> list[int]:
    """Indexes of documents, worst first: most units in disagreement, then highest disagreement share, then most
    regions, then name (a one-unit comment wholly in dispute does not outrank a long text with hundreds).
    Documents with nothing comparable come last."""
    def key(i: int) -> tuple:
        comparable, disagreeing, regions = stats[i][:3]
        s = share(comparable, disagreeing)
        return (s is None, -disagreeing, -(s or 0.0), -regions, names[i])

    return sorted(range(len(names)), key=key)


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


def pair_matrix(c: Cells) -> dict[str, Any] | None:
    """Per annotator pair: units both coded, observed agreement, Cohen's kappa (None on the diagonal
    and where undefined); None for crowd data (more than :data:`MAX_PAIR_ANNOTATORS` annotators)."""
    k = len(c.annotators)
    if k < 2 or k > MAX_PAIR_ANNOTATORS:
        return None
    codes, v = dense(c), max(len(c.values), 1)
    n: list[list[int | None]] = [[None] * k for _ in range(k)]
    observed: list[list[float | None]] = [[None] * k for _ in range(k)]
    kappa: list[list[float | None]] = [[None] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1, k):
            both = (codes[:, i] >= 0) & (codes[:, j] >= 0)
            table = np.bincount(codes[both, i] * v + codes[both, j], minlength=v * v).reshape(v, v)
            total = int(table.sum())
            n[i][j] = n[j][i] = total
            if total:
                observed[i][j] = observed[j][i] = float(np.trace(table) / total)
                value = float(kappa_table(table.astype(np.float64))[0])
                kappa[i][j] = kappa[j][i] = value if math.isfinite(value) else None
    return {"annotators": list(c.annotators), "n": n, "observed": observed, "kappa": kappa}


def value_counts(c: Cells) -> np.ndarray:
    """(units, values): how many annotators gave each value to each unit."""
    v = max(len(c.values), 1)
    flat = np.bincount(c.cell_row * v + c.cell_code, minlength=len(c.row_doc) * v)
    return flat.reshape(len(c.row_doc), v)


def confusion(c: Cells) -> dict[str, Any]:
    """The pooled label confusion matrix (see the module docstring): values × values counts."""
    counts = value_counts(c)
    counts = counts[counts.sum(axis=1) >= 2].astype(np.float64)  # a unit one annotator coded makes no pair
    matrix = np.rint(counts.T @ counts - np.diag(counts.sum(axis=0))).astype(np.int64)  # exact below 2**53
    return {"values": [c.name(i) for i in range(len(c.values))], "counts": matrix.tolist()}


def distribution(c: Cells, most: int = 40) -> dict[str, Any]:
    """Per annotator (the ``most`` most active, for crowd data) how many units or items got each value."""
    v, k = max(len(c.values), 1), len(c.annotators)
    counts = np.bincount(c.cell_annotator * v + c.cell_code, minlength=k * v).reshape(k, v)
    order = np.argsort(-counts.sum(axis=1), kind="stable")[:most] if k > most else np.arange(k)
    return {"values": [c.name(i) for i in range(len(c.values))], "annotators": [c.annotators[i] for i in order],
            "counts": counts[order].tolist(), "omitted": max(k - most, 0)}
