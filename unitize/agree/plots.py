"""Box-and-whisker plots of a results table (the thesis's Figures 21–25), PNG and SVG.

One figure per metric and layer: a box per setting over the groups' values
(Figure 21: Fleiss' kappa for Arg1 as KCB, KCI, KWB, KWI). Needs matplotlib
(``pip install 'unitize[plot]'``).
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from pathlib import Path

import pyarrow as pa

from .. import metrics as registry
from ..errors import UnitizeError
from ..metrics import Scale
from ..names import file_name
from .summary import column_name, letter, whole_rows


class PlotError(UnitizeError):
    """Plots were asked for but cannot be drawn."""


def _metric_stem(metric: str) -> str:
    """A metric's name (declared, not data) in a file name: ``|u-alpha`` → ``_u-alpha``."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", metric)


#: code letters of the box labels, for the legend
_UNITS = {"W": "words", "C": "characters"}
_APPROACHES = {"I": "interval", "B": "boundary"}
_MODES = {"L": "label matrix", "M": "layers combined"}


def _meaning(code: str, metric: str) -> str:
    """A box label (``AWI``, ``AC1CBL``, ``a_items``) in words."""
    rest = code[len(letter(metric)):]
    if rest.startswith("_"):
        return f"{code}: {rest[1:]}"
    parts = [_UNITS.get(rest[:1], rest[:1]), _APPROACHES.get(rest[1:2], rest[1:2])]
    if rest[2:]:
        parts.append(_MODES.get(rest[2:], rest[2:]))
    return f"{code}: {registry.get(metric).title}, {', '.join(parts)}"


def _plotted(metric: str) -> bool:
    """A metric with one value per layer that is read on a 0–1 scale (not a test statistic)."""
    m = registry.get(metric) if metric in registry.names() else None
    return m is not None and m.letter is not None and m.scale is not Scale.STATISTIC


def box_plots(results: pa.Table, dest: Path) -> list[Path]:
    """Write the plots into ``dest``; return the files written (sorted).

    Per metric and layer, one box per setting over the groups' values (whiskers at min and max),
    every value drawn as a point on it (a box of one value is just its point), ``n`` under each
    box, the codes explained below the plot. Coefficients are drawn on a fixed 0–1 axis (extended
    below 0 when a value is negative); Cochran's Q, a test statistic, is not drawn.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'unitize[plot]'") from None
    series: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in whole_rows(results):
        if not _plotted(r["metric"]) or r["mode"] == "combined" or r["pair"] not in (None, "mean"):
            continue
        if r["value"] is None or math.isnan(r["value"]):
            continue
        label = column_name(r["metric"], r["unit"], r["approach"], r["layer"], r["setting"], r["mode"]).rsplit("_", 1)[0] \
            if r["unit"] != "item" else f"{letter(r['metric'])}_{r['setting']}"
        series[(r["metric"], r["layer"])][label].append(r["value"])
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    plt.rcParams["svg.hashsalt"] = "unitize"  # stable SVG ids across runs
    for (metric, layer), boxes in sorted(series.items()):
        labels = sorted(boxes)
        legend = [_meaning(k, metric) for k in labels]
        fig, ax = plt.subplots(figsize=(max(4.0, 1.2 + 1.1 * len(labels)), 4.2 + 0.18 * len(legend)))
        data = [boxes[k] for k in labels]
        if any(len(v) > 1 for v in data):
            ax.boxplot([v if len(v) > 1 else [] for v in data], positions=range(1, len(labels) + 1), whis=(0, 100),
                       showfliers=False, widths=0.5)
        rng = random.Random(0)  # fixed jitter: the same figure every run
        for i, values in enumerate(data, start=1):
            jitter = [i + (rng.uniform(-0.12, 0.12) if len(values) > 1 else 0.0) for _ in values]
            ax.plot(jitter, values, "o", color="tab:blue", alpha=0.7, markersize=5)
        ax.set_xticks(range(1, len(labels) + 1), [f"{k}\nn={len(v)}" for k, v in zip(labels, data)])
        ax.set_xlim(0.4, len(labels) + 0.6)
        low = min(min(v) for v in data)
        ax.set_ylim(min(0.0, low - 0.05), 1.0 + 0.02)
        if low < 0:
            ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_title(f"{registry.get(metric).title}, {layer}")
        ax.set_ylabel(metric)
        ax.grid(axis="y", alpha=0.3)
        fig.text(0.02, 0.01, "\n".join(legend), fontsize=8, va="bottom", ha="left")
        fig.tight_layout(rect=(0, 0.06 * (1 + 0.5 * len(legend)) / (1 + 0.04 * len(legend)) if legend else 0, 1, 1))
        stem = dest / f"{_metric_stem(metric)}_{file_name(layer, 100)}"  # a layer is data: unitize.names
        for ext in ("png", "svg"):
            path = stem.parent / f"{stem.name}.{ext}"  # not with_suffix: a layer name may hold a dot
            fig.savefig(path, metadata={"Date": None} if ext == "svg" else {"Software": None})
            written.append(path)
        plt.close(fig)
    return sorted(written)


__all__ = ["PlotError", "box_plots", "column_name"]
