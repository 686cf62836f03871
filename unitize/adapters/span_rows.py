"""A span table's spans and assignments held as arrays, made into a corpus a batch of documents at a time.

A crowd study (ToxicSpans: 16,100 texts, 3,579 workers) is one group of many documents; a
:class:`~unitize.model.Span` per row costs some 300 bytes, the arrays here 24 (32-bit integers where every
value fits), and an assignment (a roster row) four integers — its document's name is one Arrow string for all its
assignments.
:class:`SpanRows` takes the rows a reader kept, a column at a time: the (document, annotator)
assignments (:meth:`SpanRows.assign`) and the spans (:meth:`SpanRows.add`), in file order;
:meth:`SpanRows.batches` cuts the documents, in sorted order, into batches of about
:data:`BATCH_SPANS` spans, each a :class:`RowBatch` that makes its documents' spans and
submissions, in the order a whole read gives them. The batches are what a
:class:`~unitize.model.SpanStream` hands over; a corpus read whole is the one batch of every
document.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model import Corpus, Span, Submission
from ..model.codes import look_up, places, value_codes
from ..runtime.mapped import let_go_all, mapped, scratch

#: a streamed span table hands over whole documents, a batch once it holds this many spans
BATCH_SPANS = 1 << 16
#: rows coded into (document, annotator) pairs at a time
PAIR_ROWS = 1 << 20
#: span rows held on the heap before they go to a mapped scratch file together (bytes)
HELD_BYTES = 8 << 20


@dataclass
class RowBatch:
    """The spans and assignments of some documents, as arrays of codes into its own name lists (picklable)."""

    group: str
    layer: str
    source: str
    docs: pa.Array  # strings: a crowd study's batches name millions of documents, held until each batch is read
    annotators: list[str]
    labels: list[str | None]
    sources: list[str]
    #: per span, in file order: document, annotator and label codes, begin, end (-1: unreadable), line
    spans: np.ndarray
    #: per assignment, in the order first met: document, annotator, source codes and its span rows
    assignments: np.ndarray

    def corpus(self, format_name: str) -> Corpus:
        """The batch's spans (an unreadable one with offsets -1, as the reader reported it) and submissions."""
        docs, who, labels, group, layer, source = self.docs.to_pylist(), self.annotators, self.labels, self.group, self.layer, self.source
        return Corpus(
            format=format_name,
            spans=[Span(who[a], docs[d], group, f"line {line}", layer, 0, begin, end, labels[lab], {}, source, line)
                   for d, a, lab, begin, end, line in self.spans.tolist()],
            submissions=[Submission(self.sources[s], who[a], docs[d], group, n) for d, a, s, n in self.assignments.tolist()],
        )


def _empty() -> np.ndarray:
    return np.zeros(0, np.int64)


