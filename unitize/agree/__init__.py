"""Agreement on a ``unitize`` output directory: metrics, results table, summary, plots.

    from unitize.agree import agree
    written = agree("out/", metrics=["alpha-u", "alpha"], plot=True)

writes ``out/agreement/``: ``results.parquet`` and ``results.csv`` (one row per
setting, group, layer, metric — and annotator pair for Cohen's kappa),
``summary.md`` and ``summary.csv`` (the thesis's Table 22 layout) and, with
``plot``, ``plots/*.png|svg``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .. import metrics as registry
from ..dataset.directory import Matrix, OutputData, Setting
from ..dataset.roles import Roles
from ..dataset.roles import resolve as resolve_roles
from ..errors import DataError, RunError
from ..metrics import Options, require
from ..metrics.alphau import AlphaU, alpha_u, category_disagreement
from ..names import digest, file_name
from ..output import atomic_write_text, locks_output, refuse_foreign
from ..output import csv_text as rows_csv
from ..runtime.executors import Executor, executor_of
from ..runtime.progress import Progress
from ..schema import results_schema
from . import alttest, diagnostics, results_file
from .gathered import Results
from .measure import as_json_lines, measure
from .measure import measured as measure_rows
from .plots import PlotError, box_plots
from .roles import COLUMNS as ROLE_COLUMNS
from .roles import STABILITY, ceiling, human_pairs_from, order_of, pairs_of, role_rows
from .roles import rows_of as roles_rows
from .summary import GROUP_NAMES, legend, scale_note, screen_table, summary_rows, title, to_csv, to_markdown, whole_rows

#: every metric's name, and those computed when none are named (the registry's, :mod:`unitize.metrics`)
METRICS = registry.names()
DEFAULT_METRICS = registry.default()
#: the columns of the results table (``schemas/results.arrow.json``); data other than discourse has no ``relations``
RESULT_SCHEMA = results_schema()


@dataclass
class AgreeResult:
    measured: Results  # this run's rows, a record batch at a time, the whole cells' rows at hand
    dest: Path
    files: list[Path] = field(default_factory=list)
    summary_metric: str | None = None
    group: str = "Group"  # what a group is (the summary's first column)
    ci: Options | None = None
    roles: Roles | None = None  # with candidates: the humans (whom ``results`` measure) and the candidate families
    comparisons: list[dict[str, Any]] = field(default_factory=list)  # the rows of roles.csv
    alt_tests: list[Any] = field(default_factory=list)  # (setting, score, AltResult) of each candidate, with --alt-test
    kept: pa.Table | None = None  # a subset run: the earlier rows of the same output it carried over (in results.parquet too)
    trial: bool = False  # roles given here, not the study file's: written beside the study's results (:func:`trial_dest`)

    @cached_property
    def results(self) -> pa.Table:
        """This run's rows in one table (a ``--by-doc`` run's grow with the documents: :attr:`measured` reads them a batch
        at a time)."""
        return self.measured.table()

    @property
    def written(self) -> Results:
        """Every row of ``results.parquet``: this run's and, for a subset run, the earlier ones kept."""
        return self.measured if self.kept is None else Results.of(merge_results(self.kept, self.measured.table()))

    def screen(self) -> list[str]:
        """The compact table of the summary metric for the screen (setting × layer), the human ceiling and the alt-test."""
        lines = screen_table(self.measured.whole, self.summary_metric, self.group, self.ci) if self.summary_metric else []
        if self.roles is not None and self.summary_metric:
            lines += ceiling(self.comparisons, self.summary_metric)
        if self.comparisons and all(r["value"] != r["value"] for r in self.comparisons):
            lines.append(f"roles.csv: no comparison could be measured: {self.comparisons[0]['reason']}")
        return lines + alttest.verdict_lines(self.alt_tests)


#: the results table's metadata key that names the output the rows were measured on
OUTPUT_KEY = b"unitize.output"
#: and the roles they were measured with (JSON: humans and candidate families; null without)
ROLES_KEY = b"unitize-roles"


def _roles_text(roles: Roles | None) -> str:
    return json.dumps({"humans": roles.humans, "families": roles.families} if roles is not None else None, sort_keys=True)


def output_identity(manifest: dict[str, Any], humans: Sequence[str] | None = None) -> str:
    """What identifies the matrices results were measured on: a digest of the manifest's files and their checksums
    (and of the humans, when candidates are set apart)."""
    files = sorted((f.get("path"), f.get("sha256")) for f in manifest.get("outputs", []))
    return hashlib.sha256(json.dumps([files, sorted(humans) if humans is not None else None]).encode()).hexdigest()


