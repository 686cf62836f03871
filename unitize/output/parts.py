"""Work partitions of a run's unit matrices: one picklable task per partition, written by :func:`write_partition`.

The documents (in the order of the unit spaces: sorted) are cut into
consecutive runs; a partition closes once it holds at least
:data:`PARTITION_UNITS` character units (``[output] partition_units`` /
``--partition-units`` override it). Partition ``k`` writes
``units/setting=<name>/part-<k>.parquet`` of every setting: the rows of its
documents for every group and layer, sorted by (group, layer, doc_id, unit)
within the part. Every part is written, even without rows, so the numbering is
contiguous and depends on the data alone, never on the executor. Item
matrices are cut into parts of at most :data:`PART_ROWS` consecutive rows (:func:`item_slices`).

A task holds only its partition's data (NumPy arrays, names, Arrow schemas,
the staging paths): an executor may run :func:`write_partition` in another
process or on another machine that sees the staging directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import pyarrow as pa

from .directory import ParquetStream

#: character units per work partition of a span run (the default of ``[output] partition_units``)
PARTITION_UNITS = 1 << 20
#: rows per part of an item matrix (crowd data: millions of items stay in bounded parts)
PART_ROWS = 1 << 20


def part_path(setting: str, index: int) -> str:
    """Where partition ``index`` of a setting goes, relative to the output directory."""
    return f"units/setting={setting}/part-{index:05d}.parquet"


def partitions(units: Sequence[int], limit: int = PARTITION_UNITS) -> list[tuple[int, int]]:
    """Consecutive runs ``[d0, d1)`` of documents with ``units`` character units each; a run closes once it
    holds at least ``limit`` units. Always at least one (possibly empty) run."""
    cuts, held = [0], 0
    for i, n in enumerate(units):
        held += int(n)
        if held >= limit and i + 1 < len(units):
            cuts.append(i + 1)
            held = 0
    cuts.append(len(units))
    return list(zip(cuts[:-1], cuts[1:]))


#: a setting as a partition writes it: (dataset name, Arrow schema, …what the partition's source needs besides)
PartSpec = tuple[str, pa.Schema, *tuple[Any, ...]]
S = TypeVar("S", bound=PartSpec)
S_contra = TypeVar("S_contra", bound=PartSpec, contravariant=True)
T = TypeVar("T")
R = TypeVar("R")


class TableSource(Protocol[S_contra]):
    """The data of one partition: ``tables_of(specs)`` yields (setting name, table), each setting's tables in order."""

    def tables_of(self, specs: Sequence[S_contra]) -> Iterable[tuple[str, pa.Table]]: ...


@dataclass
class PartTask(Generic[S]):
    """One work partition: its number, where to write, the settings and the partition's data."""

    index: int
    #: the run's staging directory (the parts go below it)
    staging: str
    #: per setting: (name, schema, …) as the source takes them
    specs: list[S]
    source: TableSource[S]


def write_partition(task: PartTask[S]) -> list[tuple[str, int]]:
    """Write every setting's part of one partition; return (relative path, rows) per setting, in ``specs`` order."""
    streams = {}
    for spec in task.specs:
        relative = part_path(spec[0], task.index)
        streams[spec[0]] = (relative, ParquetStream(Path(task.staging) / relative, spec[1]))
    try:
        for name, table in task.source.tables_of(task.specs):
            streams[name][1].write(table)
    finally:
        for _, stream in streams.values():
            stream.close()
    return [(relative, stream.rows) for relative, stream in streams.values()]


class InProcess:
    """The executor when none is given: ``map`` in this process, on ``threads`` threads (1: sequentially).

    Results come in the order of the items, whatever the number of threads.
    """

    name = "local"

    def __init__(self, threads: int = 1):
        self.workers = max(1, threads)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        if self.workers == 1:
            return [fn(item) for item in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(fn, items))


#: a run of consecutive rows of one dataset's group: (dataset name, group index, first row, end row)
Slice = tuple[str, int, int, int]


def item_slices(datasets: Sequence[tuple[str, Sequence[int]]], limit: int = PART_ROWS) -> list[list[Slice]]:
    """Item matrices cut into parts of at most ``limit`` consecutive rows: per part, its slices.

    ``datasets`` gives per dataset its name and the rows of each group, in order; each
    dataset is cut on its own (a part holds the k-th ``limit`` rows of every dataset
    that has them), and there is at least one part.
    """
    parts: list[list[Slice]] = []
    for name, group_rows in datasets:
        k, held = 0, 0
        for group, rows in enumerate(group_rows):
            offset = 0
            while offset < rows:
                if held >= limit:
                    k, held = k + 1, 0
                take = min(limit - held, rows - offset)
                while len(parts) <= k:
                    parts.append([])
                parts[k].append((name, group, offset, offset + take))
                offset += take
                held += take
    return parts or [[]]
