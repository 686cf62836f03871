"""The documents' pages, spooled to a scratch file as their parts are found: memory holds an index, not the text.

A document's page (its text, its segments per unit type, its regions per setting, the annotators present) is added to
setting by setting and written only once every setting is read. Held as Python strings, the pages of a crowd span
study grew with the corpus (200,000 texts: about half a gigabyte). :class:`DocPages` writes each part's JSON
text to a scratch file as it comes and keeps four integers per part (20 bytes); iterating it gives each document's payload in
document order, its parts in the order they came: the dicts :func:`.page.script` writes, the same text, byte for byte.
"""

from __future__ import annotations

import mmap
import tempfile
import weakref
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..dataset.texts import Texts
from ..runtime.spool import scratch_prefix
from .jsontext import Raw

SEGMENTS, REGION, PRESENT = 0, 1, 2


class DocPages:
    """The pages of documents ``ids`` (indices into it), their parts kept in a scratch file until the pages are
    read (iterated, in ``ids`` order, as often as asked), each with its text from ``texts`` (looked up as the page
    is read; None without them); the file goes with the object."""

    def __init__(self, ids: list[str], texts: Texts | None = None):
        self.ids, self._texts = ids, texts
        self._folder = tempfile.TemporaryDirectory(prefix=scratch_prefix("report"))
        self._file = open(Path(self._folder.name) / "pages", "w+b")  # noqa: SIM115 (kept open for the object's life)
        self._gone = weakref.finalize(self, _remove, self._file, self._folder)
        self._size = 0
        # per part: its document, its kind, where its text starts in the file (an annotator: the value) and its length
        self._doc, self._part, self._start, self._length = array("i"), array("i"), array("q"), array("i")
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
        self._doc.append(doc)
        self._part.append(index)
        self._start.append(start)
        self._length.append(length)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self._file.flush()
        doc = np.frombuffer(self._doc, dtype=np.int32) if len(self._doc) else np.zeros(0, np.int32)
        order = np.argsort(doc, kind="stable")  # a document's parts in the order they came
        bounds = np.searchsorted(doc[order], np.arange(len(self.ids) + 1))
        mapped = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if self._size else None
        try:
            for i, name in enumerate(self.ids):
                yield self._page(name, order[bounds[i]:bounds[i + 1]].tolist(), mapped)
        finally:
            if mapped is not None:
                mapped.close()

    def _page(self, name: str, parts: list[int], mapped: mmap.mmap | None) -> dict[str, Any]:
        segments: dict[str, list[str]] = {}
        regions: dict[str, list[Raw]] = {}
        present: dict[str, dict[str, list[int]]] = {}
        for j in parts:
            kind, key = self._kinds[self._part[j]]
            start, length = self._start[j], self._length[j]
            if kind == PRESENT:
                unit, group = key
                listed = present.setdefault(unit, {}).setdefault(group, [])
                if start not in listed:
                    listed.append(start)
                continue
            assert mapped is not None
            part = mapped[start:start + length].decode("utf-8")
            if kind == SEGMENTS:
                segments.setdefault(key, []).append(part)
            else:
                regions.setdefault(key, []).append(Raw(part))
        text = self._texts.text(name) if self._texts is not None else None
        return {"id": name, "text": text, "segs": {u: Raw("[" + ",".join(rows) + "]") for u, rows in segments.items()},
                "regions": regions, "present": present}

    def close(self) -> None:
        """Remove the scratch file now (else when the object goes)."""
        self._gone()


def _remove(file: Any, folder: tempfile.TemporaryDirectory) -> None:
    file.close()
    folder.cleanup()
