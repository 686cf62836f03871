"""Writing a run: unit matrices per work partition, segments, documents, universe, tokens, report, manifest.

:func:`write_run` takes a unitized corpus of either kind (a :class:`RunResult`: it cuts
itself into work partitions, :mod:`.parts`, and hands over its other tables), has an
executor write every partition's parts and writes the rest into an
:class:`~unitize.output.directory.OutputDir`, the manifest last. Data files are
byte-identical across reruns on the same inputs and across executors; what depends on
time or host stays in the manifest's ``run`` section.
"""

from __future__ import annotations

import platform
import socket
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from .._version import __version__
from ..config import Settings
from ..model import Corpus
from ..model.report_rows import Findings
from ..runtime.executors import TaskMap
from ..runtime.memory import give_back
from ..runtime.progress import Progress, Sized, no_progress
from ..schema import FORMAT_VERSION
from .directory import OutputDir
from .parts import InProcess, PartTask, PartTasks, write_partition


class RunResult(Protocol):
    """What a run hands the writer: a unitized corpus of either kind (text spans:
    :class:`unitize.spans.matrices.Unitized`; flat labels: :class:`unitize.items.run.ItemsUnitized`)."""

    settings: Settings
    corpus: Corpus
    findings: Findings
    accounting: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        """Counts a person (or a script) wants after a run (the manifest's ``summary``)."""
        ...

    def part_tasks(self, staging: Path) -> PartTasks[Any]:
        """One task per work partition of the unit matrices (:mod:`.parts`), writing below ``staging``, each made when taken."""
        ...

    def dense_rows(self, written: dict[str, int]) -> dict[str, int]:
        """Per setting, the rows of its dense matrix (``written``: the rows each setting's parts hold)."""
        ...

    def side_tables(self) -> Iterable[tuple[str, pa.Table | pa.RecordBatchReader, Callable[[], None] | None]]:
        """The run's other tables, by relative path (segments, documents, universe, tokens); a large one may come as
        a reader of its batches. The third: called after each row group written (None: nothing to call), for a
        table that lies in mapped files to drop the pages written."""
        ...

    def nothing_kept(self) -> str | None:
        """What was read, when no record reached the matrices (then nothing is written); else None."""
        ...


def write_run(
    result: RunResult,
    out: Path,
    *,
    progress: Progress = no_progress,
    threads: int = 2,
    run_info: dict[str, Any] | None = None,
    run_started: float | None = None,
    executor: TaskMap | None = None,
) -> dict[str, Any]:
    """Write every output of a run into ``out``; return the manifest.

    ``executor`` (an object with ``map(fn, items) -> list`` in order, e.g. from ``unitize.runtime.executors``)
    writes the work partitions; None, or an executor that keeps its tasks in this process (``local``),
    writes them here on ``threads`` threads (Parquet encoding releases the GIL; the bytes are the same).
    ``run_started`` (a :func:`time.time`) adds the run's ``seconds_total`` to the manifest's ``run`` section.
    """
    started = time.time()
    target = OutputDir(out, per_file=("units", "labels", "long", "segments"))
    try:
        if executor is None or not getattr(executor, "parallel", True):
            executor = InProcess(threads)
        give_back()  # what making the run freed (a span run's batches, joined), before its partitions are made
        todo = result.part_tasks(target.staging)
        give_back()  # what making the partitions freed (a span run's marks sorted by document), before the writing threads start
        unit_rows = _write_units(target, todo, progress, executor)
        del todo
        give_back()  # what the writing threads freed, before the side tables are written
        dense_rows = result.dense_rows(unit_rows)
        for relative, table, written in result.side_tables():
            target.write_table(relative, table, written)
        target.write_lines("report.jsonl", result.findings.lines())
        manifest: dict[str, Any] = {  # JSON, as manifest.json holds it
            "format_version": FORMAT_VERSION,
            "tool": {"name": "unitize", "version": __version__},
            "libraries": _versions(),
            "settings": result.settings.resolved(),
            "inputs": input_rows(result.corpus),
            "outputs": target.outputs,
            "accounting": result.accounting,
            "summary": {**result.summary(), "unit_rows": dict(sorted(unit_rows.items())),
                        "dense_rows": dict(sorted(dense_rows.items()))},
            "run": run_section(started, seconds_writing=round(time.time() - started, 3), **(run_info or {})),
        }
        if run_started is not None:
            manifest["run"]["seconds_total"] = round(time.time() - run_started, 3)
        target.write_json("manifest.json", manifest)
        target.commit()
    except BaseException:
        target.abort()
        raise
    return manifest


def _write_units(target: OutputDir, todo: PartTasks[Any], progress: Progress, executor: TaskMap) -> dict[str, int]:
    """Every part of every setting, written by ``executor``; the rows written per setting."""
    if isinstance(executor, InProcess):
        done = executor.map(_written_here, progress(Sized(todo, len(todo)), "writing unit matrices"))
    else:
        done = executor.map(write_partition, todo)
    rows: dict[str, int] = {}
    for i, spec in enumerate(todo.specs):  # outputs listed by setting, then part
        rows[spec[0]] = 0
        for parts in done:
            relative, n = parts[i]
            target.record(relative, n)
            rows[spec[0]] += n
    return rows


def _written_here(task: PartTask[Any]) -> list[tuple[str, int]]:
    """A partition written in this process, what its thread freed given back to the system: a thread's allocator
    arena would keep it, and each writing thread's arena grows with the partitions it wrote."""
    try:
        return write_partition(task)
    finally:
        give_back()


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "pyarrow", "lxml", "spacy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def input_rows(corpus: Corpus) -> list[dict[str, Any]]:
    """The manifest's ``inputs``: every file read, by role and path."""
    return [
        {"path": i.path, "role": i.role, "bytes": i.size, "sha256": i.sha256}
        for i in sorted(corpus.inputs, key=lambda i: (i.role, i.path))
    ]


def run_section(started: float, **more: Any) -> dict[str, Any]:
    """The manifest's ``run`` section: when and where (the only host- or time-dependent part)."""
    return {
        "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        **more,
    }
