"""Arrays a run keeps to its end but reads only now and then, out of the heap: in a scratch file, mapped back.

A crowd span run keeps every text (tokenized once, written to ``documents.parquet`` once), every word token's
character extents (read by each work partition, written to ``tokens.parquet`` once) and its findings, packed (read
once, to write ``report.jsonl``), from reading to writing. On
the heap they count in the run's memory all that time, and in each batch process it forks. Mapped from a file, a
page is resident only from when it is read to the next :func:`let_go_all` (which
:func:`unitize.runtime.memory.give_back` calls at the end of each phase): the kernel reads it again from its page
cache when it is next touched. A run holds them once; the file is removed as soon as it is mapped (the mapping
keeps it until the arrays are gone), so nothing is left behind, and ``TMPDIR`` needs their size.

Arrays smaller than :data:`MAP_BYTES` together stay on the heap, as they do where the system cannot drop a
mapping's pages.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from .spool import scratch_prefix

#: arrays of at least this many bytes together are mapped from a scratch file; smaller ones stay on the heap
MAP_BYTES = 8 << 20

#: every mapping this process holds: one lives as long as an array lies in it (the arrays keep it), not longer
_live: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()


class Pages:
    """The mapping some arrays lie in (none: they are on the heap). Pickled (to another process), it is
    no mapping: the arrays pickled with it are copies."""

    def __init__(self, mapping: mmap.mmap | None = None, also: Sequence[Pages] = ()):
        self.mapping = mapping
        self.also = list(also)  # other mappings the same arrays lie in (let go with this one)
        if mapping is not None:
            _live.add(mapping)

    def let_go(self) -> None:
        """Drop the mapping's resident pages (read again from the file when next touched)."""
        if self.mapping is not None:
            _let_go(self.mapping)
        for other in self.also:
            other.let_go()

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.mapping, self.also = None, []


class Appended:
    """One NumPy array of ``dtype`` made of chunks as they come (:meth:`add`): on the heap while they hold fewer than
    ``at_least`` bytes (default :data:`MAP_BYTES`), then in a scratch file, each chunk written as it comes — the whole
    is never on the heap, nor the chunks beside it —, mapped back by :meth:`array`."""

    def __init__(self, dtype: Any, at_least: int | None = None):
        self.dtype = np.dtype(dtype)
        self._limit = MAP_BYTES if at_least is None else at_least
        self._chunks: list[np.ndarray] = []
        self._held = 0
        self._size = 0
        self._fd: int | None = None

    def add(self, chunk: np.ndarray) -> None:
        chunk = np.ascontiguousarray(chunk, dtype=self.dtype)
        self._size += chunk.size
        if self._fd is not None:
            _write_all(self._fd, chunk)
            return
        self._chunks.append(chunk)
        self._held += chunk.nbytes
        if self._held >= self._limit and _can_map():
            fd, path = tempfile.mkstemp(prefix=scratch_prefix("mapped"), suffix=".bin")
            os.unlink(path)  # the open file lives on until mapped and let go: nothing is left behind
            self._fd = fd
            for held in self._chunks:
                _write_all(fd, held)
            self._chunks, self._held = [], 0

    def array(self) -> tuple[np.ndarray, Pages]:
        """The chunks added, one after another, and the mapping they lie in (none: on the heap)."""
        if self._fd is None:
            whole = np.concatenate(self._chunks) if self._chunks else np.zeros(0, self.dtype)
            self._chunks = []
            return whole, Pages()
        fd, self._fd = self._fd, None
        try:
            if not self._size:  # nothing written (an empty file cannot be mapped)
                return np.zeros(0, self.dtype), Pages()
            mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        return np.frombuffer(mapping, dtype=self.dtype, count=self._size), Pages(mapping)

    def __del__(self) -> None:
        if self._fd is not None:  # never mapped (an error on the way): its file goes with it
            os.close(self._fd)


def mapped_strings(chunks: Iterable[pa.Array], at_least: int | None = None) -> tuple[pa.Array, Pages]:
    """String arrays, one after another, as one ``large_string`` array (nulls kept) whose text, offsets and validity
    are appended a chunk at a time (:class:`Appended`): once they pass ``at_least`` bytes they lie in scratch files,
    mapped back, and the whole is never on the heap, nor a chunk's copy beside it."""
    text, ends, valid = Appended(np.uint8, at_least), Appended(np.int64, at_least), Appended(np.bool_, at_least)
    ends.add(np.zeros(1, np.int64))
    size = count = nulls = 0
    for chunk in chunks:
        chunk = chunk.cast(pa.large_string())
        if not len(chunk):
            continue
        buffers = chunk.buffers()
        offsets = np.frombuffer(buffers[1], np.int64)[chunk.offset:chunk.offset + len(chunk) + 1]
        first, last = int(offsets[0]), int(offsets[-1])
        if last > first:
            text.add(np.frombuffer(buffers[2], np.uint8)[first:last])
        ends.add(offsets[1:] - (first - size))
        valid.add(chunk.is_valid().to_numpy(zero_copy_only=False))
        size, count, nulls = size + last - first, count + len(chunk), nulls + chunk.null_count
    (data, data_pages), (offsets, offset_pages), (ok, _) = text.array(), ends.array(), valid.array()
    bitmap = pa.py_buffer(np.packbits(ok, bitorder="little")) if nulls else None
    array = pa.Array.from_buffers(pa.large_string(), count, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)], nulls)
    return array, Pages(data_pages.mapping, also=[offset_pages])


