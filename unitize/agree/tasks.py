"""Cutting ``unitize agree`` into (setting, groups) tasks for an executor (``--executor``).

Every result row belongs to one (setting, group), and nothing a row holds depends on
another group (the bootstrap draws from ``default_rng(seed)`` per cell, gamma from its
own seed per cell), so any cut gives the same rows; the tasks are consecutive runs of a
setting's sorted groups, and their rows are concatenated in task order, which is the
order of the local run. The cut only balances the work: about four tasks per worker,
groups weighed by their rows as the Parquet metadata counts them (read from the footer,
no data), every group alike where the footer does not say.

A group that :mod:`.batches` reads in batches (a long or item table's group above
``BATCH_ROWS`` rows: crowd data, one group holding every document) is cut by its parts
instead: each task returns the additive statistics of the group's rows in a run of
parts, and the driver adds them up (:func:`gather`) before the group's rows are made —
the same statistics as one pass over the whole group.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

from ..dataset.directory import OutputData
from ..dataset.model import Setting
from . import batches

#: tasks per worker: enough for the big groups (a frequent connective) not to leave a worker idle
TASKS_PER_WORKER = 4


Task = tuple[str, list[str], "tuple[int, int] | None"]
#: what a task returns: its groups' result rows, or (a run of a group's parts) the layers' statistics by layer name
TaskResult = list[dict[str, Any]] | dict[str, batches.LayerPart]
T = TypeVar("T")


class Reduced(NamedTuple):
    """A group cut by parts, once its last part is in: its layers' statistics added up (layer name → LayerPart)."""

    group: str
    layers: dict[str, batches.LayerPart]


def plan(data: OutputData, chosen: Sequence[Setting], groups: Sequence[str] | None, workers: int) -> list[Task]:
    """(setting name, its groups, None) per task, settings in order, each setting's groups sorted and cut
    into runs; a group read in batches: (setting name, [group], (k0, k1)) per run of the parts holding it."""
    out: list[Task] = []
    n = max(1, TASKS_PER_WORKER * workers)
    for setting in chosen:
        names = [g for g in data.groups(setting) if groups is None or g in groups]
        if not names:
            continue
        weights = group_rows(data, setting, names)
        for run in cut(names, weights, n):
            small: list[str] = []
            for name in run:
                parts = [k for k, _ in data._row_groups(setting).get(name, [])]
                if len(parts) < 2 or not batches.batched(setting) or batches.group_rows(data, setting, name) <= batches.BATCH_ROWS:
                    small.append(name)
                    continue
                if small:
                    out.append((setting.name, small, None))
                    small = []
                out += [(setting.name, [name], (ks[0], ks[-1] + 1)) for ks in cut(parts, [1] * len(parts), n)]
            if small:
                out.append((setting.name, small, None))
    return out


def gather(jobs: Sequence[Task], done: Iterable[TaskResult]) -> Iterator[tuple[str, list[dict[str, Any]] | Reduced]]:
    """The tasks' results in order: (setting, result rows), or for a group cut by parts, once its
    last part is in, (setting, :class:`Reduced`)."""
    found: dict[str, batches.LayerPart] = {}
    jobs = list(jobs)
    for i, ((name, groups, _), out) in enumerate(zip(jobs, done)):
        if isinstance(out, list):  # a task of whole groups (no parts): its rows
            yield name, out
            continue
        for layer, part in out.items():
            found[layer] = found[layer] + part if layer in found else part
        following = jobs[i + 1] if i + 1 < len(jobs) else None
        if following is None or following[2] is None or following[:2] != (name, groups):
            yield name, Reduced(groups[0], found)
            found = {}


def cut(names: list[T], weights: list[int], parts: int) -> list[list[T]]:
    """Consecutive runs of ``names``, each closed once it holds a ``1/parts`` share of the weight."""
    total = sum(weights)
    share = total / parts if total else 0
    runs: list[list[T]] = [[]]
    held = 0
    for name, w in zip(names, weights):
        if runs[-1] and held + w > share and len(runs) < parts:
            runs.append([])
            held = 0
        runs[-1].append(name)
        held += w
    return runs


def group_rows(data: OutputData, setting: Setting, names: list[str]) -> list[int]:
    """Rows per group, as the part files' index counts them (from the footers' statistics, and a row
    group holding several groups from its ``group`` column); 1 for a group without rows."""
    files = data.parts(setting)
    return [files.rows(n) or 1 for n in names]