def earlier_results(dest: Path, identity: str, schema: pa.Schema) -> pa.Table | None:
    """The results in ``dest`` measured on the same output (``identity``) with this run's columns (``schema``), or ``None``
    (none, unreadable, of another output, or of another unitize's columns)."""
    path = dest / "results.parquet"
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return None
    metadata = table.schema.metadata or {}
    if metadata.get(OUTPUT_KEY, b"").decode() != identity or not table.schema.equals(schema, check_metadata=False):
        return None
    return table


def carried_over(earlier: pa.Table, new: Results) -> pa.Table:
    """The earlier rows of every (setting, group, metric) that ``new`` does not hold."""
    def keys(t: pa.Table | pa.RecordBatch) -> list[tuple[Any, Any, Any]]:
        return list(zip(t["setting"].to_pylist(), t["group"].to_pylist(), t["metric"].to_pylist(), strict=True))

    measured = {key for batch in new.to_batches() for key in keys(batch)}
    return earlier.filter(pa.array([key not in measured for key in keys(earlier)], pa.bool_())).cast(new.schema)


def merge_results(kept: pa.Table, new: pa.Table) -> pa.Table:
    """``kept`` and ``new`` in one table, in a whole run's order: by setting, then group (both sorted), a cell's
    rows in the order they come (``kept``'s first)."""
    rows = pa.concat_tables([kept, new])
    cells = list(zip(rows["setting"].to_pylist(), rows["group"].to_pylist(), strict=True))
    order = sorted(range(len(cells)), key=lambda i: (cells[i][0] or "", cells[i][1] or "", i))
    merged = rows.take(pa.array(order, pa.int64())).to_pylist()
    diagnostics.redo_across_approaches(merged)  # an interval setting of one run, its boundary setting of another
    return pa.Table.from_pylist(merged, schema=new.schema)


def _metrics_of(rows: Results) -> list[str]:
    """The metrics of ``rows``, in the order they come."""
    return list(dict.fromkeys(m for batch in rows.to_batches() for m in batch["metric"].to_pylist()))


def _whole_cells(results: Results) -> list[dict[str, Any]]:
    """The rows of whole cells (no label, document or annotator breakdown): metric and value."""
    return whole_rows(results.whole, ["metric", "value"])


def group_name(data: OutputData) -> str:
    """What a group is in this study, for the summary's first column (the thesis's "Connective")."""
    settings = data.manifest.get("settings", {})
    if data.settings and all(s.kind == "items" for s in data.settings):
        return "Group"
    group_by = (settings.get("input") or {}).get("group_by")
    if group_by is None:  # the format's own (an adapter no longer installed names none: "Group")
        group_by = data.traits.group_by
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
    candidates: Sequence[str] | None = None,
    humans: Sequence[str] | None = None,
    alt_test: bool = False,
    alt: AltOptions | None = None,
) -> AgreeResult:
    """Measure, then write the results table, the summary and (optionally) the plots.

    With candidates (``candidates``, else the study file's ``[roles]``; :mod:`.roles`), the results
    table measures the humans alone (roles given here that are not the study file's, where ``OUT/agreement`` holds
    results measured otherwise, are a trial, written to :func:`trial_dest` unless ``dest`` is given), ``roles.csv`` every human pair, candidate–human pair and
    family of runs, and ``alt_test`` runs the Alternative Annotator Test of every candidate
    (``alt_test.csv``, ``alt_test_humans.csv``; its options in ``alt``).

    ``executor`` — an :class:`~unitize.runtime.executors.Executor` or a spec (``local``,
    ``processes[:N]``, ``dask[:ADDRESS]``; default local) — measures (setting, groups)
    tasks; the results are the same for every executor.

    Raises :class:`~unitize.metrics.value.MissingDependency` when gamma is asked for
    and pygamma-agreement is not installed (before anything is measured).
    """
    out = Path(out)
    data = OutputData(out)
    group = group_name(data)
    roles = _check_request(data, metrics, summary_metric, candidates, humans, alt_test)
    trial = dest is None and roles is not None and bool(candidates or humans) and _is_trial(data, roles)
    dest = Path(dest) if dest is not None else trial_dest(out, roles, bool(humans)) if trial and roles is not None else out / "agreement"
    refuse_foreign(dest, lambda f: (f / "results.parquet").is_file(), "an earlier agreement folder (no results.parquet)")
    results, compared, tested = _measure_all(
        out, data, roles, metrics, executor, alt_test, alt or AltOptions(), settings=settings, groups=groups, gamma=gamma, ci=ci,
        breakdowns={"by_label": by_label, "by_doc": by_doc, "by_annotator": by_annotator, "progress": progress})
    identity = output_identity(data.manifest, roles.humans if roles is not None else None)
    kept = None
    if settings is not None or groups is not None:  # a subset run adds to the results of the same output, never erases them
        earlier = earlier_results(dest, identity, results.schema)
        if earlier is not None:
            kept = carried_over(earlier, results)
    result = AgreeResult(measured=results, dest=dest, group=group, ci=ci, roles=roles, comparisons=compared, alt_tests=tested, kept=kept,
                         trial=trial)
    rows = result.written.with_metadata({**(results.schema.metadata or {}), OUTPUT_KEY: identity.encode(),
                                         ROLES_KEY: _roles_text(roles).encode()})
    computed = _metrics_of(rows) if kept is not None else list(metrics)  # a subset run: the earlier rows' too
    result.summary_metric = summary_metric or registry.summary_metric(computed, _whole_cells(rows))
    result.files = _write(result, rows, alt_test=alt_test, plot=plot)
    return result


