"""``unitize plan``: how many documents (or items) a study needs, from a pilot's output directory.

A pilot's data are resampled at N = ½×, 1×, 2×, 4× and 8× its size: each metric's bootstrap (the
resampling its intervals use in ``unitize agree``: units for the coding metrics, documents for the
segment metrics; :class:`~unitize.metrics.Options` ``scale``) draws that many, and the half-width of
its percentile interval is the interval a study of that size would expect. With candidates, the
alt-test is run on that many instances drawn from the pilot's, and how often it passes is its power
(:func:`~unitize.metrics.alttest.pass_probability`). Seeded: the same pilot and seed give the same plan.

Written to ``OUT/plan/``: ``plan.csv`` (one row per setting, group, layer, metric — or alt-test
candidate — and size), with ``--plot`` ``plan.png``/``.svg``; and one recommendation on screen: the
size at which the widest interval of the first metric reaches the target half-width (the pilot's
half-width scaled by √(N₁/N)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import metrics as registry
from ..dataset import OutputData
from ..dataset.roles import resolve as resolve_roles
from ..metrics import Options
from ..metrics.alttest import pass_probability
from ..output import atomic_write_text, locks_output
from ..runtime.executors import Executor, executor_of
from . import alttest
from .measure import measure
from .plots import PlotError

#: the sizes planned, as multiples of the pilot's
FACTORS = (0.5, 1.0, 2.0, 4.0, 8.0)
COLUMNS = ("setting", "group", "layer", "metric", "pair", "candidate", "factor", "size", "unit", "ci_half_width", "pass_probability")


@dataclass
class Plan:
    rows: list[dict[str, Any]] = field(default_factory=list)
    recommendation: str = ""
    files: list[Path] = field(default_factory=list)


def _sized(row: dict[str, Any], factor: float, items: bool) -> tuple[int, str]:
    """The size a row's resample stands for: documents (items) of the cell × factor."""
    base = row["units"] if items else (row["documents"] or 0)
    return max(1, round(base * factor)), "items" if items else "documents"


@locks_output
def plan(out: Path | str, *, metrics: Sequence[str] | None = None, settings: Sequence[str] | None = None, groups: Sequence[str] | None = None,
         level: float = 0.95, replicates: int = 200, seed: int = 0, target: float = 0.05, candidates: Sequence[str] | None = None,
         humans: Sequence[str] | None = None, alt: Any = None, plot: bool = False, executor: Executor | str | None = None) -> Plan:
    """The plan of a pilot (see the module docstring); ``alt``: :class:`~unitize.agree.AltOptions`."""
    out = Path(out)
    data = OutputData(out)
    roles = resolve_roles(data, candidates, humans)
    chosen = list(metrics or [m.name for m in registry.METRICS if m.default and m.resampling is not registry.Resampling.NONE])
    measured = OutputData(out, roles.humans) if roles is not None else data
    result = Plan()
    pool, owned = executor_of(executor)
    try:
        for factor in FACTORS:
            ci = Options(level=level, replicates=replicates, seed=seed, scale=factor, method="bootstrap")
            table = measure(measured, chosen, settings=settings, groups=groups, ci=ci, executor=pool)
            for r in table.to_pylist():
                if r["ci_low"] is None or r["label"] is not None or r["doc"] is not None or r["annotator"] is not None:
                    continue
                size, unit = _sized(r, factor, r["unit"] == "item")
                result.rows.append({"setting": r["setting"], "group": r["group"], "layer": r["layer"], "metric": r["metric"],
                                    "pair": r["pair"], "candidate": None, "factor": factor, "size": size, "unit": unit,
                                    "ci_half_width": (r["ci_high"] - r["ci_low"]) / 2, "pass_probability": None})
    finally:
        if owned:
            pool.close()
    if roles is not None and alt is not None:
        result.rows += _alt_rows(data, roles, alt, replicates, seed, settings)
    result.rows.sort(key=lambda r: (r["setting"], r["metric"], r["candidate"] or "", r["group"] or "", r["layer"] or "", r["pair"] or "",
                                    r["factor"]))
    result.recommendation = recommend(result.rows, chosen, target, level)
    dest = out / "plan"
    dest.mkdir(exist_ok=True)
    from . import csv_text

    atomic_write_text(dest / "plan.csv", csv_text(COLUMNS, result.rows))
    result.files.append(dest / "plan.csv")
    if plot:
        result.files += _plot(result.rows, dest)
    return result