def _write_all(fd: int, chunk: np.ndarray) -> None:
    view = chunk.data.cast("B")
    while view:
        view = view[os.write(fd, view):]


def _can_map() -> bool:
    """Whether the system can drop a mapping's resident pages (else arrays stay on the heap)."""
    return hasattr(mmap, "MADV_DONTNEED") and os.name != "nt"


def let_go_all() -> None:
    """Drop the resident pages of every mapping this process holds (what a phase read of them)."""
    for mapping in list(_live):
        _let_go(mapping)


def _let_go(mapping: mmap.mmap) -> None:
    if not mapping.closed:
        mapping.madvise(mmap.MADV_DONTNEED)


def mapped(arrays: Sequence[pa.Array | np.ndarray], at_least: int | None = None) -> tuple[list[Any], Pages]:
    """``arrays`` (Arrow arrays or one-dimensional NumPy arrays) as arrays of the same types and values that lie
    in a mapped scratch file (NumPy ones read-only), and their mapping; as they are, and no mapping, when together
    they hold fewer than ``at_least`` bytes (default :data:`MAP_BYTES`)."""
    limit = MAP_BYTES if at_least is None else at_least
    size = sum(a.nbytes for a in arrays)
    if not size or size < limit or not _can_map():  # (an empty file cannot be mapped)
        return list(arrays), Pages()
    fd, path = tempfile.mkstemp(prefix=scratch_prefix("mapped"), suffix=".bin")
    os.close(fd)
    try:
        places = _write(path, arrays)
        with open(path, "rb") as fh:
            mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    finally:
        os.unlink(path)
    return [_read(mapping, a, place) for a, place in zip(arrays, places)], Pages(mapping)


def scratch(shapes: Sequence[tuple[tuple[int, ...], Any]], at_least: int | None = None) -> tuple[list[np.ndarray], Pages]:
    """Arrays of the given (shape, dtype), to be filled, that lie in a writable mapped scratch file (zeros); on the heap
    (uninitialised), and no mapping, when together they hold fewer than ``at_least`` bytes (default :data:`MAP_BYTES`).
    What is written stays in the file when the pages are let go, and is read back from it when next touched."""
    limit = MAP_BYTES if at_least is None else at_least
    sizes = [int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize for shape, dtype in shapes]
    starts = [0]
    for size in sizes:
        starts.append(starts[-1] + size + (-size % _ALIGN))
    if not starts[-1] or sum(sizes) < limit or not _can_map():
        return [np.empty(shape, dtype) for shape, dtype in shapes], Pages()
    fd, path = tempfile.mkstemp(prefix=scratch_prefix("mapped"), suffix=".bin")
    try:
        os.unlink(path)
        os.ftruncate(fd, starts[-1])
        mapping = mmap.mmap(fd, starts[-1])
    finally:
        os.close(fd)
    arrays = [np.frombuffer(mapping, dtype=dtype, count=int(np.prod(shape, dtype=np.int64)), offset=start).reshape(shape)
              for (shape, dtype), start in zip(shapes, starts)]
    return arrays, Pages(mapping)


#: where each array starts in the file: a multiple of this (Arrow's alignment, and any NumPy dtype's)
_ALIGN = 64


def _write(path: str, arrays: Sequence[pa.Array | np.ndarray]) -> list[tuple[int, int]]:
    """The arrays one after another (NumPy ones as their bytes, Arrow ones as an IPC stream each); where each lies."""
    places = []
    with pa.OSFile(path, "wb") as sink:
        for a in arrays:
            sink.write(b"\0" * (-sink.tell() % _ALIGN))
            start = sink.tell()
            if isinstance(a, np.ndarray):
                sink.write(pa.py_buffer(np.ascontiguousarray(a)))
            else:
                batch = pa.record_batch([a], names=["values"])
                with pa.ipc.new_stream(sink, batch.schema) as writer:
                    writer.write_batch(batch)
            places.append((start, sink.tell()))
    return places


def _read(mapping: mmap.mmap, like: pa.Array | np.ndarray, place: tuple[int, int]) -> Any:
    """The array written at ``place``, of ``like``'s type, lying in ``mapping``."""
    start, end = place
    if isinstance(like, np.ndarray):
        return np.frombuffer(mapping, dtype=like.dtype, count=like.size, offset=start)
    return pa.ipc.open_stream(pa.py_buffer(mapping).slice(start, end - start)).read_next_batch().column(0)