def _is_trial(data: OutputData, roles: Roles) -> bool:
    """Roles given here that are not the study file's, where ``OUT/agreement`` holds results measured otherwise."""
    return roles != resolve_roles(data) and _holds_other(data.path / "agreement", output_identity(data.manifest, roles.humans),
                                                         _roles_text(roles))


def _holds_other(folder: Path, identity: str, roles: str) -> bool:
    """Whether ``folder`` holds results measured otherwise than on ``identity`` with ``roles`` (another output, other
    humans or other candidates)."""
    try:
        metadata = pq.read_schema(folder / "results.parquet").metadata or {}
    except (OSError, pa.ArrowException):
        return False
    return metadata.get(OUTPUT_KEY, b"").decode() != identity or metadata.get(ROLES_KEY, b"null").decode() != roles


def trial_dest(out: Path, roles: Roles, humans_named: bool = False) -> Path:
    """Where a trial writes — roles from the command line that are not the study file's: ``OUT/agreement/trials/<candidates>``
    (``+``-joined; ``-humans-<hash>`` when the humans were named), never over the study's own results in ``OUT/agreement``."""
    name = "+".join(roles.candidates)
    if len(name) > 80:
        name = f"{len(roles.candidates)}-candidates-{digest(name)}"
    if humans_named:
        name += f"-humans-{digest('+'.join(roles.humans))}"
    return out / "agreement" / "trials" / file_name(name)


def _measure_all(out: Path, data: OutputData, roles: Roles | None, metrics: Sequence[str], executor: Executor | str | None,
                 alt_test: bool, alt: AltOptions, *, settings: Sequence[str] | None, groups: Sequence[str] | None,
                 gamma: dict[str, Any] | None, ci: Options | None, breakdowns: dict[str, Any]) -> tuple[Results, list[dict[str, Any]], list[Any]]:
    """The results (of the humans alone, with candidates), the rows of roles.csv and the alt-tests, measured on one executor."""
    pool, owned = executor_of(executor)
    compared: list[dict[str, Any]] = []
    tested: list[Any] = []
    try:
        if alt_test and roles is not None:  # first: it refuses what it cannot test (crowd data) before anything else is measured
            tested = alttest.run(OutputData(out, [*roles.humans, *roles.candidates]), roles, score=alt.score, epsilon=alt.epsilon,
                                 q=alt.fdr, min_instances=alt.min_instances, ci=alt.ci(ci), settings=settings)
        measured = OutputData(out, roles.humans) if roles is not None else data
        results = measure_rows(measured, metrics, settings=settings, groups=groups, gamma=gamma, ci=ci, **breakdowns, executor=pool)
        if roles is not None:
            compared = _compared(out, roles, metrics, results, settings=settings, groups=groups, gamma=gamma, ci=ci, executor=pool)
    finally:
        if owned:
            pool.close()
    return results, compared, tested


