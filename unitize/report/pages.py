"""The documents' pages, spooled to scratch files as their parts are found: memory holds a bounded buffer, not the
pages nor an index of every part.

A document's page (its text, its segments per unit type, its regions per setting, the annotators present) is added to
setting by setting and written only once every setting is read. Held as Python strings, the pages of a crowd span
study grew with the corpus (200,000 texts: about half a gigabyte); so did an index of their parts held in memory
(twelve parts per text, 20 bytes each: half a gigabyte more at 2 M texts). :class:`DocPages` writes each part's JSON
text to one scratch file as it comes, and its place (document, kind, start, length) to another, filed by bucket of
:data:`BUCKET_DOCS` consecutive documents; reading the pages reads one bucket's places at a time, sorts them by
document, and lets the pages of the text file and of the texts go after each bucket. Iterating gives each
document's payload in document order, its parts in the order they came: the dicts :func:`.page.script` writes,
the same text, byte for byte.
"""

from __future__ import annotations

import mmap
import tempfile
import weakref
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..dataset.texts import Texts
from ..runtime.spool import scratch_prefix
from .jsontext import Raw

SEGMENTS, REGION, PRESENT = 0, 1, 2

#: documents whose parts' places are read together (one bucket's places in memory at a time)
BUCKET_DOCS = 1 << 16

#: places held in memory before they are filed to the scratch file
HELD_BYTES = 2 << 20

#: a part's place: its document, its kind (an index into the kinds met), where its text starts in the text file (an
#: annotator: the annotator) and its length (-1: an annotator)
PLACE = np.dtype([("doc", "<i4"), ("part", "<i4"), ("start", "<i8"), ("length", "<i4")])


