"""Annotation files read as streams: the files of a folder, or the members of a ZIP archive.

A project export can be one archive of hundreds of megabytes. Nothing here holds
it whole: :func:`annotation_sources` lists the files (a ZIP's members checked
against their bounds before anything is inflated, :func:`~._safe.zip_members`),
and each :class:`Source` is inflated or read in chunks only when its reader asks
for it. :class:`TextStream` decodes those chunks into lines as they come, so a
line-based reader (WebAnno TSV) never holds the file's bytes or its whole text;
a reader that needs the whole text (a JSON document) takes :meth:`Source.read`,
one file at a time. Either way the file's size and sha256 are counted on the way.
"""

from __future__ import annotations

import codecs
import hashlib
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..model import Corpus
from ..model.text import DecodeError
from . import AdapterError
from ._safe import _CHUNK, MAX_UNZIPPED_MB, MAX_UNZIPPED_MB_LIMIT, MIN_UNZIPPED_MB, InputError, zip_members
from .files import clean_name, files_under, shown_name


class Unreadable(Exception):
    """A source that could not be read to its end; ``str(exc)`` is the finding's message, ``action`` what was done."""

    def __init__(self, message: str, action: str):
        super().__init__(message)
        self.action = action


@dataclass(frozen=True)
class Source:
    """One annotation file: ``name`` as reports show it (``archive!member`` for a ZIP member), ``inner`` its
    path inside the input, ``chunks()`` its bytes read (or inflated) as they are needed; raises :class:`Unreadable`."""

    name: str
    inner: str
    chunks: Callable[[], Iterator[bytes]]

    def read(self) -> bytearray:
        """The whole file (for readers that parse whole documents), grown chunk by chunk, never copied whole."""
        out = bytearray()
        for chunk in self.chunks():
            out += chunk
        return out


def _file_chunks(path: Path) -> Iterator[bytes]:
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                yield chunk
    except OSError as exc:
        raise Unreadable(f"cannot read the file: {exc.strerror or exc}", "file left out; check it and its permissions") from None


def _member_chunks(chunks: Callable[[], Iterator[bytes]]) -> Iterator[bytes]:
    try:
        yield from chunks()
    except InputError as exc:
        raise Unreadable(str(exc), "member left out; check the archive (or unzip it and read the directory)") from None


def annotation_sources(
    annotations: Path, base: Path, corpus: Corpus, suffixes: tuple[str, ...], max_unzipped_mb: float = MAX_UNZIPPED_MB
) -> list[Source]:
    """Every annotation file of an input, none of it read yet.

    ``annotations`` is one file, a directory (files ending in one of ``suffixes``,
    recursively), or a ZIP archive (its members ending in one of ``suffixes``,
    shown as ``archive!member``, bounded by ``max_unzipped_mb``; see
    :func:`~unitize.adapters._safe.zip_members`). Members past the bounds and folders
    that cannot be listed are reported here; files that cannot be read, when they are read.
    """
    if isinstance(max_unzipped_mb, bool) or not isinstance(max_unzipped_mb, (int, float)) or not MIN_UNZIPPED_MB <= max_unzipped_mb <= MAX_UNZIPPED_MB_LIMIT:
        raise AdapterError(
            f"[input] max_unzipped_mb must be a number of megabytes from {MIN_UNZIPPED_MB:g} to {MAX_UNZIPPED_MB_LIMIT:,}, not {max_unzipped_mb!r}"
        )
    if annotations.is_file() and zipfile.is_zipfile(annotations):
        shown = shown_name(annotations, base, corpus)
        members = zip_members(annotations, shown, corpus, suffixes, max_unzipped_mb)
        return [Source(f"{shown}!{inner}", inner, partial(_member_chunks, chunks)) for inner, chunks in members]
    paths = [annotations] if annotations.is_file() else [p for p in files_under(annotations, base, corpus, lambda n: n.endswith(suffixes)) if p.is_file()]
    return [
        Source(shown_name(path, base, corpus), clean_name(path.name if path == annotations else path.relative_to(annotations).as_posix()),
               partial(_file_chunks, path))
        for path in paths
    ]


@dataclass
class TextStream:
    """A source's text, line by line (``\\n`` split off, a ``\\r`` before it kept, a UTF-8 BOM at the start
    dropped), decoded in ``encoding`` as it is read; its ``size`` and :meth:`sha256` once read to the end.

    Iterating raises :class:`~unitize.model.text.DecodeError` at the first byte that does not decode and
    :class:`Unreadable` when the source cannot be read on; :meth:`finish` reads what is left (uncounted
    by a reader that stopped early) so that the size and digest are the whole file's.
    """

    source: Source
    encoding: str
    size: int = 0
    _digest: hashlib._Hash = field(default_factory=hashlib.sha256)
    _chunks: Iterator[bytes] | None = None

    def _counted(self) -> Iterator[bytes]:
        if self._chunks is None:
            self._chunks = self.source.chunks()
        for chunk in self._chunks:
            self.size += len(chunk)
            self._digest.update(chunk)
            yield chunk

    def __iter__(self) -> Iterator[str]:
        try:
            decoder = codecs.getincrementaldecoder(self.encoding)("strict")
        except LookupError:
            raise DecodeError(f"not decodable as {self.encoding} (an unknown encoding)") from None
        pending: list[str] = []
        start = True
        try:
            for chunk in self._counted():
                text = decoder.decode(chunk)
                if start and text:
                    text, start = text.removeprefix("\ufeff"), False
                if "\n" not in text:
                    pending.append(text)
                    continue
                lines = text.split("\n")
                lines[0] = "".join(pending) + lines[0]
                pending = [lines.pop()]
                yield from lines
            tail = decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise DecodeError(f"not decodable as {self.encoding}") from None
        yield "".join(pending) + (tail.removeprefix("\ufeff") if start else tail)

    def finish(self) -> None:
        """Read (and count) the rest of the source without decoding it."""
        for _ in self._counted():
            pass

    def sha256(self) -> str:
        return self._digest.hexdigest()
