"""Agreement on a ``unitize`` output directory: metrics, results table, summary, plots.

    from unitize.agree import agree
    written = agree("out/", metrics=["alpha-u", "alpha"], plot=True)

writes ``out/agreement/``: ``results.parquet`` and ``results.csv`` (one row per
setting, group, layer, metric — and annotator pair for Cohen's kappa),
``summary.md`` and ``summary.csv`` (the thesis's Table 22 layout) and, with
``plot``, ``plots/*.png|svg``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from .. import metrics as registry
from ..dataset.directory import Matrix, OutputData, Setting
from ..errors import DataError, RunError
from ..executors import Executor, executor_of
from ..metrics import Options, require
from ..metrics.alphau import AlphaU, alpha_u, category_disagreement
from ..output import PARQUET_WRITE_OPTIONS, atomic_write_text, locks_output, refuse_foreign, temporary
from ..progress import Progress
from ..schema import results_schema
from .measure import as_json_lines, measure
from .plots import PlotError, box_plots
from .summary import GROUP_NAMES, describe, scale_note, screen_table, summary_rows, to_csv, to_markdown

#: every metric's name, and those computed when none are named (the registry's, :mod:`unitize.metrics`)
METRICS = registry.names()
DEFAULT_METRICS = registry.default()
#: the columns of the results table (``schemas/results.arrow.json``)
RESULT_SCHEMA = results_schema()


@dataclass
class AgreeResult:
    results: pa.Table
    dest: Path
    files: list[Path] = field(default_factory=list)
    summary_metric: str | None = None
    group: str = "Group"  # what a group is (the summary's first column)
    ci: Options | None = None

    def screen(self) -> list[str]:
        """The compact table of the summary metric for the screen (setting × layer)."""
        return screen_table(self.results, self.summary_metric, self.group, self.ci) if self.summary_metric else []


def _atomic_parquet(table: pa.Table, path: Path) -> None:
    tmp = temporary(path)
    pq.write_table(table, tmp, **PARQUET_WRITE_OPTIONS)
    os.replace(tmp, path)


def _atomic_csv(table: pa.Table, path: Path) -> None:
    tmp = temporary(path)
    pacsv.write_csv(table, tmp)
    os.replace(tmp, path)


def _whole_cells(results: pa.Table) -> list[dict[str, Any]]:
    """The rows of whole cells (no label, document or annotator breakdown): metric and value."""
    whole = pc.and_(pc.and_(pc.is_null(results["label"]), pc.is_null(results["doc"])), pc.is_null(results["annotator"]))
    return results.filter(whole).select(["metric", "value"]).to_pylist()


def group_name(data: OutputData) -> str:
    """What a group is in this study, for the summary's first column (the thesis's "Connective")."""
    settings = data.manifest.get("settings", {})
    if data.settings and all(s.kind == "items" for s in data.settings):
        return "Group"
    group_by = (settings.get("input") or {}).get("group_by")
    if group_by is None and settings.get("format"):
        try:
            from ..adapters import get_adapter

            group_by = get_adapter(settings["format"]).traits.group_by
        except Exception:  # an adapter no longer installed: say "Group"
            group_by = None
    return GROUP_NAMES.get(group_by or "none", str(group_by).replace("_", " ").capitalize())


@locks_output
def agree(
    out: Path | str,
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    dest: Path | str | None = None,
    settings: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    summary_metric: str | None = None,
    plot: bool = False,
    gamma: dict[str, Any] | None = None,
    ci: Options | None = None,
    by_label: bool = False,
    by_doc: bool = False,
    by_annotator: bool = False,
    progress: Progress | None = None,
    executor: Executor | str | None = None,
) -> AgreeResult:
    """Measure, then write the results table, the summary and (optionally) the plots.

    ``executor`` — an :class:`~unitize.executors.Executor` or a spec (``local``,
    ``processes[:N]``, ``dask[:ADDRESS]``; default local) — measures (setting, groups)
    tasks; the results are the same for every executor.

    Raises :class:`~unitize.metrics.value.MissingDependency` when gamma is asked for
    and pygamma-agreement is not installed (before anything is measured).
    """
    out = Path(out)
    dest = Path(dest) if dest is not None else out / "agreement"
    refuse_foreign(dest, lambda f: (f / "results.parquet").is_file(), "an earlier agreement folder (no results.parquet)")
    data = OutputData(out)
    group = group_name(data)
    chosen = registry.resolve(metrics)
    if summary_metric is not None and summary_metric not in metrics:
        raise RunError(f"the summary metric {summary_metric!r} is not among the metrics computed")
    for metric in chosen:
        if metric.requires is not None:
            require(*metric.requires)
    pool, owned = executor_of(executor)
    try:
        results = measure(data, metrics, settings=settings, groups=groups, gamma=gamma, ci=ci, by_label=by_label, by_doc=by_doc,
                          by_annotator=by_annotator, progress=progress, executor=pool)
    finally:
        if owned:
            pool.close()
    summary_metric = summary_metric or registry.summary_metric(metrics, _whole_cells(results))
    dest.mkdir(parents=True, exist_ok=True)
    written = [dest / "results.parquet", dest / "results.csv"]
    _atomic_parquet(results, written[0])
    _atomic_csv(results, written[1])
    if summary_metric is not None:
        columns, body, footer = summary_rows(results, summary_metric, group)
        title = f"Agreement summary: {describe(summary_metric)} per {group.lower()} (Yalçınkaya 2010, Table 22 layout)"
        atomic_write_text(dest / "summary.md", to_markdown(columns, body, footer, title, scale_note(summary_metric)))
        atomic_write_text(dest / "summary.csv", to_csv(columns, body, footer))
        written += [dest / "summary.md", dest / "summary.csv"]
    if plot:
        written += box_plots(results, dest / "plots")
    return AgreeResult(results=results, dest=dest, files=written, summary_metric=summary_metric, group=group, ci=ci)


__all__ = [
    "AgreeResult",
    "AlphaU",
    "Options",
    "DEFAULT_METRICS",
    "DataError",
    "METRICS",
    "Matrix",
    "OutputData",
    "PlotError",
    "RESULT_SCHEMA",
    "Setting",
    "agree",
    "alpha_u",
    "as_json_lines",
    "category_disagreement",
    "measure",
]
