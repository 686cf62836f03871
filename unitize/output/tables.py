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
from ..schema import documents_schema, tokens_schema, universe_schema
from ..units.unitizers import UnitSpace


def universe_table(groups: Sequence[str], annotators: Sequence[str], universe: Universe, expected: dict[str, list[str]]) -> pa.Table:
    """``universe.parquet``: per (group, doc_id) of the unit universe the annotators with a submission, in study order.

    ``universe[group][doc]`` are the annotators missing there, ``expected[group]`` the group's annotators."""
    out_groups, docs, names = [], [], []
    rank = {a: i for i, a in enumerate(annotators)}
    for group in sorted(g for g in groups if universe.get(g)):
        wanted = frozenset(expected.get(group, [])) & rank.keys()
        for doc in sorted(universe[group]):
            missing = universe[group][doc]
            out_groups.append(group)
            docs.append(doc)
            names.append(sorted(not_missing(wanted, missing), key=rank.__getitem__))
    return pa.Table.from_pydict({"group": out_groups, "doc_id": docs, "annotators": names}, schema=universe_schema())


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


def documents_table(corpus: Corpus, words: UnitSpace | None, tokenizer: str) -> pa.Table:
    """``documents.parquet``: per document its source, size, hash, decoding, unit counts and text
    (``words``: the word unit space, when the run has word units)."""
    doc_ids = sorted(corpus.documents)
    tokens = dict(zip(words.doc_ids, words.n_units.tolist())) if words else {}
    rows = [corpus.documents[d] for d in doc_ids]
    return pa.Table.from_pydict(
        {
            "doc_id": doc_ids,
            "source": [d.source for d in rows],
            "bytes": [d.size for d in rows],
            "sha256": [d.sha256 for d in rows],
            "encoding": [d.encoding for d in rows],
            "newline": [d.newline for d in rows],
            "bom": [d.bom for d in rows],
            "chars": [len(d.text) if d.text is not None else None for d in rows],
            "tokens": [tokens.get(d.doc_id) for d in rows],
            "tokenizer": [tokenizer if words and d.text is not None else None for d in rows],
            "text": [d.text for d in rows],
        },
        schema=documents_schema(),
    )
