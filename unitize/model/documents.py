"""Documents whose texts came from a table, held as columns (:class:`TextTable`), and the few questions a run
asks of any corpus's documents without making a :class:`~unitize.model.Document` of each.

A crowd study's texts table has a row per text (ToxicSpans 16,100; the 10× benchmark 2 M): a ``Document`` of
each costs some 470 bytes (the object, its text as a Python string, its SHA-256 as hex text, the dict entry),
the columns here about 210 (the text as UTF-8 in one Arrow array, the digest as 32 bytes, an index entry), and
past :data:`~unitize.runtime.mapped.MAP_BYTES` the texts, sizes and digests lie in a mapped scratch file, resident
only while a phase reads them (:mod:`unitize.runtime.mapped`). A
:class:`TextTable` is a mapping of document id to ``Document`` like the ``dict`` every other adapter fills: a
document is made when asked for, with the same fields a text read from a table always had (its UTF-8 size and
hash, encoding ``utf-8``, the table as its source). The run's own questions — which documents have a text,
their lengths, their texts a run at a time, the id object a document is stored under, the fields of
``documents.parquet`` — are answered from the columns (:func:`with_text`, :func:`lengths`, :func:`texts`,
:func:`stored_id`, :func:`fields`).
"""

from __future__ import annotations

import hashlib
import itertools
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence

import numpy as np
import pyarrow as pa

from ..runtime.mapped import Appended, Pages, mapped, mapped_strings
from .corpus import Document


class TextTable(MutableMapping[str, Document]):
    """Documents with a text from one table (``source``), as columns; a document added one by one (one the spans
    name without a text row) is kept as it is, after them."""

    def __init__(self, ids: pa.Array, texts: pa.Array | Iterable[pa.Array], source: str):
        """``texts``: one string array, or its pieces in order (a table read a row group at a time: each piece goes
        to the mapped scratch file as it comes, the whole never on the heap)."""
        import pyarrow.compute as pc  # here, not at the top: see unitize.layouts

        if isinstance(texts, pa.Array) and len(ids) != len(texts):
            raise ValueError("a text table needs one text per document id")
        self._ids: list[str] = ids.to_pylist()
        # found by bisection in the ids sorted (the same list when they come sorted): a dict of millions of ids, with
        # an int object per row, cost about 70 bytes a document more
        order = pc.array_sort_indices(ids).to_numpy(zero_copy_only=False) if len(ids) else np.zeros(0, np.int64)
        in_order = bool((order == np.arange(order.size)).all())
        self._order: np.ndarray | None = None if in_order else order.astype(np.int32 if order.size < 1 << 31 else np.int64)
        self._by_name: list[str] = self._ids if in_order else [self._ids[i] for i in order.tolist()]
        del order
        if any(a == b for a, b in zip(self._by_name, itertools.islice(self._by_name, 1, None))):
            raise ValueError("a text table's document ids are distinct")
        sizes, digests = Appended(np.int64), bytearray()

        def measured(pieces: Iterable[pa.Array]) -> Iterator[pa.Array]:
            for piece in pieces:
                utf8 = piece.cast(pa.large_string())
                sizes.add(np.asarray(pc.binary_length(utf8).to_numpy(zero_copy_only=False), dtype=np.int64))
                for text in _utf8(utf8):  # one digest at a time (a list of millions of them was 140 MB at 2 M texts)
                    digests.extend(hashlib.sha256(text).digest())
                yield utf8

        # read now and then, from tokenizing to writing: in a mapped scratch file once they are large
        self._texts, text_pages = mapped_strings(measured([texts] if isinstance(texts, pa.Array) else texts))
        if len(self._texts) != len(self._ids):
            raise ValueError("a text table needs one text per document id")
        (self._sizes, size_pages), ((self._sha,), sha_pages) = sizes.array(), mapped([np.frombuffer(digests, dtype=np.uint8)])
        self._pages = Pages(text_pages.mapping, also=[*text_pages.also, size_pages, sha_pages])
        self._source = source
        self._other: dict[str, Document] = {}

    def _row(self, doc_id: object) -> int | None:
        """The table row of ``doc_id``, or None (not a row of the table)."""
        if not isinstance(doc_id, str):
            return None
        names = self._by_name
        i = bisect_left(names, doc_id)
        if i == len(names) or names[i] != doc_id:
            return None
        return i if self._order is None else int(self._order[i])

    def __getitem__(self, doc_id: str) -> Document:
        i = self._row(doc_id)
        if i is None:
            return self._other[doc_id]
        return Document(doc_id=self._ids[i], text=self._texts[i].as_py(), source=self._source, encoding="utf-8",
                        size=int(self._sizes[i]), sha256=self._sha[32 * i:32 * i + 32].tobytes().hex())

    def __setitem__(self, doc_id: str, document: Document) -> None:
        if self._row(doc_id) is not None:
            raise KeyError(f"document {doc_id!r} has its text in the table already")
        self._other[doc_id] = document

    def __delitem__(self, doc_id: str) -> None:
        if self._row(doc_id) is not None:
            raise KeyError(f"document {doc_id!r} of a text table cannot be removed")
        del self._other[doc_id]

    def __iter__(self) -> Iterator[str]:
        yield from self._ids
        yield from self._other

    def __len__(self) -> int:
        return len(self._ids) + len(self._other)

    def __contains__(self, doc_id: object) -> bool:
        return self._row(doc_id) is not None or doc_id in self._other

    def __repr__(self) -> str:
        return f"TextTable({len(self._ids)} texts from {self._source!r}, {len(self._other)} more)"

    def rows(self, ids: Sequence[str]) -> np.ndarray | None:
        """Each document's row in the table, or None when one of them is not a row (added one by one)."""
        rows = [self._row(d) for d in ids]
        if any(r is None for r in rows):
            return None
        return np.array(rows, dtype=np.int64)

    def lacking(self, names: pa.Array) -> list[str]:
        """The ``names`` (strings) the table does not hold, in their order: one hash of the ids, no string made per
        name held."""
        import pyarrow.compute as pc

        held = pc.is_in(names, value_set=pa.array(self._by_name, pa.string())).to_numpy(zero_copy_only=False)
        return [d for d in names.filter(pa.array(~held)).to_pylist() if d not in self._other]

    def with_text(self) -> list[str]:
        """The documents that have a text, sorted."""
        others = [d for d, doc in self._other.items() if doc.text is not None]
        return sorted([*self._by_name, *others]) if others else list(self._by_name)

    def lengths(self, rows: np.ndarray) -> np.ndarray:
        """The text length in code points of each row."""
        import pyarrow.compute as pc

        return np.asarray(pc.utf8_length(self._texts).to_numpy(zero_copy_only=False), dtype=np.int64)[rows]

    def texts(self, rows: np.ndarray) -> list[str]:
        """The texts of the rows."""
        return self._texts.take(pa.array(rows)).to_pylist()

    def stored_id(self, doc_id: str) -> str | None:
        """The id object document ``doc_id`` is stored under (None: not held)."""
        i = self._row(doc_id)
        if i is not None:
            return self._ids[i]
        held = self._other.get(doc_id)
        return held.doc_id if held is not None else None

    def fields(self, rows: np.ndarray) -> dict[str, list | pa.Array]:
        """:func:`fields` of the rows."""
        import pyarrow.compute as pc

        n, sha = rows.size, self._sha
        text = self._texts.take(pa.array(rows))
        return {"source": [self._source] * n, "bytes": pa.array(self._sizes[rows]),
                "sha256": [sha[32 * i:32 * i + 32].tobytes().hex() for i in rows.tolist()], "encoding": ["utf-8"] * n,
                "newline": [None] * n, "bom": [False] * n, "chars": pc.utf8_length(text), "text": text}


