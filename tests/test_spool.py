"""A spool gives back its batches in order, from memory or from its temporary file, and removes the file."""

from __future__ import annotations

import os
import pickle
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from unitize.model import ItemLabel
from unitize.model.item_records import ItemRecords
from unitize.runtime.spool import Spool

SCHEMA = pa.schema([("x", pa.int64()), ("s", pa.string())])


def batch(start: int, n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(range(start, start + n), pa.int64()), pa.array([f"v{i}" for i in range(start, start + n)])],
                                      schema=SCHEMA)


@pytest.mark.parametrize("memory_rows", [0, 5, 1000])
def test_batches_come_back_in_order_from_memory_or_disk(memory_rows):
    spool = Spool(SCHEMA, memory_rows)
    for start, n in ((0, 3), (3, 0), (3, 4), (7, 2)):
        spool.append(batch(start, n))
    assert len(spool) == 9 and spool.batch_rows == [3, 4, 2]  # an empty batch is not kept
    assert spool.on_disk == (memory_rows < 9)
    assert [b.column(0).to_pylist() for b in spool.batches()] == [[0, 1, 2], [3, 4, 5, 6], [7, 8]]
    assert [b.column(0).to_pylist() for b in spool.batches(1)] == [[3, 4, 5, 6], [7, 8]]
    assert spool.batch(2).column(1).to_pylist() == ["v7", "v8"]
    copy = pickle.loads(pickle.dumps(spool))  # as a worker process gets it
    assert [b.column(0).to_pylist() for b in copy.batches()] == [[0, 1, 2], [3, 4, 5, 6], [7, 8]]
    spool.append(batch(9, 1))  # it grows again after a read
    assert [b.column(0).to_pylist() for b in spool.batches()] == [[0, 1, 2], [3, 4, 5, 6], [7, 8], [9]] and len(spool) == 10


def test_threads_reading_a_spool_still_being_written_each_get_every_batch():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: the race shows
    try:
        for _ in range(30):  # the first reads close the writer: exactly one of them does
            spool = Spool(SCHEMA, 0)
            for start in range(0, 400, 4):
                spool.append(batch(start, 4))
            start_together = threading.Barrier(8)

            def read(i, spool=spool, start_together=start_together):
                start_together.wait()
                return spool.batch(i).column(0).to_pylist()

            with ThreadPoolExecutor(8) as pool:
                got = list(pool.map(read, range(8)))
            assert got == [list(range(4 * i, 4 * i + 4)) for i in range(8)]
            spool.close()
    finally:
        sys.setswitchinterval(interval)


def test_the_file_is_removed_when_the_spool_is_closed_not_when_a_copy_is():
    spool = Spool(SCHEMA, 0)
    spool.append(batch(0, 2))
    path = spool._path
    assert path is not None and os.path.exists(path)
    del_copy = pickle.loads(pickle.dumps(spool))
    del del_copy
    assert os.path.exists(path)
    spool.close()
    assert not os.path.exists(path)


def test_a_table_is_appended_batch_by_batch_and_cast_to_the_schema():
    spool = Spool(SCHEMA)
    spool.append(pa.Table.from_batches([batch(0, 2), batch(2, 1)]))
    assert spool.batch_rows == [2, 1] and spool.batch(0).schema == SCHEMA


def records(n: int, annotator: str = "a") -> list[ItemLabel]:
    return [ItemLabel("g", str(i), annotator, None if i % 3 == 0 else f"L{i % 2}", "f.csv", i + 2) for i in range(n)]


@pytest.mark.parametrize(("memory_rows", "batch_rows"), [(0, 2), (4, 3), (None, 65536)])
def test_item_records_give_back_what_was_appended(memory_rows, batch_rows):
    stored = ItemRecords(records(7), memory_rows=memory_rows, batch_rows=batch_rows)
    assert len(stored) == 7 and bool(stored) and stored.annotators == {"a"}
    assert list(stored) == records(7) and stored == records(7)
    assert stored.on_disk == (memory_rows is not None and memory_rows < 7)
    assert [b.num_rows for b in stored.batches()] == ([2, 2, 2, 1] if batch_rows == 2 else [3, 3, 1] if batch_rows == 3 else [7])
    assert not ItemRecords() and list(ItemRecords()) == []


def test_absorbing_takes_over_or_appends_and_empties_the_other():
    first = ItemRecords(records(3), memory_rows=0, batch_rows=2)
    into = ItemRecords()
    into.absorb(first)  # empty: takes the other's batches (its file) over
    assert list(into) == records(3) and len(first) == 0 and into.on_disk
    second = ItemRecords(records(2, "b"))
    into.absorb(second)
    assert list(into) == records(3) + records(2, "b") and into.annotators == {"a", "b"} and len(second) == 0