def _compared(out: Path, roles: Roles, metrics: Sequence[str], results: Results, **options: Any) -> list[dict[str, Any]]:
    """The rows of roles.csv: every comparison of two annotators from one pass over the humans and candidates
    (:mod:`.pairs`: each candidate with each human, each family's two runs, every pair of humans a cell has), a family
    of three runs or more measured together. A metric with a row per pair has the human pairs' rows in the humans'
    ``results`` already: they are taken from there (the same rows, one computation), but with ``--ci``, where each
    pair alone resamples its own documents."""
    known = options.get("ci") is None
    rows = measure(OutputData(out, [*roles.humans, *roles.candidates]), metrics, pairs=pairs_of(roles), among=roles.humans,
                   among_known=known, **options).to_pylist()
    compared = [row for r in rows for row in role_rows(r, roles)]
    if known:
        compared = human_pairs_from(results.whole, rows, compared, roles, metrics)
    for family, runs in roles.families.items():
        if len(runs) > 2:
            compared += roles_rows(measure(OutputData(out, runs), metrics, **options).to_pylist(), STABILITY, family, tuple(runs))
    return sorted(compared, key=order_of(roles))


def _check_request(data: OutputData, metrics: Sequence[str], summary_metric: str | None, candidates: Sequence[str] | None,
                   humans: Sequence[str] | None, alt_test: bool) -> Roles | None:
    """Refuse what cannot be measured before anything is (a missing package, an alt-test without candidates); the roles."""
    chosen = registry.resolve(metrics)
    if summary_metric is not None and summary_metric not in metrics:
        raise RunError(f"the summary metric {summary_metric!r} is not among the metrics computed")
    for metric in chosen:
        if metric.requires is not None:
            require(*metric.requires)
    roles = resolve_roles(data, candidates, humans)
    if alt_test and roles is None:
        raise RunError("the alt-test compares candidates with humans: name them with --candidates NAME[,NAME] or [roles] candidates")
    if alt_test:
        require("scipy.stats", "agree")
    return roles


def _write(result: AgreeResult, rows: Results, *, alt_test: bool, plot: bool) -> list[Path]:
    """The files of the agreement folder, each written whole or not at all; the paths written."""
    dest, summary_metric, group = result.dest, result.summary_metric, result.group
    dest.mkdir(parents=True, exist_ok=True)
    written = [dest / "results.parquet", dest / "results.csv"]
    results_file.parquet(rows, written[0])
    results_file.csv(rows, written[1])
    if summary_metric is not None:
        columns, body, footer = summary_rows(rows.whole, summary_metric, group)
        atomic_write_text(dest / "summary.md", to_markdown(columns, body, footer, title(summary_metric, group), scale_note(summary_metric),
                                                             legend(summary_metric, items=columns[1:3] == ["Annotator #", "Item #"])))
        atomic_write_text(dest / "summary.csv", to_csv(columns, body, footer))
        written += [dest / "summary.md", dest / "summary.csv"]
    if result.roles is not None:
        atomic_write_text(dest / "roles.csv", csv_text(ROLE_COLUMNS, result.comparisons))
        written.append(dest / "roles.csv")
    if alt_test:
        verdicts, per_human = alttest.tables(result.alt_tests)
        atomic_write_text(dest / "alt_test.csv", csv_text(alttest.COLUMNS, verdicts))
        atomic_write_text(dest / "alt_test_humans.csv", csv_text(alttest.HUMAN_COLUMNS, per_human))
        written += [dest / "alt_test.csv", dest / "alt_test_humans.csv"]
    if plot:
        written += box_plots(rows.whole, dest / "plots")
    return written


@dataclass(frozen=True)
class AltOptions:
    """The alt-test's options (``--alt-score``, ``--epsilon``, ``--fdr``, ``--min-instances``); defaults as declared
    (``unitize.metrics.ALT_TEST``). ρ's interval takes ``--ci``'s level, replicates and seed, else 0.95, 1000, 0."""

    score: str | None = None  # None: the default score of the setting's kind of data
    epsilon: float = registry.ALT_TEST.epsilon
    fdr: float = registry.ALT_TEST.q
    min_instances: int = registry.ALT_TEST.min_instances

    def ci(self, ci: Options | None) -> Options:
        return ci or Options()


def csv_text(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """A CSV file's text: the header, then each row's values (empty for None; neutralised, :mod:`unitize.cells`)."""
    return rows_csv([columns, *(["" if row.get(c) is None else row[c] for c in columns] for row in rows)])


__all__ = [
    "AgreeResult",
    "AltOptions",
    "Roles",
    "AlphaU",
    "Options",
    "DEFAULT_METRICS",
    "DataError",
    "METRICS",
    "Matrix",
    "OutputData",
    "PlotError",
    "RESULT_SCHEMA",
    "Results",
    "Setting",
    "agree",
    "alpha_u",
    "as_json_lines",
    "category_disagreement",
    "measure",
]