def _utf8(texts: pa.Array) -> Iterator[memoryview]:
    """Each text's UTF-8 bytes, as views of the array's data (no string made)."""
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset:texts.offset + len(texts) + 1]
    buffer = texts.buffers()[2]
    data = memoryview(buffer) if buffer is not None else memoryview(b"")
    for first in range(0, len(texts), _BLOCK):  # a block's offsets as Python ints at a time, not millions at once
        bounds = offsets[first:first + _BLOCK + 1].tolist()
        for begin, end in zip(bounds[:-1], bounds[1:]):
            yield data[begin:end]


#: texts whose offsets :func:`_utf8` makes Python integers at a time
_BLOCK = 1 << 16


def with_text(documents: Mapping[str, Document]) -> list[str]:
    """The documents that have a text, sorted (the order of the unit spaces)."""
    if isinstance(documents, TextTable):
        return documents.with_text()
    return sorted(d for d, doc in documents.items() if doc.text is not None)


def lengths(documents: Mapping[str, Document], ids: Sequence[str]) -> np.ndarray:
    """The length in code points of each document's text (0 without one)."""
    if isinstance(documents, TextTable) and (rows := documents.rows(ids)) is not None:
        return documents.lengths(rows)
    return np.fromiter((len(documents[d].text or "") for d in ids), dtype=np.int64, count=len(ids))


def texts(documents: Mapping[str, Document], ids: Sequence[str]) -> list[str]:
    """The texts of documents that have one, in the order of ``ids``."""
    if isinstance(documents, TextTable) and (rows := documents.rows(ids)) is not None:
        return documents.texts(rows)
    return [documents[d].text or "" for d in ids]


def stored_id(documents: Mapping[str, Document], doc_id: str) -> str:
    """The id object a document is stored under (one string for every copy a batch process sent back), or ``doc_id``
    itself for a document not held."""
    if isinstance(documents, TextTable):
        return documents.stored_id(doc_id) or doc_id
    held = documents.get(doc_id)
    return held.doc_id if held is not None else doc_id


def fields(documents: Mapping[str, Document], ids: Sequence[str]) -> dict[str, list | pa.Array]:
    """What ``documents.parquet`` holds of each document: its ``source``, ``bytes``, ``sha256``, ``encoding``,
    ``newline``, ``bom``, ``chars`` (the text's length, None without a text) and ``text``."""
    if isinstance(documents, TextTable) and (rows := documents.rows(ids)) is not None:
        return documents.fields(rows)
    docs = [documents[d] for d in ids]
    return {"source": [d.source for d in docs], "bytes": [d.size for d in docs], "sha256": [d.sha256 for d in docs],
            "encoding": [d.encoding for d in docs], "newline": [d.newline for d in docs], "bom": [d.bom for d in docs],
            "chars": [len(d.text) if d.text is not None else None for d in docs], "text": [d.text for d in docs]}


def lacking(documents: Mapping[str, Document], names: pa.Array) -> list[str]:
    """The ``names`` (strings) that are not documents of ``documents``, in their order."""
    if isinstance(documents, TextTable):
        return documents.lacking(names)
    return [d for d in names.to_pylist() if d not in documents]


def held_once(documents: MutableMapping[str, Document], ids: Iterable[str]) -> MutableMapping[str, Document]:
    """The documents ``ids`` (those held) for a batch of a run: a text table's made once each, here (the batch's
    validation asks for each document more than once); a dict as it is."""
    if not isinstance(documents, TextTable):
        return documents
    return {d: documents[d] for d in sorted(set(ids)) if d in documents}
