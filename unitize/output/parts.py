"""Work partitions of a run's unit matrices: one picklable task per partition, written by :func:`write_partition`.

The documents (in the order of the unit spaces: sorted) are cut into
consecutive runs; a partition closes once it holds at least
:data:`PARTITION_UNITS` character units (``[output] partition_units`` /
``--partition-units`` override it). Partition ``k`` writes
``<folder>/setting=<name>/part-<k>.parquet`` of every setting (``units/``, ``labels/``, ``long/``): the rows of its
documents for every group and layer, sorted by (group, layer, doc_id, unit)
within the part. Every part is written, even without rows, so the numbering is
contiguous and depends on the data alone, never on the executor. Item
matrices are cut into parts of at most :data:`PART_ROWS` consecutive rows (:func:`item_slices`).

A part's row groups are sized for reading, not by how the rows were made: the
tables of consecutive (group, layer)s are gathered into one row group until it
holds at least :data:`ROW_GROUP_MIN` rows, and a larger table is cut every
:data:`ROW_GROUP_MAX` rows (:class:`RowGroups`). The rows are sorted by group, so
a row group of several groups holds each one's rows as a run; the file's key-value
metadata lists every row group's runs (:data:`ROW_GROUPS_KEY`), and a reader finds
a group's rows from them (or from the ``group`` column's statistics: a row group
whose minimum is its maximum holds one group) without decoding the ``group``
column, and reads a part in a few large row groups instead of one small one per
(group, layer) — on the sparse layout, hundreds of a few hundred rows each.

A task holds only its partition's data (NumPy arrays, names, Arrow schemas,
the staging paths): an executor may run :func:`write_partition` in another
process or on another machine that sees the staging directory.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, overload

import numpy as np
import pyarrow as pa

from ..model.codes import sorted_codes
from ..schema import setting_path
from .directory import ParquetStream, rest_of

#: character units per work partition of a span run (the default of ``[output] partition_units``)
PARTITION_UNITS = 1 << 20
#: rows per part of an item matrix (crowd data: millions of items stay in bounded parts)
PART_ROWS = 1 << 20
#: a row group gathers whole tables until it holds at least this many rows ...
ROW_GROUP_MIN = 1 << 16
#: ... and holds at most this many (a larger table is cut)
ROW_GROUP_MAX = 1 << 20


def part_path(setting: str, index: int) -> str:
    """Where partition ``index`` of a setting goes, relative to the output directory (its folder:
    :func:`unitize.schema.dataset_folder`)."""
    return f"{setting_path(setting)}/part-{index:05d}.parquet"


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


class PartTasks(Sequence[PartTask[S]]):
    """A run's tasks, each made when it is taken: a span run's task holds a copy of its documents' arrays, so
    tasks made all at once would hold the run's arrays twice while they are written. An executor that ships
    its tasks elsewhere takes them all (``list``); the writer in this process takes a few at a time
    (:class:`InProcess`)."""

    def __init__(self, staging: str, specs: list[S], sources: list[Callable[[], TableSource[S]]]):
        self.staging = staging
        self.specs = specs
        self._sources = sources

    def __len__(self) -> int:
        return len(self._sources)

    @overload
    def __getitem__(self, index: int) -> PartTask[S]: ...

    @overload
    def __getitem__(self, index: slice) -> list[PartTask[S]]: ...

    def __getitem__(self, index: int | slice) -> PartTask[S] | list[PartTask[S]]:
        if isinstance(index, slice):
            return [self[k] for k in range(len(self))[index]]
        k = range(len(self))[index]
        return PartTask(k, self.staging, self.specs, self._sources[k]())


class RowGroups:
    """A part's tables written in row groups of :data:`ROW_GROUP_MIN` to :data:`ROW_GROUP_MAX` rows
    (the last one may be smaller): whole tables gathered, a larger one cut; the rows stay in order.

    A table with a ``group`` column has its row groups' groups listed in the file's key-value
    metadata (:data:`ROW_GROUPS_KEY`): per row group, each group's run of rows."""

    def __init__(self, stream: ParquetStream):
        self.stream = stream
        self._pending: list[pa.Table] = []
        self._held = 0
        self._listed: list[list[Run]] | None = [] if "group" in stream.schema.names else None

    @property
    def rows(self) -> int:
        return self.stream.rows + self._held

    def write(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self._pending.append(table.cast(self.stream.schema) if table.schema != self.stream.schema else table)
        self._held += table.num_rows
        while self._held >= ROW_GROUP_MAX:
            gathered = pa.concat_tables(self._pending)
            self._write(gathered.slice(0, ROW_GROUP_MAX))
            rest = rest_of(gathered, ROW_GROUP_MAX)
            self._pending, self._held = ([rest] if rest.num_rows else []), rest.num_rows
        if self._held >= ROW_GROUP_MIN:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._write(self._pending[0] if len(self._pending) == 1 else pa.concat_tables(self._pending))
        self._pending, self._held = [], 0

    def _write(self, table: pa.Table) -> None:
        """One row group (``table`` holds at most :data:`ROW_GROUP_MAX` rows), its groups listed."""
        self.stream.write(table)
        if self._listed is not None:
            self._listed.append(runs(table.column("group")))

    def close(self) -> None:
        try:
            self._flush()
            if self._listed is not None:
                self.stream.add_metadata({ROW_GROUPS_KEY: json.dumps(self._listed, ensure_ascii=False, separators=(",", ":"))})
        finally:
            self.stream.close()


#: a group's run of rows in a row group: [group, first row, end row]
Run = list[str | int]
#: the key of a part's key-value metadata listing its row groups' groups: JSON, per row group a list of :data:`Run`
ROW_GROUPS_KEY = "unitize:row_groups"


def runs(column: pa.ChunkedArray | pa.Array) -> list[Run]:
    """The runs of equal values of a string column, in row order: [value, first row, end row] each."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    if len(chunks) == 1 and pa.types.is_dictionary(chunks[0].type) and chunks[0].null_count == 0 \
            and len(set(values := chunks[0].dictionary.to_pylist())) == len(values):  # its indices are its codes
        names, codes = values, chunks[0].indices.to_numpy(zero_copy_only=False)
    else:
        names, codes = sorted_codes(column)
    change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    starts = [0, *change.tolist()]
    stops = [*change.tolist(), int(codes.size)]
    return [[names[int(codes[a])], a, b] for a, b in zip(starts, stops)] if codes.size else []


def write_partition(task: PartTask[S]) -> list[tuple[str, int]]:
    """Write every setting's part of one partition; return (relative path, rows) per setting, in ``specs`` order."""
    streams = {}
    for spec in task.specs:
        relative = part_path(spec[0], task.index)
        streams[spec[0]] = (relative, RowGroups(ParquetStream(Path(task.staging) / relative, spec[1])))
    try:
        for name, table in task.source.tables_of(task.specs):
            streams[name][1].write(table)
            del table  # let go before the next is made: a long batch is tens of MiB
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
        """``[fn(x) for x in items]``, taking an item only when a thread is about to be free (at most one more
        than the threads held at a time: :class:`PartTasks` makes each when it is taken)."""
        if self.workers == 1:
            return [fn(item) for item in items]
        from concurrent.futures import Future, ThreadPoolExecutor

        done: list[R] = []
        running: deque[Future[R]] = deque()
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            for item in items:
                running.append(pool.submit(fn, item))
                del item
                if len(running) > self.workers:
                    done.append(running.popleft().result())
            done.extend(f.result() for f in running)
        return done


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
