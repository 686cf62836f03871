"""The results table of a run, gathered a group's rows at a time (:class:`Gathered`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from . import diagnostics

#: rows held as Python objects before they become one record batch (a few MiB of them)
BATCH_ROWS = 8192


class Gathered:
    """The results table, made a group's rows at a time: the rows become Arrow record batches of
    :data:`BATCH_ROWS` as they come, so a ``--by-doc`` run's rows, which grow with the documents, are not
    kept as Python objects (and a small run's table is one batch). The rows
    :func:`~.diagnostics.across_approaches` compares (a few per cell) are kept as they are too, and the
    diagnostics it adds to them go into their batches at the end."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.batches: list[pa.RecordBatch] = []
        self.pending: list[dict[str, Any]] = []
        self.compared: list[tuple[int, int, dict[str, Any]]] = []  # (batch, row in it, the row)

    def add(self, rows: list[dict[str, Any]]) -> None:
        """One group's rows (or a task's), in the table's order."""
        self.pending += rows
        if len(self.pending) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            self.compared += [(len(self.batches), i, r) for i, r in enumerate(self.pending) if diagnostics.compared(r)]
            self.batches.append(pa.RecordBatch.from_pylist(self.pending, schema=self.schema))
            self.pending = []

    def table(self) -> pa.Table:
        """The table of every row added, the across-approaches diagnostics in."""
        self._flush()
        before = [r["diagnostics"] for _, _, r in self.compared]
        diagnostics.across_approaches([r for _, _, r in self.compared])
        changed: dict[int, dict[int, str | None]] = {}
        for (b, i, r), old in zip(self.compared, before):
            if r["diagnostics"] != old:
                changed.setdefault(b, {})[i] = r["diagnostics"]
        column = self.schema.get_field_index("diagnostics")
        for b, found in changed.items():
            values = self.batches[b].column(column).to_pylist()
            for i, value in found.items():
                values[i] = value
            self.batches[b] = self.batches[b].set_column(column, self.schema.field(column), pa.array(values, self.schema.field(column).type))
        return pa.Table.from_batches(self.batches, schema=self.schema)
