"""The thesis's results summary (Yalçınkaya 2010, Table 22) from a results table.

One row per group (connective): annotators, files (documents), annotations
(relations, where the results count them: discourse data), then one column per
setting and layer of one metric, named as the thesis names them — metric
letter, coding unit, approach, layer: ``AWB_Arg1`` is alpha(-U) on words with
the boundary approach for Arg1. Below, the mean of each column and the counts
of perfect (> 0.8), substantial (0.6–0.8] and moderate (0.4–0.6] cases on the
Landis & Koch scale.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa

from .. import metrics as registry
from ..errors import RunError
from ..metrics import Rows, Scale
from ..output import csv_text
from ..schema import RELATIONS


def describe(metric: str) -> str:
    """The metric as a title names it: ``span-f1 (span F1, exact match, mean over annotator pairs)``."""
    m = registry.get(metric)
    return f"{metric} ({m.pair_mean})" if m.pair_mean and m.rows is Rows.PAIRS_AND_MEAN else metric


def scale_note(metric: str) -> str:
    """The line under the summary: the Landis & Koch bands, and what NaN means."""
    bands = "Landis & Koch: perfect > 0.8, substantial 0.6–0.8, moderate 0.4–0.6"
    if metric and registry.get(metric).scale is Scale.AGREEMENT:
        bands += f" (bands made for chance-corrected coefficients; {metric} is not chance-corrected, so read them as a comparison only)"
    return f"{bands}. NaN: see `reason` in results.csv."


def letter(metric: str) -> str:
    """The summary column's letter of a metric (the thesis's Table 14: Q, K, A; the others by analogy)."""
    found = registry.get(metric).letter
    if found is None:
        raise RunError(f"the summary takes one value per layer; {metric!r} has none (choose {', '.join(registry.summarizable())})")
    return found
UNIT_LETTERS = {"word": "W", "char": "C"}
APPROACH_LETTERS = {"boundary": "B", "interval": "I"}
#: (name, lower bound exclusive, upper bound inclusive)
SCALE = (("Perfect", 0.8, math.inf), ("Substantial", 0.6, 0.8), ("Moderate", 0.4, 0.6))


def landis_koch(values: list[float]) -> dict[str, int]:
    """Counts of perfect / substantial / moderate agreement cases (NaN not counted)."""
    return {name: sum(1 for v in values if not math.isnan(v) and lo < v <= hi) for name, lo, hi in SCALE}


#: mode -> a letter after the approach's (separate layers have none, as in the thesis)
MODE_LETTERS = {"labels": "L", "combined": "M"}


def column_name(metric: str, unit: str, approach: str | None, layer: str, setting: str | None = None, mode: str | None = None) -> str:
    if unit == "item":  # item labels: one column per setting (items, items-long)
        return f"{letter(metric)}_{setting or layer}"
    return f"{letter(metric)}{UNIT_LETTERS.get(unit, unit)}{APPROACH_LETTERS.get(approach or '', approach)}{MODE_LETTERS.get(mode or '', '')}_{layer}"


def whole_rows(results: pa.Table, columns: list[str] | None = None, metric: str | None = None) -> list[dict[str, Any]]:
    """The rows of whole (setting, group, layer)s (:func:`~unitize.metrics.whole_row`; only ``columns`` when given), picked
    out in Arrow: the breakdown rows of a ``--by-doc`` run, which grow with the documents, never become Python objects.
    With ``metric``, that metric's rows of the whole cell alone (a pairwise metric's mean, not its pairs)."""
    import pyarrow.compute as pc

    mask = registry.whole_mask(results)
    if metric is not None:
        mask = pc.and_(mask, pc.equal(results.column("metric"), metric))
        if "pair" in results.column_names:
            pair = results.column("pair")
            mask = pc.and_(mask, pc.or_kleene(pc.is_null(pair), pc.equal(pair, "mean")))
    picked = results.filter(mask)
    return (picked.select(columns) if columns is not None else picked).to_pylist()


#: ``group_by`` -> the summary's first column (the thesis's "Connective")
GROUP_NAMES = {"connective": "Connective", "none": "Group", "type": "Type", "sense": "Sense", "doc": "Document", "label": "Label"}


def title(metric: str, group: str) -> str:
    """The summary's title: the thesis's Table 22 named for a discourse bank (groups are connectives) only."""
    thesis = " (Yalçınkaya 2010, Table 22 layout)" if group == "Connective" else ""
    return f"Agreement summary: {describe(metric)} per {group.lower()}{thesis}"


def legend(metric: str, items: bool = False) -> str:
    """What the value columns' names say: ``AWB_Arg1`` is the metric's letter, the unit, the approach (and L for a
    label matrix), then the layer; an item column is the letter and the setting."""
    if items:
        return f"Columns: {letter(metric)} = {metric}, then the setting."
    return (f"Columns: {letter(metric)} = {metric}; W/C = word/character units; B/I = boundary/interval approach; "
            "L = the label matrix; after _ the layer.")


def summary_rows(
    results: pa.Table, metric: str, group: str = "Connective"
) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """(columns, group rows, footer rows) of the summary for one metric; ``group`` names the first column."""
    letter(metric)  # refuses a metric without one value per layer
    rows = [r for r in whole_rows(results, metric=metric) if r["mode"] != "combined"]
    items = bool(rows) and all(r["unit"] == "item" for r in rows)
    rows = [r for r in rows if (r["unit"] == "item") == items]
    layers = list(dict.fromkeys(r["layer"] for r in rows if "+" not in r["layer"]))
    settings = sorted(
        {(r["unit"], r["approach"], r["setting"] if items else None, r["mode"]) for r in rows},
        key=lambda s: (list(UNIT_LETTERS).index(s[0]) if s[0] in UNIT_LETTERS else 9, s[0], MODE_LETTERS.get(s[3] or "", ""), s[1] or "", s[2] or ""),
    )
    columns = [column_name(metric, u, a, layer, name, mode) for u, a, name, mode in settings for layer in layers]
    # a discourse bank's counts as the thesis names them (files) and elsewhere documents (files mean nothing to a span
    # tool); "Annotation #" where the results count relations (discourse data: a span tool has none)
    counted = ["Annotator #", "Item #"] if items else [
        "Annotator #", "File #" if group == "Connective" else "Document #", *(["Annotation #"] if RELATIONS in results.column_names else [])]
    groups: dict[str, dict[str, Any]] = {}
    for r in rows:
        g = groups.setdefault(r["group"], {group: r["group"], **dict.fromkeys(counted, 0)})
        g["Annotator #"] = max(g["Annotator #"], r["annotators"] or 0)
        for name, key in (("File #", "documents"), ("Document #", "documents"), ("Annotation #", RELATIONS), ("Item #", "units")):
            if name in g:
                g[name] = max(g[name], r[key] or 0)
        if "+" not in r["layer"]:
            g[column_name(metric, r["unit"], r["approach"], r["layer"], r["setting"], r["mode"])] = r["value"]
    body = [groups[k] for k in sorted(groups)]
    footer: list[dict[str, Any]] = []
    mean: dict[str, str | float] = {group: "Mean"}
    counts: dict[str, dict[str, str | float]] = {name: {group: f"{name} Agreement Cases"} for name, _, _ in SCALE}
    for c in columns:
        values = [g[c] for g in body if c in g and g[c] is not None and not math.isnan(g[c])]
        mean[c] = sum(values) / len(values) if values else math.nan
        for name, n in landis_koch(values).items():
            counts[name][c] = n
    footer.append(mean)
    if registry.get(metric).scale is not Scale.STATISTIC:  # a test statistic is not read on agreement bands
        footer += list(counts.values())
    return [group, *counted, *columns], body, footer


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def to_markdown(columns: list[str], body: list[dict[str, Any]], footer: list[dict[str, Any]], title: str, note: str | None = None,
                key: str = "") -> str:
    lines = [f"# {title}", "", "| " + " | ".join(columns) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(columns))) + "|"]
    for row in body + footer:
        lines.append("| " + " | ".join(_cell(row.get(c)).replace("|", "\\|") for c in columns) + " |")
    lines += ["", note or scale_note(""), *([key] if key else []), ""]
    return "\n".join(lines)


def to_csv(columns: list[str], body: list[dict[str, Any]], footer: list[dict[str, Any]]) -> str:
    return csv_text([columns, *([_cell(row.get(c)) for c in columns] for row in body + footer)])


def screen_table(results: pa.Table, metric: str, group: str = "Group", ci: registry.Options | None = None) -> list[str]:
    """The compact table a run prints: per setting and layer, the metric's mean, min and max over
    the groups and an interval — with one group its bootstrap interval, with several (and ``ci``,
    a :class:`~unitize.metrics.bootstrap.Options`) the percentile bootstrap interval of the mean
    over the groups, resampled with the same replicates and seed."""
    import numpy as np

    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in whole_rows(results, metric=metric):
        cells.setdefault((r["setting"], r["layer"]), []).append(r)
    if not cells:
        return []
    level = ci.level if ci is not None else None
    head = f"{int(round(level * 100))}% CI" if level else "CI"
    width = max(len("setting"), *(len(s) for s, _ in cells))
    lw = max(len("layer"), *(len(layer) for _, layer in cells))
    groups = len({r["group"] for rows in cells.values() for r in rows})
    lines = [f"{describe(metric)} over the {groups} {group.lower()}{'s' * (groups != 1)} (mean, min, max; n = {group.lower()}s with a value):",
             f"  {'setting':<{width}}  {'layer':<{lw}}  {'n':>4}  {'mean':>6}  {'min':>6}  {'max':>6}  {head}"]
    for (setting, layer), rows in cells.items():
        values = np.array([r["value"] for r in rows if r["value"] is not None and math.isfinite(r["value"])])
        if values.size == 0:
            lines.append(f"  {setting:<{width}}  {layer:<{lw}}  {0:>4}  {'NaN':>6}  {'':>6}  {'':>6}  (every value NaN: see reason)")
            continue
        interval = "-"
        if values.size == 1:
            [r] = [r for r in rows if r["value"] is not None and math.isfinite(r["value"])]
            if r["ci_low"] is not None:
                interval = f"{r['ci_low']:.3f} – {r['ci_high']:.3f}"
        elif ci is not None:
            rng = np.random.default_rng(ci.seed)
            means = values[rng.integers(0, values.size, size=(ci.replicates, values.size))].mean(axis=1)
            tail = (1 - ci.level) / 2 * 100
            low, high = np.percentile(means, [tail, 100 - tail])
            interval = f"{low:.3f} – {high:.3f} (of the mean)"
        lines.append(f"  {setting:<{width}}  {layer:<{lw}}  {values.size:>4}  {values.mean():>6.3f}  {values.min():>6.3f}  "
                     f"{values.max():>6.3f}  {interval}")
    return lines
