"""The flat-label records a reader read, held compactly: :class:`ItemRecords`.

A crowd export holds millions of label records; as :class:`~unitize.model.ItemLabel`
objects they take hundreds of bytes each. :class:`ItemRecords` keeps them as Arrow
record batches in a :class:`~unitize.runtime.spool.Spool` — in memory for a small study, on
disk past :data:`~unitize.runtime.spool.MEMORY_ROWS` records — and gives them back in the
order they were read, as records or as batches. It is what :attr:`Corpus.items
<unitize.model.Corpus.items>` holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

from ..runtime.spool import Spool
from .corpus import ItemLabel

#: the columns of a batch of records
SCHEMA = pa.schema(
    [
        ("group", pa.string()),
        ("item", pa.string()),
        ("annotator", pa.string()),
        ("label", pa.string()),
        ("source", pa.string()),
        ("line", pa.int64()),
    ]
)
#: records gathered before they become one batch
BATCH_ROWS = 1 << 16


class ItemRecords:
    """Label records in reading order (see the module docstring); a list of :class:`ItemLabel` as far as
    ``append``, ``len``, truth and iteration go."""

    def __init__(self, records: Iterable[ItemLabel] = (), *, memory_rows: int | None = None, batch_rows: int = BATCH_ROWS):
        self._spool = Spool(SCHEMA, memory_rows)
        self._batch_rows = batch_rows
        self._pending: tuple[list[str], list[str], list[str], list[str | None], list[str], list[int | None]] = ([], [], [], [], [], [])
        self._annotators: set[str] = set()
        for record in records:
            self.append(record)

    def append(self, record: ItemLabel) -> None:
        self.add(record.group, record.item, record.annotator, record.label, record.source, record.line)

    def add(self, group: str, item: str, annotator: str, label: str | None, source: str = "", line: int | None = None) -> None:
        """Append one record given by its fields (what :meth:`append` does, without an :class:`ItemLabel`)."""
        groups, items, annotators, labels, sources, lines = self._pending
        groups.append(group)
        items.append(item)
        annotators.append(annotator)
        labels.append(label)
        sources.append(source)
        lines.append(line)
        self._annotators.add(annotator)
        if len(groups) >= self._batch_rows:
            self._flush()

    def extend(self, records: Iterable[ItemLabel]) -> None:
        for record in records:
            self.append(record)

    def absorb(self, other: ItemRecords) -> None:
        """Add ``other``'s records at the end (``other`` is emptied: its batches, or its file, are taken over)."""
        other._flush()
        if not self and not self._spool.on_disk:
            self._spool, other._spool = other._spool, Spool(SCHEMA, other._spool.memory_rows)
        else:
            self._flush()
            for batch in other._spool.batches():
                self._spool.append(batch)
            other.close()
        self._annotators |= other._annotators
        other._annotators = set()

    def _flush(self) -> None:
        if not self._pending[0]:
            return
        pending, self._pending = self._pending, ([], [], [], [], [], [])
        self._spool.append(pa.RecordBatch.from_arrays([pa.array(column, field.type) for column, field in zip(pending, SCHEMA)], schema=SCHEMA))

    def __len__(self) -> int:
        return len(self._spool) + len(self._pending[0])

    def __bool__(self) -> bool:
        return len(self) > 0

    @property
    def annotators(self) -> set[str]:
        """Every annotator of a record (kept as the records come: no pass over them)."""
        return set(self._annotators)

    @property
    def on_disk(self) -> bool:
        """Whether the records went to a temporary file (more than :data:`~unitize.runtime.spool.MEMORY_ROWS`)."""
        return self._spool.on_disk

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The records as Arrow batches of :data:`SCHEMA`, in reading order, one batch at a time."""
        self._flush()
        return self._spool.batches()

    def __iter__(self) -> Iterator[ItemLabel]:
        for batch in self.batches():
            yield from records_of(batch)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ItemRecords, list)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"<ItemRecords: {len(self):,} records{' on disk' if self.on_disk else ''}>"

    def close(self) -> None:
        """Free the records (and their temporary file)."""
        self._pending = ([], [], [], [], [], [])
        self._spool.close()


def records_of(batch: pa.RecordBatch) -> Iterator[ItemLabel]:
    """The :class:`ItemLabel` records of one batch of :data:`SCHEMA`."""
    columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
    for group, item, annotator, label, source, line in zip(*columns):
        yield ItemLabel(group, item, annotator, label, source, line)
