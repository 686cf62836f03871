"""The tables a span run writes beside its unit matrices: documents, universe, tokens (``schemas/``).

Each is built from plain data — the corpus, the unit spaces, the validation's universe — so the
run hands them over ready (:meth:`unitize.spans.matrices.Unitized.side_tables`) and the writer only
writes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..model import Corpus, Universe, not_missing
from ..model.codes import sorted_positions
from ..model.documents import fields
from ..runtime.mapped import let_go_all
from ..schema import documents_schema, tokens_schema, universe_schema
from ..units.unitizers import UnitSpace

#: documents.parquet and universe.parquet are built this many rows at a time (their row groups are the writer's)
DOC_ROWS = 1 << 16


def universe_table(groups: Sequence[str], annotators: Sequence[str], universe: Universe, expected: dict[str, list[str]],
                   rows: int = DOC_ROWS) -> pa.RecordBatchReader:
    """``universe.parquet``: per (group, doc_id) of the unit universe the annotators with a submission, in study order,
    ``rows`` at a time (a crowd study has a row per text).

    ``universe[group][doc]`` are the annotators missing there, ``expected[group]`` the group's annotators."""
    return pa.RecordBatchReader.from_batches(universe_schema(), _universe_batches(groups, annotators, universe, expected, max(rows, 1)))


def _universe_batches(groups: Sequence[str], annotators: Sequence[str], universe: Universe, expected: dict[str, list[str]],
                      rows: int) -> Iterator[pa.RecordBatch]:
    rank = {a: i for i, a in enumerate(annotators)}
    for group in sorted(g for g in groups if universe.get(g)):
        wanted = frozenset(expected.get(group, [])) & rank.keys()
        docs = sorted(universe[group])
        for first in range(0, len(docs), rows):
            some = docs[first:first + rows]
            names = [sorted(not_missing(wanted, universe[group][doc]), key=rank.__getitem__) for doc in some]
            yield pa.RecordBatch.from_pydict({"group": [group] * len(some), "doc_id": some, "annotators": names}, schema=universe_schema())


def documents_table(corpus: Corpus, words: UnitSpace | None, tokenizer: str, rows: int = DOC_ROWS) -> pa.RecordBatchReader:
    """``documents.parquet``: per document its source, size, hash, decoding, unit counts and text
    (``words``: the word unit space, when the run has word units), ``rows`` documents at a time."""
    return pa.RecordBatchReader.from_batches(documents_schema(), _document_batches(corpus, words, tokenizer, max(rows, 1)))


def _document_batches(corpus: Corpus, words: UnitSpace | None, tokenizer: str, rows: int) -> Iterator[pa.RecordBatch]:
    doc_ids = sorted(corpus.documents)
    schema = documents_schema()
    for first in range(0, len(doc_ids), rows):
        some = doc_ids[first:first + rows]
        columns = fields(corpus.documents, some)
        text = columns["text"]
        has_text = [t is not None for t in text] if isinstance(text, list) else text.is_valid().to_pylist()
        columns["tokens"] = _tokens(words, some)
        columns["tokenizer"] = [tokenizer if words and t else None for t in has_text]
        yield pa.RecordBatch.from_pydict({"doc_id": some, **columns}, schema=schema)
        let_go_all()  # the pages of the mapped texts this batch read


def _tokens(words: UnitSpace | None, docs: list[str]) -> pa.Array:
    """Each document's word count (null: no text, or no word units), found by bisection in the word space's ids."""
    if words is None:
        return pa.nulls(len(docs), pa.int64())
    at = sorted_positions(words.doc_ids, docs)
    return pa.array(words.n_units[np.maximum(at, 0)] if words.n_units.size else np.zeros(at.size, np.int64), mask=at < 0, type=pa.int64())


#: tokens.parquet is built this many tokens at a time
TOKEN_ROWS = 1 << 20


def tokens_table(space: UnitSpace, rows: int = TOKEN_ROWS) -> pa.RecordBatchReader:
    """``tokens.parquet``: every token of every document with text, its character extent (code points), ``rows``
    tokens at a time (a corpus has millions of tokens, and a document id as text in every row)."""
    assert space.starts is not None and space.ends is not None, "a word unit space has token extents"
    return pa.RecordBatchReader.from_batches(tokens_schema(), _token_batches(space, max(rows, 1)))


def _token_batches(space: UnitSpace, rows: int) -> Iterator[pa.RecordBatch]:
    assert space.starts is not None and space.ends is not None
    names = pa.array(space.doc_ids, pa.string())
    doc_of = np.repeat(np.arange(len(space.doc_ids), dtype=np.int32), space.n_units)
    for first in range(0, doc_of.size, rows):
        doc = doc_of[first:first + rows]
        token = np.arange(first, first + doc.size, dtype=np.int64) - space.base[doc]
        shift = space.char_base[doc]
        yield pa.RecordBatch.from_arrays(
            [
                pa.DictionaryArray.from_arrays(pa.array(doc), names).cast(pa.string()),
                pa.array(token.astype(np.int32)),
                pa.array((space.starts[first:first + doc.size] - shift).astype(np.int32)),
                pa.array((space.ends[first:first + doc.size] - shift).astype(np.int32)),
            ],
            schema=tokens_schema(),
        )
        let_go_all()  # the pages of the mapped token extents this batch read
