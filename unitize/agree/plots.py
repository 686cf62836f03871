"""Box-and-whisker plots of a results table (the thesis's Figures 21–25), PNG and SVG.

One figure per metric and layer: a box per setting over the groups' values
(Figure 21: Fleiss' kappa for Arg1 as KCB, KCI, KWB, KWI). Needs matplotlib
(``pip install 'unitize[plot]'``).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

import pyarrow as pa

from .summary import LETTERS, column_name

NAMES = {
    "alpha-u": "Krippendorff's alpha-U",
    "alpha": "Krippendorff's alpha",
    "fleiss": "Fleiss' kappa",
    "cohen-mean": "mean Cohen's kappa",
    "ac1": "Gwet's AC1",
    "ac2": "Gwet's AC2",
    "percent": "percent agreement",
    "cochran-q": "Cochran's Q",
    "gamma": "gamma",
    "u-alpha": "Krippendorff's uα",
    "|u-alpha": "Krippendorff's |uα (units against gaps)",
    "cu-alpha": "Krippendorff's cuα (values of intersecting units)",
}


class PlotError(RuntimeError):
    """Plots were asked for but cannot be drawn."""


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name)


def box_plots(results: pa.Table, dest: Path) -> list[Path]:
    """Write the plots into ``dest``; return the files written (sorted)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'unitize[plot]'") from None
    series: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results.to_pylist():
        if r["metric"] not in LETTERS or r["mode"] == "combined" or r["unit"] == "item" or r.get("label") is not None or r.get("doc") is not None:
            continue
        if r["value"] is None or math.isnan(r["value"]):
            continue
        label = column_name(r["metric"], r["unit"], r["approach"], r["layer"]).split("_", 1)[0]
        series[(r["metric"], r["layer"])][label].append(r["value"])
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    plt.rcParams["svg.hashsalt"] = "unitize"  # stable SVG ids across runs
    for (metric, layer), boxes in sorted(series.items()):
        labels = sorted(boxes)
        fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(labels), 4.0))
        ax.boxplot([boxes[k] for k in labels], tick_labels=labels, whis=(0, 100))
        ax.set_title(f"{NAMES[metric]}, {layer}")
        ax.set_ylabel(metric)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        stem = dest / f"{_safe(metric)}_{_safe(layer)}"
        for ext in ("png", "svg"):
            path = stem.with_suffix(f".{ext}")
            fig.savefig(path, metadata={"Date": None} if ext == "svg" else {"Software": None})
            written.append(path)
        plt.close(fig)
    return sorted(written)


__all__ = ["PlotError", "box_plots", "column_name"]
