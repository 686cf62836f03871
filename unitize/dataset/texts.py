"""The documents' texts (``documents.parquet``'s ``text`` column), a batch of documents (or one) at a time.

A file of regions (the review queue, ``export --to disagreements``) needs the texts of the documents
whose regions it is writing, a report each document's text as its page is written. :class:`Texts`
holds the column as one Arrow array (no Python string per document), read a row group at a time into a
mapped scratch file once it is large (:func:`~unitize.runtime.mapped.mapped_strings`: resident only while a
batch is read, let go by :meth:`Texts.let_go`), and hands out a batch's texts, so writing a batch at a time
holds one batch's strings, not the corpus's. Documents are looked up by name among the ids without an index of
them (:func:`~unitize.model.codes.places`), or by row.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..model.codes import places
from ..runtime.mapped import Pages, mapped_strings
from .directory import OutputData

#: rows of documents.parquet read at a time
READ_ROWS = 1 << 16


class Texts:
    """The texts of an output directory's documents, looked up a batch of documents (or one) at a time."""

    def __init__(self, data: OutputData):
        path = data.path / "documents.parquet"
        self._texts: pa.Array | None = None
        self._pages = Pages()
        self.id_array = pa.array([], pa.string())  # every document of documents.parquet, in its order
        self._sorted = True  # ... and whether that is their names' order (as a run writes them)
        if path.is_file():
            file = pq.ParquetFile(path)
            ids = file.read(columns=["doc_id"]).column("doc_id")
            ids = ids.cast(pa.string()) if ids.type != pa.string() else ids  # (a file written by another tool)
            self.id_array = ids.combine_chunks() if ids.num_chunks != 1 else ids.chunk(0)
            self._sorted = len(self.id_array) < 2 or pc.all(pc.less(self.id_array[:-1], self.id_array[1:])).as_py() is True
            if "text" in file.schema_arrow.names:  # one array: a take from a column of several chunks joins them first
                batches = file.iter_batches(batch_size=READ_ROWS, columns=["text"])
                self._texts, self._pages = mapped_strings(batch.column(0) for batch in batches)

    def __len__(self) -> int:
        return len(self.id_array)

    @property
    def ids(self) -> list[str]:
        """Every document of documents.parquet, in its order (a Python string each: for a few)."""
        return self.id_array.to_pylist()

    def of(self, docs: Iterable[str]) -> dict[str, str | None]:
        """doc_id -> text for ``docs`` (None for a document without a text or not in ``documents.parquet``)."""
        wanted = list(dict.fromkeys(docs))
        if self._texts is None or not wanted:
            return dict.fromkeys(wanted)
        return dict(zip(wanted, self.at(places(self.id_array, pa.array(wanted, self.id_array.type), self._sorted))))

    def at(self, rows: np.ndarray) -> list[str | None]:
        """The texts of rows of documents.parquet (None: without a text, or a row -1)."""
        if self._texts is None:
            return [None] * len(rows)
        rows = np.asarray(rows, dtype=np.int64)
        return self._texts.take(pa.array(rows, mask=rows < 0)).to_pylist()

    def text(self, doc: str) -> str | None:
        """One document's text (None: without one, or not in ``documents.parquet``)."""
        return self.of([doc])[doc]

    def let_go(self) -> None:
        """Drop the texts' resident pages (a mapped column: read again when next asked for)."""
        self._pages.let_go()

    def sorted_rows(self) -> np.ndarray:
        """The rows of :attr:`ids` in the order of their names (Arrow sorts UTF-8 as code points: as Python sorts)."""
        if self._sorted:
            return np.arange(len(self.id_array), dtype=np.int64)
        return pc.array_sort_indices(self.id_array).to_numpy(zero_copy_only=False).astype(np.int64)

    def length_array(self) -> np.ndarray:
        """Per row of :attr:`ids`, its text's length in characters (code points; -1 without a text)."""
        if self._texts is None:
            return np.full(len(self.id_array), -1, np.int64)
        return pc.fill_null(pc.utf8_length(self._texts), -1).to_numpy(zero_copy_only=False).astype(np.int64)

    def lengths(self) -> dict[str, int | None]:
        """doc_id -> its text's length in characters (code points; None without a text)."""
        if self._texts is None:
            return dict.fromkeys(self.ids)
        return dict(zip(self.ids, pc.utf8_length(self._texts).to_pylist()))
