"""The agreement each comparison of roles needs (the roles themselves: :mod:`unitize.dataset.roles`).

With roles, ``unitize agree`` measures the humans alone (the results table), and beside it
(:func:`comparisons`) every pair of a human and an annotator (human–human: the human ceiling;
candidate–human) and each family's runs together (run-to-run stability), each with the metrics and
intervals asked for, into ``roles.csv``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .. import metrics as registry
from ..dataset.roles import CANDIDATE_HUMAN, HUMAN_HUMAN, STABILITY, Roles, ceiling_values
from ..metrics.metric import Rows

#: the columns of roles.csv
COLUMNS = ("setting", "group", "layer", "metric", "comparison", "family", "annotator_a", "annotator_b", "pair", "value", "reason",
           "ci_low", "ci_high", "units")


def comparisons(roles: Roles, humans: bool = True) -> list[tuple[str, str, tuple[str, ...]]]:
    """(comparison, family, the annotators measured together): every human pair (unless ``humans`` is False), every
    candidate with every human, and each family of two or more runs."""
    out: list[tuple[str, str, tuple[str, ...]]] = [(HUMAN_HUMAN, "", (a, b)) for a, b in combinations(roles.humans, 2)] if humans else []
    out += [(CANDIDATE_HUMAN, family, (c, h)) for family, runs in roles.families.items() for c in runs for h in roles.humans]
    out += [(STABILITY, family, tuple(runs)) for family, runs in roles.families.items() if len(runs) > 1]
    return out


def pairs_of(roles: Roles) -> list[tuple[str, str]]:
    """The comparisons of two annotators but the pairs of humans (measured in one pass, :mod:`.pairs`, with every pair of
    humans a cell has): each candidate with each human, and a family of two runs."""
    return [(who[0], who[1]) for kind, _, who in comparisons(roles, humans=False) if len(who) == 2]


def role_rows(r: dict[str, Any], roles: Roles) -> list[dict[str, Any]]:
    """The roles.csv rows of one row measured on a pair (:mod:`.pairs`): its comparison and family from the roles; a row of
    no pair (a cell that could not be split into pairs: crowd data) once per kind of comparison."""
    a, b = r["annotator_a"], r["annotator_b"]
    if a is None:
        kinds = [(HUMAN_HUMAN, ""), *((CANDIDATE_HUMAN, f) for f in roles.families),
                 *((STABILITY, f) for f, runs in roles.families.items() if len(runs) > 1)]
        return [_row(r, kind, family, (None, None)) for kind, family in kinds]
    humans = set(roles.humans)
    if a in humans and b in humans:
        return [_row(r, HUMAN_HUMAN, "", (a, b))]
    family = roles.family_of(a)
    return [_row(r, STABILITY if b not in humans else CANDIDATE_HUMAN, family, (a, b))]


def _row(r: dict[str, Any], comparison: str, family: str, who: tuple[str | None, str | None]) -> dict[str, Any]:
    return {"setting": r["setting"], "group": r["group"], "layer": r["layer"], "metric": r["metric"], "comparison": comparison,
            "family": family or None, "annotator_a": who[0], "annotator_b": who[1], "pair": r["pair"], "value": r["value"],
            "reason": r["reason"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "units": r["units_used"]}


def human_pairs_from(results: pa.Table, measured: list[dict[str, Any]], compared: list[dict[str, Any]], roles: Roles,
                     metrics: Sequence[str]) -> list[dict[str, Any]]:
    """``compared`` with the human pairs' rows of the metrics with a row per pair taken from the humans' ``results``
    (``annotator_a`` the first in the roles' order), every human pair's rows in the order one pass gives them: per
    cell as ``measured`` (and ``results``) meet them, then the metrics' order."""
    native = [m.name for m in registry.resolve(metrics) if m.rows in (Rows.PAIRS, Rows.PAIRS_AND_MEAN)]
    at = {a: k for k, a in enumerate(roles.humans)}
    found = []
    if native and results.num_rows:  # a pair's whole-cell rows, chosen in Arrow: a --by-doc table holds millions of others
        whole = registry.whole_mask(results)
        paired = pc.and_(pc.is_valid(results["annotator_a"]), pc.not_equal(pc.fill_null(results["pair"], "mean"), "mean"))
        chosen = pc.and_(pc.and_(whole, paired), pc.is_in(results["metric"], value_set=pa.array(native, pa.string())))
        for r in results.filter(chosen).to_pylist():
            a, b = r["annotator_a"], r["annotator_b"]
            if a in at and b in at:
                found += role_rows({**r, "annotator_a": b, "annotator_b": a} if at[a] > at[b] else r, roles)
    if not found:
        return compared
    cell: dict[tuple[Any, ...], int] = {}
    for r in [*measured, *found]:
        cell.setdefault((r["setting"], r["group"], r["layer"]), len(cell))
    position = {m.name: k for k, m in enumerate(registry.resolve(metrics))}
    human = sorted([r for r in compared if r["comparison"] == HUMAN_HUMAN] + found, key=lambda r: (
        at.get(r["annotator_a"], -1), at.get(r["annotator_b"], -1), cell[(r["setting"], r["group"], r["layer"])], position[r["metric"]]))
    return human + [r for r in compared if r["comparison"] != HUMAN_HUMAN]


def order_of(roles: Roles) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """The order of roles.csv: by kind of comparison (humans, candidates with humans, runs), then the annotators in
    the roles' order, then setting, group and layer as measured (a stable sort keeps the last)."""
    kind = {HUMAN_HUMAN: 0, CANDIDATE_HUMAN: 1, STABILITY: 2}
    at = {a: k for k, a in enumerate([*roles.humans, *roles.candidates])}
    return lambda r: (kind[r["comparison"]], at.get(r["annotator_a"], -1), at.get(r["annotator_b"], -1))


def rows_of(results: list[dict[str, Any]], comparison: str, family: str, annotators: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of roles.csv from one comparison's result rows (whole cells and their pairs, no breakdowns; a
    comparison of two annotators has its pair's row, not also the equal mean of that one pair)."""
    out = []
    for r in results:
        if r["label"] is not None or r["doc"] is not None or r["annotator"] is not None:
            continue
        if r["pair"] == "mean" and len(annotators) == 2:
            continue  # the mean of the one pair: its pair row says it, once
        a, b = annotators if len(annotators) == 2 else (r["annotator_a"], r["annotator_b"])  # a pair: the candidate first
        out.append({"setting": r["setting"], "group": r["group"], "layer": r["layer"], "metric": r["metric"], "comparison": comparison,
                    "family": family or None, "annotator_a": a, "annotator_b": b, "pair": r["pair"], "value": r["value"],
                    "reason": r["reason"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "units": r["units_used"]})
    return out


def ceiling(rows: list[dict[str, Any]], metric: str) -> list[str]:
    """On screen: per setting and layer, the mean of ``metric`` over the human pairs, over each candidate's pairs with
    the humans, and each family's stability (:func:`ceiling_values`)."""
    cells = ceiling_values(rows, metric)
    lines = [f"human ceiling ({metric}: mean over pairs; candidates with each human; runs with each other):"] if cells else []
    for (setting, layer), by in sorted(cells.items()):
        shown = ", ".join(f"{who} {sum(v) / len(v):.3f}" for who, v in by.items())
        lines.append(f"  {setting} {layer}: {shown}")
    return lines