@dataclass
class SpanRows:
    """The rows of a span table a reader kept, and who was assigned (or annotated) which document."""

    group: str
    layer: str
    source: str = ""
    #: the documents with an assignment, in the order first met
    _doc_names: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))
    _who: dict[str, int] = field(default_factory=dict)
    _who_names: list[str] = field(default_factory=list)
    _labels: dict[str | None, int] = field(default_factory=dict)
    _sources: dict[str, int] = field(default_factory=dict)
    #: per assignment, in the order first met: document, annotator and source codes, and its span rows (32-bit: a
    #: crowd study has millions of assignments, and no code or count of one comes near 2**31)
    _doc: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    _annotator: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    _source: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    _span_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    #: every assignment's key (document code << 32 | annotator code), sorted, and the assignment of each
    _keys: np.ndarray = field(default_factory=_empty)
    _key_index: np.ndarray = field(default_factory=_empty)
    #: the spans added, a block per call: (S, 6) document, annotator and label codes, begin, end, line
    _spans: list[np.ndarray] = field(default_factory=list)
    #: blocks added since the last spill to a scratch file (:meth:`_spill`)
    _pending: list[np.ndarray] = field(default_factory=list)
    _closed: bool = False

    def assign(self, docs: pa.Array, who: pa.Array, source: str) -> np.ndarray:
        """Per row of ``docs`` and ``who`` (strings, no nulls), the index of the (document, annotator) assignment; one is
        made, in the order first met, for a pair not yet known."""
        return self.assign_pairs(self.pairs(docs, who), source)

    def pairs(self, docs: pa.Array, who: pa.Array) -> np.ndarray:
        """Per row of ``docs`` and ``who`` (strings, no nulls), its (document, annotator) pair as one integer (document
        code << 32 | annotator code); a name not met before is coded, in the order first met."""
        pairs = np.empty(len(docs), dtype=np.int64)
        for start in range(0, len(docs), PAIR_ROWS):  # a piece at a time: Arrow's hash of 6 M names was 220 MB
            stop = min(start + PAIR_ROWS, len(docs))
            piece = pairs[start:stop]
            piece[:] = self._doc_codes(docs.slice(start, stop - start))
            piece <<= 32
            piece |= self._who_codes(who.slice(start, stop - start))
        return pairs

    def assign_once(self, pairs: np.ndarray, source: str) -> np.ndarray:
        """Every assignment at once (a roster's): ``pairs`` (coded by :meth:`pairs`) distinct, each a new assignment
        in row order — no sort, and no lookup kept (the rows are :meth:`closed` after). Per row its assignment."""
        assert not self._closed and not self._doc.size, "assign_once makes the only assignments"
        self._doc, self._annotator = (pairs >> 32).astype(np.int32), (pairs & 0xFFFFFFFF).astype(np.int32)
        self._source = np.full(pairs.size, _code(self._sources, source), np.int32)
        self._span_rows = np.zeros(pairs.size, np.int32)
        self.closed()
        return np.arange(pairs.size, dtype=np.int32)

    def assign_pairs(self, key: np.ndarray, source: str) -> np.ndarray:
        """:meth:`assign` of rows already coded by :meth:`pairs`."""
        assert not self._closed, "no assignment is made once the rows are closed"
        pairs, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        at, known = look_up(self._keys, pairs)
        index = np.where(known, self._key_index[at] if self._keys.size else 0, -1)
        new = np.flatnonzero(~known)
        new = new[np.argsort(first[new], kind="stable")]  # in the order first met
        index[new] = self._doc.size + np.arange(new.size)
        self._doc = np.concatenate([self._doc, (pairs[new] >> 32).astype(np.int32)])
        self._annotator = np.concatenate([self._annotator, (pairs[new] & 0xFFFFFFFF).astype(np.int32)])
        self._source = np.concatenate([self._source, np.full(new.size, _code(self._sources, source), np.int32)])
        self._span_rows = np.concatenate([self._span_rows, np.zeros(new.size, np.int32)])
        if not self._keys.size:  # the first rows (a roster's, all at once): the pairs are sorted already
            self._keys, self._key_index = pairs, index.copy()
        elif new.size:
            keys, indices = np.concatenate([self._keys, pairs[new]]), np.concatenate([self._key_index, index[new]])
            order = np.argsort(keys, kind="stable")
            self._keys, self._key_index = keys[order], indices[order]
        return index[inverse.reshape(-1)]

    def closed(self) -> None:
        """No assignment is made after this (a roster read): the sorted keys that find a pair's are let go (a crowd
        study's 6 M assignments: 96 MB held through reading the spans and cutting the batches)."""
        self._keys, self._key_index, self._closed = _empty(), _empty(), True

    def _doc_codes(self, docs: pa.Array) -> np.ndarray:
        """Each row's document code, new documents coded in the order first met (Arrow encodes in that order)."""
        encoded = pc.dictionary_encode(docs)
        names = encoded.dictionary.cast(pa.string())
        found = places(self._doc_names, names)  # a pass over the names met so far, hashing this piece's (not all of them)
        new = np.flatnonzero(found < 0)  # a document not met before
        found[new] = len(self._doc_names) + np.arange(new.size)
        if new.size:
            self._doc_names = pa.concat_arrays([self._doc_names, names.take(pa.array(new))])
        return found[encoded.indices.to_numpy(zero_copy_only=False)]

    def _who_codes(self, who: pa.Array) -> np.ndarray:
        names, codes = value_codes(who)
        lut = np.array([_code(self._who, name, self._who_names) for name in names], dtype=np.int64)
        return lut[codes] if lut.size else _empty()

    def names_of(self, pair: int) -> tuple[str, str]:
        """The (document, annotator) of a pair coded by :meth:`pairs`."""
        return self._doc_names[pair >> 32].as_py(), self._who_names[pair & 0xFFFFFFFF]

    def owner(self, index: int) -> tuple[str, str]:
        """The (document, annotator) of assignment ``index``."""
        return self._doc_names[int(self._doc[index])].as_py(), self._who_names[int(self._annotator[index])]

    def add(self, owners: np.ndarray, labels: list[str | None], label: np.ndarray, begin: np.ndarray, end: np.ndarray,
            lines: np.ndarray) -> None:
        """Span rows: per row its assignment's index, its label (a code into ``labels``), begin and end (-1 when
        unreadable) and line."""
        if not owners.size:
            return
        codes = np.array([_code(self._labels, name) for name in labels], dtype=np.int64)
        self._span_rows += np.bincount(owners, minlength=self._span_rows.size)
        self._pending.append(_stacked([self._doc[owners], self._annotator[owners], codes[label], begin, end, lines]))
        if sum(b.nbytes for b in self._pending) >= HELD_BYTES:
            self._spill()

    def _spill(self) -> None:
        """The blocks added since the last spill, as one block in a mapped scratch file once large (8 M spans: 200 MB
        on the heap from reading to cutting the batches), read again when the batches are cut."""
        if not self._pending:
            return
        block = self._pending[0] if len(self._pending) == 1 else np.concatenate(self._pending)
        self._pending = []
        (flat,), _ = mapped([block.reshape(-1)])  # written through the file: no page of the mapping is resident yet
        self._spans.append(flat.reshape(block.shape))

    @property
    def annotators(self) -> list[str]:
        """Every annotator with an assignment, sorted."""
        return sorted(self._who)

    @property
    def labels(self) -> list[str | None]:
        """Every label of a span row (None: unlabelled), in the order first met."""
        return list(self._labels)

    @property
    def documents(self) -> list[str]:
        """Every document with an assignment, in the order first met."""
        return self._doc_names.to_pylist()

    @property
    def document_names(self) -> pa.Array:
        """:attr:`documents` as one string array (no Python string made per document)."""
        return self._doc_names

    def batches(self, size: int | None = None) -> list[RowBatch]:
        """The rows as batches of whole documents in sorted order, each closed once it holds ``size`` spans
        (default :data:`BATCH_SPANS`; 0: one batch of every document). The rows are let go, a block at a time as
        they are laid into their batches: the rows are held once (not once more in the batches)."""
        size = BATCH_SPANS if size is None else size
        self._spill()
        blocks, names, n = self._spans, self._doc_names, len(self._doc_names)
        columns = [self._doc, self._annotator, self._source, self._span_rows]
        # in blocks, each laid out and let go in turn (6 M assignments whole, and their sort, were 300 MB at once)
        assigned = [_stacked([c[i:i + PAIR_ROWS] for c in columns]) for i in range(0, self._doc.size, PAIR_ROWS)]
        self._spans, self._keys, self._key_index = [], _empty(), _empty()
        self._doc = self._annotator = self._source = self._span_rows = np.zeros(0, np.int32)  # in ``assigned`` now
        del columns
        order = pc.array_sort_indices(names).to_numpy(zero_copy_only=False) if n else _empty()  # UTF-8 sorts as code points
        per_doc = np.zeros(n, dtype=np.int64)
        for block in blocks:
            per_doc += np.bincount(block[:, 0], minlength=n)
            let_go_all()  # the pages of the mapped block just read
        batch_of = np.zeros(n, dtype=np.int64)
        batch_of[order] = _cuts(per_doc[order], size)
        n_batches = int(batch_of.max()) + 1 if n else 0
        # a batch's documents in code order, re-coded over themselves (0, 1, … within the batch)
        by_batch = np.argsort(batch_of, kind="stable")
        first = np.searchsorted(batch_of[by_batch], np.arange(n_batches))
        local = np.empty(n, dtype=np.int64)
        local[by_batch] = np.arange(n) - first[batch_of[by_batch]]
        spans = _laid_out(blocks, batch_of, local, n_batches, 6)
        subs = _laid_out(assigned, batch_of, local, n_batches, 4)
        who, labels, sources = list(self._who), list(self._labels), list(self._sources)
        bounds = np.r_[first, n]
        return [RowBatch(self.group, self.layer, self.source, names.take(pa.array(by_batch[bounds[b]:bounds[b + 1]])), who, labels, sources,
                         spans[b], subs[b]) for b in range(n_batches)]


