"""The documents' texts (``documents.parquet``'s ``text`` column), a batch of documents (or one) at a time.

A file of regions (the review queue, ``export --to disagreements``) needs the texts of the documents
whose regions it is writing, a report each document's text as its page is written. :class:`Texts`
holds the column as Arrow (no Python string per document) and hands out a batch's texts as a
mapping, so writing a batch at a time holds one batch's strings, not the corpus's.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .directory import OutputData


class Texts:
    """The texts of an output directory's documents, looked up a batch of documents (or one) at a time."""

    def __init__(self, data: OutputData):
        path = data.path / "documents.parquet"
        self._texts: pa.Array | None = None
        self._rows: dict[str, int] | None = None
        self.ids: list[str] = []  # every document of documents.parquet, in its order
        self._id_column: pa.ChunkedArray | None = None
        if path.is_file():
            texts = "text" in pq.read_schema(path).names
            table = pq.read_table(path, columns=["doc_id", "text"] if texts else ["doc_id"])
            self._id_column = table.column("doc_id")
            self.ids = self._id_column.to_pylist()
            if texts:  # one array: a take from a column of several chunks joins them first, at every call
                self._texts = table.column("text").cast(pa.large_string()).combine_chunks()

    def of(self, docs: Iterable[str]) -> dict[str, str | None]:
        """doc_id -> text for ``docs`` (None for a document without a text or not in ``documents.parquet``)."""
        wanted = list(dict.fromkeys(docs))
        if self._texts is None or not wanted:
            return dict.fromkeys(wanted)
        rows = [self._row(d) for d in wanted]
        found = pc.take(self._texts, pa.array(rows, pa.int64())).to_pylist()
        return dict(zip(wanted, found))

    def text(self, doc: str) -> str | None:
        """One document's text (None: without one, or not in ``documents.parquet``)."""
        return self.of([doc])[doc]

    def _row(self, doc: str) -> int | None:
        """The row of ``doc`` in ``documents.parquet`` (None: not there)."""
        if self._rows is None:
            self._rows = {d: i for i, d in enumerate(self.ids)}
        return self._rows.get(doc)

    def sorted_rows(self) -> np.ndarray:
        """The rows of :attr:`ids` in the order of their names (Arrow sorts UTF-8 as code points: as Python sorts)."""
        if self._id_column is None:
            return np.zeros(0, np.int64)
        return pc.array_sort_indices(self._id_column).to_numpy(zero_copy_only=False).astype(np.int64)

    def length_array(self) -> np.ndarray:
        """Per row of :attr:`ids`, its text's length in characters (code points; -1 without a text)."""
        if self._texts is None:
            return np.full(len(self.ids), -1, np.int64)
        return pc.fill_null(pc.utf8_length(self._texts), -1).to_numpy(zero_copy_only=False).astype(np.int64)

    def lengths(self) -> dict[str, int | None]:
        """doc_id -> its text's length in characters (code points; None without a text)."""
        if self._texts is None:
            return dict.fromkeys(self.ids)
        return dict(zip(self.ids, pc.utf8_length(self._texts).to_pylist()))
