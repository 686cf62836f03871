"""The results table of a run, gathered a group's rows at a time (:class:`Gathered`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from . import diagnostics


class Gathered:
    """The results table, made a group's rows at a time: each group's rows become an Arrow record batch at once, so
    a ``--by-doc`` run's rows, which grow with the documents, are not kept as Python objects. The rows
    :func:`~.diagnostics.across_approaches` compares (a few per cell) are kept as they are too, and the diagnostics
    it adds to them go into their batches at the end."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.batches: list[pa.RecordBatch] = []
        self.compared: list[tuple[int, int, dict[str, Any]]] = []  # (batch, row in it, the row)

    def add(self, rows: list[dict[str, Any]]) -> None:
        """One group's rows (or a task's), in the table's order."""
        if rows:
            self.compared += [(len(self.batches), i, r) for i, r in enumerate(rows) if diagnostics.compared(r)]
            self.batches.append(pa.RecordBatch.from_pylist(rows, schema=self.schema))

    def table(self) -> pa.Table:
        """The table of every row added, the across-approaches diagnostics in."""
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
