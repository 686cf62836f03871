"""``segments/<unit>.parquet`` read one group at a time, in one forward pass over the file.

The segments are sorted by (group, layer, doc_id, annotator, unit_begin), so a group's
segments are one run of rows. :class:`SegmentFile` first reads only the ``group`` column
(dictionary codes, batch by batch) to find each group's run, then hands out a group's rows
from a cursor that moves forward through the file a batch at a time: groups asked in file
order (sorted, as every consumer walks them) cost one pass, and memory holds one batch and
one group's segments, never the study's. A group asked out of order restarts the cursor at
the row group holding it (found from the row groups' sizes); a file whose groups are not
one run each still reads right, run by run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import DataError
from ..output.parts import runs as value_runs
from .parts import THREADS

#: rows decoded at a time
BATCH = 1 << 16


class SegmentFile:
    """One unit type's segments, read group by group (only ``columns``, all when None)."""

    def __init__(self, path: Path, columns: Sequence[str] | None = None):
        self.path = Path(path)
        try:
            self._file = pq.ParquetFile(self.path, buffer_size=1 << 20, pre_buffer=False)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"{self.path} cannot be read: {exc}") from None
        self._schema = self._file.schema_arrow
        self.columns = [c for c in self._schema.names if columns is None or c in columns]
        meta = self._file.metadata
        self._starts = np.cumsum([0] + [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
        self._runs: dict[str, list[tuple[int, int]]] | None = None
        self._batches: Iterator[pa.RecordBatch] | None = None
        self._at = 0  # the first row of ``_batch``
        self._batch: pa.RecordBatch | None = None

    @property
    def schema(self) -> pa.Schema:
        """The file's Arrow schema (all its columns, with their metadata)."""
        return self._schema

    def runs(self) -> dict[str, list[tuple[int, int]]]:
        """Per group, its runs of rows (start, stop) in file order: one run each in a sorted file."""
        if self._runs is None:
            runs: dict[str, list[tuple[int, int]]] = {}
            at, last = 0, None
            for batch in self._file.iter_batches(batch_size=BATCH, columns=["group"], use_threads=THREADS):
                for value, start, stop in value_runs(batch.column(0)):
                    name = str(value)
                    if name == last:  # the run goes on from the previous batch
                        runs[name][-1] = (runs[name][-1][0], at + int(stop))
                    else:
                        runs.setdefault(name, []).append((at + int(start), at + int(stop)))
                    last = name
                at += batch.num_rows
            self._runs = runs
        return self._runs

    def groups(self) -> list[str]:
        return sorted(self.runs())

    def group(self, name: str) -> pa.Table:
        """A group's segments (``columns``; dictionary columns as stored), in file order; no rows when it has none."""
        pieces = [self._rows(a, b) for a, b in self.runs().get(name, [])]
        pieces = [p for piece in pieces for p in piece]
        if not pieces:
            return pa.Table.from_batches([], pa.schema([self._schema.field(c) for c in self.columns]))
        return pa.Table.from_batches(pieces)

    def _rows(self, a: int, b: int) -> list[pa.RecordBatch]:
        """Rows ``[a, b)`` as slices of the cursor's batches (the cursor left at the batch holding row ``b``)."""
        if self._batch is None or a < self._at:
            first = int(np.searchsorted(self._starts, a, side="right")) - 1
            self._batches = self._file.iter_batches(batch_size=BATCH, row_groups=range(first, len(self._starts) - 1), columns=self.columns,
                                                    use_threads=THREADS)
            self._at, self._batch = int(self._starts[first]), next(self._batches, None)
        out = []
        while self._batch is not None and self._at < b:
            end = self._at + self._batch.num_rows
            if end > a:
                lo = max(a, self._at) - self._at
                out.append(self._batch.slice(lo, min(b, end) - self._at - lo))
            if end > b:
                break
            self._at, self._batch = end, next(self._batches, None) if self._batches is not None else None
        return out