def _alt_rows(data: OutputData, roles: Any, alt: Any, replicates: int, seed: int, settings: Sequence[str] | None) -> list[dict[str, Any]]:
    """The alt-test's pass probability of every candidate at every size."""
    rows = []
    tested = alttest.run(OutputData(data.path, [*roles.humans, *roles.candidates]), roles, score=alt.score, epsilon=alt.epsilon,
                         q=alt.fdr, min_instances=1, settings=settings, ci=Options(replicates=2, seed=seed))
    for setting, _, r in tested:  # every human's indicators at the pilot's size; --min-instances applies to the sizes drawn
        found = [h for h in r.humans if h.candidate_wins.size]
        n = int(max((h.rows.max() for h in found if h.rows.size), default=-1)) + 1
        pilot = r.instances or n
        for factor in FACTORS:
            size = max(1, round(pilot * factor))
            p = pass_probability(found, n, size, epsilon=alt.epsilon, q=alt.fdr, min_instances=alt.min_instances,
                                 replicates=replicates, seed=seed, passing=registry.ALT_TEST.passing) if found and n else float("nan")
            rows.append({"setting": setting.name, "group": None, "layer": None, "metric": registry.ALT_TEST.name, "pair": None,
                         "candidate": r.candidate,
                         "factor": factor, "size": size, "unit": "instances", "ci_half_width": None, "pass_probability": p})
    return rows


def recommend(rows: list[dict[str, Any]], metrics: Sequence[str], target: float, level: float) -> str:
    """One line: the size at which the widest interval of the first metric planned reaches ±``target``."""
    for name in metrics:
        pilot = [r for r in rows if r["metric"] == name and r["factor"] == 1.0 and r["ci_half_width"] is not None]
        pilot = [r for r in pilot if math.isfinite(r["ci_half_width"])]
        if not pilot:
            continue
        worst = max(pilot, key=lambda r: r["ci_half_width"])
        needed = math.ceil(worst["size"] * (worst["ci_half_width"] / target) ** 2)
        cell = f"{worst['setting']} {worst['layer']}" + (f" (group {worst['group']})" if worst["group"] not in (None, "all", "items") else "")
        line = (f"≈ {needed} {worst['unit']} for a ±{target:g} {level:.0%} interval on {cell} {name} "
                f"(the pilot's {worst['size']}: ±{worst['ci_half_width']:.3f})")
        passing = [r for r in rows if r["candidate"] and r["pass_probability"] is not None and r["pass_probability"] >= 0.8]
        for cand in sorted({r["candidate"] for r in rows if r["candidate"]}):
            first = min((r["size"] for r in passing if r["candidate"] == cand), default=None)
            line += f"; the alt-test of {cand} passes with probability ≥ 0.8 " + (f"from {first} instances" if first else "at no size planned")
        return line
    return "no metric planned has an interval: nothing to recommend (see plan.csv)"


def _plot(rows: list[dict[str, Any]], dest: Path) -> list[Path]:
    """Half-widths against size, one line per (setting, layer, metric); pass probabilities beside."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'unitize[plot]'") from None
    alt = [r for r in rows if r["pass_probability"] is not None]
    fig, axes = plt.subplots(1, 2 if alt else 1, figsize=(11 if alt else 6, 4), squeeze=False)
    lines: dict[tuple[str, str, str, str], list[tuple[int, float]]] = {}
    for r in rows:
        if r["ci_half_width"] is not None:
            lines.setdefault((r["setting"], str(r["layer"]), r["metric"], r["pair"] or ""), []).append((r["size"], r["ci_half_width"]))
    for (setting, layer, metric, pair), points in sorted(lines.items()):
        xs, ys = zip(*sorted(points))
        axes[0][0].plot(xs, ys, marker="o", label=f"{metric} {pair} {setting} {layer}".replace("  ", " "))
    axes[0][0].set(xscale="log", xlabel="size (documents or items)", ylabel="expected CI half-width", title="interval width")
    axes[0][0].legend(fontsize=6)
    if alt:
        by: dict[tuple[str, str], list[tuple[int, float]]] = {}
        for r in alt:
            by.setdefault((r["setting"], r["candidate"]), []).append((r["size"], r["pass_probability"]))
        for (setting, cand), points in sorted(by.items()):
            xs, ys = zip(*sorted(points))
            axes[0][1].plot(xs, ys, marker="o", label=f"{cand} {setting}")
        axes[0][1].set(xscale="log", ylim=(-0.05, 1.05), xlabel="instances", ylabel="P(alt-test passes)", title="alt-test power")
        axes[0][1].legend(fontsize=6)
    fig.tight_layout()
    written = []
    for ext in ("png", "svg"):
        path = dest / f"plan.{ext}"
        fig.savefig(path, metadata={"Date": None} if ext == "svg" else {"Software": None})
        written.append(path)
    plt.close(fig)
    return written


__all__ = ["COLUMNS", "FACTORS", "Plan", "plan", "recommend"]