class DocPages:
    """The pages of documents ``ids`` (sorted names; indices into them), their parts kept in scratch files until the
    pages are read (iterated, in ``ids`` order, as often as asked), each with its text from ``texts`` (row
    ``rows[i]`` of them for document ``i``; None without texts or rows); the files go with the object."""

    def __init__(self, ids: Sequence[str] | pa.Array, texts: Texts | None = None, rows: np.ndarray | None = None,
                 bucket: int = BUCKET_DOCS):
        self.ids, self._texts, self._rows, self._bucket = ids, texts, rows, bucket
        self._folder = tempfile.TemporaryDirectory(prefix=scratch_prefix("report"))
        self._file = open(Path(self._folder.name) / "pages", "w+b")  # noqa: SIM115 (kept open for the object's life)
        self._placed = open(Path(self._folder.name) / "places", "w+b")  # noqa: SIM115
        self._gone = weakref.finalize(self, _remove, self._file, self._placed, self._folder)
        self._size = self._filed = 0
        self._held: dict[int, array[int]] = {}  # per bucket: places not filed yet (four numbers each)
        self._held_count = 0
        self._chunks: dict[int, list[tuple[int, int]]] = {}  # per bucket: (start, bytes) of its places in the file
        self._parts: dict[tuple[int, Any], int] = {}  # (kind, key) -> its index in _kinds
        self._kinds: list[tuple[int, Any]] = []

    def __len__(self) -> int:
        return len(self.ids)

    def segments(self, doc: int, unit: str, rows: str) -> None:
        """Segment rows of one unit type as JSON text without the list's brackets (``[..],[..]``); a document's
        rows of a unit type may come in several calls, joined in order."""
        self._add(doc, (SEGMENTS, unit), rows)

    def region(self, doc: int, setting: str, text: str) -> None:
        """One region of a setting (its JSON text)."""
        self._add(doc, (REGION, setting), text)

    def present(self, doc: int, unit: str, group: str, annotator: int) -> None:
        """An annotator with data in the document, for a unit type and group (each one listed once)."""
        self._add(doc, (PRESENT, (unit, group)), None, annotator)

    def _add(self, doc: int, part: tuple[int, Any], text: str | None, value: int = 0) -> None:
        index = self._parts.get(part)
        if index is None:
            index = self._parts[part] = len(self._kinds)
            self._kinds.append(part)
        if text is not None:
            data = text.encode("utf-8")
            self._file.write(data)
            start, length = self._size, len(data)
            self._size += length
        else:
            start, length = value, -1
        held = self._held.get(doc // self._bucket)
        if held is None:
            held = self._held[doc // self._bucket] = array("q")
        held.extend((doc, index, start, length))
        self._held_count += 1
        if self._held_count * PLACE.itemsize >= HELD_BYTES:
            self._file_places()

    def _file_places(self) -> None:
        """Write the places held to the places file, each bucket's as a chunk of its own."""
        self._placed.seek(self._filed)  # (a read of the pages may have moved it)
        for bucket, held in self._held.items():
            data = _as_places(held).tobytes()
            self._placed.write(data)
            self._chunks.setdefault(bucket, []).append((self._filed, len(data)))
            self._filed += len(data)
        self._held, self._held_count = {}, 0

    def _places(self, bucket: int) -> np.ndarray:
        """One bucket's places, in the order they came."""
        chunks = []
        for start, size in self._chunks.get(bucket, []):
            self._placed.seek(start)
            chunks.append(np.frombuffer(self._placed.read(size), dtype=PLACE))
        chunks.append(_as_places(self._held.get(bucket, array("q"))))
        return np.concatenate(chunks)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self._file.flush()
        self._placed.flush()
        mapped = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if self._size else None
        try:
            for first in range(0, len(self.ids), self._bucket):
                last = min(first + self._bucket, len(self.ids))
                places = self._places(first // self._bucket)
                places = places[np.argsort(places["doc"], kind="stable")]  # a document's parts in the order they came
                bounds = np.searchsorted(places["doc"], np.arange(first, last + 1))
                names = _names(self.ids, first, last)
                texts = self._bucket_texts(first, last)
                for i in range(last - first):
                    yield self._page(names[i], texts[i], places[bounds[i]:bounds[i + 1]], mapped)
                if mapped is not None and hasattr(mmap, "MADV_DONTNEED"):
                    mapped.madvise(mmap.MADV_DONTNEED)  # this bucket's parts were read: their pages go
                if self._texts is not None:
                    self._texts.let_go()
        finally:
            if mapped is not None:
                mapped.close()

    def _bucket_texts(self, first: int, last: int) -> list[str | None]:
        if self._texts is None or self._rows is None:
            return [None] * (last - first)
        return self._texts.at(self._rows[first:last])

    def _page(self, name: str, text: str | None, places: np.ndarray, mapped: mmap.mmap | None) -> dict[str, Any]:
        segments: dict[str, list[str]] = {}
        regions: dict[str, list[Raw]] = {}
        present: dict[str, dict[str, list[int]]] = {}
        for part, start, length in zip(places["part"].tolist(), places["start"].tolist(), places["length"].tolist()):
            kind, key = self._kinds[part]
            if kind == PRESENT:
                unit, group = key
                listed = present.setdefault(unit, {}).setdefault(group, [])
                if start not in listed:
                    listed.append(start)
                continue
            assert mapped is not None
            found = mapped[start:start + length].decode("utf-8")
            if kind == SEGMENTS:
                segments.setdefault(key, []).append(found)
            else:
                regions.setdefault(key, []).append(Raw(found))
        return {"id": name, "text": text, "segs": {u: Raw("[" + ",".join(rows) + "]") for u, rows in segments.items()},
                "regions": regions, "present": present}

    def close(self) -> None:
        """Remove the scratch files now (else when the object goes)."""
        self._gone()


def _as_places(held: array[int]) -> np.ndarray:
    numbers = np.frombuffer(held, np.int64).reshape(-1, 4) if len(held) else np.zeros((0, 4), np.int64)
    places = np.empty(len(numbers), PLACE)
    for i, name in enumerate(("doc", "part", "start", "length")):
        places[name] = numbers[:, i]
    return places


def _names(ids: Sequence[str] | pa.Array, first: int, last: int) -> list[str]:
    if isinstance(ids, (pa.Array, pa.ChunkedArray)):
        return ids.slice(first, last - first).to_pylist()
    return list(ids[first:last])


def _remove(file: Any, placed: Any, folder: tempfile.TemporaryDirectory) -> None:
    file.close()
    placed.close()
    folder.cleanup()
