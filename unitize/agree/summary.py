"""The thesis's results summary (Yalçınkaya 2010, Table 22) from a results table.

One row per group (connective): annotators, files (documents), annotations
(relations), then one column per setting and layer of one metric, named as the
thesis names them — metric letter, coding unit, approach, layer: ``AWB_Arg1``
is alpha(-U) on words with the boundary approach for Arg1. Below, the mean of
each column and the counts of perfect (> 0.8), substantial (0.6–0.8] and
moderate (0.4–0.6] cases on the Landis & Koch scale.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import pyarrow as pa

#: metric -> the thesis's letter (Table 14: Q, K, A); the others by analogy
LETTERS = {"alpha-u": "A", "alpha": "a", "fleiss": "K", "cochran-q": "Q", "gamma": "G",
           "cohen-mean": "k", "ac1": "AC1", "ac2": "AC2", "percent": "P",
           "u-alpha": "uA", "|u-alpha": "buA", "cu-alpha": "cuA"}
UNIT_LETTERS = {"word": "W", "char": "C"}
APPROACH_LETTERS = {"boundary": "B", "interval": "I"}
#: (name, lower bound exclusive, upper bound inclusive)
SCALE = (("Perfect", 0.8, math.inf), ("Substantial", 0.6, 0.8), ("Moderate", 0.4, 0.6))


def landis_koch(values: list[float]) -> dict[str, int]:
    """Counts of perfect / substantial / moderate agreement cases (NaN not counted)."""
    return {name: sum(1 for v in values if not math.isnan(v) and lo < v <= hi) for name, lo, hi in SCALE}


def column_name(metric: str, unit: str, approach: str, layer: str) -> str:
    return f"{LETTERS[metric]}{UNIT_LETTERS.get(unit, unit)}{APPROACH_LETTERS.get(approach, approach)}_{layer}"


def summary_rows(results: pa.Table, metric: str = "alpha-u") -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """(columns, group rows, footer rows) of the summary for one metric."""
    if metric not in LETTERS:
        raise ValueError(f"the summary takes one value per layer; {metric!r} has none (choose {', '.join(LETTERS)})")
    rows = [r for r in results.to_pylist()
            if r["metric"] == metric and r["mode"] != "combined" and r["unit"] != "item" and r.get("label") is None and r.get("doc") is None]
    layers = list(dict.fromkeys(r["layer"] for r in rows if "+" not in r["layer"]))
    settings = sorted(
        {(r["unit"], r["approach"]) for r in rows},
        key=lambda s: (list(UNIT_LETTERS).index(s[0]) if s[0] in UNIT_LETTERS else 9, s[0], s[1]),
    )
    columns = [column_name(metric, u, a, layer) for u, a in settings for layer in layers]
    groups: dict[str, dict[str, Any]] = {}
    for r in rows:
        g = groups.setdefault(r["group"], {"Connective": r["group"], "Annotator #": 0, "File #": 0, "Annotation #": 0})
        g["Annotator #"] = max(g["Annotator #"], r["annotators"] or 0)
        g["File #"] = max(g["File #"], r["documents"] or 0)
        g["Annotation #"] = max(g["Annotation #"], r["relations"] or 0)
        if "+" not in r["layer"]:
            g[column_name(metric, r["unit"], r["approach"], r["layer"])] = r["value"]
    body = [groups[k] for k in sorted(groups)]
    footer: list[dict[str, Any]] = []
    mean = {"Connective": "Mean"}
    counts = {name: {"Connective": f"{name} Agreement Cases"} for name, _, _ in SCALE}
    for c in columns:
        values = [g[c] for g in body if c in g and g[c] is not None and not math.isnan(g[c])]
        mean[c] = sum(values) / len(values) if values else math.nan
        for name, n in landis_koch(values).items():
            counts[name][c] = n
    footer.append(mean)
    if metric != "cochran-q":
        footer += list(counts.values())
    return ["Connective", "Annotator #", "File #", "Annotation #", *columns], body, footer


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def to_markdown(columns: list[str], body: list[dict[str, Any]], footer: list[dict[str, Any]], title: str) -> str:
    lines = [f"# {title}", "", "| " + " | ".join(columns) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(columns))) + "|"]
    for row in body + footer:
        lines.append("| " + " | ".join(_cell(row.get(c)).replace("|", "\\|") for c in columns) + " |")
    lines += ["", "Landis & Koch: perfect > 0.8, substantial 0.6–0.8, moderate 0.4–0.6. NaN: see `reason` in results.csv.", ""]
    return "\n".join(lines)


def to_csv(columns: list[str], body: list[dict[str, Any]], footer: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in body + footer:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buf.getvalue()
