"""Record batches held in order: in memory up to a bound, past it in a temporary Arrow IPC file.

A :class:`Spool` is working storage, not output: what a run reads or builds that it
reads back once or twice in the same order (flat-label records, item cells). Past
``memory_rows`` rows every batch goes to an LZ4-compressed Arrow IPC file in the
temporary directory (``TMPDIR``), so holding a corpus costs disk, not memory; the
file is removed when the spool is closed or collected, and one that a killed process
left (its name holds the process's id) by the next process that spools. Batches come back
exactly as they went in, one at a time, so a reader holds one batch of it at once.
Reading is safe from several threads at once (the partitions of a run read one spool).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

#: rows a spool holds in memory before it moves to disk (the default of ``memory_rows``)
MEMORY_ROWS = 1 << 18
#: the codec of spooled batches (fast: a spool is written and read once or twice)
CODEC = "lz4"


class Spool:
    """An append-only sequence of record batches of one schema (see the module docstring)."""

    def __init__(self, schema: pa.Schema, memory_rows: int | None = None):
        self.schema = schema
        self.memory_rows = MEMORY_ROWS if memory_rows is None else memory_rows
        self.rows = 0
        self.batch_rows: list[int] = []  # rows of each batch, in order
        self._held: list[pa.RecordBatch] = []
        self._path: str | None = None
        self._writer: pa.ipc.RecordBatchFileWriter | None = None
        self._sink: Any = None
        self._closed_for_writing = False
        self._cleanup: weakref.finalize | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self.rows

    @property
    def on_disk(self) -> bool:
        return self._path is not None

    def append(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Add rows at the end (a table is added batch by batch)."""
        if self._closed_for_writing:
            self._reopen()
        batches = batch.to_batches() if isinstance(batch, pa.Table) else [batch]
        for b in batches:
            if b.num_rows == 0:
                continue
            if b.schema != self.schema:
                b = pa.RecordBatch.from_arrays(b.columns, schema=self.schema)
            self.rows += b.num_rows
            self.batch_rows.append(b.num_rows)
            if self._writer is not None:
                self._writer.write_batch(b)
                continue
            self._held.append(b)
            if self.rows > self.memory_rows:
                self._to_disk()

    def _to_disk(self) -> None:
        fd, path = tempfile.mkstemp(prefix=scratch_prefix("spool"), suffix=".arrow")
        os.close(fd)
        self._path = path
        self._cleanup = weakref.finalize(self, _remove, path)
        self._sink = pa.OSFile(path, "wb")
        self._writer = pa.ipc.new_file(self._sink, self.schema, options=pa.ipc.IpcWriteOptions(compression=CODEC))
        for b in self._held:
            self._writer.write_batch(b)
        self._held = []

    def _reopen(self) -> None:
        """Grow again after a read: batches held stay; a file is copied into a new one that stays open."""
        self._closed_for_writing = False
        if self._path is None:
            return
        old, old_cleanup = self._path, self._cleanup
        self._held = []
        with pa.OSFile(old, "rb") as source:
            reader = pa.ipc.open_file(source)
            self._to_disk()
            assert self._writer is not None
            for i in range(reader.num_record_batches):
                self._writer.write_batch(reader.get_batch(i))
        if old_cleanup is not None:
            old_cleanup()

    def _finish(self) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._sink.close()
                self._writer = self._sink = None
            self._closed_for_writing = True

    def batch(self, index: int) -> pa.RecordBatch:
        """Batch ``index`` (in the order they were appended)."""
        self._finish()
        if self._path is None:
            return self._held[index]
        with pa.OSFile(self._path, "rb") as source:
            return pa.ipc.open_file(source).get_batch(index)

    def batches(self, start: int = 0) -> Iterator[pa.RecordBatch]:
        """Every batch from ``start`` on, in order, read one at a time."""
        self._finish()
        if self._path is None:
            yield from self._held[start:]
            return
        with pa.OSFile(self._path, "rb") as source:
            reader = pa.ipc.open_file(source)
            for i in range(start, reader.num_record_batches):
                yield reader.get_batch(i)

    def close(self) -> None:
        """Free what the spool holds (its file too): it is empty after."""
        self._finish()
        self._held, self.rows, self.batch_rows = [], 0, []
        if self._cleanup is not None:
            self._cleanup()
        self._path = self._cleanup = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled for a worker process on this machine: its batches, or the path of its file (the copy never removes it)."""
        self._finish()
        return {"schema": self.schema, "rows": self.rows, "batch_rows": self.batch_rows, "held": self._held, "path": self._path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.schema, self.memory_rows = state["schema"], MEMORY_ROWS
        self.rows, self.batch_rows, self._held, self._path = state["rows"], state["batch_rows"], state["held"], state["path"]
        self._writer = self._sink = self._cleanup = None
        self._closed_for_writing = True
        self._lock = threading.Lock()


#: the kinds of scratch files and folders unitize makes in the temporary directory, named ``unitize-<kind>-<pid>-…``
SCRATCH_KINDS = ("spool", "segments", "gold", "report", "mapped")
_SCRATCH = re.compile(rf"unitize-(?:{'|'.join(SCRATCH_KINDS)})-([0-9]+)-")
_swept: list[bool] = []


def scratch_prefix(kind: str) -> str:
    """The name prefix of a scratch file or folder of ``kind`` in the temporary directory: it holds this process's
    id, so that a later process removes what this one leaves if it is killed (:func:`sweep`, run once first); a kind
    is one of :data:`SCRATCH_KINDS`, which the sweep knows."""
    if kind not in SCRATCH_KINDS:
        raise ValueError(f"scratch kind {kind!r} is not one of {', '.join(SCRATCH_KINDS)}: the sweep would not remove it")
    if not _swept:
        _swept.append(True)
        sweep()
    return f"unitize-{kind}-{os.getpid()}-"


def sweep(folder: str | None = None) -> list[str]:
    """Remove the scratch files and folders of unitize processes that no longer run from the temporary
    directory (``folder``); their names, as removed."""
    folder = folder or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            m = _SCRATCH.match(name)
            if m is None or _alive(int(m.group(1))):
                continue
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
                removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (one of another user's counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