def _stacked(columns: list[np.ndarray]) -> np.ndarray:
    """Integer columns as the columns of one array, int32 where every value fits (no 64-bit copy made first)."""
    small = all(not c.size or (int(c.min()) >= -(1 << 31) and int(c.max()) < 1 << 31) for c in columns)
    out = np.empty((columns[0].size, len(columns)), dtype=np.int32 if small else np.int64)
    for i, c in enumerate(columns):
        out[:, i] = c
    return out


def _laid_out(blocks: list[np.ndarray], batch_of: np.ndarray, local: np.ndarray, n_batches: int, width: int) -> list[np.ndarray]:
    """Rows (blocks in order, each row's document code first) as one array per batch of their documents, in the
    blocks' order, the document codes the batch's own (``local``). Each block is let go once laid."""
    dtype = np.result_type(np.int32, *(b.dtype for b in blocks))
    counts = np.zeros(n_batches, dtype=np.int64)
    for block in blocks:
        counts += np.bincount(batch_of[block[:, 0]], minlength=n_batches)
        let_go_all()
    # in a mapped scratch file once large: the batches wait there for the processes that resolve them
    out, _ = scratch([((int(c), width), dtype) for c in counts])
    filled = np.zeros(n_batches, dtype=np.int64)
    while blocks:
        block = blocks.pop(0)
        batch = batch_of[block[:, 0]]
        rows = block[np.argsort(batch, kind="stable")]
        del block
        rows[:, 0] = local[rows[:, 0]]
        at = 0
        for b, c in enumerate(np.bincount(batch, minlength=n_batches).tolist()):
            if c:
                out[b][filled[b]:filled[b] + c] = rows[at:at + c]
                filled[b] += c
                at += c
        del rows
        let_go_all()  # what this block wrote into the batches' scratch file, and the block's own pages read
    return out


def _cuts(per_doc: np.ndarray, size: int) -> np.ndarray:
    """Per document (in order), its batch: a batch closes once it holds ``size`` spans (0: never)."""
    if not size:
        return np.zeros(per_doc.size, dtype=np.int64)
    held = np.cumsum(per_doc)
    batch = np.zeros(per_doc.size, dtype=np.int64)
    start, b = 0, 0
    while start < per_doc.size:
        base = held[start - 1] if start else 0
        stop = int(np.searchsorted(held, base + size, side="left")) + 1  # the document that reaches size closes it
        batch[start:stop] = b
        start, b = stop, b + 1
    return batch


def _code(codes: dict, name: object, names: list | None = None) -> int:
    """The code of ``name`` in ``codes``, a new one (the next integer; ``name`` appended to ``names``) when it has none."""
    code = codes.get(name)
    if code is None:
        code = codes[name] = len(codes)
        if names is not None:
            names.append(name)
    return code
