"""The results table of a run, gathered a group's rows at a time (:class:`Gathered`) and handed on a batch at a time
(:class:`Results`): a ``--by-doc`` run's rows, which grow with the documents, are never all in memory at once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from .. import metrics as registry
from ..runtime.spool import Spool
from . import diagnostics

#: rows held as Python objects before they become one record batch (a few MiB of them)
BATCH_ROWS = 8192
#: rows of record batches held in memory before the rest go to a scratch file (about 15 MiB of results)
MEMORY_ROWS = 1 << 16


class Results:
    """A run's results table: every row a record batch at a time (:meth:`to_batches`, as often as asked), and the rows of
    whole cells (no label, document or annotator breakdown: the summary's, the screen's and the gate's) at hand as
    :attr:`whole`. :meth:`table` is every row in one table, for a caller that wants it whole."""

    def __init__(self, schema: pa.Schema, num_rows: int, batches: Callable[[], Iterator[pa.RecordBatch]], whole: pa.Table):
        self.schema, self.num_rows, self._batches, self.whole = schema, num_rows, batches, whole

    @classmethod
    def of(cls, table: pa.Table) -> Results:
        """The results of a table held whole."""
        return cls(table.schema, table.num_rows, lambda: iter(table.to_batches()), table.filter(registry.whole_mask(table)))

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Every row, in order, a record batch at a time (the schema's metadata on each)."""
        for batch in self._batches():
            yield batch.replace_schema_metadata(self.schema.metadata)

    def table(self) -> pa.Table:
        return pa.Table.from_batches(list(self.to_batches()), schema=self.schema)

    def with_metadata(self, metadata: dict[bytes, bytes]) -> Results:
        """The same rows under a schema with ``metadata``."""
        return Results(self.schema.with_metadata(metadata), self.num_rows, self._batches, self.whole.replace_schema_metadata(metadata))


class Gathered:
    """The results table, made a group's rows at a time: the rows become Arrow record batches of :data:`BATCH_ROWS` as
    they come, which a :class:`~unitize.runtime.spool.Spool` holds (in memory up to its bound, past it in a scratch
    file); the rows of whole cells are kept beside them. The rows :func:`~.diagnostics.across_approaches` compares (a
    few per cell) are kept as Python objects, and the diagnostics it adds to them go into their batches as the batches
    are read."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.spool = Spool(schema, MEMORY_ROWS)
        self.whole: list[pa.RecordBatch] = []
        self.whole_rows = 0
        self.pending: list[dict[str, Any]] = []
        self.compared: list[tuple[int, int, int, dict[str, Any]]] = []  # (batch, row in it, row among the whole rows, the row)

    def add(self, rows: list[dict[str, Any]]) -> None:
        """One group's rows (or a task's), in the table's order."""
        self.pending += rows
        if len(self.pending) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        batch, at = pa.RecordBatch.from_pylist(self.pending, schema=self.schema), len(self.spool.batch_rows)
        whole = [registry.whole_row(r) for r in self.pending]
        among = self.whole_rows
        for i, (r, is_whole) in enumerate(zip(self.pending, whole, strict=True)):
            if is_whole and diagnostics.compared(r):
                self.compared.append((at, i, among, r))
            among += is_whole
        if among - self.whole_rows == len(whole):
            self.whole.append(batch)
        elif among > self.whole_rows:
            self.whole.append(batch.filter(pa.array(whole, pa.bool_())))
        self.whole_rows = among
        self.spool.append(batch)
        self.pending = []

    def extend(self, later: Gathered) -> None:
        """Another gathering's rows after these, in its order (its whole rows and the rows it compares with them); the
        other is emptied."""
        self._flush()
        later._flush()
        at, among = len(self.spool.batch_rows), self.whole_rows
        for batch in later.spool.batches():
            self.spool.append(batch)
        self.whole += later.whole
        self.whole_rows += later.whole_rows
        self.compared += [(b + at, i, w + among, r) for b, i, w, r in later.compared]
        later.spool.close()
        later.whole, later.whole_rows, later.compared = [], 0, []

    def results(self) -> Results:
        """Every row added, the across-approaches diagnostics in."""
        self._flush()
        before = [r["diagnostics"] for *_, r in self.compared]
        diagnostics.across_approaches([r for *_, r in self.compared])
        changed: dict[int, dict[int, str | None]] = {}
        in_whole: dict[int, str | None] = {}
        for (b, i, w, r), old in zip(self.compared, before, strict=True):
            if r["diagnostics"] != old:
                changed.setdefault(b, {})[i] = in_whole[w] = r["diagnostics"]
        spool, schema = self.spool, self.schema

        def batches() -> Iterator[pa.RecordBatch]:
            for b, batch in enumerate(spool.batches()):
                yield _patched(batch, changed[b]) if b in changed else batch

        whole = pa.Table.from_batches(self.whole, schema=schema)
        return Results(schema, spool.rows, batches, _patched(whole, in_whole) if in_whole else whole)


def _patched(rows: Any, found: dict[int, str | None]) -> Any:
    """A record batch or table with some rows' diagnostics replaced (row -> value)."""
    column = rows.schema.get_field_index("diagnostics")
    values = rows.column(column).to_pylist()
    for i, value in found.items():
        values[i] = value
    field = rows.schema.field(column)
    return rows.set_column(column, field, pa.array(values, field.type))
